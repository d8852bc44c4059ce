/* Recurring runs on the coordinator's loop: each tick fires the schedules that are due, and
 * judges each ended run of a schedule with a webhook for flags and regressions that are new
 * (docs/schedules.md). Single-threaded: the loop's thread, as the store and the control. */
#ifndef SM_COORD_SCHEDULES_H
#define SM_COORD_SCHEDULES_H

#include <stddef.h>
#include <stdint.h>

#include "coordinator/control/control.h"
#include "coordinator/recurring/webhook.h"
#include "coordinator/reports/reports.h"
#include "coordinator/store/store.h"

/* What the schedules work with: the loop's store, control core and reports, and whom to tell. */
typedef struct sm_schedules_env {
    sm_store *st;
    sm_control **ctl; /* the loop's control core; a rollback may replace *ctl */
    sm_reports *reports;
    /* Called after a firing queued jobs, so that held polls are answered now; may be NULL. */
    void (*jobs_queued)(void *arg, const char *const *hosts, size_t n);
    void *arg;
    /* Posts a webhook delivery and returns its id (0: refused), as sm_webhook_post does with
     * notify_ctx its sm_webhook; NULL: no webhook is sent (and that is logged). */
    uint64_t (*notify)(void *ctx, const sm_webhook_dest *to, const char *event, const char *body);
    void *notify_ctx;
    /* Run run_id's anomalies (JSON) against baseline (0: the default one), built off the loop:
     * 1 once they are there, *status the HTTP status of GET /api/runs/{id}/anomalies and *json
     * its body on 200 (malloc'd; NULL otherwise); 0 while they are being built: the judgement
     * waits for a later tick, nothing marked. NULL: reports builds them here, at once. */
    int (*anomalies)(void *ctx, uint64_t run_id, uint64_t baseline, int *status, char **json);
    void *anomalies_ctx;
} sm_schedules_env;

/* When a schedule first fires, or fires again after it is resumed: every_s after now_ms, or
 * cron's first minute after now_ms. -1 when the cron expression never fires (or is bad). */
int64_t sm_schedule_first(uint32_t every_s, const char *cron, int64_t now_ms);

/* When schedule r fires after its slot next_ms, seen at now_ms: the interval keeps its phase
 * (next_ms + k * every, the first such after now_ms), so slots missed while the coordinator
 * was down fire once, not once each; cron's first minute after now_ms. -1: never again. */
int64_t sm_schedule_next(const sm_schedule_row *r, int64_t now_ms);

/* One tick: every schedule due at now_ms (wall ms) starts a run as POST /api/runs does, the
 * schedule's hosts put in its spec, linked to it and its next firing set in one transaction;
 * when its previous run is still running the slot is skipped instead and an event says so. A
 * run that cannot start (its hosts are not registered, say) is an event too, and the slot
 * passes. Then each ended run of a schedule with a webhook, not judged yet, is judged (against
 * the schedule's previous finished run) and e->notify told when it has new flags or
 * regressions; with e->anomalies, a run whose anomalies are not built yet is judged at a later
 * tick (it is marked judged only once it was). Last, each ended experiment that explains a
 * run of a schedule with a webhook, not told yet, is told (sm_schedule_cause_body) once.
 * Failures are logged; the tick goes on. */
void sm_schedules_tick(const sm_schedules_env *e, int64_t now_ms);

#endif
