/* Dispatch: the per-host queues, the gate of one-at-a-time runs, the commands a poll gets, and
 * how a job leaves them (done, failed, or queued again for its retry) and is counted in its run;
 * a job queued alone. Runs are started and cancelled in runs.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/control/internal.h"
#include "proto/codec.h"
#include "proto/log.h"

void ctl_enqueue(cagent *a, cjob *j)
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

/* Takes a queued job out of every queue it is in (its host's, and its server's). */
void ctl_unqueue_all(sm_control *c, cjob *j)
{
    cagent *a = sm_map_get(c->agents, j->host);
    cagent *b = j->peer[0] ? sm_map_get(c->agents, j->peer) : NULL;
    if (a)
        unqueue(a, j);
    if (b)
        unqueue(b, j);
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
                ctl_wake(c, a);
                break;
            }
    }
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

void ctl_cancel(sm_control *c, cagent *x, const cjob *j, bool wake)
{
    x->cancel_pending = true;
    x->cancel_job = j->id;
    x->cancel_attempt = j->attempt;
    if (wake)
        ctl_wake(c, x);
}

/* Whether a's queue head may start now: a is idle and not lost, its head's other side (of a pair
 * job) is idle with the same head, and the head's run lets it through. *other: that side. */
static bool head_ready(sm_control *c, cagent *a, crun *gate, cagent **other)
{
    bool pair_ready = true;
    *other = NULL;
    if (a->qhead && a->qhead->peer[0]) {
        cjob *h = a->qhead;
        *other = sm_map_get(c->agents, strcmp(h->host, a->name) == 0 ? h->peer : h->host);
        pair_ready = *other && !(*other)->current && (*other)->idle &&
                     (*other)->status != SM_AGENT_LOST && (*other)->qhead == h;
    }
    return !a->current && a->idle && a->status != SM_AGENT_LOST && a->qhead && pair_ready &&
           gate_open(c, gate, a);
}

/* Assigns a's queue head: it becomes the current job of a (and of its other side). */
static int dispatch_head(sm_control *c, cagent *a, cagent *other, crun *gate, int64_t now_ms,
                         sm_error *err)
{
    cjob *j = a->qhead;
    uint32_t attempt = j->attempt ? j->attempt : 1;
    int rc = sm_store_job_set_state(c->st, j->id, attempt, SM_JOB_ASSIGNED, "", now_ms, err);
    if (rc)
        return rc;
    tell_change(c, SM_CHANGE_JOB, NULL, j->id, j->run_id);
    dequeue(a);
    j->attempt = attempt;
    j->state = SM_JOB_ASSIGNED;
    j->assigned_at = live_now(c, now_ms);
    j->assign_acked = false;
    a->current = j;
    if (other) {
        dequeue(other);
        other->current = j;
        ctl_wake(c, other); /* the server hears "prepare" now, the client "start" later */
    }
    if ((rc = ctl_job_rekey(c, j, err)) != 0)
        return rc;
    if (gate)
        gate->active++;
    c->stats.jobs_dispatched++;
    return 0;
}

/* The command a's current job still owes it: assign, prepare or start, until acked. */
static void current_command(sm_control *c, const cagent *a, sm_poll_reply *reply)
{
    const cjob *cur = a->current;
    if (!cur || reply->n_commands >= SM_REPLY_COMMANDS_MAX)
        return;
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
        const cagent *srv = sm_map_get(c->agents, cur->peer);
        pair_command(cur, SM_CMD_START, srv ? srv->data_addr : "",
                     &reply->commands[reply->n_commands++]);
    }
}

/* Commands for the agent now: its pending cancel, its unacked assignment, or (when idle) the
 * next queued job, which becomes its current one. */
int ctl_commands_for(sm_control *c, cagent *a, int64_t now_ms, sm_poll_reply *reply, sm_error *err)
{
    if (a->cancel_pending && reply->n_commands < SM_REPLY_COMMANDS_MAX)
        cancel_command(a, &reply->commands[reply->n_commands++]);
    crun *gate = a->qhead ? run_get(c, a->qhead->run_id) : NULL;
    cagent *other;
    if (head_ready(c, a, gate, &other)) {
        int rc = dispatch_head(c, a, other, gate, now_ms, err);
        if (rc)
            return rc;
    }
    const size_t before = reply->n_commands;
    current_command(c, a, reply);
    /* Every answer tells an agent that can hear it how long its polls are held now. */
    reply->hold_ms = a->says_wait ? ctl_fleet_hold(c) : 0;
    reply->want_facts = !a->facts_known;
    /* A run's first job on a host: the host collects its fingerprint before it starts, so the
     * run is explained by the settings it was measured under. Asked while that command goes
     * out unacked; the fingerprint that comes back marks the run as heard (fp_run). */
    const cjob *cur = a->current;
    reply->want_fingerprint = a->fp_capable && reply->n_commands > before && cur && cur->run_id &&
                              cur->run_id != a->fp_run;
    return 0;
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
    if (!rc)
        tell_change(c, SM_CHANGE_RUN, NULL, 0, run_id);
    if (!rc && state != SM_RUN_RUNNING) {
        sm_log(LOG_NOTICE, "SM-RUN-END", "run %" PRIu64 " %s: %u done, %u failed", r->id,
               sm_run_state_name(state), r->done, r->failed);
        ctl_run_free(sm_map_del_id(c->runs, r->id));
    } else if (!rc && !r->parallel) {
        wake_run_hosts(c, run_id);
    }
    return rc;
}

/* A job can end while still queued (a pair job resumed after a restart is queued again, and
 * its sides may still deliver the attempt they were running): it leaves every queue before
 * it is freed, or a queue would keep a dangling head. */
static void job_forget(sm_control *c, cjob *j)
{
    ctl_unqueue_all(c, j);
    sm_deadlines_remove(&c->job_due, &j->due);
    sm_map_del_id(c->jobs, j->id);
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
int ctl_job_finish(sm_control *c, cjob *j, sm_job_state state, const char *reason, int64_t now_ms,
                   sm_error *err)
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
        if (j->peer[0] && state == SM_JOB_FAILED)
            ctl_cancel(c, x, j, true);
        x->current = NULL;
    }
    if (r && was_active && r->active)
        r->active--;
    /* The next job of a one-at-a-time run may start now: its host hears of it at once. */
    if (r && !r->parallel && r->active == 0) {
        cagent *next = next_of_run(c, r->id);
        if (next)
            ctl_wake(c, next);
    }
    if (state == SM_JOB_FAILED && r && retryable(c, j, reason)) {
        char why[256];
        snprintf(why, sizeof why, "retry after: %.200s", reason);
        int rc = sm_store_job_set_state(c->st, j->id, 2, SM_JOB_QUEUED, why, now_ms, err);
        if (rc)
            return rc;
        tell_change(c, SM_CHANGE_JOB, NULL, j->id, j->run_id);
        sm_log(LOG_NOTICE, "SM-JOB-RETRY", "job %" PRIu64 " on %s failed (%s): retried later",
               j->id, j->host, reason);
        j->attempt = 2;
        j->state = SM_JOB_QUEUED;
        j->assign_acked = j->prepare_acked = j->start_acked = false;
        j->roles_got = 0;
        j->ready_port = 0;
        j->ready_pin[0] = '\0';
        ctl_unqueue_all(c, j); /* queued at the end, never twice */
        if (a) {
            ctl_enqueue(a, j);
            ctl_wake(c, a);
        }
        if (b) {
            ctl_enqueue(b, j);
            ctl_wake(c, b);
        }
        return 0;
    }
    int rc = sm_store_job_set_state(c->st, j->id, j->attempt, state, reason, now_ms, err);
    if (rc)
        return rc;
    tell_change(c, SM_CHANGE_JOB, NULL, j->id, j->run_id);
    if (state == SM_JOB_FAILED)
        sm_log(LOG_NOTICE, "SM-JOB-FAILED", "job %" PRIu64 " on %s failed: %s", j->id, j->host,
               reason);
    const uint64_t run_id = j->run_id;
    const uint32_t cell = j->cell;
    job_forget(c, j);
    /* A round the job's cell still needs is queued before the run's counts are checked, so
     * that the run does not end under it. */
    if (r && r->ad && (rc = ctl_adapt_job_ended(c, r, cell, now_ms, err)))
        return rc;
    return run_id ? run_count(c, run_id, state == SM_JOB_DONE, now_ms, err) : 0;
}

int ctl_submit(sm_control *c, const char *host, const sm_params *p, int64_t now_ms, uint64_t *id,
               sm_error *err)
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
    j->id = *id;
    snprintf(j->host, sizeof j->host, "%s", host);
    j->params = *p;
    j->state = SM_JOB_QUEUED;
    j->attempt = 1;
    if (sm_map_put_id(c->jobs, j->id, j) != 0) {
        free(j);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    ctl_enqueue(a, j);
    ctl_wake(c, a);
    tell_change(c, SM_CHANGE_JOB, NULL, j->id, 0);
    return 0;
}
