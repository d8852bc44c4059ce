/* JSON of the coordinator's HTTP API. */
#include "proto/api.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"

static char *finish(cJSON *root)
{
    char *text = root ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return text;
}

static void add_u64_str(cJSON *o, const char *k, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    cJSON_AddStringToObject(o, k, buf);
}

/* Embeds a stored JSON text as a value; a text that does not parse becomes null (the store
 * only holds what proto encoded, so this is a guard, not a path). */
static void add_raw(cJSON *o, const char *k, const char *json)
{
    cJSON *v = json ? cJSON_Parse(json) : NULL;
    cJSON_AddItemToObject(o, k, v ? v : cJSON_CreateNull());
}

char *sm_api_error(const char *msg, const char *field)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "error", msg);
    if (field && *field)
        cJSON_AddStringToObject(o, "field", field);
    return finish(o);
}

char *sm_api_agents(const sm_api_agent *a, size_t n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = root ? cJSON_AddArrayToObject(root, "agents") : NULL;
    if (!arr) {
        cJSON_Delete(root);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "name", a[i].name);
        cJSON_AddStringToObject(o, "status", a[i].status);
        cJSON_AddStringToObject(o, "boot", a[i].boot);
        cJSON_AddStringToObject(o, "data_addr", a[i].data_addr);
        add_raw(o, "labels", a[i].labels_json);
        add_raw(o, "facts", a[i].facts_json);
        cJSON_AddNumberToObject(o, "first_seen_ms", (double)a[i].first_seen_ms);
        cJSON_AddNumberToObject(o, "last_seen_ms", (double)a[i].last_seen_ms);
        cJSON_AddItemToArray(arr, o);
    }
    return finish(root);
}

char *sm_api_job_encode(const sm_api_job *j)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    add_u64_str(o, "id", j->id);
    cJSON_AddStringToObject(o, "host", j->host);
    cJSON_AddStringToObject(o, "state", j->state);
    cJSON_AddStringToObject(o, "reason", j->reason ? j->reason : "");
    cJSON_AddNumberToObject(o, "attempt", j->attempt);
    add_raw(o, "params", j->params_json);
    add_raw(o, "result", j->result_json);
    cJSON_AddNumberToObject(o, "created_ms", (double)j->created_ms);
    cJSON_AddNumberToObject(o, "assigned_ms", (double)j->assigned_ms);
    cJSON_AddNumberToObject(o, "started_ms", (double)j->started_ms);
    cJSON_AddNumberToObject(o, "finished_ms", (double)j->finished_ms);
    return finish(o);
}

char *sm_api_job_ids(const uint64_t *ids, size_t n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = root ? cJSON_AddArrayToObject(root, "jobs") : NULL;
    if (!arr) {
        cJSON_Delete(root);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        char buf[24];
        snprintf(buf, sizeof buf, "%" PRIu64, ids[i]);
        cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
    }
    return finish(root);
}

int sm_api_jobs_parse(const char *body, size_t len, sm_api_job_req **reqs, size_t *n,
                      char *field_buf, size_t field_len, sm_error *err)
{
    *reqs = NULL;
    *n = 0;
    field_buf[0] = '\0';
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (!root)
        return sm_error_set(err, SM_EPARSE, "the body is not JSON");
    const cJSON *arr = root;
    if (cJSON_IsObject(root))
        arr = cJSON_GetObjectItemCaseSensitive(root, "jobs");
    int rc = 0;
    if (!cJSON_IsArray(arr)) {
        snprintf(field_buf, field_len, "jobs");
        rc = sm_error_set(err, SM_EPARSE,
                          "expected a list of jobs: [{\"host\":...,\"params\":...}]");
        goto out;
    }
    size_t count = (size_t)cJSON_GetArraySize(arr);
    if (count == 0 || count > SM_API_JOBS_MAX) {
        snprintf(field_buf, field_len, "jobs");
        rc = sm_error_set(err, SM_EINVAL, "jobs: %zu jobs; from 1 to %d at a time", count,
                          SM_API_JOBS_MAX);
        goto out;
    }
    sm_api_job_req *out = calloc(count, sizeof *out);
    if (!out) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        goto out;
    }
    size_t i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, arr)
    {
        const cJSON *host = cJSON_GetObjectItemCaseSensitive(item, "host");
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(item, "params");
        if (!cJSON_IsObject(item) || !cJSON_IsString(host) || !host->valuestring[0] ||
            strlen(host->valuestring) >= sizeof out[i].host) {
            snprintf(field_buf, field_len, "jobs[%zu].host", i);
            rc = sm_error_set(err, SM_EINVAL, "jobs[%zu].host: expected an agent name", i);
            break;
        }
        if (!cJSON_IsObject(params)) {
            snprintf(field_buf, field_len, "jobs[%zu].params", i);
            rc = sm_error_set(err, SM_EINVAL, "jobs[%zu].params: expected an object", i);
            break;
        }
        char *ptext = cJSON_PrintUnformatted(params);
        sm_error perr = {0};
        rc =
            ptext ? sm_codec_params_decode(ptext, strlen(ptext), &out[i].params, &perr) : SM_ENOMEM;
        free(ptext);
        if (rc) {
            snprintf(field_buf, field_len, "jobs[%zu].params", i);
            sm_error_set(err, rc, "jobs[%zu].%s", i, perr.msg);
            break;
        }
        snprintf(out[i].host, sizeof out[i].host, "%s", host->valuestring);
        i++;
    }
    if (rc) {
        free(out);
        goto out;
    }
    *reqs = out;
    *n = count;
out:
    cJSON_Delete(root);
    return rc;
}

char *sm_api_health(uint64_t agents, uint64_t online, uint64_t results, const char *const *names,
                    const uint64_t *values, size_t n, const char *const *rej_names,
                    const uint64_t *rej_values, size_t n_rej)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddBoolToObject(o, "ok", 1);
    cJSON_AddNumberToObject(o, "agents", (double)agents);
    cJSON_AddNumberToObject(o, "agents_online", (double)online);
    cJSON_AddNumberToObject(o, "results", (double)results);
    cJSON *cnt = cJSON_AddObjectToObject(o, "counters");
    for (size_t i = 0; cnt && i < n; i++)
        cJSON_AddNumberToObject(cnt, names[i], (double)values[i]);
    cJSON *rej = cJSON_AddObjectToObject(o, "rejected");
    uint64_t total = 0;
    for (size_t i = 0; rej && i < n_rej; i++) {
        cJSON_AddNumberToObject(rej, rej_names[i], (double)rej_values[i]);
        total += rej_values[i];
    }
    if (rej)
        cJSON_AddNumberToObject(rej, "total", (double)total);
    return finish(o);
}
