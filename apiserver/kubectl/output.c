/*
 * apiserver/kubectl/output.c - tables, ages, -o json|yaml and errors as
 * kubectl prints them (output.h).
 */
#include "output.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

/* kubectl's tabwriter: minwidth 6, padding 3. */
#define COL_MIN 6
#define COL_PAD 3

int kctl_table_init(kctl_table *t, size_t ncols, const char *const *headers)
{
    memset(t, 0, sizeof(*t));
    t->ncols = ncols;
    int rc = kctl_table_add(t, headers);
    if (rc != KUBE_OK)
        kctl_table_free(t);
    return rc;
}

int kctl_table_add(kctl_table *t, const char *const *cells)
{
    if (KUBE_ARRAY_RESERVE(t->cells, t->cap, (t->nrows + 1) * t->ncols) != KUBE_OK)
        return KUBE_ENOMEM;
    char **row = t->cells + t->nrows * t->ncols;
    for (size_t i = 0; i < t->ncols; i++) {
        row[i] = kube_strdup(cells[i] && *cells[i] ? cells[i] : "<none>");
        if (!row[i]) {
            while (i--)
                free(row[i]);
            return KUBE_ENOMEM;
        }
    }
    t->nrows++;
    return KUBE_OK;
}

void kctl_table_write(const kctl_table *t, FILE *f)
{
    size_t *width = calloc(t->ncols ? t->ncols : 1, sizeof(*width));
    if (!width)
        return;
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t w = strlen(t->cells[r * t->ncols + c]) + COL_PAD;
            if (w > width[c])
                width[c] = w < COL_MIN ? COL_MIN : w;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *cell = t->cells[r * t->ncols + c];
            if (c + 1 < t->ncols)
                fprintf(f, "%-*s", (int)width[c], cell);
            else
                fprintf(f, "%s\n", cell);
        }
    }
    free(width);
}

void kctl_table_free(kctl_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof(*t));
}

/* ---- -o json ---------------------------------------------------------- */

/* cJSON's layout as kubectl's: its tabs (never inside strings, which
 * escape them) are 4 spaces of indentation, or the one space after ':'. */
static int print_json(FILE *f, const cJSON *obj)
{
    char *text = cJSON_Print(obj);
    if (!text)
        return KUBE_ENOMEM;
    int bol = 1;
    for (const char *p = text; *p; p++) {
        if (*p == '\t') {
            fputs(bol ? "    " : " ", f);
            continue;
        }
        bol = *p == '\n';
        fputc(*p, f);
    }
    fputc('\n', f);
    free(text);
    return KUBE_OK;
}

/* ---- -o yaml ---------------------------------------------------------- */

/* 1 when s would read back as something other than a string (bool, null,
 * a number, a timestamp) or is empty: it must be quoted. */
static int ambiguous(const char *s)
{
    static const char *const words[] = {"true", "false", "yes", "no",   "on",
                                        "off",  "y",     "n",   "null", "~"};
    char *end;
    if (!*s)
        return 1;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcasecmp(s, words[i]) == 0)
            return 1;
    strtod(s, &end);
    return *end == '\0' || isdigit((unsigned char)s[0]) || s[0] == '.' || s[0] == '-' ||
           s[0] == '+';
}

static int emit(yaml_emitter_t *e, yaml_event_t *ev)
{
    return yaml_emitter_emit(e, ev) ? KUBE_OK : KUBE_ENOMEM;
}

static int emit_scalar(yaml_emitter_t *e, const char *text, int quote)
{
    yaml_event_t ev;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), 1, 1,
                                      quote ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                            : YAML_ANY_SCALAR_STYLE))
        return KUBE_ENOMEM;
    return emit(e, &ev);
}

static int emit_node(yaml_emitter_t *e, const cJSON *v);

static int emit_children(yaml_emitter_t *e, const cJSON *v)
{
    int rc = KUBE_OK;
    for (const cJSON *c = v->child; c && rc == KUBE_OK; c = c->next) {
        if (cJSON_IsObject(v))
            rc = emit_scalar(e, c->string, ambiguous(c->string));
        if (rc == KUBE_OK)
            rc = emit_node(e, c);
    }
    return rc;
}

static int emit_node(yaml_emitter_t *e, const cJSON *v)
{
    yaml_event_t ev;
    char num[64];
    int rc;
    if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
        int map = cJSON_IsObject(v);
        if (!(map ? yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                                        YAML_BLOCK_MAPPING_STYLE)
                  : yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                                         YAML_BLOCK_SEQUENCE_STYLE)))
            return KUBE_ENOMEM;
        if ((rc = emit(e, &ev)) != KUBE_OK || (rc = emit_children(e, v)) != KUBE_OK)
            return rc;
        if (!(map ? yaml_mapping_end_event_initialize(&ev)
                  : yaml_sequence_end_event_initialize(&ev)))
            return KUBE_ENOMEM;
        return emit(e, &ev);
    }
    if (cJSON_IsString(v))
        return emit_scalar(e, v->valuestring, ambiguous(v->valuestring));
    if (cJSON_IsBool(v))
        return emit_scalar(e, cJSON_IsTrue(v) ? "true" : "false", 0);
    if (cJSON_IsNumber(v)) {
        snprintf(num, sizeof(num), "%.17g", v->valuedouble);
        return emit_scalar(e, num, 0);
    }
    return emit_scalar(e, "null", 0);
}

static int yaml_out(void *data, unsigned char *buffer, size_t size)
{
    return kube_buf_append(data, buffer, size) == KUBE_OK;
}

char *kctl_yaml(const cJSON *obj)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    kube_buf b = KUBE_BUF_INIT;
    int rc = KUBE_ENOMEM;
    if (!yaml_emitter_initialize(&e))
        return NULL;
    yaml_emitter_set_output(&e, yaml_out, &b);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    if (yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && emit(&e, &ev) == KUBE_OK &&
        yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
        emit(&e, &ev) == KUBE_OK && emit_node(&e, obj) == KUBE_OK &&
        yaml_document_end_event_initialize(&ev, 1) && emit(&e, &ev) == KUBE_OK &&
        yaml_stream_end_event_initialize(&ev))
        rc = emit(&e, &ev);
    yaml_emitter_delete(&e);
    char *text = rc == KUBE_OK ? kube_buf_take(&b) : NULL;
    kube_buf_free(&b);
    return text;
}

int kctl_print_object(FILE *f, const cJSON *obj, const char *format)
{
    if (strcmp(format, "json") == 0)
        return print_json(f, obj);
    if (strcmp(format, "yaml") != 0)
        return KUBE_EINVAL;
    char *text = kctl_yaml(obj);
    if (!text)
        return KUBE_ENOMEM;
    fputs(text, f);
    free(text);
    return KUBE_OK;
}

void kctl_print_error(FILE *f, const kube_response *resp)
{
    const kube_status *st = &resp->status;
    if (resp->code == 0)
        fprintf(f, "Unable to connect to the server: %s\n",
                st->message[0] ? st->message : "no answer");
    else if (st->reason[0])
        fprintf(f, "Error from server (%s): %s\n", st->reason, st->message);
    else
        fprintf(f, "Error from server: %s\n", st->message[0] ? st->message : "unknown error");
}
