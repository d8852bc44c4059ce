/* The control plane's logic, free of sockets: the fleet registry in memory, the job queue per
 * host, and what to say to each poll. The server feeds it verified polls and ticks; it writes
 * through the store inside the server's transaction, so nothing is acked before it is
 * committed. Single-threaded (the event loop's). */
#ifndef SM_COORD_CONTROL_H
#define SM_COORD_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "coordinator/model/spec.h"
#include "coordinator/store/store.h"
#include "proto/addrpolicy.h"
#include "proto/err.h"
#include "proto/msg.h"

typedef struct sm_control sm_control;

/* What changed in the control core, for the live-events hub: which object; the hub reads its
 * state itself. Called on the coordinator's loop thread, right after the change. */
typedef enum { SM_CHANGE_AGENT, SM_CHANGE_JOB, SM_CHANGE_RUN } sm_change_kind;
typedef struct sm_change {
    sm_change_kind kind;
    const char *agent; /* SM_CHANGE_AGENT: its name */
    uint64_t job;      /* SM_CHANGE_JOB: its id */
    uint64_t run;      /* SM_CHANGE_JOB (0 for a job of no run) and SM_CHANGE_RUN */
} sm_change;
typedef void (*sm_change_fn)(void *ctx, const sm_change *ch);

typedef struct sm_control_cfg {
    /* How long a poll is held at least; an agent silent for 3x its hold is lost. */
    uint32_t hold_ms;
    /* Idle polls a second the fleet's hold aims at (0: the hold stays hold_ms). A fleet larger
     * than poll_rate x hold_ms / 1000 agents is held longer, in whole seconds up to
     * SM_HOLD_MAX_MS, so that its idle polls cost the same whatever its size; an agent hears
     * of the hold in its replies and waits for it (it says so with wait_ms). */
    uint32_t poll_rate;
    uint32_t job_grace_ms; /* a running job past its time limit plus this fails "timeout" */
    /* A lost host's queued run jobs wait this long for it to come back before they fail. */
    uint32_t lost_grace_ms;
    /* The clock that silences and time limits are measured on, in ms: the server gives
     * CLOCK_MONOTONIC, which a step of the wall clock does not move. NULL: the now_ms each call
     * is given (wall time, as stored). */
    int64_t (*clock_ms)(void *arg);
    void *clock_arg;
    /* Registrations: a poll from a new name when this many agents are known is refused
     * (0: SM_AGENTS_MAX_DEFAULT). */
    uint32_t max_agents;
    /* What an agent may announce as its data_addr (a zeroed policy: the default). */
    sm_addr_policy data_addr;
} sm_control_cfg;

#define SM_AGENTS_MAX_DEFAULT 4096u
#define SM_POLL_RATE_DEFAULT  400u
#define SM_HOLD_MAX_MS        60000u
/* An agent's poll is held at most this much less than it said it waits (wait_ms), so that the
 * answer is there before the agent gives up on it. */
#define SM_HOLD_MARGIN_MS 2000u

/* Loads the registered agents and the unfinished jobs from the store. */
int sm_control_open(sm_control **c, sm_store *st, const sm_control_cfg *cfg, int64_t now_ms,
                    sm_error *err);
void sm_control_close(sm_control *c);

/* Rolls back the store's open transaction and the control state with it. The store's rollback
 * undoes nothing in memory: a job dispatched or ended, a run counted, in a transaction that
 * failed would stay so, and a run could end "done" over jobs its table still has queued. So *c
 * is reopened from the store, as after a restart (an unacked result is sent again by its agent;
 * a pair job in flight runs again as a new attempt), keeping its statistics and what the agents'
 * last polls said (idle, address, labels, when they were heard). When the store cannot be read
 * to reopen, *c is kept as it was and the error returned. */
int sm_control_rollback(sm_control **c, int64_t now_ms, sm_error *err);

/* fn (NULL: none) hears of every change a dashboard shows: an agent polled (its last-seen time,
 * status, labels, facts or quarantine count may have moved), registered or was lost; a job was
 * queued or changed state; a run started, counted a job, ended, was cancelled or took a late
 * result. A change inside a transaction that is then rolled back is told all the same (the
 * listener reads the state as it is). Kept across sm_control_rollback. */
void sm_control_on_change(sm_control *c, sm_change_fn fn, void *ctx);

/* Whether a verified poll may register or refresh its agent: its name is not reserved
 * ("coordinator"), its data_addr is inside cfg.data_addr, and it is a known agent or there is
 * room under cfg.max_agents. A refused poll is counted, logged (at most once a minute per
 * reason) and must be dropped unanswered, before sm_control_poll. */
bool sm_control_admit(sm_control *c, const sm_poll *p, int64_t now_ms);

/* Handles one verified poll: stores its results (the caller has begun a transaction and
 * commits before sending), notes acks and status, dispatches the next job, and fills *reply.
 * *reply_now says whether to answer at once (a command, facts or a fingerprint wanted) or hold
 * the poll. Results alone are no reason to answer: a held poll's results, stored now, are acked
 * by whatever answers it (sm_control_news, sm_control_expire), so that a job costs one poll
 * and an agent that keeps resending them polls once per hold, not in a loop. Returns 0, or an SM_E
 * code when the store failed (roll back, answer nothing: the agent will send its results again). */
int sm_control_poll(sm_control *c, const sm_poll *p, int64_t now_ms, sm_poll_reply *reply,
                    bool *reply_now, sm_error *err);

/* Whether the agent has something new to hear (a job queued or a cancel since its poll was
 * held); if so, fills *reply with what an immediate answer should say. */
bool sm_control_news(sm_control *c, const char *agent, int64_t now_ms, sm_poll_reply *reply,
                     sm_error *err);

/* The reply to a held poll whose time is up (dispatches a job if one appeared). */
int sm_control_expire(sm_control *c, const char *agent, int64_t now_ms, sm_poll_reply *reply,
                      sm_error *err);

/* Every tick (250 ms): agents silent for 3 x hold_ms become lost and their job fails
 * "agent-lost" -- silent while the coordinator ran, on cfg's clock: a gap beyond hold_ms between
 * two polls or ticks (the coordinator was stopped) is not the agents' silence; a lost host's
 * queued run jobs fail when it stayed away lost_grace_ms; running jobs past their limit fail
 * "timeout" (and a cancel goes out). Returns 0 or the store's error. */
int sm_control_tick(sm_control *c, int64_t now_ms, sm_error *err);

/* Queues a job; host must be a registered agent (SM_EINVAL naming it otherwise). */
int sm_control_submit(sm_control *c, const char *host, const sm_params *p, int64_t now_ms,
                      uint64_t *id, sm_error *err);

/* ---- matrix runs ---- */

/* Plans spec over the online fleet, stores the run with its cells and jobs, and queues the
 * jobs (each host's in plan order, so variants interleave). spec_json is stored as given.
 * How the jobs go is decided here, once, and stored with the run (sm_run_row.parallel and
 * parallel_note): hosts of the run that share one machine (coordinator/control/sharing.h, from the
 * boot id and machine id in their agents' facts) would share its CPUs side by side, so a spec
 * that does not say "parallel" runs such a run one job at a time, with a note naming them; a
 * spec that says "parallel": true runs side by side with a warning note; "parallel": false is
 * one at a time. The facts are those known now: an agent sends them in its first poll, and an
 * agent whose facts have not arrived (or an older agent that sends no identity) counts as a
 * machine of its own. A run resumed after a restart keeps its decision.
 * Errors (a host not registered, too many jobs, a pair test: pair jobs are not available yet)
 * are SM_EINVAL with err->msg naming the problem and err->field the field. */
int sm_control_run_start(sm_control *c, const char *spec_json, const sm_spec *spec, int64_t now_ms,
                         uint64_t *run_id, sm_error *err);

/* A cell a run may keep: its row as a run's table names it (the host, or "client->server") and
 * its test's label (sm_export_column). */
typedef struct sm_control_pick {
    const char *row;
    const char *test;
} sm_control_pick;

/* sm_control_run_start with only the cells of the plan that one of only[0..n_only) names
 * (the cells an earlier run could not judge, measured again). SM_EINVAL, field "cells", when
 * none of them can be planned now (their hosts are gone, or the spec no longer makes them). */
int sm_control_run_start_only(sm_control *c, const char *spec_json, const sm_spec *spec,
                              const sm_control_pick *only, size_t n_only, int64_t now_ms,
                              uint64_t *run_id, sm_error *err);
/* Cancels a running run: its queued jobs fail "cancelled", its running ones get a cancel
 * command and fail "cancelled", the run ends cancelled. SM_EINVAL if it is not running. */
int sm_control_run_cancel(sm_control *c, uint64_t run_id, int64_t now_ms, sm_error *err);

/* Agents whose held poll should be answered now because work became dispatchable for them
 * (a run's one-at-a-time gate opened, a retry was queued). Up to max names are copied; the set
 * is cleared. */
size_t sm_control_take_news(sm_control *c, char (*names)[SM_NAME_MAX + 1], size_t max);

/* The fleet's hold now: cfg.hold_ms, or longer for a fleet of more than poll_rate x hold_ms
 * agents (see sm_control_cfg.poll_rate). */
uint32_t sm_control_fleet_hold_ms(const sm_control *c);
/* How long the last poll of agent is held when there is nothing to say: the fleet's hold when
 * the poll said it waits long enough (wait_ms), cfg.hold_ms otherwise or for an unknown agent. */
uint32_t sm_control_agent_hold_ms(const sm_control *c, const char *agent);

/* In-memory view of an agent for the API: status and last poll time. */
bool sm_control_agent_live(sm_control *c, const char *name, sm_agent_status *status,
                           int64_t *last_seen_ms);

/* The spool entries the agent's last poll said are out of service (moved to its spool's
 * quarantine/ folder); 0 for an unknown agent or one that said nothing since this start. */
uint64_t sm_control_agent_quarantined(sm_control *c, const char *name);

/* Counters for /healthz. */
typedef struct sm_control_stats {
    uint64_t polls, results_stored, results_duplicate, results_orphan, jobs_dispatched;
    uint64_t results_foreign; /* measured for another store's job: neither stored nor acked */
    /* A result or a pair side sent by another agent than the job's host (or peer, for the
     * server side): acked, never stored. */
    uint64_t results_wrong_host;
    /* Polls refused by sm_control_admit: a new agent over the cap, a data_addr outside the
     * policy, a reserved name. */
    uint64_t refused_agents_cap, refused_data_addr, refused_name;
} sm_control_stats;
void sm_control_get_stats(const sm_control *c, sm_control_stats *out);
/* How many agents and jobs the ticks have looked at so far: only those whose deadline came, so
 * a tick over an idle fleet with nothing due adds nothing (for tests and diagnostics). */
uint64_t sm_control_tick_visits(const sm_control *c);

#endif
