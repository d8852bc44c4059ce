/* JSON codec of params, results, facts and reports: text in, text out, the cJSON it works with
 * kept inside proto/ (docs/design.md, "Where JSON is parsed", names who else may use cJSON). */
#ifndef SM_PROTO_CODEC_H
#define SM_PROTO_CODEC_H

#include "proto/err.h"
#include "proto/facts.h"
#include "proto/params.h"
#include "proto/report.h"
#include "proto/result.h"

/* All encoders return a NUL-terminated JSON text the caller frees with free(), or NULL with
 * err set (SM_ENOMEM). Decoders parse `json` (len bytes, no NUL needed), reject unknown keys,
 * wrong types, negative or fractional integers and values outside their bounds with
 * SM_EPARSE/SM_EINVAL and a reason naming the field; on failure *out is left zeroed/empty. */

/* {"workload":"stream","transport":"tcp","scope":"local","framing":"raw","msg_size":...}
 * Only fields that apply to the workload are written. 64-bit counts are JSON numbers while
 * they fit 2^53 and decimal strings above; the decoder takes either. The decoder validates
 * with sm_params_validate. */
char *sm_codec_params_encode(const sm_params *p, sm_error *err);
int sm_codec_params_decode(const char *json, size_t len, sm_params *out, sm_error *err);

/* {"ok":true,"metrics":{"bytes":...,...},"sndbuf":N,"rcvbuf":N,"hist":{"unit":"ns","min":N,
 *  "max":N,"buckets":[[index,count],...]}} or {"ok":false,"reason":"..."} (metrics may still
 * be present). The decoder takes ownership of nothing; *out must be sm_result_fini'd. A
 * decoded histogram is sparse (proto/hist.h): it holds only the buckets sent. */
char *sm_codec_result_encode(const sm_result *r, sm_error *err);
int sm_codec_result_decode(const char *json, size_t len, sm_result *out, sm_error *err);

/* {"hostname":...,"kernel":...,"cpu_model":...,"cores":N,"mem_bytes":N,"congestion":...,
 *  "lo_mtu":N,"loadavg":[a,b,c],"tcp_autocorking":N} */
char *sm_codec_facts_encode(const sm_facts *f, sm_error *err);
/* Every key required; strings must fit their fields (no truncation), cores <= 65536,
 * tcp_autocorking <= 2, loadavg 0..2^22 or -1 (unknown) or null (NaN). */
int sm_codec_facts_decode(const char *json, size_t len, sm_facts *out, sm_error *err);

/* The `--once --format json` document:
 * {"version":1,"host":{facts},"cells":[{"workload","transport","variant","params":{...},
 *   "samples":[{metric:value,...}],"warmup_samples":[...],"failures":[{"repetition","reason"}],
 *   "summary":{metric:{"n","median","mean","stddev","min","max","ci95_low","ci95_high",
 *   "ci_coverage","cv"}}}],
 *  "ratios":[{"metric","numerator","denominator","n","median","ci95_low","ci95_high",
 *   "ci_coverage"}]}
 * Pretty-printed when `pretty` is non-zero. */
char *sm_codec_report_encode(const sm_report *r, int pretty, sm_error *err);

#endif
