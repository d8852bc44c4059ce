/* The control core's lifecycle: loading the fleet, jobs and runs from the store, and reloading
 * them after a rollback. The rest is in fleet.c, poll.c, tick.c, dispatch.c, runs.c, intake.c
 * and adapt.c. */
#include "coordinator/control/control.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/control/internal.h"
#include "proto/codec.h"
#include "proto/log.h"

/* A wall time from the store on the liveness clock: as long ago as it was then. */
static int64_t live_of_wall(const sm_control *c, int64_t wall_ms, int64_t now_ms)
{
    if (wall_ms <= 0)
        return 0;
    const int64_t ago = now_ms > wall_ms ? now_ms - wall_ms : 0;
    return live_now(c, now_ms) - ago;
}

/* The registered agents, as after a restart: nobody has heard from them yet. */
static int load_agents(sm_control *c, int64_t now_ms, sm_error *err)
{
    sm_agent_row *rows = NULL;
    size_t n = 0;
    int rc = sm_store_agents_list(c->st, &rows, &n, err);
    for (size_t i = 0; !rc && i < n; i++) {
        cagent *a = ctl_agent_new(c, rows[i].name);
        if (!a) {
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
            break;
        }
        snprintf(a->boot, sizeof a->boot, "%s", rows[i].boot);
        a->facts_known = rows[i].facts_json != NULL;
        sm_facts facts;
        if (a->facts_known && sm_codec_facts_decode(rows[i].facts_json, strlen(rows[i].facts_json),
                                                    &facts, NULL) == 0)
            ctl_machine_of(a, &facts);
        sm_fp_row fp;
        bool found = false;
        rc = sm_store_fp_latest(c->st, a->name, &fp, &found, err);
        if (rc)
            break;
        a->fp_capable = found;
        sm_fp_row_fini(&fp);
        /* Nobody has heard from it since the restart: it gets 3 x hold_ms from now to poll,
         * and a host lost before gets its grace from now. */
        a->last_seen_ms = now_ms;
        a->heard_at = live_now(c, now_ms);
        a->status = rows[i].status == SM_AGENT_LOST ? SM_AGENT_LOST : SM_AGENT_ONLINE;
        a->lost_at = a->heard_at;
    }
    sm_store_agents_free(rows, n);
    return rc;
}

/* One running run as stored, with the state of the rounds it adds when its rule adds any. */
static int load_run(sm_control *c, const sm_run_row *row, sm_error *err)
{
    crun *r = calloc(1, sizeof *r);
    sm_spec spec;
    sm_error e = {0};
    int rc = 0;
    if (!r)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    r->id = row->id;
    r->total = row->total;
    r->done = row->done;
    r->failed = row->failed;
    r->parallel = row->parallel; /* as decided when it started */
    sm_run_row full;
    if (sm_store_run_get(c->st, r->id, &full, &e) == 0) {
        if (full.spec_json &&
            sm_spec_decode(full.spec_json, strlen(full.spec_json), &spec, &e) == 0) {
            rc = sm_spec_adds_rounds(&spec) ? ctl_adapt_open(c, r, &spec, err) : 0;
            sm_spec_fini(&spec);
        }
        sm_run_row_fini(&full);
    }
    if (!rc && sm_map_put_id(c->runs, r->id, r) != 0)
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    if (rc) {
        ctl_run_free(r);
        return rc;
    }
    sm_log(LOG_NOTICE, "SM-RUN-RESUME", "run %" PRIu64 " resumes: %u of %u jobs ended", r->id,
           r->done + r->failed, r->total);
    return 0;
}

static int load_runs(sm_control *c, sm_error *err)
{
    sm_run_row *runs = NULL;
    size_t nr = 0;
    int rc = sm_store_runs_running(c->st, &runs, &nr, err);
    for (size_t i = 0; !rc && i < nr; i++)
        rc = load_run(c, &runs[i], err);
    sm_store_runs_free(runs, nr);
    return rc;
}

/* Puts a resumed job where it was: in its hosts' queues, or current on its agent. */
static int resume_job(sm_control *c, cjob *j)
{
    cagent *a = sm_map_get(c->agents, j->host);
    if (!a && !(a = ctl_agent_new(c, j->host)))
        return SM_ENOMEM;
    /* An assigned or running job resumes as the agent's current one: its next poll says
     * whether it is still busy with it, or delivers its result from the spool. */
    crun *r = run_get(c, j->run_id);
    cagent *srv = NULL;
    if (j->peer[0] && !(srv = sm_map_get(c->agents, j->peer)) && !(srv = ctl_agent_new(c, j->peer)))
        return SM_ENOMEM;
    /* A pair job's handshake was in memory only: it starts over from its queues, as a
     * new attempt. Its sides may still be running the old one and deliver it: those
     * results are stored under the old attempt and do not end the job, and the new
     * attempt's sides are not taken for duplicates of them. */
    if (srv && (j->state == SM_JOB_ASSIGNED || j->state == SM_JOB_RUNNING)) {
        sm_log(LOG_NOTICE, "SM-JOB-REDO",
               "pair job %" PRIu64 " (%s -> %s) was in flight at the restart: attempt %u "
               "runs it again",
               j->id, j->host, j->peer, (j->attempt ? j->attempt : 1) + 1);
        j->attempt = (j->attempt ? j->attempt : 1) + 1;
        j->started_at = j->assigned_at = 0;
    }
    if (srv)
        j->state = SM_JOB_QUEUED;
    if (j->state == SM_JOB_QUEUED) {
        ctl_enqueue(a, j);
        if (srv)
            ctl_enqueue(srv, j);
    } else if (!a->current) {
        a->current = j;
        if (r)
            r->active++;
    } else {
        ctl_enqueue(a, j);
    }
    return 0;
}

/* The unfinished jobs, in the order the queues are rebuilt in. One that cannot be decoded is logged
 * and left out. */
static int load_jobs(sm_control *c, int64_t now_ms, sm_error *err)
{
    sm_job_row *jobs = NULL;
    size_t nj = 0;
    int rc = sm_store_jobs_unfinished(c->st, &jobs, &nj, err);
    for (size_t i = 0; !rc && i < nj; i++) {
        cjob *j = calloc(1, sizeof *j);
        if (!j) {
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
            break;
        }
        j->id = jobs[i].id;
        snprintf(j->host, sizeof j->host, "%s", jobs[i].host);
        j->state = jobs[i].state;
        j->attempt = jobs[i].attempt;
        j->started_at = live_of_wall(c, jobs[i].started_ms, now_ms);
        j->assigned_at = live_of_wall(c, jobs[i].assigned_ms, now_ms);
        j->run_id = jobs[i].run_id;
        j->cell = jobs[i].cell;
        j->ord = (uint32_t)i;
        snprintf(j->peer, sizeof j->peer, "%s", jobs[i].peer);
        if (sm_codec_params_decode(jobs[i].params_json, strlen(jobs[i].params_json), &j->params,
                                   err) != 0 ||
            sm_map_put_id(c->jobs, j->id, j) != 0) {
            sm_log(LOG_ERR, "SM-JOB-BAD", "job %" PRIu64 " cannot be resumed: %s", j->id,
                   err ? err->msg : "");
            free(j);
            continue;
        }
        if (resume_job(c, j) != 0)
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    sm_store_jobs_free(jobs, nj);
    return rc;
}

/* Every agent and every job resumed goes where the tick will find it when it is due: once,
 * at the start, so that no tick has to walk them. */
static int schedule_all(sm_control *c, sm_error *err)
{
    size_t cur = 0;
    const char *key;
    void *val;
    /* What the fleet's agents were last told, as far as its size says: an agent may wait
     * that long for an answer before it polls the new process. */
    const uint32_t hold = ctl_fleet_hold(c);
    while (sm_map_next(c->agents, &cur, &key, &val)) {
        ((cagent *)val)->hold_ms = hold;
        ctl_agent_rekey(c, val);
    }
    uint64_t id;
    cur = 0;
    int rc = 0;
    while (!rc && sm_map_next_id(c->jobs, &cur, &id, &val))
        rc = ctl_job_rekey(c, val, err);
    return rc;
}

int sm_control_open(sm_control **out, sm_store *st, const sm_control_cfg *cfg, int64_t now_ms,
                    sm_error *err)
{
    int rc;
    sm_control *c = calloc(1, sizeof *c);
    if (!c || !(c->agents = sm_map_new()) || !(c->jobs = sm_map_new()) ||
        !(c->runs = sm_map_new())) {
        sm_control_close(c);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    c->st = st;
    c->cfg = *cfg;
    if (c->cfg.max_agents == 0)
        c->cfg.max_agents = SM_AGENTS_MAX_DEFAULT;
    if ((rc = load_agents(c, now_ms, err)) || (rc = load_runs(c, err)) ||
        (rc = load_jobs(c, now_ms, err))) {
        sm_control_close(c);
        return rc;
    }
    if ((rc = schedule_all(c, err)) != 0) {
        sm_control_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

void sm_control_close(sm_control *c)
{
    if (!c)
        return;
    sm_deadlines_fini(&c->live);
    sm_deadlines_fini(&c->job_due);
    free(c->news_ring);
    sm_map_free(c->jobs, free);
    sm_map_free(c->agents, ctl_agent_free);
    sm_map_free(c->runs, ctl_run_free);
    free(c);
}

int sm_control_rollback(sm_control **cp, int64_t now_ms, sm_error *err)
{
    sm_control *old = *cp, *c = NULL;
    sm_error local = {0};
    if (!err)
        err = &local;
    sm_store_rollback(old->st);
    int rc = sm_control_open(&c, old->st, &old->cfg, now_ms, err);
    if (rc) {
        sm_log(LOG_ERR, "SM-CONTROL-KEEP",
               "cannot reload the jobs from the store after a rollback: %s", err->msg);
        return rc;
    }
    c->stats = old->stats;
    c->served = old->served;
    c->on_change = old->on_change;
    c->change_ctx = old->change_ctx;
    c->last_service_at = old->last_service_at;
    /* The agents' own words are in no table: their next polls would say them again, but
     * liveness (and a lost host's grace) would restart from now and an idle agent wait a hold
     * for its next job. */
    size_t cur = 0;
    const char *key;
    void *val;
    while (sm_map_next(c->agents, &cur, &key, &val)) {
        cagent *a = val;
        const cagent *was = sm_map_get(old->agents, a->name);
        if (!was)
            continue;
        a->last_seen_ms = was->last_seen_ms;
        a->heard_at = was->heard_at;
        a->forgiven_ms = was->forgiven_ms;
        if (a->status == SM_AGENT_LOST && was->status == SM_AGENT_LOST) {
            a->lost_at = was->lost_at;
            a->queue_failed = was->queue_failed;
        }
        a->idle = was->idle;
        a->hold_ms = was->hold_ms;
        a->says_wait = was->says_wait;
        /* Out of memory, they come back with its next poll. */
        (void)ctl_agent_set_labels(a, was->labels, was->n_labels);
        memcpy(a->data_addr, was->data_addr, sizeof a->data_addr);
        ctl_agent_rekey(c, a);
    }
    sm_control_close(old);
    *cp = c;
    return 0;
}

void sm_control_get_stats(const sm_control *c, sm_control_stats *out)
{
    *out = c->stats;
}

uint64_t sm_control_tick_visits(const sm_control *c)
{
    return c->tick_visits;
}

void sm_control_on_change(sm_control *c, sm_change_fn fn, void *ctx)
{
    c->on_change = fn;
    c->change_ctx = ctx;
}

/* ---- the entry points kept in the rooms of the control core: the fleet (fleet.c), the poll
 * (poll.c), the tick (tick.c), the dispatch of jobs (dispatch.c) and runs (runs.c) ---- */

int sm_control_tick(sm_control *c, int64_t now_ms, sm_error *err)
{
    return ctl_tick(c, now_ms, err);
}

int sm_control_submit(sm_control *c, const char *host, const sm_params *p, int64_t now_ms,
                      uint64_t *id, sm_error *err)
{
    return ctl_submit(c, host, p, now_ms, id, err);
}

int sm_control_run_start(sm_control *c, const char *spec_json, const sm_spec *spec, int64_t now_ms,
                         uint64_t *run_id, sm_error *err)
{
    return ctl_run_start(c, spec_json, spec, NULL, 0, now_ms, run_id, err);
}

int sm_control_run_start_only(sm_control *c, const char *spec_json, const sm_spec *spec,
                              const sm_control_pick *only, size_t n_only, int64_t now_ms,
                              uint64_t *run_id, sm_error *err)
{
    return ctl_run_start(c, spec_json, spec, only, n_only, now_ms, run_id, err);
}

int sm_control_run_cancel(sm_control *c, uint64_t run_id, int64_t now_ms, sm_error *err)
{
    return ctl_run_cancel(c, run_id, now_ms, err);
}

bool sm_control_admit(sm_control *c, const sm_poll *p, int64_t now_ms)
{
    return ctl_admit(c, p, now_ms);
}

bool sm_control_news(sm_control *c, const char *agent, int64_t now_ms, sm_poll_reply *reply,
                     sm_error *err)
{
    return ctl_news(c, agent, now_ms, reply, err);
}

int sm_control_expire(sm_control *c, const char *agent, int64_t now_ms, sm_poll_reply *reply,
                      sm_error *err)
{
    return ctl_expire(c, agent, now_ms, reply, err);
}

uint32_t sm_control_fleet_hold_ms(const sm_control *c)
{
    return ctl_fleet_hold(c);
}

uint32_t sm_control_agent_hold_ms(const sm_control *c, const char *agent)
{
    const cagent *a = sm_map_get(c->agents, agent);
    return a && a->hold_ms ? a->hold_ms : c->cfg.hold_ms;
}

bool sm_control_agent_live(sm_control *c, const char *name, sm_agent_status *status,
                           int64_t *last_seen_ms)
{
    return ctl_agent_live(c, name, status, last_seen_ms);
}

uint64_t sm_control_agent_quarantined(sm_control *c, const char *name)
{
    return ctl_agent_quarantined(c, name);
}

size_t sm_control_take_news(sm_control *c, char (*names)[SM_NAME_MAX + 1], size_t max)
{
    return ctl_take_news(c, names, max);
}

int sm_control_poll(sm_control *c, const sm_poll *p, int64_t now_ms, sm_poll_reply *reply,
                    bool *reply_now, sm_error *err)
{
    return ctl_poll(c, p, now_ms, reply, reply_now, err);
}
