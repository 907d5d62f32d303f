/*
 * tests/unit/test_informer.c - the informer's pure parts: JSON stream
 * framing (watch lines and list items), watch event decoding, and the store
 * with its delta delivery, fed with the recorded kube-apiserver v1.23
 * streams where possible. A tiny codec of this file stands in for the real
 * decoders (it keeps only metadata). The last tests run a real hub against
 * a scripted loopback HTTP server that replays the recorded answers, to
 * check the reflector's request sequence and recovery paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "harness.h"
#include "kube/util/errors.h"
#include "kube/machinery/informer.h"
#include "kube/machinery/informer_testing.h"
#include "kube/codec/jsonscratch.h"
#include "kube/codec/jsonstream.h"
#include "kube/machinery/store.h"
#include "kube/machinery/store_testing.h"

/* ---- a fake codec: metadata only; kind "Reject" fails to decode --------- */

typedef struct fake_obj {
    kube_object base;
    char *strs[5]; /* name, namespace, uid, resourceVersion, keys */
} fake_obj;

static void fake_destroy(kube_object *o)
{
    fake_obj *f = (fake_obj *)o;
    for (int i = 0; i < 5; i++)
        free(f->strs[i]);
    free(f);
}

static int fake_decode(const cJSON *json, kube_object **out);
static const kube_codec fake_codec = {"Fake", fake_decode, fake_destroy};

static const char *json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int fake_decode(const cJSON *json, kube_object **out)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(json, "metadata");
    const char *kind = json_str(json, "kind");
    fake_obj *f;

    *out = NULL;
    if (!cJSON_IsObject(md) || (kind && strcmp(kind, "Reject") == 0))
        return KUBE_EPARSE;
    f = calloc(1, sizeof(*f));
    if (!f)
        return KUBE_ENOMEM;
    atomic_init(&f->base.refs, 1);
    f->base.codec = &fake_codec;
    f->base.meta.name = f->strs[0] = kube_strdup(json_str(md, "name"));
    f->base.meta.namespace_ = f->strs[1] =
        kube_strdup(json_str(md, "namespace") ? json_str(md, "namespace") : "");
    f->base.meta.uid = f->strs[2] = kube_strdup(json_str(md, "uid"));
    f->base.meta.resource_version = f->strs[3] = kube_strdup(json_str(md, "resourceVersion"));
    f->strs[4] = json_str(json, "keys") ? kube_strdup(json_str(json, "keys")) : NULL;
    *out = &f->base;
    return KUBE_OK;
}

static kube_object *mk(const char *ns, const char *name, const char *uid, const char *rv)
{
    char text[512];
    cJSON *j;
    kube_object *o = NULL;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\",\"uid\":\"%s\","
             "\"resourceVersion\":\"%s\"}}",
             ns, name, uid, rv);
    j = cJSON_Parse(text);
    assert_non_null(j);
    assert_int_equal(fake_decode(j, &o), KUBE_OK);
    cJSON_Delete(j);
    return o;
}

/* A fake object whose index keys (the test index, keys_index) are the
 * comma-separated list keys ("" for none). */
static kube_object *mkk(const char *ns, const char *name, const char *uid, const char *rv,
                        const char *keys)
{
    char text[512];
    cJSON *j;
    kube_object *o = NULL;

    snprintf(text, sizeof(text),
             "{\"keys\":\"%s\",\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\","
             "\"uid\":\"%s\",\"resourceVersion\":\"%s\"}}",
             keys, ns, name, uid, rv);
    j = cJSON_Parse(text);
    assert_non_null(j);
    assert_int_equal(fake_decode(j, &o), KUBE_OK);
    cJSON_Delete(j);
    return o;
}

/* ---- helpers -------------------------------------------------------------- */

static char *fixture(const char *name, size_t *len)
{
    char path[512];
    char *data = NULL;

    snprintf(path, sizeof(path), "%s/%s", STICKYVM_FIXTURES_DIR, name);
    assert_int_equal(kube_read_file(path, &data, len), KUBE_OK);
    return data;
}

/* The events of a recorded .jsonl stream (its '#' header line removed). */
static char *fixture_stream(const char *name, size_t *len)
{
    size_t n;
    char *data = fixture(name, &n);
    kube_buf out = KUBE_BUF_INIT;

    for (char *line = data; line < data + n;) {
        char *nl = memchr(line, '\n', (size_t)(data + n - line));
        size_t l = nl ? (size_t)(nl - line) + 1 : (size_t)(data + n - line);
        if (line[0] != '#')
            assert_int_equal(kube_buf_append(&out, line, l), KUBE_OK);
        line += l;
    }
    free(data);
    *len = out.len;
    return kube_buf_take(&out);
}

/* The "body" of a recorded .json answer, printed compact or pretty. */
static char *fixture_body(const char *name, int pretty)
{
    size_t n;
    char *data = fixture(name, &n);
    cJSON *doc = cJSON_Parse(data);
    char *text;

    assert_non_null(doc);
    text = pretty ? cJSON_Print(cJSON_GetObjectItem(doc, "body"))
                  : cJSON_PrintUnformatted(cJSON_GetObjectItem(doc, "body"));
    assert_non_null(text);
    cJSON_Delete(doc);
    free(data);
    return text;
}

/* Collects frames, one per line, into a buffer. */
static int collect(void *ud, const char *frame, size_t len)
{
    kube_buf *b = ud;
    assert_int_equal(kube_buf_append(b, frame, len), KUBE_OK);
    assert_int_equal(kube_buf_puts(b, "\n"), KUBE_OK);
    return 0;
}

static void feed_chunks(kube_jsonstream *s, const char *data, size_t len, size_t chunk,
                        kube_buf *out)
{
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        assert_int_equal(kube_jsonstream_feed(s, data + off, n, collect, out), KUBE_OK);
    }
}

/* ---- LINES mode ----------------------------------------------------------- */

static void lines_split_anywhere(void **state)
{
    size_t len;
    char *stream = fixture_stream("pods-watch-stream.jsonl", &len);
    kube_jsonstream s;
    kube_buf out = KUBE_BUF_INIT;
    (void)state;

    kube_jsonstream_init(&s, KUBE_JSONSTREAM_LINES, 0);
    /* Whole: the frames are exactly the lines. */
    assert_int_equal(kube_jsonstream_feed(&s, stream, len, collect, &out), KUBE_OK);
    assert_int_equal(kube_jsonstream_finish(&s, collect, &out), KUBE_OK);
    assert_int_equal(out.len, len);
    assert_memory_equal(out.data, stream, len);
    assert_int_equal(s.frames, 6);
    /* Split in two at every byte, then in chunks of many sizes. */
    for (size_t cut = 0; cut <= len; cut++) {
        kube_jsonstream_reset(&s);
        kube_buf_reset(&out);
        assert_int_equal(kube_jsonstream_feed(&s, stream, cut, collect, &out), KUBE_OK);
        assert_int_equal(kube_jsonstream_feed(&s, stream + cut, len - cut, collect, &out), KUBE_OK);
        assert_int_equal(kube_jsonstream_finish(&s, collect, &out), KUBE_OK);
        assert_int_equal(out.len, len);
        assert_memory_equal(out.data, stream, len);
    }
    for (size_t chunk = 1; chunk < 200; chunk += 7) {
        kube_jsonstream_reset(&s);
        kube_buf_reset(&out);
        feed_chunks(&s, stream, len, chunk, &out);
        assert_int_equal(kube_jsonstream_finish(&s, collect, &out), KUBE_OK);
        assert_memory_equal(out.data, stream, len);
    }
    kube_jsonstream_free(&s);
    kube_buf_free(&out);
    free(stream);
}

static void lines_several_per_chunk_and_garbage(void **state)
{
    static const char in[] = "{\"a\":1}\n\n  {\"b\":\"}\\\"{\\\\\"}{\"c\":[1,{}]}\r\n"
                             "garbage here\n{\"trunc\":\n\"x\ny\"\n{\"d\":1}{\"e\":";
    static const char want[] = "{\"a\":1}\n{\"b\":\"}\\\"{\\\\\"}\n{\"c\":[1,{}]}\n"
                               "garbage here\n{\"trunc\":\n\"x\ny\"\n{\"d\":1}\n{\"e\":\n";
    kube_jsonstream s;
    kube_buf out = KUBE_BUF_INIT;
    (void)state;

    for (size_t chunk = 1; chunk <= sizeof(in); chunk++) {
        kube_jsonstream_init(&s, KUBE_JSONSTREAM_LINES, 0);
        feed_chunks(&s, in, sizeof(in) - 1, chunk, &out);
        assert_int_equal(kube_jsonstream_finish(&s, collect, &out), KUBE_OK);
        assert_string_equal(out.data, want);
        assert_int_equal(s.frames, 9); /* a raw newline splits "x / y" */
        kube_jsonstream_free(&s);
        kube_buf_reset(&out);
    }
    kube_buf_free(&out);
}

static int stop_at_second(void *ud, const char *frame, size_t len)
{
    int *n = ud;
    (void)frame;
    (void)len;
    return ++*n == 2 ? 42 : 0;
}

static void lines_oversized_and_stop(void **state)
{
    static const char in[] = "{\"small\":1}\n{\"big\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n"
                             "garbage-that-is-far-too-long-to-keep\n{\"s\":2}\n";
    kube_jsonstream s;
    kube_buf out = KUBE_BUF_INIT;
    int n = 0;
    (void)state;

    for (size_t chunk = 1; chunk < sizeof(in); chunk += 3) {
        kube_jsonstream_init(&s, KUBE_JSONSTREAM_LINES, 16);
        feed_chunks(&s, in, sizeof(in) - 1, chunk, &out);
        assert_int_equal(kube_jsonstream_finish(&s, collect, &out), KUBE_OK);
        assert_string_equal(out.data, "{\"small\":1}\n{\"s\":2}\n");
        assert_int_equal(s.dropped, 2);
        kube_jsonstream_free(&s);
        kube_buf_reset(&out);
    }
    /* A callback's non-zero answer stops the feed and is returned. */
    kube_jsonstream_init(&s, KUBE_JSONSTREAM_LINES, 0);
    assert_int_equal(kube_jsonstream_feed(&s, in, sizeof(in) - 1, stop_at_second, &n), 42);
    assert_int_equal(n, 2);
    kube_jsonstream_free(&s);
    kube_buf_free(&out);
}

/* ---- LIST mode ------------------------------------------------------------ */

/* Every item frame must be one whole JSON object. */
static int check_item(void *ud, const char *frame, size_t len)
{
    cJSON *item = cJSON_ParseWithLength(frame, len);

    assert_true(cJSON_IsObject(item));
    cJSON_Delete(item);
    (*(int *)ud)++;
    return 0;
}

static void check_list(const char *text, size_t chunk, int n_items, const char *rv,
                       const char *cont)
{
    kube_jsonstream s;
    cJSON *skel;
    size_t len = strlen(text);
    int seen = 0;

    if (chunk == 0)
        chunk = len;
    kube_jsonstream_init(&s, KUBE_JSONSTREAM_LIST, 0);
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        assert_int_equal(kube_jsonstream_feed(&s, text + off, n, check_item, &seen), KUBE_OK);
    }
    assert_int_equal(kube_jsonstream_finish(&s, check_item, &seen), KUBE_OK);
    assert_int_equal(s.frames, n_items);
    assert_int_equal(seen, n_items);
    skel = cJSON_Parse(kube_jsonstream_skeleton(&s, NULL));
    assert_non_null(skel);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(skel, "items")), 0);
    const cJSON *md = cJSON_GetObjectItem(skel, "metadata");
    assert_string_equal(json_str(md, "resourceVersion"), rv);
    if (cont)
        assert_string_equal(json_str(md, "continue"), cont);
    else
        assert_null(json_str(md, "continue"));
    cJSON_Delete(skel);
    kube_jsonstream_free(&s);
}

static void list_items_from_fixtures(void **state)
{
    static const size_t chunks[] = {0, 1, 2, 7, 64, 1000};
    (void)state;

    for (int pretty = 0; pretty <= 1; pretty++) {
        char *nodes = fixture_body("nodes-list-200.json", pretty);
        char *pods = fixture_body("pods-list-200.json", pretty);
        for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
            check_list(
                nodes, chunks[i], 2, "1460",
                "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTQ2MCwic3RhcnQiOiJub2RlLTFcdTAwMDAifQ");
            check_list(pods, chunks[i], 1, "241", NULL);
        }
        free(nodes);
        free(pods);
    }
}

static void list_edge_shapes(void **state)
{
    kube_jsonstream s;
    kube_buf out = KUBE_BUF_INIT;
    (void)state;

    check_list("{\"items\":[],\"metadata\":{\"resourceVersion\":\"5\"}}", 1, 0, "5", NULL);
    /* "items" nested in metadata is not the list; brackets inside strings */
    check_list("{\"metadata\":{\"items\":[1],\"resourceVersion\":\"7\"},\"kind\":\"X\","
               "\"items\" : [ {\"a\":\"]\\\"\"} , {\"b\":[{}],\"items\":[2]}]}",
               1, 2, "7", NULL);
    check_list("{\"items\":null,\"metadata\":{\"resourceVersion\":\"8\"}}", 3, 0, "8", NULL);
    /* scalars are frames too (the consumer rejects them) */
    kube_jsonstream_init(&s, KUBE_JSONSTREAM_LIST, 0);
    static const char scalars[] = "{\"items\":[1, \"x,]\" ,{\"a\":1},true]}";
    feed_chunks(&s, scalars, sizeof(scalars) - 1, 1, &out);
    assert_int_equal(kube_jsonstream_finish(&s, collect, &out), KUBE_OK);
    assert_string_equal(out.data, "1\n\"x,]\" \n{\"a\":1}\ntrue\n");
    kube_jsonstream_free(&s);
    /* truncated documents fail */
    static const char *const bad[] = {"{\"items\":[{\"a\":1}", "{\"items\":[", "{\"items\"", "",
                                      "{\"metadata\":{\"resourceVersion\":\"1\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        kube_buf_reset(&out);
        kube_jsonstream_init(&s, KUBE_JSONSTREAM_LIST, 0);
        feed_chunks(&s, bad[i], strlen(bad[i]), 1, &out);
        assert_int_equal(kube_jsonstream_finish(&s, collect, &out), KUBE_EPARSE);
        kube_jsonstream_free(&s);
    }
    kube_buf_free(&out);
}

/* ---- watch events ---------------------------------------------------------- */

typedef struct event_log {
    kube_buf log;
    int n;
} event_log;

static int decode_into_log(void *ud, const char *frame, size_t len)
{
    event_log *el = ud;
    kube_watch_event ev;
    char err[64];
    int rc = kube_watch_event_decode(frame, len, &fake_codec, &ev, err, sizeof(err));

    assert_int_equal(rc, KUBE_OK);
    kube_buf_printf(&el->log, "%s %s %s %d;", kube_watch_type_name(ev.type),
                    ev.obj ? ev.obj->meta.name : "-", ev.rv, ev.code);
    el->n++;
    kube_watch_event_clear(&ev);
    return 0;
}

static void watch_events_from_fixtures(void **state)
{
    size_t len;
    char *stream = fixture_stream("pods-watch-stream.jsonl", &len);
    char *gone = fixture_stream("pods-watch-too-old-410.jsonl", &len);
    event_log el = {KUBE_BUF_INIT, 0};
    kube_jsonstream s;
    kube_watch_event ev;
    (void)state;

    kube_jsonstream_init(&s, KUBE_JSONSTREAM_LINES, 0);
    assert_int_equal(kube_jsonstream_feed(&s, stream, strlen(stream), decode_into_log, &el), 0);
    assert_string_equal(el.log.data, "ADDED virt-launcher-vm-a-fghij 247 0;"
                                     "MODIFIED virt-launcher-vm-a-fghij 248 0;"
                                     "MODIFIED virt-launcher-vm-a-fghij 249 0;"
                                     "DELETED virt-launcher-vm-a-fghij 250 0;"
                                     "BOOKMARK - 250 0;BOOKMARK - 250 0;");
    kube_jsonstream_free(&s);
    assert_int_equal(kube_watch_event_decode(gone, strlen(gone), &fake_codec, &ev, NULL, 0),
                     KUBE_OK);
    assert_int_equal(ev.type, KUBE_WATCH_ERROR);
    assert_int_equal(ev.code, 410);
    assert_string_equal(ev.reason, "Expired");
    assert_string_equal(ev.message, "too old resource version: 251 (1453)");
    assert_null(ev.obj);
    kube_watch_event_clear(&ev);
    kube_buf_free(&el.log);
    free(stream);
    free(gone);
}

/* A scratch tree equals the heap parse, big or small; a parse while one is
 * held gives a heap tree; garbage gives NULL and leaves the arena usable;
 * heap trees built meanwhile are freed as usual (valgrind/ASan check). */
static void jsonscratch_trees(void **state)
{
    const char *doc = "{\"a\":[1,2.5,\"x\",null,true],\"b\":{\"c\":\"\\u00e9\"}}";
    kube_buf big = KUBE_BUF_INIT;
    cJSON *want = cJSON_Parse(doc), *a, *b, *c;
    char *printed;

    (void)state;
    a = kube_jsonscratch_parse(doc, strlen(doc));
    assert_non_null(a);
    assert_true(cJSON_Compare(a, want, 1));
    b = kube_jsonscratch_parse(doc, strlen(doc));
    assert_true(cJSON_Compare(b, want, 1));
    c = cJSON_Duplicate(a, 1);
    printed = cJSON_PrintUnformatted(a);
    assert_string_equal(printed, "{\"a\":[1,2.5,\"x\",null,true],\"b\":{\"c\":\"\u00e9\"}}");
    cJSON_free(printed);
    cJSON_Delete(c);
    kube_jsonscratch_release(b);
    kube_jsonscratch_release(a);
    assert_null(kube_jsonscratch_parse("{\"a\":", 5));
    assert_int_equal(kube_buf_puts(&big, "["), KUBE_OK);
    for (int i = 0; i < 20000; i++)
        assert_int_equal(kube_buf_printf(&big, "%s\"item-%d\"", i ? "," : "", i), KUBE_OK);
    assert_int_equal(kube_buf_puts(&big, "]"), KUBE_OK);
    a = kube_jsonscratch_parse(big.data, big.len);
    assert_int_equal(cJSON_GetArraySize(a), 20000);
    assert_string_equal(cJSON_GetArrayItem(a, 19999)->valuestring, "item-19999");
    kube_jsonscratch_release(a);
    a = kube_jsonscratch_parse(doc, strlen(doc));
    assert_true(cJSON_Compare(a, want, 1));
    kube_jsonscratch_release(a);
    kube_jsonscratch_release(NULL);
    kube_buf_free(&big);
    cJSON_Delete(want);
}

static void watch_events_malformed(void **state)
{
    static const char *const bad[] = {
        "not json",
        "{\"type\":\"ADDED\"",
        "{\"type\":\"WHAT\",\"object\":{\"metadata\":{\"name\":\"a\"}}}",
        "{\"type\":7,\"object\":{}}",
        "{\"type\":\"ADDED\"}",
        "{\"type\":\"ADDED\",\"object\":[]}",
        "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Reject\",\"metadata\":{\"name\":\"a\","
        "\"resourceVersion\":\"9\"}}}",
        "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"namespace\":\"x\"}}}",
        "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}",
        "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":"
        "\"1234567890123456789012345678901234567890123456789012345678901234567890\"}}}",
    };
    kube_watch_event ev;
    char err[64];
    (void)state;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(
            kube_watch_event_decode(bad[i], strlen(bad[i]), &fake_codec, &ev, err, sizeof(err)),
            KUBE_EPARSE);
        assert_null(ev.obj);
        assert_true(err[0] != '\0');
        if (i == 6) /* the version of an object that fails to decode is known */
            assert_string_equal(ev.rv, "9");
        kube_watch_event_clear(&ev);
    }
}

/* ---- store and deliveries --------------------------------------------------- */

static void rec_add(void *ud, kube_object *o)
{
    kube_buf_printf(ud, "add %s/%s %s %s;", o->meta.namespace_, o->meta.name, o->meta.uid,
                    o->meta.resource_version);
}

static void rec_update(void *ud, kube_object *a, kube_object *b)
{
    assert_string_equal(a->meta.name, b->meta.name);
    kube_buf_printf(ud, "update %s/%s %s->%s;", b->meta.namespace_, b->meta.name,
                    a->meta.resource_version, b->meta.resource_version);
}

static void rec_delete(void *ud, kube_object *o)
{
    kube_buf_printf(ud, "delete %s/%s %s %s;", o->meta.namespace_, o->meta.name, o->meta.uid,
                    o->meta.resource_version);
}

typedef struct stream_apply {
    kube_store *store;
    kube_informer_handlers *h;
    char rv[KUBE_RV_MAX];
    unsigned long bookmarks, errors;
} stream_apply;

static int apply_frame(void *ud, const char *frame, size_t len)
{
    stream_apply *sa = ud;
    kube_watch_event ev;

    if (kube_watch_event_decode(frame, len, &fake_codec, &ev, NULL, 0) != KUBE_OK) {
        sa->errors++;
        return 0;
    }
    if (ev.type == KUBE_WATCH_BOOKMARK)
        sa->bookmarks++;
    else
        assert_int_equal(kube_store_apply(sa->store, ev.type, ev.obj, sa->h), KUBE_OK);
    kube_strlcpy(sa->rv, ev.rv, sizeof(sa->rv));
    kube_watch_event_clear(&ev);
    return 0;
}

static void store_applies_recorded_stream(void **state)
{
    size_t len;
    char *stream = fixture_stream("pods-watch-stream.jsonl", &len);
    kube_buf log = KUBE_BUF_INIT;
    kube_informer_handlers h = {rec_add, rec_update, rec_delete, &log};
    stream_apply sa = {NULL, &h, "", 0, 0};
    kube_jsonstream s;
    kube_buf with_garbage = KUBE_BUF_INIT;
    (void)state;

    /* the recorded stream with a garbage line and a bad object spliced in */
    char *second = strchr(stream, '\n') + 1;
    kube_buf_append(&with_garbage, stream, (size_t)(second - stream));
    kube_buf_puts(&with_garbage, "}{ garbage\n{\"type\":\"ADDED\",\"object\":{\"kind\":\"Reject\","
                                 "\"metadata\":{\"name\":\"x\"}}}\n");
    kube_buf_puts(&with_garbage, second);
    assert_int_equal(kube_store_new(&sa.store), KUBE_OK);
    kube_jsonstream_init(&s, KUBE_JSONSTREAM_LINES, 0);
    for (size_t off = 0; off < with_garbage.len; off += 100) {
        size_t n = with_garbage.len - off < 100 ? with_garbage.len - off : 100;
        assert_int_equal(kube_jsonstream_feed(&s, with_garbage.data + off, n, apply_frame, &sa), 0);
    }
    assert_int_equal(kube_jsonstream_finish(&s, apply_frame, &sa), 0);
    assert_string_equal(
        log.data,
        "add default/virt-launcher-vm-a-fghij be6c1c64-44a7-45db-816f-16148d1e2a00 247;"
        "update default/virt-launcher-vm-a-fghij 247->248;"
        "update default/virt-launcher-vm-a-fghij 248->249;"
        "delete default/virt-launcher-vm-a-fghij be6c1c64-44a7-45db-816f-16148d1e2a00 250;");
    assert_int_equal(sa.bookmarks, 2);
    assert_int_equal(sa.errors, 2);
    assert_string_equal(sa.rv, "250");
    assert_int_equal(kube_store_count(sa.store), 0);
    kube_jsonstream_free(&s);
    kube_store_free(sa.store);
    kube_buf_free(&log);
    kube_buf_free(&with_garbage);
    free(stream);
}

static void store_apply_rules(void **state)
{
    kube_buf log = KUBE_BUF_INIT;
    kube_informer_handlers h = {rec_add, rec_update, rec_delete, &log};
    kube_store *s;
    kube_object *a1 = mk("ns", "a", "u1", "1"), *a2 = mk("ns", "a", "u1", "2");
    kube_object *a3 = mk("ns", "a", "u2", "3"), *gone = mk("ns", "zz", "u9", "4");
    kube_object *node = mk("", "a", "n1", "5"), *got;
    (void)state;

    assert_int_equal(kube_store_new(&s), KUBE_OK);
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_MODIFIED, a1, &h), KUBE_OK); /* unknown: add */
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_ADDED, a2, &h), KUBE_OK);    /* known: update */
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_MODIFIED, a3, &h), KUBE_OK); /* new uid */
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_DELETED, gone, &h), KUBE_OK); /* unknown */
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_ADDED, node, &h), KUBE_OK);   /* other key */
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_BOOKMARK, node, &h), KUBE_EINVAL);
    assert_string_equal(log.data, "add ns/a u1 1;update ns/a 1->2;delete ns/a u1 2;add ns/a u2 3;"
                                  "add /a n1 5;");
    assert_int_equal(kube_store_count(s), 2);
    got = kube_store_get(s, "ns", "a");
    assert_ptr_equal(got, a3);
    kube_object_unref(got);
    got = kube_store_get(s, NULL, "a");
    assert_ptr_equal(got, node);
    kube_object_unref(got);
    assert_null(kube_store_get(s, "other", "a"));
    /* deleting with a stale uid hands out what handlers know */
    kube_buf_reset(&log);
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_DELETED, a1, &h), KUBE_OK);
    assert_string_equal(log.data, "delete ns/a u2 3;");
    assert_int_equal(kube_store_count(s), 1);
    kube_store_free(s);
    kube_object_unref(a1);
    kube_object_unref(a2);
    kube_object_unref(a3);
    kube_object_unref(gone);
    kube_object_unref(node);
    kube_buf_free(&log);
}

static void store_replace_delivers_difference(void **state)
{
    kube_buf log = KUBE_BUF_INIT;
    kube_informer_handlers h = {rec_add, rec_update, rec_delete, &log};
    kube_store *s;
    kube_object *before[] = {mk("d", "a", "ua", "1"), mk("d", "b", "ub", "1"),
                             mk("d", "c", "uc1", "1"), mk("d", "e", "ue", "1")};
    kube_object *after[] = {mk("d", "a", "ua", "1"), mk("d", "b", "ub", "2"),
                            mk("d", "c", "uc2", "3"), mk("d", "f", "uf", "4")};
    (void)state;

    assert_int_equal(kube_store_new(&s), KUBE_OK);
    assert_int_equal(kube_store_replace(s, before, 4, &h), KUBE_OK);
    assert_string_equal(log.data, "add d/a ua 1;add d/b ub 1;add d/c uc1 1;add d/e ue 1;");
    kube_buf_reset(&log);
    assert_int_equal(kube_store_replace(s, after, 4, &h), KUBE_OK);
    assert_string_equal(log.data, "update d/b 1->2;delete d/c uc1 1;add d/c uc2 3;add d/f uf 4;"
                                  "delete d/e ue 1;");
    assert_int_equal(kube_store_count(s), 4);
    kube_object *got = kube_store_get(s, "d", "a");
    assert_ptr_equal(got, after[0]); /* the list's copy is kept even when unchanged */
    kube_object_unref(got);
    /* an empty list deletes everything */
    kube_buf_reset(&log);
    assert_int_equal(kube_store_replace(s, NULL, 0, &h), KUBE_OK);
    assert_int_equal(kube_store_count(s), 0);
    assert_int_equal(strlen(log.data), strlen("delete d/a ua 1;delete d/b ub 2;"
                                              "delete d/c uc2 3;delete d/f uf 4;"));
    assert_non_null(strstr(log.data, "delete d/b ub 2;"));
    assert_non_null(strstr(log.data, "delete d/f uf 4;"));
    kube_store_free(s);
    for (int i = 0; i < 4; i++) {
        kube_object_unref(before[i]);
        kube_object_unref(after[i]);
    }
    kube_buf_free(&log);
}

static void count_fn(void *ud, kube_object *o)
{
    (void)o;
    (*(size_t *)ud)++;
}

/* Random puts/deletes against a plain array model (exercises growth and the
 * backward-shift deletion of the open-addressing table). */
static void store_table_matches_model(void **state)
{
    enum { KEYS = 3000, OPS = 30000 };
    kube_object **model = calloc(KEYS, sizeof(*model));
    kube_store *s;
    unsigned seed = 12345;
    size_t live = 0, n;
    char name[32], rv[32];
    (void)state;

    assert_int_equal(kube_store_new(&s), KUBE_OK);
    for (int op = 0; op < OPS; op++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % KEYS);
        snprintf(name, sizeof(name), "obj-%d", k);
        snprintf(rv, sizeof(rv), "%d", op);
        kube_object *o = mk(k % 3 ? "ns" : "", name, name, rv);
        int del = ((seed >> 4) & 3) == 0;
        assert_int_equal(kube_store_apply(s, del ? KUBE_WATCH_DELETED : KUBE_WATCH_ADDED, o, NULL),
                         KUBE_OK);
        if (!del && !model[k])
            live++;
        if (del && model[k])
            live--;
        kube_object_unref(model[k]);
        model[k] = del ? NULL : o;
        if (del)
            kube_object_unref(o);
        assert_int_equal(kube_store_count(s), live);
    }
    for (int k = 0; k < KEYS; k++) {
        snprintf(name, sizeof(name), "obj-%d", k);
        kube_object *got = kube_store_get(s, k % 3 ? "ns" : "", name);
        assert_ptr_equal(got, model[k]);
        kube_object_unref(got);
        kube_object_unref(model[k]);
    }
    n = 0;
    kube_store_foreach(s, count_fn, &n);
    assert_int_equal(n, live);
    kube_store_free(s);
    free(model);
}

/* ---- indexes ------------------------------------------------------------- */

/* The test index: a fake object's comma-separated "keys". */
static int keys_index(void *ud, const kube_object *obj, kube_index_keys *keys)
{
    (void)ud;
    const char *p = ((const fake_obj *)obj)->strs[4];
    char key[64];
    int rc = KUBE_OK;

    while (p && *p && rc == KUBE_OK) {
        size_t n = strcspn(p, ",");
        snprintf(key, sizeof(key), "%.*s", (int)n, p);
        rc = kube_index_keys_add(keys, key);
        p += n + (p[n] == ',');
    }
    return rc;
}

/* Another index function: everything under one key. */
static int all_index(void *ud, const kube_object *obj, kube_index_keys *keys)
{
    (void)obj;
    assert_string_equal(ud, "all-ud");
    return kube_index_keys_add(keys, "all");
}

static void collect_name(void *ud, kube_object *o)
{
    kube_buf_printf(ud, "%s,", o->meta.name);
}

/* The names the index "k" gives key, sorted, comma-separated ("" for none). */
static char *by_key(kube_store *s, const char *key)
{
    kube_buf b = KUBE_BUF_INIT;
    char *names[64], *copy, *out;
    size_t n = 0;

    assert_int_equal(kube_store_by_index(s, "k", key, collect_name, &b), KUBE_OK);
    copy = kube_strdup(b.data ? b.data : "");
    for (char *t = copy; *t;) {
        size_t len = strcspn(t, ",");
        t[len] = '\0';
        names[n++] = t;
        t += len + 1;
    }
    for (size_t i = 1; i < n; i++) /* insertion sort */
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    kube_buf_reset(&b);
    kube_buf_puts(&b, "");
    for (size_t i = 0; i < n; i++)
        kube_buf_printf(&b, "%s%s", i ? "," : "", names[i]);
    out = kube_strdup(b.data);
    free(copy);
    kube_buf_free(&b);
    return out;
}

#define ASSERT_BY_KEY(s, key, want)        \
    do {                                   \
        char *got_ = by_key((s), (key));   \
        assert_string_equal(got_, (want)); \
        free(got_);                        \
    } while (0)

/* Add, an update that moves an object between keys, several keys per
 * object, delete, and the keys dropped with their last object. */
static void store_index_follows_changes(void **state)
{
    kube_store *s;
    kube_object *a1 = mkk("d", "a", "ua", "1", "x,y"), *b1 = mkk("d", "b", "ub", "1", "x");
    kube_object *c1 = mkk("d", "c", "uc", "1", ""), *a2 = mkk("d", "a", "ua", "2", "y,z,z");
    kube_object *b2 = mkk("d", "b", "ub2", "3", "z"); /* recreated (new uid) */
    kube_object *gone = mkk("d", "a", "ua", "4", "q");
    (void)state;

    assert_int_equal(kube_store_new(&s), KUBE_OK);
    assert_int_equal(kube_store_add_index(s, "k", keys_index, NULL), KUBE_OK);
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_ADDED, a1, NULL), KUBE_OK);
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_ADDED, b1, NULL), KUBE_OK);
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_ADDED, c1, NULL), KUBE_OK);
    ASSERT_BY_KEY(s, "x", "a,b");
    ASSERT_BY_KEY(s, "y", "a");
    ASSERT_BY_KEY(s, "z", "");
    assert_int_equal(kube_store_index_len(s, "k"), 2); /* c has no key */
    /* an update moves a from x,y to y,z (a duplicate key counts once) */
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_MODIFIED, a2, NULL), KUBE_OK);
    ASSERT_BY_KEY(s, "x", "b");
    ASSERT_BY_KEY(s, "y", "a");
    ASSERT_BY_KEY(s, "z", "a");
    kube_buf seen = KUBE_BUF_INIT;
    assert_int_equal(kube_store_by_index(s, "k", "z", collect_name, &seen), KUBE_OK);
    assert_string_equal(seen.data, "a,"); /* once, although "z,z" */
    kube_buf_free(&seen);
    /* a recreated object leaves its old keys */
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_MODIFIED, b2, NULL), KUBE_OK);
    ASSERT_BY_KEY(s, "x", "");
    ASSERT_BY_KEY(s, "z", "a,b");
    assert_int_equal(kube_store_index_len(s, "k"), 2); /* y, z: x dropped */
    /* a delete whose final state has other keys removes the stored keys */
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_DELETED, gone, NULL), KUBE_OK);
    ASSERT_BY_KEY(s, "y", "");
    ASSERT_BY_KEY(s, "z", "b");
    ASSERT_BY_KEY(s, "q", "");
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_DELETED, b2, NULL), KUBE_OK);
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_DELETED, c1, NULL), KUBE_OK);
    assert_int_equal(kube_store_index_len(s, "k"), 0);
    /* the same object applied twice stays once */
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_ADDED, a1, NULL), KUBE_OK);
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_MODIFIED, a1, NULL), KUBE_OK);
    ASSERT_BY_KEY(s, "x", "a");
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_DELETED, a1, NULL), KUBE_OK);
    assert_int_equal(kube_store_index_len(s, "k"), 0);
    kube_store_free(s);
    kube_object *objs[] = {a1, b1, c1, a2, b2, gone};
    for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
        kube_object_unref(objs[i]);
}

/* A re-list: new, changed, unchanged and vanished objects; and an index
 * added late is built from what the store holds. */
static void store_index_follows_replace(void **state)
{
    kube_store *s;
    kube_object *before[] = {mkk("d", "a", "ua", "1", "x"), mkk("d", "b", "ub", "1", "x,y"),
                             mkk("d", "c", "uc", "1", "y")};
    kube_object *after[] = {mkk("d", "a", "ua", "1", "x"), mkk("d", "b", "ub", "2", "z"),
                            mkk("d", "e", "ue", "1", "y,z")};
    (void)state;

    assert_int_equal(kube_store_new(&s), KUBE_OK);
    assert_int_equal(kube_store_replace(s, before, 3, NULL), KUBE_OK);
    /* added after the objects: built from the store */
    assert_int_equal(kube_store_add_index(s, "k", keys_index, NULL), KUBE_OK);
    assert_int_equal(kube_store_add_index(s, "k", keys_index, NULL), KUBE_OK); /* the same again */
    assert_int_equal(kube_store_add_index(s, "k", all_index, NULL), KUBE_EEXIST);
    assert_int_equal(kube_store_add_index(s, "all", all_index, "all-ud"), KUBE_OK);
    ASSERT_BY_KEY(s, "x", "a,b");
    ASSERT_BY_KEY(s, "y", "b,c");
    assert_int_equal(kube_store_replace(s, after, 3, NULL), KUBE_OK);
    ASSERT_BY_KEY(s, "x", "a");
    ASSERT_BY_KEY(s, "y", "e");
    ASSERT_BY_KEY(s, "z", "b,e");
    assert_int_equal(kube_store_index_len(s, "k"), 3);
    size_t n = 0;
    assert_int_equal(kube_store_by_index(s, "all", "all", count_fn, &n), KUBE_OK);
    assert_int_equal(n, 3);
    /* an unknown index is an error, an unknown key is none */
    assert_int_equal(kube_store_by_index(s, "nope", "x", count_fn, &n), KUBE_EINVAL);
    assert_int_equal(kube_store_by_index(s, "k", "nope", count_fn, &n), KUBE_OK);
    assert_int_equal(n, 3);
    assert_int_equal(kube_store_replace(s, NULL, 0, NULL), KUBE_OK);
    assert_int_equal(kube_store_index_len(s, "k"), 0);
    assert_int_equal(kube_store_index_len(s, "all"), 0);
    kube_store_free(s);
    for (int i = 0; i < 3; i++) {
        kube_object_unref(before[i]);
        kube_object_unref(after[i]);
    }
}

/* Random changes against a model: every key's objects match a full walk. */
static void store_index_matches_walk(void **state)
{
    enum { KEYS = 400, OPS = 6000, VALS = 7 };
    kube_store *s;
    unsigned seed = 777;
    char name[32], rv[32], keys[32];
    int model[KEYS]; /* -1: absent; else the bitmask of keys k0..k6 */
    (void)state;

    for (int k = 0; k < KEYS; k++)
        model[k] = -1;
    assert_int_equal(kube_store_new(&s), KUBE_OK);
    assert_int_equal(kube_store_add_index(s, "k", keys_index, NULL), KUBE_OK);
    for (int op = 0; op < OPS; op++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % KEYS), mask = (int)((seed >> 20) % (1u << VALS));
        int del = ((seed >> 4) & 3) == 0;
        size_t off = 0;
        keys[0] = '\0';
        for (int v = 0; v < VALS; v++)
            if (mask & (1 << v))
                off += (size_t)snprintf(keys + off, sizeof(keys) - off, "%sk%d", off ? "," : "", v);
        snprintf(name, sizeof(name), "obj-%d", k);
        snprintf(rv, sizeof(rv), "%d", op);
        kube_object *o = mkk("ns", name, name, rv, keys);
        assert_int_equal(
            kube_store_apply(s, del ? KUBE_WATCH_DELETED : KUBE_WATCH_MODIFIED, o, NULL), KUBE_OK);
        model[k] = del ? -1 : mask;
        kube_object_unref(o);
    }
    size_t live_keys = 0;
    for (int v = 0; v < VALS; v++) {
        size_t want = 0, got = 0;
        snprintf(keys, sizeof(keys), "k%d", v);
        for (int k = 0; k < KEYS; k++)
            want += model[k] >= 0 && (model[k] & (1 << v));
        assert_int_equal(kube_store_by_index(s, "k", keys, count_fn, &got), KUBE_OK);
        assert_int_equal(got, want);
        live_keys += want > 0;
    }
    assert_int_equal(kube_store_index_len(s, "k"), live_keys);
    kube_store_free(s);
}

typedef struct reader_arg {
    kube_store *s;
    volatile int stop;
    unsigned long hits;
} reader_arg;

static void *reader(void *p)
{
    reader_arg *ra = p;
    while (!ra->stop) {
        kube_object *o = kube_store_get(ra->s, "ns", "obj-7");
        if (o) {
            assert_string_equal(o->meta.name, "obj-7");
            ra->hits++;
        }
        kube_object_unref(o);
        size_t n = 0;
        kube_store_foreach(ra->s, count_fn, &n);
    }
    return NULL;
}

/* Readers on other threads while the store is rewritten (ASan/valgrind
 * check that references keep objects alive). */
static void store_concurrent_readers(void **state)
{
    reader_arg ra = {NULL, 0, 0};
    pthread_t t;
    char name[32], rv[32];
    (void)state;

    assert_int_equal(kube_store_new(&ra.s), KUBE_OK);
    assert_int_equal(pthread_create(&t, NULL, reader, &ra), 0);
    for (int round = 0; round < 200; round++) {
        for (int k = 0; k < 20; k++) {
            snprintf(name, sizeof(name), "obj-%d", k);
            snprintf(rv, sizeof(rv), "%d", round);
            kube_object *o = mk("ns", name, name, rv);
            kube_store_apply(ra.s, round % 2 ? KUBE_WATCH_DELETED : KUBE_WATCH_MODIFIED, o, NULL);
            kube_object_unref(o);
        }
    }
    ra.stop = 1;
    pthread_join(t, NULL);
    kube_store_free(ra.s);
}

/* ---- the informer against a scripted HTTP server -------------------------- */

/* One scripted answer: status and body; chunk > 0 sends the body chunked in
 * pieces of that size; hold keeps the stream open until the client leaves. */
typedef struct step {
    int status;
    char *body;
    size_t chunk;
    int hold;
} step;

typedef struct fake_server {
    int fd, port;
    pthread_t thread;
    step *steps;
    size_t n_steps, next;
    kube_buf log; /* request targets, one per line, timeoutSeconds removed */
    pthread_mutex_t mu;
    volatile int stop;
} fake_server;

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_request(int fd, char *buf, size_t cap)
{
    size_t len = 0;

    while (len + 1 < cap) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 5000) <= 0)
            return -1;
        ssize_t r = recv(fd, buf + len, cap - 1 - len, 0);
        if (r <= 0)
            return -1;
        len += (size_t)r;
        buf[len] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            return 0;
    }
    return -1;
}

static void log_target(fake_server *fs, const char *req)
{
    const char *sp = strchr(req, ' '), *end = sp ? strchr(sp + 1, ' ') : NULL;
    char target[1024];

    if (!end)
        return;
    snprintf(target, sizeof(target), "%.*s", (int)(end - sp - 1), sp + 1);
    char *t = strstr(target, "&timeoutSeconds=");
    if (t) {
        char *rest = t + 1;
        while (*rest && *rest != '&')
            rest++;
        memmove(t, rest, strlen(rest) + 1);
    }
    pthread_mutex_lock(&fs->mu);
    kube_buf_printf(&fs->log, "%s\n", target);
    pthread_mutex_unlock(&fs->mu);
}

static void wait_client_gone(fake_server *fs, int fd)
{
    char b[256];

    while (!fs->stop) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 50) > 0 && recv(fd, b, sizeof(b), 0) <= 0)
            return;
    }
}

static void answer(fake_server *fs, int fd, const step *st)
{
    char head[256];
    size_t len = strlen(st->body);

    if (st->chunk == 0) {
        snprintf(head, sizeof(head),
                 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n",
                 st->status, len);
        if (send_all(fd, head, strlen(head)) == 0)
            send_all(fd, st->body, len);
        return;
    }
    snprintf(head, sizeof(head),
             "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
             "Connection: close\r\n\r\n",
             st->status);
    send_all(fd, head, strlen(head));
    for (size_t off = 0; off < len; off += st->chunk) {
        size_t n = len - off < st->chunk ? len - off : st->chunk;
        snprintf(head, sizeof(head), "%zx\r\n", n);
        if (send_all(fd, head, strlen(head)) || send_all(fd, st->body + off, n) ||
            send_all(fd, "\r\n", 2))
            return;
    }
    if (st->hold)
        wait_client_gone(fs, fd);
    else
        send_all(fd, "0\r\n\r\n", 5);
}

static void *server_main(void *p)
{
    fake_server *fs = p;
    static const step extra = {500, "{\"kind\":\"Status\",\"code\":500}", 0, 0};
    char req[4096];

    while (!fs->stop) {
        struct pollfd pfd = {fs->fd, POLLIN, 0};
        if (poll(&pfd, 1, 50) <= 0)
            continue;
        int c = accept(fs->fd, NULL, NULL);
        if (c < 0)
            continue;
        if (read_request(c, req, sizeof(req)) == 0) {
            log_target(fs, req);
            const step *st = fs->next < fs->n_steps ? &fs->steps[fs->next] : &extra;
            fs->next++;
            answer(fs, c, st);
        }
        close(c);
    }
    return NULL;
}

static void server_start(fake_server *fs, step *steps, size_t n)
{
    struct sockaddr_in a = {0};
    socklen_t al = sizeof(a);

    memset(fs, 0, sizeof(*fs));
    fs->steps = steps;
    fs->n_steps = n;
    pthread_mutex_init(&fs->mu, NULL);
    fs->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fs->fd >= 0);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fs->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(fs->fd, 16), 0);
    assert_int_equal(getsockname(fs->fd, (struct sockaddr *)&a, &al), 0);
    fs->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&fs->thread, NULL, server_main, fs), 0);
}

static void server_stop(fake_server *fs)
{
    fs->stop = 1;
    pthread_join(fs->thread, NULL);
    close(fs->fd);
    kube_buf_free(&fs->log);
    pthread_mutex_destroy(&fs->mu);
}

/* A client for http://127.0.0.1:port with a token. */
static void client_for(int port, kube_config **cfg, kube_client **client)
{
    char path[] = "/tmp/stickyvm-informer-kubeconfig-XXXXXX";
    char text[512], err[256];
    int fd = mkstemp(path);
    kube_client_options o;

    assert_true(fd >= 0);
    snprintf(text, sizeof(text),
             "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
             "    server: http://127.0.0.1:%d\nusers:\n- name: u\n  user:\n    token: t0k3n\n"
             "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
             port);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    int rc = kube_config_from_file(path, cfg, err, sizeof(err));
    unlink(path);
    assert_int_equal(rc, KUBE_OK);
    kube_client_options_default(&o);
    o.qps = 0;
    assert_int_equal(kube_client_new(*cfg, &o, client), KUBE_OK);
}

/* JSON texts derived from the recorded pod list. */
static cJSON *recorded_pod(void)
{
    char *body = fixture_body("pods-list-200.json", 0);
    cJSON *list = cJSON_Parse(body);
    cJSON *pod = cJSON_DetachItemFromArray(cJSON_GetObjectItem(list, "items"), 0);

    free(body);
    cJSON_Delete(list);
    assert_non_null(pod);
    return pod;
}

static cJSON *pod_with(const char *name, const char *uid, const char *rv)
{
    cJSON *pod = recorded_pod();
    cJSON *md = cJSON_GetObjectItem(pod, "metadata");

    if (name)
        cJSON_ReplaceItemInObject(md, "name", cJSON_CreateString(name));
    if (uid)
        cJSON_ReplaceItemInObject(md, "uid", cJSON_CreateString(uid));
    cJSON_ReplaceItemInObject(md, "resourceVersion", cJSON_CreateString(rv));
    return pod;
}

/* {"kind":"PodList",...} of the given pods (taken over), at rv. */
static char *pod_list(const char *rv, const char *cont, cJSON *a, cJSON *b)
{
    cJSON *list = cJSON_CreateObject(), *md = cJSON_CreateObject(), *items = cJSON_CreateArray();
    char *text;

    cJSON_AddStringToObject(list, "kind", "PodList");
    cJSON_AddStringToObject(list, "apiVersion", "v1");
    cJSON_AddStringToObject(md, "resourceVersion", rv);
    if (cont)
        cJSON_AddStringToObject(md, "continue", cont);
    cJSON_AddItemToObject(list, "metadata", md);
    if (a)
        cJSON_AddItemToArray(items, a);
    if (b)
        cJSON_AddItemToArray(items, b);
    cJSON_AddItemToObject(list, "items", items);
    text = cJSON_PrintUnformatted(list);
    cJSON_Delete(list);
    return text;
}

static char *watch_line(const char *type, cJSON *obj)
{
    cJSON *ev = cJSON_CreateObject();
    char *text, *line;

    cJSON_AddStringToObject(ev, "type", type);
    cJSON_AddItemToObject(ev, "object", obj);
    text = cJSON_PrintUnformatted(ev);
    cJSON_Delete(ev);
    line = malloc(strlen(text) + 2);
    snprintf(line, strlen(text) + 2, "%s\n", text);
    free(text);
    return line;
}

static const char EXPIRED[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                              "\"status\":\"Failure\",\"message\":\"too old resource version\","
                              "\"reason\":\"Expired\",\"code\":410}";

typedef struct synced_log {
    pthread_mutex_t mu;
    kube_buf log;
} synced_log;

static void sl_add(void *ud, kube_object *o)
{
    synced_log *sl = ud;
    pthread_mutex_lock(&sl->mu);
    rec_add(&sl->log, o);
    pthread_mutex_unlock(&sl->mu);
}

static void sl_update(void *ud, kube_object *a, kube_object *b)
{
    synced_log *sl = ud;
    pthread_mutex_lock(&sl->mu);
    rec_update(&sl->log, a, b);
    pthread_mutex_unlock(&sl->mu);
}

static void sl_delete(void *ud, kube_object *o)
{
    synced_log *sl = ud;
    pthread_mutex_lock(&sl->mu);
    rec_delete(&sl->log, o);
    pthread_mutex_unlock(&sl->mu);
}

static int sl_contains(synced_log *sl, const char *what)
{
    pthread_mutex_lock(&sl->mu);
    int yes = sl->log.data && strstr(sl->log.data, what) != NULL;
    pthread_mutex_unlock(&sl->mu);
    return yes;
}

#define UID_A "63ec8fc2-bedd-4af0-9b77-53b5010ab02a"
#define UID_F "be6c1c64-44a7-45db-816f-16148d1e2a00"
#define PODS "/api/v1/namespaces/default/pods"
#define WATCH PODS "?watch=1&allowWatchBookmarks=true&resourceVersion="

/* The reflector's whole recovery repertoire, in the order client-go v1.23
 * would issue the requests: paginated first list whose continue expires,
 * the recorded watch stream (split in 7-byte chunks, with a garbage line),
 * the recorded in-stream 410, a re-list at the last version, an HTTP 410
 * watch, a re-list answering 410 then retried at "", a 500 on the watch. */
static void informer_follows_scripted_server(void **state)
{
    size_t len;
    char *stream = fixture_stream("pods-watch-stream.jsonl", &len);
    char *gone = fixture_stream("pods-watch-too-old-410.jsonl", &len);
    kube_buf watch1 = KUBE_BUF_INIT;
    char *second = strchr(stream, '\n') + 1;
    step steps[] = {
        {200, pod_list("241", "tok", recorded_pod(), NULL), 0, 0},
        {410, kube_strdup(EXPIRED), 0, 0},
        {200, pod_list("241", NULL, recorded_pod(), NULL), 0, 0},
        {200, NULL, 7, 0},
        {200, kube_strdup(gone), 3, 0},
        {200,
         pod_list("261", NULL, pod_with(NULL, NULL, "260"), pod_with("new-pod", "uid-new", "259")),
         0, 0},
        {410, kube_strdup(EXPIRED), 0, 0},
        {410, kube_strdup(EXPIRED), 0, 0},
        {200, pod_list("280", NULL, pod_with("new-pod", "uid-new", "259"), NULL), 0, 0},
        {500, kube_strdup("{\"kind\":\"Status\",\"code\":500,\"reason\":\"InternalError\"}"), 0, 0},
        {200, watch_line("MODIFIED", pod_with("new-pod", "uid-new", "281")), 5, 1},
    };
    static const char *const want_requests =
        PODS "?limit=500&resourceVersion=0\n" PODS "?limit=500&continue=tok\n" PODS
             "?resourceVersion=0\n" WATCH "241\n" WATCH "250\n" PODS
             "?limit=500&resourceVersion=250\n" WATCH "261\n" PODS
             "?limit=500&resourceVersion=261\n" PODS "?limit=500\n" WATCH "280\n" WATCH "280\n";
    static const char *const want_events = "add default/virt-launcher-vm-a-abcde " UID_A " 241;"
                                           "add default/virt-launcher-vm-a-fghij " UID_F " 247;"
                                           "update default/virt-launcher-vm-a-fghij 247->248;"
                                           "update default/virt-launcher-vm-a-fghij 248->249;"
                                           "delete default/virt-launcher-vm-a-fghij " UID_F " 250;"
                                           "update default/virt-launcher-vm-a-abcde 241->260;"
                                           "add default/new-pod uid-new 259;"
                                           "delete default/virt-launcher-vm-a-abcde " UID_A " 260;"
                                           "update default/new-pod 259->281;";
    synced_log sl = {PTHREAD_MUTEX_INITIALIZER, KUBE_BUF_INIT};
    kube_informer_handlers h = {sl_add, sl_update, sl_delete, &sl};
    kube_informer_options io = {.resource = &KUBE_RES_PODS,
                                .codec = &fake_codec,
                                .namespace_ = "default",
                                .backoff_initial_ms = 20};
    fake_server fs;
    kube_config *cfg;
    kube_client *client;
    kube_hub *hub;
    kube_informer *inf;
    kube_informer_stats st;
    char rv[KUBE_RV_MAX];
    (void)state;

    kube_buf_append(&watch1, stream, (size_t)(second - stream));
    kube_buf_puts(&watch1, "this line is not json\n");
    kube_buf_puts(&watch1, second);
    steps[3].body = kube_buf_take(&watch1);
    server_start(&fs, steps, sizeof(steps) / sizeof(steps[0]));
    client_for(fs.port, &cfg, &client);
    assert_int_equal(kube_hub_new(client, &hub), KUBE_OK);
    assert_int_equal(kube_hub_add_informer(hub, &io, &h, &inf), KUBE_OK);
    assert_int_equal(kube_hub_start(hub), KUBE_OK);
    assert_int_equal(kube_hub_wait_synced(hub, 10000), KUBE_OK);
    WAIT_TRUE_MS(sl_contains(&sl, "update default/new-pod 259->281;"), 10000);
    kube_hub_stop(hub); /* with the last watch still open */

    assert_string_equal(sl.log.data, want_events);
    pthread_mutex_lock(&fs.mu);
    assert_string_equal(fs.log.data, want_requests);
    pthread_mutex_unlock(&fs.mu);
    kube_informer_stats_get(inf, &st);
    assert_int_equal(st.lists, 3);
    assert_int_equal(st.relists_410, 2);
    assert_int_equal(st.watches, 5);
    assert_int_equal(st.bookmarks, 2);
    assert_int_equal(st.events, 5);
    assert_true(st.errors >= 2); /* the garbage line, the 500 */
    kube_informer_last_rv(inf, rv, sizeof(rv));
    assert_string_equal(rv, "281");
    assert_int_equal(kube_informer_count(inf), 1);
    kube_object *np = kube_informer_get(inf, "default", "new-pod");
    assert_non_null(np);
    assert_string_equal(np->meta.resource_version, "281");
    kube_object_unref(np);

    kube_hub_free(hub);
    kube_client_free(client);
    kube_config_free(cfg);
    server_stop(&fs);
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        free(steps[i].body);
    kube_buf_free(&sl.log);
    free(stream);
    free(gone);
}

/* Stop interrupts a hub waiting in a backoff and one that never started. */
/* Informers without handlers share one list and watch per (resource,
 * codec, namespace, selectors); handlers or other options get their own. */
static void hub_shares_store_only_informers(void **state)
{
    kube_informer_options io = {.resource = &KUBE_RES_NODES, .codec = &fake_codec};
    kube_informer_options sel = io;
    kube_informer_handlers h = {0};
    kube_config *cfg;
    kube_client *client;
    kube_hub *hub;
    kube_informer *a, *b, *c, *d;
    (void)state;

    client_for(1, &cfg, &client); /* never contacted: the hub is not started */
    assert_int_equal(kube_hub_new(client, &hub), KUBE_OK);
    assert_int_equal(kube_hub_add_informer(hub, &io, NULL, &a), KUBE_OK);
    assert_int_equal(kube_hub_add_informer(hub, &io, NULL, &b), KUBE_OK);
    assert_ptr_equal(a, b);
    sel.label_selector = "app=x";
    assert_int_equal(kube_hub_add_informer(hub, &sel, NULL, &c), KUBE_OK);
    assert_ptr_not_equal(a, c);
    assert_int_equal(kube_hub_add_informer(hub, &io, &h, &d), KUBE_OK);
    assert_ptr_not_equal(a, d);
    kube_hub_free(hub);
    kube_client_free(client);
    kube_config_free(cfg);
}

/* The errors the informer has counted. */
static unsigned long informer_errors(kube_informer *inf)
{
    kube_informer_stats st;
    kube_informer_stats_get(inf, &st);
    return st.errors;
}

static void hub_stops_promptly_and_frees(void **state)
{
    step steps[] = {{503, kube_strdup("{\"kind\":\"Status\",\"code\":503}"), 0, 0}};
    kube_informer_options io = {.resource = &KUBE_RES_NODES,
                                .codec = &fake_codec,
                                .backoff_initial_ms = 60000,
                                .backoff_max_ms = 60000};
    fake_server fs;
    kube_config *cfg;
    kube_client *client;
    kube_hub *hub;
    kube_informer *inf;
    (void)state;

    server_start(&fs, steps, 1);
    client_for(fs.port, &cfg, &client);
    /* never started */
    assert_int_equal(kube_hub_new(client, &hub), KUBE_OK);
    assert_int_equal(kube_hub_add_informer(hub, &io, NULL, &inf), KUBE_OK);
    assert_int_equal(kube_hub_wait_synced(hub, 10), KUBE_ETIMEDOUT);
    kube_hub_free(hub);
    /* started, failing list, then a minute of backoff: stop must not wait */
    assert_int_equal(kube_hub_new(client, &hub), KUBE_OK);
    assert_int_equal(kube_hub_add_informer(hub, &io, NULL, &inf), KUBE_OK);
    assert_int_equal(kube_hub_start(hub), KUBE_OK);
    WAIT_TRUE(informer_errors(inf) > 0); /* the list failed: now in its backoff */
    assert_false(kube_informer_has_synced(inf));
    kube_hub_stop(hub);
    kube_hub_stop(hub); /* idempotent */
    assert_int_equal(kube_hub_add_informer(hub, &io, NULL, NULL), KUBE_ECANCELED);
    assert_int_equal(kube_hub_wait_synced(hub, 10000), KUBE_ECANCELED);
    kube_hub_free(hub);
    kube_client_free(client);
    kube_config_free(cfg);
    server_stop(&fs);
    free(steps[0].body);
}

int test_group_informer(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lines_split_anywhere),
        cmocka_unit_test(lines_several_per_chunk_and_garbage),
        cmocka_unit_test(lines_oversized_and_stop),
        cmocka_unit_test(list_items_from_fixtures),
        cmocka_unit_test(list_edge_shapes),
        cmocka_unit_test(watch_events_from_fixtures),
        cmocka_unit_test(watch_events_malformed),
        cmocka_unit_test(jsonscratch_trees),
        cmocka_unit_test(store_applies_recorded_stream),
        cmocka_unit_test(store_apply_rules),
        cmocka_unit_test(store_replace_delivers_difference),
        cmocka_unit_test(store_table_matches_model),
        cmocka_unit_test(store_index_follows_changes),
        cmocka_unit_test(store_index_follows_replace),
        cmocka_unit_test(store_index_matches_walk),
        cmocka_unit_test(store_concurrent_readers),
        cmocka_unit_test(informer_follows_scripted_server),
        cmocka_unit_test(hub_stops_promptly_and_frees),
        cmocka_unit_test(hub_shares_store_only_informers),
    };
    return cmocka_run_group_tests_name("informer", tests, NULL, NULL);
}
