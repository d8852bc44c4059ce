/* Views of the reports' answers: compare, trends, a run's anomalies, and the tests a run's
 * table and the grid name. */
#include "coordinator/cli/apiview_internal.h"

#include <stdlib.h>
#include <string.h>

static void side_from(const cJSON *s, sm_apiview_side *out)
{
    out->median = av_num(s, "median");
    out->ci95_low = av_num(s, "ci95_low");
    out->ci95_high = av_num(s, "ci95_high");
    out->n = av_num(s, "n");
    out->failed = av_num(s, "failed");
    out->unit = av_text(s, "unit");
}

static void run_from(const cJSON *r, sm_apiview_compare_run *out)
{
    out->id = av_text(r, "id");
    out->name = av_text(r, "name");
    out->state = av_text(r, "state");
}

int sm_apiview_compare_decode(const char *json, size_t len, sm_apiview_compare *out, sm_error *err)
{
    memset(out, 0, sizeof *out);
    sm_apiview_compare c;
    memset(&c, 0, sizeof c);
    int rc = av_doc_parse(json, len, "not JSON", &c.doc, err);
    if (rc)
        return rc;
    const cJSON *root = c.doc->root;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "a");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "b");
    const cJSON *shared = cJSON_GetObjectItemCaseSensitive(root, "shared");
    c.have_runs = cJSON_IsObject(a) && cJSON_IsObject(b);
    c.have_shared = cJSON_IsArray(shared);
    run_from(a, &c.a);
    run_from(b, &c.b);
    c.n_shared = c.have_shared ? av_count(shared) : 0;
    if ((rc = av_calloc((void **)&c.shared, c.n_shared, sizeof *c.shared, "shared", err)))
        goto fail;
    size_t i = 0;
    const cJSON *e;
    for (e = c.have_shared ? shared->child : NULL; e; e = e->next) {
        sm_apiview_compared *x = &c.shared[i++];
        x->host = av_text(e, "host");
        x->test = av_text(e, "test");
        x->unit = av_text(e, "unit");
        x->verdict = av_text(e, "verdict");
        x->change_pct = av_num(e, "change_pct");
        side_from(cJSON_GetObjectItemCaseSensitive(e, "a"), &x->a);
        side_from(cJSON_GetObjectItemCaseSensitive(e, "b"), &x->b);
    }
    static const char *const only[] = {"only_a", "only_b"};
    for (size_t k = 0; k < 2; k++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, only[k]);
        c.n_only[k] = av_count(list);
        if ((rc = av_calloc((void **)&c.only[k], c.n_only[k], sizeof *c.only[k], only[k], err)))
            goto fail;
        i = 0;
        cJSON_ArrayForEach(e, list)
        {
            c.only[k][i].host = av_text(e, "host");
            c.only[k][i++].test = av_text(e, "test");
        }
    }
    *out = c;
    return 0;
fail:
    sm_apiview_compare_fini(&c);
    return rc;
}

void sm_apiview_compare_fini(sm_apiview_compare *c)
{
    free(c->shared);
    free(c->only[0]);
    free(c->only[1]);
    sm_apiview_doc_free(c->doc);
    memset(c, 0, sizeof *c);
}

int sm_apiview_trend_decode(const char *json, size_t len, sm_apiview_trend *out, sm_error *err)
{
    memset(out, 0, sizeof *out);
    sm_apiview_trend t;
    memset(&t, 0, sizeof t);
    int rc = av_doc_parse(json, len, "expected points", &t.doc, err);
    if (rc)
        return rc;
    const cJSON *root = t.doc->root;
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(root, "points");
    if (!cJSON_IsArray(pts)) {
        rc = sm_error_set(err, SM_EPARSE, "expected points");
        goto fail;
    }
    t.host = av_text(root, "host");
    t.test = av_text(root, "test");
    t.metric = av_text(root, "metric");
    t.unit = av_text(root, "unit");
    t.note = av_text(root, "note");
    t.unknown = av_text(root, "unknown");
    t.n_points = av_count(pts);
    if ((rc = av_calloc((void **)&t.points, t.n_points, sizeof *t.points, "points", err)))
        goto fail;
    size_t i = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, pts)
    {
        sm_apiview_trend_point *x = &t.points[i++];
        x->finished_ms = av_num(p, "finished_ms");
        x->median = av_num(p, "median");
        x->ci_lo = av_num(p, "ci_lo");
        x->ci_hi = av_num(p, "ci_hi");
        x->n = av_num(p, "n");
        x->run = av_text(p, "run");
        x->flagged = av_true(p, "flagged");
    }
    *out = t;
    return 0;
fail:
    sm_apiview_trend_fini(&t);
    return rc;
}

void sm_apiview_trend_fini(sm_apiview_trend *t)
{
    free(t->points);
    sm_apiview_doc_free(t->doc);
    memset(t, 0, sizeof *t);
}

int sm_apiview_anomalies_decode(const char *json, size_t len, sm_apiview_anomalies *out,
                                sm_error *err)
{
    static const char none[] = "no \"anomalies\" list";
    memset(out, 0, sizeof *out);
    sm_apiview_anomalies a;
    memset(&a, 0, sizeof a);
    int rc = av_doc_parse(json, len, none, &a.doc, err);
    if (rc)
        return rc;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(a.doc->root, "anomalies");
    if (!cJSON_IsArray(list)) {
        rc = sm_error_set(err, SM_EPARSE, "%s", none);
        goto fail;
    }
    a.n = av_count(list);
    if ((rc = av_calloc((void **)&a.v, a.n, sizeof *a.v, "anomalies", err)))
        goto fail;
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        sm_apiview_anomaly *x = &a.v[i++];
        x->kind = av_text(e, "kind");
        x->host = av_text(e, "host");
        x->test = av_text(e, "test");
        x->metric = av_text(e, "metric");
        x->unit = av_text(e, "unit");
        x->value = av_num(e, "value");
        x->reference = av_num(e, "reference");
        x->rel = av_num(e, "rel");
    }
    *out = a;
    return 0;
fail:
    sm_apiview_anomalies_fini(&a);
    return rc;
}

void sm_apiview_anomalies_fini(sm_apiview_anomalies *a)
{
    free(a->v);
    sm_apiview_doc_free(a->doc);
    memset(a, 0, sizeof *a);
}

/* Parses json for a view that reads an answer that is not JSON as an empty one: 0 with *doc
 * NULL then; SM_ENOMEM. */
static int parse_or_none(const char *json, size_t len, sm_apiview_doc **doc, sm_error *err)
{
    sm_error why = {0};
    int rc = av_doc_parse(json, len, "not JSON", doc, &why);
    if (rc == SM_EPARSE) {
        *doc = NULL;
        return 0;
    }
    if (rc)
        *err = why;
    return rc;
}

int sm_apiview_columns_decode(const char *json, size_t len, sm_apiview_columns *out, sm_error *err)
{
    memset(out, 0, sizeof *out);
    sm_apiview_columns c;
    memset(&c, 0, sizeof c);
    int rc = parse_or_none(json, len, &c.doc, err);
    if (rc)
        return rc;
    static const char *const lists[] = {"columns", "ratio_columns"};
    const cJSON *root = c.doc ? c.doc->root : NULL;
    for (size_t k = 0; k < 2; k++)
        c.n += av_count(cJSON_GetObjectItemCaseSensitive(root, lists[k]));
    if ((rc = av_calloc((void **)&c.v, c.n, sizeof *c.v, "columns", err))) {
        sm_apiview_columns_fini(&c);
        return rc;
    }
    size_t i = 0;
    for (size_t k = 0; k < 2; k++) {
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, lists[k]))
        {
            c.v[i].label = av_text(e, "label");
            c.v[i++].brief = av_text(e, "short");
        }
    }
    *out = c;
    return 0;
}

void sm_apiview_columns_fini(sm_apiview_columns *c)
{
    free(c->v);
    sm_apiview_doc_free(c->doc);
    memset(c, 0, sizeof *c);
}

int sm_apiview_grid_tests_decode(const char *json, size_t len, sm_apiview_grid_tests *out,
                                 sm_error *err)
{
    memset(out, 0, sizeof *out);
    sm_apiview_grid_tests g;
    memset(&g, 0, sizeof g);
    int rc = parse_or_none(json, len, &g.doc, err);
    if (rc)
        return rc;
    const cJSON *root = g.doc ? g.doc->root : NULL;
    const cJSON *tests = cJSON_GetObjectItemCaseSensitive(root, "tests");
    const cJSON *cells = cJSON_GetObjectItemCaseSensitive(root, "cells");
    const cJSON *e;
    if ((rc = av_calloc((void **)&g.tests, av_count(tests), sizeof *g.tests, "tests", err)) ||
        (rc = av_calloc((void **)&g.cell_runs, av_count(cells), sizeof *g.cell_runs, "cells",
                        err))) {
        sm_apiview_grid_tests_fini(&g);
        return rc;
    }
    cJSON_ArrayForEach(e, tests)
    {
        if (cJSON_IsString(e))
            g.tests[g.n_tests++] = e->valuestring;
    }
    cJSON_ArrayForEach(e, cells)
    {
        g.cell_runs[g.n_cells++] = av_text(e, "run");
    }
    *out = g;
    return 0;
}

void sm_apiview_grid_tests_fini(sm_apiview_grid_tests *g)
{
    free(g->tests);
    free(g->cell_runs);
    sm_apiview_doc_free(g->doc);
    memset(g, 0, sizeof *g);
}
