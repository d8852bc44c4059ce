/* Intake of the results polls bring: results and pair sides (stored, merged, acked, or the acks
 * kept for a held poll's answer), and the job each one ends. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/control/internal.h"
#include "proto/codec.h"
#include "proto/log.h"

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

/* A result measured for a job of another store (one this store replaced, or the store before
 * a cut WAL rolled it back): its job id names another job here, if any. An agent that does not
 * say (from before store ids) is taken at its word, as before. */
static bool foreign(const sm_control *c, const sm_result_msg *m)
{
    return m->store[0] != '\0' && strcmp(m->store, sm_store_id(c->st)) != 0;
}

/* Acks (job, attempt) in the reply, while it has room. */
static void ack_append(sm_poll_reply *reply, uint64_t job, uint32_t attempt)
{
    if (reply->n_acks < SM_REPLY_ACKS_MAX) {
        reply->ack_job[reply->n_acks] = job;
        reply->ack_attempt[reply->n_acks] = attempt;
        reply->n_acks++;
    }
}

static void ack_result(sm_poll_reply *reply, const sm_result_msg *m)
{
    ack_append(reply, m->job, m->attempt);
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
    if (ctl_quiet_log(&c->quiet_wrong_host, now_ms, &held_back))
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
        rc = merged.ok ? ctl_job_finish(c, j, SM_JOB_DONE, "", now_ms, err)
                       : ctl_job_finish(c, j, SM_JOB_FAILED, merged.reason, now_ms, err);
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
        const uint64_t run_id = row.run_id;
        sm_job_row_fini(&row);
        rc = sm_store_side_insert(c->st, m->job, m->attempt, sm_role_name(m->role), a->name, json,
                                  now_ms, &inserted, err);
        if (!rc && run_id)
            rc = sm_store_run_fp_tie(c->st, run_id, a->name, err);
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
            if (o && o->current == j)
                ctl_cancel(c, o, j, true);
        }
        if (j->roles_got == ((1u << SM_ROLE_SERVER) | (1u << SM_ROLE_CLIENT)) &&
            (rc = merge_sides(c, j, now_ms, err)))
            return rc;
    }
    ack_result(reply, m);
    return 0;
}

/* What the store knew of a result's job when the result came. */
typedef struct seen {
    bool inserted;    /* the result was new to the store */
    bool late;        /* its job had failed for the agent's absence */
    bool retry_waits; /* its job was queued again for a retry not started yet */
    uint64_t run_id;
} seen;

/* Stores a whole result (not a side) under its job, noting in *s what the store knew of the job.
 * Returns 1 when the result came from the wrong host (acked, not stored: nothing more to do), 0
 * when it was taken, or an error. */
static int store_result(sm_control *c, cagent *a, const sm_result_msg *m, int64_t now_ms,
                        sm_poll_reply *reply, seen *s, sm_error *err)
{
    char *json = sm_msg_result_json(&m->result, err);
    if (!json)
        return SM_ENOMEM;
    sm_result_cols cols;
    put_cols(&m->result, &cols);
    sm_job_row row;
    memset(&row, 0, sizeof row);
    int rc = sm_store_job_get(c->st, m->job, &row, NULL);
    if (rc == 0 && wrong_host(c, a, m, &row, now_ms, reply)) {
        sm_job_row_fini(&row);
        free(json);
        return 1;
    }
    if (rc == 0) {
        /* A job failed for the agent's absence ("agent-lost", "agent-restarted") whose result
         * turns up from the spool was measured after all: the result completes it. */
        s->late = row.state == SM_JOB_FAILED && row.attempt == m->attempt &&
                  strncmp(row.reason, "agent-", 6) == 0;
        /* Or it was queued again for its retry, which has not started: the late result
         * completes it all the same, and the retry is not run. */
        s->retry_waits = row.state == SM_JOB_QUEUED && row.attempt == m->attempt + 1 &&
                         strncmp(row.reason, "retry after: agent-", 19) == 0;
        s->run_id = row.run_id;
        sm_job_row_fini(&row);
        rc = sm_store_result_insert(c->st, m->job, m->attempt, a->name, json, &cols, now_ms,
                                    &s->inserted, err);
        /* The run sees the host as its first result from it found it. */
        if (!rc && s->run_id)
            rc = sm_store_run_fp_tie(c->st, s->run_id, a->name, err);
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
    return rc;
}

/* Settles the job of a stored result: a late one completes the job it failed or the retry it waits
 * for; the job's current attempt ends with it. */
static int settle_result(sm_control *c, const sm_result_msg *m, const seen *s, int64_t now_ms,
                         sm_error *err)
{
    const sm_result *r = &m->result;
    int rc;
    if (s->late && s->inserted &&
        (rc = sm_store_job_set_state(c->st, m->job, m->attempt, r->ok ? SM_JOB_DONE : SM_JOB_FAILED,
                                     r->ok ? "" : r->reason, now_ms, err)))
        return rc;
    /* A result stored for a job that had ended (late, or after its time limit) changes its
     * run's table: the run's cached reports are dropped on this. */
    if (s->inserted && (s->late || !job_get(c, m->job)))
        tell_change(c, SM_CHANGE_JOB, NULL, m->job, s->run_id);
    if (s->late && s->inserted && r->ok && s->run_id &&
        (rc = run_late_done(c, s->run_id, now_ms, err)))
        return rc;
    if (s->late && s->inserted && r->ok && s->run_id)
        tell_change(c, SM_CHANGE_RUN, NULL, 0, s->run_id);
    cjob *j = job_get(c, m->job);
    if (s->retry_waits && s->inserted && r->ok && j && j->state == SM_JOB_QUEUED &&
        j->attempt == m->attempt + 1) {
        sm_log(LOG_NOTICE, "SM-JOB-LATE",
               "job %" PRIu64 ": attempt %u's result arrived late and completes it; its retry "
               "does not run",
               j->id, m->attempt);
        ctl_unqueue_all(c, j);
        j->attempt = m->attempt;
    }
    if (j && j->attempt == m->attempt)
        return r->ok ? ctl_job_finish(c, j, SM_JOB_DONE, "", now_ms, err)
                     : ctl_job_finish(c, j, SM_JOB_FAILED, r->reason, now_ms, err);
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
    seen s = {0};
    int rc = store_result(c, a, m, now_ms, reply, &s, err);
    if (rc)
        return rc > 0 ? 0 : rc;
    if (s.inserted)
        c->stats.results_stored++;
    else
        c->stats.results_duplicate++;
    if ((rc = settle_result(c, m, &s, now_ms, err)))
        return rc;
    ack_result(reply, m);
    return 0;
}

int ctl_take_results(sm_control *c, cagent *a, const sm_poll *p, int64_t now_ms,
                     sm_poll_reply *reply, sm_error *err)
{
    for (size_t i = 0; i < p->n_results; i++) {
        int rc = take_result(c, a, &p->results[i], now_ms, reply, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* Whether agent a is owed the ack of this result (or this side of a pair job): the store holds
 * it, has no such job at all, or the job is another host's (wrong_host: acked, never stored). */
static bool ack_owed(sm_control *c, const cagent *a, uint64_t job, uint32_t attempt, sm_role role)
{
    sm_job_row row;
    memset(&row, 0, sizeof row);
    if (sm_store_job_get(c->st, job, &row, NULL) != 0)
        return true;
    const bool other_host = strcmp(role == SM_ROLE_SERVER ? row.peer : row.host, a->name) != 0;
    sm_job_row_fini(&row);
    if (other_host)
        return true;
    char *json = NULL;
    int rc = role == SM_ROLE_BOTH
                 ? sm_store_result_get(c->st, job, attempt, &json, NULL)
                 : sm_store_side_get(c->st, job, attempt, sm_role_name(role), &json, NULL);
    free(json);
    return rc == 0 && json != NULL;
}

/* The poll is held: the acks of its results, stored now or before, wait for whatever answers it. */
void ctl_owed_acks_keep(sm_control *c, cagent *a, const sm_poll *p)
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
void ctl_owed_acks_pay(sm_control *c, cagent *a, sm_poll_reply *reply)
{
    for (size_t i = 0; i < a->n_owed && reply->n_acks < SM_REPLY_ACKS_MAX; i++) {
        if (!ack_owed(c, a, a->owed[i].job, a->owed[i].attempt, a->owed[i].role))
            continue;
        ack_append(reply, a->owed[i].job, a->owed[i].attempt);
    }
    a->n_owed = 0;
}
