/* cJSON helpers for every module that reads or writes JSON: exact numbers, adds that own
 * their item on failure, the checked parse of one object, key checks and unsigned integers. */
#include "proto/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/params.h"

/* Doubles hold every integer below 2^53 exactly. 2^53 itself is excluded because 2^53 + 1
 * parses to it, so a number at or above it may already be someone else's rounding. */
#define JSON_INT_MAX ((1ull << 53) - 1)

/* Longest fixed-size string field we copy out of a struct (sm_facts.hostname). */
#define FIXED_STR_MAX 256

/* ---- encoding helpers: each returns false (or NULL) only when out of memory ---- */

/* Integers are printed by us and added raw: cJSON 1.7.15 prints numbers with %1.15g and
 * accepts the result when it is merely within DBL_EPSILON, so 9007199254740991 would come out
 * as 9.00719925474099e+15. */
cJSON *sm_json_u64(uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return v <= JSON_INT_MAX ? cJSON_CreateRaw(buf) : cJSON_CreateString(buf);
}

/* The shortest of %.15g..%.17g that reads back as the same double, for the reason above. */
cJSON *sm_json_double(double v)
{
    if (!isfinite(v))
        return cJSON_CreateNull();
    char buf[32];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return cJSON_CreateRaw(buf);
}

bool sm_json_exact_numbers(cJSON *o)
{
    for (cJSON *c = o ? o->child : NULL; c; c = c->next) {
        if (cJSON_IsNumber(c)) {
            cJSON *raw = sm_json_double(c->valuedouble);
            /* the replacement takes c's key (cJSON's default allocator: malloc and free) */
            if (raw && c->string && !(raw->string = strdup(c->string))) {
                cJSON_Delete(raw);
                raw = NULL;
            }
            if (!raw)
                return false;
            cJSON_ReplaceItemViaPointer(o, c, raw); /* frees c */
            c = raw;
        } else if ((cJSON_IsArray(c) || cJSON_IsObject(c)) && !sm_json_exact_numbers(c)) {
            return false;
        }
    }
    return true;
}

bool sm_json_put(cJSON *o, const char *key, cJSON *item)
{
    if (item == NULL)
        return false;
    if (!cJSON_AddItemToObject(o, key, item)) {
        cJSON_Delete(item);
        return false;
    }
    return true;
}

bool sm_json_append(cJSON *array, cJSON *item)
{
    if (item == NULL)
        return false;
    if (!cJSON_AddItemToArray(array, item)) {
        cJSON_Delete(item);
        return false;
    }
    return true;
}

cJSON *sm_json_u64_str(uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_CreateString(buf);
}

bool sm_json_put_u64_str(cJSON *o, const char *key, uint64_t v)
{
    return sm_json_put(o, key, sm_json_u64_str(v));
}

bool sm_json_put_u64(cJSON *o, const char *key, uint64_t v)
{
    return sm_json_put(o, key, sm_json_u64(v));
}

bool sm_json_put_double(cJSON *o, const char *key, double v)
{
    return sm_json_put(o, key, sm_json_double(v));
}

bool sm_json_put_str(cJSON *o, const char *key, const char *s)
{
    return cJSON_AddStringToObject(o, key, s) != NULL;
}

/* Struct char arrays are copied through strnlen so an unterminated one cannot be overread. */
cJSON *sm_json_fixed(const char *s, size_t cap)
{
    char buf[FIXED_STR_MAX + 1];
    size_t n = strnlen(s, cap < FIXED_STR_MAX ? cap : FIXED_STR_MAX);
    memcpy(buf, s, n);
    buf[n] = '\0';
    return cJSON_CreateString(buf);
}

bool sm_json_put_fixed(cJSON *o, const char *key, const char *s, size_t cap)
{
    return sm_json_put(o, key, sm_json_fixed(s, cap));
}

bool sm_json_put_bool(cJSON *o, const char *key, bool b)
{
    return cJSON_AddBoolToObject(o, key, b) != NULL;
}

/* Deletes root; returns the text or NULL with SM_ENOMEM. */
char *sm_json_finish(cJSON *root, bool ok, int pretty, const char *what, sm_error *err)
{
    char *text = NULL;
    if (ok && root != NULL)
        text = pretty ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (text == NULL)
        sm_error_set(err, SM_ENOMEM, "%s: out of memory while encoding", what);
    return text;
}

/* ---- decoding helpers ---- */

/* Parses json[0..len) as one object and nothing but whitespace after it. */
int sm_json_parse_object(const char *json, size_t len, const char *what, cJSON **out, sm_error *err)
{
    if (json == NULL)
        return sm_error_set(err, SM_EINVAL, "%s: no JSON text", what);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (root == NULL) {
        size_t at = end != NULL && end >= json ? (size_t)(end - json) : 0;
        return sm_error_set(err, SM_EPARSE, "%s: invalid JSON at byte %zu", what, at);
    }
    for (size_t i = (size_t)(end - json); i < len; i++) {
        /* strchr() would match a NUL byte against the terminator of its own string. */
        if (json[i] == '\0' || strchr(" \t\r\n", json[i]) == NULL) {
            cJSON_Delete(root);
            return sm_error_set(err, SM_EPARSE, "%s: junk after the JSON value at byte %zu", what,
                                i);
        }
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return sm_error_set(err, SM_EPARSE, "%s: expected a JSON object", what);
    }
    *out = root;
    return 0;
}

/* The name of entry i of a table of n structs of `stride` bytes whose first member is it. */
static const char *key_at(const void *table, size_t stride, size_t i)
{
    return *(const char *const *)(const void *)((const char *)table + i * stride);
}

/* Checks that every key of object o is a name in table (see key_at), none twice, and every
 * entry whose bit is in `required` present. Sets *seen to the bit mask of the keys present. */
int sm_json_check_keys(const cJSON *o, const char *what, const void *table, size_t stride, size_t n,
                       uint32_t required, uint32_t *seen, sm_error *err)
{
    if (!cJSON_IsObject(o))
        return sm_error_set(err, SM_EPARSE, "%s: expected an object", what);
    uint32_t mask = 0;
    const cJSON *child;
    cJSON_ArrayForEach(child, o)
    {
        size_t i = 0;
        while (i < n && strcmp(child->string, key_at(table, stride, i)) != 0)
            i++;
        if (i == n)
            return sm_error_set(err, SM_EPARSE, "%s: unknown field '%s'", what, child->string);
        /* cJSON keeps duplicate keys; which one wins would be an accident of the parser. */
        if (mask & (1u << i))
            return sm_error_set(err, SM_EPARSE, "%s: duplicate field '%s'", what, child->string);
        mask |= 1u << i;
    }
    uint32_t missing = required & ~mask;
    for (size_t i = 0; i < n; i++)
        if (missing & (1u << i))
            return sm_error_set(err, SM_EPARSE, "%s: missing field '%s'", what,
                                key_at(table, stride, i));
    *seen = mask;
    return 0;
}

/* An unsigned integer of at most max: a JSON number that is integral, finite, non-negative
 * and below 2^53, or (when allow_string) a decimal string. Shape errors are SM_EPARSE, a
 * well-formed value above max is SM_EINVAL. */
int sm_json_get_uint(const cJSON *item, const char *what, const char *field, uint64_t max,
                     bool allow_string, uint64_t *out, sm_error *err)
{
    uint64_t v;
    if (allow_string && cJSON_IsString(item)) {
        if (sm_parse_u64(item->valuestring, &v) != 0)
            return sm_error_set(err, SM_EPARSE, "%s: %s: '%s' is not an unsigned decimal", what,
                                field, item->valuestring);
    } else if (cJSON_IsNumber(item)) {
        double d = item->valuedouble;
        if (!isfinite(d) || d < 0 || d != floor(d))
            return sm_error_set(err, SM_EPARSE, "%s: %s: %g is not an unsigned integer", what,
                                field, d);
        if (d > (double)max)
            return sm_error_set(err, SM_EINVAL, "%s: %s: %.17g is above the maximum %" PRIu64, what,
                                field, d, max);
        if (d > (double)JSON_INT_MAX)
            return sm_error_set(err, SM_EINVAL,
                                "%s: %s: %.17g is above the maximum %llu of a JSON number, "
                                "send a decimal string",
                                what, field, d, JSON_INT_MAX);
        v = (uint64_t)d;
    } else {
        return sm_error_set(err, SM_EPARSE, "%s: %s: expected an unsigned integer%s", what, field,
                            allow_string ? " or a decimal string" : "");
    }
    if (v > max)
        return sm_error_set(err, SM_EINVAL, "%s: %s: %" PRIu64 " is above the maximum %" PRIu64,
                            what, field, v, max);
    *out = v;
    return 0;
}

int sm_json_get_string(const cJSON *o, const char *what, const char *field, const char **out,
                       sm_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!cJSON_IsString(item))
        return sm_error_set(err, SM_EPARSE, "%s: %s: expected a string", what, field);
    *out = item->valuestring;
    return 0;
}

int sm_json_get_array(const cJSON *o, const char *what, const char *field, size_t max,
                      const cJSON **out, sm_error *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!cJSON_IsArray(a))
        return sm_error_set(err, SM_EPARSE, "%s: %s: expected an array", what, field);
    size_t n = (size_t)cJSON_GetArraySize(a);
    if (n > max)
        return sm_error_set(err, SM_EINVAL, "%s: %s: %zu entries is above the maximum %zu", what,
                            field, n, max);
    *out = a;
    return 0;
}
