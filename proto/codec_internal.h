/* Private to proto/: codec.c's cJSON builders, parsers and helpers, shared with msg.c. */
#ifndef SM_PROTO_CODEC_INTERNAL_H
#define SM_PROTO_CODEC_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"

/* Builders return a new tree the caller owns (cJSON_Delete), or NULL when out of memory. The
 * shapes are those of codec.h. */
cJSON *sm_codec_params_to_cjson(const sm_params *p);
cJSON *sm_codec_result_to_cjson(const sm_result *r);
cJSON *sm_codec_facts_to_cjson(const sm_facts *f);

/* Parsers read the tree o (still the caller's) with every check of the matching *_decode, and
 * their reasons start with "params: ", "result: " or "facts: ". *out is written only on
 * success; on failure params and facts are zeroed and a result is left sm_result_init'd.
 * A decoded result owns its histogram. */
int sm_codec_params_from_cjson(const cJSON *o, sm_params *out, sm_error *err);
int sm_codec_result_from_cjson(const cJSON *o, sm_result *out, sm_error *err);
int sm_codec_facts_from_cjson(const cJSON *o, sm_facts *out, sm_error *err);

/* ---- helpers ---- */

/* An unsigned integer written exactly: a raw JSON number up to 2^53 - 1, a decimal string
 * above. NULL when out of memory. */
cJSON *sm_codec_u64_item(uint64_t v);

/* A double written exactly: the shortest of %.15g..%.17g that reads back as the same value
 * (cJSON's own %1.15g is not exact), null when not finite. NULL when out of memory. */
cJSON *sm_codec_double_item(double v);

/* Add item to object o under key / to an array; on failure delete item and return false. A NULL
 * item (a builder that ran out of memory) is a failure. */
bool sm_codec_put_item(cJSON *o, const char *key, cJSON *item);
bool sm_codec_append(cJSON *array, cJSON *item);

/* A struct's char array of cap bytes as a string (item, or member of o under key), read no
 * further than cap even when it lacks its NUL; at most 256 bytes are kept. */
cJSON *sm_codec_fixed_item(const char *s, size_t cap);
bool sm_codec_put_fixed(cJSON *o, const char *key, const char *s, size_t cap);

/* Prints root compact (or pretty) when ok, deletes it, and returns the text (free()) or NULL
 * with SM_ENOMEM naming `what`. */
char *sm_codec_finish(cJSON *root, bool ok, int pretty, const char *what, sm_error *err);

/* Parses json[0..len) (no NUL needed) as one object with nothing but whitespace after it.
 * *out is the caller's to cJSON_Delete. SM_EINVAL for NULL text, SM_EPARSE otherwise. */
int sm_codec_parse_object(const char *json, size_t len, const char *what, cJSON **out,
                          sm_error *err);

/* Checks that every key of object o is one of the n names at the start of structs of `stride`
 * bytes in table (an array of const char * works with stride sizeof(char *)), none twice, and
 * that every entry whose bit (1 << index) is in `required` is present. n <= 32. *seen gets the
 * bits of the keys present. Reasons: "WHAT: unknown field 'x'", "WHAT: duplicate field 'x'",
 * "WHAT: missing field 'x'", all SM_EPARSE. */
int sm_codec_check_keys(const cJSON *o, const char *what, const void *table, size_t stride,
                        size_t n, uint32_t required, uint32_t *seen, sm_error *err);

/* An unsigned integer of at most max: an integral, finite, non-negative JSON number below
 * 2^53, or (when allow_string) a decimal string. Wrong shapes are SM_EPARSE, values above max
 * SM_EINVAL; reasons read "WHAT: FIELD: ...". */
int sm_codec_get_uint(const cJSON *item, const char *what, const char *field, uint64_t max,
                      bool allow_string, uint64_t *out, sm_error *err);

#endif
