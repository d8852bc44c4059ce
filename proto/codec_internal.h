/* codec.c's cJSON builders and parsers of params, results and facts, for the messages (msg.c)
 * and the coordinator's JSON that embeds them; the generic helpers are in proto/json.h. */
#ifndef SM_PROTO_CODEC_INTERNAL_H
#define SM_PROTO_CODEC_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"
#include "proto/json.h"

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

#endif
