/* HTTP routes of recurring runs: /api/schedules (list, create), /api/schedules/{id} (one with
 * its last runs and events, delete), /api/schedules/{id}/pause and /resume, and
 * /api/schedules/{id}/webhook-secret (a new secret). */
#include "coordinator/api/api.h"
#include "coordinator/api/internal.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/recurring/schedules.h"
#include "coordinator/recurring/secret.h"
#include "coordinator/schema/schedule_json.h"
#include "coordinator/schema/webhook_url.h"
#include "proto/clock.h"
#include "proto/json.h"
#include "proto/log.h"

_Static_assert(SM_SCHED_URL_MAX == SM_WEBHOOK_URL_MAX, "a stored webhook URL is one a user gave");
_Static_assert(SM_SCHED_CRON_MAX == SM_CRON_MAX, "a stored cron expression is one a user gave");

#define SCHEDULE_RUNS_SHOWN   20
#define SCHEDULE_EVENTS_SHOWN 20
#define WEBHOOK_STATUS_MAX    400 /* bytes of a webhook status text */

/* Embeds JSON text as a value (null when it does not parse). */
static bool put_raw(cJSON *o, const char *key, const char *json)
{
    cJSON *v = json && *json ? cJSON_Parse(json) : NULL;
    return sm_json_put(o, key, v ? v : cJSON_CreateNull());
}

/* A URL may carry the receiver's own secret ("?key=..."): a caller that cannot operate
 * learns only that there is one. */
#define WEBHOOK_HIDDEN "(hidden)"

static cJSON *schedule_json(const sm_schedule_row *r, bool show_webhook)
{
    cJSON *o = cJSON_CreateObject();
    bool ok =
        o && sm_json_put_u64_str(o, "id", r->id) && sm_json_put_str(o, "name", r->name) &&
        put_raw(o, "spec", r->spec_json) &&
        (r->every_s ? sm_json_put_u64(o, "every_s", r->every_s)
                    : cJSON_AddNullToObject(o, "every_s") != NULL) &&
        (r->cron[0] ? sm_json_put_str(o, "cron", r->cron)
                    : cJSON_AddNullToObject(o, "cron") != NULL) &&
        put_raw(o, "hosts", r->hosts_json) &&
        (r->webhook_url[0]
             ? sm_json_put_str(o, "webhook", show_webhook ? r->webhook_url : WEBHOOK_HIDDEN)
             : cJSON_AddNullToObject(o, "webhook") != NULL) &&
        sm_json_put_bool(o, "paused", r->paused) &&
        cJSON_AddNumberToObject(o, "created_ms", (double)r->created_ms) &&
        /* A schedule whose cron fires no more is parked at the end of time. */
        (r->next_ms != INT64_MAX ? cJSON_AddNumberToObject(o, "next_ms", (double)r->next_ms) != NULL
                                 : cJSON_AddNullToObject(o, "next_ms") != NULL) &&
        sm_json_put_u64(o, "runs", r->n_runs);
    cJSON *last = ok ? cJSON_AddObjectToObject(o, "last_run") : NULL;
    if (ok && r->last_run)
        ok = last && sm_json_put_u64_str(last, "id", r->last_run) &&
             sm_json_put_str(last, "state", sm_run_state_name(r->last_state));
    else if (ok) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "last_run");
        ok = cJSON_AddNullToObject(o, "last_run") != NULL;
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int reply_json(char **resp, size_t *len, int status, cJSON *o)
{
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return sm_api_reply(resp, len, status, text);
}

int sm_api_schedules_list(sm_api_ctx *a, bool show_webhook, char **resp, size_t *len)
{
    sm_schedule_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (sm_store_schedules_list(a->st, &rows, &n, &err) != 0)
        return sm_api_reply_error(resp, len, 500, err.msg, NULL);
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = root ? cJSON_AddArrayToObject(root, "schedules") : NULL;
    bool ok = arr != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = sm_json_append(arr, schedule_json(&rows[i], show_webhook));
    sm_store_schedules_free(rows, n);
    if (!ok) {
        cJSON_Delete(root);
        root = NULL;
    }
    return reply_json(resp, len, 200, root);
}

/* "webhook_status": {"text","at_ms"} of the schedule's last ended delivery since the
 * coordinator started, or null (none known, no webhook: id 0). Deliveries end on their own
 * threads, so the status is read from them, not from the store. */
static bool put_webhook_status(sm_api_ctx *a, cJSON *o, uint64_t id)
{
    char text[WEBHOOK_STATUS_MAX];
    int64_t at_ms = 0;
    if (!id || !a->webhook_status ||
        !a->webhook_status(a->webhook_ctx, id, text, sizeof text, &at_ms))
        return cJSON_AddNullToObject(o, "webhook_status") != NULL;
    cJSON *st = cJSON_AddObjectToObject(o, "webhook_status");
    return st && sm_json_put_str(st, "text", text) &&
           cJSON_AddNumberToObject(st, "at_ms", (double)at_ms) != NULL;
}

/* One schedule with its last runs (as GET /api/runs lists them) and its last events. */
int sm_api_schedule_get(sm_api_ctx *a, uint64_t id, bool show_webhook, char **resp, size_t *len)
{
    sm_schedule_row r;
    sm_error err = {0};
    if (sm_store_schedule_get(a->st, id, &r, &err) != 0)
        return sm_api_reply_error(resp, len, 404, "no such schedule", "id");
    sm_run_row *runs = NULL;
    sm_event_row *events = NULL;
    size_t nr = 0, ne = 0;
    char subject[40];
    snprintf(subject, sizeof subject, "schedule %" PRIu64, id);
    if (sm_store_schedule_runs(a->st, id, SCHEDULE_RUNS_SHOWN, &runs, &nr, &err) != 0 ||
        sm_store_events_of(a->st, subject, SCHEDULE_EVENTS_SHOWN, &events, &ne, &err) != 0) {
        sm_store_runs_free(runs, nr);
        sm_schedule_row_fini(&r);
        return sm_api_reply_error(resp, len, 500, err.msg, NULL);
    }
    cJSON *o = schedule_json(&r, show_webhook);
    cJSON *arr = o ? cJSON_AddArrayToObject(o, "recent_runs") : NULL;
    bool ok = arr != NULL && put_webhook_status(a, o, r.webhook_url[0] ? id : 0);
    for (size_t i = 0; ok && i < nr; i++) {
        char *item = sm_api_run_item(&runs[i]);
        cJSON *v = item ? cJSON_Parse(item) : NULL;
        free(item);
        ok = sm_json_append(arr, v);
    }
    cJSON *ev = ok ? cJSON_AddArrayToObject(o, "events") : NULL;
    ok = ev != NULL;
    for (size_t i = 0; ok && i < ne; i++) {
        cJSON *e = cJSON_CreateObject();
        ok = sm_json_append(ev, e) &&
             cJSON_AddNumberToObject(e, "ts_ms", (double)events[i].ts_ms) &&
             sm_json_put_str(e, "kind", events[i].kind) &&
             sm_json_put_str(e, "detail", events[i].detail);
    }
    if (!ok) {
        cJSON_Delete(o);
        o = NULL;
    }
    free(events);
    sm_store_runs_free(runs, nr);
    sm_schedule_row_fini(&r);
    return reply_json(resp, len, 200, o);
}

/* Whether the webhook of a new schedule can be sent: its address (when a literal) within the
 * policy, and a key to make its secret. 0, or the 400 answered. */
static int webhook_refused(sm_api_ctx *a, const char *url, char **resp, size_t *len)
{
    sm_addr_policy def;
    const sm_addr_policy *policy = a->webhook_allow;
    if (!policy) {
        sm_webhook_policy_init(&def);
        policy = &def;
    }
    sm_error err = {0};
    if (sm_webhook_url_allowed(url, policy, &err) != 0)
        return sm_api_reply_error(resp, len, 400, err.msg, "webhook");
    if (!a->webhook_key)
        return sm_api_reply_error(resp, len, 400,
                                  "webhook: this coordinator has no key to make a webhook "
                                  "secret with",
                                  "webhook");
    return 0;
}

/* The "ping" a new webhook gets, so that its receiver can check its secret at once. */
static void ping(sm_api_ctx *a, uint64_t id, const char *name, const char *url)
{
    if (!a->webhook_post)
        return;
    cJSON *o = cJSON_CreateObject();
    cJSON *s = o ? cJSON_AddObjectToObject(o, "schedule") : NULL;
    char *text = NULL;
    if (s && sm_json_put_str(o, "event", "ping") && sm_json_put_u64_str(s, "id", id) &&
        sm_json_put_str(s, "name", name))
        text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    sm_schedule_row r;
    sm_error err = {0};
    uint32_t generation = 1;
    if (sm_store_schedule_get(a->st, id, &r, &err) == 0) {
        generation = r.webhook_generation;
        sm_schedule_row_fini(&r);
    }
    const sm_webhook_dest to = {url, id, generation};
    if (text)
        a->webhook_post(a->webhook_ctx, &to, "ping", text);
    free(text);
}

/* {"id": ID, "webhook_secret": SECRET} of schedule id at generation into o; false when the
 * secret could not be made. */
static bool put_secret(sm_api_ctx *a, cJSON *o, uint64_t id, uint32_t generation)
{
    char secret[SM_WEBHOOK_SECRET_SIZE];
    sm_error err = {0};
    if (sm_webhook_secret(a->webhook_key, id, generation, secret, &err) != 0)
        return false;
    const bool ok = sm_json_put_str(o, "webhook_secret", secret);
    OPENSSL_cleanse(secret, sizeof secret);
    return ok;
}

int sm_api_schedule_create(sm_api_ctx *a, const char *body, size_t blen, char **resp, size_t *len)
{
    sm_schedule_req req;
    sm_error err = {0};
    if (sm_schedule_req_parse(body, blen, &req, &err) != 0)
        return sm_api_reply_error(resp, len, err.code == SM_ENOMEM ? 500 : 400, err.msg, err.field);
    int refused = req.webhook[0] ? webhook_refused(a, req.webhook, resp, len) : 0;
    if (refused) {
        sm_schedule_req_fini(&req);
        return refused;
    }
    const int64_t now = sm_wall_ms();
    sm_schedule_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", req.name);
    r.spec_json = req.spec_json;
    r.every_s = req.every_s;
    snprintf(r.cron, sizeof r.cron, "%s", req.cron);
    r.hosts_json = req.hosts_json;
    snprintf(r.webhook_url, sizeof r.webhook_url, "%s", req.webhook);
    r.next_ms = sm_schedule_first(req.every_s, req.cron, now);
    uint64_t id = 0;
    int status = 0;
    /* The expression parsed, but its first minute from now lies beyond cron's 8-year search:
     * stored, it would have no slot to wait for. */
    if (r.next_ms < 0)
        status = sm_api_reply_error(resp, len, 400,
                                    "cron: never fires within 8 years from now (UTC)", "cron");
    else if (sm_store_schedule_insert(a->st, &r, now, &id, &err) != 0)
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
    sm_schedule_req_fini(&req);
    if (status)
        return status;
    if (r.every_s)
        sm_log(LOG_NOTICE, "SM-SCHEDULE-NEW", "schedule %" PRIu64 " (%s): every %u s", id, r.name,
               (unsigned)r.every_s);
    else
        sm_log(LOG_NOTICE, "SM-SCHEDULE-NEW", "schedule %" PRIu64 " (%s): cron \"%s\"", id, r.name,
               r.cron);
    cJSON *o = cJSON_CreateObject();
    if (o && !(sm_json_put_u64_str(o, "id", id) &&
               cJSON_AddNumberToObject(o, "next_ms", (double)r.next_ms) &&
               (!r.webhook_url[0] || put_secret(a, o, id, 1)))) {
        cJSON_Delete(o);
        o = NULL;
    }
    if (r.webhook_url[0])
        ping(a, id, r.name, r.webhook_url);
    return reply_json(resp, len, 201, o);
}

int sm_api_schedule_rotate_secret(sm_api_ctx *a, uint64_t id, char **resp, size_t *len)
{
    sm_schedule_row r;
    sm_error err = {0};
    if (sm_store_schedule_get(a->st, id, &r, &err) != 0)
        return sm_api_reply_error(resp, len, 404, "no such schedule", "id");
    const bool hooked = r.webhook_url[0] != '\0';
    sm_schedule_row_fini(&r);
    if (!hooked)
        return sm_api_reply_error(resp, len, 400,
                                  "webhook: this schedule has no webhook, so no secret to rotate",
                                  "webhook");
    if (!a->webhook_key)
        return sm_api_reply_error(resp, len, 400,
                                  "webhook: this coordinator has no key to make a webhook "
                                  "secret with",
                                  "webhook");
    if (sm_store_schedule_rotate_webhook(a->st, id, &err) != 0 ||
        sm_store_schedule_get(a->st, id, &r, &err) != 0)
        return sm_api_reply_error(resp, len, 500, err.msg, NULL);
    const uint32_t generation = r.webhook_generation;
    sm_schedule_row_fini(&r);
    sm_log(LOG_NOTICE, "SM-SCHEDULE-SECRET",
           "schedule %" PRIu64 ": a new webhook secret (generation %u); the old one signs no more",
           id, (unsigned)generation);
    cJSON *o = cJSON_CreateObject();
    if (o && !(sm_json_put_u64_str(o, "id", id) && put_secret(a, o, id, generation))) {
        cJSON_Delete(o);
        o = NULL;
    }
    return reply_json(resp, len, 200, o);
}

int sm_api_schedule_pause(sm_api_ctx *a, uint64_t id, bool pause, char **resp, size_t *len)
{
    sm_schedule_row r;
    sm_error err = {0};
    if (sm_store_schedule_get(a->st, id, &r, &err) != 0)
        return sm_api_reply_error(resp, len, 404, "no such schedule", "id");
    /* A resumed schedule fires at its next slot from now, not at the slots it was paused
     * through. */
    int64_t next = 0;
    if (!pause && r.paused) {
        next = sm_schedule_first(r.every_s, r.cron, sm_wall_ms());
        if (next < 0)
            next = INT64_MAX;
    }
    sm_schedule_row_fini(&r);
    if (sm_store_schedule_set_paused(a->st, id, pause, next, &err) != 0)
        return sm_api_reply_error(resp, len, 500, err.msg, NULL);
    sm_log(LOG_NOTICE, pause ? "SM-SCHEDULE-PAUSE" : "SM-SCHEDULE-RESUME",
           "schedule %" PRIu64 " %s", id, pause ? "paused" : "resumed");
    return sm_api_schedule_get(a, id, true, resp, len);
}

int sm_api_schedule_delete(sm_api_ctx *a, uint64_t id, char **resp, size_t *len)
{
    sm_error err = {0};
    if (sm_store_schedule_delete(a->st, id, &err) != 0)
        return err.code == SM_EINVAL ? sm_api_reply_error(resp, len, 404, "no such schedule", "id")
                                     : sm_api_reply_error(resp, len, 500, err.msg, NULL);
    sm_log(LOG_NOTICE, "SM-SCHEDULE-DELETE", "schedule %" PRIu64 " deleted", id);
    cJSON *o = cJSON_CreateObject();
    if (o && !(sm_json_put_u64_str(o, "id", id) && sm_json_put_bool(o, "deleted", true))) {
        cJSON_Delete(o);
        o = NULL;
    }
    return reply_json(resp, len, 200, o);
}
