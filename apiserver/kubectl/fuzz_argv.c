/*
 * apiserver/kubectl/fuzz_argv.c - libFuzzer target over kubectl-stickyvm's
 * command line: whatever argv holds, the paths the plugin would send say
 * exactly what the command line asked for, and nothing else (a
 * `pin vm-web -n 'demo/virtualmachines/vm-db/pin?node=node-2#' --dry-run`
 * once moved vm-db's pin).
 *
 * Input: the argv words after "kubectl-stickyvm", separated by NUL bytes
 * (so a word may hold '/', '?', '#', '%', spaces and control bytes), at
 * most 31 words.
 *
 * For every command line kctl_parse() accepts, the request paths the
 * command builds (kctl_pin_path() for pin, unpin and evacuate's re-pin,
 * kctl_object_path() for the VM, pod, node and list paths) are taken apart
 * again and checked, with or without kctl_check_names() passing (the
 * escaping must hold on its own): the fixed segments are the intended
 * ones, each name segment percent-decodes back to the name given, there is
 * no extra segment, no '#', one '?' at most and only the parameters asked
 * for (node, dryRun=All exactly when --dry-run, force=true exactly when
 * --force), in that order. When kctl_check_names() passes, the names are
 * DNS-1123 names and stickyvm-apiserver's own parser (apiserver/request.h)
 * reads the pin path back to the same namespace, VM, node, dryRun and
 * force.
 *
 * Built by scripts/test-fuzz.sh (and CMake with -DSTICKYVM_FUZZ=ON).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "kube/codec/validation.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "request.h"

#define MAX_WORDS 31

/* Aborts with what broke (libFuzzer keeps the input). */
static void broken(const char *what, const char *path)
{
    fprintf(stderr, "fuzz_argv: %s: %s\n", what, path);
    abort();
}

/* Percent-decodes the segment [s, s+n) into out (size > n); -1 on a byte
 * that should have been escaped or a malformed escape. */
static int decode(const char *s, size_t n, char *out)
{
    size_t j = 0;

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            int hi = i + 2 < n ? kube_hex_digit(s[i + 1]) : -1;
            int lo = i + 2 < n ? kube_hex_digit(s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return -1;
            out[j++] = (char)(hi * 16 + lo);
            i += 2;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '-' || c == '.' || c == '_' || c == '~') {
            out[j++] = (char)c;
        } else {
            return -1;
        }
    }
    out[j] = '\0';
    return 0;
}

/* Expects the literal lit at *p, and moves past it. */
static void expect_lit(const char **p, const char *lit, const char *path)
{
    size_t n = strlen(lit);
    if (strncmp(*p, lit, n) != 0)
        broken(lit, path);
    *p += n;
}

/* Expects one name segment at *p that decodes to name (and is no "." or
 * ".." as written), ending at a '/', '?' or the end; moves past it. */
static void expect_name(const char **p, const char *name, const char *path)
{
    size_t n = strcspn(*p, "/?");
    char *dec = malloc(n + 1);

    if (!dec)
        abort();
    if (decode(*p, n, dec) != 0 || strcmp(dec, name) != 0)
        broken("a name segment that does not decode to the name", path);
    if ((n == 1 && (*p)[0] == '.') || (n == 2 && (*p)[0] == '.' && (*p)[1] == '.'))
        broken("a dot segment", path);
    free(dec);
    *p += n;
}

/* Expects the query parameter key=value (value decoded) at *p after sep. */
static void expect_param(const char **p, char sep, const char *key, const char *value,
                         const char *path)
{
    size_t n;
    char *dec;

    if (**p != sep)
        broken("a missing query parameter", path);
    (*p)++;
    expect_lit(p, key, path);
    expect_lit(p, "=", path);
    n = strcspn(*p, "&");
    dec = malloc(n + 1);
    if (!dec)
        abort();
    if (decode(*p, n, dec) != 0 || strcmp(dec, value) != 0)
        broken("a query value that does not decode to the value", path);
    free(dec);
    *p += n;
}

/* The pin path of VM ns/vm: segments, then exactly the parameters asked. */
static void check_pin_path(const char *ns, const char *vm, int unpin, const char *node,
                           const char *from, int dry, int force, int names_ok)
{
    kube_buf b = KUBE_BUF_INIT;
    const char *p;
    char sep = '?';

    if (kctl_pin_path(&b, ns, vm, unpin, node, from, dry, force) != KUBE_OK)
        abort();
    p = b.data;
    if (strchr(p, '#'))
        broken("a fragment", b.data);
    expect_lit(&p, "/apis/subresources.stickyvm.io/v1/namespaces/", b.data);
    expect_name(&p, ns, b.data);
    expect_lit(&p, "/virtualmachines/", b.data);
    expect_name(&p, vm, b.data);
    expect_lit(&p, unpin ? "/unpin" : "/pin", b.data);
    if (node && *node) {
        expect_param(&p, sep, "node", node, b.data);
        sep = '&';
    }
    if (from) {
        expect_param(&p, sep, "from", from, b.data);
        sep = '&';
    }
    if (dry) {
        expect_param(&p, sep, "dryRun", "All", b.data);
        sep = '&';
    }
    if (force)
        expect_param(&p, sep, "force", "true", b.data);
    if (*p)
        broken("something after the intended path", b.data);
    if (names_ok) { /* the server reads back what was meant */
        apis_route r;
        char msg[512];
        if (apis_route_parse(b.data, &r, msg, sizeof(msg)) != KUBE_OK)
            broken(msg, b.data);
        if (r.kind != (unpin ? APIS_ROUTE_UNPIN : APIS_ROUTE_PIN) || strcmp(r.namespace_, ns) ||
            strcmp(r.name, vm) || r.dry_run != !!dry || r.force != !!force ||
            r.has_node != (node && *node) || (r.has_node && strcmp(r.node, node) != 0) ||
            r.has_from != (from != NULL) || (r.has_from && strcmp(r.from, from) != 0))
            broken("the server reads another request", b.data);
        apis_route_free(&r);
    }
    kube_buf_free(&b);
}

/* An object path: api, then namespaces/NS unless NULL, plural, name. */
static void check_object_path(const char *api, const char *ns, const char *plural, const char *name)
{
    kube_buf b = KUBE_BUF_INIT;
    const char *p;

    if (kctl_object_path(&b, api, ns, plural, name) != KUBE_OK)
        abort();
    p = b.data;
    if (strchr(p, '#') || strchr(p, '?'))
        broken("a fragment or a query in an object path", b.data);
    expect_lit(&p, api, b.data);
    if (ns) {
        expect_lit(&p, "/namespaces/", b.data);
        expect_name(&p, ns, b.data);
    }
    expect_lit(&p, "/", b.data);
    expect_lit(&p, plural, b.data);
    if (name) {
        expect_lit(&p, "/", b.data);
        expect_name(&p, name, b.data);
    }
    if (*p)
        broken("an extra segment", b.data);
    kube_buf_free(&b);
}

/* Every path the parsed command would build. */
static void check_command(const kctl_options *o)
{
    const char *ns = o->namespace_ ? o->namespace_ : "default";
    char err[1024];
    int ok = kctl_check_names(o, ns, err, sizeof(err)) == KUBE_OK;

    /* with -A, list and evacuate use the namespaces the server names, not -n */
    int ns_used = !(o->all_namespaces && (o->cmd == KCTL_LIST || o->cmd == KCTL_EVACUATE));
    if (ok && ns_used && !kube_is_dns1123_label(ns))
        broken("a namespace passed the check", ns);
    switch (o->cmd) {
    case KCTL_PIN:
    case KCTL_UNPIN:
        if (ok && (!kube_is_dns1123_subdomain_n(o->target, strlen(o->target)) ||
                   (o->node && *o->node && !kube_is_dns1123_subdomain_n(o->node, strlen(o->node)))))
            broken("a name passed the check", o->target);
        check_pin_path(ns, o->target, o->cmd == KCTL_UNPIN, o->node, o->from, o->dry_run, o->force,
                       ok);
        break;
    case KCTL_WHY:
        check_object_path("/apis/kubevirt.io/v1", ns, "virtualmachines", o->target);
        check_object_path("/api/v1", ns, "pods", o->target);
        break;
    case KCTL_EVACUATE:
        check_object_path("/api/v1", NULL, "nodes", o->target);
        check_pin_path(ns_used ? ns : "default", "vm-1", o->to == NULL, o->to, o->target,
                       o->dry_run, o->force, ok);
        break;
    case KCTL_LIST:
        check_object_path("/apis/" KCTL_GROUP_VERSION, o->all_namespaces ? NULL : ns,
                          "virtualmachinepins", NULL);
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1), *argv[MAX_WORDS + 2], err[1024];
    int argc = 0;
    kctl_options o;

    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    argv[argc++] = "kubectl-stickyvm";
    for (char *w = copy; w <= copy + size && argc <= MAX_WORDS; w += strlen(w) + 1)
        argv[argc++] = w;
    argv[argc] = NULL;
    if (kctl_parse(argc, argv, &o, err, sizeof(err)) == KUBE_OK && !o.help && o.cmd != KCTL_NONE &&
        (o.target || o.cmd == KCTL_LIST))
        check_command(&o);
    kctl_options_free(&o);
    free(copy);
    return 0;
}
