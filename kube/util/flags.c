/*
 * kube/util/flags.c - the command-line flag parser (flags.h).
 */
#include "kube/util/flags.h"
#include "kube/util/flags_testing.h"

#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/duration.h"
#include "kube/util/errors.h"

/* 1 when the len bytes at given name flag, '_' read as '-' (pflag's
 * WordSepNormalizeFunc, which kube's binaries install). */
static int same_name(const char *flag, const char *given, size_t len)
{
    if (strlen(flag) != len)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (flag[i] != (given[i] == '_' ? '-' : given[i]))
            return 0;
    return 1;
}

/* The flag named by the len bytes at name, or NULL. */
static const kube_flag *find(const kube_flag *flags, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (same_name(flags[i].name, name, len))
            return &flags[i];
    return NULL;
}

int kube_parse_bool(const char *v)
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
        if ((b = kube_parse_bool(value)) < 0) {
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

/* The flag named by the len bytes at name in the sets (its set in *set). */
static const kube_flag *find_in_sets(const kube_flag_set *sets, size_t nsets, const char *name,
                                     size_t len, const kube_flag_set **set)
{
    for (size_t s = 0; s < nsets; s++) {
        const kube_flag *f = find(sets[s].flags, sets[s].n, name, len);
        if (f) {
            *set = &sets[s];
            return f;
        }
    }
    return NULL;
}

/* Hands a flag no set defines to hooks->unknown: 1 taken, 0 not, < 0 error
 * (message in err). */
static int offer_unknown(const kube_flags_hooks *hooks, const char *a, const char *eq, char *err,
                         size_t errlen)
{
    char given[128];
    int rc;

    if (!hooks || !hooks->unknown)
        return 0;
    snprintf(given, sizeof(given), "%.*s", (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
    rc = hooks->unknown(hooks->unknown_dst, given, eq ? eq + 1 : NULL);
    if (rc < 0)
        snprintf(err, errlen, "invalid flag %s", a);
    return rc;
}

/* The value of flag f given as argument a (argv[*i]); *i advances past a
 * separate value. NULL when it is missing (message in err). */
static const char *value_of(const kube_flag *f, const char *a, const char *eq, int argc,
                            char *const *argv, int *i, char *err, size_t errlen)
{
    if (eq)
        return eq + 1;
    if (f->kind == KUBE_FLAG_BOOL || (f->type && !*f->type))
        return "true";
    if (*i + 1 < argc)
        return argv[++*i];
    snprintf(err, errlen, "flag needs an argument: %s", a);
    return NULL;
}

/* One argument at argv[*i] (and its value, *i advanced past it). */
static int parse_one(const kube_flag_set *sets, size_t nsets, int argc, char *const *argv, int *i,
                     const kube_flags_hooks *hooks, char *err, size_t errlen)
{
    const char *a = argv[*i], *name, *eq, *value;
    const kube_flag_set *set = NULL;
    const kube_flag *f;
    char why[512] = "";
    int rc;

    if (a[0] != '-' || !a[1]) {
        snprintf(err, errlen, "unexpected argument \"%s\"", a);
        return KUBE_ECONFIG;
    }
    name = a + (a[1] == '-' ? 2 : 1);
    eq = strchr(name, '=');
    f = find_in_sets(sets, nsets, name, eq ? (size_t)(eq - name) : strlen(name), &set);
    if (!f && (rc = offer_unknown(hooks, a, eq, err, errlen)) != 0)
        return rc > 0 ? KUBE_OK : rc;
    if (!f || (a[1] != '-' && strlen(f->name) != 1)) {
        snprintf(err, errlen, "unknown flag: %s", a);
        return KUBE_ECONFIG;
    }
    if (!(value = value_of(f, a, eq, argc, argv, i, err, errlen)))
        return KUBE_ECONFIG;
    rc = set_value(f, set->dst, value, why, sizeof(why));
    if (rc == KUBE_ECONFIG)
        snprintf(err, errlen, "invalid argument \"%s\" for \"--%s\" flag%s%s", value, f->name,
                 why[0] ? ": " : "", why);
    if (rc == KUBE_OK && hooks && hooks->seen)
        hooks->seen(hooks->seen_ud, set, f);
    return rc;
}

int kube_flag_sets_parse(const kube_flag_set *sets, size_t nsets, int argc, char *const *argv,
                         const kube_flags_hooks *hooks, char *err, size_t errlen)
{
    int rc = KUBE_OK;

    for (int i = 1; i < argc && rc == KUBE_OK; i++)
        rc = parse_one(sets, nsets, argc, argv, &i, hooks, err, errlen);
    return rc;
}

int kube_flags_parse_ext(const kube_flag *flags, size_t n, int argc, char *const *argv, void *dst,
                         kube_flags_unknown_fn unknown, char *err, size_t errlen)
{
    kube_flag_set set = {"", flags, n, dst};
    kube_flags_hooks hooks = {unknown, dst, NULL, NULL};

    return kube_flag_sets_parse(&set, 1, argc, argv, &hooks, err, errlen);
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
    kube_flag_set set = {"", flags, n, dst};
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
            rc = parse_one(&set, 1, argc, args, &i, NULL, err, errlen);
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
        fprintf(f, "%-50s ", left);
        /* pflag indents a help's further lines under its first */
        for (const char *h = flags[i].help; *h; h++) {
            if (*h == '\n')
                fprintf(f, "\n%51s", "");
            else
                fputc(*h, f);
        }
        fputc('\n', f);
    }
}

void kube_flag_sets_usage(FILE *f, const kube_flag_set *sets, size_t nsets)
{
    for (size_t s = 0; s < nsets; s++) {
        fprintf(f, "\n%s flags:\n\n", sets[s].name);
        kube_flags_usage(f, sets[s].flags, sets[s].n);
    }
}

void kube_flags_usage(FILE *f, const kube_flag *flags, size_t n)
{
    kube_flags_usage_short(f, flags, n, NULL, 0);
}
