/* Fleet and job logic of the coordinator: what each poll means and what to answer. */
#include "coordinator/control.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/map.h"
#include "coordinator/plan.h"
#include "coordinator/sharing.h"
#include "proto/codec.h"
#include "proto/log.h"

typedef struct cjob {
    uint64_t id;
    char host[SM_NAME_MAX + 1];
    sm_params params;
    sm_job_state state;
    uint32_t attempt;
    /* On the liveness clock (live_now): when the agent reported it busy with it (0 = not yet),
     * and when it was assigned. */
    int64_t started_at;
    int64_t assigned_at;
    bool assign_acked;
    uint64_t run_id;   /* 0: a job queued alone */
    uint32_t cell;     /* run jobs: the cell's index in its run */
    uint32_t ord;      /* position in the order its host queues were built in */
    struct cjob *next; /* the host's FIFO of queued jobs */
    /* Pair jobs: the server (receiver) host, its own queue link, and the handshake. */
    char peer[SM_NAME_MAX + 1];
    struct cjob *next_peer;
    uint8_t roles_got; /* bit SM_ROLE_SERVER / SM_ROLE_CLIENT: that side's result arrived */
    uint16_t ready_port;
    char ready_pin[SM_PIN_MAX + 1]; /* http with tls: the server's key, for the client */
    bool prepare_acked, start_acked;
} cjob;

typedef struct adapt adapt;

/* A matrix run in progress. */
typedef struct crun {
    uint64_t id;
    bool parallel; /* false: one job of the run fleet-wide at a time */
    uint32_t total, done, failed;
    uint32_t active; /* jobs assigned or running */
    bool cancelling; /* its jobs are being failed: no round is added now */
    adapt *ad;       /* adaptive repetitions; NULL for a fixed count */
} crun;

static void run_free(void *p);
static int adapt_job_ended(sm_control *c, crun *r, uint32_t cell, int64_t now_ms, sm_error *err);
static int adapt_open(sm_control *c, crun *r, const sm_spec *spec, sm_error *err);

typedef struct cagent {
    char name[SM_NAME_MAX + 1];
    char boot[SM_BOOT_HEX + 1];
    int64_t last_seen_ms; /* wall clock of its last poll, as stored and shown */
    int64_t heard_at;     /* its last poll on the liveness clock (live_now) */
    /* Time since heard_at during which the coordinator itself was away (stopped): not counted
     * as the agent's silence. Reset by each poll. */
    int64_t forgiven_ms;
    sm_agent_status status;
    int64_t lost_at;   /* when it was declared lost, on the liveness clock */
    bool queue_failed; /* its queued run jobs failed: it stayed away lost_grace_ms */
    bool facts_known;
    /* The machine it runs on, from its facts ("" unknown): hosts of one machine share CPUs. */
    char boot_id[SM_FACTS_ID_MAX + 1];
    char machine_id[SM_FACTS_ID_MAX + 1];
    bool idle;           /* what its last poll said */
    cjob *current;       /* assigned or running on it */
    bool cancel_pending; /* a cancel for cancel_job/attempt goes out until acked */
    uint64_t cancel_job;
    uint32_t cancel_attempt;
    cjob *qhead, *qtail;
    sm_label labels[SM_LABELS_MAX]; /* from its last poll, for host selection */
    size_t n_labels;
    char data_addr[SM_ADDR_MAX + 1];
    bool news; /* its held poll should hear of new work now */
    /* Acks for results its last poll resent though they were stored already: that poll is
     * held, and whatever answers it carries them (see owed_acks_pay). */
    struct {
        uint64_t job;
        uint32_t attempt;
        sm_role role;
    } owed[SM_POLL_RESULTS_MAX];
    size_t n_owed;
    uint64_t quarantined; /* its spool's entries out of service, as its last poll said */
} cagent;

struct sm_control {
    sm_store *st;
    sm_control_cfg cfg;
    sm_map *agents; /* name -> cagent */
    sm_map *jobs;   /* decimal id -> cjob, unfinished jobs only */
    sm_map *runs;   /* decimal id -> crun, running runs only */
    sm_control_stats stats;
    /* Log lines of refused results and polls: at most one a minute per kind. */
    struct quiet {
        int64_t at;
        uint64_t held_back;
    } quiet_wrong_host, quiet_cap, quiet_data_addr, quiet_name;
    /* Its previous poll or tick on the liveness clock: how long the coordinator was away. */
    bool served;
    int64_t last_service_at;
};

/* The clock silences and time limits are measured on (see sm_control_cfg.clock_ms). */
static int64_t live_now(const sm_control *c, int64_t now_ms)
{
    return c->cfg.clock_ms ? c->cfg.clock_ms(c->cfg.clock_arg) : now_ms;
}

/* A wall time from the store on the liveness clock: as long ago as it was then. */
static int64_t live_of_wall(const sm_control *c, int64_t wall_ms, int64_t now_ms)
{
    if (wall_ms <= 0)
        return 0;
    const int64_t ago = now_ms > wall_ms ? now_ms - wall_ms : 0;
    return live_now(c, now_ms) - ago;
}

static cjob **link_of(const cagent *a, cjob *j);
static cagent *next_of_run(sm_control *c, uint64_t run_id);

static void machine_of(cagent *a, const sm_facts *f)
{
    snprintf(a->boot_id, sizeof a->boot_id, "%s", f->boot_id);
    snprintf(a->machine_id, sizeof a->machine_id, "%s", f->machine_id);
}

static crun *run_get(sm_control *c, uint64_t id)
{
    char key[24];
    if (!id)
        return NULL;
    snprintf(key, sizeof key, "%" PRIu64, id);
    return sm_map_get(c->runs, key);
}

/* Every host with queued jobs of run r hears of them at its next chance. */
static void wake_run_hosts(sm_control *c, uint64_t run_id)
{
    size_t cur = 0;
    const char *key;
    void *val;
    while (sm_map_next(c->agents, &cur, &key, &val)) {
        cagent *a = val;
        for (cjob *j = a->qhead; j; j = *link_of(a, j))
            if (j->run_id == run_id) {
                a->news = true;
                break;
            }
    }
}

/* A run job ended for good: count it, and end the run when every job has. */
static int run_count(sm_control *c, uint64_t run_id, bool ok, int64_t now_ms, sm_error *err)
{
    crun *r = run_get(c, run_id);
    if (!r)
        return 0;
    if (ok)
        r->done++;
    else
        r->failed++;
    sm_run_state state = SM_RUN_RUNNING;
    char reason[128] = "";
    if (r->done + r->failed >= r->total) {
        state = r->failed ? SM_RUN_FAILED : SM_RUN_DONE;
        if (r->failed)
            snprintf(reason, sizeof reason, "%u of %u jobs failed", r->failed, r->total);
    }
    int rc = sm_store_run_update(c->st, r->id, state, reason, r->done, r->failed, now_ms, err);
    if (!rc && state != SM_RUN_RUNNING) {
        sm_log(LOG_NOTICE, "SM-RUN-END", "run %" PRIu64 " %s: %u done, %u failed", r->id,
               sm_run_state_name(state), r->done, r->failed);
        char key[24];
        snprintf(key, sizeof key, "%" PRIu64, r->id);
        run_free(sm_map_del(c->runs, key));
    } else if (!rc && !r->parallel) {
        wake_run_hosts(c, run_id);
    }
    return rc;
}

/* A run job counted failed (its agent was lost) turned out done: a result came late from
 * the agent's spool. The run's counts move it from failed to done, in memory while the run
 * goes on, and in its row when it has ended, so that they keep equal to its jobs. */
static int run_late_done(sm_control *c, uint64_t run_id, int64_t now_ms, sm_error *err)
{
    crun *r = run_get(c, run_id);
    if (r) {
        if (r->failed) {
            r->failed--;
            r->done++;
        }
        return sm_store_run_update(c->st, r->id, SM_RUN_RUNNING, "", r->done, r->failed, now_ms,
                                   err);
    }
    sm_run_row row;
    int rc = sm_store_run_get(c->st, run_id, &row, err);
    if (rc)
        return rc;
    if (row.failed) {
        row.failed--;
        row.done++;
    }
    /* An ended run keeps the time it ended; a cancelled one stays cancelled. */
    sm_run_state state = row.state;
    char reason[sizeof row.reason];
    snprintf(reason, sizeof reason, "%s", row.reason);
    if (state == SM_RUN_FAILED || state == SM_RUN_DONE) {
        state = row.failed ? SM_RUN_FAILED : SM_RUN_DONE;
        if (row.failed)
            snprintf(reason, sizeof reason, "%u of %u jobs failed", row.failed, row.total);
        else
            reason[0] = '\0';
    }
    rc = sm_store_run_update(c->st, run_id, state, reason, row.done, row.failed,
                             state == SM_RUN_RUNNING ? now_ms : row.finished_ms, err);
    if (!rc)
        sm_log(LOG_NOTICE, "SM-RUN-LATE",
               "run %" PRIu64 " %s: %u done, %u failed after a late result", run_id,
               sm_run_state_name(state), row.done, row.failed);
    sm_run_row_fini(&row);
    return rc;
}

static void id_key(uint64_t id, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu64, id);
}

static cagent *agent_new(sm_control *c, const char *name)
{
    cagent *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    snprintf(a->name, sizeof a->name, "%s", name);
    a->status = SM_AGENT_LOST; /* until it polls */
    if (sm_map_put(c->agents, a->name, a) != 0) {
        free(a);
        return NULL;
    }
    return a;
}

/* A pair job sits in two queues, its client's and its server's, each with its own link.
 * Every host's queue follows one global order (the run's plan), so a pair job that heads
 * both of its queues can always start once both hosts are idle: no cycle of hosts can wait
 * on each other. */
static cjob **link_of(const cagent *a, cjob *j)
{
    return strcmp(j->host, a->name) == 0 ? &j->next : &j->next_peer;
}

static void enqueue(cagent *a, cjob *j)
{
    *link_of(a, j) = NULL;
    if (a->qtail)
        *link_of(a, a->qtail) = j;
    else
        a->qhead = j;
    a->qtail = j;
}

static cjob *dequeue(cagent *a)
{
    cjob *j = a->qhead;
    if (j) {
        a->qhead = *link_of(a, j);
        if (!a->qhead)
            a->qtail = NULL;
        *link_of(a, j) = NULL;
    }
    return j;
}

/* Removes j from a's queue, wherever it is. */
static void unqueue(cagent *a, cjob *j)
{
    cjob *prev = NULL, *cur = a->qhead;
    while (cur && cur != j) {
        prev = cur;
        cur = *link_of(a, cur);
    }
    if (!cur)
        return;
    cjob *next = *link_of(a, j);
    if (prev)
        *link_of(a, prev) = next;
    else
        a->qhead = next;
    if (a->qtail == j)
        a->qtail = prev;
    *link_of(a, j) = NULL;
}

static cjob *job_get(sm_control *c, uint64_t id)
{
    char key[24];
    id_key(id, key, sizeof key);
    return sm_map_get(c->jobs, key);
}

/* Takes a queued job out of every queue it is in (its host's, and its server's). */
static void unqueue_all(sm_control *c, cjob *j)
{
    cagent *a = sm_map_get(c->agents, j->host);
    cagent *b = j->peer[0] ? sm_map_get(c->agents, j->peer) : NULL;
    if (a)
        unqueue(a, j);
    if (b)
        unqueue(b, j);
}

/* A job can end while still queued (a pair job resumed after a restart is queued again, and
 * its sides may still deliver the attempt they were running): it leaves every queue before
 * it is freed, or a queue would keep a dangling head. */
static void job_forget(sm_control *c, cjob *j)
{
    char key[24];
    unqueue_all(c, j);
    id_key(j->id, key, sizeof key);
    sm_map_del(c->jobs, key);
    free(j);
}

/* Whether a failed run job gets its one retry: not when it was cancelled or its agent is
 * gone (the run goes on without that host), and only once. The job a host was lost in waits
 * with its queued ones for it to come back, when lost hosts get a grace. */
static bool retryable(const sm_control *c, const cjob *j, const char *reason)
{
    static const char died[] = "agent-lost: the agent stopped polling";
    const bool lost = strncmp(reason, "agent-lost", 10) == 0;
    return j->run_id && j->attempt == 1 && strncmp(reason, "cancelled", 9) != 0 &&
           (!lost || (c->cfg.lost_grace_ms && strncmp(reason, died, sizeof died - 1) == 0)) &&
           strstr(reason, "cancelled") == NULL;
}

/* Ends a job (done or failed) in the store and in memory; a failed run job is queued again
 * once, at the end of its host's queue ("retried once, later"). */
static int job_finish(sm_control *c, cjob *j, sm_job_state state, const char *reason,
                      int64_t now_ms, sm_error *err)
{
    cagent *a = sm_map_get(c->agents, j->host);
    cagent *b = j->peer[0] ? sm_map_get(c->agents, j->peer) : NULL;
    crun *r = run_get(c, j->run_id);
    const bool was_active = j->state == SM_JOB_ASSIGNED || j->state == SM_JOB_RUNNING;
    /* A side still busy with a pair job that failed is told to stop. */
    cagent *sides[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        cagent *x = sides[i];
        if (!x || x->current != j)
            continue;
        if (j->peer[0] && state == SM_JOB_FAILED) {
            x->cancel_pending = true;
            x->cancel_job = j->id;
            x->cancel_attempt = j->attempt;
            x->news = true;
        }
        x->current = NULL;
    }
    if (r && was_active && r->active)
        r->active--;
    /* The next job of a one-at-a-time run may start now: its host hears of it at once. */
    if (r && !r->parallel && r->active == 0) {
        cagent *next = next_of_run(c, r->id);
        if (next)
            next->news = true;
    }
    if (state == SM_JOB_FAILED && r && retryable(c, j, reason)) {
        char why[256];
        snprintf(why, sizeof why, "retry after: %.200s", reason);
        int rc = sm_store_job_set_state(c->st, j->id, 2, SM_JOB_QUEUED, why, now_ms, err);
        if (rc)
            return rc;
        sm_log(LOG_NOTICE, "SM-JOB-RETRY", "job %" PRIu64 " on %s failed (%s): retried later",
               j->id, j->host, reason);
        j->attempt = 2;
        j->state = SM_JOB_QUEUED;
        j->assign_acked = j->prepare_acked = j->start_acked = false;
        j->roles_got = 0;
        j->ready_port = 0;
        j->ready_pin[0] = '\0';
        unqueue_all(c, j); /* queued at the end, never twice */
        if (a) {
            enqueue(a, j);
            a->news = true;
        }
        if (b) {
            enqueue(b, j);
            b->news = true;
        }
        return 0;
    }
    int rc = sm_store_job_set_state(c->st, j->id, j->attempt, state, reason, now_ms, err);
    if (rc)
        return rc;
    if (state == SM_JOB_FAILED)
        sm_log(LOG_NOTICE, "SM-JOB-FAILED", "job %" PRIu64 " on %s failed: %s", j->id, j->host,
               reason);
    const uint64_t run_id = j->run_id;
    const uint32_t cell = j->cell;
    job_forget(c, j);
    /* A round the job's cell still needs is queued before the run's counts are checked, so
     * that the run does not end under it. */
    if (r && r->ad && (rc = adapt_job_ended(c, r, cell, now_ms, err)))
        return rc;
    return run_id ? run_count(c, run_id, state == SM_JOB_DONE, now_ms, err) : 0;
}

int sm_control_open(sm_control **out, sm_store *st, const sm_control_cfg *cfg, int64_t now_ms,
                    sm_error *err)
{
    sm_agent_row *rows = NULL;
    sm_job_row *jobs = NULL;
    size_t n = 0, nj = 0;
    int rc;
    sm_control *c = calloc(1, sizeof *c);
    if (!c || !(c->agents = sm_map_new()) || !(c->jobs = sm_map_new()) ||
        !(c->runs = sm_map_new())) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        goto fail;
    }
    c->st = st;
    c->cfg = *cfg;
    if (c->cfg.max_agents == 0)
        c->cfg.max_agents = SM_AGENTS_MAX_DEFAULT;
    if ((rc = sm_store_agents_list(st, &rows, &n, err)))
        goto fail;
    for (size_t i = 0; i < n; i++) {
        cagent *a = agent_new(c, rows[i].name);
        if (!a) {
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
            goto fail;
        }
        snprintf(a->boot, sizeof a->boot, "%s", rows[i].boot);
        a->facts_known = rows[i].facts_json != NULL;
        sm_facts facts;
        if (a->facts_known && sm_codec_facts_decode(rows[i].facts_json, strlen(rows[i].facts_json),
                                                    &facts, NULL) == 0)
            machine_of(a, &facts);
        /* Nobody has heard from it since the restart: it gets 3 x hold_ms from now to poll,
         * and a host lost before gets its grace from now. */
        a->last_seen_ms = now_ms;
        a->heard_at = live_now(c, now_ms);
        a->status = rows[i].status == SM_AGENT_LOST ? SM_AGENT_LOST : SM_AGENT_ONLINE;
        a->lost_at = a->heard_at;
    }
    sm_run_row *runs = NULL;
    size_t nr = 0;
    if ((rc = sm_store_runs_running(st, &runs, &nr, err)))
        goto fail;
    for (size_t i = 0; i < nr; i++) {
        crun *r = calloc(1, sizeof *r);
        char key[24];
        sm_spec spec;
        char field[64];
        sm_error e = {0};
        if (!r) {
            sm_store_runs_free(runs, nr);
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
            goto fail;
        }
        r->id = runs[i].id;
        r->total = runs[i].total;
        r->done = runs[i].done;
        r->failed = runs[i].failed;
        r->parallel = runs[i].parallel; /* as decided when it started */
        sm_run_row full;
        if (sm_store_run_get(st, r->id, &full, &e) == 0) {
            if (full.spec_json && sm_spec_decode(full.spec_json, strlen(full.spec_json), &spec,
                                                 field, sizeof field, &e) == 0) {
                rc = spec.adaptive ? adapt_open(c, r, &spec, err) : 0;
                sm_spec_fini(&spec);
            }
            sm_run_row_fini(&full);
        }
        snprintf(key, sizeof key, "%" PRIu64, r->id);
        if (rc) {
            run_free(r);
            sm_store_runs_free(runs, nr);
            goto fail;
        }
        if (sm_map_put(c->runs, key, r) != 0) {
            run_free(r);
            sm_store_runs_free(runs, nr);
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
            goto fail;
        }
        sm_log(LOG_NOTICE, "SM-RUN-RESUME", "run %" PRIu64 " resumes: %u of %u jobs ended", r->id,
               r->done + r->failed, r->total);
    }
    sm_store_runs_free(runs, nr);
    if ((rc = sm_store_jobs_unfinished(st, &jobs, &nj, err)))
        goto fail;
    for (size_t i = 0; i < nj; i++) {
        cjob *j = calloc(1, sizeof *j);
        char key[24];
        if (!j) {
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
            goto fail;
        }
        j->id = jobs[i].id;
        snprintf(j->host, sizeof j->host, "%s", jobs[i].host);
        j->state = jobs[i].state;
        j->attempt = jobs[i].attempt;
        j->started_at = live_of_wall(c, jobs[i].started_ms, now_ms);
        j->assigned_at = live_of_wall(c, jobs[i].assigned_ms, now_ms);
        j->run_id = jobs[i].run_id;
        j->cell = jobs[i].cell;
        j->ord = (uint32_t)i; /* the order the queues are rebuilt in, below */
        snprintf(j->peer, sizeof j->peer, "%s", jobs[i].peer);
        id_key(j->id, key, sizeof key);
        if (sm_codec_params_decode(jobs[i].params_json, strlen(jobs[i].params_json), &j->params,
                                   err) != 0 ||
            sm_map_put(c->jobs, key, j) != 0) {
            sm_log(LOG_ERR, "SM-JOB-BAD", "job %" PRIu64 " cannot be resumed: %s", j->id,
                   err ? err->msg : "");
            free(j);
            continue;
        }
        cagent *a = sm_map_get(c->agents, j->host);
        if (!a && !(a = agent_new(c, j->host))) {
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
            goto fail;
        }
        /* An assigned or running job resumes as the agent's current one: its next poll says
         * whether it is still busy with it, or delivers its result from the spool. */
        crun *r = run_get(c, j->run_id);
        cagent *srv = NULL;
        if (j->peer[0] && !(srv = sm_map_get(c->agents, j->peer)) &&
            !(srv = agent_new(c, j->peer))) {
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
            goto fail;
        }
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
            enqueue(a, j);
            if (srv)
                enqueue(srv, j);
        } else if (!a->current) {
            a->current = j;
            if (r)
                r->active++;
        } else {
            enqueue(a, j);
        }
    }
    sm_store_agents_free(rows, n);
    sm_store_jobs_free(jobs, nj);
    *out = c;
    return 0;
fail:
    sm_store_agents_free(rows, n);
    sm_store_jobs_free(jobs, nj);
    sm_control_close(c);
    return rc;
}

void sm_control_close(sm_control *c)
{
    if (!c)
        return;
    sm_map_free(c->jobs, free);
    sm_map_free(c->agents, free);
    sm_map_free(c->runs, run_free);
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
        memcpy(a->labels, was->labels, sizeof a->labels);
        a->n_labels = was->n_labels;
        memcpy(a->data_addr, was->data_addr, sizeof a->data_addr);
    }
    sm_control_close(old);
    *cp = c;
    return 0;
}

/* Registers or refreshes the agent row when something about it changed. */
static int upsert_agent(sm_control *c, cagent *a, const sm_poll *p, int64_t now_ms, sm_error *err)
{
    sm_agent_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.name, sizeof row.name, "%s", p->agent);
    snprintf(row.boot, sizeof row.boot, "%s", p->boot);
    snprintf(row.data_addr, sizeof row.data_addr, "%s", p->data_addr);
    row.labels_json = sm_msg_labels_json(p->labels, p->n_labels, err);
    row.facts_json = p->have_facts ? sm_msg_facts_json(&p->facts, err) : NULL;
    row.first_seen_ms = now_ms;
    row.last_seen_ms = now_ms;
    row.status = a->status;
    int rc = row.labels_json ? sm_store_agent_upsert(c->st, &row, err) : SM_ENOMEM;
    free(row.labels_json);
    free(row.facts_json);
    if (!rc && p->have_facts) {
        a->facts_known = true;
        machine_of(a, &p->facts);
    }
    return rc;
}

/* The command that assigns j, resent in every reply until the agent acks it. */
static void assign_command(const cjob *j, sm_command *cmd)
{
    memset(cmd, 0, sizeof *cmd);
    snprintf(cmd->id, sizeof cmd->id, "a%" PRIu64 ".%u", j->id, j->attempt);
    cmd->kind = SM_CMD_ASSIGN;
    cmd->job = j->id;
    cmd->attempt = j->attempt;
    cmd->params = j->params;
}

/* prepare (to the server, with the client's registered address: the server accepts that
 * address alone) and start (to the client, with the server's registered address: agents
 * connect only to addresses the coordinator took from registered agents). */
static void pair_command(const cjob *j, sm_cmd_kind kind, const char *addr, sm_command *cmd)
{
    memset(cmd, 0, sizeof *cmd);
    snprintf(cmd->id, sizeof cmd->id, "%c%" PRIu64 ".%u", kind == SM_CMD_PREPARE ? 'p' : 's', j->id,
             j->attempt);
    cmd->kind = kind;
    cmd->job = j->id;
    cmd->attempt = j->attempt;
    cmd->params = j->params;
    snprintf(cmd->addr, sizeof cmd->addr, "%s", addr);
    if (kind == SM_CMD_START) {
        cmd->port = j->ready_port;
        if (j->params.workload == SM_WL_HTTP && j->params.tls)
            memcpy(cmd->pin, j->ready_pin, sizeof cmd->pin);
    }
}

static void cancel_command(const cagent *a, sm_command *cmd)
{
    memset(cmd, 0, sizeof *cmd);
    snprintf(cmd->id, sizeof cmd->id, "x%" PRIu64 ".%u", a->cancel_job, a->cancel_attempt);
    cmd->kind = SM_CMD_CANCEL;
    cmd->job = a->cancel_job;
    cmd->attempt = a->cancel_attempt;
}

/* The agent whose queue starts with run r's next job in dispatch order: the lowest ord among
 * the heads of the queues (a host's queue keeps its run's jobs in that order; a retried job,
 * queued again at the end, waits its turn there). NULL when none is queued. O(fleet), paid by
 * runs that are not parallel alone. */
static cagent *next_of_run(sm_control *c, uint64_t run_id)
{
    size_t cur = 0;
    const char *key;
    void *val;
    cagent *best = NULL;
    while (sm_map_next(c->agents, &cur, &key, &val)) {
        cagent *x = val;
        if (x->qhead && x->qhead->run_id == run_id && (!best || x->qhead->ord < best->qhead->ord))
            best = x;
    }
    return best;
}

/* A run with "parallel": false runs one job at a time, in its dispatch order: hosts take
 * turns repetition by repetition, so that a disturbance of a few seconds falls on every host
 * alike rather than on whichever host happened to be running then. */
static bool gate_open(sm_control *c, const crun *gate, const cagent *a)
{
    if (!gate || gate->parallel)
        return true;
    if (gate->active > 0)
        return false;
    const cagent *next = next_of_run(c, gate->id);
    return next == NULL || next == a || next->qhead == a->qhead;
}

/* Commands for the agent now: its pending cancel, its unacked assignment, or (when idle) the
 * next queued job, which becomes its current one. */
static int commands_for(sm_control *c, cagent *a, int64_t now_ms, sm_poll_reply *reply,
                        sm_error *err)
{
    if (a->cancel_pending && reply->n_commands < SM_REPLY_COMMANDS_MAX)
        cancel_command(a, &reply->commands[reply->n_commands++]);
    crun *gate = a->qhead ? run_get(c, a->qhead->run_id) : NULL;
    cagent *other = NULL;
    bool pair_ready = true;
    if (a->qhead && a->qhead->peer[0]) {
        cjob *h = a->qhead;
        other = sm_map_get(c->agents, strcmp(h->host, a->name) == 0 ? h->peer : h->host);
        pair_ready = other && !other->current && other->idle && other->status != SM_AGENT_LOST &&
                     other->qhead == h;
    }
    if (!a->current && a->idle && a->status != SM_AGENT_LOST && a->qhead && pair_ready &&
        gate_open(c, gate, a)) {
        cjob *j = a->qhead;
        uint32_t attempt = j->attempt ? j->attempt : 1;
        int rc = sm_store_job_set_state(c->st, j->id, attempt, SM_JOB_ASSIGNED, "", now_ms, err);
        if (rc)
            return rc;
        dequeue(a);
        j->attempt = attempt;
        j->state = SM_JOB_ASSIGNED;
        j->assigned_at = live_now(c, now_ms);
        j->assign_acked = false;
        a->current = j;
        if (other) {
            dequeue(other);
            other->current = j;
            other->news = true; /* the server hears "prepare" now, the client "start" later */
        }
        if (gate)
            gate->active++;
        c->stats.jobs_dispatched++;
    }
    cjob *cur = a->current;
    if (cur && reply->n_commands < SM_REPLY_COMMANDS_MAX) {
        if (!cur->peer[0]) {
            if (cur->state == SM_JOB_ASSIGNED && !cur->assign_acked)
                assign_command(cur, &reply->commands[reply->n_commands++]);
        } else if (strcmp(cur->peer, a->name) == 0) {
            if (!cur->prepare_acked) {
                const cagent *cl = sm_map_get(c->agents, cur->host);
                pair_command(cur, SM_CMD_PREPARE, cl ? cl->data_addr : "",
                             &reply->commands[reply->n_commands++]);
            }
        } else if (cur->ready_port && !cur->start_acked) {
            cagent *srv = sm_map_get(c->agents, cur->peer);
            pair_command(cur, SM_CMD_START, srv ? srv->data_addr : "",
                         &reply->commands[reply->n_commands++]);
        }
    }
    reply->want_facts = !a->facts_known;
    return 0;
}

/* A result measured for a job of another store (one this store replaced, or the store before
 * a cut WAL rolled it back): its job id names another job here, if any. An agent that does not
 * say (from before store ids) is taken at its word, as before. */
static bool foreign(const sm_control *c, const sm_result_msg *m)
{
    return m->store[0] != '\0' && strcmp(m->store, sm_store_id(c->st)) != 0;
}

/* Every reply says which store it comes from: when that changes, job ids start over. */
static void reply_init(const sm_control *c, sm_poll_reply *reply)
{
    memset(reply, 0, sizeof *reply);
    snprintf(reply->store, sizeof reply->store, "%s", sm_store_id(c->st));
}

static int take_result(sm_control *c, cagent *a, const sm_result_msg *m, int64_t now_ms,
                       sm_poll_reply *reply, sm_error *err);

/* Whether a refusal of this kind is logged now: one line a minute, saying how many were not. */
static bool quiet_log(struct quiet *q, int64_t now_ms, uint64_t *held_back)
{
    if (q->at && now_ms - q->at < 60000 && now_ms >= q->at) {
        q->held_back++;
        return false;
    }
    q->at = now_ms;
    *held_back = q->held_back;
    q->held_back = 0;
    return true;
}

static void ack_result(sm_poll_reply *reply, const sm_result_msg *m)
{
    if (reply->n_acks < SM_REPLY_ACKS_MAX) {
        reply->ack_job[reply->n_acks] = m->job;
        reply->ack_attempt[reply->n_acks] = m->attempt;
        reply->n_acks++;
    }
}

/* A result (or a side of a pair job) is taken only from the host that ran it: the job's host,
 * or its peer for the server side. From anyone else it is counted, logged and acked, never
 * stored, and the job goes on waiting for its own host. The ack only stops the sender's
 * resends: the result can never be stored, and unacked it would come back with every poll. */
static bool wrong_host(sm_control *c, const cagent *a, const sm_result_msg *m,
                       const sm_job_row *row, int64_t now_ms, sm_poll_reply *reply)
{
    const char *owner = m->role == SM_ROLE_SERVER ? row->peer : row->host;
    if (strcmp(owner, a->name) == 0)
        return false;
    c->stats.results_wrong_host++;
    uint64_t held_back;
    if (quiet_log(&c->quiet_wrong_host, now_ms, &held_back))
        sm_log(LOG_WARNING, "SM-RESULT-WRONG-HOST",
               "%s sent a result for job %" PRIu64 ".%u (role %s), which belongs to %s: not stored "
               "(%" PRIu64 " more like it in the last minute not logged)",
               a->name, m->job, m->attempt, sm_role_name(m->role), owner[0] ? owner : "no host",
               held_back);
    ack_result(reply, m);
    return true;
}

static void put_cols(const sm_result *r, sm_result_cols *cols)
{
    *cols = (sm_result_cols){
        .bytes = sm_result_get(r, SM_M_BYTES),
        .seconds = sm_result_get(r, SM_M_SECONDS),
        .throughput_MBps = sm_result_get(r, SM_M_THROUGHPUT),
        .rtt_p50_us = sm_result_get(r, SM_M_RTT_P50_US),
        .connects_per_s = sm_result_get(r, SM_M_CONNECTS_PER_S),
        .ok = r->ok,
    };
}

/* Both sides of a pair job are stored: merge them into the job's one result. */
static int merge_sides(sm_control *c, cjob *j, int64_t now_ms, sm_error *err)
{
    char *sj = NULL, *cj = NULL, *json = NULL;
    sm_result srv, cli, merged;
    sm_result_init(&srv);
    sm_result_init(&cli);
    sm_result_init(&merged);
    int rc = sm_store_side_get(c->st, j->id, j->attempt, "server", &sj, err);
    if (!rc)
        rc = sm_store_side_get(c->st, j->id, j->attempt, "client", &cj, err);
    if (!rc && (!sj || !cj))
        rc = sm_error_set(err, SM_EINVAL, "job %" PRIu64 ": a side is missing", j->id);
    if (!rc)
        rc = sm_codec_result_decode(sj, strlen(sj), &srv, err);
    if (!rc)
        rc = sm_codec_result_decode(cj, strlen(cj), &cli, err);
    if (!rc && sm_result_merge_pair(&j->params, &srv, &cli, &merged) != 0)
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    if (!rc && !(json = sm_msg_result_json(&merged, err)))
        rc = SM_ENOMEM;
    if (!rc) {
        sm_result_cols cols;
        bool inserted;
        put_cols(&merged, &cols);
        const char *who = j->params.workload == SM_WL_STREAM ? j->peer : j->host;
        rc = sm_store_result_insert(c->st, j->id, j->attempt, who, json, &cols, now_ms, &inserted,
                                    err);
        if (!rc && inserted)
            c->stats.results_stored++;
    }
    if (!rc)
        rc = merged.ok ? job_finish(c, j, SM_JOB_DONE, "", now_ms, err)
                       : job_finish(c, j, SM_JOB_FAILED, merged.reason, now_ms, err);
    free(sj);
    free(cj);
    free(json);
    sm_result_fini(&srv);
    sm_result_fini(&cli);
    sm_result_fini(&merged);
    return rc;
}

/* One side of a pair job: stored once per role and acked; the job ends when both are in. */
static int take_side(sm_control *c, cagent *a, const sm_result_msg *m, int64_t now_ms,
                     sm_poll_reply *reply, sm_error *err)
{
    char *json = sm_msg_result_json(&m->result, err);
    if (!json)
        return SM_ENOMEM;
    bool inserted = false;
    sm_job_row row;
    int rc = sm_store_job_get(c->st, m->job, &row, NULL);
    if (rc == 0 && wrong_host(c, a, m, &row, now_ms, reply)) {
        sm_job_row_fini(&row);
        free(json);
        return 0;
    }
    if (rc == 0) {
        sm_job_row_fini(&row);
        rc = sm_store_side_insert(c->st, m->job, m->attempt, sm_role_name(m->role), a->name, json,
                                  now_ms, &inserted, err);
    } else {
        c->stats.results_orphan++;
        rc = 0;
    }
    free(json);
    if (rc)
        return rc;
    cjob *j = job_get(c, m->job);
    if (j && j->attempt == m->attempt && j->peer[0]) {
        j->roles_got |= (uint8_t)(1u << m->role);
        if (a->current == j)
            a->current = NULL; /* this side is over; the other may still run */
        if (!m->result.ok) {
            /* Its partner cannot succeed without it: stop it now rather than at its limit. */
            cagent *o = sm_map_get(c->agents, strcmp(a->name, j->host) == 0 ? j->peer : j->host);
            if (o && o->current == j) {
                o->cancel_pending = true;
                o->cancel_job = j->id;
                o->cancel_attempt = j->attempt;
                o->news = true;
            }
        }
        if (j->roles_got == ((1u << SM_ROLE_SERVER) | (1u << SM_ROLE_CLIENT)) &&
            (rc = merge_sides(c, j, now_ms, err)))
            return rc;
    }
    if (reply->n_acks < SM_REPLY_ACKS_MAX) {
        reply->ack_job[reply->n_acks] = m->job;
        reply->ack_attempt[reply->n_acks] = m->attempt;
        reply->n_acks++;
    }
    return 0;
}

/* Stores one result and settles its job. A duplicate is acked again: the agent's copy of the
 * ack was lost, and storing is idempotent by (job, attempt). */
static int take_result(sm_control *c, cagent *a, const sm_result_msg *m, int64_t now_ms,
                       sm_poll_reply *reply, sm_error *err)
{
    if (foreign(c, m)) {
        /* Neither stored nor acked: the reply's store id tells the agent to set it aside, and
         * it stays the agent's, on its disk. */
        c->stats.results_foreign++;
        sm_log(LOG_WARNING, "SM-RESULT-FOREIGN",
               "%s sent a result for job %" PRIu64 ".%u of store %s, not this store %s: not stored",
               a->name, m->job, m->attempt, m->store, sm_store_id(c->st));
        return 0;
    }
    if (m->role != SM_ROLE_BOTH)
        return take_side(c, a, m, now_ms, reply, err);
    char *json = sm_msg_result_json(&m->result, err);
    if (!json)
        return SM_ENOMEM;
    const sm_result *r = &m->result;
    sm_result_cols cols = {
        .bytes = sm_result_get(r, SM_M_BYTES),
        .seconds = sm_result_get(r, SM_M_SECONDS),
        .throughput_MBps = sm_result_get(r, SM_M_THROUGHPUT),
        .rtt_p50_us = sm_result_get(r, SM_M_RTT_P50_US),
        .connects_per_s = sm_result_get(r, SM_M_CONNECTS_PER_S),
        .ok = r->ok,
    };
    bool inserted = false, late = false, retry_waits = false;
    uint64_t late_run = 0;
    sm_job_row row;
    memset(&row, 0, sizeof row);
    int rc = sm_store_job_get(c->st, m->job, &row, NULL);
    if (rc == 0 && wrong_host(c, a, m, &row, now_ms, reply)) {
        sm_job_row_fini(&row);
        free(json);
        return 0;
    }
    if (rc == 0) {
        /* A job failed for the agent's absence ("agent-lost", "agent-restarted") whose result
         * turns up from the spool was measured after all: the result completes it. */
        late = row.state == SM_JOB_FAILED && row.attempt == m->attempt &&
               strncmp(row.reason, "agent-", 6) == 0;
        /* Or it was queued again for its retry, which has not started: the late result
         * completes it all the same, and the retry is not run. */
        retry_waits = row.state == SM_JOB_QUEUED && row.attempt == m->attempt + 1 &&
                      strncmp(row.reason, "retry after: agent-", 19) == 0;
        late_run = row.run_id;
        sm_job_row_fini(&row);
        rc = sm_store_result_insert(c->st, m->job, m->attempt, a->name, json, &cols, now_ms,
                                    &inserted, err);
    } else {
        /* No such job here (a store that was replaced): keeping it unacked would have the
         * agent resend it forever, so it is acked, counted and logged. */
        c->stats.results_orphan++;
        sm_log(LOG_WARNING, "SM-RESULT-ORPHAN",
               "%s sent a result for job %" PRIu64 ", which this store does not have", a->name,
               m->job);
        rc = 0;
    }
    free(json);
    if (rc)
        return rc;
    if (inserted)
        c->stats.results_stored++;
    else
        c->stats.results_duplicate++;
    if (late && inserted &&
        (rc = sm_store_job_set_state(c->st, m->job, m->attempt, r->ok ? SM_JOB_DONE : SM_JOB_FAILED,
                                     r->ok ? "" : r->reason, now_ms, err)))
        return rc;
    if (late && inserted && r->ok && late_run && (rc = run_late_done(c, late_run, now_ms, err)))
        return rc;
    cjob *j = job_get(c, m->job);
    if (retry_waits && inserted && r->ok && j && j->state == SM_JOB_QUEUED &&
        j->attempt == m->attempt + 1) {
        sm_log(LOG_NOTICE, "SM-JOB-LATE",
               "job %" PRIu64 ": attempt %u's result arrived late and completes it; its retry "
               "does not run",
               j->id, m->attempt);
        unqueue_all(c, j);
        j->attempt = m->attempt;
    }
    if (j && j->attempt == m->attempt) {
        rc = r->ok ? job_finish(c, j, SM_JOB_DONE, "", now_ms, err)
                   : job_finish(c, j, SM_JOB_FAILED, r->reason, now_ms, err);
        if (rc)
            return rc;
    }
    if (reply->n_acks < SM_REPLY_ACKS_MAX) {
        reply->ack_job[reply->n_acks] = m->job;
        reply->ack_attempt[reply->n_acks] = m->attempt;
        reply->n_acks++;
    }
    return 0;
}

static void take_acks(cagent *a, const sm_poll *p)
{
    for (size_t i = 0; i < p->n_acks; i++) {
        uint64_t job;
        unsigned attempt;
        char kind;
        if (sscanf(p->acks[i], "%c%" SCNu64 ".%u", &kind, &job, &attempt) != 3)
            continue;
        cjob *j = a->current;
        if (!j || j->id != job || j->attempt != attempt)
            j = NULL;
        if (j && kind == 'a')
            j->assign_acked = true;
        if (j && kind == 'p')
            j->prepare_acked = true;
        if (j && kind == 's')
            j->start_acked = true;
        if (kind == 'x' && a->cancel_pending && a->cancel_job == job &&
            a->cancel_attempt == attempt)
            a->cancel_pending = false;
    }
}

/* What the agent says it is doing, against what we think it is doing. */
static int take_status(sm_control *c, cagent *a, const sm_poll *p, bool rebooted, int64_t now_ms,
                       sm_error *err)
{
    cjob *j = a->current;
    a->idle = p->state == SM_AGENT_IDLE;
    if (!j)
        return 0;
    if (j->peer[0]) {
        /* A side of a pair job: it owes a result once it has acked its command. */
        const bool acked = strcmp(j->peer, a->name) == 0 ? j->prepare_acked : j->start_acked;
        if (p->state == SM_AGENT_BUSY && p->job == j->id && p->attempt == j->attempt)
            return 0;
        if (acked && rebooted)
            return job_finish(c, j, SM_JOB_FAILED,
                              "agent-restarted: the agent restarted during the job", now_ms, err);
        if (acked && p->state == SM_AGENT_IDLE)
            return job_finish(c, j, SM_JOB_FAILED,
                              "the agent went idle without delivering a result", now_ms, err);
        return 0;
    }
    if (p->state == SM_AGENT_BUSY && p->job == j->id && p->attempt == j->attempt) {
        if (j->state != SM_JOB_RUNNING) {
            int rc =
                sm_store_job_set_state(c->st, j->id, j->attempt, SM_JOB_RUNNING, "", now_ms, err);
            if (rc)
                return rc;
            j->state = SM_JOB_RUNNING;
            j->started_at = live_now(c, now_ms);
            j->assign_acked = true;
        }
        return 0;
    }
    if (rebooted && (j->assign_acked || j->state == SM_JOB_RUNNING))
        return job_finish(c, j, SM_JOB_FAILED,
                          "agent-restarted: the agent restarted during the job", now_ms, err);
    if (p->state == SM_AGENT_IDLE && (j->assign_acked || j->state == SM_JOB_RUNNING))
        return job_finish(c, j, SM_JOB_FAILED, "the agent went idle without delivering a result",
                          now_ms, err);
    return 0;
}

/* Liveness counts only time the coordinator served the bus, on the liveness clock (monotonic in
 * the server: a step of the wall clock moves nothing). The coordinator ticks every 250 ms and
 * takes polls in between; a gap between two of these longer than hold_ms means it was away
 * itself (stopped or starved), and no agent could have been heard: the part of the gap beyond
 * hold_ms is forgiven to every agent that had not polled since. A gap that goes backwards (a
 * wall clock stepped back, where that is the clock) is forgiven whole, so silence keeps
 * counting from where it was. Called first by every poll and tick. */
static void forgive_away(sm_control *c, int64_t now)
{
    const int64_t hold = (int64_t)c->cfg.hold_ms;
    const int64_t gap = now - c->last_service_at;
    const bool first = !c->served;
    c->served = true;
    c->last_service_at = now;
    if (first || (gap >= 0 && gap <= hold))
        return;
    if (gap > hold)
        sm_log(LOG_WARNING, "SM-COORD-AWAY",
               "the coordinator did not run for %" PRId64 " ms: agents are not blamed for it", gap);
    size_t cur = 0;
    const char *key;
    void *val;
    while (sm_map_next(c->agents, &cur, &key, &val)) {
        cagent *a = val;
        if (gap < 0) {
            a->forgiven_ms += gap;
            continue;
        }
        /* The away time began hold_ms after the previous service; only its part after the
         * agent's last poll was the agent's silence to forgive. A lost host's grace does not
         * run while nobody could hear it either. */
        const int64_t away_from = now - gap + hold;
        const int64_t from = a->heard_at > away_from ? a->heard_at : away_from;
        if (now > from)
            a->forgiven_ms += now - from;
        if (a->status == SM_AGENT_LOST)
            a->lost_at += now - away_from;
    }
}

/* Whether the store already holds this result (or this side of a pair job), or has no such
 * job at all: either way storing it again changes nothing, and only its ack is owed. */
static bool result_known(sm_control *c, uint64_t job, uint32_t attempt, sm_role role)
{
    sm_job_row row;
    memset(&row, 0, sizeof row);
    if (sm_store_job_get(c->st, job, &row, NULL) != 0)
        return true;
    sm_job_row_fini(&row);
    char *json = NULL;
    int rc = role == SM_ROLE_BOTH
                 ? sm_store_result_get(c->st, job, attempt, &json, NULL)
                 : sm_store_side_get(c->st, job, attempt, sm_role_name(role), &json, NULL);
    free(json);
    return rc == 0 && json != NULL;
}

/* How many of the poll's results the store does not hold yet. An agent that cannot delete an
 * acked result (a spool gone read-only) sends it again with every poll; answering such a poll
 * at once made a loop of thousands of polls a second, so only news is answered at once. A
 * result of another store is no news either: an agent that cannot move it aside would send it
 * again at once, and any reply, held or not, tells it the store's id. */
static size_t results_fresh(sm_control *c, const sm_poll *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_results; i++)
        if (!foreign(c, &p->results[i]) &&
            !result_known(c, p->results[i].job, p->results[i].attempt, p->results[i].role))
            n++;
    return n;
}

/* The poll is held: the acks of the results it resent wait for whatever answers it. */
static void owed_acks_keep(sm_control *c, cagent *a, const sm_poll *p)
{
    a->n_owed = 0;
    for (size_t i = 0; i < p->n_results && a->n_owed < SM_POLL_RESULTS_MAX; i++) {
        if (foreign(c, &p->results[i]))
            continue; /* never acked: its job id may name another job here */
        a->owed[a->n_owed].job = p->results[i].job;
        a->owed[a->n_owed].attempt = p->results[i].attempt;
        a->owed[a->n_owed].role = p->results[i].role;
        a->n_owed++;
    }
}

/* Adds the held poll's owed acks to its answer. Each is checked against the store again: the
 * transaction that stored it may have been rolled back since, and an ack for a result the store
 * lacks would have the agent delete its only copy. */
static void owed_acks_pay(sm_control *c, cagent *a, sm_poll_reply *reply)
{
    for (size_t i = 0; i < a->n_owed && reply->n_acks < SM_REPLY_ACKS_MAX; i++) {
        if (!result_known(c, a->owed[i].job, a->owed[i].attempt, a->owed[i].role))
            continue;
        reply->ack_job[reply->n_acks] = a->owed[i].job;
        reply->ack_attempt[reply->n_acks] = a->owed[i].attempt;
        reply->n_acks++;
    }
    a->n_owed = 0;
}

bool sm_control_admit(sm_control *c, const sm_poll *p, int64_t now_ms)
{
    uint64_t held_back;
    /* The coordinator signs its replies with this name: an agent of that name would be
     * confused with it in every log line and in the store. */
    if (strcmp(p->agent, "coordinator") == 0) {
        c->stats.refused_name++;
        if (quiet_log(&c->quiet_name, now_ms, &held_back))
            sm_log(LOG_WARNING, "SM-AGENT-NAME-RESERVED",
                   "refused a poll from an agent named \"coordinator\": the name is reserved "
                   "for the coordinator; give the agent another --name (%" PRIu64
                   " more in the last minute not logged)",
                   held_back);
        return false;
    }
    sm_error why;
    if (p->data_addr[0] && sm_addr_policy_check(&c->cfg.data_addr, p->data_addr, &why) != 0) {
        c->stats.refused_data_addr++;
        if (quiet_log(&c->quiet_data_addr, now_ms, &held_back))
            sm_log(LOG_WARNING, "SM-AGENT-DATA-ADDR",
                   "refused agent %s: its --data-addr %s; partners would send their data there "
                   "(%" PRIu64 " more refusals in the last minute not logged)",
                   p->agent, why.msg, held_back);
        return false;
    }
    if (!sm_map_get(c->agents, p->agent) && sm_map_size(c->agents) >= c->cfg.max_agents) {
        c->stats.refused_agents_cap++;
        if (quiet_log(&c->quiet_cap, now_ms, &held_back))
            sm_log(LOG_WARNING, "SM-AGENT-CAP",
                   "refused new agent %s: %u agents are registered, the most --max-agents allows; "
                   "known agents keep working (%" PRIu64
                   " more refusals in the last minute not logged)",
                   p->agent, c->cfg.max_agents, held_back);
        return false;
    }
    return true;
}

int sm_control_poll(sm_control *c, const sm_poll *p, int64_t now_ms, sm_poll_reply *reply,
                    bool *reply_now, sm_error *err)
{
    reply_init(c, reply);
    *reply_now = false;
    c->stats.polls++;
    forgive_away(c, live_now(c, now_ms));
    cagent *a = sm_map_get(c->agents, p->agent);
    if (!a && !(a = agent_new(c, p->agent)))
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    const bool rebooted = a->boot[0] && strcmp(a->boot, p->boot) != 0;
    const bool changed = rebooted || !a->boot[0] || p->have_facts || a->status == SM_AGENT_LOST;
    if (a->status == SM_AGENT_LOST)
        sm_log(LOG_NOTICE, "SM-AGENT-UP", "agent %s is up (boot %s)", p->agent, p->boot);
    a->status = p->state == SM_AGENT_BUSY ? SM_AGENT_STATUS_BUSY : SM_AGENT_ONLINE;
    a->last_seen_ms = now_ms;
    a->heard_at = live_now(c, now_ms);
    a->forgiven_ms = 0;
    a->queue_failed = false;
    snprintf(a->boot, sizeof a->boot, "%s", p->boot);
    memcpy(a->labels, p->labels, sizeof a->labels);
    a->n_labels = p->n_labels;
    snprintf(a->data_addr, sizeof a->data_addr, "%s", p->data_addr);
    a->news = false;
    a->n_owed = 0;
    if (p->quarantined > a->quarantined)
        sm_log(LOG_WARNING, "SM-AGENT-QUARANTINE",
               "agent %s has %" PRIu64 " spool entries in quarantine (it had %" PRIu64 ")",
               p->agent, p->quarantined, a->quarantined);
    a->quarantined = p->quarantined;
    int rc = 0;
    if (changed && (rc = upsert_agent(c, a, p, now_ms, err)))
        return rc;
    const size_t fresh = results_fresh(c, p);
    for (size_t i = 0; i < p->n_results; i++)
        if ((rc = take_result(c, a, &p->results[i], now_ms, reply, err)))
            return rc;
    take_acks(a, p);
    for (size_t i = 0; i < p->n_ready; i++) {
        /* The server of a pair job listens: its client may start. */
        cjob *j = job_get(c, p->ready[i].job);
        if (!j || !j->peer[0] || j->attempt != p->ready[i].attempt || a->current != j ||
            strcmp(j->peer, a->name) != 0 || j->ready_port)
            continue;
        /* A client of a TLS source accepts one key: without it the start could only fail. */
        if (j->params.workload == SM_WL_HTTP && j->params.tls && !p->ready[i].pin[0]) {
            if ((rc = job_finish(c, j, SM_JOB_FAILED,
                                 "prepare: the server reported no key pin for tls", now_ms, err)))
                return rc;
            continue;
        }
        if ((rc =
                 sm_store_job_set_state(c->st, j->id, j->attempt, SM_JOB_RUNNING, "", now_ms, err)))
            return rc;
        j->ready_port = p->ready[i].port;
        memcpy(j->ready_pin, p->ready[i].pin, sizeof j->ready_pin);
        j->state = SM_JOB_RUNNING;
        j->started_at = live_now(c, now_ms);
        cagent *cl = sm_map_get(c->agents, j->host);
        if (cl)
            cl->news = true;
    }
    if ((rc = take_status(c, a, p, rebooted, now_ms, err)))
        return rc;
    if ((rc = commands_for(c, a, now_ms, reply, err)))
        return rc;
    *reply_now = fresh || reply->n_commands || reply->want_facts;
    if (!*reply_now)
        owed_acks_keep(c, a, p);
    return 0;
}

bool sm_control_news(sm_control *c, const char *agent, int64_t now_ms, sm_poll_reply *reply,
                     sm_error *err)
{
    reply_init(c, reply);
    cagent *a = sm_map_get(c->agents, agent);
    if (!a)
        return false;
    if (commands_for(c, a, now_ms, reply, err) != 0 || reply->n_commands == 0)
        return false;
    owed_acks_pay(c, a, reply);
    return true;
}

int sm_control_expire(sm_control *c, const char *agent, int64_t now_ms, sm_poll_reply *reply,
                      sm_error *err)
{
    reply_init(c, reply);
    cagent *a = sm_map_get(c->agents, agent);
    if (!a)
        return 0;
    int rc = commands_for(c, a, now_ms, reply, err);
    if (!rc)
        owed_acks_pay(c, a, reply);
    return rc;
}

/* A host lost for lost_grace_ms: its queued run jobs fail, and its runs go on without it. Jobs
 * queued alone wait for it to come back. */
static int fail_lost_queue(sm_control *c, cagent *a, int64_t now_ms, sm_error *err)
{
    a->queue_failed = true;
    size_t n = 0;
    int rc = 0;
    char why[160];
    snprintf(why, sizeof why,
             "agent-lost: the host was lost before the job ran and did not come back within "
             "%" PRIu32 " ms",
             c->cfg.lost_grace_ms);
    for (cjob *j = a->qhead, *next; !rc && j; j = next) {
        next = *link_of(a, j);
        if (!j->run_id)
            continue;
        unqueue_all(c, j);
        rc = job_finish(c, j, SM_JOB_FAILED, why, now_ms, err);
        n++;
    }
    if (!rc && n)
        sm_log(LOG_WARNING, "SM-AGENT-GONE",
               "agent %s did not come back within %" PRIu32 " ms: its %zu queued run jobs fail",
               a->name, c->cfg.lost_grace_ms, n);
    return rc;
}

static size_t run_jobs_queued(const cagent *a)
{
    size_t n = 0;
    for (cjob *j = a->qhead; j; j = *link_of(a, j))
        n += j->run_id != 0;
    return n;
}

int sm_control_tick(sm_control *c, int64_t now_ms, sm_error *err)
{
    const int64_t lost_after = 3 * (int64_t)c->cfg.hold_ms;
    const int64_t now = live_now(c, now_ms);
    forgive_away(c, now);
    size_t cur = 0;
    const char *key;
    void *val;
    while (sm_map_next(c->agents, &cur, &key, &val)) {
        cagent *a = val;
        if (a->status == SM_AGENT_LOST) {
            /* Its queued run jobs waited one grace period for it. */
            int rc = a->queue_failed || now - a->lost_at <= (int64_t)c->cfg.lost_grace_ms
                         ? 0
                         : fail_lost_queue(c, a, now_ms, err);
            if (rc)
                return rc;
            continue;
        }
        const int64_t silent = now - a->heard_at - a->forgiven_ms;
        if (silent <= lost_after)
            continue;
        a->status = SM_AGENT_LOST;
        a->lost_at = now;
        a->queue_failed = false;
        sm_log(LOG_WARNING, "SM-AGENT-LOST",
               "agent %s lost: no poll for %" PRId64 " ms of the coordinator's service; its %zu "
               "queued run jobs wait %" PRIu32 " ms for it",
               a->name, silent, run_jobs_queued(a), c->cfg.lost_grace_ms);
        int rc = sm_store_agent_set_status(c->st, a->name, SM_AGENT_LOST, now_ms, err);
        if (!rc && a->current)
            rc = job_finish(c, a->current, SM_JOB_FAILED,
                            "agent-lost: the agent stopped polling during the job", now_ms, err);
        if (!rc && c->cfg.lost_grace_ms == 0)
            rc = fail_lost_queue(c, a, now_ms, err);
        if (rc)
            return rc;
    }
    cur = 0;
    while (sm_map_next(c->agents, &cur, &key, &val)) {
        /* A pair server that never reported ready (it could not listen, or its poll was
         * lost with the coordinator's memory of the handshake). */
        cagent *a = val;
        cjob *j = a->current;
        if (!j || !j->peer[0] || strcmp(j->peer, a->name) != 0 || j->ready_port ||
            now - j->assigned_at <= 30000)
            continue;
        int rc = job_finish(c, j, SM_JOB_FAILED,
                            "prepare: the server did not report ready within 30 s", now_ms, err);
        if (rc)
            return rc;
    }
    cur = 0;
    while (sm_map_next(c->agents, &cur, &key, &val)) {
        cagent *a = val;
        cjob *j = a->current;
        if (!j || j->state != SM_JOB_RUNNING)
            continue;
        int64_t limit = (int64_t)j->params.time_limit_ms + c->cfg.job_grace_ms;
        if (now - j->started_at <= limit)
            continue;
        a->cancel_pending = true;
        a->cancel_job = j->id;
        a->cancel_attempt = j->attempt;
        char why[128];
        snprintf(why, sizeof why, "timeout: still running %" PRId64 " ms after it started",
                 now - j->started_at);
        int rc = job_finish(c, j, SM_JOB_FAILED, why, now_ms, err);
        if (rc)
            return rc;
    }
    return 0;
}

int sm_control_submit(sm_control *c, const char *host, const sm_params *p, int64_t now_ms,
                      uint64_t *id, sm_error *err)
{
    cagent *a = sm_map_get(c->agents, host);
    if (!a)
        return sm_error_set(err, SM_EINVAL, "host: '%s' is not a registered agent", host);
    char *params_json = sm_codec_params_encode(p, err);
    if (!params_json)
        return SM_ENOMEM;
    cjob *j = calloc(1, sizeof *j);
    int rc = j ? sm_store_job_insert(c->st, host, params_json, now_ms, id, err)
               : sm_error_set(err, SM_ENOMEM, "out of memory");
    free(params_json);
    if (rc) {
        free(j);
        return rc;
    }
    char key[24];
    j->id = *id;
    snprintf(j->host, sizeof j->host, "%s", host);
    j->params = *p;
    j->state = SM_JOB_QUEUED;
    j->attempt = 1;
    id_key(j->id, key, sizeof key);
    if (sm_map_put(c->jobs, key, j) != 0) {
        free(j);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    enqueue(a, j);
    a->news = true;
    return 0;
}

bool sm_control_agent_live(sm_control *c, const char *name, sm_agent_status *status,
                           int64_t *last_seen_ms)
{
    cagent *a = sm_map_get(c->agents, name);
    if (!a)
        return false;
    *status = a->status;
    *last_seen_ms = a->last_seen_ms;
    return true;
}

uint64_t sm_control_agent_quarantined(sm_control *c, const char *name)
{
    cagent *a = sm_map_get(c->agents, name);
    return a ? a->quarantined : 0;
}

void sm_control_get_stats(const sm_control *c, sm_control_stats *out)
{
    *out = c->stats;
}

/* ---- adaptive repetitions ---- */

/* A run whose spec gives repetitions as {"min","max","ci_rel"} starts each cell with min
 * measured repetitions. The variants of one test on one host (or pair) form a group that is
 * planned together, A B A B; a group whose jobs have all ended is judged cell by cell with
 * sm_reps_decide, and while any of its cells is wide (and below max) the whole group gets one
 * more round, queued behind everything its hosts already have, so that the paired ratio
 * columns (tcp/unix of the same repetition) stay paired and interleaved. */

typedef struct acell {
    uint32_t group;
    uint32_t round; /* the pair round its jobs carry (0 for local cells) */
    char host[SM_NAME_MAX + 1];
    char peer[SM_NAME_MAX + 1];
    sm_params params;
} acell;

typedef struct agroup {
    uint32_t first, n; /* its cells: first .. first + n - 1 (cells are ordered by group) */
    uint32_t pending;  /* its jobs not yet ended for good */
    uint32_t reps;     /* measured repetitions planned per cell so far */
} agroup;

struct adapt {
    sm_reps_rule rule;
    acell *cells;
    size_t n_cells;
    agroup *groups;
    size_t n_groups;
    uint32_t next_ord; /* the stored ord of the next job added: after every planned one */
};

static void run_free(void *p)
{
    crun *r = p;
    if (!r)
        return;
    if (r->ad) {
        free(r->ad->cells);
        free(r->ad->groups);
        free(r->ad);
    }
    free(r);
}

/* Cells of one group are adjacent (the plan orders them test, host or pair, variant). */
static bool same_group(uint32_t test_a, const char *host_a, const char *peer_a, uint32_t test_b,
                       const char *host_b, const char *peer_b)
{
    return test_a == test_b && strcmp(host_a, host_b) == 0 && strcmp(peer_a, peer_b) == 0;
}

static adapt *adapt_new(const sm_spec *spec, size_t n_cells)
{
    adapt *ad = calloc(1, sizeof *ad);
    if (!ad)
        return NULL;
    ad->rule = spec->reps;
    ad->n_cells = n_cells;
    ad->cells = calloc(n_cells ? n_cells : 1, sizeof *ad->cells);
    ad->groups = calloc(n_cells ? n_cells : 1, sizeof *ad->groups);
    if (!ad->cells || !ad->groups) {
        free(ad->cells);
        free(ad->groups);
        free(ad);
        return NULL;
    }
    return ad;
}

/* Adds cell i, opening a group when it starts one. */
static void adapt_group_cell(adapt *ad, size_t i, bool starts, const char *host, const char *peer,
                             const sm_params *params)
{
    snprintf(ad->cells[i].host, sizeof ad->cells[i].host, "%s", host);
    snprintf(ad->cells[i].peer, sizeof ad->cells[i].peer, "%s", peer);
    ad->cells[i].params = *params;
    if (starts || ad->n_groups == 0)
        ad->groups[ad->n_groups++].first = (uint32_t)i;
    agroup *g = &ad->groups[ad->n_groups - 1];
    g->n++;
    ad->cells[i].group = (uint32_t)(ad->n_groups - 1);
}

/* The adaptive state of a run just planned: every job is pending, min repetitions each. */
static int adapt_plan(crun *r, const sm_spec *spec, const sm_plan *plan, sm_error *err)
{
    adapt *ad = adapt_new(spec, plan->n_cells);
    if (!ad)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    for (size_t i = 0; i < plan->n_cells; i++) {
        const sm_cell *a = &plan->cells[i], *b = i ? &plan->cells[i - 1] : NULL;
        adapt_group_cell(ad, i,
                         !b || !same_group(a->test, a->host, a->peer, b->test, b->host, b->peer),
                         a->host, a->peer, &a->params);
    }
    for (size_t g = 0; g < ad->n_groups; g++)
        ad->groups[g].reps = spec->repetitions;
    for (size_t k = 0; k < plan->n_jobs; k++) {
        const sm_plan_job *pj = &plan->jobs[k];
        ad->cells[pj->cell].round = pj->round;
        ad->groups[ad->cells[pj->cell].group].pending++;
    }
    ad->next_ord = (uint32_t)plan->n_jobs;
    r->ad = ad;
    return 0;
}

/* The adaptive state of a run resumed after a restart, from its stored cells and jobs: the
 * rounds it added are jobs like the others, so the store holds all there is to know. */
static int adapt_open(sm_control *c, crun *r, const sm_spec *spec, sm_error *err)
{
    sm_cell_row *cells = NULL;
    sm_job_row *jobs = NULL;
    size_t nc = 0, nj = 0;
    adapt *ad = NULL;
    int rc = sm_store_cells_list(c->st, r->id, &cells, &nc, err);
    if (!rc)
        rc = sm_store_run_jobs(c->st, r->id, &jobs, &nj, err);
    if (!rc && !(ad = adapt_new(spec, nc)))
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < nc; i++) {
        const sm_cell_row *a = &cells[i], *b = i ? &cells[i - 1] : NULL;
        sm_params params;
        if ((rc = sm_codec_params_decode(a->params_json, strlen(a->params_json), &params, err)))
            break;
        adapt_group_cell(ad, i,
                         !b || !same_group(a->test, a->host, a->peer, b->test, b->host, b->peer),
                         a->host, a->peer, &params);
    }
    for (size_t k = 0; !rc && k < nj; k++) {
        const sm_job_row *j = &jobs[k];
        if (j->cell >= nc)
            continue;
        agroup *g = &ad->groups[ad->cells[j->cell].group];
        ad->cells[j->cell].round = j->round;
        if (!j->warmup && j->rep + 1 > g->reps)
            g->reps = j->rep + 1;
        if (j->state != SM_JOB_DONE && j->state != SM_JOB_FAILED)
            g->pending++;
        if (j->ord >= ad->next_ord)
            ad->next_ord = j->ord + 1;
    }
    sm_store_cells_free(cells, nc);
    sm_store_jobs_free(jobs, nj);
    if (rc) {
        if (ad) {
            free(ad->cells);
            free(ad->groups);
            free(ad);
        }
        return rc;
    }
    r->ad = ad;
    return 0;
}

/* The decision for one cell of run r after reps measured repetitions, from its stored results:
 * the headline metric of each ok one, NaN for each failed one. */
static int adapt_decide_cell(sm_control *c, const crun *r, uint32_t cell, uint32_t reps,
                             sm_reps_decision *d, sm_error *err)
{
    sm_run_result *rows = NULL;
    size_t n = 0;
    int rc = sm_store_cell_results(c->st, r->id, cell, &rows, &n, err);
    double *x = rc ? NULL : calloc(n ? n : 1, sizeof *x);
    if (!rc && !x)
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    const sm_metric m = sm_reps_metric(&r->ad->cells[cell].params);
    for (size_t i = 0; !rc && i < n; i++) {
        sm_result res;
        sm_error e;
        sm_result_init(&res);
        bool ok = sm_codec_result_decode(rows[i].result_json, strlen(rows[i].result_json), &res,
                                         &e) == 0 &&
                  res.ok && sm_result_has(&res, m);
        /* A disturbed sample is no sample, as the table leaves it out by default; it still
         * counts as a repetition towards max. */
        x[i] = !ok ? NAN : res.host.disturbed ? SM_REPS_DISTURBED : sm_result_get(&res, m);
        sm_result_fini(&res);
    }
    if (!rc && sm_reps_decide(x, n, reps, &r->ad->rule, d) != 0)
        rc = sm_error_set(err, SM_EINVAL, "run %" PRIu64 ": repetitions rule out of bounds", r->id);
    free(x);
    sm_store_run_results_free(rows, n);
    return rc;
}

/* Queues one more measured repetition of every cell of group g, in cell order (A B), behind
 * whatever the hosts already have. */
static int adapt_add_round(sm_control *c, crun *r, agroup *g, int64_t now_ms, sm_error *err)
{
    adapt *ad = r->ad;
    int rc = 0;
    for (uint32_t i = g->first; !rc && i < g->first + g->n; i++) {
        const acell *ac = &ad->cells[i];
        cagent *a = sm_map_get(c->agents, ac->host);
        cagent *b = ac->peer[0] ? sm_map_get(c->agents, ac->peer) : NULL;
        if (!a || (ac->peer[0] && !b))
            return sm_error_set(err, SM_EINVAL, "run %" PRIu64 ": cell %u has no agent", r->id, i);
        char *params_json = sm_codec_params_encode(&ac->params, err);
        cjob *j = calloc(1, sizeof *j);
        if (!params_json || !j) {
            free(params_json);
            free(j);
            return sm_error_set(err, SM_ENOMEM, "out of memory");
        }
        sm_job_row row;
        memset(&row, 0, sizeof row);
        snprintf(row.host, sizeof row.host, "%s", ac->host);
        snprintf(row.peer, sizeof row.peer, "%s", ac->peer);
        row.params_json = params_json;
        row.run_id = r->id;
        row.cell = i;
        row.rep = g->reps;
        row.round = ac->round;
        row.ord = ad->next_ord;
        rc = sm_store_job_insert_run(c->st, &row, now_ms, &j->id, err);
        free(params_json);
        char key[24];
        id_key(j->id, key, sizeof key);
        if (!rc && sm_map_put(c->jobs, key, j) != 0)
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        if (rc) {
            free(j);
            return rc; /* the caller rolls the transaction back */
        }
        snprintf(j->host, sizeof j->host, "%s", ac->host);
        snprintf(j->peer, sizeof j->peer, "%s", ac->peer);
        j->params = ac->params;
        j->state = SM_JOB_QUEUED;
        j->attempt = 1;
        j->run_id = r->id;
        j->cell = i;
        /* After every job queued so far, in every queue: the one global order that keeps pair
         * jobs from waiting on each other holds. */
        j->ord = ad->next_ord++;
        enqueue(a, j);
        a->news = true;
        if (b) {
            enqueue(b, j);
            b->news = true;
        }
        g->pending++;
        r->total++;
    }
    g->reps++;
    return sm_store_run_set_total(c->st, r->id, r->total, err);
}

/* A job of adaptive run r ended for good (done, or failed after its retry): when it was the
 * last pending one of its group, the group is judged. A group whose hosts are gone, or a run
 * being cancelled, gets no new round. */
static int adapt_job_ended(sm_control *c, crun *r, uint32_t cell, int64_t now_ms, sm_error *err)
{
    adapt *ad = r->ad;
    if (cell >= ad->n_cells)
        return 0;
    agroup *g = &ad->groups[ad->cells[cell].group];
    if (g->pending > 0)
        g->pending--;
    if (g->pending > 0 || r->cancelling)
        return 0;
    bool more = false, hosts_up = true;
    sm_reps_decision d[SM_SPEC_VARIANTS_MAX]; /* a group is one test's variants */
    for (uint32_t i = 0; i < g->n && i < sizeof d / sizeof d[0]; i++) {
        int rc = adapt_decide_cell(c, r, g->first + i, g->reps, &d[i], err);
        if (rc)
            return rc;
        more = more || d[i].more;
        const acell *ac = &ad->cells[g->first + i];
        const cagent *a = sm_map_get(c->agents, ac->host);
        const cagent *b = ac->peer[0] ? sm_map_get(c->agents, ac->peer) : NULL;
        hosts_up = hosts_up && a && a->status != SM_AGENT_LOST &&
                   (!ac->peer[0] || (b && b->status != SM_AGENT_LOST));
    }
    if (more && hosts_up) {
        sm_log(LOG_INFO, "SM-RUN-ROUND",
               "run %" PRIu64 ": cells %u..%u on %s%s%s: a CI is wider than +-%g%% of its median "
               "after %u repetitions, one more round",
               r->id, g->first, g->first + g->n - 1, ad->cells[g->first].host,
               ad->cells[g->first].peer[0] ? "->" : "", ad->cells[g->first].peer,
               ad->rule.ci_rel * 100, g->reps);
        return adapt_add_round(c, r, g, now_ms, err);
    }
    for (uint32_t i = 0; i < g->n && i < sizeof d / sizeof d[0]; i++) {
        if (d[i].more)
            continue; /* its hosts are gone: it stopped on neither rule */
        int rc = sm_store_cell_set_stopped(c->st, r->id, g->first + i, d[i].why, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- matrix runs ---- */

/* Orders job indexes of the plan given as context (qsort_r). */
static int by_schedule(const void *x, const void *y, void *ctx)
{
    const sm_plan *plan = ctx;
    const sm_plan_job *a = &plan->jobs[*(const size_t *)x];
    const sm_plan_job *b = &plan->jobs[*(const size_t *)y];
    if (a->warmup != b->warmup)
        return a->warmup ? -1 : 1;
    if (a->rep != b->rep)
        return a->rep < b->rep ? -1 : 1;
    if (a->round != b->round)
        return a->round < b->round ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Adds the agent named to the run's hosts, once. */
static int add_host(sm_control *c, sm_map *seen, const char *name, sm_sharing_host *hosts,
                    size_t *n)
{
    const cagent *a = name[0] ? sm_map_get(c->agents, name) : NULL;
    if (!a || sm_map_get(seen, name))
        return 0;
    if (sm_map_put(seen, name, (void *)a) != 0)
        return SM_ENOMEM;
    hosts[(*n)++] = (sm_sharing_host){a->name, a->boot_id, a->machine_id};
    return 0;
}

/* Whether the run's jobs go side by side, and the note that says why (see control.h). */
static int run_parallel(sm_control *c, const sm_spec *spec, const sm_plan *plan, bool *parallel,
                        char *note, size_t len, sm_error *err)
{
    size_t n = 0, sharing = 0;
    char machines[SM_RUN_NOTE_MAX - 128]; /* the rest is room for the words around it */
    sm_map *seen = sm_map_new();
    sm_sharing_host *hosts = calloc(sm_map_size(c->agents) + 1, sizeof *hosts);
    int rc = seen && hosts ? 0 : SM_ENOMEM;
    for (size_t i = 0; i < plan->n_cells && !rc; i++)
        if (!(rc = add_host(c, seen, plan->cells[i].host, hosts, &n)))
            rc = add_host(c, seen, plan->cells[i].peer, hosts, &n);
    if (!rc)
        rc = sm_sharing_find(hosts, n, &sharing, machines, sizeof machines, err);
    else
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    sm_map_free(seen, NULL);
    free(hosts);
    if (rc)
        return rc;
    *parallel = spec->parallel_given ? spec->parallel : sharing == 0;
    if (!*parallel && spec->parallel_given)
        snprintf(note, len, "the spec says \"parallel\": false");
    else if (!*parallel)
        snprintf(note, len, "%s", machines);
    else if (sharing)
        snprintf(note, len,
                 "%s: their jobs run side by side on its CPUs, as the spec asks "
                 "(\"parallel\": true)",
                 machines);
    else
        note[0] = '\0';
    return 0;
}

int sm_control_run_start(sm_control *c, const char *spec_json, const sm_spec *spec, int64_t now_ms,
                         uint64_t *run_id, char *field_buf, size_t field_len, sm_error *err)
{

    /* The fleet as the planner sees it: every agent the coordinator knows. */
    size_t n = sm_map_size(c->agents), k = 0, cur = 0;
    sm_plan_host *fleet = calloc(n ? n : 1, sizeof *fleet);
    if (!fleet)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    const char *key;
    void *val;
    while (sm_map_next(c->agents, &cur, &key, &val) && k < n) {
        const cagent *a = val;
        sm_plan_host *h = &fleet[k++];
        snprintf(h->name, sizeof h->name, "%s", a->name);
        snprintf(h->data_addr, sizeof h->data_addr, "%s", a->data_addr);
        memcpy(h->labels, a->labels, sizeof h->labels);
        h->n_labels = a->n_labels;
        h->online = a->status != SM_AGENT_LOST;
    }
    sm_plan plan;
    int rc = sm_plan_expand(spec, fleet, k, &plan, field_buf, field_len, err);
    free(fleet);
    if (rc)
        return rc;
    /* A pair's client connects to its server's registered data address, and nowhere else. */
    for (size_t i = 0; i < plan.n_cells; i++) {
        const cagent *srv =
            plan.cells[i].peer[0] ? sm_map_get(c->agents, plan.cells[i].peer) : NULL;
        if (plan.cells[i].peer[0] && (!srv || !srv->data_addr[0])) {
            snprintf(field_buf, field_len, "hosts");
            rc = sm_error_set(err, SM_EINVAL,
                              "hosts: %s has no data address (start its agent with "
                              "--data-addr) and cannot serve pair jobs",
                              plan.cells[i].peer);
            sm_plan_fini(&plan);
            return rc;
        }
    }
    /* One global order for every queue: warm-up first, then by repetition, then the pair
     * rounds (disjoint pairs side by side), then the plan's order. */
    size_t *order = calloc(plan.n_jobs ? plan.n_jobs : 1, sizeof *order);
    if (!order) {
        sm_plan_fini(&plan);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < plan.n_jobs; i++)
        order[i] = i;
    qsort_r(order, plan.n_jobs, sizeof *order, by_schedule, &plan);
    crun *r = calloc(1, sizeof *r);
    cjob **made = calloc(plan.n_jobs ? plan.n_jobs : 1, sizeof *made);
    char **cell_params = calloc(plan.n_cells ? plan.n_cells : 1, sizeof *cell_params);
    if (!r || !made || !cell_params) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        goto out;
    }
    bool parallel;
    char note[SM_RUN_NOTE_MAX];
    if ((rc = run_parallel(c, spec, &plan, &parallel, note, sizeof note, err)) ||
        (rc = sm_store_run_insert(c->st, spec->name, spec_json, (uint32_t)plan.n_jobs, now_ms,
                                  run_id, err)) ||
        (rc = sm_store_run_set_parallel(c->st, *run_id, parallel, note, err)))
        goto out;
    for (size_t i = 0; i < plan.n_cells && !rc; i++) {
        const sm_cell *cell = &plan.cells[i];
        if (!(cell_params[i] = sm_codec_params_encode(&cell->params, err))) {
            rc = SM_ENOMEM;
            break;
        }
        sm_cell_row row = {.idx = (uint32_t)i,
                           .test = cell->test,
                           .variant = cell->variant,
                           .params_json = cell_params[i]};
        snprintf(row.host, sizeof row.host, "%s", cell->host);
        snprintf(row.peer, sizeof row.peer, "%s", cell->peer);
        rc = sm_store_cell_insert(c->st, *run_id, &row, err);
    }
    for (size_t k2 = 0; k2 < plan.n_jobs && !rc; k2++) {
        const size_t i = order[k2];
        const sm_plan_job *pj = &plan.jobs[i];
        const sm_cell *cell = &plan.cells[pj->cell];
        sm_job_row row;
        memset(&row, 0, sizeof row);
        snprintf(row.host, sizeof row.host, "%s", cell->host);
        snprintf(row.peer, sizeof row.peer, "%s", cell->peer);
        row.params_json = cell_params[pj->cell];
        row.run_id = *run_id;
        row.cell = pj->cell;
        row.rep = pj->rep;
        row.warmup = pj->warmup;
        row.round = pj->round;
        row.ord = pj->order;
        cjob *j = made[i] = calloc(1, sizeof *j);
        if (!j) {
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
            break;
        }
        if ((rc = sm_store_job_insert_run(c->st, &row, now_ms, &j->id, err)))
            break;
        snprintf(j->host, sizeof j->host, "%s", cell->host);
        snprintf(j->peer, sizeof j->peer, "%s", cell->peer);
        j->params = cell->params;
        j->state = SM_JOB_QUEUED;
        j->attempt = 1;
        j->run_id = *run_id;
        j->cell = pj->cell;
    }
    if (rc)
        goto out; /* the caller rolls the transaction back */
    r->id = *run_id;
    r->parallel = parallel;
    r->total = (uint32_t)plan.n_jobs;
    if (spec->adaptive && (rc = adapt_plan(r, spec, &plan, err)))
        goto out;
    char rkey[24];
    snprintf(rkey, sizeof rkey, "%" PRIu64, r->id);
    if (sm_map_put(c->runs, rkey, r) != 0) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        goto out;
    }
    r = NULL;
    /* That order is each host's queue order: repetitions interleave per host. */
    for (size_t k2 = 0; k2 < plan.n_jobs; k2++) {
        const size_t i = order[k2];
        cjob *j = made[i];
        char jkey[24];
        id_key(j->id, jkey, sizeof jkey);
        cagent *a = sm_map_get(c->agents, j->host);
        cagent *b = j->peer[0] ? sm_map_get(c->agents, j->peer) : NULL;
        if (!a || (j->peer[0] && !b) || sm_map_put(c->jobs, jkey, j) != 0) {
            free(j);
            made[i] = NULL;
            continue;
        }
        made[i] = NULL;
        j->ord = (uint32_t)k2;
        enqueue(a, j);
        a->news = true;
        if (b) {
            enqueue(b, j);
            b->news = true;
        }
    }
    sm_log(LOG_NOTICE, "SM-RUN-START", "run %" PRIu64 " (%s): %zu cells, %zu jobs", *run_id,
           spec->name, plan.n_cells, plan.n_jobs);
    if (note[0])
        sm_log(parallel ? LOG_WARNING : LOG_NOTICE,
               parallel ? "SM-RUN-SHARED-CPUS" : "SM-RUN-SERIAL", "run %" PRIu64 " (%s): %s",
               *run_id, spec->name, note);
out:
    for (size_t i = 0; made && i < plan.n_jobs; i++)
        free(made[i]);
    for (size_t i = 0; cell_params && i < plan.n_cells; i++)
        free(cell_params[i]);
    free(made);
    free(cell_params);
    free(order);
    run_free(r);
    sm_plan_fini(&plan);
    return rc;
}

int sm_control_run_cancel(sm_control *c, uint64_t run_id, int64_t now_ms, sm_error *err)
{
    crun *r = run_get(c, run_id);
    if (!r)
        return sm_error_set(err, SM_EINVAL, "run %" PRIu64 " is not running", run_id);
    size_t cur = 0;
    const char *key;
    void *val;
    int rc = 0;
    /* Counting happens in job_finish; keep the run out of the map's way until the end. */
    const uint32_t total = r->total;
    r->cancelling = true;
    while (!rc && sm_map_next(c->agents, &cur, &key, &val)) {
        cagent *a = val;
        for (cjob *j = a->qhead, *next; !rc && j; j = next) {
            next = *link_of(a, j);
            if (j->run_id != run_id)
                continue;
            unqueue_all(c, j);
            rc = job_finish(c, j, SM_JOB_FAILED, "cancelled: the run was cancelled", now_ms, err);
        }
        cjob *j = a->current;
        if (!rc && j && j->run_id == run_id) {
            a->cancel_pending = true;
            a->cancel_job = j->id;
            a->cancel_attempt = j->attempt;
            a->news = true;
            rc = job_finish(c, j, SM_JOB_FAILED, "cancelled: the run was cancelled", now_ms, err);
        }
    }
    if (rc)
        return rc;
    /* job_finish ended the run as failed when its last job went; say cancelled instead. */
    sm_run_row row;
    if ((rc = sm_store_run_get(c->st, run_id, &row, err)) != 0)
        return rc;
    rc = sm_store_run_update(c->st, run_id, SM_RUN_CANCELLED, "cancelled", row.done, row.failed,
                             now_ms, err);
    sm_run_row_fini(&row);
    char rkey[24];
    snprintf(rkey, sizeof rkey, "%" PRIu64, run_id);
    run_free(sm_map_del(c->runs, rkey));
    sm_log(LOG_NOTICE, "SM-RUN-CANCEL", "run %" PRIu64 " cancelled (%u jobs)", run_id, total);
    return rc;
}

size_t sm_control_take_news(sm_control *c, char (*names)[SM_NAME_MAX + 1], size_t max)
{
    size_t n = 0, cur = 0;
    const char *key;
    void *val;
    while (n < max && sm_map_next(c->agents, &cur, &key, &val)) {
        cagent *a = val;
        if (a->news) {
            a->news = false;
            snprintf(names[n++], SM_NAME_MAX + 1, "%s", a->name);
        }
    }
    return n;
}
