/* What the files of the control core share (control.c, fleet.c, poll.c, tick.c, dispatch.c,
 * runs.c, intake.c, adapt.c): the sm_control struct, the agents, jobs and runs it keeps in
 * memory, small helpers, and the ctl_* functions one file gives the others, each under the file
 * that defines it. Private to those files; everyone else goes through control.h, whose entry
 * points are all in control.c, each passing the call on to its ctl_* here. Single-threaded, as
 * control.h says. */
#ifndef SM_COORD_CONTROL_INTERNAL_H
#define SM_COORD_CONTROL_INTERNAL_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "coordinator/control/control.h"
#include "coordinator/control/deadlines.h"
#include "proto/map.h"
#include "coordinator/model/plan.h"

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
    /* In sm_control.job_due while assigned or running: when the tick next looks at it. */
    sm_deadline due;
} cjob;

typedef struct adapt adapt; /* adapt.c */

/* A matrix run in progress. */
typedef struct crun {
    uint64_t id;
    bool parallel; /* false: one job of the run fleet-wide at a time */
    uint32_t total, done, failed;
    uint32_t active; /* jobs assigned or running */
    bool cancelling; /* its jobs are being failed: no round is added now */
    adapt *ad;       /* the rounds it adds; NULL for a fixed count that remeasures nothing */
} crun;

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
    /* From its last poll, for host selection: n_labels of them, NULL when none. Most agents
     * have none or a few; a full array took 1.5 KB of every agent. */
    sm_label *labels;
    size_t n_labels;
    char data_addr[SM_ADDR_MAX + 1];
    bool news;        /* its held poll should hear of new work now (set by ctl_wake) */
    bool news_listed; /* in sm_control's news ring, which take_news drains */
    /* In sm_control.live: when it is lost (online), or when its grace ends (lost). */
    sm_deadline live;
    /* Acks for results its last poll resent though they were stored already: that poll is
     * held, and whatever answers it carries them (see ctl_owed_acks_pay). */
    struct {
        uint64_t job;
        uint32_t attempt;
        sm_role role;
    } owed[SM_POLL_RESULTS_MAX];
    size_t n_owed;
    uint64_t quarantined; /* its spool's entries out of service, as its last poll said */
    /* The hold of its last poll, which silence is measured against (lost after 3x), and
     * whether that poll said how long it waits (wait_ms): such an agent hears the fleet's
     * hold in every reply. */
    uint32_t hold_ms;
    bool says_wait;
    /* It sends fingerprints (one is stored): only such an agent is asked for one, before each
     * run's first job on it; fp_run is the run it last sent one for (0 none). */
    bool fp_capable;
    uint64_t fp_run;
} cagent;

/* Log lines of refused results and polls: at most one a minute per kind. */
struct quiet {
    int64_t at;
    uint64_t held_back;
};

struct sm_control {
    sm_store *st;
    sm_control_cfg cfg;
    sm_map *agents; /* name -> cagent */
    sm_map *jobs;   /* job id -> cjob, unfinished jobs only (id_map_*) */
    sm_map *runs;   /* run id -> crun, running runs only (id_map_*) */
    sm_control_stats stats;
    struct quiet quiet_wrong_host, quiet_cap, quiet_data_addr, quiet_name;
    /* Its previous poll or tick on the liveness clock: how long the coordinator was away. */
    bool served;
    int64_t last_service_at;
    sm_change_fn on_change; /* the live-events hub's, or NULL */
    void *change_ctx;
    /* What a tick looks at, so that it never walks the fleet: agents by their liveness
     * deadline, assigned and running jobs by their time limit, and agents with news in the
     * order they got it (a ring with room for every agent, each in it at most once). */
    sm_deadlines live, job_due;
    cagent **news_ring;
    size_t news_head, news_n, news_cap;
    uint64_t tick_visits; /* agents and jobs the ticks took out of live and job_due */
};

static inline cjob *job_get(const sm_control *c, uint64_t id)
{
    return sm_map_get_id(c->jobs, id);
}

static inline crun *run_get(const sm_control *c, uint64_t id)
{
    return id ? sm_map_get_id(c->runs, id) : NULL;
}

/* ---- small helpers, defined here ---- */

/* The clock silences and time limits are measured on (see sm_control_cfg.clock_ms). */
static inline int64_t live_now(const sm_control *c, int64_t now_ms)
{
    return c->cfg.clock_ms ? c->cfg.clock_ms(c->cfg.clock_arg) : now_ms;
}

/* The one place changes are told to the live-events hub (sm_control_on_change). */
static inline void tell_change(const sm_control *c, sm_change_kind kind, const char *agent,
                               uint64_t job, uint64_t run)
{
    if (!c->on_change)
        return;
    const sm_change ch = {kind, agent, job, run};
    c->on_change(c->change_ctx, &ch);
}

/* A pair job sits in two queues, its client's and its server's, each with its own link.
 * Every host's queue follows one global order (the run's plan), so a pair job that heads
 * both of its queues can always start once both hosts are idle: no cycle of hosts can wait
 * on each other. */
static inline cjob **link_of(const cagent *a, cjob *j)
{
    return strcmp(j->host, a->name) == 0 ? &j->next : &j->next_peer;
}

/* ---- fleet.c: agents, their liveness, the hold of their polls, the news ring ---- */

/* A new agent, registered in c->agents, LOST until it polls; NULL when out of memory. */
cagent *ctl_agent_new(sm_control *c, const char *name);
/* Frees agent p (a cagent) and its labels: the agents map's free function. */
void ctl_agent_free(void *p);
/* Sets a's labels to labels[0..n), n <= SM_LABELS_MAX; unchanged ones cost a comparison.
 * 0, or SM_ENOMEM with a's labels as they were. */
int ctl_agent_set_labels(cagent *a, const sm_label *labels, size_t n);
/* Notes the machine the agent runs on, from its facts. */
void ctl_machine_of(cagent *a, const sm_facts *f);
/* Agent a's held poll hears of new work at the next chance: it joins the news ring, which
 * sm_control_take_news drains. Never fails: the ring has room for every agent. */
void ctl_wake(sm_control *c, cagent *a);
/* Whether a refusal of this kind is logged now: one line a minute, saying how many were not. */
bool ctl_quiet_log(struct quiet *q, int64_t now_ms, uint64_t *held_back);
/* Puts agent a in c->live at its next liveness deadline, or out of it when it has none (lost,
 * its queued run jobs failed already). Called whenever what the deadline rests on changes. */
void ctl_agent_rekey(sm_control *c, cagent *a);
/* The fleet's hold now (sm_control_fleet_hold_ms): cfg.hold_ms, or longer for a large fleet. */
uint32_t ctl_fleet_hold(const sm_control *c);
/* Forgives the agents the time the coordinator was away; first thing of every poll and tick. */
void ctl_forgive_away(sm_control *c, int64_t now);
/* Takes what poll p says about its agent a (boot, labels, address, quarantine, how long it
 * waits) and registers or refreshes its row; *rebooted: it restarted since its previous poll. */
int ctl_agent_heard(sm_control *c, cagent *a, const sm_poll *p, int64_t now_ms, bool *rebooted,
                    sm_error *err);
/* The tick's liveness step: agents silent too long are lost, and a lost host's queued run
 * jobs fail once its grace is over. */
int ctl_fleet_tick(sm_control *c, int64_t now, int64_t now_ms, sm_error *err);
/* Entry points: sm_control_admit, sm_control_agent_live, sm_control_agent_quarantined,
 * sm_control_take_news. */
bool ctl_admit(sm_control *c, const sm_poll *p, int64_t now_ms);
bool ctl_agent_live(sm_control *c, const char *name, sm_agent_status *status,
                    int64_t *last_seen_ms);
uint64_t ctl_agent_quarantined(sm_control *c, const char *name);
size_t ctl_take_news(sm_control *c, char (*names)[SM_NAME_MAX + 1], size_t max);

/* ---- poll.c: an agent's poll and the answers to a held one ---- */

/* Entry points: sm_control_poll, sm_control_news, sm_control_expire. */
int ctl_poll(sm_control *c, const sm_poll *p, int64_t now_ms, sm_poll_reply *reply, bool *reply_now,
             sm_error *err);
bool ctl_news(sm_control *c, const char *agent, int64_t now_ms, sm_poll_reply *reply,
              sm_error *err);
int ctl_expire(sm_control *c, const char *agent, int64_t now_ms, sm_poll_reply *reply,
               sm_error *err);

/* ---- tick.c: the timer tick and the jobs' time limits ---- */

/* Puts job j in c->job_due at the next time the tick must look at it (its time limit while it
 * runs, a pair server's wait for ready), or out of it. 0, or SM_ENOMEM with err set. */
int ctl_job_rekey(sm_control *c, cjob *j, sm_error *err);
/* Entry point: sm_control_tick. */
int ctl_tick(sm_control *c, int64_t now_ms, sm_error *err);

/* ---- dispatch.c: queues, the gate, the commands a poll gets, how a job ends ---- */

void ctl_enqueue(cagent *a, cjob *j);
/* Takes a queued job out of every queue it is in (its host's, and its server's). */
void ctl_unqueue_all(sm_control *c, cjob *j);
/* Commands for the agent now: its pending cancel, its unacked assignment, or (when idle) the
 * next queued job, which becomes its current one. */
int ctl_commands_for(sm_control *c, cagent *a, int64_t now_ms, sm_poll_reply *reply, sm_error *err);
/* Has agent x tell its side of job j to stop: the cancel goes out in its replies until it is
 * acked. With wake, a held poll of x hears of it at once; otherwise its next poll does. */
void ctl_cancel(sm_control *c, cagent *x, const cjob *j, bool wake);
/* Ends a job (done or failed) in the store and in memory, counts it in its run, and frees it;
 * a failed run job is queued again once, at the end of its host's queue. */
int ctl_job_finish(sm_control *c, cjob *j, sm_job_state state, const char *reason, int64_t now_ms,
                   sm_error *err);
/* Entry point: sm_control_submit. */
int ctl_submit(sm_control *c, const char *host, const sm_params *p, int64_t now_ms, uint64_t *id,
               sm_error *err);

/* ---- runs.c: matrix runs started and cancelled ---- */

/* Frees a run and the state of its rounds; NULL is ignored (void * for sm_map_free). */
void ctl_run_free(void *p);
/* Entry points: sm_control_run_start (with only NULL) and sm_control_run_start_only;
 * sm_control_run_cancel. */
int ctl_run_start(sm_control *c, const char *spec_json, const sm_spec *spec,
                  const sm_control_pick *only, size_t n_only, int64_t now_ms, uint64_t *run_id,
                  sm_error *err);
int ctl_run_cancel(sm_control *c, uint64_t run_id, int64_t now_ms, sm_error *err);

/* ---- intake.c: results, pair sides, their acks ---- */

/* Stores the results poll p of agent a carries and settles their jobs, acking each in reply
 * that the store holds (or can never hold); a result of another store is neither stored nor
 * acked. 0, or the store's error (roll back: the agent sends them again). */
int ctl_take_results(sm_control *c, cagent *a, const sm_poll *p, int64_t now_ms,
                     sm_poll_reply *reply, sm_error *err);
/* Poll p is held: the acks of its results wait for whatever answers it. */
void ctl_owed_acks_keep(sm_control *c, cagent *a, const sm_poll *p);
/* Adds the held poll's owed acks to its answer, each checked against the store again. */
void ctl_owed_acks_pay(sm_control *c, cagent *a, sm_poll_reply *reply);

/* ---- adapt.c: rounds a run adds (adaptive repetitions, disturbed samples remeasured) ---- */

/* The state of a run just planned whose rule adds rounds (adaptive, or plan->remeasure > 0):
 * every job is pending, min repetitions each. */
int ctl_adapt_plan(crun *r, const sm_spec *spec, const sm_plan *plan, sm_error *err);
/* The state of a run resumed after a restart, from its stored cells and jobs; r->ad stays
 * NULL when its rule adds no rounds. */
int ctl_adapt_open(sm_control *c, crun *r, const sm_spec *spec, sm_error *err);
/* A job of run r (r->ad set) ended for good: judges its group when it was the last pending
 * one, and queues one more round when a cell needs it. */
int ctl_adapt_job_ended(sm_control *c, crun *r, uint32_t cell, int64_t now_ms, sm_error *err);
void ctl_adapt_free(adapt *ad);

#endif
