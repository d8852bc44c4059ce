/* Decoders of the coordinator's HTTP answers for clients (the CLI), and its run request. */
#include "coordinator/cli/apiview.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/json.h"

/* Timestamps are milliseconds since the epoch; anything a double holds exactly will do. */
#define MS_MAX ((1ull << 53) - 1)

/* The lists the coordinator sends are bounded (100 runs, the fleet, a run's cells); this only
 * stops a broken answer from asking for an absurd allocation. */
#define LIST_MAX 1000000

/* Copies src into dst[cap], cutting with "..." when it does not fit, never inside a UTF-8
 * sequence. */
static void copy_prose(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n < cap) {
        memcpy(dst, src, n + 1);
        return;
    }
    n = cap - 4;
    while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
        n--;
    memcpy(dst, src, n);
    memcpy(dst + n, "...", 4);
}

/* A string member `key` of o. Identifiers (prose false) must fit in cap; prose is shortened.
 * optional: an absent or null member reads as "". */
static int get_str(const cJSON *o, const char *what, const char *key, char *dst, size_t cap,
                   bool prose, bool optional, sm_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    if (optional && (item == NULL || cJSON_IsNull(item))) {
        dst[0] = '\0';
        return 0;
    }
    if (!cJSON_IsString(item))
        return sm_error_set(err, SM_EPARSE, "%s: %s: expected a string", what, key);
    if (prose) {
        copy_prose(dst, cap, item->valuestring);
        return 0;
    }
    size_t n = strlen(item->valuestring);
    if (n >= cap)
        return sm_error_set(err, SM_EPARSE, "%s: %s: %zu bytes, longer than %zu", what, key, n,
                            cap - 1);
    memcpy(dst, item->valuestring, n + 1);
    return 0;
}

static int get_u32(const cJSON *o, const char *what, const char *key, uint32_t *out, sm_error *err)
{
    uint64_t v;
    int rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, key), what, key, UINT32_MAX,
                              false, &v, err);
    if (rc == 0)
        *out = (uint32_t)v;
    return rc;
}

static int get_ms(const cJSON *o, const char *what, const char *key, int64_t *out, sm_error *err)
{
    uint64_t v;
    int rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, key), what, key, MS_MAX, false,
                              &v, err);
    if (rc == 0)
        *out = (int64_t)v;
    return rc;
}

/* The array member `key` of root, its size checked; the caller's list of n elements of size
 * `size` is calloc'd (NULL for an empty list). */
static int get_list(const cJSON *root, const char *key, size_t size, const cJSON **arr, void **list,
                    size_t *n, sm_error *err)
{
    *arr = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsArray(*arr))
        return sm_error_set(err, SM_EPARSE, "%s: expected a list", key);
    int count = cJSON_GetArraySize(*arr);
    if (count < 0 || count > LIST_MAX)
        return sm_error_set(err, SM_EPARSE, "%s: %d entries, more than %d", key, count, LIST_MAX);
    *n = (size_t)count;
    *list = NULL;
    if (count > 0 && !(*list = calloc((size_t)count, size)))
        return sm_error_set(err, SM_ENOMEM, "%s: out of memory", key);
    return 0;
}

static int run_from(const cJSON *o, const char *what, sm_apiview_run *r, sm_error *err)
{
    if (!cJSON_IsObject(o))
        return sm_error_set(err, SM_EPARSE, "%s: expected an object", what);
    char pwhat[48];
    snprintf(pwhat, sizeof pwhat, "%s.progress", what);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "progress");
    uint64_t id;
    int rc;
    if ((rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "id"), what, "id", UINT64_MAX,
                               true, &id, err)) ||
        (rc = get_str(o, what, "name", r->name, sizeof r->name, false, false, err)) ||
        (rc = get_str(o, what, "state", r->state, sizeof r->state, false, false, err)) ||
        (rc = get_str(o, what, "reason", r->reason, sizeof r->reason, true, true, err)))
        return rc;
    if (!cJSON_IsObject(p))
        return sm_error_set(err, SM_EPARSE, "%s: progress: expected an object", what);
    if ((rc = get_u32(p, pwhat, "done", &r->done, err)) ||
        (rc = get_u32(p, pwhat, "failed", &r->failed, err)) ||
        (rc = get_u32(p, pwhat, "total", &r->total, err)) ||
        (rc = get_ms(o, what, "created_ms", &r->created_ms, err)) ||
        (rc = get_ms(o, what, "finished_ms", &r->finished_ms, err)))
        return rc;
    /* A coordinator before these fields ran every run as its spec said, and said nothing. */
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(o, "parallel");
    if (par != NULL && !cJSON_IsBool(par))
        return sm_error_set(err, SM_EPARSE, "%s: parallel: expected true or false", what);
    r->parallel = par == NULL || cJSON_IsTrue(par);
    if ((rc = get_str(o, what, r->parallel ? "parallel_warning" : "serial_reason", r->parallel_note,
                      sizeof r->parallel_note, true, true, err)))
        return rc;
    r->id = id;
    return 0;
}

static int cell_from(const cJSON *o, const char *what, sm_apiview_cell *c, sm_error *err)
{
    if (!cJSON_IsObject(o))
        return sm_error_set(err, SM_EPARSE, "%s: expected an object", what);
    int rc;
    if ((rc = get_u32(o, what, "index", &c->index, err)) ||
        (rc = get_str(o, what, "host", c->host, sizeof c->host, false, false, err)) ||
        (rc = get_str(o, what, "peer", c->peer, sizeof c->peer, false, true, err)) ||
        (rc = get_u32(o, what, "jobs", &c->jobs, err)) ||
        (rc = get_u32(o, what, "queued", &c->queued, err)) ||
        (rc = get_u32(o, what, "active", &c->active, err)) ||
        (rc = get_u32(o, what, "done", &c->done, err)) ||
        (rc = get_u32(o, what, "failed", &c->failed, err)))
        return rc;
    /* The coordinator names the test as its tables do (null: params it could not read). */
    return get_str(o, what, "test", c->test, sizeof c->test, true, true, err);
}

int sm_apiview_run_decode(const char *json, size_t len, sm_apiview_run *out,
                          sm_apiview_cell **cells, size_t *n_cells, sm_error *err)
{
    cJSON *root;
    int rc = sm_json_parse_object(json, len, "run", &root, err);
    if (rc)
        return rc;
    sm_apiview_run r;
    memset(&r, 0, sizeof r);
    sm_apiview_cell *list = NULL;
    size_t n = 0;
    if ((rc = run_from(root, "run", &r, err)))
        goto out;
    if (cells) {
        const cJSON *arr, *item;
        if ((rc = get_list(root, "cells", sizeof *list, &arr, (void **)&list, &n, err)))
            goto out;
        size_t i = 0;
        cJSON_ArrayForEach(item, arr)
        {
            char what[32];
            snprintf(what, sizeof what, "cells[%zu]", i);
            if ((rc = cell_from(item, what, &list[i++], err)))
                goto out;
        }
    }
    *out = r;
    if (cells) {
        *cells = list;
        *n_cells = n;
        list = NULL;
    }
out:
    free(list);
    cJSON_Delete(root);
    return rc;
}

/* Reads one element of a list into elem (of the list's element type). */
typedef int (*elem_from_fn)(const cJSON *o, const char *what, void *elem, sm_error *err);

/* {"KEY":[...]} into a malloc'd array of elem_size elements, each read by from(); on error
 * nothing is returned and the reason names the element ("runs[2]: ..."). */
static int decode_list(const char *json, size_t len, const char *key, size_t elem_size,
                       elem_from_fn from, void **out, size_t *n, sm_error *err)
{
    cJSON *root;
    int rc = sm_json_parse_object(json, len, key, &root, err);
    if (rc)
        return rc;
    const cJSON *arr, *item;
    char *list = NULL;
    size_t count = 0, i = 0;
    if ((rc = get_list(root, key, elem_size, &arr, (void **)&list, &count, err)))
        goto out;
    cJSON_ArrayForEach(item, arr)
    {
        char what[48];
        snprintf(what, sizeof what, "%s[%zu]", key, i);
        if ((rc = from(item, what, list + elem_size * i++, err)))
            goto out;
    }
    *out = list;
    *n = count;
    list = NULL;
out:
    free(list);
    cJSON_Delete(root);
    return rc;
}

static int run_elem(const cJSON *o, const char *what, void *elem, sm_error *err)
{
    return run_from(o, what, elem, err);
}

int sm_apiview_runs_decode(const char *json, size_t len, sm_apiview_run **runs, size_t *n,
                           sm_error *err)
{
    return decode_list(json, len, "runs", sizeof **runs, run_elem, (void **)runs, n, err);
}

/* "k=v,k=v" from an object of strings, shortened to fit. */
static int labels_text(const cJSON *labels, const char *what, char *dst, size_t cap, sm_error *err)
{
    dst[0] = '\0';
    if (labels == NULL || cJSON_IsNull(labels))
        return 0;
    if (!cJSON_IsObject(labels))
        return sm_error_set(err, SM_EPARSE, "%s: labels: expected an object", what);
    char text[4 * SM_APIVIEW_PROSE];
    size_t used = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, labels)
    {
        if (!cJSON_IsString(item))
            return sm_error_set(err, SM_EPARSE, "%s: labels: %s: expected a string", what,
                                item->string);
        int w = snprintf(text + used, sizeof text - used, "%s%s=%s", used ? "," : "", item->string,
                         item->valuestring);
        if (w < 0 || (size_t)w >= sizeof text - used) {
            used = sizeof text - 1; /* the rest would be cut by copy_prose anyway */
            break;
        }
        used += (size_t)w;
    }
    text[used] = '\0';
    copy_prose(dst, cap, text);
    return 0;
}

static int agent_from(const cJSON *o, const char *what, sm_apiview_agent *a, sm_error *err)
{
    if (!cJSON_IsObject(o))
        return sm_error_set(err, SM_EPARSE, "%s: expected an object", what);
    int rc;
    if ((rc = get_str(o, what, "name", a->name, sizeof a->name, false, false, err)) ||
        (rc = get_str(o, what, "status", a->status, sizeof a->status, false, false, err)) ||
        (rc = get_ms(o, what, "last_seen_ms", &a->last_seen_ms, err)) ||
        (rc = labels_text(cJSON_GetObjectItemCaseSensitive(o, "labels"), what, a->labels,
                          sizeof a->labels, err)))
        return rc;
    /* An agent that registered before it sent its facts has null there. */
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "facts");
    if (f == NULL || cJSON_IsNull(f))
        return 0;
    if (!cJSON_IsObject(f))
        return sm_error_set(err, SM_EPARSE, "%s: facts: expected an object", what);
    char fwhat[64]; /* what is "agents[N]"; the size leaves gcc -O3 nothing to warn of */
    snprintf(fwhat, sizeof fwhat, "%.48s.facts", what);
    uint64_t mem;
    if ((rc = get_str(f, fwhat, "kernel", a->kernel, sizeof a->kernel, true, true, err)) ||
        (rc = get_str(f, fwhat, "cpu_model", a->cpu_model, sizeof a->cpu_model, true, true, err)) ||
        (rc = get_u32(f, fwhat, "cores", &a->cores, err)) ||
        (rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(f, "mem_bytes"), fwhat, "mem_bytes",
                               UINT64_MAX, true, &mem, err)))
        return rc;
    a->mem_bytes = mem;
    return 0;
}

static int agent_elem(const cJSON *o, const char *what, void *elem, sm_error *err)
{
    return agent_from(o, what, elem, err);
}

int sm_apiview_agents_decode(const char *json, size_t len, sm_apiview_agent **agents, size_t *n,
                             sm_error *err)
{
    return decode_list(json, len, "agents", sizeof **agents, agent_elem, (void **)agents, n, err);
}

static int preset_elem(const cJSON *o, const char *what, void *elem, sm_error *err)
{
    sm_apiview_preset *p = elem;
    if (!cJSON_IsObject(o))
        return sm_error_set(err, SM_EPARSE, "%s: expected an object", what);
    int rc = get_str(o, what, "name", p->name, sizeof p->name, false, false, err);
    return rc ? rc
              : get_str(o, what, "description", p->description, sizeof p->description, true, true,
                        err);
}

int sm_apiview_presets_decode(const char *json, size_t len, sm_apiview_preset **presets, size_t *n,
                              sm_error *err)
{
    return decode_list(json, len, "presets", sizeof **presets, preset_elem, (void **)presets, n,
                       err);
}

int sm_apiview_error_decode(const char *json, size_t len, sm_apiview_error *out, sm_error *err)
{
    cJSON *root;
    int rc = sm_json_parse_object(json, len, "error", &root, err);
    if (rc)
        return rc;
    sm_apiview_error e;
    if ((rc = get_str(root, "error", "error", e.error, sizeof e.error, true, false, err)) == 0 &&
        (rc = get_str(root, "error", "field", e.field, sizeof e.field, false, true, err)) == 0)
        *out = e;
    cJSON_Delete(root);
    return rc;
}

int sm_apiview_run_id_decode(const char *json, size_t len, uint64_t *id, sm_error *err)
{
    cJSON *root;
    int rc = sm_json_parse_object(json, len, "created", &root, err);
    if (rc)
        return rc;
    uint64_t v;
    rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(root, "run"), "created", "run",
                          UINT64_MAX, true, &v, err);
    if (rc == 0)
        *id = v;
    cJSON_Delete(root);
    return rc;
}

/* hosts: "all" as is, "a,b" as a JSON list, each name non-empty. *out is the caller's. */
static int hosts_item(const char *hosts, cJSON **out, sm_error *err)
{
    if (strcmp(hosts, "all") == 0) {
        *out = cJSON_CreateString("all");
        return *out ? 0 : sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    cJSON *arr = cJSON_CreateArray();
    if (!arr)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    for (const char *p = hosts;; p++) {
        size_t n = strcspn(p, ",");
        char name[SM_APIVIEW_NAME];
        int rc = 0;
        if (n == 0)
            rc = sm_error_set(err, SM_EINVAL, "hosts: '%s' has an empty name", hosts);
        else if (n >= sizeof name)
            rc = sm_error_set(err, SM_EINVAL, "hosts: a name is longer than %zu characters",
                              sizeof name - 1);
        if (rc == 0) {
            memcpy(name, p, n);
            name[n] = '\0';
            if (!sm_json_append(arr, cJSON_CreateString(name)))
                rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        }
        if (rc) {
            cJSON_Delete(arr);
            return rc;
        }
        p += n;
        if (*p == '\0')
            break;
    }
    *out = arr;
    return 0;
}

/* {"preset":..., "hosts":..., "repetitions": reps} with reps (owned, may be NULL) added. */
static int preset_request(const char *preset, const char *hosts, cJSON *reps, char **body,
                          sm_error *err)
{
    cJSON *o = cJSON_CreateObject(), *h = NULL;
    if (!o) {
        cJSON_Delete(reps);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    int rc = hosts ? hosts_item(hosts, &h, err) : 0;
    if (rc) {
        cJSON_Delete(reps);
        cJSON_Delete(o);
        return rc;
    }
    bool ok = cJSON_AddStringToObject(o, "preset", preset) != NULL;
    if (h && ok)
        ok = sm_json_put(o, "hosts", h);
    else
        cJSON_Delete(h);
    if (ok && reps)
        ok = sm_json_put(o, "repetitions", reps);
    else
        cJSON_Delete(reps);
    char *text = sm_json_finish(o, ok, 0, "run request", err);
    if (!text)
        return SM_ENOMEM;
    *body = text;
    return 0;
}

int sm_apiview_preset_request(const char *preset, const char *hosts, uint32_t repetitions,
                              char **body, sm_error *err)
{
    cJSON *reps = repetitions ? sm_json_u64(repetitions) : NULL;
    if (repetitions && !reps)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    return preset_request(preset, hosts, reps, body, err);
}

int sm_apiview_preset_request_adaptive(const char *preset, const char *hosts,
                                       const sm_reps_rule *rule, char **body, sm_error *err)
{
    cJSON *reps = cJSON_CreateObject();
    if (!reps || !cJSON_AddNumberToObject(reps, "min", rule->min) ||
        !cJSON_AddNumberToObject(reps, "max", rule->max) ||
        !cJSON_AddNumberToObject(reps, "ci_rel", rule->ci_rel)) {
        cJSON_Delete(reps);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    return preset_request(preset, hosts, reps, body, err);
}
