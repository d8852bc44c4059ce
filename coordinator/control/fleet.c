/* The fleet: agents in memory, what their polls say about them, their liveness and how long
 * their polls are held. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/control/internal.h"
#include "proto/log.h"

void ctl_machine_of(cagent *a, const sm_facts *f)
{
    snprintf(a->boot_id, sizeof a->boot_id, "%s", f->boot_id);
    snprintf(a->machine_id, sizeof a->machine_id, "%s", f->machine_id);
}

/* Room in the news ring and the liveness heap for n agents, taken when an agent is added so
 * that a wake or a poll never has to allocate. */
static int room_for(sm_control *c, size_t n)
{
    if (sm_deadlines_reserve(&c->live, n) != 0)
        return SM_ENOMEM;
    if (n <= c->news_cap)
        return 0;
    size_t cap = c->news_cap ? 2 * c->news_cap : 64;
    while (cap < n)
        cap *= 2;
    cagent **ring = malloc(cap * sizeof *ring);
    if (!ring)
        return SM_ENOMEM;
    for (size_t i = 0; i < c->news_n; i++)
        ring[i] = c->news_ring[(c->news_head + i) % c->news_cap];
    free(c->news_ring);
    c->news_ring = ring;
    c->news_cap = cap;
    c->news_head = 0;
    return 0;
}

void ctl_wake(sm_control *c, cagent *a)
{
    a->news = true;
    if (a->news_listed)
        return;
    a->news_listed = true;
    c->news_ring[(c->news_head + c->news_n++) % c->news_cap] = a;
}

void ctl_agent_rekey(sm_control *c, cagent *a)
{
    /* Online: lost once silent more than 3 x hold_ms of service. Lost: its queued run jobs
     * fail once lost longer than the grace. The heap has room for every agent. */
    if (a->status != SM_AGENT_LOST)
        (void)sm_deadlines_set(&c->live, &a->live,
                               a->heard_at + a->forgiven_ms + 3 * (int64_t)a->hold_ms + 1);
    else if (!a->queue_failed)
        (void)sm_deadlines_set(&c->live, &a->live, a->lost_at + (int64_t)c->cfg.lost_grace_ms + 1);
    else
        sm_deadlines_remove(&c->live, &a->live);
}

cagent *ctl_agent_new(sm_control *c, const char *name)
{
    if (room_for(c, sm_map_size(c->agents) + 1) != 0)
        return NULL;
    cagent *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    snprintf(a->name, sizeof a->name, "%s", name);
    a->status = SM_AGENT_LOST; /* until it polls */
    a->hold_ms = c->cfg.hold_ms;
    if (sm_map_put(c->agents, a->name, a) != 0) {
        free(a);
        return NULL;
    }
    return a;
}

void ctl_agent_free(void *p)
{
    cagent *a = p;
    if (a)
        free(a->labels);
    free(a);
}

int ctl_agent_set_labels(cagent *a, const sm_label *labels, size_t n)
{
    if (n == a->n_labels && (n == 0 || memcmp(a->labels, labels, n * sizeof *labels) == 0))
        return 0;
    sm_label *copy = NULL;
    if (n && !(copy = malloc(n * sizeof *copy)))
        return SM_ENOMEM;
    if (n)
        memcpy(copy, labels, n * sizeof *copy);
    free(a->labels);
    a->labels = copy;
    a->n_labels = n;
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
        ctl_machine_of(a, &p->facts);
    }
    return rc;
}

uint32_t ctl_fleet_hold(const sm_control *c)
{
    const uint32_t base = c->cfg.hold_ms;
    if (!c->cfg.poll_rate)
        return base;
    /* Whole seconds, so that the hold moves in steps as the fleet grows, not with each agent. */
    const uint64_t ms =
        ((uint64_t)sm_map_size(c->agents) * 1000u + c->cfg.poll_rate - 1) / c->cfg.poll_rate;
    const uint64_t hold = (ms + 999u) / 1000u * 1000u;
    const uint32_t most = base > SM_HOLD_MAX_MS ? base : SM_HOLD_MAX_MS;
    return hold <= base ? base : hold >= most ? most : (uint32_t)hold;
}

int ctl_agent_heard(sm_control *c, cagent *a, const sm_poll *p, int64_t now_ms, bool *rebooted,
                    sm_error *err)
{
    *rebooted = a->boot[0] && strcmp(a->boot, p->boot) != 0;
    const bool changed = *rebooted || !a->boot[0] || p->have_facts || a->status == SM_AGENT_LOST;
    if (a->status == SM_AGENT_LOST)
        sm_log(LOG_NOTICE, "SM-AGENT-UP", "agent %s is up (boot %s)", p->agent, p->boot);
    a->status = p->state == SM_AGENT_BUSY ? SM_AGENT_STATUS_BUSY : SM_AGENT_ONLINE;
    a->last_seen_ms = now_ms;
    a->heard_at = live_now(c, now_ms);
    a->forgiven_ms = 0;
    a->queue_failed = false;
    snprintf(a->boot, sizeof a->boot, "%s", p->boot);
    if (ctl_agent_set_labels(a, p->labels, p->n_labels) != 0)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    snprintf(a->data_addr, sizeof a->data_addr, "%s", p->data_addr);
    a->news = false;
    a->n_owed = 0;
    if (p->quarantined > a->quarantined)
        sm_log(LOG_WARNING, "SM-AGENT-QUARANTINE",
               "agent %s has %" PRIu64 " spool entries in quarantine (it had %" PRIu64 ")",
               p->agent, p->quarantined, a->quarantined);
    a->quarantined = p->quarantined;
    /* Held no longer than it waits, less a margin for the answer to get there. */
    a->says_wait = p->wait_ms != 0;
    a->hold_ms = c->cfg.hold_ms;
    const uint32_t fleet = ctl_fleet_hold(c);
    if (a->says_wait && fleet > a->hold_ms && p->wait_ms > SM_HOLD_MARGIN_MS) {
        const uint32_t most = p->wait_ms - SM_HOLD_MARGIN_MS;
        a->hold_ms = most < a->hold_ms ? a->hold_ms : most < fleet ? most : fleet;
    }
    ctl_agent_rekey(c, a);
    return changed ? upsert_agent(c, a, p, now_ms, err) : 0;
}

/* Whether a refusal of this kind is logged now: one line a minute, saying how many were not. */
bool ctl_quiet_log(struct quiet *q, int64_t now_ms, uint64_t *held_back)
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

/* Liveness counts only time the coordinator served the bus, on the liveness clock (monotonic in
 * the server: a step of the wall clock moves nothing). The coordinator ticks every 250 ms and
 * takes polls in between; a gap between two of these longer than hold_ms means it was away
 * itself (stopped or starved), and no agent could have been heard: the part of the gap beyond
 * hold_ms is forgiven to every agent that had not polled since. A gap that goes backwards (a
 * wall clock stepped back, where that is the clock) is forgiven whole, so silence keeps
 * counting from where it was. Called first by every poll and tick. */
void ctl_forgive_away(sm_control *c, int64_t now)
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
    /* Once per away event, not per tick: every agent's deadline moves. */
    size_t cur = 0;
    const char *key;
    void *val;
    while (sm_map_next(c->agents, &cur, &key, &val)) {
        cagent *a = val;
        if (gap < 0) {
            a->forgiven_ms += gap;
            ctl_agent_rekey(c, a);
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
        ctl_agent_rekey(c, a);
    }
}

bool ctl_admit(sm_control *c, const sm_poll *p, int64_t now_ms)
{
    uint64_t held_back;
    /* The coordinator signs its replies with this name: an agent of that name would be
     * confused with it in every log line and in the store. */
    if (strcmp(p->agent, "coordinator") == 0) {
        c->stats.refused_name++;
        if (ctl_quiet_log(&c->quiet_name, now_ms, &held_back))
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
        if (ctl_quiet_log(&c->quiet_data_addr, now_ms, &held_back))
            sm_log(LOG_WARNING, "SM-AGENT-DATA-ADDR",
                   "refused agent %s: its --data-addr %s; partners would send their data there "
                   "(%" PRIu64 " more refusals in the last minute not logged)",
                   p->agent, why.msg, held_back);
        return false;
    }
    if (!sm_map_get(c->agents, p->agent) && sm_map_size(c->agents) >= c->cfg.max_agents) {
        c->stats.refused_agents_cap++;
        if (ctl_quiet_log(&c->quiet_cap, now_ms, &held_back))
            sm_log(LOG_WARNING, "SM-AGENT-CAP",
                   "refused new agent %s: %u agents are registered, the most --max-agents allows; "
                   "known agents keep working (%" PRIu64
                   " more refusals in the last minute not logged)",
                   p->agent, c->cfg.max_agents, held_back);
        return false;
    }
    return true;
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
        ctl_unqueue_all(c, j);
        rc = ctl_job_finish(c, j, SM_JOB_FAILED, why, now_ms, err);
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

bool ctl_agent_live(sm_control *c, const char *name, sm_agent_status *status, int64_t *last_seen_ms)
{
    cagent *a = sm_map_get(c->agents, name);
    if (!a)
        return false;
    /* An agent the coordinator has given a job, or asked to stop one, is busy from then on:
     * its last poll, which may have said idle, is older than that. */
    *status = a->status == SM_AGENT_ONLINE && (a->current || a->cancel_pending)
                  ? SM_AGENT_STATUS_BUSY
                  : a->status;
    *last_seen_ms = a->last_seen_ms;
    return true;
}

uint64_t ctl_agent_quarantined(sm_control *c, const char *name)
{
    cagent *a = sm_map_get(c->agents, name);
    return a ? a->quarantined : 0;
}

size_t ctl_take_news(sm_control *c, char (*names)[SM_NAME_MAX + 1], size_t max)
{
    size_t n = 0;
    /* An agent whose poll came since it was woken has news == false: it is skipped. */
    while (n < max && c->news_n) {
        cagent *a = c->news_ring[c->news_head];
        c->news_head = (c->news_head + 1) % c->news_cap;
        c->news_n--;
        a->news_listed = false;
        if (a->news) {
            a->news = false;
            snprintf(names[n++], SM_NAME_MAX + 1, "%s", a->name);
        }
    }
    return n;
}

/* One agent whose liveness deadline came: an online one silent too long is lost; a lost one's
 * queued run jobs fail once its grace is over. */
static int fleet_due(sm_control *c, cagent *a, int64_t now, int64_t now_ms, sm_error *err)
{
    const int64_t lost_after = 3 * (int64_t)a->hold_ms;
    if (a->status == SM_AGENT_LOST)
        return a->queue_failed || now - a->lost_at <= (int64_t)c->cfg.lost_grace_ms
                   ? 0
                   : fail_lost_queue(c, a, now_ms, err);
    const int64_t silent = now - a->heard_at - a->forgiven_ms;
    if (silent <= lost_after)
        return 0;
    a->status = SM_AGENT_LOST;
    a->lost_at = now;
    a->queue_failed = false;
    sm_log(LOG_WARNING, "SM-AGENT-LOST",
           "agent %s lost: no poll for %" PRId64 " ms of the coordinator's service; its %zu "
           "queued run jobs wait %" PRIu32 " ms for it",
           a->name, silent, run_jobs_queued(a), c->cfg.lost_grace_ms);
    int rc = sm_store_agent_set_status(c->st, a->name, SM_AGENT_LOST, now_ms, err);
    if (!rc)
        tell_change(c, SM_CHANGE_AGENT, a->name, 0, 0);
    if (!rc && a->current)
        rc = ctl_job_finish(c, a->current, SM_JOB_FAILED,
                            "agent-lost: the agent stopped polling during the job", now_ms, err);
    if (!rc && c->cfg.lost_grace_ms == 0)
        rc = fail_lost_queue(c, a, now_ms, err);
    return rc;
}

int ctl_fleet_tick(sm_control *c, int64_t now, int64_t now_ms, sm_error *err)
{
    /* Only the agents whose deadline came; each goes back in at its next one (after this now,
     * so the loop ends). */
    sm_deadline *d;
    while ((d = sm_deadlines_pop_due(&c->live, now)) != NULL) {
        cagent *a = (cagent *)(void *)((char *)d - offsetof(cagent, live));
        c->tick_visits++;
        int rc = fleet_due(c, a, now, now_ms, err);
        ctl_agent_rekey(c, a);
        if (rc)
            return rc;
    }
    return 0;
}
