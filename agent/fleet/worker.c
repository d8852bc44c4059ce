/* The agent's worker thread: one job at a time, its result spooled before the control thread
 * may send it. */
#include "agent/fleet/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/runner/runner.h"
#include "agent/workloads/http.h"
#include "proto/log.h"

void daemon_wake(agentd *d)
{
    uint64_t one = 1;
    ssize_t n = write(d->wakefd, &one, sizeof one);
    (void)n; /* a full counter still wakes the reader */
}

static void spool_result(agentd *d, uint64_t job, uint32_t attempt, sm_role role, const char *store,
                         sm_result *r)
{
    sm_result_msg m = {.job = job, .attempt = attempt, .role = role, .result = *r};
    snprintf(m.store, sizeof m.store, "%s", store);
    sm_error err = {0};
    size_t len;
    char *json = sm_msg_result_encode(&m, &len, &err);
    if (!json || sm_spool_put(d->spool, job, attempt, json, len, &err) != 0) {
        /* The measurement is lost, but not why: the next polls carry a failed result naming
         * the spool error, so the job fails for its true reason instead of "went idle without
         * delivering a result". Set before the worker reports idle (the caller's order). */
        sm_log(LOG_ERR, "SM-SPOOL-FAIL", "job %" PRIu64 ": result not spooled: %s", job, err.msg);
        pthread_mutex_lock(&d->w.mu);
        d->unspooled = (sm_result_msg){.job = job, .attempt = attempt, .role = role};
        snprintf(d->unspooled.store, sizeof d->unspooled.store, "%s", store);
        sm_result_init(&d->unspooled.result);
        snprintf(d->unspooled.result.reason, sizeof d->unspooled.result.reason,
                 "result not spooled: %.200s", err.msg);
        d->has_unspooled = true;
        pthread_mutex_unlock(&d->w.mu);
    }
    free(json);
}

/* sm_runner_serve's on_ready, on the worker thread: the coordinator needs the port before it
 * can start the client, so the poll that carries it goes out now, not at the end of the
 * held one. */
static void on_ready(void *arg, uint16_t port)
{
    agentd *d = arg;
    pthread_mutex_lock(&d->w.mu);
    d->w.ready = true;
    d->w.ready_port = port;
    pthread_mutex_unlock(&d->w.mu);
    daemon_wake(d);
}

bool sm_daemon_url_allowed(const sm_daemon_cfg *cfg, const char *url)
{
    for (size_t i = 0; i < cfg->n_allow_http; i++) {
        const char *pre = cfg->allow_http[i];
        size_t n = strlen(pre);
        if (n == 0 || strncmp(url, pre, n) != 0)
            continue;
        if (pre[n - 1] == '/' || url[n] == '\0' || strchr("/?#", url[n]) != NULL)
            return true;
    }
    return false;
}

static bool same_family(const char *a, const char *b)
{
    return a[0] && b[0] && (strchr(a, ':') == NULL) == (strchr(b, ':') == NULL);
}

static int run_job(agentd *d, const sm_params *p, sm_role role, const char *addr, uint16_t port,
                   const char *pin, sm_result *r, sm_error *err)
{
    sm_runner_opts ro = {.sock_dir = d->sock_dir,
                         .abort = &d->w.abort,
                         .tls = d->tls,
                         .pin = d->cfg->pin,
                         .client_cpu = d->cfg->client_cpu,
                         .server_cpu = d->cfg->server_cpu};
    if (p->workload == SM_WL_HTTP && p->url[0] && !sm_daemon_url_allowed(d->cfg, p->url))
        return sm_error_set(err, SM_EINVAL,
                            "url: '%.120s' is not under an --allow-http prefix of this agent",
                            p->url);
    if (role == SM_ROLE_CLIENT && pin[0])
        ro.tls_pin = pin;
    sm_error why;
    switch (role) {
    case SM_ROLE_SERVER:
        /* addr is the client's data address from prepare: the port takes that peer alone. A
         * client of the other address family reaches this listener from an address of this
         * family, not from its data address, so it is not held to it. */
        if (same_family(addr, d->cfg->data_addr))
            ro.client_addr = addr;
        return sm_runner_serve(p, d->cfg->data_addr[0] ? d->cfg->data_addr : "0.0.0.0", &ro,
                               on_ready, d, r, err);
    case SM_ROLE_CLIENT:
        /* The coordinator took addr from a registered agent, but this agent's own policy
         * decides where it sends data: a coordinator (or a key) is not trusted to aim it. */
        if (sm_addr_policy_check(&d->cfg->data_addr_allow, addr, &why) != 0)
            return sm_error_set(err, SM_EINVAL, "server address: %s", why.msg);
        ro.source_addr = d->cfg->data_addr;
        return sm_runner_connect(p, addr, port, &ro, r, err);
    case SM_ROLE_BOTH:
        break;
    }
    return sm_runner_run(p, &ro, r, err);
}

void *daemon_worker_main(void *arg)
{
    agentd *d = arg;
    worker *w = &d->w;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->quit && (!w->has_job || w->running))
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->quit && !w->has_job)
            break;
        w->running = true;
        const uint64_t job = w->job;
        const uint32_t attempt = w->attempt;
        const sm_role role = w->role;
        const uint16_t port = w->port;
        char addr[SM_ADDR_MAX + 1], pin[SM_PIN_MAX + 1], store[SM_STORE_ID_HEX + 1];
        memcpy(addr, w->addr, sizeof addr);
        memcpy(pin, w->pin, sizeof pin);
        memcpy(store, w->store, sizeof store);
        sm_params p = w->params;
        pthread_mutex_unlock(&w->mu);

        sm_result r;
        sm_error err = {0};
        sm_result_init(&r);
        sm_log(LOG_INFO, "SM-JOB-START", "job %" PRIu64 ".%u: %s over %s, %s side", job, attempt,
               sm_workload_name(p.workload), sm_transport_name(p.transport), sm_role_name(role));
        /* A treatment is in place for this job alone: made before it, undone (and read back)
         * before its result is spooled, so that nothing after it runs on a treated host. */
        int rc = sm_treat_begin(&d->treat, &p, &err);
        if (rc == 0 && run_job(d, &p, role, addr, port, pin, &r, &err) != 0)
            rc = -1;
        if (rc == 0 || rc == -1) {
            sm_error ue = {0};
            if (sm_treat_end(&d->treat, &ue) != 0 && r.ok) {
                r.ok = false;
                snprintf(r.reason, sizeof r.reason, "%.250s", ue.msg);
            }
        }
        if (rc != 0) {
            r.ok = false;
            /* A refusal by policy is the reason itself, not a failure to start. */
            const bool refused = strncmp(err.msg, "url: ", 5) == 0 ||
                                 strncmp(err.msg, "server address: ", 16) == 0 ||
                                 strncmp(err.msg, "treatment: ", 11) == 0;
            snprintf(r.reason, sizeof r.reason, "%s%.200s",
                     refused ? "refused: " : "could not start: ", err.msg);
        }
        sm_log(LOG_INFO, "SM-JOB-END", "job %" PRIu64 ".%u: %s", job, attempt,
               r.ok ? "ok" : r.reason);
        spool_result(d, job, attempt, role, store, &r);
        sm_result_fini(&r);

        /* Only now: until the result is in the spool, the ready entry is what tells the
         * coordinator that this side is alive. */
        pthread_mutex_lock(&w->mu);
        w->running = false;
        w->has_job = false;
        w->ready = false;
        atomic_store(&w->abort, 0);
        pthread_mutex_unlock(&w->mu);
        daemon_wake(d); /* deliver it now rather than at the end of the held poll */
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}
