/* GET /api/jobs/{id} (the full job resource) and GET /api/runs/{id}/jobs (a run's jobs in run
 * order, paged and filtered). */
#include "coordinator/api/api.h"
#include "coordinator/api/internal.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/analysis/export.h"
#include "proto/codec.h"
#include "proto/envelope.h"
#include "proto/hist.h"
#include "proto/json.h"

#define JOBS_LIMIT_DEFAULT 100
#define JOBS_LIMIT_MAX     1000

/* Embeds a stored JSON text; one that does not parse (or none) becomes null. */
static void add_raw(cJSON *o, const char *k, const char *json)
{
    cJSON *v = json ? cJSON_Parse(json) : NULL;
    cJSON_AddItemToObject(o, k, v ? v : cJSON_CreateNull());
}

static void add_ms_or_null(cJSON *o, const char *k, bool have, int64_t v)
{
    if (have)
        cJSON_AddNumberToObject(o, k, (double)v);
    else
        cJSON_AddNullToObject(o, k);
}

/* "test" and "headline": the table's column for the job's params, and the value of its metric
 * in the result ({"metric","value","unit"}; null when there is no such value or the job failed,
 * whose figures the table never counts). */
static void add_test(cJSON *o, const char *params_json, const char *result_json)
{
    sm_params p;
    sm_error err = {0};
    if (!params_json || sm_codec_params_decode(params_json, strlen(params_json), &p, &err) != 0) {
        cJSON_AddNullToObject(o, "test");
        cJSON_AddNullToObject(o, "headline");
        return;
    }
    sm_table_col col;
    sm_export_column(&p, &col);
    cJSON_AddStringToObject(o, "test", col.label);
    double v = NAN;
    sm_result r;
    sm_result_init(&r);
    sm_metric m;
    if (result_json && sm_codec_result_decode(result_json, strlen(result_json), &r, &err) == 0 &&
        r.ok && sm_metric_lookup(col.metric, &m) == 0)
        v = sm_result_get(&r, m);
    sm_result_fini(&r);
    if (!isfinite(v)) {
        cJSON_AddNullToObject(o, "headline");
        return;
    }
    cJSON *h = cJSON_AddObjectToObject(o, "headline");
    if (!h)
        return;
    cJSON_AddStringToObject(h, "metric", col.metric);
    sm_json_put(h, "value", sm_json_double(v));
    cJSON_AddStringToObject(h, "unit", col.unit);
}

/* A pair job's two sides as stored: {"server":{"role","host","result"},"client":{...}};
 * json[0] is the server's result text, json[1] the client's (NULL: none yet). */
static const char *const ROLES[] = {"server", "client"};

static void add_sides(cJSON *o, const sm_job_row *row, char *const json[2])
{
    cJSON *sides = cJSON_AddObjectToObject(o, "sides");
    for (size_t i = 0; sides && i < 2; i++) {
        cJSON *s = cJSON_AddObjectToObject(sides, ROLES[i]);
        if (s) {
            cJSON_AddStringToObject(s, "role", ROLES[i]);
            cJSON_AddStringToObject(s, "host", i == 0 ? row->peer : row->host);
            add_raw(s, "result", json[i]);
        }
    }
}

/* Every metric result_json holds, in the metrics' order: [{"metric","value","unit"}]; *r is
 * the decoded result (the caller finis it). null when there is no result or it does not
 * decode. */
static cJSON *metric_list(const char *result_json, sm_result *r)
{
    sm_error err = {0};
    if (!result_json || sm_codec_result_decode(result_json, strlen(result_json), r, &err) != 0)
        return cJSON_CreateNull();
    cJSON *arr = cJSON_CreateArray();
    for (int m = 0; arr && m < SM_M__COUNT; m++) {
        if (!sm_result_has(r, (sm_metric)m))
            continue;
        cJSON *e = cJSON_CreateObject();
        if (!e)
            break;
        cJSON_AddStringToObject(e, "metric", sm_metric_name((sm_metric)m));
        sm_json_put(e, "value", sm_json_double(sm_result_get(r, (sm_metric)m)));
        cJSON_AddStringToObject(e, "unit", sm_metric_unit((sm_metric)m));
        cJSON_AddItemToArray(arr, e);
    }
    return arr;
}

/* The inner samples of a result: the latency of each round trip (rr) or connect (connect)
 * the job measured, as the histogram holds them, in microseconds: {"what","unit","count",
 * "min","max","buckets":[{"low","high","count"}]}; null when the result has none. */
static cJSON *inner_samples(const sm_result *r, const char *params_json)
{
    if (!r->hist || sm_hist_count(r->hist) == 0)
        return cJSON_CreateNull();
    sm_params p;
    sm_error err = {0};
    const bool have_p =
        params_json && sm_codec_params_decode(params_json, strlen(params_json), &p, &err) == 0;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "what",
                            !have_p                       ? "latency"
                            : p.workload == SM_WL_CONNECT ? "connect latency"
                                                          : "round-trip latency");
    cJSON_AddStringToObject(o, "unit", "us");
    cJSON_AddNumberToObject(o, "count", (double)sm_hist_count(r->hist));
    cJSON_AddNumberToObject(o, "min", (double)sm_hist_min(r->hist) / 1000.0);
    cJSON_AddNumberToObject(o, "max", (double)sm_hist_max(r->hist) / 1000.0);
    cJSON *b = cJSON_AddArrayToObject(o, "buckets");
    size_t cursor = 0, index;
    uint64_t count, lo, hi;
    while (b && sm_hist_next(r->hist, &cursor, &index, &count) == 0) {
        sm_hist_bucket_range(index, &lo, &hi);
        cJSON *e = cJSON_CreateObject();
        if (!e)
            break;
        cJSON_AddNumberToObject(e, "low", (double)lo / 1000.0);
        cJSON_AddNumberToObject(e, "high", (double)hi / 1000.0);
        cJSON_AddNumberToObject(e, "count", (double)count);
        cJSON_AddItemToArray(b, e);
    }
    return o;
}

/* "samples": every figure of the job's result with its unit ("metrics"), each side's for a
 * pair job ("sides": {"client":[...],"server":[...]}, else null) and the inner samples of a
 * latency histogram ("inner", else null); null while the job has no result. */
static void add_samples(cJSON *o, const sm_job_row *row, const char *result, char *const side[2])
{
    if (!result) {
        cJSON_AddNullToObject(o, "samples");
        return;
    }
    cJSON *s = cJSON_AddObjectToObject(o, "samples");
    if (!s)
        return;
    sm_result r;
    sm_result_init(&r);
    cJSON_AddItemToObject(s, "metrics", metric_list(result, &r));
    cJSON *inner = inner_samples(&r, row->params_json);
    sm_result_fini(&r);
    if (!row->peer[0]) {
        cJSON_AddNullToObject(s, "sides");
    } else {
        cJSON *sides = cJSON_AddObjectToObject(s, "sides");
        for (size_t i = 0; sides && i < 2; i++) {
            sm_result sr;
            sm_result_init(&sr);
            cJSON_AddItemToObject(sides, ROLES[i], metric_list(side[i], &sr));
            sm_result_fini(&sr);
        }
    }
    cJSON_AddItemToObject(s, "inner", inner ? inner : cJSON_CreateNull());
}

/* The full job resource of row; NULL with err set on a store failure or out of memory. */
static cJSON *job_json(sm_api_ctx *a, const sm_job_row *row, sm_error *err)
{
    char *result = NULL, *side[2] = {NULL, NULL};
    cJSON *o = NULL;
    if (sm_store_result_get(a->st, row->id, row->attempt, &result, err) != 0)
        return NULL;
    for (size_t i = 0; row->peer[0] && i < 2; i++)
        if (sm_store_side_get(a->st, row->id, row->attempt, ROLES[i], &side[i], err) != 0)
            goto out;
    o = cJSON_CreateObject();
    if (!o) {
        sm_error_set(err, SM_ENOMEM, "out of memory");
        goto out;
    }
    sm_json_put_u64_str(o, "id", row->id);
    cJSON_AddStringToObject(o, "host", row->host);
    cJSON_AddStringToObject(o, "state", sm_job_state_name(row->state));
    cJSON_AddStringToObject(o, "reason", row->reason);
    cJSON_AddNumberToObject(o, "attempt", row->attempt);
    add_raw(o, "params", row->params_json);
    add_raw(o, "result", result);
    cJSON_AddNumberToObject(o, "created_ms", (double)row->created_ms);
    cJSON_AddNumberToObject(o, "assigned_ms", (double)row->assigned_ms);
    cJSON_AddNumberToObject(o, "started_ms", (double)row->started_ms);
    cJSON_AddNumberToObject(o, "finished_ms", (double)row->finished_ms);
    /* From the start the agent reported, else from the assignment (a job may end before its
     * agent says it started). */
    const int64_t from = row->started_ms > 0 ? row->started_ms : row->assigned_ms;
    add_ms_or_null(o, "duration_ms", from > 0 && row->finished_ms >= from, row->finished_ms - from);
    const bool in_run = row->run_id != 0;
    if (in_run)
        sm_json_put_u64_str(o, "run", row->run_id);
    else
        cJSON_AddNullToObject(o, "run");
    add_ms_or_null(o, "cell", in_run, row->cell);
    add_ms_or_null(o, "repetition", in_run, row->rep);
    cJSON_AddBoolToObject(o, "warmup", row->warmup);
    if (row->peer[0])
        cJSON_AddStringToObject(o, "peer", row->peer);
    else
        cJSON_AddNullToObject(o, "peer");
    add_test(o, row->params_json, result);
    add_samples(o, row, result, side);
    if (row->peer[0])
        add_sides(o, row, side);
out:
    free(result);
    free(side[0]);
    free(side[1]);
    return o;
}

int sm_api_get_job(sm_api_ctx *a, uint64_t id, char **resp, size_t *len)
{
    sm_job_row row;
    sm_error err = {0};
    if (sm_store_job_get(a->st, id, &row, &err) != 0)
        return sm_api_reply_error(resp, len, 404, "no such job", "id");
    cJSON *o = job_json(a, &row, &err);
    sm_job_row_fini(&row);
    if (!o)
        return sm_api_reply_error(resp, len, 500, err.msg, NULL);
    return sm_api_reply(resp, len, 200, sm_json_finish(o, true, 0, "api", NULL));
}

/* ---- a run's jobs ---- */

typedef struct jobs_query {
    uint32_t limit;
    uint64_t after; /* 0: from the first */
    bool have_host, have_cell, have_state;
    char host[SM_NAME_MAX + 1];
    uint32_t cell;
    sm_job_state state;
} jobs_query;

/* Parses limit, after, host, cell and state; on a bad value, the field's name in *bad. */
static bool parse_jobs_query(const char *query, jobs_query *q, const char **bad)
{
    *q = (jobs_query){.limit = JOBS_LIMIT_DEFAULT};
    sm_query_pair pr;
    for (const char *c = query; sm_query_next(&c, &pr);) {
        const char *p = pr.key, *v = pr.val;
        const size_t kn = pr.klen, vn = pr.vlen;
        char val[SM_NAME_MAX + 1];
        const bool fits = vn < sizeof val;
        if (fits) {
            memcpy(val, v, vn);
            val[vn] = '\0';
        }
#define KEY(k) (kn == sizeof(k) - 1 && strncmp(p, k, kn) == 0)
        uint64_t num;
        if (KEY("limit")) {
            *bad = "limit";
            if (!sm_query_id(v, vn, &num) || num < 1 || num > JOBS_LIMIT_MAX)
                return false;
            q->limit = (uint32_t)num;
        } else if (KEY("after")) {
            *bad = "after";
            if (!sm_query_id(v, vn, &q->after) || q->after == 0)
                return false;
        } else if (KEY("host")) {
            *bad = "host";
            if (!fits || !sm_name_valid(val))
                return false;
            memcpy(q->host, val, vn + 1);
            q->have_host = true;
        } else if (KEY("cell")) {
            *bad = "cell";
            if (!sm_query_id(v, vn, &num) || num > UINT32_MAX)
                return false;
            q->cell = (uint32_t)num;
            q->have_cell = true;
        } else if (KEY("state")) {
            *bad = "state";
            bool found = false;
            for (int s = SM_JOB_QUEUED; fits && s <= SM_JOB_FAILED && !found; s++)
                if (strcmp(val, sm_job_state_name((sm_job_state)s)) == 0) {
                    q->state = (sm_job_state)s;
                    found = true;
                }
            if (!found)
                return false;
            q->have_state = true;
        }
#undef KEY
    }
    return true;
}

/* A pair job matches the host filter by either of its hosts. */
static bool job_matches(const sm_job_row *j, const jobs_query *q)
{
    if (q->have_host && strcmp(j->host, q->host) != 0 && strcmp(j->peer, q->host) != 0)
        return false;
    if (q->have_cell && j->cell != q->cell)
        return false;
    return !q->have_state || j->state == q->state;
}

int sm_api_get_run_jobs(sm_api_ctx *a, uint64_t run_id, const char *query, char **resp, size_t *len)
{
    jobs_query q;
    const char *bad = NULL;
    if (!parse_jobs_query(query, &q, &bad)) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: expected %s", bad,
                 strcmp(bad, "limit") == 0   ? "a number from 1 to 1000"
                 : strcmp(bad, "host") == 0  ? "an agent name ([A-Za-z0-9._-], 1 to 64)"
                 : strcmp(bad, "state") == 0 ? "queued, assigned, running, done or failed"
                                             : "a number");
        return sm_api_reply_error(resp, len, 400, msg, bad);
    }
    sm_run_row run;
    sm_error err = {0};
    if (sm_store_run_get(a->st, run_id, &run, &err) != 0)
        return sm_api_reply_error(resp, len, 404, "no such run", "id");
    sm_run_row_fini(&run);
    sm_job_row *jobs = NULL;
    size_t nj = 0;
    if (sm_store_run_jobs(a->st, run_id, &jobs, &nj, &err) != 0)
        return sm_api_reply_error(resp, len, 500, err.msg, NULL);
    size_t start = 0;
    if (q.after) {
        while (start < nj && jobs[start].id != q.after)
            start++;
        if (start == nj) {
            sm_store_jobs_free(jobs, nj);
            return sm_api_reply_error(resp, len, 400, "after: not a job of this run", "after");
        }
        start++;
    }
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = cJSON_CreateArray();
    int status = 200;
    uint64_t total = 0, last = 0;
    bool more = false;
    size_t shown = 0;
    for (size_t i = 0; root && arr && i < nj; i++) {
        if (!job_matches(&jobs[i], &q))
            continue;
        total++;
        if (i < start)
            continue;
        if (shown == q.limit) {
            more = true;
            continue;
        }
        cJSON *o = job_json(a, &jobs[i], &err);
        if (!o) {
            status = 500;
            break;
        }
        cJSON_AddItemToArray(arr, o);
        last = jobs[i].id;
        shown++;
    }
    sm_store_jobs_free(jobs, nj);
    if (status != 200 || !root || !arr) {
        cJSON_Delete(root);
        cJSON_Delete(arr);
        return sm_api_reply_error(resp, len, 500, err.msg[0] ? err.msg : "out of memory", NULL);
    }
    sm_json_put_u64_str(root, "run", run_id);
    sm_json_put_u64(root, "total", total);
    if (more)
        sm_json_put_u64_str(root, "next", last);
    else
        cJSON_AddNullToObject(root, "next");
    cJSON_AddItemToObject(root, "jobs", arr);
    return sm_api_reply(resp, len, 200, sm_json_finish(root, true, 0, "api", NULL));
}

/* ---- a host's latest jobs ---- */

int sm_api_get_agent_jobs(sm_api_ctx *a, const char *name, const char *query, char **resp,
                          size_t *len)
{
    char msg[160];
    if (!sm_name_valid(name))
        return sm_api_reply_error(resp, len, 400, "agent name: expected 1 to 64 of [A-Za-z0-9._-]",
                                  "name");
    int64_t limit = SM_API_AGENT_JOBS_DEFAULT;
    char num[24];
    const int r = sm_query_get(query, "limit", num, sizeof num);
    if (r < 0 || (r == 1 && !sm_query_int(num, 1, SM_STORE_AGENT_JOBS_MAX, &limit))) {
        snprintf(msg, sizeof msg, "limit: expected a number from 1 to %d", SM_STORE_AGENT_JOBS_MAX);
        return sm_api_reply_error(resp, len, 400, msg, "limit");
    }
    /* The store, not the live fleet: this route is built off the loop, and a host that is lost
     * or not yet back after a restart still has its jobs. */
    sm_agent_row agent;
    sm_error err = {0};
    if (sm_store_agent_get(a->st, name, &agent, &err) != 0) {
        if (err.code != SM_EINVAL)
            return sm_api_reply_error(resp, len, 500, err.msg, NULL);
        snprintf(msg, sizeof msg, "no agent named '%s' has registered", name);
        return sm_api_reply_error(resp, len, 404, msg, "name");
    }
    sm_agent_row_fini(&agent);
    sm_job_row *jobs = NULL;
    size_t nj = 0;
    if (sm_store_agent_jobs(a->st, name, (size_t)limit, &jobs, &nj, &err) != 0)
        return sm_api_reply_error(resp, len, 500, err.msg, NULL);
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = root ? cJSON_AddArrayToObject(root, "jobs") : NULL;
    bool ok = arr && cJSON_AddStringToObject(root, "agent", name) &&
              cJSON_AddNumberToObject(root, "limit", (double)limit);
    for (size_t i = 0; ok && i < nj; i++) {
        cJSON *o = job_json(a, &jobs[i], &err);
        ok = o && cJSON_AddItemToArray(arr, o);
        if (o && !ok)
            cJSON_Delete(o);
    }
    sm_store_jobs_free(jobs, nj);
    if (!ok) {
        cJSON_Delete(root);
        return sm_api_reply_error(resp, len, 500, err.msg[0] ? err.msg : "out of memory", NULL);
    }
    return sm_api_reply(resp, len, 200, sm_json_finish(root, true, 0, "api", NULL));
}

/* ---- a cell's repetitions ---- */

/* The table's figures for the cell in row `row` and column `test` of the run's table (the
 * JSON GET /api/runs/ID/table gives): "median", "ci95_low", "ci95_high" and "n" onto o, null
 * when the table has no such cell (yet). */
static void add_table_figures(sm_api_ctx *a, cJSON *o, uint64_t run_id, bool pair,
                              bool with_disturbed, const char *row, const char *test)
{
    char q[96];
    snprintf(q, sizeof q, "format=json&scope=%s%s", pair ? "pair" : "local",
             with_disturbed ? "&disturbed=include" : "");
    char *body = sm_reports_body(&a->reports, run_id, SM_REPORT_TABLE, q);
    cJSON *t = body ? cJSON_Parse(body) : NULL;
    free(body);
    int r = -1, c = -1, i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(t, "rows"))
    {
        if (r < 0 && cJSON_IsString(e) && strcmp(e->valuestring, row) == 0)
            r = i;
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(t, "columns"))
    {
        const char *l = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "label"));
        if (c < 0 && l && strcmp(l, test) == 0)
            c = i;
        i++;
    }
    const cJSON *cell = NULL;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(t, "cells"))
    {
        const cJSON *er = cJSON_GetObjectItemCaseSensitive(e, "row"),
                    *ec = cJSON_GetObjectItemCaseSensitive(e, "column");
        if (r >= 0 && c >= 0 && cJSON_IsNumber(er) && cJSON_IsNumber(ec) && er->valueint == r &&
            ec->valueint == c)
            cell = e;
    }
    static const char *const keys[] = {"median", "ci95_low", "ci95_high", "n"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cell, keys[k]);
        if (cJSON_IsNumber(v))
            sm_json_put(o, keys[k], sm_json_double(v->valuedouble));
        else
            cJSON_AddNullToObject(o, keys[k]);
    }
    cJSON_Delete(t);
}

/* One job of the cell: {"job","repetition","warmup","state","value","disturbed",
 * "disturbed_reason","counted"}; value is the headline metric's (null when the job has none);
 * disturbed_reason the agent's reason (null when clean); counted says whether the table's
 * statistics hold it. */
static cJSON *cell_value(sm_api_ctx *a, const sm_job_row *j, sm_metric m, bool with_disturbed,
                         sm_error *err)
{
    char *json = NULL;
    if (sm_store_result_get(a->st, j->id, j->attempt, &json, err) != 0)
        return NULL;
    sm_result r;
    sm_result_init(&r);
    sm_error derr = {0};
    const bool have = json && sm_codec_result_decode(json, strlen(json), &r, &derr) == 0;
    free(json);
    const double v = have ? sm_result_get(&r, m) : NAN;
    const bool ok = have && r.ok && isfinite(v), disturbed = have && r.host.disturbed;
    char why[sizeof r.host.reason];
    snprintf(why, sizeof why, "%s", disturbed ? r.host.reason : "");
    sm_result_fini(&r);
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        sm_error_set(err, SM_ENOMEM, "out of memory");
        return NULL;
    }
    sm_json_put_u64_str(o, "job", j->id);
    cJSON_AddNumberToObject(o, "repetition", j->rep);
    cJSON_AddBoolToObject(o, "warmup", j->warmup);
    cJSON_AddStringToObject(o, "state", sm_job_state_name(j->state));
    if (ok)
        sm_json_put(o, "value", sm_json_double(v));
    else
        cJSON_AddNullToObject(o, "value");
    cJSON_AddBoolToObject(o, "disturbed", disturbed);
    if (disturbed)
        cJSON_AddStringToObject(o, "disturbed_reason", why);
    else
        cJSON_AddNullToObject(o, "disturbed_reason");
    cJSON_AddBoolToObject(o, "counted", ok && !j->warmup && (with_disturbed || !disturbed));
    return o;
}

int sm_api_get_run_cell(sm_api_ctx *a, uint64_t run_id, uint64_t idx, const char *query,
                        char **resp, size_t *len)
{
    sm_run_row run;
    sm_error err = {0};
    if (sm_store_run_get(a->st, run_id, &run, &err) != 0)
        return sm_api_reply_error(resp, len, 404, "no such run", "id");
    sm_run_row_fini(&run);
    sm_cell_row *cells = NULL;
    sm_job_row *jobs = NULL;
    size_t nc = 0, nj = 0;
    cJSON *root = NULL;
    int status = 500;
    if (sm_store_cells_list(a->st, run_id, &cells, &nc, &err) != 0 ||
        sm_store_run_jobs(a->st, run_id, &jobs, &nj, &err) != 0)
        goto out;
    const sm_cell_row *c = NULL;
    for (size_t i = 0; i < nc && !c; i++)
        if (cells[i].idx == idx)
            c = &cells[i];
    sm_params p;
    if (!c || !c->params_json ||
        sm_codec_params_decode(c->params_json, strlen(c->params_json), &p, &err) != 0) {
        status = sm_api_reply_error(resp, len, 404, "no such cell in this run", "cell");
        goto done;
    }
    sm_table_col col;
    sm_export_column(&p, &col);
    sm_metric m;
    if (sm_metric_lookup(col.metric, &m) != 0)
        goto out;
    const bool with_disturbed = query && strstr(query, "disturbed=include");
    const bool pair = c->peer[0] != '\0';
    char row[2 * 65 + 2];
    snprintf(row, sizeof row, "%s%s%s", c->host, pair ? "->" : "", pair ? c->peer : "");
    root = cJSON_CreateObject();
    cJSON *values = cJSON_CreateArray();
    if (!root || !values) {
        cJSON_Delete(values);
        goto out;
    }
    sm_json_put_u64_str(root, "run", run_id);
    cJSON_AddNumberToObject(root, "cell", (double)idx);
    cJSON_AddStringToObject(root, "host", c->host);
    if (pair)
        cJSON_AddStringToObject(root, "peer", c->peer);
    else
        cJSON_AddNullToObject(root, "peer");
    cJSON_AddStringToObject(root, "row", row);
    cJSON_AddStringToObject(root, "test", col.label);
    cJSON_AddStringToObject(root, "metric", col.metric);
    cJSON_AddStringToObject(root, "unit", col.unit);
    cJSON_AddStringToObject(root, "disturbed", with_disturbed ? "include" : "exclude");
    cJSON_AddItemToObject(root, "values", values);
    for (size_t i = 0; i < nj; i++) {
        if (jobs[i].cell != idx)
            continue;
        cJSON *v = cell_value(a, &jobs[i], m, with_disturbed, &err);
        if (!v)
            goto out;
        cJSON_AddItemToArray(values, v);
    }
    add_table_figures(a, root, run_id, pair, with_disturbed, row, col.label);
    status = sm_api_reply(resp, len, 200, sm_json_finish(root, true, 0, "api", NULL));
    root = NULL;
    goto done;
out:
    status = sm_api_reply_error(resp, len, 500, err.msg[0] ? err.msg : "out of memory", NULL);
done:
    cJSON_Delete(root);
    sm_store_cells_free(cells, nc);
    sm_store_jobs_free(jobs, nj);
    return status;
}
