/*
 * tests/emulator/discovery.c - what kubectl reads before anything else:
 * /version, /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>
 * (legacy, unaggregated discovery as a v1.23 server answers it; kubectl
 * v1.32 falls back to it), and a minimal /openapi/v2 document (protobuf or
 * JSON) with no definitions, so client-side validation finds no schema and
 * skips. /openapi/v3 is not served by v1.23 (404).
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

static const char version_json[] =
    "{\n  \"major\": \"1\",\n  \"minor\": \"23\",\n  \"gitVersion\": \"v1.23.17\",\n"
    "  \"gitCommit\": \"953be8927218ec8067e1af2641e540238ffd7576\",\n"
    "  \"gitTreeState\": \"clean\",\n  \"buildDate\": \"2023-02-22T13:27:46Z\",\n"
    "  \"goVersion\": \"go1.19.6\",\n  \"compiler\": \"gc\",\n  \"platform\": \"linux/amd64\"\n}";

/* gnostic openapi_v2.Document{swagger:"2.0", info:{title, version}, paths:{}} */
static const unsigned char openapi_pb[] = {
    0x0a, 0x03, '2', '.',  '0',  0x12, 0x16, 0x0a, 0x0a, 'K', 'u', 'b', 'e', 'r',  'n', 'e',
    't',  'e',  's', 0x12, 0x08, 'v',  '1',  '.',  '2',  '3', '.', '1', '7', 0x42, 0x00};

static const char openapi_json[] =
    "{\"swagger\":\"2.0\",\"info\":{\"title\":\"Kubernetes\",\"version\":\"v1.23.17\"},"
    "\"paths\":{},\"definitions\":{}}";

static void storage_hash(const emu_resource_def *d, char out[16])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    char in[256], *b64;

    snprintf(in, sizeof(in), "%s/%s/%s", d->group, d->version, d->kind);
    EVP_Digest(in, strlen(in), md, &n, EVP_sha256(), NULL);
    b64 = emu_b64url_encode(md, 8);
    kube_strlcpy(out, b64 ? b64 : "", 16);
    free(b64);
}

static void add_strings(cJSON *obj, const char *key, const char *csv)
{
    cJSON *arr;
    char buf[256], *save = NULL, *tok;

    if (!csv)
        return;
    arr = cJSON_AddArrayToObject(obj, key);
    kube_strlcpy(buf, csv, sizeof(buf));
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        cJSON_AddItemToArray(arr, cJSON_CreateString(tok));
}

static cJSON *resource_entry(const emu_resource_def *d, const char *name, const char *kind,
                             const char *verbs_csv, int main)
{
    cJSON *e = cJSON_CreateObject();
    char hash[16];

    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddStringToObject(e, "singularName", d->custom && main ? d->singular : "");
    cJSON_AddBoolToObject(e, "namespaced", d->namespaced);
    cJSON_AddStringToObject(e, "kind", kind);
    add_strings(e, "verbs", verbs_csv);
    if (main) {
        add_strings(e, "shortNames", d->short_names);
        add_strings(e, "categories", d->categories);
        if (!d->virtual_create) {
            storage_hash(d, hash);
            cJSON_AddStringToObject(e, "storageVersionHash", hash);
        }
    }
    return e;
}

/* pods/eviction names its group and version (policy/v1), which kubectl
 * drain looks for before it evicts instead of deleting. */
static cJSON *eviction_entry(const emu_resource_def *d)
{
    cJSON *e = cJSON_CreateObject();

    cJSON_AddStringToObject(e, "name", "pods/eviction");
    cJSON_AddStringToObject(e, "singularName", "");
    cJSON_AddBoolToObject(e, "namespaced", d->namespaced);
    cJSON_AddStringToObject(e, "group", "policy");
    cJSON_AddStringToObject(e, "version", "v1");
    cJSON_AddStringToObject(e, "kind", "Eviction");
    add_strings(e, "verbs", "create");
    return e;
}

static void add_resources(emu_server *s, const char *group, const char *version, cJSON *list)
{
    for (size_t i = 0; i < emu_store_n_resources(s->store); i++) {
        const emu_resource_def *d = emu_store_resource_at(s->store, i)->def;
        char sub[128];
        const char *verbs;
        if (strcmp(d->group, group) || strcmp(d->version, version))
            continue;
        if (d->virtual_create)
            verbs = "create";
        else if (!strcmp(d->plural, "namespaces") && !*d->group)
            verbs = "create,delete,get,list,patch,update,watch";
        else
            verbs = "create,delete,deletecollection,get,list,patch,update,watch";
        cJSON_AddItemToArray(list, resource_entry(d, d->plural, d->kind, verbs, 1));
        if (!strcmp(d->plural, "pods") && !*d->group) {
            snprintf(sub, sizeof(sub), "%s/binding", d->plural);
            cJSON_AddItemToArray(list, resource_entry(d, sub, "Binding", "create", 0));
            cJSON_AddItemToArray(list, eviction_entry(d));
        }
        if (d->has_status) {
            snprintf(sub, sizeof(sub), "%s/status", d->plural);
            cJSON_AddItemToArray(list, resource_entry(d, sub, d->kind, "get,patch,update", 0));
        }
    }
}

static cJSON *group_entry(const char *group, const char *version, int with_kind)
{
    cJSON *g = cJSON_CreateObject(), *versions, *v, *pref;
    char gv[160];

    snprintf(gv, sizeof(gv), "%s/%s", group, version);
    if (with_kind) {
        cJSON_AddStringToObject(g, "kind", "APIGroup");
        cJSON_AddStringToObject(g, "apiVersion", "v1");
    }
    cJSON_AddStringToObject(g, "name", group);
    versions = cJSON_AddArrayToObject(g, "versions");
    v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "groupVersion", gv);
    cJSON_AddStringToObject(v, "version", version);
    cJSON_AddItemToArray(versions, v);
    pref = cJSON_AddObjectToObject(g, "preferredVersion");
    cJSON_AddStringToObject(pref, "groupVersion", gv);
    cJSON_AddStringToObject(pref, "version", version);
    return g;
}

/* The served group (with version) named group, or NULL. */
static const emu_resource_def *find_group(emu_server *s, const char *group, const char *version)
{
    for (size_t i = 0; i < emu_store_n_resources(s->store); i++) {
        const emu_resource_def *d = emu_store_resource_at(s->store, i)->def;
        if (*d->group && !strcmp(d->group, group) && (!version || !strcmp(d->version, version)))
            return d;
    }
    return NULL;
}

static int answer(emu_response *resp, cJSON *doc)
{
    int rc = emu_response_json(resp, 200, doc);

    cJSON_Delete(doc);
    return rc;
}

static int api_groups(emu_server *s, emu_response *resp)
{
    cJSON *doc = cJSON_CreateObject(), *groups;

    cJSON_AddStringToObject(doc, "kind", "APIGroupList");
    cJSON_AddStringToObject(doc, "apiVersion", "v1");
    groups = cJSON_AddArrayToObject(doc, "groups");
    for (size_t i = 0; i < emu_store_n_resources(s->store); i++) {
        const emu_resource_def *d = emu_store_resource_at(s->store, i)->def;
        const cJSON *g;
        int seen = 0;
        if (!*d->group)
            continue;
        cJSON_ArrayForEach(g, groups) seen |= !strcmp(emu_json_str(g, "name"), d->group);
        if (!seen)
            cJSON_AddItemToArray(groups, group_entry(d->group, d->version, 0));
    }
    emu_discovery_run_hooks(s, groups);
    return answer(resp, doc);
}

static int resource_list(emu_server *s, const char *group, const char *version, emu_response *resp)
{
    cJSON *doc = cJSON_CreateObject();
    char gv[160];

    snprintf(gv, sizeof(gv), "%s%s%s", group, *group ? "/" : "", version);
    cJSON_AddStringToObject(doc, "kind", "APIResourceList");
    if (*group)
        cJSON_AddStringToObject(doc, "apiVersion", "v1");
    cJSON_AddStringToObject(doc, "groupVersion", gv);
    add_resources(s, group, version, cJSON_AddArrayToObject(doc, "resources"));
    return answer(resp, doc);
}

static int core_versions(emu_server *s, emu_response *resp)
{
    cJSON *doc = cJSON_CreateObject(), *cidrs, *c;
    char addr[64];

    snprintf(addr, sizeof(addr), "127.0.0.1:%d", s->port);
    cJSON_AddStringToObject(doc, "kind", "APIVersions");
    cJSON_AddItemToObject(doc, "versions", cJSON_CreateStringArray((const char *[]){"v1"}, 1));
    cidrs = cJSON_AddArrayToObject(doc, "serverAddressByClientCIDRs");
    c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "clientCIDR", "0.0.0.0/0");
    cJSON_AddStringToObject(c, "serverAddress", addr);
    cJSON_AddItemToArray(cidrs, c);
    return answer(resp, doc);
}

static int openapi_v2(const emu_request *req, emu_response *resp)
{
    const char *accept = emu_header_get(req, "Accept");

    if (accept && strstr(accept, "protobuf"))
        return emu_response_raw(resp, 200, "application/octet-stream", (const char *)openapi_pb,
                                sizeof(openapi_pb));
    return emu_response_raw(resp, 200, "application/json", openapi_json, strlen(openapi_json));
}

/* Splits "/apis/g/v" style paths into up to 3 segments. */
static size_t segments(const char *path, char seg[3][128])
{
    size_t n = 0;
    const char *p = path;

    while (*p && n < 4) {
        const char *slash;
        size_t len;
        while (*p == '/')
            p++;
        if (!*p)
            break;
        slash = strchr(p, '/');
        len = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 3 || len >= 128)
            return 4;
        memcpy(seg[n], p, len);
        seg[n][len] = '\0';
        n++;
        p += len;
    }
    return n;
}

int emu_discovery_handle(emu_server *s, emu_request *req, emu_response *resp)
{
    char seg[3][128];
    size_t n;

    if (strcmp(req->method, "GET") && strcmp(req->method, "HEAD"))
        return 0;
    if (!strcmp(req->path, "/version") || !strcmp(req->path, "/version/"))
        return emu_response_raw(resp, 200, "application/json", version_json, strlen(version_json)),
               1;
    if (!strcmp(req->path, "/openapi/v2"))
        return openapi_v2(req, resp), 1;
    n = segments(req->path, seg);
    if (n == 1 && !strcmp(seg[0], "api"))
        return core_versions(s, resp), 1;
    if (n == 2 && !strcmp(seg[0], "api") && !strcmp(seg[1], "v1"))
        return resource_list(s, "", "v1", resp), 1;
    if (n == 1 && !strcmp(seg[0], "apis"))
        return api_groups(s, resp), 1;
    if (n == 2 && !strcmp(seg[0], "apis") && find_group(s, seg[1], NULL)) {
        const emu_resource_def *d = find_group(s, seg[1], NULL);
        return answer(resp, group_entry(d->group, d->version, 1)), 1;
    }
    if (n == 3 && !strcmp(seg[0], "apis") && find_group(s, seg[1], seg[2]))
        return resource_list(s, seg[1], seg[2], resp), 1;
    return 0;
}
