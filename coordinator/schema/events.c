/* Live events for the dashboard: the encoders of its messages, and a browser's messages checked. */
#include "coordinator/schema/events.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/json.h"
#include "proto/err.h"

/* Takes the array `key` out of the parsed object text, or NULL. *root must be deleted. */
static cJSON *array_of(const char *json, const char *key, cJSON **root)
{
    *root = json ? cJSON_Parse(json) : NULL;
    cJSON *a = *root ? cJSON_GetObjectItemCaseSensitive(*root, key) : NULL;
    return cJSON_IsArray(a) ? a : NULL;
}

char *sm_event_snapshot(const char *agents_json, const char *runs_json)
{
    cJSON *ra, *rr;
    cJSON *agents = array_of(agents_json, "agents", &ra);
    cJSON *runs = array_of(runs_json, "runs", &rr);
    char *text = NULL;
    cJSON *o = agents && runs ? cJSON_CreateObject() : NULL;
    if (o && cJSON_AddStringToObject(o, "type", "snapshot")) {
        cJSON_DetachItemViaPointer(ra, agents);
        cJSON_DetachItemViaPointer(rr, runs);
        cJSON_AddItemToObject(o, "agents", agents);
        cJSON_AddItemToObject(o, "runs", runs);
        text = cJSON_PrintUnformatted(o);
    }
    cJSON_Delete(o);
    cJSON_Delete(ra);
    cJSON_Delete(rr);
    return text;
}

char *sm_event_wrap(const char *type, const char *field, const char *item_json, uint64_t run_id)
{
    cJSON *item = item_json ? cJSON_Parse(item_json) : NULL;
    cJSON *o = item ? cJSON_CreateObject() : NULL;
    char id[24];
    snprintf(id, sizeof id, "%" PRIu64, run_id);
    bool ok = o && cJSON_AddStringToObject(o, "type", type) &&
              (run_id == 0 || cJSON_AddStringToObject(o, "run", id));
    char *text = NULL;
    if (ok) {
        cJSON_AddItemToObject(o, field, item);
        item = NULL;
        text = cJSON_PrintUnformatted(o);
    }
    cJSON_Delete(item);
    cJSON_Delete(o);
    return text;
}

char **sm_event_anomalies(const char *anomalies_json, uint64_t run_id, size_t *n)
{
    cJSON *root;
    cJSON *a = array_of(anomalies_json, "anomalies", &root);
    const size_t count = a ? (size_t)cJSON_GetArraySize(a) : 0;
    char **msgs = a ? calloc(count ? count : 1, sizeof *msgs) : NULL;
    char id[24];
    snprintf(id, sizeof id, "%" PRIu64, run_id);
    size_t k = 0;
    bool ok = msgs != NULL;
    cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        cJSON *o = ok ? cJSON_CreateObject() : NULL;
        ok = o && cJSON_AddStringToObject(o, "type", "anomaly") &&
             cJSON_AddStringToObject(o, "run", id) &&
             cJSON_AddItemReferenceToObject(o, "anomaly", e);
        char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
        cJSON_Delete(o);
        if (!text)
            ok = false;
        if (!ok)
            break;
        msgs[k++] = text;
    }
    cJSON_Delete(root);
    if (!ok) {
        sm_event_anomalies_free(msgs, k);
        return NULL;
    }
    *n = k;
    return msgs;
}

void sm_event_anomalies_free(char **msgs, size_t n)
{
    for (size_t i = 0; msgs && i < n; i++)
        free(msgs[i]);
    free(msgs);
}

char *sm_event_job(uint64_t id, uint64_t run_id, const char *host, const char *peer,
                   const char *state, const char *reason, const char *metric, double value,
                   const char *unit, const char *disturbed)
{
    char ids[2][24];
    snprintf(ids[0], sizeof ids[0], "%" PRIu64, id);
    snprintf(ids[1], sizeof ids[1], "%" PRIu64, run_id);
    cJSON *o = cJSON_CreateObject(), *j = cJSON_CreateObject();
    bool ok = o && j && cJSON_AddStringToObject(o, "type", "job");
    if (ok) {
        cJSON_AddItemToObject(o, "job", j);
        j = NULL;
        cJSON *job = cJSON_GetObjectItemCaseSensitive(o, "job");
        ok = cJSON_AddStringToObject(job, "id", ids[0]) &&
             cJSON_AddStringToObject(job, "run", ids[1]) &&
             cJSON_AddStringToObject(job, "host", host ? host : "") &&
             cJSON_AddStringToObject(job, "peer", peer ? peer : "") &&
             cJSON_AddStringToObject(job, "state", state ? state : "") &&
             cJSON_AddStringToObject(job, "reason", reason ? reason : "");
        if (ok && metric && isfinite(value)) {
            cJSON *sum = cJSON_AddObjectToObject(job, "summary");
            ok = sum && cJSON_AddStringToObject(sum, "metric", metric) &&
                 cJSON_AddNumberToObject(sum, "value", value) &&
                 cJSON_AddStringToObject(sum, "unit", unit ? unit : "");
            if (ok && disturbed && disturbed[0])
                ok = cJSON_AddStringToObject(sum, "disturbed", disturbed) != NULL;
        }
    }
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(j);
    cJSON_Delete(o);
    return text;
}

int sm_event_client_check(const char *data, size_t len, sm_error *err)
{
    if (len > SM_EVENT_CLIENT_MAX)
        return sm_error_set(err, SM_EINVAL, "ws: a message of %zu bytes, above %d", len,
                            SM_EVENT_CLIENT_MAX);
    cJSON *o = cJSON_ParseWithLength(data, len);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return sm_error_set(err, SM_EPARSE, "ws: not a JSON object");
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
    int rc = cJSON_IsString(type) && strcmp(type->valuestring, "ping") == 0
                 ? 1
                 : sm_error_set(err, SM_EINVAL, "ws: unknown message type");
    cJSON_Delete(o);
    return rc;
}
