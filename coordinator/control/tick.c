/* The timer tick: the fleet's liveness step (fleet.c), then the jobs whose time came: a pair
 * server that never reported ready, a job running past its time limit. And when the tick next
 * looks at a job (ctl_job_rekey), wherever what that rests on changes. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "coordinator/control/internal.h"

/* The side of job j that is on it now, of the host named, or NULL. */
static cagent *side_on(sm_control *c, const char *name, const cjob *j)
{
    cagent *x = name[0] ? sm_map_get(c->agents, name) : NULL;
    return x && x->current == j ? x : NULL;
}

/* A pair server waits for ready on it (the server is the job's peer). */
static bool waits_ready(sm_control *c, const cjob *j)
{
    return j->peer[0] && !j->ready_port && side_on(c, j->peer, j);
}

/* The agent a running job runs on (its client first), or NULL. */
static cagent *running_on(sm_control *c, const cjob *j)
{
    if (j->state != SM_JOB_RUNNING)
        return NULL;
    cagent *x = side_on(c, j->host, j);
    return x ? x : side_on(c, j->peer, j);
}

static int64_t time_limit(const sm_control *c, const cjob *j)
{
    return (int64_t)j->params.time_limit_ms + c->cfg.job_grace_ms;
}

int ctl_job_rekey(sm_control *c, cjob *j, sm_error *err)
{
    int64_t at = INT64_MAX;
    if (waits_ready(c, j))
        at = j->assigned_at + 30000 + 1;
    if (running_on(c, j) && j->started_at + time_limit(c, j) + 1 < at)
        at = j->started_at + time_limit(c, j) + 1;
    if (at == INT64_MAX) {
        sm_deadlines_remove(&c->job_due, &j->due);
        return 0;
    }
    if (sm_deadlines_set(&c->job_due, &j->due, at) != 0)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    return 0;
}

/* One job whose time came: a pair server that never reported ready (it could not listen, or
 * its poll was lost with the coordinator's memory of the handshake) fails it; a job still
 * running past its time limit and grace is cancelled and fails "timeout". *ended: j is gone or
 * queued again. */
static int job_due(sm_control *c, cjob *j, int64_t now, int64_t now_ms, bool *ended, sm_error *err)
{
    *ended = true;
    if (waits_ready(c, j) && now - j->assigned_at > 30000)
        return ctl_job_finish(c, j, SM_JOB_FAILED,
                              "prepare: the server did not report ready within 30 s", now_ms, err);
    cagent *a = running_on(c, j);
    if (a && now - j->started_at > time_limit(c, j)) {
        ctl_cancel(c, a, j, false);
        char why[128];
        snprintf(why, sizeof why, "timeout: still running %" PRId64 " ms after it started",
                 now - j->started_at);
        return ctl_job_finish(c, j, SM_JOB_FAILED, why, now_ms, err);
    }
    *ended = false;
    return 0;
}

/* Only the jobs whose time came; one not over goes back in at its next time. */
static int tick_jobs(sm_control *c, int64_t now, int64_t now_ms, sm_error *err)
{
    sm_deadline *d;
    while ((d = sm_deadlines_pop_due(&c->job_due, now)) != NULL) {
        cjob *j = (cjob *)(void *)((char *)d - offsetof(cjob, due));
        bool ended;
        c->tick_visits++;
        int rc = job_due(c, j, now, now_ms, &ended, err);
        if (!rc && !ended)
            rc = ctl_job_rekey(c, j, err);
        if (rc)
            return rc;
    }
    return 0;
}

int ctl_tick(sm_control *c, int64_t now_ms, sm_error *err)
{
    const int64_t now = live_now(c, now_ms);
    ctl_forgive_away(c, now);
    int rc = ctl_fleet_tick(c, now, now_ms, err);
    if (!rc)
        rc = tick_jobs(c, now, now_ms, err);
    return rc;
}
