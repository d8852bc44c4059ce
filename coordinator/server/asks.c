/* The loop's own questions to the report worker: a scheduled run's anomalies for its judgement
 * (schedules.h's anomalies), asked at one tick and taken at a later one, so that the judgement
 * never builds a report on the loop. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/server/internal.h"
#include "proto/clock.h"

/* An answer not taken this long after it came is dropped (its judgement went away). */
#define ASK_KEEP_MS 60000

/* Drops the answers nobody came back for. */
static void expire(server *s, int64_t now)
{
    for (size_t i = 0; i < SM_ASKS_MAX; i++) {
        sm_ask *a = &s->asks[i];
        if (a->run && a->ready && now - a->ready_ms > ASK_KEEP_MS) {
            free(a->json);
            memset(a, 0, sizeof *a);
        }
    }
}

/* Queues the question in a free slot; false when there is none or the worker's queue is full
 * (asked again at the next tick). */
static bool ask(server *s, uint64_t run, uint64_t baseline)
{
    sm_ask *a = NULL;
    for (size_t i = 0; i < SM_ASKS_MAX && !a; i++)
        if (!s->asks[i].run)
            a = &s->asks[i];
    if (!a)
        return false;
    char path[64], query[40];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/anomalies", run);
    snprintf(query, sizeof query, "baseline=%" PRIu64, baseline);
    char *resp = NULL;
    size_t len = 0;
    uint64_t ticket = 0;
    sm_report_cache_settle(s->api.reports.cache);
    if (sm_api_worker_submit(s->worker, path, baseline ? query : NULL, &ticket, &resp, &len) != 0) {
        free(resp);
        return false;
    }
    *a = (sm_ask){.run = run, .baseline = baseline, .ticket = ticket};
    return true;
}

int sm_server_ask_anomalies(void *ctx, uint64_t run, uint64_t baseline, int *status, char **json)
{
    server *s = ctx;
    *json = NULL;
    if (!s->worker) { /* stopped: the coordinator is closing */
        *status = 503;
        return 1;
    }
    expire(s, sm_mono_ms());
    for (size_t i = 0; i < SM_ASKS_MAX; i++) {
        sm_ask *a = &s->asks[i];
        if (a->run != run || a->baseline != baseline)
            continue;
        if (!a->ready)
            return 0;
        /* A copy: the judgement may need it again at a later tick, while the other it asked
         * for at the same time is still being built. */
        *status = a->status;
        if (a->status == 200 && a->json && !(*json = strdup(a->json)))
            *status = 500;
        return 1;
    }
    ask(s, run, baseline);
    return 0;
}

bool sm_server_ask_answer(server *s, sm_api_answer *ans)
{
    for (size_t i = 0; i < SM_ASKS_MAX; i++) {
        sm_ask *a = &s->asks[i];
        if (!a->run || a->ready || a->ticket != ans->ticket)
            continue;
        a->ready = true;
        a->ready_ms = sm_mono_ms();
        a->status = ans->status;
        a->json = ans->resp; /* handed over */
        ans->resp = NULL;
        return true;
    }
    return false;
}

void sm_server_asks_free(server *s)
{
    for (size_t i = 0; i < SM_ASKS_MAX; i++) {
        free(s->asks[i].json);
        memset(&s->asks[i], 0, sizeof s->asks[i]);
    }
}
