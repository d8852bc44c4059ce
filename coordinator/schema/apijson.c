/* JSON of the coordinator's HTTP API. */
#include "coordinator/schema/apijson.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/analysis/export.h"
#include "coordinator/model/spec.h"
#include "proto/codec.h"
#include "proto/json.h"

/* Compact text; NULL when out of memory (the routes answer 500 then). */
static char *finish(cJSON *root)
{
    return sm_json_finish(root, true, 0, "api", NULL);
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

static cJSON *agent_json(const sm_api_agent *a)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "name", a->name);
    cJSON_AddStringToObject(o, "status", a->status);
    cJSON_AddStringToObject(o, "boot", a->boot);
    cJSON_AddStringToObject(o, "data_addr", a->data_addr);
    add_raw(o, "labels", a->labels_json);
    add_raw(o, "facts", a->facts_json);
    cJSON_AddNumberToObject(o, "first_seen_ms", (double)a->first_seen_ms);
    cJSON_AddNumberToObject(o, "last_seen_ms", (double)a->last_seen_ms);
    cJSON_AddNumberToObject(o, "spool_quarantined", (double)a->spool_quarantined);
    return o;
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
        cJSON *o = agent_json(&a[i]);
        if (!o)
            break;
        cJSON_AddItemToArray(arr, o);
    }
    return finish(root);
}

char *sm_api_agent_encode(const sm_api_agent *a)
{
    return finish(agent_json(a));
}

char *sm_api_job_encode(const sm_api_job *j)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    sm_json_put_u64_str(o, "id", j->id);
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

int sm_api_jobs_parse(const char *body, size_t len, sm_api_job_req **reqs, size_t *n, sm_error *err)
{
    *reqs = NULL;
    *n = 0;
    sm_error_field(err, "%s", "");
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (!root)
        return sm_error_set(err, SM_EPARSE, "the body is not JSON");
    const cJSON *arr = root;
    if (cJSON_IsObject(root))
        arr = cJSON_GetObjectItemCaseSensitive(root, "jobs");
    int rc = 0;
    if (!cJSON_IsArray(arr)) {
        sm_error_field(err, "jobs");
        rc = sm_error_set(err, SM_EPARSE,
                          "expected a list of jobs: [{\"host\":...,\"params\":...}]");
        goto out;
    }
    size_t count = (size_t)cJSON_GetArraySize(arr);
    if (count == 0 || count > SM_API_JOBS_MAX) {
        sm_error_field(err, "jobs");
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
            sm_error_field(err, "jobs[%zu].host", i);
            rc = sm_error_set(err, SM_EINVAL, "jobs[%zu].host: expected an agent name", i);
            break;
        }
        if (!cJSON_IsObject(params)) {
            sm_error_field(err, "jobs[%zu].params", i);
            rc = sm_error_set(err, SM_EINVAL, "jobs[%zu].params: expected an object", i);
            break;
        }
        char *ptext = cJSON_PrintUnformatted(params);
        sm_error perr = {0};
        rc =
            ptext ? sm_codec_params_decode(ptext, strlen(ptext), &out[i].params, &perr) : SM_ENOMEM;
        free(ptext);
        if (rc) {
            sm_error_field(err, "jobs[%zu].params", i);
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

char *sm_api_health(uint64_t agents, uint64_t online, uint64_t results, uint32_t hold_ms,
                    const char *const *names, const uint64_t *values, size_t n,
                    const char *const *rej_names, const uint64_t *rej_values, size_t n_rej,
                    const char *const *q_names, const uint64_t *q_values, size_t n_q,
                    const char *store_error, int64_t store_error_at_ms, const char *store_warning)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddBoolToObject(o, "ok", store_error == NULL);
    if (store_error) {
        cJSON_AddStringToObject(o, "store_error", store_error);
        cJSON_AddNumberToObject(o, "store_error_at_ms", (double)store_error_at_ms);
    }
    if (store_warning && store_warning[0])
        cJSON_AddStringToObject(o, "store_warning", store_warning);
    cJSON_AddNumberToObject(o, "agents", (double)agents);
    cJSON_AddNumberToObject(o, "agents_online", (double)online);
    cJSON_AddNumberToObject(o, "results", (double)results);
    cJSON_AddNumberToObject(o, "hold_ms", (double)hold_ms);
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
    cJSON *q = cJSON_AddObjectToObject(o, "spool_quarantined");
    for (size_t i = 0; q && i < n_q; i++)
        cJSON_AddNumberToObject(q, q_names[i], (double)q_values[i]);
    return finish(o);
}

/* ---- runs ---- */

int sm_api_again_request(const char *body, size_t len, sm_error *err)
{
    sm_error_field(err, "%s", "");
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t'))
        i++;
    if (i == len)
        return 0;
    cJSON *req = cJSON_ParseWithLength(body, len);
    int rc = 0;
    if (!cJSON_IsObject(req)) {
        rc = sm_error_set(err, SM_EPARSE,
                          "the body is not a JSON object ({} or "
                          "{\"cells\":\"unjudged\"})");
    } else {
        const cJSON *item;
        cJSON_ArrayForEach(item, req)
        {
            if (rc)
                break;
            if (strcmp(item->string, "cells") != 0) {
                sm_error_field(err, "%.32s", item->string);
                rc = sm_error_set(err, SM_EINVAL, "%.32s: unknown field (only \"cells\")",
                                  item->string);
            } else if (!cJSON_IsString(item) || strcmp(item->valuestring, "unjudged") != 0) {
                sm_error_field(err, "cells");
                rc = sm_error_set(err, SM_EINVAL,
                                  "cells: expected \"unjudged\" (the cells the run could not "
                                  "judge)");
            }
        }
    }
    cJSON_Delete(req);
    return rc;
}

int sm_api_again_spec(const char *spec_json, char **out, char *name, size_t cap, sm_error *err)
{
    *out = NULL;
    static const char suffix[] = "-again";
    cJSON *spec = spec_json ? cJSON_Parse(spec_json) : NULL;
    const char *old = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "name"));
    if (!old) {
        cJSON_Delete(spec);
        return sm_error_set(err, SM_EPARSE, "the run's stored spec has no name");
    }
    const size_t n = strlen(old), k = sizeof suffix - 1;
    const bool again = n >= k && strcmp(old + n - k, suffix) == 0;
    /* The base is cut so that base + suffix fits the spec's name limit. */
    const int base = again ? (int)n : (int)(n + k > SM_SPEC_NAME_MAX ? SM_SPEC_NAME_MAX - k : n);
    snprintf(name, cap, "%.*s%s", base, old, again ? "" : suffix);
    cJSON *renamed = cJSON_CreateString(name);
    bool ok = renamed && cJSON_ReplaceItemInObjectCaseSensitive(spec, "name", renamed);
    if (!ok)
        cJSON_Delete(renamed);
    if (!ok || !(*out = cJSON_PrintUnformatted(spec))) {
        cJSON_Delete(spec);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    cJSON_Delete(spec);
    return 0;
}

int sm_api_run_request(const char *body, size_t len, char **spec_json, sm_error *err)
{
    *spec_json = NULL;
    sm_error_field(err, "%s", "");
    cJSON *req = cJSON_ParseWithLength(body, len);
    if (!cJSON_IsObject(req)) {
        cJSON_Delete(req);
        return sm_error_set(err, SM_EPARSE,
                            "the body is not a JSON object (a spec or "
                            "{\"preset\": NAME})");
    }
    const cJSON *preset = cJSON_GetObjectItemCaseSensitive(req, "preset");
    if (!preset) {
        *spec_json = cJSON_PrintUnformatted(req);
        cJSON_Delete(req);
        return *spec_json ? 0 : sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    const sm_preset *p = cJSON_IsString(preset) ? sm_preset_find(preset->valuestring) : NULL;
    if (!p) {
        sm_error_field(err, "preset");
        /* Name the presets there are: the fix is one of these names. */
        char names[256] = "";
        size_t n = 0;
        for (const sm_preset *q = sm_presets(); q->name && n < sizeof names; q++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "", q->name);
        int refused =
            sm_error_set(err, SM_EINVAL, "preset: no preset \"%.64s\"; the presets are %s",
                         cJSON_IsString(preset) ? preset->valuestring : "(not a string)", names);
        cJSON_Delete(req);
        return refused;
    }
    cJSON *spec = cJSON_Parse(p->spec_json);
    int rc = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, req)
    {
        static const char *const allowed[] = {"preset", "hosts",    "repetitions", "remeasure",
                                              "warmup", "parallel", "name",        "pairs"};
        size_t k = 0;
        while (k < sizeof allowed / sizeof *allowed && strcmp(item->string, allowed[k]) != 0)
            k++;
        if (k == sizeof allowed / sizeof *allowed) {
            sm_error_field(err, "%s", item->string);
            rc = sm_error_set(err, SM_EINVAL,
                              "%.64s: not a field a preset takes (hosts, repetitions, "
                              "remeasure, warmup, parallel, name, pairs)",
                              item->string);
            break;
        }
        if (k == 0)
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(spec, item->string);
        cJSON_AddItemToObject(spec, item->string, cJSON_Duplicate(item, 1));
    }
    if (!rc && !(*spec_json = cJSON_PrintUnformatted(spec)))
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    cJSON_Delete(spec);
    cJSON_Delete(req);
    return rc;
}

static cJSON *run_json(const sm_api_run *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    sm_json_put_u64_str(o, "id", r->id);
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "state", r->state);
    cJSON_AddStringToObject(o, "reason", r->reason ? r->reason : "");
    cJSON *p = cJSON_AddObjectToObject(o, "progress");
    if (p) {
        cJSON_AddNumberToObject(p, "done", r->done);
        cJSON_AddNumberToObject(p, "failed", r->failed);
        cJSON_AddNumberToObject(p, "total", r->total);
    }
    cJSON_AddNumberToObject(o, "created_ms", (double)r->created_ms);
    cJSON_AddNumberToObject(o, "finished_ms", (double)r->finished_ms);
    const char *note = r->parallel_note ? r->parallel_note : "";
    cJSON_AddBoolToObject(o, "parallel", !r->serial);
    cJSON_AddStringToObject(o, "serial_reason", r->serial ? note : "");
    cJSON_AddStringToObject(o, "parallel_warning", r->serial ? "" : note);
    if (r->schedule)
        sm_json_put_u64_str(o, "schedule", r->schedule);
    else
        cJSON_AddNullToObject(o, "schedule");
    return o;
}

char *sm_api_runs_encode(const sm_api_run *r, size_t n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = root ? cJSON_AddArrayToObject(root, "runs") : NULL;
    if (!arr) {
        cJSON_Delete(root);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, run_json(&r[i]));
    return finish(root);
}

char *sm_api_run_item_encode(const sm_api_run *r)
{
    return finish(run_json(r));
}

/* "test": the cell's name as its table column has it (sm_export_label); null when the stored
 * params do not decode. */
static void add_test_label(cJSON *c, const char *params_json)
{
    sm_params p;
    sm_error err = {0};
    if (!params_json || sm_codec_params_decode(params_json, strlen(params_json), &p, &err) != 0) {
        cJSON_AddNullToObject(c, "test");
        return;
    }
    char label[SM_TABLE_LABEL_MAX];
    sm_export_label(&p, SM_LABEL_TEST, false, label, sizeof label);
    cJSON_AddStringToObject(c, "test", label);
}

char *sm_api_run_encode(const sm_api_run *r, const sm_api_cell *cells, size_t n)
{
    cJSON *o = run_json(r);
    if (o && r->explains)
        sm_json_put_u64_str(o, "explains", r->explains);
    else if (o)
        cJSON_AddNullToObject(o, "explains");
    cJSON *arr = o ? cJSON_AddArrayToObject(o, "cells") : NULL;
    if (!arr) {
        cJSON_Delete(o);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        cJSON *c = cJSON_CreateObject();
        if (!c)
            break;
        cJSON_AddNumberToObject(c, "index", cells[i].idx);
        cJSON_AddStringToObject(c, "host", cells[i].host);
        cJSON_AddStringToObject(c, "peer", cells[i].peer ? cells[i].peer : "");
        add_raw(c, "params", cells[i].params_json);
        add_test_label(c, cells[i].params_json);
        cJSON_AddNumberToObject(c, "jobs", cells[i].jobs);
        cJSON_AddNumberToObject(c, "queued", cells[i].queued);
        cJSON_AddNumberToObject(c, "active", cells[i].active);
        cJSON_AddNumberToObject(c, "done", cells[i].done);
        cJSON_AddNumberToObject(c, "failed", cells[i].failed);
        cJSON_AddItemToArray(arr, c);
    }
    return finish(o);
}

char *sm_api_run_created(uint64_t id)
{
    cJSON *o = cJSON_CreateObject();
    if (o)
        sm_json_put_u64_str(o, "run", id);
    return finish(o);
}
