/* JSON codec of a job's result: its metrics, the job's facts, the host block and the latency
 * histogram. */
#include "proto/codec.h"
#include "proto/codec_internal.h"
#include "proto/json.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
bool sm_codec_put_metrics(cJSON *o, const sm_result *r)
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
bool sm_codec_put_job_facts(cJSON *o, const sm_result *r)
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

cJSON *sm_codec_host_to_cjson(const sm_host_state *h)
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
        SM_CODEC_PUT_FIXED(o, "disturbed_reason", h->reason);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *sm_codec_result_to_cjson(const sm_result *r)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put_bool(o, "ok", r->ok);
    if (ok && !r->ok)
        ok = SM_CODEC_PUT_FIXED(o, "reason", r->reason);
    if (ok && (r->ok || r->have != 0)) {
        cJSON *metrics = cJSON_AddObjectToObject(o, "metrics");
        ok = metrics != NULL && sm_codec_put_metrics(metrics, r);
    }
    if (ok)
        ok = sm_codec_put_job_facts(o, r);
    if (ok && r->host.known)
        ok = sm_json_put(o, "host", sm_codec_host_to_cjson(&r->host));
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
    return sm_json_finish(sm_codec_result_to_cjson(r), true, 0, "result", err);
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
        if (index >= sm_hist_bucket_count())
            return sm_error_set(err, SM_EINVAL,
                                "result: hist: bucket index %" PRIu64 " is above the maximum %zu",
                                index, sm_hist_bucket_count() - 1);
        if (sm_hist_set_bucket(h, (size_t)index, count) != 0)
            return sm_error_set(err, SM_ENOMEM, "result: hist: out of memory");
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
    const char *unit = NULL;
    if ((rc = sm_json_get_string(o, "result: hist", "unit", &unit, err)) != 0)
        return rc;
    if (strcmp(unit, "ns") != 0)
        return sm_error_set(err, SM_EINVAL, "result: hist: unit: '%s' is not ns", unit);
    uint64_t min, max, count;
    if ((rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "min"), "result: hist", "min",
                               UINT64_MAX, true, &min, err)) != 0 ||
        (rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "max"), "result: hist", "max",
                               UINT64_MAX, true, &max, err)) != 0 ||
        (rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "count"), "result: hist",
                               "count", UINT64_MAX, true, &count, err)) != 0)
        return rc;
    /* Sparse, sized to the buckets sent: the coordinator holds every result of a run at once
     * when it builds a report, and a dense histogram is 221 KB whatever it holds. */
    const cJSON *buckets = cJSON_GetObjectItemCaseSensitive(o, "buckets");
    sm_hist *h =
        sm_hist_new_sparse(cJSON_IsArray(buckets) ? (size_t)cJSON_GetArraySize(buckets) : 0);
    if (h == NULL)
        return sm_error_set(err, SM_ENOMEM, "result: hist: out of memory");
    uint64_t sum = 0;
    size_t first = 0, last = 0;
    rc = hist_buckets_from_json(buckets, h, &sum, &first, &last, err);
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
