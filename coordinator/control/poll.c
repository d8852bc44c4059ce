/* The agent's poll: what it says of its agent (boot, status, fingerprint), the acks of
 * commands and the pair servers ready it carries, its results handed to intake.c, and the
 * reply: at once when there is a command to send, else when the held poll hears news or its
 * time is up. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/control/internal.h"
#include "proto/fingerprint.h"
#include "proto/log.h"

/* Every reply says which store it comes from: when that changes, job ids start over. */
static void reply_init(const sm_control *c, sm_poll_reply *reply)
{
    memset(reply, 0, sizeof *reply);
    snprintf(reply->store, sizeof reply->store, "%s", sm_store_id(c->st));
}

/* Stores the fingerprint p carries (when it does), as a's latest. */
static int take_fingerprint(sm_control *c, cagent *a, const sm_poll *p, int64_t now_ms,
                            sm_error *err)
{
    if (p->fingerprint == NULL)
        return 0;
    char hash[SM_FP_HASH_HEX + 1];
    sm_fp_hash(p->fingerprint, hash);
    char *json = sm_fp_text(p->fingerprint, false, err);
    if (json == NULL)
        return SM_ENOMEM; /* err says so */
    sm_fp_row last;
    bool had = false;
    int rc = sm_store_fp_latest(c->st, a->name, &last, &had, err);
    bool changed = false;
    if (!rc)
        rc = sm_store_fp_put(c->st, a->name, hash, json, now_ms, NULL, &changed, err);
    free(json);
    if (rc) {
        if (had)
            sm_fp_row_fini(&last);
        return rc;
    }
    if (had && changed)
        sm_log(LOG_NOTICE, "SM-FP-CHANGED", "agent %s: its fingerprint changed (%s -> %s)", a->name,
               last.hash, hash);
    if (had)
        sm_fp_row_fini(&last);
    a->fp_capable = true;
    /* Asked for before a run's first job on it: the job it is on says which run. */
    if (a->current && a->current->run_id)
        a->fp_run = a->current->run_id;
    return 0;
}

/* The acks p carries of the commands a was sent: each stops its command from going out again. */
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

/* The server of a pair job listens (the poll's ready list): its client may start. */
static int take_ready(sm_control *c, cagent *a, const sm_poll *p, int64_t now_ms, sm_error *err)
{
    int rc;
    for (size_t i = 0; i < p->n_ready; i++) {
        cjob *j = job_get(c, p->ready[i].job);
        if (!j || !j->peer[0] || j->attempt != p->ready[i].attempt || a->current != j ||
            strcmp(j->peer, a->name) != 0 || j->ready_port)
            continue;
        /* A client of a TLS source accepts one key: without it the start could only fail. */
        if (j->params.workload == SM_WL_HTTP && j->params.tls && !p->ready[i].pin[0]) {
            if ((rc = ctl_job_finish(c, j, SM_JOB_FAILED,
                                     "prepare: the server reported no key pin for tls", now_ms,
                                     err)))
                return rc;
            continue;
        }
        if ((rc =
                 sm_store_job_set_state(c->st, j->id, j->attempt, SM_JOB_RUNNING, "", now_ms, err)))
            return rc;
        tell_change(c, SM_CHANGE_JOB, NULL, j->id, j->run_id);
        j->ready_port = p->ready[i].port;
        memcpy(j->ready_pin, p->ready[i].pin, sizeof j->ready_pin);
        j->state = SM_JOB_RUNNING;
        j->started_at = live_now(c, now_ms);
        if ((rc = ctl_job_rekey(c, j, err)))
            return rc;
        cagent *cl = sm_map_get(c->agents, j->host);
        if (cl)
            ctl_wake(c, cl);
    }
    return 0;
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
            return ctl_job_finish(c, j, SM_JOB_FAILED,
                                  "agent-restarted: the agent restarted during the job", now_ms,
                                  err);
        if (acked && p->state == SM_AGENT_IDLE)
            return ctl_job_finish(c, j, SM_JOB_FAILED,
                                  "the agent went idle without delivering a result", now_ms, err);
        return 0;
    }
    if (p->state == SM_AGENT_BUSY && p->job == j->id && p->attempt == j->attempt) {
        if (j->state != SM_JOB_RUNNING) {
            int rc =
                sm_store_job_set_state(c->st, j->id, j->attempt, SM_JOB_RUNNING, "", now_ms, err);
            if (rc)
                return rc;
            tell_change(c, SM_CHANGE_JOB, NULL, j->id, j->run_id);
            j->state = SM_JOB_RUNNING;
            j->started_at = live_now(c, now_ms);
            j->assign_acked = true;
            if ((rc = ctl_job_rekey(c, j, err)) != 0)
                return rc;
        }
        return 0;
    }
    if (rebooted && (j->assign_acked || j->state == SM_JOB_RUNNING))
        return ctl_job_finish(c, j, SM_JOB_FAILED,
                              "agent-restarted: the agent restarted during the job", now_ms, err);
    if (p->state == SM_AGENT_IDLE && (j->assign_acked || j->state == SM_JOB_RUNNING))
        return ctl_job_finish(c, j, SM_JOB_FAILED,
                              "the agent went idle without delivering a result", now_ms, err);
    return 0;
}

int ctl_poll(sm_control *c, const sm_poll *p, int64_t now_ms, sm_poll_reply *reply, bool *reply_now,
             sm_error *err)
{
    reply_init(c, reply);
    *reply_now = false;
    c->stats.polls++;
    ctl_forgive_away(c, live_now(c, now_ms));
    cagent *a = sm_map_get(c->agents, p->agent);
    if (!a && !(a = ctl_agent_new(c, p->agent)))
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    bool rebooted;
    int rc = ctl_agent_heard(c, a, p, now_ms, &rebooted, err);
    if (rc)
        return rc;
    /* Before the results: a fingerprint collected before a run's first job rides on the poll
     * that may also carry that job's result, and the run must see it. */
    if ((rc = take_fingerprint(c, a, p, now_ms, err)))
        return rc;
    /* Every poll moves its last-seen time, which the fleet view shows. */
    tell_change(c, SM_CHANGE_AGENT, a->name, 0, 0);
    if ((rc = ctl_take_results(c, a, p, now_ms, reply, err)))
        return rc;
    take_acks(a, p);
    if ((rc = take_ready(c, a, p, now_ms, err)))
        return rc;
    if ((rc = take_status(c, a, p, rebooted, now_ms, err)))
        return rc;
    if ((rc = ctl_commands_for(c, a, now_ms, reply, err)))
        return rc;
    /* Results alone do not make an answer: their acks wait for whatever answers the held poll
     * (the next job, most often, or the end of the hold), so that a job costs its agent one
     * poll, not two. The results are stored now; the agent keeps its copy a little longer and
     * sends it again with any poll meanwhile, which is harmless (stored once by its key). An
     * agent that cannot delete an acked result (a spool gone read-only) sends it again with
     * every poll: held, such polls come once a hold, not in a loop. */
    *reply_now = reply->n_commands || reply->want_facts || reply->want_fingerprint;
    if (!*reply_now)
        ctl_owed_acks_keep(c, a, p);
    return 0;
}

bool ctl_news(sm_control *c, const char *agent, int64_t now_ms, sm_poll_reply *reply, sm_error *err)
{
    reply_init(c, reply);
    cagent *a = sm_map_get(c->agents, agent);
    if (!a)
        return false;
    if (ctl_commands_for(c, a, now_ms, reply, err) != 0 || reply->n_commands == 0)
        return false;
    ctl_owed_acks_pay(c, a, reply);
    return true;
}

int ctl_expire(sm_control *c, const char *agent, int64_t now_ms, sm_poll_reply *reply,
               sm_error *err)
{
    reply_init(c, reply);
    cagent *a = sm_map_get(c->agents, agent);
    if (!a)
        return 0;
    int rc = ctl_commands_for(c, a, now_ms, reply, err);
    if (!rc)
        ctl_owed_acks_pay(c, a, reply);
    return rc;
}
