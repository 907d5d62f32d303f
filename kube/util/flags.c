/*
 * kube/util/flags.c - the command-line flag parser (flags.h).
 */
#include "kube/util/flags.h"

#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/duration.h"
#include "kube/util/errors.h"

/* The flag named by the len bytes at name, or NULL. */
static const kube_flag *find(const kube_flag *flags, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
            return &flags[i];
    return NULL;
}

/* strconv.ParseBool: 1 (true), 0 (false), -1 (neither). */
static int parse_bool(const char *v)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (strcmp(v, t[i]) == 0)
            return 1;
        if (strcmp(v, f[i]) == 0)
            return 0;
    }
    return -1;
}

/* Stores value into the field of f in dst. */
static int set_value(const kube_flag *f, void *dst, const char *value, char *why, size_t n)
{
    char *field = (char *)dst + f->offset;
    int64_t v;
    char *copy;
    int b;

    switch (f->kind) {
    case KUBE_FLAG_STRING:
        if (!(copy = kube_strdup(value)))
            return KUBE_ENOMEM;
        free(*(char **)field);
        *(char **)field = copy;
        return KUBE_OK;
    case KUBE_FLAG_INT:
        if (kube_parse_int64(value, f->min, f->max, &v) != KUBE_OK) {
            snprintf(why, n, "must be a whole number from %lld to %lld", (long long)f->min,
                     (long long)f->max);
            return KUBE_ECONFIG;
        }
        *(int *)field = (int)v;
        return KUBE_OK;
    case KUBE_FLAG_BOOL:
        if ((b = parse_bool(value)) < 0) {
            snprintf(why, n, "parse error");
            return KUBE_ECONFIG;
        }
        *(int *)field = b;
        return KUBE_OK;
    case KUBE_FLAG_DURATION:
        if (kube_duration_parse(value, &v) != KUBE_OK || v < 0) {
            snprintf(why, n, "time: invalid duration \"%s\"", value);
            return KUBE_ECONFIG;
        }
        *(int64_t *)field = v;
        return KUBE_OK;
    case KUBE_FLAG_CUSTOM:
        return f->set(dst, f, value, why, n);
    }
    return KUBE_ECONFIG;
}

/* One argument at argv[*i] (and its value, *i advanced past it). */
static int parse_one(const kube_flag *flags, size_t n, int argc, char *const *argv, int *i,
                     void *dst, kube_flags_unknown_fn unknown, char *err, size_t errlen)
{
    const char *a = argv[*i], *name, *eq, *value;
    const kube_flag *f;
    char why[512] = "";
    int rc;

    if (a[0] != '-' || !a[1]) {
        snprintf(err, errlen, "unexpected argument \"%s\"", a);
        return KUBE_ECONFIG;
    }
    name = a + (a[1] == '-' ? 2 : 1);
    eq = strchr(name, '=');
    f = find(flags, n, name, eq ? (size_t)(eq - name) : strlen(name));
    if (!f && unknown) {
        char given[128];
        snprintf(given, sizeof(given), "%.*s", (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
        rc = unknown(dst, given, eq ? eq + 1 : NULL);
        if (rc > 0)
            return KUBE_OK;
        if (rc < 0) {
            snprintf(err, errlen, "invalid flag %s", a);
            return rc;
        }
    }
    if (!f || (a[1] != '-' && strlen(f->name) != 1)) {
        snprintf(err, errlen, "unknown flag: %s", a);
        return KUBE_ECONFIG;
    }
    if (eq)
        value = eq + 1;
    else if (f->kind == KUBE_FLAG_BOOL || (f->type && !*f->type))
        value = "true";
    else if (*i + 1 < argc)
        value = argv[++*i];
    else {
        snprintf(err, errlen, "flag needs an argument: %s", a);
        return KUBE_ECONFIG;
    }
    rc = set_value(f, dst, value, why, sizeof(why));
    if (rc == KUBE_ECONFIG)
        snprintf(err, errlen, "invalid argument \"%s\" for \"--%s\" flag%s%s", value, f->name,
                 why[0] ? ": " : "", why);
    return rc;
}

int kube_flags_parse_ext(const kube_flag *flags, size_t n, int argc, char *const *argv, void *dst,
                         kube_flags_unknown_fn unknown, char *err, size_t errlen)
{
    int rc = KUBE_OK;

    for (int i = 1; i < argc && rc == KUBE_OK; i++)
        rc = parse_one(flags, n, argc, argv, &i, dst, unknown, err, errlen);
    return rc;
}

int kube_flags_parse(const kube_flag *flags, size_t n, int argc, char *const *argv, void *dst,
                     char *err, size_t errlen)
{
    return kube_flags_parse_ext(flags, n, argc, argv, dst, NULL, err, errlen);
}

/* The long name a shorthand letter stands for, or NULL. */
static const char *short_name(const kube_flag_short *shorts, size_t nshort, char letter)
{
    for (size_t i = 0; i < nshort; i++)
        if (shorts[i].letter == letter)
            return shorts[i].name;
    return NULL;
}

/* argv[i] with a shorthand spelled out ("-n" -> "--namespace", "-nx" and
 * "-n=x" -> "--namespace=x") into *out (allocated), or *out NULL when
 * argv[i] is no shorthand. KUBE_OK or KUBE_ENOMEM. */
static int expand_short(const kube_flag *flags, size_t n, const kube_flag_short *shorts,
                        size_t nshort, const char *a, char **out)
{
    const char *name = a[0] == '-' && a[1] && a[1] != '-' ? short_name(shorts, nshort, a[1]) : NULL;
    kube_buf b = KUBE_BUF_INIT;
    *out = NULL;
    if (!name)
        return KUBE_OK;
    const kube_flag *f = find(flags, n, name, strlen(name));
    const char *rest = a + 2;
    int rc = kube_buf_printf(&b, "--%s", name);
    if (rc == KUBE_OK && *rest)
        rc = kube_buf_printf(
            &b, "=%s",
            *rest == '=' || (f && f->kind == KUBE_FLAG_BOOL) ? rest + (*rest == '=') : rest);
    if (rc == KUBE_OK && !(*out = kube_buf_take(&b)))
        rc = KUBE_ENOMEM;
    kube_buf_free(&b);
    return rc;
}

int kube_flags_parse_args(const kube_flag *flags, size_t n, const kube_flag_short *shorts,
                          size_t nshort, int argc, char *const *argv, void *dst, char **pos,
                          int *npos, char *err, size_t errlen)
{
    char **args = calloc((size_t)argc + 1, sizeof(*args)),
         **owned = calloc((size_t)argc + 1, sizeof(*owned));
    int rc = args && owned ? KUBE_OK : KUBE_ENOMEM, dashdash = 0;
    *npos = 0;
    for (int i = 0; i < argc && rc == KUBE_OK; i++) {
        rc = i ? expand_short(flags, n, shorts, nshort, argv[i], &owned[i]) : KUBE_OK;
        args[i] = owned[i] ? owned[i] : argv[i];
    }
    for (int i = 1; i < argc && rc == KUBE_OK; i++) {
        if (dashdash || args[i][0] != '-' || !args[i][1])
            pos[(*npos)++] = argv[i];
        else if (strcmp(args[i], "--") == 0)
            dashdash = 1;
        else
            rc = parse_one(flags, n, argc, args, &i, dst, NULL, err, errlen);
    }
    for (int i = 0; owned && i < argc; i++)
        free(owned[i]);
    free(owned);
    free(args);
    return rc;
}

/* The name of the value in --help. */
static const char *type_of(const kube_flag *f)
{
    static const char *const names[] = {"string", "int", "", "duration", "string"};
    return f->type ? f->type : names[f->kind];
}

void kube_flags_usage_short(FILE *f, const kube_flag *flags, size_t n,
                            const kube_flag_short *shorts, size_t nshort)
{
    for (size_t i = 0; i < n; i++) {
        char left[96], letter = strlen(flags[i].name) == 1 ? flags[i].name[0] : 0;
        const char *type = type_of(&flags[i]);
        for (size_t k = 0; k < nshort && !letter; k++)
            if (strcmp(shorts[k].name, flags[i].name) == 0)
                letter = shorts[k].letter;
        if (letter)
            snprintf(left, sizeof(left), "  -%c, --%s %s", letter, flags[i].name, type);
        else
            snprintf(left, sizeof(left), "      --%s %s", flags[i].name, type);
        fprintf(f, "%-50s %s\n", left, flags[i].help);
    }
}

void kube_flags_usage(FILE *f, const kube_flag *flags, size_t n)
{
    kube_flags_usage_short(f, flags, n, NULL, 0);
}
