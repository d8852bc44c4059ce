/* JSON codec of params, results, facts and reports (msg.c builds on it via codec_internal.h). */
#include "proto/codec.h"
#include "proto/codec_internal.h"
#include "proto/json.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PUT_FIXED(o, key, array) sm_json_put_fixed((o), (key), (array), sizeof(array))

/* Copies at most dst_size - 1 bytes, backing off so that a UTF-8 sequence is never cut. */
static void copy_truncated(char *dst, size_t dst_size, const char *src)
{
    size_t n = strlen(src);
    if (n >= dst_size) {
        n = dst_size - 1;
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* ---- params ---- */

enum field_kind {
    K_WORKLOAD,
    K_TRANSPORT,
    K_SCOPE,
    K_FRAMING,
    K_CLIENT,
    K_U32,
    K_U64,
    K_BOOL,
    K_URL
};

#define WL(w)  (1u << (w))
#define WL_ALL ((1u << SM_WL__COUNT) - 1)
/* The workloads that open their sockets themselves; libcurl owns http's. */
#define WL_SOCK (WL(SM_WL_STREAM) | WL(SM_WL_RR) | WL(SM_WL_CONNECT))
enum {
    PF_TCP = 1,    /* applies to transport tcp only */
    PF_IF_SET = 2, /* written only when non-zero: the one amount the job uses */
};

/* Order here is the order of the encoded keys. `name` must stay the first member (check_keys). */
static const struct pfield {
    const char *name;
    enum field_kind kind;
    size_t off;
    unsigned wl;
    unsigned flags;
} pfields[] = {
    {"workload", K_WORKLOAD, offsetof(sm_params, workload), WL_ALL, 0},
    {"transport", K_TRANSPORT, offsetof(sm_params, transport), WL_ALL, 0},
    {"scope", K_SCOPE, offsetof(sm_params, scope), WL_ALL, 0},
    {"framing", K_FRAMING, offsetof(sm_params, framing), WL(SM_WL_STREAM), 0},
    {"msg_size", K_U32, offsetof(sm_params, msg_size), WL(SM_WL_STREAM), 0},
    {"req_size", K_U32, offsetof(sm_params, req_size), WL(SM_WL_RR), 0},
    {"resp_size", K_U32, offsetof(sm_params, resp_size), WL(SM_WL_RR), 0},
    {"count", K_U64, offsetof(sm_params, count), WL_SOCK, PF_IF_SET},
    {"bytes", K_U64, offsetof(sm_params, bytes), WL(SM_WL_STREAM) | WL(SM_WL_HTTP), PF_IF_SET},
    {"duration_ms", K_U32, offsetof(sm_params, duration_ms), WL_SOCK, PF_IF_SET},
    {"nodelay", K_BOOL, offsetof(sm_params, nodelay), WL_SOCK, PF_TCP},
    {"cork", K_BOOL, offsetof(sm_params, cork), WL(SM_WL_STREAM), PF_TCP},
    {"sndbuf", K_U32, offsetof(sm_params, sndbuf), WL_SOCK, 0},
    {"rcvbuf", K_U32, offsetof(sm_params, rcvbuf), WL_SOCK, 0},
    {"read_size", K_U32, offsetof(sm_params, read_size), WL(SM_WL_STREAM), 0},
    {"time_limit_ms", K_U32, offsetof(sm_params, time_limit_ms), WL_ALL, 0},
    {"client", K_CLIENT, offsetof(sm_params, client), WL(SM_WL_HTTP), 0},
    {"connections", K_U32, offsetof(sm_params, connections), WL(SM_WL_HTTP), 0},
    {"repeat", K_U32, offsetof(sm_params, repeat), WL(SM_WL_HTTP), 0},
    {"buffer_size", K_U32, offsetof(sm_params, buffer_size), WL(SM_WL_HTTP), 0},
    {"fresh_connect", K_BOOL, offsetof(sm_params, fresh_connect), WL(SM_WL_HTTP), 0},
    {"http2", K_BOOL, offsetof(sm_params, http2), WL(SM_WL_HTTP), 0},
    {"tls", K_BOOL, offsetof(sm_params, tls), WL(SM_WL_HTTP), 0},
    {"verify", K_BOOL, offsetof(sm_params, verify), WL(SM_WL_HTTP), 0},
    {"url", K_URL, offsetof(sm_params, url), WL(SM_WL_HTTP), PF_IF_SET},
};
#define N_PFIELDS (sizeof pfields / sizeof pfields[0])
_Static_assert(N_PFIELDS <= 32, "check_keys keeps one bit per field");

static uint64_t param_value(const sm_params *p, const struct pfield *f)
{
    const char *at = (const char *)p + f->off;
    switch (f->kind) {
    case K_WORKLOAD:
        return (unsigned)p->workload;
    case K_TRANSPORT:
        return (unsigned)p->transport;
    case K_SCOPE:
        return (unsigned)p->scope;
    case K_FRAMING:
        return (unsigned)p->framing;
    case K_CLIENT:
        return (unsigned)p->client;
    case K_URL:
        return p->url[0] != '\0';
    case K_U32:
        return *(const uint32_t *)(const void *)at;
    case K_U64:
        return *(const uint64_t *)(const void *)at;
    case K_BOOL:
        return *(const bool *)(const void *)at;
    }
    return 0;
}

/* A field that does not apply is still written when it is set, so that encoding never turns
 * invalid params into valid ones; the decoder's validation then names it. */
static bool put_param(cJSON *o, const sm_params *p, const struct pfield *f)
{
    uint64_t v = param_value(p, f);
    bool applies = (unsigned)p->workload < SM_WL__COUNT && (f->wl & WL(p->workload)) &&
                   (!(f->flags & PF_TCP) || p->transport == SM_TR_TCP) &&
                   (!(f->flags & PF_IF_SET) || v != 0);
    if (!applies && v == 0)
        return true;
    switch (f->kind) {
    case K_WORKLOAD:
        return sm_json_put_str(o, f->name, sm_workload_name(p->workload));
    case K_TRANSPORT:
        return sm_json_put_str(o, f->name, sm_transport_name(p->transport));
    case K_SCOPE:
        return sm_json_put_str(o, f->name, sm_scope_name(p->scope));
    case K_FRAMING:
        return sm_json_put_str(o, f->name, sm_framing_name(p->framing));
    case K_CLIENT:
        return sm_json_put_str(o, f->name, sm_http_client_name(p->client));
    case K_URL:
        /* Bounded: a url without its NUL (invalid params) must not be read past the array. */
        return sm_json_put_str(o, f->name, memchr(p->url, '\0', sizeof p->url) ? p->url : "");
    case K_U32:
    case K_U64:
        return sm_json_put_u64(o, f->name, v);
    case K_BOOL:
        return sm_json_put_bool(o, f->name, v != 0);
    }
    return true;
}

static cJSON *params_json(const sm_params *p)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    for (size_t i = 0; ok && i < N_PFIELDS; i++)
        ok = put_param(o, p, &pfields[i]);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *sm_codec_params_encode(const sm_params *p, sm_error *err)
{
    if (p == NULL) {
        sm_error_set(err, SM_EINVAL, "params: nothing to encode");
        return NULL;
    }
    return sm_json_finish(params_json(p), true, 0, "params", err);
}

static int param_from_json(const cJSON *item, const struct pfield *f, sm_params *p, sm_error *err)
{
    void *at = (char *)p + f->off;
    const char *name = NULL;
    uint64_t v;
    int rc = 0;
    switch (f->kind) {
    case K_WORKLOAD:
    case K_TRANSPORT:
    case K_SCOPE:
    case K_FRAMING:
    case K_CLIENT:
        if (!cJSON_IsString(item))
            return sm_error_set(err, SM_EPARSE, "params: %s: expected a string", f->name);
        name = item->valuestring;
        if (f->kind == K_WORKLOAD)
            rc = sm_workload_parse(name, &p->workload);
        else if (f->kind == K_TRANSPORT)
            rc = sm_transport_parse(name, &p->transport);
        else if (f->kind == K_SCOPE)
            rc = sm_scope_parse(name, &p->scope);
        else if (f->kind == K_CLIENT)
            rc = sm_http_client_parse(name, &p->client);
        else
            rc = sm_framing_parse(name, &p->framing);
        if (rc != 0)
            return sm_error_set(err, SM_EINVAL, "params: %s: unknown value '%s'", f->name, name);
        return 0;
    case K_U32:
        if ((rc = sm_json_get_uint(item, "params", f->name, UINT32_MAX, false, &v, err)) == 0)
            *(uint32_t *)at = (uint32_t)v;
        return rc;
    case K_U64:
        if ((rc = sm_json_get_uint(item, "params", f->name, UINT64_MAX, true, &v, err)) == 0)
            *(uint64_t *)at = v;
        return rc;
    case K_BOOL:
        if (!cJSON_IsBool(item))
            return sm_error_set(err, SM_EPARSE, "params: %s: expected true or false", f->name);
        *(bool *)at = cJSON_IsTrue(item);
        return 0;
    case K_URL:
        if (!cJSON_IsString(item))
            return sm_error_set(err, SM_EPARSE, "params: %s: expected a string", f->name);
        if (strlen(item->valuestring) > SM_URL_MAX)
            return sm_error_set(err, SM_EINVAL, "params: %s: longer than %u bytes", f->name,
                                SM_URL_MAX);
        snprintf(p->url, sizeof p->url, "%s", item->valuestring);
        return 0;
    }
    return 0;
}

static int params_from_json(const cJSON *o, sm_params *p, sm_error *err)
{
    uint32_t seen = 0;
    int rc =
        sm_json_check_keys(o, "params", pfields, sizeof pfields[0], N_PFIELDS, 1u << 0, &seen, err);
    if (rc != 0)
        return rc;
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(o, "workload");
    sm_params tmp;
    if ((rc = param_from_json(wl, &pfields[0], &tmp, err)) != 0)
        return rc;
    sm_params_init(p, tmp.workload);
    /* The defaults carry a count; a user who names any amount means that one alone. */
    uint32_t amounts = 0;
    for (size_t i = 0; i < N_PFIELDS; i++)
        if (pfields[i].flags & PF_IF_SET)
            amounts |= 1u << i;
    if (seen & amounts) {
        p->count = 0;
        p->bytes = 0;
        p->duration_ms = 0;
    }
    for (size_t i = 1; i < N_PFIELDS; i++) {
        if (!(seen & (1u << i)))
            continue;
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, pfields[i].name);
        if ((rc = param_from_json(item, &pfields[i], p, err)) != 0)
            return rc;
    }
    sm_error verr;
    if ((rc = sm_params_validate(p, &verr)) != 0)
        return sm_error_set(err, rc, "params: %s", verr.msg);
    return 0;
}

int sm_codec_params_from_cjson(const cJSON *o, sm_params *out, sm_error *err)
{
    sm_params p;
    int rc = params_from_json(o, &p, err);
    if (rc == 0)
        *out = p;
    else
        memset(out, 0, sizeof *out);
    return rc;
}

int sm_codec_params_decode(const char *json, size_t len, sm_params *out, sm_error *err)
{
    cJSON *root = NULL;
    int rc = sm_json_parse_object(json, len, "params", &root, err);
    if (rc == 0)
        rc = sm_codec_params_from_cjson(root, out, err);
    else
        memset(out, 0, sizeof *out);
    cJSON_Delete(root);
    return rc;
}

/* ---- results ---- */

/* "count" is not in codec.h's sketch of the shape; it lets the decoder check the buckets. */
static cJSON *hist_json(const sm_hist *h)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put_str(o, "unit", "ns") &&
              sm_json_put_u64(o, "min", sm_hist_min(h)) &&
              sm_json_put_u64(o, "max", sm_hist_max(h)) &&
              sm_json_put_u64(o, "count", sm_hist_count(h));
    cJSON *buckets = ok ? cJSON_AddArrayToObject(o, "buckets") : NULL;
    ok = buckets != NULL;
    size_t cursor = 0, index;
    uint64_t count;
    while (ok && sm_hist_next(h, &cursor, &index, &count) == 0) {
        cJSON *pair = cJSON_CreateArray();
        ok = sm_json_append(buckets, pair) && sm_json_append(pair, sm_json_u64(index)) &&
             sm_json_append(pair, sm_json_u64(count));
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Metrics that are present and finite; JSON has no NaN and a NaN "present" would lie. */
static bool put_metrics(cJSON *o, const sm_result *r)
{
    for (unsigned m = 0; m < SM_M__COUNT; m++) {
        double v = sm_result_get(r, (sm_metric)m);
        if (isfinite(v) && !sm_json_put_double(o, sm_metric_name((sm_metric)m), v))
            return false;
    }
    return true;
}

/* The facts of one job that explain its numbers: socket buffers granted (0 = unknown) and the
 * CPU of each side (-1 = unknown). Unknown ones are left out, which says the same. */
static bool put_job_facts(cJSON *o, const sm_result *r)
{
    bool ok = true;
    if (ok && r->sndbuf_eff != 0)
        ok = sm_json_put_u64(o, "sndbuf", r->sndbuf_eff);
    if (ok && r->rcvbuf_eff != 0)
        ok = sm_json_put_u64(o, "rcvbuf", r->rcvbuf_eff);
    if (ok && r->tx_cpu >= 0)
        ok = sm_json_put_u64(o, "tx_cpu", (uint64_t)r->tx_cpu);
    if (ok && r->rx_cpu >= 0)
        ok = sm_json_put_u64(o, "rx_cpu", (uint64_t)r->rx_cpu);
    return ok;
}

/* The host block: every input, null when unknown (never 0 as a value), the derived shares a
 * reader wants, and the verdict with the clause that fired. */
static bool put_opt_u64(cJSON *o, const char *key, bool known, uint64_t v)
{
    return sm_json_put(o, key, known ? sm_json_u64(v) : cJSON_CreateNull());
}

static cJSON *host_json(const sm_host_state *h)
{
    cJSON *o = cJSON_CreateObject();
    bool st = h->stat_known;
    bool ok =
        o != NULL && sm_json_put_double(o, "job_ms", h->job_ms) &&
        put_opt_u64(o, "cpu_ticks", st, h->ticks_total) &&
        put_opt_u64(o, "steal_ticks", st, h->ticks_steal) &&
        put_opt_u64(o, "iowait_ticks", st, h->ticks_iowait) &&
        sm_json_put_double(o, "steal_pct", sm_host_steal_pct(h)) &&
        sm_json_put_double(o, "iowait_pct", sm_host_iowait_pct(h)) &&
        sm_json_put_double(o, "load1_before", h->load1_before) &&
        sm_json_put_double(o, "load1_after", h->load1_after) &&
        put_opt_u64(o, "runnable_before", h->runnable_before >= 0, (uint64_t)h->runnable_before) &&
        put_opt_u64(o, "runnable_after", h->runnable_after >= 0, (uint64_t)h->runnable_after) &&
        put_opt_u64(o, "ncpu", h->ncpu != 0, h->ncpu) &&
        put_opt_u64(o, "nivcsw_tx", h->nivcsw_tx >= 0, (uint64_t)h->nivcsw_tx) &&
        put_opt_u64(o, "nivcsw_rx", h->nivcsw_rx >= 0, (uint64_t)h->nivcsw_rx) &&
        put_opt_u64(o, "runq_us_tx", h->runq_us_tx >= 0, (uint64_t)h->runq_us_tx) &&
        put_opt_u64(o, "runq_us_rx", h->runq_us_rx >= 0, (uint64_t)h->runq_us_rx) &&
        put_opt_u64(o, "oncpu_us_tx", h->oncpu_us_tx >= 0, (uint64_t)h->oncpu_us_tx) &&
        put_opt_u64(o, "oncpu_us_rx", h->oncpu_us_rx >= 0, (uint64_t)h->oncpu_us_rx) &&
        sm_json_put_bool(o, "same_cpu", h->same_cpu) &&
        put_opt_u64(o, "cpu_mhz_tx", h->mhz_tx != 0, h->mhz_tx) &&
        put_opt_u64(o, "cpu_mhz_rx", h->mhz_rx != 0, h->mhz_rx) &&
        sm_json_put_bool(o, "disturbed", h->disturbed) &&
        PUT_FIXED(o, "disturbed_reason", h->reason);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *result_json(const sm_result *r)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put_bool(o, "ok", r->ok);
    if (ok && !r->ok)
        ok = PUT_FIXED(o, "reason", r->reason);
    if (ok && (r->ok || r->have != 0)) {
        cJSON *metrics = cJSON_AddObjectToObject(o, "metrics");
        ok = metrics != NULL && put_metrics(metrics, r);
    }
    if (ok)
        ok = put_job_facts(o, r);
    if (ok && r->host.known)
        ok = sm_json_put(o, "host", host_json(&r->host));
    if (ok && r->hist != NULL)
        ok = sm_json_put(o, "hist", hist_json(r->hist));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *sm_codec_result_encode(const sm_result *r, sm_error *err)
{
    if (r == NULL) {
        sm_error_set(err, SM_EINVAL, "result: nothing to encode");
        return NULL;
    }
    return sm_json_finish(result_json(r), true, 0, "result", err);
}

static const char *const hist_keys[] = {"unit", "min", "max", "count", "buckets"};

static int hist_buckets_from_json(const cJSON *buckets, sm_hist *h, uint64_t *sum, size_t *first,
                                  size_t *last, sm_error *err)
{
    if (!cJSON_IsArray(buckets))
        return sm_error_set(err, SM_EPARSE, "result: hist: buckets: expected an array");
    const cJSON *pair;
    bool any = false;
    uint64_t prev = 0;
    *sum = 0;
    cJSON_ArrayForEach(pair, buckets)
    {
        uint64_t index, count;
        int rc;
        if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2)
            return sm_error_set(err, SM_EPARSE,
                                "result: hist: buckets: expected [index, count] pairs");
        if ((rc = sm_json_get_uint(pair->child, "result: hist", "bucket index", UINT64_MAX, true,
                                   &index, err)) != 0 ||
            (rc = sm_json_get_uint(pair->child->next, "result: hist", "bucket count", UINT64_MAX,
                                   true, &count, err)) != 0)
            return rc;
        /* Increasing indices, as the encoder writes them, also rule out a bucket given twice. */
        if (any && index <= prev)
            return sm_error_set(err, SM_EINVAL,
                                "result: hist: bucket index %" PRIu64 " does not follow %" PRIu64,
                                index, prev);
        if (index >= sm_hist_bucket_count() || sm_hist_set_bucket(h, (size_t)index, count) != 0)
            return sm_error_set(err, SM_EINVAL,
                                "result: hist: bucket index %" PRIu64 " is above the maximum %zu",
                                index, sm_hist_bucket_count() - 1);
        if (count > UINT64_MAX - *sum)
            return sm_error_set(err, SM_EINVAL, "result: hist: bucket counts overflow");
        *sum += count;
        if (count != 0) {
            if (*sum == count)
                *first = (size_t)index;
            *last = (size_t)index;
        }
        any = true;
        prev = index;
    }
    return 0;
}

static int hist_from_json(const cJSON *o, sm_hist **out, sm_error *err)
{
    uint32_t seen = 0;
    int rc = sm_json_check_keys(o, "result: hist", hist_keys, sizeof hist_keys[0],
                                sizeof hist_keys / sizeof hist_keys[0], 0x1f, &seen, err);
    if (rc != 0)
        return rc;
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(o, "unit");
    if (!cJSON_IsString(unit))
        return sm_error_set(err, SM_EPARSE, "result: hist: unit: expected a string");
    if (strcmp(unit->valuestring, "ns") != 0)
        return sm_error_set(err, SM_EINVAL, "result: hist: unit: '%s' is not ns",
                            unit->valuestring);
    uint64_t min, max, count;
    if ((rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "min"), "result: hist", "min",
                               UINT64_MAX, true, &min, err)) != 0 ||
        (rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "max"), "result: hist", "max",
                               UINT64_MAX, true, &max, err)) != 0 ||
        (rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "count"), "result: hist",
                               "count", UINT64_MAX, true, &count, err)) != 0)
        return rc;
    sm_hist *h = sm_hist_new();
    if (h == NULL)
        return sm_error_set(err, SM_ENOMEM, "result: hist: out of memory");
    uint64_t sum = 0;
    size_t first = 0, last = 0;
    rc = hist_buckets_from_json(cJSON_GetObjectItemCaseSensitive(o, "buckets"), h, &sum, &first,
                                &last, err);
    if (rc == 0 && sum != count)
        rc = sm_error_set(err, SM_EINVAL,
                          "result: hist: bucket counts sum to %" PRIu64 ", not count %" PRIu64, sum,
                          count);
    /* The exact extremes must fall in the outermost buckets, or percentiles clamp wrongly. */
    if (rc == 0 && count == 0 && (min != 0 || max != 0))
        rc = sm_error_set(err, SM_EINVAL,
                          "result: hist: min and max of an empty histogram "
                          "must be 0");
    if (rc == 0 && min > max)
        rc = sm_error_set(err, SM_EINVAL, "result: hist: min %" PRIu64 " is above max %" PRIu64,
                          min, max);
    if (rc == 0 && count != 0 && sm_hist_index(min) != first)
        rc = sm_error_set(err, SM_EINVAL,
                          "result: hist: min %" PRIu64 " is not in the first bucket %zu", min,
                          first);
    if (rc == 0 && count != 0 && sm_hist_index(max) != last)
        rc = sm_error_set(err, SM_EINVAL,
                          "result: hist: max %" PRIu64 " is not in the last bucket %zu", max, last);
    if (rc != 0) {
        sm_hist_free(h);
        return rc;
    }
    sm_hist_set_extremes(h, min, max);
    *out = h;
    return 0;
}

static int metrics_from_json(const cJSON *o, sm_result *r, sm_error *err)
{
    if (!cJSON_IsObject(o))
        return sm_error_set(err, SM_EPARSE, "result: metrics: expected an object");
    const cJSON *item;
    cJSON_ArrayForEach(item, o)
    {
        sm_metric m;
        if (sm_metric_lookup(item->string, &m) != 0)
            return sm_error_set(err, SM_EPARSE, "result: metrics: unknown metric '%s'",
                                item->string);
        if (sm_result_has(r, m))
            return sm_error_set(err, SM_EPARSE, "result: metrics: duplicate metric '%s'",
                                item->string);
        /* cJSON turns 1e999 into inf, which no metric may be. */
        if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble))
            return sm_error_set(err, SM_EPARSE, "result: metrics: %s: expected a finite number",
                                item->string);
        sm_result_set(r, m, item->valuedouble);
    }
    return 0;
}

/* ---- the host block ---- */

static const char *const host_keys[] = {
    "job_ms",      "cpu_ticks",    "steal_ticks", "iowait_ticks",     "steal_pct",
    "iowait_pct",  "load1_before", "load1_after", "runnable_before",  "runnable_after",
    "ncpu",        "nivcsw_tx",    "nivcsw_rx",   "runq_us_tx",       "runq_us_rx",
    "cpu_mhz_tx",  "cpu_mhz_rx",   "disturbed",   "disturbed_reason", "oncpu_us_tx",
    "oncpu_us_rx", "same_cpu"};

/* A count that may be null (unknown): *known says which; 0 or an SM_E code. */
static int host_uint(const cJSON *o, const char *key, uint64_t max, bool *known, uint64_t *v,
                     sm_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    *known = false;
    *v = 0;
    if (item == NULL || cJSON_IsNull(item))
        return 0;
    int rc = sm_json_get_uint(item, "result: host", key, max, true, v, err);
    *known = rc == 0;
    return rc;
}

/* A finite number or null (NaN). */
static int host_double(const cJSON *o, const char *key, double *v, sm_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    *v = NAN;
    if (item == NULL || cJSON_IsNull(item))
        return 0;
    if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble < 0)
        return sm_error_set(err, SM_EPARSE, "result: host: %s: expected a number >= 0 or null",
                            key);
    *v = item->valuedouble;
    return 0;
}

/* The shares (steal_pct, iowait_pct) are derived from the ticks and read back from them. */
static int host_from_json(const cJSON *o, sm_host_state *h, sm_error *err)
{
    uint32_t seen = 0;
    int rc = sm_json_check_keys(o, "result: host", host_keys, sizeof host_keys[0],
                                sizeof host_keys / sizeof host_keys[0], 1u << 17, &seen, err);
    if (rc != 0)
        return rc;
    sm_host_state_init(h);
    h->known = true;
    bool k_total, k_steal, k_iowait, k;
    uint64_t v;
    if ((rc = host_double(o, "job_ms", &h->job_ms, err)) ||
        (rc = host_double(o, "load1_before", &h->load1_before, err)) ||
        (rc = host_double(o, "load1_after", &h->load1_after, err)) ||
        (rc = host_uint(o, "cpu_ticks", UINT64_MAX, &k_total, &h->ticks_total, err)) ||
        (rc = host_uint(o, "steal_ticks", UINT64_MAX, &k_steal, &h->ticks_steal, err)) ||
        (rc = host_uint(o, "iowait_ticks", UINT64_MAX, &k_iowait, &h->ticks_iowait, err)))
        return rc;
    h->stat_known = k_total && k_steal && k_iowait;
    static const struct {
        const char *key;
        uint64_t max;
        size_t off;
        int kind; /* 0: int32 (-1 unknown), 1: int64 (-1 unknown), 2: uint32 (0 unknown) */
    } ints[] = {
        {"runnable_before", INT32_MAX, offsetof(sm_host_state, runnable_before), 0},
        {"runnable_after", INT32_MAX, offsetof(sm_host_state, runnable_after), 0},
        {"ncpu", UINT32_MAX, offsetof(sm_host_state, ncpu), 2},
        {"nivcsw_tx", INT64_MAX, offsetof(sm_host_state, nivcsw_tx), 1},
        {"nivcsw_rx", INT64_MAX, offsetof(sm_host_state, nivcsw_rx), 1},
        {"runq_us_tx", INT64_MAX, offsetof(sm_host_state, runq_us_tx), 1},
        {"runq_us_rx", INT64_MAX, offsetof(sm_host_state, runq_us_rx), 1},
        {"oncpu_us_tx", INT64_MAX, offsetof(sm_host_state, oncpu_us_tx), 1},
        {"oncpu_us_rx", INT64_MAX, offsetof(sm_host_state, oncpu_us_rx), 1},
        {"cpu_mhz_tx", UINT32_MAX, offsetof(sm_host_state, mhz_tx), 2},
        {"cpu_mhz_rx", UINT32_MAX, offsetof(sm_host_state, mhz_rx), 2},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        if ((rc = host_uint(o, ints[i].key, ints[i].max, &k, &v, err)) != 0)
            return rc;
        char *at = (char *)h + ints[i].off;
        if (ints[i].kind == 0)
            *(int32_t *)(void *)at = k ? (int32_t)v : -1;
        else if (ints[i].kind == 1)
            *(int64_t *)(void *)at = k ? (int64_t)v : -1;
        else
            *(uint32_t *)(void *)at = k ? (uint32_t)v : 0;
    }
    const cJSON *dist = cJSON_GetObjectItemCaseSensitive(o, "disturbed");
    if (!cJSON_IsBool(dist))
        return sm_error_set(err, SM_EPARSE, "result: host: disturbed: expected true or false");
    h->disturbed = cJSON_IsTrue(dist);
    const cJSON *same = cJSON_GetObjectItemCaseSensitive(o, "same_cpu");
    if (same != NULL && !cJSON_IsBool(same))
        return sm_error_set(err, SM_EPARSE, "result: host: same_cpu: expected true or false");
    h->same_cpu = cJSON_IsTrue(same);
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(o, "disturbed_reason");
    if (reason != NULL && !cJSON_IsNull(reason)) {
        if (!cJSON_IsString(reason))
            return sm_error_set(err, SM_EPARSE,
                                "result: host: disturbed_reason: expected a string");
        copy_truncated(h->reason, sizeof h->reason, reason->valuestring);
    }
    return 0;
}

/* The largest CPU number a result may name (Linux's CONFIG_NR_CPUS tops out at 8192). */
#define SM_CPU_ID_MAX 65535u

static const char *const result_keys[] = {"ok",     "reason", "metrics", "sndbuf", "rcvbuf",
                                          "tx_cpu", "rx_cpu", "hist",    "host"};

static int result_from_json(const cJSON *o, sm_result *r, sm_error *err)
{
    uint32_t seen = 0;
    int rc = sm_json_check_keys(o, "result", result_keys, sizeof result_keys[0],
                                sizeof result_keys / sizeof result_keys[0], 1u << 0, &seen, err);
    if (rc != 0)
        return rc;
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(o, "ok");
    if (!cJSON_IsBool(ok))
        return sm_error_set(err, SM_EPARSE, "result: ok: expected true or false");
    r->ok = cJSON_IsTrue(ok);
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(o, "reason");
    if (reason != NULL) {
        if (!cJSON_IsString(reason))
            return sm_error_set(err, SM_EPARSE, "result: reason: expected a string");
        copy_truncated(r->reason, sizeof r->reason, reason->valuestring);
    }
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(o, "metrics");
    if (metrics != NULL && (rc = metrics_from_json(metrics, r, err)) != 0)
        return rc;
    static const struct {
        const char *key;
        uint64_t max;
        size_t off;
        bool is_cpu;
    } facts[] = {
        {"sndbuf", UINT32_MAX, offsetof(sm_result, sndbuf_eff), false},
        {"rcvbuf", UINT32_MAX, offsetof(sm_result, rcvbuf_eff), false},
        {"tx_cpu", SM_CPU_ID_MAX, offsetof(sm_result, tx_cpu), true},
        {"rx_cpu", SM_CPU_ID_MAX, offsetof(sm_result, rx_cpu), true},
    };
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, facts[i].key);
        uint64_t v;
        if (item == NULL)
            continue;
        if ((rc = sm_json_get_uint(item, "result", facts[i].key, facts[i].max, false, &v, err)) !=
            0)
            return rc;
        if (facts[i].is_cpu)
            *(int32_t *)((char *)r + facts[i].off) = (int32_t)v;
        else
            *(uint32_t *)((char *)r + facts[i].off) = (uint32_t)v;
    }
    /* A result stored before agents recorded the host has no block: not disturbed. */
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(o, "host");
    if (host != NULL && (rc = host_from_json(host, &r->host, err)) != 0)
        return rc;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, "hist");
    if (item != NULL)
        return hist_from_json(item, &r->hist, err);
    return 0;
}

int sm_codec_result_from_cjson(const cJSON *o, sm_result *out, sm_error *err)
{
    sm_result r;
    sm_result_init(&r);
    int rc = result_from_json(o, &r, err);
    if (rc != 0) {
        sm_result_fini(&r);
        sm_result_init(out);
        return rc;
    }
    *out = r;
    return 0;
}

int sm_codec_result_decode(const char *json, size_t len, sm_result *out, sm_error *err)
{
    cJSON *root = NULL;
    int rc = sm_json_parse_object(json, len, "result", &root, err);
    if (rc == 0)
        rc = sm_codec_result_from_cjson(root, out, err);
    else
        sm_result_init(out);
    cJSON_Delete(root);
    return rc;
}

/* ---- facts ---- */

static cJSON *facts_json(const sm_facts *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *load = NULL;
    bool ok =
        o != NULL && PUT_FIXED(o, "hostname", f->hostname) && PUT_FIXED(o, "kernel", f->kernel) &&
        PUT_FIXED(o, "cpu_model", f->cpu_model) && sm_json_put_u64(o, "cores", f->cores) &&
        sm_json_put_u64(o, "mem_bytes", f->mem_bytes) &&
        PUT_FIXED(o, "congestion", f->congestion) && sm_json_put_u64(o, "lo_mtu", f->lo_mtu) &&
        (load = cJSON_AddArrayToObject(o, "loadavg")) != NULL;
    for (int i = 0; ok && i < 3; i++)
        ok = sm_json_append(load, sm_json_double(f->loadavg[i]));
    ok = ok && sm_json_put_u64(o, "tcp_autocorking", f->tcp_autocorking);
    /* Left out when unknown, as an older agent leaves them out. */
    if (ok && f->boot_id[0])
        ok = PUT_FIXED(o, "boot_id", f->boot_id);
    if (ok && f->machine_id[0])
        ok = PUT_FIXED(o, "machine_id", f->machine_id);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *sm_codec_facts_encode(const sm_facts *f, sm_error *err)
{
    if (f == NULL) {
        sm_error_set(err, SM_EINVAL, "facts: nothing to encode");
        return NULL;
    }
    return sm_json_finish(facts_json(f), true, 0, "facts", err);
}

/* Every key is required but the machine's identity, which agents before it did not send. */
enum { FACT_BOOT_ID = 9, FACT_MACHINE_ID, FACT__COUNT };
static const char *const facts_keys[FACT__COUNT] = {
    "hostname", "kernel",  "cpu_model",       "cores",   "mem_bytes", "congestion",
    "lo_mtu",   "loadavg", "tcp_autocorking", "boot_id", "machine_id"};
#define FACTS_REQUIRED ((1u << FACT_BOOT_ID) - 1)

/* A string longer than its field is refused, not cut: a cut hostname names another host. */
static int facts_string(const cJSON *o, const char *key, char *dst, size_t cap, sm_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(item))
        return sm_error_set(err, SM_EPARSE, "facts: %s: expected a string", key);
    size_t n = strlen(item->valuestring);
    if (n >= cap)
        return sm_error_set(err, SM_EINVAL, "facts: %s: %zu bytes is above the maximum %zu", key, n,
                            cap - 1);
    memcpy(dst, item->valuestring, n + 1);
    return 0;
}

#define FACTS_STRING(o, key, f, field, err)                                                        \
    facts_string((o), (key), (f)->field, sizeof(f)->field, (err))

/* A boot id is a UUID, a machine id 32 hex digits: anything else is not an identity (and an
 * empty one would make every agent that sent it one machine). */
static int facts_id(const cJSON *o, const char *key, char *dst, size_t cap, sm_error *err)
{
    int rc = facts_string(o, key, dst, cap, err);
    if (rc != 0)
        return rc;
    if (dst[0] == '\0' || dst[strspn(dst, "0123456789abcdefABCDEF-")] != '\0')
        return sm_error_set(err, SM_EINVAL, "facts: %s: expected hex digits and '-'", key);
    return 0;
}

/* Load averages count runnable tasks, and Linux has at most PID_MAX_LIMIT (2^22) of them. */
#define LOADAVG_MAX 4194304.0

static int loadavg_from_json(const cJSON *a, double out[3], sm_error *err)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 3)
        return sm_error_set(err, SM_EPARSE, "facts: loadavg: expected an array of 3 numbers");
    const cJSON *item;
    int i = 0;
    cJSON_ArrayForEach(item, a)
    {
        /* null is how the encoder writes a value that is not finite. */
        if (cJSON_IsNull(item)) {
            out[i++] = NAN;
            continue;
        }
        if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble))
            return sm_error_set(err, SM_EPARSE, "facts: loadavg: expected finite numbers");
        double v = item->valuedouble;
        /* -1 is agent/facts.c's "getloadavg failed". */
        if (v != -1 && (v < 0 || v > LOADAVG_MAX))
            return sm_error_set(err, SM_EINVAL,
                                "facts: loadavg: %g is outside 0..%.0f (or -1, unknown)", v,
                                LOADAVG_MAX);
        out[i++] = v;
    }
    return 0;
}

static int facts_from_json(const cJSON *o, sm_facts *f, sm_error *err)
{
    uint32_t seen = 0;
    size_t n_keys = sizeof facts_keys / sizeof facts_keys[0];
    int rc = sm_json_check_keys(o, "facts", facts_keys, sizeof facts_keys[0], n_keys,
                                FACTS_REQUIRED, &seen, err);
    uint64_t cores = 0, mem = 0, mtu = 0, autocork = 0;
    if (rc == 0 && (rc = FACTS_STRING(o, "hostname", f, hostname, err)) == 0 &&
        (rc = FACTS_STRING(o, "kernel", f, kernel, err)) == 0 &&
        (rc = FACTS_STRING(o, "cpu_model", f, cpu_model, err)) == 0 &&
        (rc = FACTS_STRING(o, "congestion", f, congestion, err)) == 0 &&
        (rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "cores"), "facts", "cores",
                               SM_CPU_ID_MAX + 1u, false, &cores, err)) == 0 &&
        (rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "mem_bytes"), "facts",
                               "mem_bytes", UINT64_MAX, true, &mem, err)) == 0 &&
        (rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "lo_mtu"), "facts", "lo_mtu",
                               UINT32_MAX, false, &mtu, err)) == 0 &&
        /* 0 and 1 are the sysctl's values, 2 is "unknown" (facts.h). */
        (rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "tcp_autocorking"), "facts",
                               "tcp_autocorking", 2, false, &autocork, err)) == 0)
        rc = loadavg_from_json(cJSON_GetObjectItemCaseSensitive(o, "loadavg"), f->loadavg, err);
    if (rc == 0 && (seen & 1u << FACT_BOOT_ID))
        rc = facts_id(o, "boot_id", f->boot_id, sizeof f->boot_id, err);
    if (rc == 0 && (seen & 1u << FACT_MACHINE_ID))
        rc = facts_id(o, "machine_id", f->machine_id, sizeof f->machine_id, err);
    if (rc != 0)
        return rc;
    f->cores = (uint32_t)cores;
    f->mem_bytes = mem;
    f->lo_mtu = (uint32_t)mtu;
    f->tcp_autocorking = (uint32_t)autocork;
    return 0;
}

int sm_codec_facts_from_cjson(const cJSON *o, sm_facts *out, sm_error *err)
{
    sm_facts f;
    memset(&f, 0, sizeof f);
    int rc = facts_from_json(o, &f, err);
    if (rc == 0)
        *out = f;
    else
        memset(out, 0, sizeof *out);
    return rc;
}

int sm_codec_facts_decode(const char *json, size_t len, sm_facts *out, sm_error *err)
{
    cJSON *root = NULL;
    int rc = sm_json_parse_object(json, len, "facts", &root, err);
    if (rc == 0)
        rc = sm_codec_facts_from_cjson(root, out, err);
    else
        memset(out, 0, sizeof *out);
    cJSON_Delete(root);
    return rc;
}

/* ---- report ---- */

/* A sample: its repetition, the job's facts (buffers, CPUs) and its metrics. */
static cJSON *sample_json(const sm_result *r, size_t repetition)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put_u64(o, "repetition", repetition) && put_job_facts(o, r);
    if (ok && r->host.known)
        ok = sm_json_put(o, "host", host_json(&r->host));
    if (!ok || !put_metrics(o, r)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *failure_json(const sm_result *r, size_t repetition, bool warmup)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put_u64(o, "repetition", repetition) &&
              PUT_FIXED(o, "reason", r->reason);
    /* Not in the documented shape: without it a failed warm-up would vanish from the report. */
    if (ok && warmup)
        ok = sm_json_put_bool(o, "warmup", true);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Ok results go to `samples`, failed ones to `failures`, repetitions numbered from 1 as the
 * table and the CSV number them. */
static bool put_results(cJSON *samples, cJSON *failures, const sm_result *r, size_t n, bool warmup)
{
    for (size_t i = 0; i < n; i++) {
        bool ok = r[i].ok ? sm_json_append(samples, sample_json(&r[i], i + 1))
                          : sm_json_append(failures, failure_json(&r[i], i + 1, warmup));
        if (!ok)
            return false;
    }
    return true;
}

static bool put_summary_fields(cJSON *o, const sm_summary *s)
{
    return sm_json_put_u64(o, "n", s->n) && sm_json_put_double(o, "median", s->median) &&
           sm_json_put_double(o, "mean", s->mean) && sm_json_put_double(o, "stddev", s->stddev) &&
           sm_json_put_double(o, "min", s->min) && sm_json_put_double(o, "max", s->max) &&
           sm_json_put_double(o, "ci95_low", s->ci95_low) &&
           sm_json_put_double(o, "ci95_high", s->ci95_high) &&
           sm_json_put_double(o, "ci_coverage", s->ci_coverage) &&
           sm_json_put_double(o, "cv", s->cv);
}

static bool put_summaries(cJSON *o, const sm_cell_report *c)
{
    for (unsigned m = 0; m < SM_M__COUNT; m++) {
        if (!(c->summary_have & (1ull << m)))
            continue;
        cJSON *s = cJSON_AddObjectToObject(o, sm_metric_name((sm_metric)m));
        if (s == NULL || !put_summary_fields(s, &c->summary[m]))
            return false;
    }
    return true;
}

static cJSON *cell_json(const sm_cell_report *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *samples = NULL, *warmup = NULL, *failures = NULL, *summary = NULL;
    bool ok =
        o != NULL && sm_json_put_str(o, "workload", sm_workload_name(c->params.workload)) &&
        sm_json_put_str(o, "transport", sm_transport_name(c->params.transport)) &&
        PUT_FIXED(o, "variant", c->variant) && sm_json_put(o, "params", params_json(&c->params)) &&
        (sm_reps_stop_name(c->stopped)
             ? sm_json_put_str(o, "stopped", sm_reps_stop_name(c->stopped))
             : cJSON_AddNullToObject(o, "stopped") != NULL) &&
        (samples = cJSON_AddArrayToObject(o, "samples")) != NULL &&
        (warmup = cJSON_AddArrayToObject(o, "warmup_samples")) != NULL &&
        (failures = cJSON_AddArrayToObject(o, "failures")) != NULL &&
        (summary = cJSON_AddObjectToObject(o, "summary")) != NULL &&
        put_results(samples, failures, c->samples, c->n_samples, false) &&
        put_results(warmup, failures, c->warmup, c->n_warmup, true) && put_summaries(summary, c);
    /* The ok samples whose host was disturbed (in `samples`, each with its host block). */
    size_t disturbed = 0;
    for (size_t i = 0; i < c->n_samples; i++)
        disturbed += c->samples[i].ok && c->samples[i].host.disturbed;
    ok = ok && sm_json_put_u64(o, "disturbed", disturbed);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *ratio_json(const sm_ratio *r)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put_str(o, "metric", sm_metric_name(r->metric)) &&
              PUT_FIXED(o, "numerator", r->numerator) &&
              PUT_FIXED(o, "denominator", r->denominator) &&
              sm_json_put_u64(o, "n", r->summary.n) &&
              sm_json_put_double(o, "median", r->summary.median) &&
              sm_json_put_double(o, "ci95_low", r->summary.ci95_low) &&
              sm_json_put_double(o, "ci95_high", r->summary.ci95_high) &&
              sm_json_put_double(o, "ci_coverage", r->summary.ci_coverage);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *sm_codec_report_encode(const sm_report *r, int pretty, sm_error *err)
{
    if (r == NULL) {
        sm_error_set(err, SM_EINVAL, "report: nothing to encode");
        return NULL;
    }
    cJSON *root = cJSON_CreateObject();
    cJSON *cells = NULL, *ratios = NULL;
    bool ok = root != NULL && sm_json_put_u64(root, "version", 1) &&
              sm_json_put(root, "host", facts_json(&r->facts)) &&
              (cells = cJSON_AddArrayToObject(root, "cells")) != NULL &&
              (ratios = cJSON_AddArrayToObject(root, "ratios")) != NULL;
    for (size_t i = 0; ok && i < r->n_cells; i++)
        ok = sm_json_append(cells, cell_json(&r->cells[i]));
    for (size_t i = 0; ok && i < r->n_ratios; i++)
        ok = sm_json_append(ratios, ratio_json(&r->ratios[i]));
    return sm_json_finish(root, ok, pretty, "report", err);
}

/* ---- shared with msg.c through codec_internal.h ---- */

cJSON *sm_codec_params_to_cjson(const sm_params *p)
{
    return params_json(p);
}

cJSON *sm_codec_result_to_cjson(const sm_result *r)
{
    return result_json(r);
}

cJSON *sm_codec_facts_to_cjson(const sm_facts *f)
{
    return facts_json(f);
}
