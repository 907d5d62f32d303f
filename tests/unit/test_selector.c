/*
 * tests/unit/test_selector.c - kube/codec/selector.h: labels.Parse() grammar and
 * matching (cases from apimachinery's selector_test.go), LabelSelector and
 * NodeSelector decoding, validation and matching tables (nodeaffinity).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/codec/selector.h"

#define MAX_LABELS 8

typedef struct label_set {
    kube_kv kv[MAX_LABELS];
    size_t n;
} label_set;

/* "k=v,k2=v2" (no spaces) into a label set; "" is empty. */
static label_set labels_of(const char *spec)
{
    static char buf[4][256];
    static int slot;
    label_set ls = {.n = 0};
    char *s = buf[slot++ % 4], *save = NULL, *tok;

    kube_strlcpy(s, spec, sizeof(buf[0]));
    for (tok = strtok_r(s, ",", &save); tok && ls.n < MAX_LABELS;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (eq)
            *eq = '\0';
        ls.kv[ls.n].key = tok;
        ls.kv[ls.n++].value = eq ? eq + 1 : "";
    }
    return ls;
}

static int string_matches(const char *sel, const char *labels)
{
    kube_label_selector *s = NULL;
    label_set ls = labels_of(labels);
    int m;

    if (kube_label_selector_parse(sel, &s) != KUBE_OK)
        fail_msg("'%s' did not parse", sel);
    m = kube_label_selector_matches(s, ls.kv, ls.n);
    kube_label_selector_free(s);
    return m;
}

static void parses_good_and_rejects_bad_strings(void **state)
{
    static const char *good[] = {
        "x=a,y=b,z=c",
        "",
        "x!=a,y=b",
        "x=",
        "x= ",
        "x=,z= ",
        "x= ,z= ",
        "!x",
        "x>1",
        "x>1,z<5",
        "x in (a,b)",
        "x notin (a)",
        "x in ()",
        "x in (a,)",
        "x in (,a)",
        "in=notin",
        "example.com/k==v",
        " x , y ",
        "x in(a) ,y",
    };
    static const char *bad[] = {
        "x=a||y=b",   "x==a==b",
        "!x=a",       "x<a",
        "x in a",     "x in (a",
        "x in (a b)", "x,",
        ",x",         "x=(a)",
        "x y",        "=a",
        "!",          "x in (a),",
        "-x=a",       "x=-a",
        "x>1.5",      "a/b/c=d",
        "x=a,,y=b",   "x notin",
        "x>",         "x>9223372036854775808",
    };
    kube_label_selector *s;
    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        s = NULL;
        if (kube_label_selector_parse(good[i], &s) != KUBE_OK || !s || !s->valid)
            fail_msg("'%s' should parse", good[i]);
        kube_label_selector_free(s);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        s = (kube_label_selector *)1;
        if (kube_label_selector_parse(bad[i], &s) != KUBE_EPARSE || s != NULL)
            fail_msg("'%s' should not parse", bad[i]);
    }
    assert_int_equal(kube_label_selector_parse(NULL, &s), KUBE_EINVAL);
}

static void parsed_selectors_match_like_labels_parse(void **state)
{
    static const struct {
        const char *sel, *labels;
        int match;
    } cases[] = {
        {"", "x=y", 1},
        {"x=y", "x=y", 1},
        {"x=y,z=w", "x=y,z=w", 1},
        {"x!=y,z!=w", "x=z,z=a", 1},
        {"notin=in", "notin=in", 1},
        {"x", "x=z", 1},
        {"!x", "y=z", 1},
        {"x>1", "x=2", 1},
        {"x<1", "x=0", 1},
        {"x=z", "", 0},
        {"x=y", "x=z", 0},
        {"x=y,z=w", "x=w,z=w", 0},
        {"x!=y,z!=w", "x=z,z=w", 0},
        {"x", "y=z", 0},
        {"!x", "x=z", 0},
        {"x>1", "x=0", 0},
        {"x<1", "x=2", 0},
        {"x>1", "x=abc", 0},
        {"x>1", "", 0},
        {"foo=bar", "foo=bar,baz=blah", 1},
        {"foo=bar,baz=blah", "foo=bar,baz=blah", 1},
        {"foo=blah", "foo=bar,baz=blah", 0},
        {"foo=bar,foobar=bar,baz=blah", "foo=bar,baz=blah", 0},
        {"x in (a,b)", "x=b", 1},
        {"x in (a,b)", "x=c", 0},
        {"x in (a,b)", "", 0},
        {"x notin (a,b)", "", 1},
        {"x notin (a,b)", "x=a", 0},
        {"x notin (a,b)", "x=c", 1},
        {"x in ()", "x=", 1},
        {"x in ()", "x=a", 0},
        {"x in (a,)", "x=", 1},
        {"x=", "x=", 1},
        {"x=", "x=a", 0},
        {"x==a", "x=a", 1},
        {"x!=", "", 1},
        {"in in (in)", "in=in", 1},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (string_matches(cases[i].sel, cases[i].labels) != cases[i].match)
            fail_msg("'%s' against {%s}: expected %d", cases[i].sel, cases[i].labels,
                     cases[i].match);
}

static void validates_names_and_values(void **state)
{
    char long_name[80], long_prefix[300];
    (void)state;
    assert_true(kube_is_qualified_name("app"));
    assert_true(kube_is_qualified_name("kubevirt.io/created-by"));
    assert_true(kube_is_qualified_name("a.b-c_d"));
    assert_false(kube_is_qualified_name(""));
    assert_false(kube_is_qualified_name("-a"));
    assert_false(kube_is_qualified_name("a-"));
    assert_false(kube_is_qualified_name("/a"));
    assert_false(kube_is_qualified_name("Example.com/a"));
    assert_false(kube_is_qualified_name("a/b/c"));
    assert_false(kube_is_qualified_name("example.com/"));
    assert_false(kube_is_qualified_name("ex..ample.com/a"));
    memset(long_name, 'a', 64);
    long_name[64] = '\0';
    assert_false(kube_is_qualified_name(long_name));
    long_name[63] = '\0';
    assert_true(kube_is_qualified_name(long_name));
    memset(long_prefix, 'a', 254);
    long_prefix[254] = '/';
    long_prefix[255] = 'b';
    long_prefix[256] = '\0';
    assert_false(kube_is_qualified_name(long_prefix));
    assert_true(kube_is_label_value(""));
    assert_true(kube_is_label_value("v1.2_3-x"));
    assert_false(kube_is_label_value("a b"));
    assert_false(kube_is_label_value("_a"));
    assert_false(kube_is_label_value("a/b"));
    assert_false(kube_is_label_value("x-"));
    assert_true(kube_is_label_value(long_name));
    long_name[63] = 'a';
    assert_false(kube_is_label_value(long_name));
}

/* Decodes a JSON LabelSelector into a growable arena. */
static const kube_label_selector *decode_label_selector(const char *json, kube_arena *a,
                                                        cJSON **tree)
{
    const kube_label_selector *s = NULL;

    *tree = cJSON_Parse(json);
    assert_non_null(*tree);
    kube_arena_init(a, NULL, 0);
    assert_int_equal(kube_label_selector_decode(*tree, a, &s), KUBE_OK);
    return s;
}

static void label_selectors_decode_and_match(void **state)
{
    static const struct {
        const char *json, *labels;
        int match, valid;
    } cases[] = {
        {"{}", "a=b", 1, 1},
        {"{\"matchLabels\":{\"app\":\"web\"}}", "app=web,x=y", 1, 1},
        {"{\"matchLabels\":{\"app\":\"web\"}}", "app=db", 0, 1},
        {"{\"matchLabels\":{\"app\":\"web\",\"tier\":\"fe\"}}", "app=web", 0, 1},
        {"{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]}",
         "app=b", 1, 1},
        {"{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"NotIn\",\"values\":[\"a\"]}]}", "",
         1, 1},
        {"{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Exists\"}]}", "app=", 1, 1},
        {"{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"DoesNotExist\"}]}", "app=x", 0, 1},
        {"{\"matchLabels\":{\"a\":\"1\"},\"matchExpressions\":[{\"key\":\"b\",\"operator\":"
         "\"Exists\"}]}",
         "a=1", 0, 1},
        /* what LabelSelectorAsSelector rejects matches nothing */
        {"{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\",\"values\":[]}]}", "app=", 0,
         0},
        {"{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}",
         "app=x", 0, 0},
        {"{\"matchExpressions\":[{\"key\":\"n\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}", "n=5",
         0, 0},
        {"{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"in\",\"values\":[\"a\"]}]}",
         "app=a", 0, 0},
        {"{\"matchLabels\":{\"bad key\":\"v\"}}", "", 0, 0},
        {"{\"matchLabels\":{\"k\":\"bad value\"}}", "k=bad value", 0, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kube_arena a;
        cJSON *tree;
        const kube_label_selector *s = decode_label_selector(cases[i].json, &a, &tree);
        label_set ls = labels_of(cases[i].labels);
        assert_non_null(s);
        if (s->valid != cases[i].valid)
            fail_msg("%s: valid %d", cases[i].json, s->valid);
        if (kube_label_selector_matches(s, ls.kv, ls.n) != cases[i].match)
            fail_msg("%s against {%s}: expected %d", cases[i].json, cases[i].labels,
                     cases[i].match);
        kube_arena_release(&a);
        cJSON_Delete(tree);
    }
    /* nil selects nothing */
    assert_int_equal(kube_label_selector_matches(NULL, NULL, 0), 0);
}

static void label_selector_decode_rejects_wrong_types(void **state)
{
    static const char *bad[] = {
        "[]",
        "\"x\"",
        "{\"matchLabels\":[]}",
        "{\"matchLabels\":{\"a\":1}}",
        "{\"matchExpressions\":{}}",
        "{\"matchExpressions\":[1]}",
        "{\"matchExpressions\":[{\"key\":1,\"operator\":\"In\"}]}",
        "{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":\"a\"}]}",
        "{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[1]}]}",
    };
    const kube_label_selector *s;
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        kube_arena a;
        cJSON *tree = cJSON_Parse(bad[i]);
        assert_non_null(tree);
        kube_arena_init(&a, NULL, 0);
        if (kube_label_selector_decode(tree, &a, &s) != KUBE_EPARSE)
            fail_msg("%s should not decode", bad[i]);
        kube_arena_release(&a);
        cJSON_Delete(tree);
    }
}

/* One node-selector case: the JSON NodeSelector, then node name/labels. */
typedef struct ns_case {
    const char *json;
    const char *node;
    const char *labels;
    int match;
} ns_case;

static void node_selectors_match_like_nodeaffinity(void **state)
{
    static const ns_case cases[] = {
        {"{\"nodeSelectorTerms\":[]}", "n1", "a=b", 0},
        {"{\"nodeSelectorTerms\":[{}]}", "n1", "a=b", 0},
        {"{\"nodeSelectorTerms\":[{\"matchExpressions\":[]}]}", "n1", "a=b", 0},
        {"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\","
         "\"values\":[\"b\"]}]}]}",
         "n1", "a=b", 1},
        /* terms are ORed; the empty one is skipped */
        {"{\"nodeSelectorTerms\":[{},{\"matchExpressions\":[{\"key\":\"a\",\"operator\":"
         "\"Exists\"}]}]}",
         "n1", "a=b", 1},
        {"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"gpu\",\"operator\":\"Gt\","
         "\"values\":[\"3\"]}]}]}",
         "n1", "gpu=4", 1},
        {"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"gpu\",\"operator\":\"Gt\","
         "\"values\":[\"3\"]}]}]}",
         "n1", "gpu=3", 0},
        {"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"gpu\",\"operator\":\"Lt\","
         "\"values\":[\"3\"]}]}]}",
         "n1", "gpu=-7", 1},
        {"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"gpu\",\"operator\":\"Lt\","
         "\"values\":[\"3\"]}]}]}",
         "n1", "gpu=x", 0},
        /* matchFields on metadata.name */
        {"{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
         "\"In\",\"values\":[\"n1\"]}]}]}",
         "n1", "", 1},
        {"{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
         "\"In\",\"values\":[\"n1\"]}]}]}",
         "n2", "", 0},
        {"{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
         "\"NotIn\",\"values\":[\"n1\"]}]}]}",
         "n2", "", 1},
        /* both parts of a term must hold */
        {"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\","
         "\"values\":[\"b\"]}],\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
         "\"values\":[\"n1\"]}]}]}",
         "n2", "a=b", 0},
        /* matchFields with two values is invalid: the term matches nothing */
        {"{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
         "\"In\",\"values\":[\"n1\",\"n2\"]}]}]}",
         "n1", "", 0},
        /* an invalid term does not stop a valid one from matching */
        {"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Bogus\"}]},"
         "{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"DoesNotExist\"}]}]}",
         "n1", "", 1},
        {"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Gt\","
         "\"values\":[\"1\",\"2\"]}]}]}",
         "n1", "a=5", 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const kube_node_selector *ns = NULL;
        label_set ls = labels_of(cases[i].labels);
        cJSON *tree = cJSON_Parse(cases[i].json);
        kube_arena a;
        assert_non_null(tree);
        kube_arena_init(&a, NULL, 0);
        assert_int_equal(kube_node_selector_decode(tree, &a, &ns), KUBE_OK);
        assert_non_null(ns);
        if (kube_node_selector_matches(ns, cases[i].node, ls.kv, ls.n) != cases[i].match)
            fail_msg("case %zu (%s): expected %d", i, cases[i].json, cases[i].match);
        kube_arena_release(&a);
        cJSON_Delete(tree);
    }
    assert_int_equal(kube_node_selector_matches(NULL, "n1", NULL, 0), 0);
}

static void node_selector_decode_rejects_wrong_types(void **state)
{
    static const char *bad[] = {
        "[]",
        "{\"nodeSelectorTerms\":{}}",
        "{\"nodeSelectorTerms\":[1]}",
        "{\"nodeSelectorTerms\":[{\"matchFields\":{}}]}",
        "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"operator\":3}]}]}",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const kube_node_selector *ns;
        cJSON *tree = cJSON_Parse(bad[i]);
        kube_arena a;
        assert_non_null(tree);
        kube_arena_init(&a, NULL, 0);
        if (kube_node_selector_decode(tree, &a, &ns) != KUBE_EPARSE)
            fail_msg("%s should not decode", bad[i]);
        kube_arena_release(&a);
        cJSON_Delete(tree);
    }
}

/* fields.ParseSelector: operators, escapes, empty terms, and what is
 * refused. */
static void field_selectors_as_apimachinery(void **state)
{
    (void)state;
    kube_field_selector f;
    assert_int_equal(
        kube_field_selector_parse("node=n1,status.nodeStatus!=Ready\\,X,,a==b\\=c\\\\", &f),
        KUBE_OK);
    assert_int_equal(f.n_terms, 3);
    assert_string_equal(f.terms[0].key, "node");
    assert_string_equal(f.terms[0].value, "n1");
    assert_false(f.terms[0].negated);
    assert_string_equal(f.terms[1].key, "status.nodeStatus");
    assert_string_equal(f.terms[1].value, "Ready,X");
    assert_true(f.terms[1].negated);
    assert_string_equal(f.terms[2].key, "a");
    assert_string_equal(f.terms[2].value, "b=c\\");
    kube_field_selector_free(&f);
    assert_int_equal(kube_field_selector_parse("", &f), KUBE_OK);
    assert_int_equal(f.n_terms, 0);
    kube_field_selector_free(&f);
    static const char *const bad[] = {"node", "a=b=c", "a=\\x", "a=b,c"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(kube_field_selector_parse(bad[i], &f), KUBE_EPARSE);
        kube_field_selector_free(&f);
    }
}

int test_group_selector(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(field_selectors_as_apimachinery),
        cmocka_unit_test(parses_good_and_rejects_bad_strings),
        cmocka_unit_test(parsed_selectors_match_like_labels_parse),
        cmocka_unit_test(validates_names_and_values),
        cmocka_unit_test(label_selectors_decode_and_match),
        cmocka_unit_test(label_selector_decode_rejects_wrong_types),
        cmocka_unit_test(node_selectors_match_like_nodeaffinity),
        cmocka_unit_test(node_selector_decode_rejects_wrong_types),
    };
    return cmocka_run_group_tests_name("selector", tests, NULL, NULL);
}
