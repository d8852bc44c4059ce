/* Views of a run's jobs: a page of GET /api/runs/ID/jobs, and a cell's repetitions. */
#include "coordinator/cli/apiview_internal.h"

#include <stdlib.h>
#include <string.h>

/* The host block of a stored result when it says the host was disturbed; NULL otherwise. */
static const cJSON *disturbed_host(const cJSON *result)
{
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(result, "host");
    return av_true(host, "disturbed") ? host : NULL;
}

/* An integer member as cJSON reads it (valueint: the number, saturated to an int). */
static bool get_int(const cJSON *o, const char *k, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v))
        return false;
    *out = v->valueint;
    return true;
}

static void job_from(const cJSON *j, sm_apiview_job *x)
{
    x->id = av_str(j, "id");
    x->host = av_str(j, "host");
    x->peer = av_str(j, "peer");
    x->test = av_str(j, "test");
    x->state = av_str(j, "state");
    x->reason = av_str(j, "reason");
    x->has_repetition = get_int(j, "repetition", &x->repetition);
    x->duration_ms = av_num(j, "duration_ms");
    const cJSON *hl = cJSON_GetObjectItemCaseSensitive(j, "headline");
    x->headline = av_num(hl, "value");
    x->headline_unit = av_str(hl, "unit");
    x->warmup = av_true(j, "warmup");
    /* A pair job's result is its client's; the server's side may be the disturbed one. */
    const cJSON *host = disturbed_host(cJSON_GetObjectItemCaseSensitive(j, "result"));
    const cJSON *sides = cJSON_GetObjectItemCaseSensitive(j, "sides");
    static const char *const roles[] = {"client", "server"};
    for (size_t i = 0; !host && i < 2; i++)
        host = disturbed_host(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(sides, roles[i]), "result"));
    x->disturbed = host ? av_text(host, "disturbed_reason") : NULL;
}

int sm_apiview_jobs_page_decode(const char *json, size_t len, sm_apiview_jobs_page *out,
                                sm_error *err)
{
    static const char none[] = "no \"jobs\" array";
    memset(out, 0, sizeof *out);
    sm_apiview_jobs_page p;
    memset(&p, 0, sizeof p);
    int rc = av_doc_parse(json, len, none, &p.doc, err);
    if (rc)
        return rc;
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(p.doc->root, "jobs");
    if (!cJSON_IsArray(jobs)) {
        rc = sm_error_set(err, SM_EPARSE, "%s", none);
        goto fail;
    }
    p.n = av_count(jobs);
    if ((rc = av_calloc((void **)&p.jobs, p.n, sizeof *p.jobs, "jobs", err)))
        goto fail;
    size_t i = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        job_from(j, &p.jobs[i++]);
    }
    p.next = av_str(p.doc->root, "next");
    *out = p;
    return 0;
fail:
    sm_apiview_jobs_page_fini(&p);
    return rc;
}

void sm_apiview_jobs_page_fini(sm_apiview_jobs_page *p)
{
    free(p->jobs);
    sm_apiview_doc_free(p->doc);
    memset(p, 0, sizeof *p);
}

void sm_apiview_jobs_move(sm_apiview_jobs_page *page, sm_apiview_doc *list)
{
    /* The typed jobs point into the items that move: they go first. */
    free(page->jobs);
    page->jobs = NULL;
    page->n = 0;
    cJSON *jobs = cJSON_GetObjectItemCaseSensitive(page->doc->root, "jobs");
    for (cJSON *j; (j = cJSON_DetachItemFromArray(jobs, 0)) != NULL;)
        cJSON_AddItemToArray(list->root, j);
}

int sm_apiview_cell_values_decode(const char *json, size_t len, sm_apiview_cell_values *out,
                                  sm_error *err)
{
    static const char none[] = "no \"values\" array";
    memset(out, 0, sizeof *out);
    sm_apiview_cell_values c;
    memset(&c, 0, sizeof c);
    int rc = av_doc_parse(json, len, none, &c.doc, err);
    if (rc)
        return rc;
    const cJSON *root = c.doc->root;
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(root, "values");
    if (!cJSON_IsArray(values)) {
        rc = sm_error_set(err, SM_EPARSE, "%s", none);
        goto fail;
    }
    c.row = av_str(root, "row");
    c.test = av_str(root, "test");
    c.metric = av_str(root, "metric");
    c.unit = av_str(root, "unit");
    c.median = av_num(root, "median");
    c.ci95_low = av_num(root, "ci95_low");
    c.ci95_high = av_num(root, "ci95_high");
    c.has_n = get_int(root, "n", &c.n);
    c.n_values = av_count(values);
    if ((rc = av_calloc((void **)&c.values, c.n_values, sizeof *c.values, "values", err)))
        goto fail;
    size_t i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, values)
    {
        sm_apiview_cell_value *x = &c.values[i++];
        x->job = av_str(v, "job");
        x->state = av_str(v, "state");
        x->disturbed_reason = av_str(v, "disturbed_reason");
        x->has_repetition = get_int(v, "repetition", &x->repetition);
        x->value = av_num(v, "value");
        x->warmup = av_true(v, "warmup");
        x->counted = av_true(v, "counted");
        x->disturbed = av_true(v, "disturbed");
    }
    *out = c;
    return 0;
fail:
    sm_apiview_cell_values_fini(&c);
    return rc;
}

void sm_apiview_cell_values_fini(sm_apiview_cell_values *c)
{
    free(c->values);
    sm_apiview_doc_free(c->doc);
    memset(c, 0, sizeof *c);
}
