/*
 * kube/codec/selector.c - label/node selector decoding, validation, matching and
 * the labels.Parse() grammar.
 */
#include "kube/util/array.h"
#include "kube/codec/selector.h"

#include <stdlib.h>
#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/errors.h"

/* strconv.ParseInt(s, 10, 64): optional sign, digits only. */
static int parse_int64_strict(const char *s, int64_t *out)
{
    uint64_t v = 0, limit;
    int neg = 0;

    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (!*s)
        return 0;
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        if (v > (limit - (uint64_t)(*s - '0')) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}

/* labels.NewRequirement's checks. */
static int requirement_valid(const kube_requirement *r)
{
    int64_t unused;

    if (!kube_is_qualified_name(r->key))
        return 0;
    switch (r->op) {
    case KUBE_SEL_IN:
    case KUBE_SEL_NOT_IN:
        if (r->n_values == 0)
            return 0;
        break;
    case KUBE_SEL_EXISTS:
    case KUBE_SEL_DOES_NOT_EXIST:
        if (r->n_values != 0)
            return 0;
        break;
    case KUBE_SEL_GT:
    case KUBE_SEL_LT:
        if (r->n_values != 1 || !parse_int64_strict(r->values[0], &unused))
            return 0;
        break;
    default:
        return 0;
    }
    for (size_t i = 0; i < r->n_values; i++)
        if (!kube_is_label_value(r->values[i]))
            return 0;
    return 1;
}

/* ---- matching ---- */

static const char *label_get(const kube_kv *labels, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(labels[i].key, key) == 0)
            return labels[i].value;
    return NULL;
}

static int has_value(const kube_requirement *r, const char *v)
{
    for (size_t i = 0; i < r->n_values; i++)
        if (strcmp(r->values[i], v) == 0)
            return 1;
    return 0;
}

static int compare_matches(const kube_requirement *r, const char *v)
{
    int64_t have, want;

    if (!v || r->n_values != 1 || !parse_int64_strict(v, &have) ||
        !parse_int64_strict(r->values[0], &want))
        return 0;
    return r->op == KUBE_SEL_GT ? have > want : have < want;
}

int kube_requirement_matches(const kube_requirement *r, const kube_kv *labels, size_t n)
{
    const char *v = label_get(labels, n, r->key);

    switch (r->op) {
    case KUBE_SEL_IN:
        return v && has_value(r, v);
    case KUBE_SEL_NOT_IN:
        return !v || !has_value(r, v);
    case KUBE_SEL_EXISTS:
        return v != NULL;
    case KUBE_SEL_DOES_NOT_EXIST:
        return v == NULL;
    case KUBE_SEL_GT:
    case KUBE_SEL_LT:
        return compare_matches(r, v);
    default:
        return 0;
    }
}

static int all_match(const kube_requirement *reqs, size_t n_reqs, const kube_kv *labels, size_t n)
{
    for (size_t i = 0; i < n_reqs; i++)
        if (!kube_requirement_matches(&reqs[i], labels, n))
            return 0;
    return 1;
}

int kube_label_selector_matches(const kube_label_selector *s, const kube_kv *labels, size_t n)
{
    if (!s || !s->valid)
        return 0;
    return all_match(s->reqs, s->n_reqs, labels, n);
}

/* fields.OneTermEqualSelector / OneTermNotEqualSelector over the node's
 * fields set {"metadata.name": name}: other keys read as "". */
static int field_matches(const kube_requirement *r, const char *node_name)
{
    const char *have = strcmp(r->key, "metadata.name") == 0 && node_name ? node_name : "";

    if (r->n_values != 1)
        return 0;
    if (r->op == KUBE_SEL_IN)
        return strcmp(have, r->values[0]) == 0;
    if (r->op == KUBE_SEL_NOT_IN)
        return strcmp(have, r->values[0]) != 0;
    return 0;
}

int kube_node_selector_term_matches(const kube_node_selector_term *t, const char *node_name,
                                    const kube_kv *labels, size_t n)
{
    if (!t || !t->valid || (t->n_match_expressions == 0 && t->n_match_fields == 0))
        return 0;
    if (!all_match(t->match_expressions, t->n_match_expressions, labels, n))
        return 0;
    for (size_t i = 0; i < t->n_match_fields; i++)
        if (!field_matches(&t->match_fields[i], node_name))
            return 0;
    return 1;
}

int kube_node_selector_matches(const kube_node_selector *ns, const char *node_name,
                               const kube_kv *labels, size_t n)
{
    if (!ns)
        return 0;
    for (size_t i = 0; i < ns->n_terms; i++)
        if (kube_node_selector_term_matches(&ns->terms[i], node_name, labels, n))
            return 1;
    return 0;
}

/* ---- JSON decoding ---- */

static kube_sel_op op_from_string(const char *s, int allow_compare)
{
    static const struct {
        const char *name;
        kube_sel_op op;
    } ops[] = {
        {"In", KUBE_SEL_IN},         {"NotIn", KUBE_SEL_NOT_IN},
        {"Exists", KUBE_SEL_EXISTS}, {"DoesNotExist", KUBE_SEL_DOES_NOT_EXIST},
        {"Gt", KUBE_SEL_GT},         {"Lt", KUBE_SEL_LT},
    };

    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(s, ops[i].name) == 0)
            return (!allow_compare && (ops[i].op == KUBE_SEL_GT || ops[i].op == KUBE_SEL_LT))
                       ? KUBE_SEL_INVALID
                       : ops[i].op;
    return KUBE_SEL_INVALID;
}

/* One {key, operator, values} into r. */
static int decode_requirement(const cJSON *j, kube_arena *a, int allow_compare, kube_requirement *r)
{
    const char *op;
    int rc;

    if (!cJSON_IsObject(j))
        return KUBE_EPARSE;
    if ((rc = kube_json_str(j, "key", a, "", &r->key)) ||
        (rc = kube_json_str(j, "operator", a, "", &op)) ||
        (rc = kube_json_strings(j, "values", a, &r->values, &r->n_values)))
        return rc;
    r->op = op_from_string(op, allow_compare);
    return KUBE_OK;
}

/* A JSON array of requirements; *valid cleared when one is malformed. */
static int decode_requirements(const cJSON *parent, const char *key, kube_arena *a,
                               int allow_compare, const kube_requirement **out, size_t *n,
                               int *valid)
{
    const cJSON *arr, *it;
    kube_requirement *reqs;
    size_t count, i = 0;
    int rc = kube_json_array(parent, key, &arr, &count);

    *out = NULL;
    *n = 0;
    if (rc != KUBE_OK || count == 0)
        return rc;
    reqs = kube_arena_alloc(a, count * sizeof(*reqs));
    if (!reqs)
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        if ((rc = decode_requirement(it, a, allow_compare, &reqs[i])) != KUBE_OK)
            return rc;
        if (!requirement_valid(&reqs[i]))
            *valid = 0;
        i++;
    }
    *out = reqs;
    *n = count;
    return KUBE_OK;
}

/* matchLabels {k: v} as In requirements with one value each. */
static int decode_match_labels(const cJSON *j, kube_arena *a, kube_requirement *reqs, size_t n,
                               int *valid)
{
    const kube_kv *kv;
    size_t count;
    int rc = kube_json_string_map(j, "matchLabels", a, &kv, &count);

    if (rc != KUBE_OK)
        return rc;
    for (size_t i = 0; i < count && i < n; i++) {
        const char **v = kube_arena_alloc(a, sizeof(*v));
        if (!v)
            return KUBE_ENOMEM;
        v[0] = kv[i].value;
        reqs[i] = (kube_requirement){kv[i].key, v, 1, KUBE_SEL_IN};
        if (!requirement_valid(&reqs[i]))
            *valid = 0;
    }
    return KUBE_OK;
}

static size_t count_members(const cJSON *obj)
{
    const cJSON *it;
    size_t n = 0;

    cJSON_ArrayForEach(it, obj) n++;
    return n;
}

int kube_label_selector_decode(const cJSON *j, struct kube_arena *a,
                               const kube_label_selector **out)
{
    const cJSON *labels, *exprs, *it;
    kube_label_selector *s;
    kube_requirement *reqs = NULL;
    size_t n_labels, n_exprs, i;
    int rc;

    *out = NULL;
    if (!j || cJSON_IsNull(j))
        return KUBE_OK;
    if (!cJSON_IsObject(j))
        return KUBE_EPARSE;
    if ((rc = kube_json_object(j, "matchLabels", &labels)) ||
        (rc = kube_json_array(j, "matchExpressions", &exprs, &n_exprs)))
        return rc;
    n_labels = labels ? count_members(labels) : 0;
    s = kube_arena_alloc(a, sizeof(*s));
    if (n_labels + n_exprs)
        reqs = kube_arena_alloc(a, (n_labels + n_exprs) * sizeof(*reqs));
    if (!s || (n_labels + n_exprs && !reqs))
        return KUBE_ENOMEM;
    s->valid = 1;
    if ((rc = decode_match_labels(j, a, reqs, n_labels, &s->valid)))
        return rc;
    i = n_labels;
    cJSON_ArrayForEach(it, exprs)
    {
        if ((rc = decode_requirement(it, a, 0, &reqs[i])) != KUBE_OK)
            return rc;
        if (!requirement_valid(&reqs[i++]))
            s->valid = 0;
    }
    s->reqs = reqs;
    s->n_reqs = n_labels + n_exprs;
    *out = s;
    return KUBE_OK;
}

/* matchFields: In/NotIn with exactly one value (no key validation). */
static int fields_valid(const kube_requirement *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((r[i].op != KUBE_SEL_IN && r[i].op != KUBE_SEL_NOT_IN) || r[i].n_values != 1)
            return 0;
    return 1;
}

int kube_node_selector_term_decode(const cJSON *j, struct kube_arena *a, kube_node_selector_term *t)
{
    int unused = 1, rc;

    memset(t, 0, sizeof(*t));
    t->valid = 1;
    if (!j || cJSON_IsNull(j))
        return KUBE_OK;
    if (!cJSON_IsObject(j))
        return KUBE_EPARSE;
    if ((rc = decode_requirements(j, "matchExpressions", a, 1, &t->match_expressions,
                                  &t->n_match_expressions, &t->valid)) ||
        (rc = decode_requirements(j, "matchFields", a, 1, &t->match_fields, &t->n_match_fields,
                                  &unused)))
        return rc;
    if (!fields_valid(t->match_fields, t->n_match_fields))
        t->valid = 0;
    return KUBE_OK;
}

int kube_node_selector_decode(const cJSON *j, struct kube_arena *a, const kube_node_selector **out)
{
    const cJSON *arr, *it;
    kube_node_selector *ns;
    kube_node_selector_term *terms = NULL;
    size_t n, i = 0;
    int rc;

    *out = NULL;
    if (!j || cJSON_IsNull(j))
        return KUBE_OK;
    if (!cJSON_IsObject(j))
        return KUBE_EPARSE;
    if ((rc = kube_json_array(j, "nodeSelectorTerms", &arr, &n)))
        return rc;
    ns = kube_arena_alloc(a, sizeof(*ns));
    if (n)
        terms = kube_arena_alloc(a, n * sizeof(*terms));
    if (!ns || (n && !terms))
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        if ((rc = kube_node_selector_term_decode(it, a, &terms[i++])) != KUBE_OK)
            return rc;
    }
    ns->terms = terms;
    ns->n_terms = n;
    *out = ns;
    return KUBE_OK;
}

/* ---- labels.Parse() ---- */

typedef enum tok_type {
    TOK_END,
    TOK_ID,
    TOK_IN,
    TOK_NOTIN,
    TOK_NOT,  /* "!" */
    TOK_EQ,   /* "=" */
    TOK_EQEQ, /* "==" */
    TOK_NEQ,  /* "!=" */
    TOK_GT,
    TOK_LT,
    TOK_LPAREN,
    TOK_RPAREN,
    TOK_COMMA
} tok_type;

typedef struct token {
    tok_type type;
    const char *text; /* identifiers: not NUL-terminated */
    size_t len;
} token;

typedef struct lexer {
    const char *s;
    size_t pos;
    token cur; /* lookahead */
} lexer;

static int is_special(char c)
{
    return c && strchr("=!(),<>", c) != NULL;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static token scan_special(lexer *l)
{
    const char *p = l->s + l->pos;
    static const struct {
        const char *lit;
        tok_type t;
    } two[] = {{"==", TOK_EQEQ}, {"!=", TOK_NEQ}};
    static const char one[] = "=!(),<>";
    static const tok_type one_t[] = {TOK_EQ,    TOK_NOT, TOK_LPAREN, TOK_RPAREN,
                                     TOK_COMMA, TOK_LT,  TOK_GT};

    for (size_t i = 0; i < 2; i++) {
        if (p[0] == two[i].lit[0] && p[1] == two[i].lit[1]) {
            l->pos += 2;
            return (token){two[i].t, p, 2};
        }
    }
    l->pos++;
    return (token){one_t[strchr(one, p[0]) - one], p, 1};
}

static token scan_word(lexer *l)
{
    const char *p = l->s + l->pos;
    size_t n = 0;

    while (p[n] && !is_special(p[n]) && !is_space(p[n]))
        n++;
    l->pos += n;
    if (n == 2 && memcmp(p, "in", 2) == 0)
        return (token){TOK_IN, p, n};
    if (n == 5 && memcmp(p, "notin", 5) == 0)
        return (token){TOK_NOTIN, p, n};
    return (token){TOK_ID, p, n};
}

static void lex_next(lexer *l)
{
    while (is_space(l->s[l->pos]))
        l->pos++;
    if (!l->s[l->pos])
        l->cur = (token){TOK_END, l->s + l->pos, 0};
    else if (is_special(l->s[l->pos]))
        l->cur = scan_special(l);
    else
        l->cur = scan_word(l);
}

/* The lookahead in the "Values" context, where in/notin are identifiers. */
static tok_type peek_value(const lexer *l)
{
    tok_type t = l->cur.type;
    return t == TOK_IN || t == TOK_NOTIN ? TOK_ID : t;
}

/* A growable list of requirements while parsing (heap, freed after). */
typedef struct req_list {
    kube_requirement *v;
    size_t n, cap;
} req_list;

typedef struct str_list {
    const char **v;
    size_t n, cap;
} str_list;

static int str_list_push(str_list *l, const char *s)
{
    if (KUBE_ARRAY_RESERVE(l->v, l->cap, l->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    l->v[l->n++] = s;
    return KUBE_OK;
}

static int req_list_push(req_list *l, const kube_requirement *r)
{
    if (KUBE_ARRAY_RESERVE(l->v, l->cap, l->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    l->v[l->n++] = *r;
    return KUBE_OK;
}

static int push_token(str_list *vals, kube_arena *a, const token *t)
{
    const char *s = kube_arena_strndup(a, t->text, t->len);
    return s ? str_list_push(vals, s) : KUBE_ENOMEM;
}

/* parseIdentifiersList, after "(" with an identifier or "," ahead. */
static int parse_identifiers(lexer *l, kube_arena *a, str_list *vals)
{
    static const token empty = {TOK_ID, "", 0};
    int rc;

    for (;;) {
        token t = l->cur;
        tok_type t2;
        if (peek_value(l) == TOK_ID) {
            lex_next(l);
            if ((rc = push_token(vals, a, &t)))
                return rc;
            t2 = peek_value(l);
            if (t2 == TOK_RPAREN)
                return KUBE_OK;
            if (t2 != TOK_COMMA)
                return KUBE_EPARSE;
            continue; /* the comma is handled below, as "(a,)" needs */
        }
        if (t.type != TOK_COMMA)
            return KUBE_EPARSE;
        lex_next(l);
        if (vals->n == 0 && (rc = push_token(vals, a, &empty)))
            return rc;
        t2 = peek_value(l);
        if (t2 == TOK_RPAREN)
            return push_token(vals, a, &empty);
        if (t2 == TOK_COMMA) {
            lex_next(l);
            if ((rc = push_token(vals, a, &empty)))
                return rc;
        }
    }
}

/* parseValues: "(" list ")" or "()". */
static int parse_values(lexer *l, kube_arena *a, str_list *vals)
{
    static const token empty = {TOK_ID, "", 0};
    tok_type t;
    int rc;

    if (l->cur.type != TOK_LPAREN)
        return KUBE_EPARSE;
    lex_next(l);
    t = peek_value(l);
    if (t == TOK_RPAREN) {
        lex_next(l);
        return push_token(vals, a, &empty);
    }
    if (t != TOK_ID && t != TOK_COMMA)
        return KUBE_EPARSE;
    if ((rc = parse_identifiers(l, a, vals)))
        return rc;
    if (l->cur.type != TOK_RPAREN)
        return KUBE_EPARSE;
    lex_next(l);
    return KUBE_OK;
}

/* parseExactValue: one identifier, or "" before "," / end. */
static int parse_exact_value(lexer *l, kube_arena *a, str_list *vals)
{
    static const token empty = {TOK_ID, "", 0};
    tok_type t = peek_value(l);
    token cur = l->cur;

    if (t == TOK_END || t == TOK_COMMA)
        return push_token(vals, a, &empty);
    if (t != TOK_ID)
        return KUBE_EPARSE;
    lex_next(l);
    return push_token(vals, a, &cur);
}

static int binary_op(tok_type t, kube_sel_op *op)
{
    switch (t) {
    case TOK_IN:
    case TOK_EQ:
    case TOK_EQEQ:
        *op = KUBE_SEL_IN;
        return 1;
    case TOK_NOTIN:
    case TOK_NEQ:
        *op = KUBE_SEL_NOT_IN;
        return 1;
    case TOK_GT:
        *op = KUBE_SEL_GT;
        return 1;
    case TOK_LT:
        *op = KUBE_SEL_LT;
        return 1;
    default:
        return 0;
    }
}

/* Copies the values into the arena and validates the requirement. */
static int finish_requirement(kube_arena *a, kube_requirement *r, const str_list *vals)
{
    const char **v = NULL;

    if (vals->n) {
        v = kube_arena_alloc(a, vals->n * sizeof(*v));
        if (!v)
            return KUBE_ENOMEM;
        memcpy(v, vals->v, vals->n * sizeof(*v));
    }
    r->values = v;
    r->n_values = vals->n;
    return requirement_valid(r) ? KUBE_OK : KUBE_EPARSE;
}

/* parseRequirement */
static int parse_requirement(lexer *l, kube_arena *a, kube_requirement *r)
{
    str_list vals = {0};
    tok_type op_tok;
    int negated = 0, rc;

    if (l->cur.type == TOK_NOT) {
        negated = 1;
        lex_next(l);
    }
    if (peek_value(l) != TOK_ID)
        return KUBE_EPARSE;
    r->key = kube_arena_strndup(a, l->cur.text, l->cur.len);
    if (!r->key)
        return KUBE_ENOMEM;
    if (!kube_is_qualified_name(r->key))
        return KUBE_EPARSE;
    lex_next(l);
    if (negated || peek_value(l) == TOK_END || peek_value(l) == TOK_COMMA) {
        r->op = negated ? KUBE_SEL_DOES_NOT_EXIST : KUBE_SEL_EXISTS;
        return finish_requirement(a, r, &vals);
    }
    op_tok = l->cur.type;
    if (!binary_op(op_tok, &r->op))
        return KUBE_EPARSE;
    lex_next(l);
    rc = (op_tok == TOK_IN || op_tok == TOK_NOTIN) ? parse_values(l, a, &vals)
                                                   : parse_exact_value(l, a, &vals);
    if (rc == KUBE_OK)
        rc = finish_requirement(a, r, &vals);
    free(vals.v);
    return rc;
}

/* Parser.parse: requirements separated by commas. */
static int parse_selector(lexer *l, kube_arena *a, req_list *reqs)
{
    kube_requirement r;
    tok_type t;
    int rc;

    lex_next(l);
    t = peek_value(l);
    if (t == TOK_END)
        return KUBE_OK;
    for (;;) {
        if (t != TOK_ID && t != TOK_NOT)
            return KUBE_EPARSE;
        memset(&r, 0, sizeof(r));
        if ((rc = parse_requirement(l, a, &r)) || (rc = req_list_push(reqs, &r)))
            return rc;
        t = l->cur.type;
        if (t == TOK_END)
            return KUBE_OK;
        if (t != TOK_COMMA)
            return KUBE_EPARSE;
        lex_next(l);
        t = peek_value(l);
    }
}

static int parse_fill(kube_arena *a, void *ctx, void **first)
{
    kube_label_selector *s = kube_arena_alloc(a, sizeof(*s));
    lexer l = {ctx, 0, {TOK_END, NULL, 0}};
    req_list reqs = {0};
    kube_requirement *v = NULL;
    int rc;

    *first = s;
    if (!s)
        return KUBE_ENOMEM;
    rc = parse_selector(&l, a, &reqs);
    if (rc == KUBE_OK && reqs.n) {
        v = kube_arena_alloc(a, reqs.n * sizeof(*v));
        if (v)
            memcpy(v, reqs.v, reqs.n * sizeof(*v));
        else
            rc = KUBE_ENOMEM;
    }
    s->reqs = v;
    s->n_reqs = reqs.n;
    s->valid = 1;
    free(reqs.v);
    return rc;
}

int kube_label_selector_parse(const char *s, kube_label_selector **out)
{
    void *block;
    int rc;

    if (!s || !out)
        return KUBE_EINVAL;
    *out = NULL;
    rc = kube_arena_build(parse_fill, (void *)s, &block);
    if (rc == KUBE_OK)
        *out = block;
    return rc;
}

void kube_label_selector_free(kube_label_selector *s)
{
    free(s);
}
