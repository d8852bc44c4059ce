/* The handlers of /healthz, /api/agents, POST /api/jobs and /api/runs, and the token
 * comparison; the route table that calls them is routes.c's. */
#include "coordinator/api/api.h"
#include "coordinator/api/internal.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/schema/apijson.h"
#include "coordinator/model/spec.h"
#include "proto/clock.h"
#include "proto/codec.h"
#include "proto/log.h"

static int64_t now_ms(void)
{
    return sm_wall_ms();
}

int sm_api_reply(char **resp, size_t *len, int status, char *json)
{
    if (!json) {
        json = strdup("{\"error\":\"out of memory\"}");
        status = 500;
    }
    *resp = json;
    *len = json ? strlen(json) : 0;
    return status;
}

int sm_api_reply_error(char **resp, size_t *len, int status, const char *msg, const char *field)
{
    return sm_api_reply(resp, len, status, sm_api_error(msg, field));
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

int sm_api_get_agents(sm_api_ctx *a, char **resp, size_t *len)
{
    sm_error err = {0};
    char *body = sm_api_agents_body(a, &err);
    return body ? sm_api_reply(resp, len, 200, body)
                : sm_api_reply_error(resp, len, 500, err.msg, NULL);
}

int sm_api_post_jobs(sm_api_ctx *a, const char *body, size_t blen, char **resp, size_t *len)
{
    sm_api_job_req *reqs = NULL;
    size_t n = 0;
    char field[SM_ERR_FIELD_MAX];
    sm_error err = {0};
    if (sm_api_jobs_parse(body, blen, &reqs, &n, &err) != 0)
        return sm_api_reply_error(resp, len, 400, err.msg, err.field);
    uint64_t *ids = calloc(n, sizeof *ids);
    if (!ids) {
        free(reqs);
        return sm_api_reply_error(resp, len, 500, "out of memory", NULL);
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
            status = sm_api_reply_error(resp, len, 400, msg, field);
        }
    }
    if (!status && sm_store_begin(a->st, &err) != 0)
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
    for (size_t i = 0; i < n && !status; i++)
        if (sm_control_submit(a->ctl, reqs[i].host, &reqs[i].params, now_ms(), &ids[i], &err))
            status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
    if (!status && sm_store_commit(a->st, &err) != 0)
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
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
        status = sm_api_reply(resp, len, 201, sm_api_job_ids(ids, n));
    }
    free(ids);
    free(reqs);
    return status;
}

/* ---- /healthz ---- */

/* The agents /healthz counts: the store's rows, how many are online by the live view, and
 * those with spool entries in quarantine (a result of theirs may be stuck there); the names
 * point into rows. */
typedef struct health_agents {
    sm_agent_row *rows;
    size_t n, online, nq;
    const char **q_names;
    uint64_t *q_values;
} health_agents;

/* The store's counts; false with err set when the store cannot even be read, which is the
 * failing store /healthz is there to report. */
static bool health_read_store(sm_api_ctx *a, uint64_t *results, health_agents *h, sm_error *err)
{
    return sm_store_result_count(a->st, results, err) == 0 &&
           sm_store_agents_list(a->st, &h->rows, &h->n, err) == 0;
}

static void health_agents_live(sm_api_ctx *a, health_agents *h)
{
    h->q_names = calloc(h->n ? h->n : 1, sizeof *h->q_names);
    h->q_values = calloc(h->n ? h->n : 1, sizeof *h->q_values);
    for (size_t i = 0; i < h->n; i++) {
        sm_agent_status st = h->rows[i].status;
        int64_t seen;
        sm_control_agent_live(a->ctl, h->rows[i].name, &st, &seen);
        h->online += st != SM_AGENT_LOST;
        const uint64_t q = sm_control_agent_quarantined(a->ctl, h->rows[i].name);
        if (q && h->q_names && h->q_values) {
            h->q_names[h->nq] = h->rows[i].name;
            h->q_values[h->nq++] = q;
        }
    }
}

static void health_agents_fini(health_agents *h)
{
    free(h->q_names);
    free(h->q_values);
    sm_store_agents_free(h->rows, h->n);
}

enum { HEALTH_N_BASE = 9, HEALTH_N_HTTP = 9, HEALTH_N_POLICY = 4 };

/* The control core's and the live-event hub's counters, then the HTTP listener's under their
 * own names: HEALTH_N_BASE + HEALTH_N_HTTP of them. */
static void health_counters(const sm_api_ctx *a, const sm_control_stats *s, const char **names,
                            uint64_t *values)
{
    static const char *const base_names[] = {
        "polls",      "results_stored", "results_duplicate", "results_orphan", "jobs_dispatched",
        "ws_clients", "ws_rejected",    "ws_cut_slow",       "results_foreign"};
    const uint64_t *w = a->ws_counters;
    const uint64_t base_values[] = {s->polls,          s->results_stored,  s->results_duplicate,
                                    s->results_orphan, s->jobs_dispatched, w ? w[0] : 0,
                                    w ? w[1] : 0,      w ? w[2] : 0,       s->results_foreign};
    static const char *const http_names[] = {
        "http_clients",      "http_refused_host",  "http_refused_origin",
        "http_refused_type", "http_refused_token", "http_refused_method",
        "http_refused_size", "http_refused_slow",  "http_refused_full"};
    _Static_assert(sizeof base_names / sizeof base_names[0] == HEALTH_N_BASE &&
                       sizeof base_values / sizeof base_values[0] == HEALTH_N_BASE,
                   "one value per counter name");
    _Static_assert(sizeof http_names / sizeof http_names[0] == HEALTH_N_HTTP,
                   "one name per HTTP counter");
    for (size_t i = 0; i < HEALTH_N_BASE; i++) {
        names[i] = base_names[i];
        values[i] = base_values[i];
    }
    for (size_t i = 0; i < HEALTH_N_HTTP; i++) {
        names[HEALTH_N_BASE + i] = http_names[i];
        values[HEALTH_N_BASE + i] = a->http_counters ? a->http_counters[i] : 0;
    }
}

/* The envelope's rejections by reason, then the results and agents refused by the fleet's
 * policy; returns how many were written (at most SM_REJ__COUNT - 1 + HEALTH_N_POLICY). */
static size_t health_rejects(const sm_api_ctx *a, const sm_control_stats *s, const char **names,
                             uint64_t *values)
{
    size_t nr = 0;
    for (int r = 1; r < SM_REJ__COUNT; r++) {
        names[nr] = sm_reject_name((sm_reject)r);
        values[nr++] = a->rejects ? sm_rejects_count(a->rejects, (sm_reject)r) : 0;
    }
    /* Signed and fresh, but refused by the fleet's policy (coordinator/control/control.h). */
    static const char *const pol_names[HEALTH_N_POLICY] = {"wrong-host", "agents-cap", "data-addr",
                                                           "reserved-name"};
    const uint64_t pol_values[HEALTH_N_POLICY] = {s->results_wrong_host, s->refused_agents_cap,
                                                  s->refused_data_addr, s->refused_name};
    for (size_t i = 0; i < HEALTH_N_POLICY; i++) {
        names[nr] = pol_names[i];
        values[nr++] = pol_values[i];
    }
    return nr;
}

/* Whether the store is failing, with its last error and when it came: a store whose commits
 * fail loses every result it is sent, and a monitor must see it. */
static bool health_store_failing(sm_api_ctx *a, bool readable, const sm_error *err, char *msg,
                                 size_t cap, int64_t *at)
{
    *at = 0;
    const int64_t now = now_ms();
    bool failing = sm_store_failing(a->st, now, msg, cap, at);
    if (!readable) {
        failing = true;
        snprintf(msg, cap, "%s", err->msg);
        *at = now;
    }
    return failing;
}

int sm_api_get_health(sm_api_ctx *a, char **resp, size_t *len)
{
    sm_control_stats s;
    sm_control_get_stats(a->ctl, &s);
    uint64_t results = 0;
    sm_error err = {0};
    health_agents h = {0};
    const bool readable = health_read_store(a, &results, &h, &err);
    health_agents_live(a, &h);
    const char *names[HEALTH_N_BASE + HEALTH_N_HTTP];
    uint64_t values[HEALTH_N_BASE + HEALTH_N_HTTP];
    health_counters(a, &s, names, values);
    const char *rej_names[SM_REJ__COUNT + HEALTH_N_POLICY];
    uint64_t rej_values[SM_REJ__COUNT + HEALTH_N_POLICY];
    const size_t nr = health_rejects(a, &s, rej_names, rej_values);
    char store_error[256];
    int64_t store_error_at;
    const bool failing =
        health_store_failing(a, readable, &err, store_error, sizeof store_error, &store_error_at);
    int status =
        sm_api_reply(resp, len, failing ? 503 : 200,
                     sm_api_health(h.n, h.online, results, sm_control_fleet_hold_ms(a->ctl), names,
                                   values, HEALTH_N_BASE + HEALTH_N_HTTP, rej_names, rej_values, nr,
                                   h.q_names, h.q_values, h.nq, failing ? store_error : NULL,
                                   store_error_at, sm_store_warning(a->st)));
    health_agents_fini(&h); /* after the encoding: q_names point into rows */
    return status;
}

/* ---- runs ---- */

static sm_api_run api_run(const sm_run_row *r)
{
    return (sm_api_run){r->id,
                        r->name,
                        sm_run_state_name(r->state),
                        r->reason,
                        r->total,
                        r->done,
                        r->failed,
                        r->created_ms,
                        r->finished_ms,
                        !r->parallel,
                        r->parallel_note,
                        r->schedule_id,
                        0};
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

int sm_api_start_run(sm_api_ctx *a, const char *spec_json, const sm_spec *spec,
                     int (*also)(sm_api_ctx *a, uint64_t id, void *arg, sm_error *err), void *arg,
                     uint64_t *id, char **resp, size_t *len)
{
    sm_error err = {0};
    int status = 0;
    if (sm_store_begin(a->st, &err) != 0) {
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
    } else if (sm_control_run_start(a->ctl, spec_json, spec, now_ms(), id, &err) != 0 ||
               (also && also(a, *id, arg, &err) != 0)) {
        undo(a, err.code);
        status =
            sm_api_reply_error(resp, len, err.code == SM_EINVAL ? 400 : 500, err.msg, err.field);
    } else if (sm_store_commit(a->st, &err) != 0) {
        sm_control_rollback(&a->ctl, now_ms(), NULL);
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
    }
    if (!status && a->jobs_queued)
        a->jobs_queued(a->arg, NULL, 0);
    return status;
}

int sm_api_post_run(sm_api_ctx *a, const char *body, size_t blen, char **resp, size_t *len)
{
    char *spec_json = NULL;
    sm_error err = {0};
    sm_spec spec;
    if (sm_api_run_request(body, blen, &spec_json, &err) != 0)
        return sm_api_reply_error(resp, len, 400, err.msg, err.field);
    if (sm_spec_decode(spec_json, strlen(spec_json), &spec, &err) != 0) {
        free(spec_json);
        return sm_api_reply_error(resp, len, 400, err.msg, err.field);
    }
    uint64_t id = 0;
    const int status = sm_api_start_run(a, spec_json, &spec, NULL, NULL, &id, resp, len);
    sm_spec_fini(&spec);
    free(spec_json);
    if (status)
        return status;
    return sm_api_reply(resp, len, 201, sm_api_run_created(id));
}

/* The cells of run id that it could not judge, as picks (pointing into *an, the run's
 * anomalies as GET .../anomalies answers them: from the cache when the report worker built
 * them first, as the listener has it do): value cells only, a ratio being measured with its
 * two. Returns 0 or the HTTP status of the error it answered. */
static int unjudged(sm_api_ctx *a, uint64_t id, cJSON **an, sm_control_pick **picks, size_t *n,
                    char **resp, size_t *len)
{
    sm_run_report rep;
    sm_reports_get(&a->reports, id, SM_REPORT_ANOMALIES, NULL, &rep);
    if (rep.status != SM_REPORT_OK) {
        const int status = sm_api_reply_error(resp, len, (int)rep.status, rep.err.msg, NULL);
        sm_run_report_fini(&rep);
        return status;
    }
    *an = cJSON_ParseWithLength(rep.body, rep.len);
    sm_run_report_fini(&rep);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(*an, "inconclusive");
    if (!cJSON_IsArray(list))
        return sm_api_reply_error(resp, len, 500, "out of memory", NULL);
    *picks = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof **picks);
    if (!*picks)
        return sm_api_reply_error(resp, len, 500, "out of memory", NULL);
    *n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, list)
    {
        const char *row = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "row"));
        const char *test = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "test"));
        if (row && test && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ratio")))
            (*picks)[(*n)++] = (sm_control_pick){row, test};
    }
    if (*n == 0)
        return sm_api_reply_error(
            resp, len, 409, "every cell of this run was judged: nothing to measure again", NULL);
    return 0;
}

/* Starts the run of spec_json (named name) with only picks[0..n) of its cells. */
static int start_only(sm_api_ctx *a, const char *spec_json, const sm_control_pick *picks, size_t n,
                      uint64_t *id, char **resp, size_t *len)
{
    sm_error err = {0};
    sm_spec spec;
    if (sm_spec_decode(spec_json, strlen(spec_json), &spec, &err) != 0)
        return sm_api_reply_error(resp, len, 409, err.msg, err.field);
    int status = 0;
    if (sm_store_begin(a->st, &err) != 0) {
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
    } else if (sm_control_run_start_only(a->ctl, spec_json, &spec, picks, n, now_ms(), id, &err) !=
               0) {
        undo(a, err.code);
        status =
            sm_api_reply_error(resp, len, err.code == SM_EINVAL ? 409 : 500, err.msg, err.field);
    } else if (sm_store_commit(a->st, &err) != 0) {
        sm_control_rollback(&a->ctl, now_ms(), NULL);
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
    }
    sm_spec_fini(&spec);
    return status;
}

int sm_api_post_again(sm_api_ctx *a, uint64_t id, const char *body, size_t blen, char **resp,
                      size_t *len)
{
    sm_error err = {0};
    if (sm_api_again_request(body, blen, &err) != 0)
        return sm_api_reply_error(resp, len, 400, err.msg, err.field);
    sm_run_row run;
    if (sm_store_run_get(a->st, id, &run, &err) != 0)
        return sm_api_reply_error(resp, len, 404, "no such run", "id");
    int status = 0;
    cJSON *an = NULL;
    sm_control_pick *picks = NULL;
    size_t n = 0;
    char *spec_json = NULL, name[SM_SPEC_NAME_MAX + 1];
    uint64_t again = 0;
    /* A running run may still judge its cells: measure again what it ended without. */
    if (run.state == SM_RUN_RUNNING)
        status = sm_api_reply_error(
            resp, len, 409, "the run is still running: measure again once it has ended", NULL);
    if (!status)
        status = unjudged(a, id, &an, &picks, &n, resp, len);
    if (!status && sm_api_again_spec(run.spec_json, &spec_json, name, sizeof name, &err) != 0)
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
    if (!status)
        status = start_only(a, spec_json, picks, n, &again, resp, len);
    if (!status) {
        sm_log(LOG_NOTICE, "SM-RUN-AGAIN",
               "run %" PRIu64 " (%s): the %zu cell%s run %" PRIu64 " could not judge, again", again,
               name, n, n == 1 ? "" : "s", id);
        if (a->jobs_queued)
            a->jobs_queued(a->arg, NULL, 0);
        status = sm_api_reply(resp, len, 201, sm_api_run_created(again));
    }
    free(spec_json);
    free(picks);
    cJSON_Delete(an);
    sm_run_row_fini(&run);
    return status;
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

int sm_api_get_runs(sm_api_ctx *a, char **resp, size_t *len)
{
    sm_error err = {0};
    char *body = sm_api_runs_body(a, &err);
    return body ? sm_api_reply(resp, len, 200, body)
                : sm_api_reply_error(resp, len, 500, err.msg, NULL);
}

int sm_api_get_run(sm_api_ctx *a, uint64_t id, char **resp, size_t *len)
{
    sm_run_row run;
    sm_error err = {0};
    if (sm_store_run_get(a->st, id, &run, &err) != 0)
        return sm_api_reply_error(resp, len, 404, "no such run", "id");
    sm_cell_row *cells = NULL;
    sm_job_row *jobs = NULL;
    size_t nc = 0, nj = 0;
    int status = 0;
    if (sm_store_cells_list(a->st, id, &cells, &nc, &err) != 0 ||
        sm_store_run_jobs(a->st, id, &jobs, &nj, &err) != 0) {
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    sm_api_cell *out = calloc(nc ? nc : 1, sizeof *out);
    if (!out) {
        status = sm_api_reply_error(resp, len, 500, "out of memory", NULL);
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
    sm_experiment_row xr;
    sm_error xerr = {0};
    if (sm_store_experiment_get(a->st, id, &xr, &xerr) == 0) {
        r.explains = xr.parent_run;
        sm_experiment_row_fini(&xr);
    }
    status = sm_api_reply(resp, len, 200, sm_api_run_encode(&r, out, nc));
    free(out);
out:
    sm_store_cells_free(cells, nc);
    sm_store_jobs_free(jobs, nj);
    sm_run_row_fini(&run);
    return status;
}

/* A cancel the control refused: a run the store does not know is 404, one that ended is 409
 * and says how and when it ended, so that the caller need not ask again. */
static int cancel_refused(sm_api_ctx *a, uint64_t id, char **resp, size_t *len)
{
    sm_run_row run;
    sm_error err = {0};
    if (sm_store_run_get(a->st, id, &run, &err) != 0)
        return sm_api_reply_error(resp, len, 404, "no such run", "id");
    char when[32] = "an unknown time";
    struct tm tm;
    time_t t = (time_t)(run.finished_ms / 1000);
    if (run.finished_ms > 0 && gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    char msg[160];
    snprintf(msg, sizeof msg, "run %" PRIu64 " ended (%s) at %s; nothing to cancel", id,
             sm_run_state_name(run.state), when);
    sm_run_row_fini(&run);
    return sm_api_reply_error(resp, len, 409, msg, NULL);
}

int sm_api_cancel_run(sm_api_ctx *a, uint64_t id, char **resp, size_t *len)
{
    sm_error err = {0};
    if (sm_store_begin(a->st, &err) != 0)
        return sm_api_reply_error(resp, len, 500, err.msg, NULL);
    if (sm_control_run_cancel(a->ctl, id, now_ms(), &err) != 0) {
        undo(a, err.code);
        if (err.code == SM_EINVAL)
            return cancel_refused(a, id, resp, len);
        return sm_api_reply_error(resp, len, 500, err.msg, "id");
    }
    if (sm_store_commit(a->st, &err) != 0) {
        sm_control_rollback(&a->ctl, now_ms(), NULL);
        return sm_api_reply_error(resp, len, 500, err.msg, NULL);
    }
    if (a->jobs_queued)
        a->jobs_queued(a->arg, NULL, 0); /* the cancel commands go out now */
    return sm_api_get_run(a, id, resp, len);
}

/* ---- reports of ended runs, computed once (reports/) ---- */

void sm_api_cache_free(sm_api_ctx *a)
{
    if (a)
        sm_reports_fini(&a->reports);
}

void sm_api_run_changed(sm_api_ctx *a, uint64_t run_id)
{
    if (a)
        sm_reports_run_changed(&a->reports, run_id);
}

void sm_api_run_state_changed(sm_api_ctx *a, uint64_t run_id)
{
    if (a)
        sm_reports_run_state_changed(&a->reports, run_id);
}
