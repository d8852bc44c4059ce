/* HTTP routes: /healthz, /api/agents, /api/jobs. */
#include "coordinator/api.h"

#include <inttypes.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/api.h"
#include "proto/log.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

static int get_agents(sm_api_ctx *a, char **resp, size_t *len)
{
    sm_agent_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (sm_store_agents_list(a->st, &rows, &n, &err) != 0)
        return error(resp, len, 500, err.msg, NULL);
    sm_api_agent *out = calloc(n ? n : 1, sizeof *out);
    if (!out) {
        sm_store_agents_free(rows, n);
        return error(resp, len, 500, "out of memory", NULL);
    }
    for (size_t i = 0; i < n; i++) {
        sm_agent_status st = rows[i].status;
        int64_t seen = rows[i].last_seen_ms;
        /* The live view is in memory; the store is written only when something changes. */
        sm_control_agent_live(a->ctl, rows[i].name, &st, &seen);
        out[i] = (sm_api_agent){rows[i].name,          rows[i].boot,
                                rows[i].data_addr,     sm_agent_status_name(st),
                                rows[i].labels_json,   rows[i].facts_json,
                                rows[i].first_seen_ms, seen};
    }
    int status = reply(resp, len, 200, sm_api_agents(out, n));
    free(out);
    sm_store_agents_free(rows, n);
    return status;
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
    char field[96];
    sm_error err = {0};
    if (sm_api_jobs_parse(body, blen, &reqs, &n, field, sizeof field, &err) != 0)
        return error(resp, len, 400, err.msg, field);
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
        sm_store_rollback(a->st);
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
    if (sm_store_result_count(a->st, &results, &err) != 0)
        return error(resp, len, 500, err.msg, NULL);
    sm_agent_row *rows = NULL;
    size_t n = 0, online = 0;
    if (sm_store_agents_list(a->st, &rows, &n, &err) != 0)
        return error(resp, len, 500, err.msg, NULL);
    for (size_t i = 0; i < n; i++) {
        sm_agent_status st = rows[i].status;
        int64_t seen;
        sm_control_agent_live(a->ctl, rows[i].name, &st, &seen);
        online += st != SM_AGENT_LOST;
    }
    sm_store_agents_free(rows, n);
    static const char *const names[] = {"polls", "results_stored", "results_duplicate",
                                        "results_orphan", "jobs_dispatched"};
    const uint64_t values[] = {s.polls, s.results_stored, s.results_duplicate, s.results_orphan,
                               s.jobs_dispatched};
    const char *rej_names[SM_REJ__COUNT];
    uint64_t rej_values[SM_REJ__COUNT];
    size_t nr = 0;
    for (int r = 1; r < SM_REJ__COUNT; r++) {
        rej_names[nr] = sm_reject_name((sm_reject)r);
        rej_values[nr++] = a->rejects ? sm_rejects_count(a->rejects, (sm_reject)r) : 0;
    }
    return reply(resp, len, 200,
                 sm_api_health(n, online, results, names, values, 5, rej_names, rej_values, nr));
}

int sm_api_handle(sm_api_ctx *a, const char *method, const char *path, const char *auth,
                  const char *body, size_t len, char **resp, size_t *resp_len)
{
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
    if (strncmp(path, "/api/jobs/", 10) == 0)
        return get ? get_job(a, path + 10, resp, resp_len)
                   : error(resp, resp_len, 405, "use GET", NULL);
    return error(resp, resp_len, 404, "no such endpoint", NULL);
}
