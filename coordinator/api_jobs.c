/* GET /api/jobs/{id} (the full job resource) and GET /api/runs/{id}/jobs (a run's jobs in run
 * order, paged and filtered). */
#include "coordinator/api.h"
#include "coordinator/api_int.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/export.h"
#include "proto/codec.h"
#include "proto/envelope.h"
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
    cJSON_AddNumberToObject(h, "value", v);
    cJSON_AddStringToObject(h, "unit", col.unit);
}

/* A pair job's two sides as stored: {"server":{"role","host","result"},"client":{...}}. */
static int add_sides(sm_api_ctx *a, cJSON *o, const sm_job_row *row, sm_error *err)
{
    cJSON *sides = cJSON_AddObjectToObject(o, "sides");
    static const char *const roles[] = {"server", "client"};
    for (size_t i = 0; sides && i < 2; i++) {
        char *json = NULL;
        if (sm_store_side_get(a->st, row->id, row->attempt, roles[i], &json, err) != 0)
            return err->code;
        cJSON *s = cJSON_AddObjectToObject(sides, roles[i]);
        if (s) {
            cJSON_AddStringToObject(s, "role", roles[i]);
            cJSON_AddStringToObject(s, "host", i == 0 ? row->peer : row->host);
            add_raw(s, "result", json);
        }
        free(json);
    }
    return 0;
}

/* The full job resource of row; NULL with err set on a store failure or out of memory. */
static cJSON *job_json(sm_api_ctx *a, const sm_job_row *row, sm_error *err)
{
    char *result = NULL;
    if (sm_store_result_get(a->st, row->id, row->attempt, &result, err) != 0)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        free(result);
        sm_error_set(err, SM_ENOMEM, "out of memory");
        return NULL;
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
    /* A result that carries its repetitions' values shows them; one value per job has none. */
    cJSON *parsed = result ? cJSON_Parse(result) : NULL;
    cJSON *samples = parsed ? cJSON_DetachItemFromObject(parsed, "samples") : NULL;
    if (cJSON_IsArray(samples))
        cJSON_AddItemToObject(o, "samples", samples);
    else
        cJSON_Delete(samples);
    cJSON_Delete(parsed);
    free(result);
    if (row->peer[0] && add_sides(a, o, row, err) != 0) {
        cJSON_Delete(o);
        return NULL;
    }
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
    for (const char *p = query; p && *p;) {
        const char *amp = strchr(p, '&');
        const size_t n = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        const size_t kn = eq ? (size_t)(eq - p) : n;
        const char *v = eq ? eq + 1 : p + n;
        const size_t vn = (size_t)(p + n - v);
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
            if (!sm_api_parse_id(v, vn, &num) || num < 1 || num > JOBS_LIMIT_MAX)
                return false;
            q->limit = (uint32_t)num;
        } else if (KEY("after")) {
            *bad = "after";
            if (!sm_api_parse_id(v, vn, &q->after) || q->after == 0)
                return false;
        } else if (KEY("host")) {
            *bad = "host";
            if (!fits || !sm_name_valid(val))
                return false;
            memcpy(q->host, val, vn + 1);
            q->have_host = true;
        } else if (KEY("cell")) {
            *bad = "cell";
            if (!sm_api_parse_id(v, vn, &num) || num > UINT32_MAX)
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
        p = amp ? amp + 1 : NULL;
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
