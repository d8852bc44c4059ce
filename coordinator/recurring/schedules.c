/* Recurring runs on the coordinator's loop: firing due schedules and their webhook trigger
 * (schedules.h). */
#include "coordinator/recurring/schedules.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/model/cron.h"
#include "coordinator/schema/schedule_json.h"
#include "coordinator/model/spec.h"
#include "proto/log.h"

int64_t sm_schedule_first(uint32_t every_s, const char *cron, int64_t now_ms)
{
    if (every_s)
        return now_ms + (int64_t)every_s * 1000;
    sm_cron c;
    sm_error err = {0};
    return sm_cron_parse(cron, &c, &err) == 0 ? sm_cron_next(&c, now_ms) : -1;
}

int64_t sm_schedule_next(const sm_schedule_row *r, int64_t now_ms)
{
    if (!r->every_s)
        return sm_schedule_first(0, r->cron, now_ms);
    const int64_t step = (int64_t)r->every_s * 1000;
    if (r->next_ms > now_ms)
        return r->next_ms + step;
    /* The first slot of its phase after now: the ones missed meanwhile are not made up. */
    return r->next_ms + ((now_ms - r->next_ms) / step + 1) * step;
}

/* A slot that never comes again parks the schedule at the end of time. */
static int64_t next_or_never(const sm_schedule_row *r, int64_t now_ms)
{
    const int64_t next = sm_schedule_next(r, now_ms);
    if (next >= 0)
        return next;
    sm_log(LOG_WARNING, "SM-SCHEDULE-NEVER",
           "schedule %" PRIu64 " (%s): cron \"%s\" fires no more; it stays, firing nothing", r->id,
           r->name, r->cron);
    return INT64_MAX;
}

/* In a transaction of its own: the schedule's next slot and an event saying what happened to
 * this one. */
static void slot_passes(const sm_schedules_env *e, const sm_schedule_row *r, int64_t next,
                        int64_t now_ms, const char *kind, const char *detail)
{
    char subject[40];
    snprintf(subject, sizeof subject, "schedule %" PRIu64, r->id);
    sm_error err = {0};
    if (sm_store_begin(e->st, &err) != 0 ||
        sm_store_schedule_set_next(e->st, r->id, next, &err) != 0 ||
        sm_store_event_insert(e->st, now_ms, kind, subject, detail, &err) != 0 ||
        sm_store_commit(e->st, &err) != 0) {
        sm_log(LOG_ERR, "SM-SCHEDULE-FAIL", "schedule %" PRIu64 ": %s", r->id, err.msg);
        sm_store_rollback(e->st);
    }
}

/* Starts the run of schedule r's slot, or passes the slot with an event saying why not. */
static void fire(const sm_schedules_env *e, const sm_schedule_row *r, int64_t now_ms)
{
    /* -1 is "no slot" (a row stored before POST refused such crons), not a time long past. */
    if (r->next_ms < 0) {
        sm_log(LOG_WARNING, "SM-SCHEDULE-NEVER",
               "schedule %" PRIu64 " (%s): cron \"%s\" has no slot; it stays, firing nothing",
               r->id, r->name, r->cron);
        slot_passes(e, r, INT64_MAX, now_ms, "skipped", "no slot within 8 years: fires nothing");
        return;
    }
    const int64_t next = next_or_never(r, now_ms);
    char detail[256];
    if (r->last_run && r->last_state == SM_RUN_RUNNING) {
        snprintf(detail, sizeof detail, "slot skipped: run %" PRIu64 " is still running",
                 r->last_run);
        sm_log(LOG_NOTICE, "SM-SCHEDULE-SKIP", "schedule %" PRIu64 " (%s): %s", r->id, r->name,
               detail);
        slot_passes(e, r, next, now_ms, "skipped", detail);
        return;
    }
    char *spec_json = NULL;
    sm_spec spec;
    sm_error err = {0};
    if (sm_schedule_spec(r->spec_json, r->hosts_json, &spec_json, &err) != 0 ||
        sm_spec_decode(spec_json, strlen(spec_json), &spec, &err) != 0) {
        snprintf(detail, sizeof detail, "no run started: %.220s", err.msg);
        sm_log(LOG_WARNING, "SM-SCHEDULE-NOT-STARTED", "schedule %" PRIu64 " (%s): %s", r->id,
               r->name, detail);
        slot_passes(e, r, next, now_ms, "not-started", detail);
        free(spec_json);
        return;
    }
    uint64_t run_id = 0;
    bool started = false;
    int rc = sm_store_begin(e->st, &err);
    if (rc == 0 &&
        (rc = sm_control_run_start(*e->ctl, spec_json, &spec, now_ms, &run_id, &err)) == 0)
        started = true;
    if (rc == 0 && (rc = sm_store_run_set_schedule(e->st, run_id, r->id, &err)) == 0 &&
        (rc = sm_store_schedule_set_next(e->st, r->id, next, &err)) == 0)
        rc = sm_store_commit(e->st, &err);
    sm_spec_fini(&spec);
    free(spec_json);
    if (rc == 0) {
        sm_log(LOG_NOTICE, "SM-SCHEDULE-FIRE", "schedule %" PRIu64 " (%s): run %" PRIu64, r->id,
               r->name, run_id);
        if (e->jobs_queued)
            e->jobs_queued(e->arg, NULL, 0);
        return;
    }
    if (!started && err.code == SM_EINVAL) {
        /* Refused before the control state changed: the slot passes with the reason. */
        sm_store_rollback(e->st);
        snprintf(detail, sizeof detail, "no run started: %.220s", err.msg);
        sm_log(LOG_WARNING, "SM-SCHEDULE-NOT-STARTED", "schedule %" PRIu64 " (%s): %s", r->id,
               r->name, detail);
        slot_passes(e, r, next, now_ms, "not-started", detail);
        return;
    }
    /* The store failed: the slot stays due and the next tick tries again. */
    sm_log(LOG_ERR, "SM-SCHEDULE-FAIL", "schedule %" PRIu64 " (%s): %s", r->id, r->name, err.msg);
    sm_control_rollback(e->ctl, now_ms, NULL);
}

/* Run run_id's anomalies (JSON, or NULL when they cannot be had) into *json against baseline
 * when not 0, falling back to the default baseline when that one shares no cell. 1 when done;
 * 0 while e->anomalies builds them off the loop. */
static int anomalies_of(const sm_schedules_env *e, uint64_t run_id, uint64_t baseline, char **json)
{
    *json = NULL;
    if (e->anomalies) {
        int status = 0;
        const int rc = e->anomalies(e->anomalies_ctx, run_id, baseline, &status, json);
        if (rc == 1 && status == SM_REPORT_NOTHING_SHARED && baseline)
            return anomalies_of(e, run_id, 0, json);
        return rc;
    }
    char options[48];
    snprintf(options, sizeof options, "baseline=%" PRIu64, baseline);
    sm_run_report rep;
    sm_reports_get(e->reports, run_id, SM_REPORT_ANOMALIES, baseline ? options : NULL, &rep);
    if (rep.status == SM_REPORT_NOTHING_SHARED) {
        sm_run_report_fini(&rep);
        sm_reports_get(e->reports, run_id, SM_REPORT_ANOMALIES, NULL, &rep);
    }
    if (rep.status == SM_REPORT_OK) {
        *json = rep.body;
        return 1;
    }
    sm_run_report_fini(&rep);
    return 1;
}

/* The schedule's newest finished (done or failed) run before run_id; 0 none. */
static uint64_t previous_finished(const sm_schedules_env *e, uint64_t sched, uint64_t run_id)
{
    sm_run_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    uint64_t found = 0;
    if (sm_store_schedule_runs(e->st, sched, 1000, &rows, &n, &err) != 0)
        return 0;
    for (size_t i = 0; i < n && !found; i++)
        if (rows[i].id < run_id && (rows[i].state == SM_RUN_DONE || rows[i].state == SM_RUN_FAILED))
            found = rows[i].id;
    sm_store_runs_free(rows, n);
    return found;
}

/* Posts body (event) to schedule s's webhook about run (or experiment) run_id, and records it
 * among the schedule's events. */
static void tell(const sm_schedules_env *e, const sm_schedule_row *s, uint64_t run_id,
                 const char *event, const char *body, int64_t now_ms)
{
    if (!e->notify) {
        sm_log(LOG_NOTICE, "SM-SCHEDULE-NOTIFY-NONE",
               "schedule %" PRIu64 ": run %" PRIu64 " raised a %s, but this coordinator "
               "sends no webhooks",
               s->id, run_id, event);
        return;
    }
    const sm_webhook_dest to = {s->webhook_url, s->id, s->webhook_generation};
    const uint64_t id = e->notify(e->notify_ctx, &to, event, body);
    char detail[256], subject[40];
    sm_error err = {0};
    snprintf(subject, sizeof subject, "schedule %" PRIu64, s->id);
    snprintf(detail, sizeof detail, "run %" PRIu64 ": %s sent as delivery %" PRIu64, run_id, event,
             id);
    sm_log(LOG_NOTICE, "SM-SCHEDULE-NOTIFY", "schedule %" PRIu64 ": %s", s->id, detail);
    sm_store_event_insert(e->st, now_ms, "notified", subject, detail, &err);
}

/* Judges ended run run_id of schedule sched for its webhook, then marks it judged; or, while
 * its anomalies are built off the loop, leaves it for a later tick. */
static void judge(const sm_schedules_env *e, uint64_t sched, uint64_t run_id, int64_t now_ms)
{
    sm_schedule_row s;
    sm_run_row run;
    sm_error err = {0};
    if (sm_store_schedule_get(e->st, sched, &s, &err) != 0)
        return;
    if (sm_store_run_get(e->st, run_id, &run, &err) == 0) {
        /* A cancelled run was stopped by someone: nothing to tell them. */
        if (run.state != SM_RUN_CANCELLED) {
            const uint64_t prev = previous_finished(e, sched, run_id);
            char *now_json = NULL, *prev_json = NULL;
            /* Both asked at once, so that they are built side by side. */
            const int got_now = anomalies_of(e, run_id, prev, &now_json);
            const int got_prev = prev ? anomalies_of(e, prev, 0, &prev_json) : 1;
            if (!got_now || !got_prev) {
                free(now_json);
                free(prev_json);
                sm_run_row_fini(&run);
                sm_schedule_row_fini(&s);
                return;
            }
            const sm_hook_run hr = {sched, s.name, run_id, run.name, run.finished_ms};
            const char *event = NULL;
            char *body = NULL;
            if (!now_json)
                sm_log(LOG_WARNING, "SM-SCHEDULE-JUDGE", "run %" PRIu64 ": no anomalies to judge",
                       run_id);
            else if (sm_schedule_hook_body(&hr, now_json, prev_json, &event, &body, &err) != 0)
                sm_log(LOG_WARNING, "SM-SCHEDULE-JUDGE", "run %" PRIu64 ": %s", run_id, err.msg);
            if (body)
                tell(e, &s, run_id, event, body, now_ms);
            free(body);
            free(now_json);
            free(prev_json);
        }
        sm_run_row_fini(&run);
    }
    if (sm_store_schedule_set_notified(e->st, sched, run_id, &err) != 0)
        sm_log(LOG_ERR, "SM-SCHEDULE-FAIL", "schedule %" PRIu64 ": %s", sched, err.msg);
    sm_schedule_row_fini(&s);
}

/* Tells schedule sched's webhook that experiment xp_run, which explains one of its runs,
 * ended: what it proved (a cancelled one is not told). Marks it told either way, unless the
 * store fails. */
static void tell_experiment(const sm_schedules_env *e, uint64_t sched, uint64_t xp_run,
                            int64_t now_ms)
{
    sm_schedule_row s;
    sm_experiment_row x;
    sm_run_row xr, parent;
    sm_error err = {0};
    if (sm_store_schedule_get(e->st, sched, &s, &err) != 0) {
        /* A deleted schedule has no one to tell; a failing store is tried again. */
        if (err.code == SM_EINVAL && sm_store_experiment_set_notified(e->st, xp_run, &err) != 0)
            sm_log(LOG_ERR, "SM-SCHEDULE-FAIL", "experiment %" PRIu64 ": %s", xp_run, err.msg);
        return;
    }
    if (sm_store_experiment_get(e->st, xp_run, &x, &err) == 0) {
        if (sm_store_run_get(e->st, xp_run, &xr, &err) == 0) {
            if (s.webhook_url[0] && xr.state != SM_RUN_CANCELLED &&
                sm_store_run_get(e->st, x.parent_run, &parent, &err) == 0) {
                sm_run_report rep;
                sm_reports_experiment(e->reports, xp_run, &rep);
                const sm_hook_run hr = {sched, s.name, parent.id, parent.name, parent.finished_ms};
                const char *event = NULL;
                char *body = NULL;
                if (rep.status != SM_REPORT_OK)
                    sm_log(LOG_WARNING, "SM-SCHEDULE-JUDGE", "experiment %" PRIu64 ": %s", xp_run,
                           rep.err.msg);
                else if (sm_schedule_cause_body(&hr, rep.body, &event, &body, &err) != 0)
                    sm_log(LOG_WARNING, "SM-SCHEDULE-JUDGE", "experiment %" PRIu64 ": %s", xp_run,
                           err.msg);
                if (body)
                    tell(e, &s, xp_run, event, body, now_ms);
                free(body);
                sm_run_report_fini(&rep);
                sm_run_row_fini(&parent);
            }
            sm_run_row_fini(&xr);
        }
        sm_experiment_row_fini(&x);
    }
    if (sm_store_experiment_set_notified(e->st, xp_run, &err) != 0)
        sm_log(LOG_ERR, "SM-SCHEDULE-FAIL", "experiment %" PRIu64 ": %s", xp_run, err.msg);
    sm_schedule_row_fini(&s);
}

void sm_schedules_tick(const sm_schedules_env *e, int64_t now_ms)
{
    sm_schedule_row *due = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (sm_store_schedules_due(e->st, now_ms, &due, &n, &err) != 0) {
        sm_log(LOG_ERR, "SM-SCHEDULE-FAIL", "due schedules: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++)
        fire(e, &due[i], now_ms);
    sm_store_schedules_free(due, n);
    uint64_t pairs[16][2];
    if (sm_store_schedules_to_notify(e->st, pairs, 16, &n, &err) != 0) {
        sm_log(LOG_ERR, "SM-SCHEDULE-FAIL", "runs to judge: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++)
        judge(e, pairs[i][0], pairs[i][1], now_ms);
    if (sm_store_experiments_to_notify(e->st, pairs, 16, &n, &err) != 0) {
        sm_log(LOG_ERR, "SM-SCHEDULE-FAIL", "experiments to tell: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++)
        tell_experiment(e, pairs[i][0], pairs[i][1], now_ms);
}
