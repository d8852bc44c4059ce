/* cJSON helpers for the places that read or write JSON with cJSON: the wire's codecs and
 * messages, and the coordinator's specs, API, exports and the CLI's views of the API's answers
 * (docs/design.md, "Where JSON is parsed", lists them; tests/check_includes.py holds to it). */
#ifndef SM_PROTO_JSON_H
#define SM_PROTO_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"

/* ---- building: each returns false (or NULL) only when out of memory ---- */

/* An unsigned integer written exactly: a raw JSON number up to 2^53 - 1, a decimal string
 * above (cJSON's own %1.15g would round it). */
cJSON *sm_json_u64(uint64_t v);

/* A double written exactly: the shortest of %.15g..%.17g that reads back as the same value
 * (cJSON's own %1.15g is not exact), null when not finite. */
cJSON *sm_json_double(double v);

/* Makes every number in the tree under o (a parsed document, say) print exactly: each becomes
 * the raw text of sm_json_double. cJSON_Print of a parsed tree would write 15 digits, and a
 * figure passed on would then differ from its source. False when out of memory (the numbers
 * done so far stay done). */
bool sm_json_exact_numbers(cJSON *o);

/* Add item to object o under key / to an array; on failure delete item and return false. A NULL
 * item (a builder that ran out of memory) is a failure. */
bool sm_json_put(cJSON *o, const char *key, cJSON *item);
bool sm_json_append(cJSON *array, cJSON *item);

/* A 64-bit id or counter as a decimal string, whatever its size (JSON numbers are exact only
 * below 2^53, and an id's shape should not depend on its value). */
cJSON *sm_json_u64_str(uint64_t v);

/* sm_json_put of sm_json_u64 / sm_json_u64_str / sm_json_double / a string / a bool. */
bool sm_json_put_u64_str(cJSON *o, const char *key, uint64_t v);
bool sm_json_put_u64(cJSON *o, const char *key, uint64_t v);
bool sm_json_put_double(cJSON *o, const char *key, double v);
bool sm_json_put_str(cJSON *o, const char *key, const char *s);
bool sm_json_put_bool(cJSON *o, const char *key, bool b);

/* A struct's char array of cap bytes as a string (item, or member of o under key), read no
 * further than cap even when it lacks its NUL; at most 256 bytes are kept. */
cJSON *sm_json_fixed(const char *s, size_t cap);
bool sm_json_put_fixed(cJSON *o, const char *key, const char *s, size_t cap);

/* Prints root compact (or pretty) when ok, deletes it, and returns the text (free()) or NULL
 * with SM_ENOMEM naming `what`. */
char *sm_json_finish(cJSON *root, bool ok, int pretty, const char *what, sm_error *err);

/* ---- reading ---- */

/* Parses json[0..len) (no NUL needed) as one object with nothing but whitespace after it.
 * *out is the caller's to cJSON_Delete. SM_EINVAL for NULL text, SM_EPARSE otherwise. */
int sm_json_parse_object(const char *json, size_t len, const char *what, cJSON **out,
                         sm_error *err);

/* Checks that every key of object o is one of the n names at the start of structs of `stride`
 * bytes in table (an array of const char * works with stride sizeof(char *)), none twice, and
 * that every entry whose bit (1 << index) is in `required` is present. n <= 32. *seen gets the
 * bits of the keys present. Reasons: "WHAT: unknown field 'x'", "WHAT: duplicate field 'x'",
 * "WHAT: missing field 'x'", all SM_EPARSE. */
int sm_json_check_keys(const cJSON *o, const char *what, const void *table, size_t stride, size_t n,
                       uint32_t required, uint32_t *seen, sm_error *err);

/* Member `field` of o as a string (still o's): SM_EPARSE "WHAT: FIELD: expected a string". */
int sm_json_get_string(const cJSON *o, const char *what, const char *field, const char **out,
                       sm_error *err);

/* Member `field` of o as an array of at most max entries, its size checked before any walk:
 * SM_EPARSE "WHAT: FIELD: expected an array", SM_EINVAL "WHAT: FIELD: N entries is above the
 * maximum MAX". */
int sm_json_get_array(const cJSON *o, const char *what, const char *field, size_t max,
                      const cJSON **out, sm_error *err);

/* An unsigned integer of at most max: an integral, finite, non-negative JSON number below
 * 2^53, or (when allow_string) a decimal string. Wrong shapes are SM_EPARSE, values above max
 * SM_EINVAL; reasons read "WHAT: FIELD: ...". */
int sm_json_get_uint(const cJSON *item, const char *what, const char *field, uint64_t max,
                     bool allow_string, uint64_t *out, sm_error *err);

#endif
