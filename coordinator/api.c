/* HTTP routes: /healthz, /api/agents, /api/jobs, /api/runs and their tables and anomalies. */
#include "coordinator/api.h"

#include <inttypes.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/analysis.h"
#include "coordinator/apijson.h"
#include "coordinator/export.h"
#include "coordinator/spec.h"
#include "coordinator/table.h"
#include "proto/clock.h"
#include "proto/codec.h"
#include "proto/log.h"

static int64_t now_ms(void)
{
    return sm_wall_ms();
}

static int reply(char **resp, size_t *len, int status, char *json)
{
    if (!json) {
        json = strdup("{\"error\":\"out of memory\"}");
        status = 500;
    }
    *resp = json;
    *len = json ? strlen(json) : 0;
    return status;
}

static int error(char **resp, size_t *len, int status, const char *msg, const char *field)
{
    return reply(resp, len, status, sm_api_error(msg, field));
}

bool sm_api_token_ok(const char *expected, const char *authorization)
{
    static const char bearer[] = "Bearer ";
    if (!authorization || strncmp(authorization, bearer, sizeof bearer - 1) != 0)
        return false;
    const char *got = authorization + sizeof bearer - 1;
    size_t n = strlen(expected), m = strlen(got);
    /* Compare over the expected length whatever was sent, so timing says nothing of how much
     * of a guess matched; a length mismatch fails after the same work. */
    char *padded = calloc(1, n + 1);
    if (!padded)
        return false;
    memcpy(padded, got, m < n ? m : n);
    bool ok = CRYPTO_memcmp(padded, expected, n) == 0 && m == n;
    free(padded);
    return ok;
}

/* One store row with the live view, which is in memory (the store is written only when
 * something changes); its strings point into row. */
static sm_api_agent api_agent(sm_api_ctx *a, const sm_agent_row *row)
{
    sm_agent_status st = row->status;
    int64_t seen = row->last_seen_ms;
    sm_control_agent_live(a->ctl, row->name, &st, &seen);
    return (sm_api_agent){row->name,
                          row->boot,
                          row->data_addr,
                          sm_agent_status_name(st),
                          row->labels_json,
                          row->facts_json,
                          row->first_seen_ms,
                          seen,
                          sm_control_agent_quarantined(a->ctl, row->name)};
}

char *sm_api_agent_item(sm_api_ctx *a, const sm_agent_row *row)
{
    const sm_api_agent out = api_agent(a, row);
    return sm_api_agent_encode(&out);
}

char *sm_api_agents_body(sm_api_ctx *a, sm_error *err)
{
    sm_agent_row *rows = NULL;
    size_t n = 0;
    if (sm_store_agents_list(a->st, &rows, &n, err) != 0)
        return NULL;
    sm_api_agent *out = calloc(n ? n : 1, sizeof *out);
    for (size_t i = 0; out && i < n; i++)
        out[i] = api_agent(a, &rows[i]);
    char *body = out ? sm_api_agents(out, n) : NULL;
    if (!body)
        sm_error_set(err, SM_ENOMEM, "out of memory");
    free(out);
    sm_store_agents_free(rows, n);
    return body;
}

static int get_agents(sm_api_ctx *a, char **resp, size_t *len)
{
    sm_error err = {0};
    char *body = sm_api_agents_body(a, &err);
    return body ? reply(resp, len, 200, body) : error(resp, len, 500, err.msg, NULL);
}

static int get_job(sm_api_ctx *a, const char *id_text, char **resp, size_t *len)
{
    char *end;
    unsigned long long id = strtoull(id_text, &end, 10);
    if (!*id_text || *end || id_text[0] == '-')
        return error(resp, len, 400, "job id: expected a number", "id");
    sm_job_row row;
    sm_error err = {0};
    if (sm_store_job_get(a->st, id, &row, &err) != 0)
        return error(resp, len, 404, "no such job", "id");
    char *result = NULL;
    sm_store_result_get(a->st, id, row.attempt, &result, &err);
    sm_api_job j = {row.id,         row.host,       sm_job_state_name(row.state),
                    row.reason,     row.attempt,    row.params_json,
                    result,         row.created_ms, row.assigned_ms,
                    row.started_ms, row.finished_ms};
    int status = reply(resp, len, 200, sm_api_job_encode(&j));
    free(result);
    sm_job_row_fini(&row);
    return status;
}

static int post_jobs(sm_api_ctx *a, const char *body, size_t blen, char **resp, size_t *len)
{
    sm_api_job_req *reqs = NULL;
    size_t n = 0;
    char field[SM_ERR_FIELD_MAX];
    sm_error err = {0};
    if (sm_api_jobs_parse(body, blen, &reqs, &n, &err) != 0)
        return error(resp, len, 400, err.msg, err.field);
    uint64_t *ids = calloc(n, sizeof *ids);
    if (!ids) {
        free(reqs);
        return error(resp, len, 500, "out of memory", NULL);
    }
    /* All or nothing: an unknown host anywhere in the list queues none of them. */
    int status = 0;
    for (size_t i = 0; i < n && !status; i++) {
        sm_agent_status st;
        int64_t seen;
        if (!sm_control_agent_live(a->ctl, reqs[i].host, &st, &seen)) {
            snprintf(field, sizeof field, "jobs[%zu].host", i);
            char msg[160];
            snprintf(msg, sizeof msg, "jobs[%zu].host: '%s' is not a registered agent", i,
                     reqs[i].host);
            status = error(resp, len, 400, msg, field);
        }
    }
    if (!status && sm_store_begin(a->st, &err) != 0)
        status = error(resp, len, 500, err.msg, NULL);
    for (size_t i = 0; i < n && !status; i++)
        if (sm_control_submit(a->ctl, reqs[i].host, &reqs[i].params, now_ms(), &ids[i], &err))
            status = error(resp, len, 500, err.msg, NULL);
    if (!status && sm_store_commit(a->st, &err) != 0)
        status = error(resp, len, 500, err.msg, NULL);
    if (status && status >= 500)
        sm_control_rollback(&a->ctl, now_ms(), NULL);
    if (!status && a->jobs_queued) {
        /* Each host once; the lookup is linear, but only over hosts already listed. */
        const char **hosts = calloc(n, sizeof *hosts);
        size_t nh = 0;
        for (size_t i = 0; hosts && i < n; i++) {
            size_t k = 0;
            while (k < nh && strcmp(hosts[k], reqs[i].host) != 0)
                k++;
            if (k == nh)
                hosts[nh++] = reqs[i].host;
        }
        if (hosts)
            a->jobs_queued(a->arg, hosts, nh);
        free(hosts);
    }
    if (!status) {
        sm_log(LOG_INFO, "SM-JOBS-QUEUED", "%zu jobs queued", n);
        status = reply(resp, len, 201, sm_api_job_ids(ids, n));
    }
    free(ids);
    free(reqs);
    return status;
}

static int get_health(sm_api_ctx *a, char **resp, size_t *len)
{
    sm_control_stats s;
    sm_control_get_stats(a->ctl, &s);
    uint64_t results = 0;
    sm_error err = {0};
    sm_agent_row *rows = NULL;
    size_t n = 0, online = 0, nq = 0;
    /* A store that cannot even be read is the failing store /healthz is there to report. */
    const bool unreadable = sm_store_result_count(a->st, &results, &err) != 0 ||
                            sm_store_agents_list(a->st, &rows, &n, &err) != 0;
    /* The agents with spool entries in quarantine: a result of theirs may be stuck there. */
    const char **q_names = calloc(n ? n : 1, sizeof *q_names);
    uint64_t *q_values = calloc(n ? n : 1, sizeof *q_values);
    for (size_t i = 0; i < n; i++) {
        sm_agent_status st = rows[i].status;
        int64_t seen;
        sm_control_agent_live(a->ctl, rows[i].name, &st, &seen);
        online += st != SM_AGENT_LOST;
        const uint64_t q = sm_control_agent_quarantined(a->ctl, rows[i].name);
        if (q && q_names && q_values) {
            q_names[nq] = rows[i].name;
            q_values[nq++] = q;
        }
    }
    static const char *const names[] = {"polls",          "results_stored",  "results_duplicate",
                                        "results_orphan", "jobs_dispatched", "ws_clients",
                                        "ws_rejected",    "ws_cut_slow",     "results_foreign"};
    const uint64_t *w = a->ws_counters;
    const uint64_t values[] = {s.polls,          s.results_stored,  s.results_duplicate,
                               s.results_orphan, s.jobs_dispatched, w ? w[0] : 0,
                               w ? w[1] : 0,     w ? w[2] : 0,      s.results_foreign};
    _Static_assert(sizeof names / sizeof names[0] == sizeof values / sizeof values[0],
                   "one value per counter name");
    /* The HTTP listener's counters follow, under their own names. */
    static const char *const http_names[] = {
        "http_clients",      "http_refused_host",  "http_refused_origin",
        "http_refused_type", "http_refused_token", "http_refused_method",
        "http_refused_size", "http_refused_slow",  "http_refused_full"};
    enum {
        N_BASE = sizeof names / sizeof names[0],
        N_HTTP = sizeof http_names / sizeof http_names[0]
    };
    const char *all_names[N_BASE + N_HTTP];
    uint64_t all_values[N_BASE + N_HTTP];
    for (size_t i = 0; i < N_BASE; i++) {
        all_names[i] = names[i];
        all_values[i] = values[i];
    }
    for (size_t i = 0; i < N_HTTP; i++) {
        all_names[N_BASE + i] = http_names[i];
        all_values[N_BASE + i] = a->http_counters ? a->http_counters[i] : 0;
    }
    const char *rej_names[SM_REJ__COUNT + 4];
    uint64_t rej_values[SM_REJ__COUNT + 4];
    size_t nr = 0;
    for (int r = 1; r < SM_REJ__COUNT; r++) {
        rej_names[nr] = sm_reject_name((sm_reject)r);
        rej_values[nr++] = a->rejects ? sm_rejects_count(a->rejects, (sm_reject)r) : 0;
    }
    /* Signed and fresh, but refused by the fleet's policy (coordinator/control.h). */
    const char *pol_names[] = {"wrong-host", "agents-cap", "data-addr", "reserved-name"};
    const uint64_t pol_values[] = {s.results_wrong_host, s.refused_agents_cap, s.refused_data_addr,
                                   s.refused_name};
    for (size_t i = 0; i < 4; i++) {
        rej_names[nr] = pol_names[i];
        rej_values[nr++] = pol_values[i];
    }
    /* A store whose commits fail loses every result it is sent: a monitor must see it. */
    char store_error[256];
    int64_t store_error_at = 0;
    const int64_t now = now_ms();
    bool failing = sm_store_failing(a->st, now, store_error, sizeof store_error, &store_error_at);
    if (unreadable) {
        failing = true;
        snprintf(store_error, sizeof store_error, "%s", err.msg);
        store_error_at = now;
    }
    int status =
        reply(resp, len, failing ? 503 : 200,
              sm_api_health(n, online, results, all_names, all_values, N_BASE + N_HTTP, rej_names,
                            rej_values, nr, q_names, q_values, nq, failing ? store_error : NULL,
                            store_error_at, sm_store_warning(a->st)));
    free(q_names);
    free(q_values);
    sm_store_agents_free(rows, n); /* after the encoding: q_names point into rows */
    return status;
}

/* ---- runs ---- */

static bool parse_id(const char *text, size_t len, uint64_t *id)
{
    char buf[24], *end;
    if (len == 0 || len >= sizeof buf || text[0] == '-')
        return false;
    memcpy(buf, text, len);
    buf[len] = '\0';
    unsigned long long v = strtoull(buf, &end, 10);
    if (*end)
        return false;
    *id = v;
    return true;
}

static sm_api_run api_run(const sm_run_row *r)
{
    return (sm_api_run){r->id,        r->name,         sm_run_state_name(r->state),
                        r->reason,    r->total,        r->done,
                        r->failed,    r->created_ms,   r->finished_ms,
                        !r->parallel, r->parallel_note};
}

/* Rolls back a request's transaction after its control call failed with code. A refusal
 * (SM_EINVAL: a bad spec, a run that is not running) comes before the control state changes;
 * any other failure may come after, and the control state is rolled back with the store. */
static void undo(sm_api_ctx *a, int code)
{
    if (code == SM_EINVAL)
        sm_store_rollback(a->st);
    else
        sm_control_rollback(&a->ctl, now_ms(), NULL);
}

static int post_run(sm_api_ctx *a, const char *body, size_t blen, char **resp, size_t *len)
{
    char *spec_json = NULL;
    sm_error err = {0};
    sm_spec spec;
    if (sm_api_run_request(body, blen, &spec_json, &err) != 0)
        return error(resp, len, 400, err.msg, err.field);
    if (sm_spec_decode(spec_json, strlen(spec_json), &spec, &err) != 0) {
        free(spec_json);
        return error(resp, len, 400, err.msg, err.field);
    }
    uint64_t id = 0;
    int status = 0;
    if (sm_store_begin(a->st, &err) != 0) {
        status = error(resp, len, 500, err.msg, NULL);
    } else if (sm_control_run_start(a->ctl, spec_json, &spec, now_ms(), &id, &err) != 0) {
        undo(a, err.code);
        status = error(resp, len, err.code == SM_EINVAL ? 400 : 500, err.msg, err.field);
    } else if (sm_store_commit(a->st, &err) != 0) {
        sm_control_rollback(&a->ctl, now_ms(), NULL);
        status = error(resp, len, 500, err.msg, NULL);
    }
    sm_spec_fini(&spec);
    free(spec_json);
    if (status)
        return status;
    if (a->jobs_queued)
        a->jobs_queued(a->arg, NULL, 0);
    return reply(resp, len, 201, sm_api_run_created(id));
}

char *sm_api_run_item(const sm_run_row *r)
{
    const sm_api_run out = api_run(r);
    return sm_api_run_item_encode(&out);
}

char *sm_api_runs_body(sm_api_ctx *a, sm_error *err)
{
    sm_run_row *rows = NULL;
    size_t n = 0;
    if (sm_store_runs_list(a->st, 100, &rows, &n, err) != 0)
        return NULL;
    sm_api_run *out = calloc(n ? n : 1, sizeof *out);
    for (size_t i = 0; out && i < n; i++)
        out[i] = api_run(&rows[i]);
    char *body = out ? sm_api_runs_encode(out, n) : NULL;
    if (!body)
        sm_error_set(err, SM_ENOMEM, "out of memory");
    free(out);
    sm_store_runs_free(rows, n);
    return body;
}

static int get_runs(sm_api_ctx *a, char **resp, size_t *len)
{
    sm_error err = {0};
    char *body = sm_api_runs_body(a, &err);
    return body ? reply(resp, len, 200, body) : error(resp, len, 500, err.msg, NULL);
}

static int get_run(sm_api_ctx *a, uint64_t id, char **resp, size_t *len)
{
    sm_run_row run;
    sm_error err = {0};
    if (sm_store_run_get(a->st, id, &run, &err) != 0)
        return error(resp, len, 404, "no such run", "id");
    sm_cell_row *cells = NULL;
    sm_job_row *jobs = NULL;
    size_t nc = 0, nj = 0;
    int status = 0;
    if (sm_store_cells_list(a->st, id, &cells, &nc, &err) != 0 ||
        sm_store_run_jobs(a->st, id, &jobs, &nj, &err) != 0) {
        status = error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    sm_api_cell *out = calloc(nc ? nc : 1, sizeof *out);
    if (!out) {
        status = error(resp, len, 500, "out of memory", NULL);
        goto out;
    }
    for (size_t i = 0; i < nc; i++)
        out[i] = (sm_api_cell){
            cells[i].idx, cells[i].host, cells[i].peer, cells[i].params_json, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < nj; i++) {
        if (jobs[i].cell >= nc)
            continue;
        sm_api_cell *c = &out[jobs[i].cell];
        c->jobs++;
        switch (jobs[i].state) {
        case SM_JOB_QUEUED:
            c->queued++;
            break;
        case SM_JOB_ASSIGNED:
        case SM_JOB_RUNNING:
            c->active++;
            break;
        case SM_JOB_DONE:
            c->done++;
            break;
        default:
            c->failed++;
            break;
        }
    }
    sm_api_run r = api_run(&run);
    status = reply(resp, len, 200, sm_api_run_encode(&r, out, nc));
    free(out);
out:
    sm_store_cells_free(cells, nc);
    sm_store_jobs_free(jobs, nj);
    sm_run_row_fini(&run);
    return status;
}

static int cancel_run(sm_api_ctx *a, uint64_t id, char **resp, size_t *len)
{
    sm_error err = {0};
    if (sm_store_begin(a->st, &err) != 0)
        return error(resp, len, 500, err.msg, NULL);
    if (sm_control_run_cancel(a->ctl, id, now_ms(), &err) != 0) {
        undo(a, err.code);
        return error(resp, len, err.code == SM_EINVAL ? 409 : 500, err.msg, "id");
    }
    if (sm_store_commit(a->st, &err) != 0) {
        sm_control_rollback(&a->ctl, now_ms(), NULL);
        return error(resp, len, 500, err.msg, NULL);
    }
    if (a->jobs_queued)
        a->jobs_queued(a->arg, NULL, 0); /* the cancel commands go out now */
    return get_run(a, id, resp, len);
}

/* format=csv|md|json from the query (json when absent). */
static const char *query_format(const char *query)
{
    for (const char *q = query; q && *q;) {
        if (strncmp(q, "format=", 7) == 0) {
            q += 7;
            if (strncmp(q, "csv", 3) == 0 && (q[3] == '\0' || q[3] == '&'))
                return "csv";
            if (strncmp(q, "md", 2) == 0 && (q[2] == '\0' || q[2] == '&'))
                return "md";
            if (strncmp(q, "json", 4) == 0 && (q[4] == '\0' || q[4] == '&'))
                return "json";
            return NULL;
        }
        q = strchr(q, '&');
        q = q ? q + 1 : NULL;
    }
    return "json";
}

/* A run's cells and results, decoded once for its tables. */
typedef struct run_data {
    sm_run_row run;
    sm_cell_row *rows;
    size_t nc;
    sm_run_result *res;
    size_t nr;
    sm_cell *cells;
    sm_result *results;
    sm_export_sample *samples;
    size_t ns;
    bool any_local, any_pair;
    sm_export_opts eo; /* set by the caller after loading */
} run_data;

static void run_data_fini(run_data *d)
{
    for (size_t i = 0; d->results && i < d->nr; i++)
        sm_result_fini(&d->results[i]);
    free(d->results);
    free(d->samples);
    free(d->cells);
    sm_store_cells_free(d->rows, d->nc);
    sm_store_run_results_free(d->res, d->nr);
    sm_run_row_fini(&d->run);
    memset(d, 0, sizeof *d);
}

/* 0, 404 (no such run) or 500, with err set. */
static int run_data_load(sm_api_ctx *a, uint64_t id, run_data *d, sm_error *err)
{
    memset(d, 0, sizeof *d);
    if (sm_store_run_get(a->st, id, &d->run, err) != 0) {
        sm_error_set(err, SM_EINVAL, "no such run");
        return 404;
    }
    if (sm_store_cells_list(a->st, id, &d->rows, &d->nc, err) != 0 ||
        sm_store_run_results(a->st, id, &d->res, &d->nr, err) != 0)
        return 500;
    d->cells = calloc(d->nc ? d->nc : 1, sizeof *d->cells);
    d->results = calloc(d->nr ? d->nr : 1, sizeof *d->results);
    d->samples = calloc(d->nr ? d->nr : 1, sizeof *d->samples);
    if (!d->cells || !d->results || !d->samples) {
        sm_error_set(err, SM_ENOMEM, "out of memory");
        return 500;
    }
    for (size_t i = 0; i < d->nc; i++) {
        sm_cell *c = &d->cells[i];
        c->test = d->rows[i].test;
        c->variant = d->rows[i].variant;
        snprintf(c->host, sizeof c->host, "%s", d->rows[i].host);
        snprintf(c->peer, sizeof c->peer, "%s", d->rows[i].peer);
        c->stopped = d->rows[i].stopped;
        sm_codec_params_decode(d->rows[i].params_json, strlen(d->rows[i].params_json), &c->params,
                               err);
        d->any_local |= c->params.scope == SM_SCOPE_LOCAL;
        d->any_pair |= c->params.scope == SM_SCOPE_PAIR;
    }
    for (size_t i = 0; i < d->nr; i++) {
        sm_result_init(&d->results[i]);
        if (sm_codec_result_decode(d->res[i].result_json, strlen(d->res[i].result_json),
                                   &d->results[i], err) != 0)
            continue; /* the store holds only what proto encoded; a guard, not a path */
        d->samples[d->ns++] =
            (sm_export_sample){d->res[i].cell, d->res[i].rep, d->res[i].warmup, &d->results[i]};
    }
    return 0;
}

static int run_data_table(const run_data *d, sm_scope scope, sm_table *t, sm_error *err)
{
    return sm_export_build_opts(d->run.id, d->run.name, scope, d->cells, d->nc, d->samples, d->ns,
                                &d->eo, t, err);
}

/* The value of name=... in the query, copied to buf; false when absent or too long. */
static bool query_param(const char *query, const char *name, char *buf, size_t cap)
{
    size_t n = strlen(name);
    for (const char *q = query; q && *q;) {
        const char *amp = strchr(q, '&');
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        if (len > n && strncmp(q, name, n) == 0 && q[n] == '=') {
            if (len - n - 1 >= cap)
                return false;
            memcpy(buf, q + n + 1, len - n - 1);
            buf[len - n - 1] = '\0';
            return true;
        }
        q = amp ? amp + 1 : NULL;
    }
    return false;
}

/* floor=F (0 < F < 10) from the query; 0 (the default) when absent; -1 when malformed. */
static double query_floor(const char *query)
{
    char buf[32], *end;
    if (!query_param(query, "floor", buf, sizeof buf))
        return 0;
    double f = strtod(buf, &end);
    return *end == '\0' && f > 0 && f < 10 ? f : -1;
}

/* disturbed=include|exclude from the query: 1 include, 0 exclude (the default), -1 malformed. */
static int query_disturbed(const char *query)
{
    char buf[16];
    if (!query_param(query, "disturbed", buf, sizeof buf))
        return query && strstr(query, "disturbed=") ? -1 : 0;
    return strcmp(buf, "include") == 0 ? 1 : strcmp(buf, "exclude") == 0 ? 0 : -1;
}

#define DISTURBED_ERROR "disturbed: expected include or exclude"

static int get_table(sm_api_ctx *a, uint64_t id, const char *query, char **resp, size_t *len,
                     const char **ctype)
{
    const char *format = query_format(query);
    if (!format)
        return error(resp, len, 400, "format: expected csv, md or json", "format");
    sm_analysis_opts ao = {0, query_floor(query)};
    if (ao.floor < 0)
        return error(resp, len, 400, "floor: expected a fraction such as 0.15", "floor");
    int with_disturbed = query_disturbed(query);
    if (with_disturbed < 0)
        return error(resp, len, 400, DISTURBED_ERROR, "disturbed");
    run_data d;
    sm_table table;
    sm_anomalies an = {0};
    memset(&table, 0, sizeof table);
    sm_error err = {0};
    int status = run_data_load(a, id, &d, &err);
    if (status != 0) {
        status = error(resp, len, status, err.msg, status == 404 ? "id" : NULL);
        goto out;
    }
    d.eo.include_disturbed = with_disturbed == 1;
    /* Hosts or pairs: ?scope=pair|local, else local when the run has local cells. */
    sm_scope scope = query && strstr(query, "scope=pair")    ? SM_SCOPE_PAIR
                     : query && strstr(query, "scope=local") ? SM_SCOPE_LOCAL
                     : d.any_local                           ? SM_SCOPE_LOCAL
                                                             : SM_SCOPE_PAIR;
    if (run_data_table(&d, scope, &table, &err) != 0 ||
        sm_analysis_table(&table, &ao, &an, &err) != 0) {
        status = error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    sm_analysis_flag_table(&table, &an);
    char *text = strcmp(format, "csv") == 0  ? sm_table_csv(&table)
                 : strcmp(format, "md") == 0 ? sm_table_md(&table)
                                             : sm_table_json(&table);
    *ctype = strcmp(format, "csv") == 0  ? "text/csv; charset=utf-8"
             : strcmp(format, "md") == 0 ? "text/markdown; charset=utf-8"
                                         : "application/json";
    status = reply(resp, len, 200, text);
out:
    sm_anomalies_fini(&an);
    sm_table_fini(&table);
    run_data_fini(&d);
    return status;
}

/* The baseline of a run: the newest earlier run of the same name that ended done; 0 if none. */
static uint64_t default_baseline(sm_api_ctx *a, const sm_run_row *run)
{
    sm_run_row *rows = NULL;
    size_t n = 0;
    sm_error err;
    uint64_t found = 0;
    if (sm_store_runs_list(a->st, 1000, &rows, &n, &err) != 0)
        return 0;
    for (size_t i = 0; i < n && !found; i++)
        if (rows[i].id < run->id && rows[i].state == SM_RUN_DONE &&
            strcmp(rows[i].name, run->name) == 0)
            found = rows[i].id;
    sm_store_runs_free(rows, n);
    return found;
}

/* The anomalies of both of a run's tables (hosts, pairs) and, against the baseline, its
 * regressions. */
static int analyse_run(sm_api_ctx *a, const run_data *d, const run_data *base,
                       const sm_analysis_opts *ao, sm_anomalies *an, sm_error *err)
{
    static const sm_scope scopes[] = {SM_SCOPE_LOCAL, SM_SCOPE_PAIR};
    (void)a;
    for (size_t k = 0; k < 2; k++) {
        bool any = scopes[k] == SM_SCOPE_LOCAL ? d->any_local : d->any_pair;
        if (!any)
            continue;
        sm_table t, b;
        memset(&b, 0, sizeof b);
        int rc = run_data_table(d, scopes[k], &t, err);
        if (rc == 0)
            rc = sm_analysis_table(&t, ao, an, err);
        if (rc == 0 && base)
            rc = run_data_table(base, scopes[k], &b, err);
        if (rc == 0 && base)
            rc = sm_analysis_regression(&t, &b, ao, an, err);
        sm_table_fini(&t);
        sm_table_fini(&b);
        if (rc)
            return rc;
    }
    return 0;
}

/* For people and the CLI: a header line, then one line per anomaly (sm_anomaly_text). */
static char *anomalies_text(const sm_run_row *run, uint64_t base_id, const sm_anomalies *an)
{
    size_t cap = 256 + an->n * 512, at = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    at += (size_t)snprintf(out, cap, "run %" PRIu64 " (%s): %zu %s", run->id, run->name, an->n,
                           an->n == 1 ? "anomaly" : "anomalies");
    if (base_id)
        at += (size_t)snprintf(out + at, cap - at, ", against baseline run %" PRIu64, base_id);
    else
        at += (size_t)snprintf(out + at, cap - at, ", no baseline run");
    at += (size_t)snprintf(out + at, cap - at, "\n");
    for (size_t i = 0; i < an->n && at < cap; i++) {
        at += (size_t)snprintf(out + at, cap - at, "  %-10s ", sm_anomaly_kind_name(an->v[i].kind));
        if (at < cap)
            at += (size_t)sm_anomaly_text(&an->v[i], out + at, cap - at);
        if (at < cap)
            at += (size_t)snprintf(out + at, cap - at, "\n");
    }
    return out;
}

/* GET /api/runs/{id}/anomalies[?baseline=ID][&floor=F][&format=text][&disturbed=include] */
static int get_anomalies(sm_api_ctx *a, uint64_t id, const char *query, char **resp, size_t *len,
                         const char **ctype)
{
    char fmt[8] = "json", bl[24] = "";
    if (query_param(query, "format", fmt, sizeof fmt) && strcmp(fmt, "json") != 0 &&
        strcmp(fmt, "text") != 0)
        return error(resp, len, 400, "format: expected json or text", "format");
    sm_analysis_opts ao = {0, query_floor(query)};
    if (ao.floor < 0)
        return error(resp, len, 400, "floor: expected a fraction such as 0.15", "floor");
    uint64_t base_id = 0;
    if (query_param(query, "baseline", bl, sizeof bl) && !parse_id(bl, strlen(bl), &base_id))
        return error(resp, len, 400, "baseline: expected a run id", "baseline");
    int with_disturbed = query_disturbed(query);
    if (with_disturbed < 0)
        return error(resp, len, 400, DISTURBED_ERROR, "disturbed");
    run_data d, b;
    memset(&b, 0, sizeof b);
    sm_anomalies an = {0};
    sm_error err = {0};
    char *text = NULL;
    int status = run_data_load(a, id, &d, &err);
    if (status != 0) {
        status = error(resp, len, status, err.msg, status == 404 ? "id" : NULL);
        goto out;
    }
    if (base_id == 0)
        base_id = default_baseline(a, &d.run);
    else if (base_id == id) {
        status = error(resp, len, 400, "baseline: a run is not its own baseline", "baseline");
        goto out;
    }
    if (base_id != 0 && (status = run_data_load(a, base_id, &b, &err)) != 0) {
        status = error(resp, len, status == 404 ? 400 : status,
                       status == 404 ? "baseline: no such run" : err.msg, "baseline");
        goto out;
    }
    d.eo.include_disturbed = b.eo.include_disturbed = with_disturbed == 1;
    if (analyse_run(a, &d, base_id ? &b : NULL, &ao, &an, &err) != 0) {
        status = error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    if (strcmp(fmt, "text") == 0) {
        text = anomalies_text(&d.run, base_id, &an);
        *ctype = "text/plain; charset=utf-8";
    } else {
        text = sm_anomalies_json(id, d.run.name, base_id, &ao, &an);
    }
    status = reply(resp, len, 200, text);
out:
    sm_anomalies_fini(&an);
    run_data_fini(&d);
    run_data_fini(&b);
    return status;
}

/* ---- reports of ended runs, computed once ---- */

#define CACHE_RUNS     32 /* runs whose reports are kept, the least recently asked for out */
#define CACHE_VARIANTS 8  /* reports kept per run (format, floor, baseline, ...) */

typedef struct cached {
    char *key; /* "table?QUERY" or "anomalies?QUERY" */
    char *body;
    size_t len;
    const char *ctype;
    uint64_t base; /* the baseline asked for; 0: the default one */
} cached;

typedef struct cache_run {
    uint64_t run; /* 0: a free slot */
    uint64_t used;
    size_t n;
    cached v[CACHE_VARIANTS];
} cache_run;

struct sm_api_cache {
    uint64_t clock;
    cache_run runs[CACHE_RUNS];
};

static void cache_run_clear(cache_run *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].key);
        free(r->v[i].body);
    }
    memset(r, 0, sizeof *r);
}

void sm_api_cache_free(sm_api_ctx *a)
{
    if (!a || !a->cache)
        return;
    for (size_t i = 0; i < CACHE_RUNS; i++)
        cache_run_clear(&a->cache->runs[i]);
    free(a->cache);
    a->cache = NULL;
}

void sm_api_run_changed(sm_api_ctx *a, uint64_t run_id)
{
    if (!a || !a->cache || run_id == 0)
        return;
    for (size_t i = 0; i < CACHE_RUNS; i++) {
        cache_run *r = &a->cache->runs[i];
        if (r->run == run_id) {
            cache_run_clear(r);
            continue;
        }
        /* Anomalies against it as their baseline, named or (for a later run) the default. */
        for (size_t k = 0; k < r->n;) {
            cached *v = &r->v[k];
            const bool anomalies = strncmp(v->key, "anomalies?", 10) == 0;
            if (anomalies && (v->base == run_id || (v->base == 0 && r->run > run_id))) {
                free(v->key);
                free(v->body);
                r->v[k] = r->v[--r->n];
            } else {
                k++;
            }
        }
    }
}

static cached *cache_find(sm_api_ctx *a, uint64_t run_id, const char *key)
{
    for (size_t i = 0; a->cache && i < CACHE_RUNS; i++) {
        cache_run *r = &a->cache->runs[i];
        if (r->run != run_id)
            continue;
        for (size_t k = 0; k < r->n; k++)
            if (strcmp(r->v[k].key, key) == 0) {
                r->used = ++a->cache->clock;
                return &r->v[k];
            }
    }
    return NULL;
}

/* Keeps a copy of a report of an ended run; out of memory, it is simply not kept. */
static void cache_put(sm_api_ctx *a, uint64_t run_id, const char *key, uint64_t base,
                      const char *body, size_t len, const char *ctype)
{
    if (!a->cache && !(a->cache = calloc(1, sizeof *a->cache)))
        return;
    cache_run *slot = NULL, *oldest = &a->cache->runs[0];
    for (size_t i = 0; i < CACHE_RUNS && !slot; i++) {
        cache_run *r = &a->cache->runs[i];
        if (r->run == run_id)
            slot = r;
        else if (r->run == 0 || (oldest->run != 0 && r->used < oldest->used))
            oldest = r;
    }
    if (!slot) {
        slot = oldest;
        cache_run_clear(slot);
        slot->run = run_id;
    }
    if (slot->n == CACHE_VARIANTS) {
        free(slot->v[0].key);
        free(slot->v[0].body);
        slot->v[0] = slot->v[--slot->n];
    }
    cached v = {strdup(key), malloc(len + 1), len, ctype, base};
    if (!v.key || !v.body) {
        free(v.key);
        free(v.body);
        return;
    }
    memcpy(v.body, body, len + 1);
    slot->v[slot->n++] = v;
    slot->used = ++a->cache->clock;
}

/* GET /api/runs/{id}/table or /anomalies: from the cache when the run has ended and was asked
 * the same before; else computed, and kept when the run (and its baseline) had ended. */
static int get_report(sm_api_ctx *a, uint64_t id, bool table, const char *query, char **resp,
                      size_t *len, const char **ctype)
{
    char key[512];
    const int kn =
        snprintf(key, sizeof key, "%s?%s", table ? "table" : "anomalies", query ? query : "");
    const bool keyed = kn > 0 && (size_t)kn < sizeof key;
    const cached *hit = keyed ? cache_find(a, id, key) : NULL;
    if (hit) {
        char *body = malloc(hit->len + 1);
        if (!body)
            return error(resp, len, 500, "out of memory", NULL);
        memcpy(body, hit->body, hit->len + 1);
        *resp = body;
        *len = hit->len;
        *ctype = hit->ctype;
        return 200;
    }
    /* Its state before the report is computed: a run that ends meanwhile is not kept. */
    sm_run_row run;
    sm_error err = {0};
    bool ended = false;
    if (keyed && sm_store_run_get(a->st, id, &run, &err) == 0) {
        ended = run.state != SM_RUN_RUNNING;
        sm_run_row_fini(&run);
    }
    char bl[24] = "";
    uint64_t base = 0;
    if (!table && query_param(query, "baseline", bl, sizeof bl) &&
        parse_id(bl, strlen(bl), &base) && base != 0) {
        sm_run_row b;
        ended = ended && sm_store_run_get(a->st, base, &b, &err) == 0 && b.state != SM_RUN_RUNNING;
        if (ended)
            sm_run_row_fini(&b);
    }
    const int status = table ? get_table(a, id, query, resp, len, ctype)
                             : get_anomalies(a, id, query, resp, len, ctype);
    if (status == 200 && ended)
        cache_put(a, id, key, base, *resp, *len, *ctype);
    return status;
}

char *sm_api_anomalies_body(sm_api_ctx *a, uint64_t run_id)
{
    char *resp = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    if (get_report(a, run_id, false, NULL, &resp, &len, &ctype) == 200)
        return resp;
    free(resp);
    return NULL;
}

/* /api/runs/{id}[/cancel|/table|/anomalies] */
static int runs_route(sm_api_ctx *a, bool get, bool post, const char *rest, const char *query,
                      const char *auth, char **resp, size_t *len, const char **ctype)
{
    const char *slash = strchr(rest, '/');
    uint64_t id;
    if (!parse_id(rest, slash ? (size_t)(slash - rest) : strlen(rest), &id))
        return error(resp, len, 400, "run id: expected a number", "id");
    if (!slash)
        return get ? get_run(a, id, resp, len) : error(resp, len, 405, "use GET", NULL);
    if (strcmp(slash, "/table") == 0)
        return get ? get_report(a, id, true, query, resp, len, ctype)
                   : error(resp, len, 405, "use GET", NULL);
    if (strcmp(slash, "/anomalies") == 0)
        return get ? get_report(a, id, false, query, resp, len, ctype)
                   : error(resp, len, 405, "use GET", NULL);
    if (strcmp(slash, "/cancel") == 0) {
        if (!post)
            return error(resp, len, 405, "use POST", NULL);
        if (a->token && !sm_api_token_ok(a->token, auth))
            return error(resp, len, 401, "this call needs the dashboard token", "Authorization");
        return cancel_run(a, id, resp, len);
    }
    return error(resp, len, 404, "no such endpoint", NULL);
}

int sm_api_handle(sm_api_ctx *a, const char *method, const char *path, const char *query,
                  const char *auth, const char *body, size_t len, char **resp, size_t *resp_len,
                  const char **content_type)
{
    *content_type = "application/json";
    const bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
    if (strcmp(path, "/healthz") == 0)
        return get ? get_health(a, resp, resp_len) : error(resp, resp_len, 405, "use GET", NULL);
    if (strcmp(path, "/api/agents") == 0)
        return get ? get_agents(a, resp, resp_len) : error(resp, resp_len, 405, "use GET", NULL);
    if (strcmp(path, "/api/jobs") == 0) {
        if (!post)
            return error(resp, resp_len, 405, "use POST", NULL);
        if (a->token && !sm_api_token_ok(a->token, auth))
            return error(resp, resp_len, 401,
                         "this call needs the dashboard token "
                         "(Authorization: Bearer ...)",
                         "Authorization");
        return post_jobs(a, body, len, resp, resp_len);
    }
    if (strcmp(path, "/api/presets") == 0)
        return get ? reply(resp, resp_len, 200, sm_presets_encode())
                   : error(resp, resp_len, 405, "use GET", NULL);
    if (strcmp(path, "/api/runs") == 0) {
        if (get)
            return get_runs(a, resp, resp_len);
        if (!post)
            return error(resp, resp_len, 405, "use GET or POST", NULL);
        if (a->token && !sm_api_token_ok(a->token, auth))
            return error(resp, resp_len, 401, "this call needs the dashboard token",
                         "Authorization");
        return post_run(a, body, len, resp, resp_len);
    }
    if (strncmp(path, "/api/runs/", 10) == 0)
        return runs_route(a, get, post, path + 10, query, auth, resp, resp_len, content_type);
    if (strncmp(path, "/api/jobs/", 10) == 0)
        return get ? get_job(a, path + 10, resp, resp_len)
                   : error(resp, resp_len, 405, "use GET", NULL);
    return error(resp, resp_len, 404, "no such endpoint", NULL);
}
