/* The codec's cJSON builders and parsers of params, results and facts, for the messages (msg*.c),
 * the coordinator's JSON that embeds them and the codec's own parts (codec_params.c,
 * codec_result.c, codec_facts.c, codec_report.c); the generic helpers are in proto/json.h. */
#ifndef SM_PROTO_CODEC_INTERNAL_H
#define SM_PROTO_CODEC_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"
#include "proto/json.h"

/* The largest CPU number a result or the facts may name (Linux's CONFIG_NR_CPUS tops out at
 * 8192). */
#define SM_CPU_ID_MAX 65535u

/* sm_json_put_fixed of a struct's char array, its capacity taken from the array. */
#define SM_CODEC_PUT_FIXED(o, key, array) sm_json_put_fixed((o), (key), (array), sizeof(array))

/* Builders return a new tree the caller owns (cJSON_Delete), or NULL when out of memory. The
 * shapes are those of codec.h. */
cJSON *sm_codec_params_to_cjson(const sm_params *p);
cJSON *sm_codec_result_to_cjson(const sm_result *r);
cJSON *sm_codec_facts_to_cjson(const sm_facts *f);

/* Pieces of a result that the report (codec_report.c) writes into its samples too. */
cJSON *sm_codec_host_to_cjson(const sm_host_state *h);
/* Adds r's metrics that are present and finite to o; false when out of memory. */
bool sm_codec_put_metrics(cJSON *o, const sm_result *r);
/* Adds the job's known facts (sndbuf, rcvbuf, tx_cpu, rx_cpu) to o; false when out of memory. */
bool sm_codec_put_job_facts(cJSON *o, const sm_result *r);

/* Parsers read the tree o (still the caller's) with every check of the matching *_decode, and
 * their reasons start with "params: ", "result: " or "facts: ". *out is written only on
 * success; on failure params and facts are zeroed and a result is left sm_result_init'd.
 * A decoded result owns its histogram. */
int sm_codec_params_from_cjson(const cJSON *o, sm_params *out, sm_error *err);
int sm_codec_result_from_cjson(const cJSON *o, sm_result *out, sm_error *err);
int sm_codec_facts_from_cjson(const cJSON *o, sm_facts *out, sm_error *err);

#endif
