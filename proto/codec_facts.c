/* JSON codec of host facts: the machine an agent runs on. */
#include "proto/codec.h"
#include "proto/codec_internal.h"
#include "proto/json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

cJSON *sm_codec_facts_to_cjson(const sm_facts *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *load = NULL;
    bool ok = o != NULL && SM_CODEC_PUT_FIXED(o, "hostname", f->hostname) &&
              SM_CODEC_PUT_FIXED(o, "kernel", f->kernel) &&
              SM_CODEC_PUT_FIXED(o, "cpu_model", f->cpu_model) &&
              sm_json_put_u64(o, "cores", f->cores) &&
              sm_json_put_u64(o, "mem_bytes", f->mem_bytes) &&
              SM_CODEC_PUT_FIXED(o, "congestion", f->congestion) &&
              sm_json_put_u64(o, "lo_mtu", f->lo_mtu) &&
              (load = cJSON_AddArrayToObject(o, "loadavg")) != NULL;
    for (int i = 0; ok && i < 3; i++)
        ok = sm_json_append(load, sm_json_double(f->loadavg[i]));
    ok = ok && sm_json_put_u64(o, "tcp_autocorking", f->tcp_autocorking);
    /* Left out when unknown, as an older agent leaves them out. */
    if (ok && f->boot_id[0])
        ok = SM_CODEC_PUT_FIXED(o, "boot_id", f->boot_id);
    if (ok && f->machine_id[0])
        ok = SM_CODEC_PUT_FIXED(o, "machine_id", f->machine_id);
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
    return sm_json_finish(sm_codec_facts_to_cjson(f), true, 0, "facts", err);
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
    const char *s = NULL;
    int rc = sm_json_get_string(o, "facts", key, &s, err);
    if (rc != 0)
        return rc;
    size_t n = strlen(s);
    if (n >= cap)
        return sm_error_set(err, SM_EINVAL, "facts: %s: %zu bytes is above the maximum %zu", key, n,
                            cap - 1);
    memcpy(dst, s, n + 1);
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
        /* -1 is agent/host/facts.c's "getloadavg failed". */
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
