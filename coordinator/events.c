/* Live events for the dashboard: the API's JSON re-wrapped, and a browser's messages checked. */
#include "coordinator/events.h"

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

void sm_event_items_free(char **items, char **ids, long n)
{
    for (long i = 0; i < n; i++) {
        if (items)
            free(items[i]);
        if (ids)
            free(ids[i]);
    }
    free(items);
    free(ids);
}

long sm_event_split(const char *json, const char *key, char ***items, char ***ids)
{
    cJSON *root;
    cJSON *a = array_of(json, key, &root);
    *items = NULL;
    *ids = NULL;
    if (!a) {
        cJSON_Delete(root);
        return -1;
    }
    long n = cJSON_GetArraySize(a), k = 0;
    char **it = calloc((size_t)(n ? n : 1), sizeof *it);
    char **id = calloc((size_t)(n ? n : 1), sizeof *id);
    const cJSON *e;
    bool ok = it && id;
    cJSON_ArrayForEach(e, a)
    {
        if (!ok)
            break;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *num = cJSON_GetObjectItemCaseSensitive(e, "id");
        char buf[32];
        const char *ident = cJSON_IsString(num)    ? num->valuestring
                            : cJSON_IsString(name) ? name->valuestring
                                                   : NULL;
        if (!ident) {
            snprintf(buf, sizeof buf, "%ld", k);
            ident = buf;
        }
        it[k] = cJSON_PrintUnformatted(e);
        id[k] = strdup(ident);
        ok = it[k] && id[k];
        k++;
    }
    cJSON_Delete(root);
    if (!ok) {
        sm_event_items_free(it, id, k);
        return -1;
    }
    *items = it;
    *ids = id;
    return n;
}

int sm_event_field(const char *item_json, const char *key, char *out, size_t cap)
{
    cJSON *o = item_json ? cJSON_Parse(item_json) : NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    int rc = -1;
    if (cJSON_IsString(v) && cap > 0) {
        snprintf(out, cap, "%s", v->valuestring);
        rc = 0;
    }
    cJSON_Delete(o);
    return rc;
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
