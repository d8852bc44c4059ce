/* Recurring runs on the coordinator's loop: each tick fires the schedules that are due, and
 * judges each ended run of a schedule with a webhook for flags and regressions that are new
 * (docs/schedules.md). Single-threaded: the loop's thread, as the store and the control. */
#ifndef SM_COORD_SCHEDULES_H
#define SM_COORD_SCHEDULES_H

#include <stdint.h>

#include "coordinator/api/api.h"
#include "coordinator/store/store.h"

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
 * the schedule's previous finished run) and a->notify told when it has new flags or
 * regressions. Failures are logged; the tick goes on. */
void sm_schedules_tick(sm_api_ctx *a, int64_t now_ms);

#endif
