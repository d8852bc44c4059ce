/* Run against run: two comparison tables matched cell by cell (as the regressions match a run
 * to its baseline: rows by label, columns by test label). */
#include "coordinator/analysis/compare.h"

#include "proto/err.h"
#include "proto/json.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sm_compare_verdict_name(sm_compare_verdict v)
{
    switch (v) {
    case SM_COMPARE_HIGHER:
        return "higher";
    case SM_COMPARE_LOWER:
        return "lower";
    case SM_COMPARE_NO_DATA:
        return "no data";
    case SM_COMPARE_OVERLAP:
        break;
    }
    return "overlap";
}

static bool has_median(const sm_table_cell *c)
{
    return c->have && c->s.n > 0 && isfinite(c->s.median) && isfinite(c->s.ci95_low) &&
           isfinite(c->s.ci95_high);
}

sm_compare_verdict sm_compare_cells(const sm_table_cell *a, const sm_table_cell *b)
{
    if (!has_median(a) || !has_median(b))
        return SM_COMPARE_NO_DATA;
    /* Strictly apart: intervals that touch share a value, and a shared value is no change. */
    if (b->s.ci95_low > a->s.ci95_high)
        return SM_COMPARE_HIGHER;
    if (b->s.ci95_high < a->s.ci95_low)
        return SM_COMPARE_LOWER;
    return SM_COMPARE_OVERLAP;
}

/* A cell whose samples were all disturbed (and left out) ran all the same: it is in the run. */
static bool present(const sm_table_cell *c)
{
    return c->have || c->failed > 0 || c->disturbed > 0;
}

static size_t find_row(const sm_table *t, const char *want)
{
    for (size_t i = 0; i < t->n_rows; i++)
        if (strncmp(t->rows[i], want, sizeof t->rows[i]) == 0)
            return i;
    return SIZE_MAX;
}

static size_t find_col(const sm_table_col *cols, size_t n, const char *want)
{
    for (size_t i = 0; i < n; i++)
        if (strncmp(cols[i].label, want, sizeof cols[i].label) == 0)
            return i;
    return SIZE_MAX;
}

static const sm_table_cell *cell_of(const sm_table *t, bool ratio, size_t r, size_t c)
{
    return ratio ? &t->ratio_cells[r * t->n_ratio_cols + c] : &t->cells[r * t->n_cols + c];
}

static void *grow(void *v, size_t n, size_t size)
{
    /* One more element; the arrays stay small (rows x tests of two runs). */
    return realloc(v, (n + 1) * size);
}

static int push_only(sm_compare_only **v, size_t *n, const char *row, const char *test, bool ratio)
{
    sm_compare_only *g = grow(*v, *n, sizeof **v);
    if (!g)
        return SM_ENOMEM;
    *v = g;
    sm_compare_only *o = &g[(*n)++];
    memset(o, 0, sizeof *o);
    snprintf(o->row, sizeof o->row, "%s", row);
    snprintf(o->test, sizeof o->test, "%s", test);
    o->ratio = ratio;
    return 0;
}

/* The cells of `from` that `other` lacks, to only[]. */
static int only_in(const sm_table *from, const sm_table *other, bool ratio, sm_compare_only **only,
                   size_t *n)
{
    size_t nc = ratio ? from->n_ratio_cols : from->n_cols;
    const sm_table_col *cols = ratio ? from->ratio_cols : from->cols;
    const sm_table_col *ocols = ratio ? other->ratio_cols : other->cols;
    size_t onc = ratio ? other->n_ratio_cols : other->n_cols;
    for (size_t c = 0; c < nc; c++) {
        size_t oc = find_col(ocols, onc, cols[c].label);
        for (size_t r = 0; r < from->n_rows; r++) {
            if (!present(cell_of(from, ratio, r, c)))
                continue;
            size_t orow = oc == SIZE_MAX ? SIZE_MAX : find_row(other, from->rows[r]);
            if (orow != SIZE_MAX && present(cell_of(other, ratio, orow, oc)))
                continue;
            if (push_only(only, n, from->rows[r], cols[c].label, ratio) != 0)
                return SM_ENOMEM;
        }
    }
    return 0;
}

static int shared_of(const sm_table *a, const sm_table *b, bool ratio, sm_compare *out)
{
    size_t nc = ratio ? a->n_ratio_cols : a->n_cols;
    const sm_table_col *cols = ratio ? a->ratio_cols : a->cols;
    for (size_t c = 0; c < nc; c++) {
        size_t bc = ratio ? find_col(b->ratio_cols, b->n_ratio_cols, cols[c].label)
                          : find_col(b->cols, b->n_cols, cols[c].label);
        if (bc == SIZE_MAX)
            continue;
        for (size_t r = 0; r < a->n_rows; r++) {
            size_t br = find_row(b, a->rows[r]);
            if (br == SIZE_MAX)
                continue;
            const sm_table_cell *ca = cell_of(a, ratio, r, c), *cb = cell_of(b, ratio, br, bc);
            if (!present(ca) || !present(cb))
                continue;
            sm_compare_cell *g = grow(out->shared, out->n_shared, sizeof *g);
            if (!g)
                return SM_ENOMEM;
            out->shared = g;
            sm_compare_cell *x = &g[out->n_shared++];
            memset(x, 0, sizeof *x);
            snprintf(x->row, sizeof x->row, "%s", a->rows[r]);
            snprintf(x->test, sizeof x->test, "%s", cols[c].label);
            snprintf(x->metric, sizeof x->metric, "%s", cols[c].metric);
            snprintf(x->unit, sizeof x->unit, "%s", cols[c].unit);
            x->ratio = ratio;
            x->a = *ca;
            x->b = *cb;
            x->verdict = sm_compare_cells(ca, cb);
            x->change = has_median(ca) && has_median(cb) && ca->s.median != 0
                            ? cb->s.median / ca->s.median - 1
                            : NAN;
        }
    }
    return 0;
}

int sm_compare_tables(const sm_table *a, const sm_table *b, sm_compare *out)
{
    for (int ratio = 0; ratio < 2; ratio++) {
        if (shared_of(a, b, ratio, out) != 0 ||
            only_in(a, b, ratio, &out->only_a, &out->n_only_a) != 0 ||
            only_in(b, a, ratio, &out->only_b, &out->n_only_b) != 0)
            return SM_ENOMEM;
    }
    return 0;
}

void sm_compare_fini(sm_compare *c)
{
    if (!c)
        return;
    free(c->shared);
    free(c->only_a);
    free(c->only_b);
    memset(c, 0, sizeof *c);
}

void sm_compare_tests_text(const sm_table *const *t, size_t n, char *buf, size_t cap)
{
    if (cap == 0)
        return;
    buf[0] = '\0';
    size_t at = 0;
    for (size_t k = 0; k < n; k++) {
        for (size_t c = 0; c < t[k]->n_cols; c++) {
            const char *label = t[k]->cols[c].label;
            /* Said once: a test of both scopes, or seen in an earlier table. */
            bool seen = false;
            for (size_t j = 0; j <= k && !seen; j++)
                for (size_t d = 0; d < (j == k ? c : t[j]->n_cols) && !seen; d++)
                    seen = strcmp(t[j]->cols[d].label, label) == 0;
            if (seen)
                continue;
            int w = snprintf(buf + at, cap - at, "%s%s", at ? ", " : "", label);
            if (w < 0 || (size_t)w >= cap - at)
                return;
            at += (size_t)w;
        }
    }
    if (at == 0)
        snprintf(buf, cap, "no tests");
}

static cJSON *side_json(const sm_table_cell *c, const char *unit)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    const bool have = c->have && c->s.n > 0;
    sm_json_put_double(o, "median", have ? c->s.median : NAN);
    sm_json_put_double(o, "ci95_low", have ? c->s.ci95_low : NAN);
    sm_json_put_double(o, "ci95_high", have ? c->s.ci95_high : NAN);
    sm_json_put_double(o, "ci_coverage", have ? c->s.ci_coverage : NAN);
    cJSON_AddNumberToObject(o, "n", have ? (double)c->s.n : 0);
    cJSON_AddNumberToObject(o, "failed", c->failed);
    cJSON_AddStringToObject(o, "unit", unit);
    return o;
}

static cJSON *run_json(sm_compare_run r)
{
    cJSON *o = cJSON_CreateObject();
    char id[24];
    snprintf(id, sizeof id, "%" PRIu64, r.id);
    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddStringToObject(o, "name", r.name ? r.name : "");
    cJSON_AddStringToObject(o, "state", r.state ? r.state : "");
    return o;
}

static cJSON *only_json(const sm_compare_only *v, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "host", v[i].row);
        cJSON_AddStringToObject(o, "test", v[i].test);
        cJSON_AddBoolToObject(o, "ratio", v[i].ratio);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

char *sm_compare_json(const sm_compare *c, sm_compare_run a, sm_compare_run b, bool with_disturbed)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "version", 1);
    cJSON_AddItemToObject(o, "a", run_json(a));
    cJSON_AddItemToObject(o, "b", run_json(b));
    cJSON_AddStringToObject(o, "a_state", a.state ? a.state : "");
    cJSON_AddStringToObject(o, "b_state", b.state ? b.state : "");
    cJSON_AddStringToObject(o, "disturbed", with_disturbed ? "include" : "exclude");
    cJSON_AddStringToObject(o, "rule", SM_COMPARE_RULE);
    cJSON_AddStringToObject(o, "change_unit", "%");
    cJSON *shared = cJSON_AddArrayToObject(o, "shared");
    size_t changed = 0;
    for (size_t i = 0; shared && i < c->n_shared; i++) {
        const sm_compare_cell *x = &c->shared[i];
        cJSON *e = cJSON_CreateObject();
        if (!e)
            break;
        cJSON_AddItemToArray(shared, e);
        cJSON_AddStringToObject(e, "host", x->row);
        cJSON_AddStringToObject(e, "test", x->test);
        cJSON_AddStringToObject(e, "metric", x->metric);
        cJSON_AddStringToObject(e, "unit", x->unit);
        cJSON_AddBoolToObject(e, "ratio", x->ratio);
        cJSON_AddItemToObject(e, "a", side_json(&x->a, x->unit));
        cJSON_AddItemToObject(e, "b", side_json(&x->b, x->unit));
        /* A derived percentage: cJSON's 15 digits say -10, not -9.9999999999999982. */
        if (isfinite(x->change))
            cJSON_AddNumberToObject(e, "change_pct", x->change * 100);
        else
            cJSON_AddNullToObject(e, "change_pct");
        cJSON_AddStringToObject(e, "verdict", sm_compare_verdict_name(x->verdict));
        changed += x->verdict == SM_COMPARE_HIGHER || x->verdict == SM_COMPARE_LOWER;
    }
    cJSON_AddItemToObject(o, "only_a", only_json(c->only_a, c->n_only_a));
    cJSON_AddItemToObject(o, "only_b", only_json(c->only_b, c->n_only_b));
    cJSON *counts = cJSON_AddObjectToObject(o, "counts");
    cJSON_AddNumberToObject(counts, "shared", (double)c->n_shared);
    cJSON_AddNumberToObject(counts, "changed", (double)changed);
    cJSON_AddNumberToObject(counts, "only_a", (double)c->n_only_a);
    cJSON_AddNumberToObject(counts, "only_b", (double)c->n_only_b);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}
