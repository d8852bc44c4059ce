/* JSON encoder of the `--once --format json` report: cells, samples, summaries and ratios. */
#include "proto/codec.h"
#include "proto/codec_internal.h"
#include "proto/json.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A sample: its repetition, the job's facts (buffers, CPUs) and its metrics. */
static cJSON *sample_json(const sm_result *r, size_t repetition)
{
    cJSON *o = cJSON_CreateObject();
    bool ok =
        o != NULL && sm_json_put_u64(o, "repetition", repetition) && sm_codec_put_job_facts(o, r);
    if (ok && r->host.known)
        ok = sm_json_put(o, "host", sm_codec_host_to_cjson(&r->host));
    if (!ok || !sm_codec_put_metrics(o, r)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *failure_json(const sm_result *r, size_t repetition, bool warmup)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put_u64(o, "repetition", repetition) &&
              SM_CODEC_PUT_FIXED(o, "reason", r->reason);
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
    bool ok = o != NULL && sm_json_put_str(o, "workload", sm_workload_name(c->params.workload)) &&
              sm_json_put_str(o, "transport", sm_transport_name(c->params.transport)) &&
              SM_CODEC_PUT_FIXED(o, "variant", c->variant) &&
              sm_json_put(o, "params", sm_codec_params_to_cjson(&c->params)) &&
              (sm_reps_stop_name(c->stopped)
                   ? sm_json_put_str(o, "stopped", sm_reps_stop_name(c->stopped))
                   : cJSON_AddNullToObject(o, "stopped") != NULL) &&
              (samples = cJSON_AddArrayToObject(o, "samples")) != NULL &&
              (warmup = cJSON_AddArrayToObject(o, "warmup_samples")) != NULL &&
              (failures = cJSON_AddArrayToObject(o, "failures")) != NULL &&
              (summary = cJSON_AddObjectToObject(o, "summary")) != NULL &&
              put_results(samples, failures, c->samples, c->n_samples, false) &&
              put_results(warmup, failures, c->warmup, c->n_warmup, true) &&
              put_summaries(summary, c);
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
              SM_CODEC_PUT_FIXED(o, "numerator", r->numerator) &&
              SM_CODEC_PUT_FIXED(o, "denominator", r->denominator) &&
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
              sm_json_put(root, "host", sm_codec_facts_to_cjson(&r->facts)) &&
              (cells = cJSON_AddArrayToObject(root, "cells")) != NULL &&
              (ratios = cJSON_AddArrayToObject(root, "ratios")) != NULL;
    for (size_t i = 0; ok && i < r->n_cells; i++)
        ok = sm_json_append(cells, cell_json(&r->cells[i]));
    for (size_t i = 0; ok && i < r->n_ratios; i++)
        ok = sm_json_append(ratios, ratio_json(&r->ratios[i]));
    return sm_json_finish(root, ok, pretty, "report", err);
}
