/* A store holding a matrix run of rr jobs with realistic histograms (rr_run.h). */
#include "testkit/rr_run.h"

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/export.h"
#include "coordinator/analysis/verdict.h"
#include "proto/codec.h"
#include "proto/hist.h"
#include "proto/params.h"
#include "proto/result.h"
#include "testkit/draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The encoded templates, and their p50 into r->p50. */
static char **make_templates(const rr_run_shape *s, rr_run *r, sm_error *err)
{
    char **t = calloc(s->templates, sizeof *t);
    r->p50 = calloc(s->templates, sizeof *r->p50);
    sm_result res;
    sm_result_init(&res);
    res.ok = true;
    res.hist = sm_hist_new();
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; t && r->p50 && res.hist && i < s->templates; i++) {
        sm_hist_reset(res.hist);
        double median = draw_rtt_median_ns(&seed);
        for (uint32_t k = 0; k < s->samples; k++)
            sm_hist_record(res.hist, draw_rtt_ns(&seed, median));
        r->p50[i] = (double)sm_hist_percentile(res.hist, 50) / 1e3;
        sm_result_set(&res, SM_M_BYTES, 2.0 * s->samples);
        sm_result_set(&res, SM_M_SECONDS, s->samples * median / 1e9);
        sm_result_set(&res, SM_M_RT_PER_S, 1e9 / median);
        sm_result_set(&res, SM_M_RTT_P50_US, r->p50[i]);
        sm_result_set(&res, SM_M_RTT_P99_US, (double)sm_hist_percentile(res.hist, 99) / 1e3);
        if (!(t[i] = sm_codec_result_encode(&res, err)))
            break;
    }
    sm_result_fini(&res);
    bool ok = t && r->p50;
    for (uint32_t i = 0; ok && i < s->templates; i++)
        ok = t[i] != NULL;
    if (ok)
        return t;
    for (uint32_t i = 0; t && i < s->templates; i++)
        free(t[i]);
    free(t);
    if (err->code == 0)
        sm_error_set(err, SM_ENOMEM, "out of memory");
    return NULL;
}

uint32_t rr_run_template(const rr_run_shape *s, uint32_t cell, uint32_t rep)
{
    return (uint32_t)(((uint64_t)cell * 7919 + rep * 104729ull) % s->templates);
}

/* The cells: test-major (test t is test t / 2, variant t % 2), then host. */
static int insert_cells(sm_store *st, const rr_run_shape *s, uint64_t run, sm_error *err)
{
    int rc = 0;
    for (uint32_t c = 0; rc == 0 && c < s->tests * s->hosts; c++) {
        const uint32_t test = c / s->hosts, host = c % s->hosts;
        sm_params p;
        sm_params_init(&p, SM_WL_RR);
        p.transport = test % 2 ? SM_TR_UNIX : SM_TR_TCP;
        p.req_size = p.resp_size = 1 + test / 2;
        char *json = sm_codec_params_encode(&p, err);
        if (!json)
            return SM_ENOMEM;
        /* tcp and unix are two variants of one test: the table pairs them into a ratio. */
        sm_cell_row row = {.idx = c, .test = test / 2, .variant = test % 2, .params_json = json};
        snprintf(row.host, sizeof row.host, "h%u", host);
        rc = sm_store_cell_insert(st, run, &row, err);
        free(json);
    }
    return rc;
}

/* The jobs, repetition-major (each repetition of every cell before the next), and a result
 * for each. */
static int insert_jobs(sm_store *st, const rr_run_shape *s, uint64_t run, char **t, rr_run *r,
                       sm_error *err)
{
    const uint32_t n_cells = s->tests * s->hosts, all = s->warmups + s->reps;
    int rc = 0;
    for (uint32_t k = 0; rc == 0 && k < all; k++) {
        for (uint32_t c = 0; rc == 0 && c < n_cells; c++) {
            const bool warm = k < s->warmups;
            const uint32_t rep = warm ? k : k - s->warmups;
            sm_job_row j = {
                .run_id = run, .cell = c, .rep = rep, .warmup = warm, .ord = k * n_cells + c};
            snprintf(j.host, sizeof j.host, "h%u", c % s->hosts);
            j.params_json = "{\"workload\":\"rr\"}";
            uint64_t id = 0;
            bool inserted = false;
            const uint32_t tpl = warm ? 0 : rr_run_template(s, c, rep);
            const sm_result_cols cols = {2.0 * s->samples, NAN, NAN, r->p50[tpl], NAN, true};
            rc = sm_store_job_insert_run(st, &j, 1000, &id, err);
            if (rc == 0)
                rc = sm_store_result_insert(st, id, 1, j.host, t[tpl], &cols, 2000, &inserted, err);
            r->json_bytes += strlen(t[tpl]);
        }
    }
    return rc;
}

int rr_run_make(sm_store *st, const rr_run_shape *s, rr_run *out, sm_error *err)
{
    memset(out, 0, sizeof *out);
    out->n_cells = s->tests * s->hosts;
    char **t = make_templates(s, out, err);
    if (!t)
        return err->code ? err->code : SM_ENOMEM;
    const uint32_t total = out->n_cells * (s->warmups + s->reps);
    int rc = sm_store_begin(st, err);
    if (rc == 0)
        rc = sm_store_run_insert(st, "rr-matrix", "{}", total, 1000, &out->id, err);
    if (rc == 0)
        rc = insert_cells(st, s, out->id, err);
    if (rc == 0)
        rc = insert_jobs(st, s, out->id, t, out, err);
    if (rc == 0)
        rc = sm_store_run_update(st, out->id, SM_RUN_DONE, "", total, 0, 3000, err);
    if (rc == 0)
        rc = sm_store_commit(st, err);
    else
        sm_store_rollback(st);
    for (uint32_t i = 0; i < s->templates; i++)
        free(t[i]);
    free(t);
    return rc;
}

void rr_run_fini(rr_run *r)
{
    free(r->p50);
    memset(r, 0, sizeof *r);
}

char *rr_whole_run_report(sm_store *st, uint64_t id, sm_scope scope, bool disturbed,
                          const char *format, sm_error *err)
{
    sm_run_row run;
    sm_cell_row *rows = NULL;
    sm_run_result *res = NULL;
    size_t nc = 0, nr = 0, ns = 0;
    char *text = NULL;
    if (sm_store_run_get(st, id, &run, err) != 0)
        return NULL;
    sm_cell *cells = NULL;
    sm_result *results = NULL;
    sm_export_sample *samples = NULL;
    if (sm_store_cells_list(st, id, &rows, &nc, err) != 0 ||
        sm_store_run_results(st, id, &res, &nr, err) != 0)
        goto out;
    cells = calloc(nc ? nc : 1, sizeof *cells);
    results = calloc(nr ? nr : 1, sizeof *results);
    samples = calloc(nr ? nr : 1, sizeof *samples);
    if (!cells || !results || !samples)
        goto out;
    for (size_t i = 0; i < nc; i++) {
        cells[i].test = rows[i].test;
        cells[i].variant = rows[i].variant;
        snprintf(cells[i].host, sizeof cells[i].host, "%s", rows[i].host);
        snprintf(cells[i].peer, sizeof cells[i].peer, "%s", rows[i].peer);
        sm_codec_params_decode(rows[i].params_json, strlen(rows[i].params_json), &cells[i].params,
                               err);
    }
    for (size_t i = 0; i < nr; i++) {
        sm_result_init(&results[i]);
        if (sm_codec_result_decode(res[i].result_json, strlen(res[i].result_json), &results[i],
                                   err) == 0)
            samples[ns++] = (sm_export_sample){res[i].cell, res[i].rep, res[i].warmup, &results[i]};
    }
    sm_table t;
    sm_anomalies an = {0};
    sm_explanation ex = {0};
    const sm_analysis_opts ao = {0, 0};
    const sm_export_opts eo = {disturbed};
    if (sm_export_build_opts(run.id, run.name, scope, cells, nc, samples, ns, &eo, &t, err) == 0) {
        if (sm_analysis_table(&t, &ao, &an, err) == 0) {
            sm_analysis_flag_table(&t, &an);
            if (sm_verdict_table(&t, an.v, an.n) == 0)
                text = strcmp(format, "csv") == 0  ? sm_table_csv(&t)
                       : strcmp(format, "md") == 0 ? sm_export_md(&t, &an, &ex)
                                                   : sm_export_json(&t, &an, &ex);
        }
        sm_anomalies_fini(&an);
        sm_table_fini(&t);
    }
out:
    for (size_t i = 0; results && i < nr; i++)
        sm_result_fini(&results[i]);
    free(samples);
    free(results);
    free(cells);
    sm_store_run_results_free(res, nr);
    sm_store_cells_free(rows, nc);
    sm_run_row_fini(&run);
    return text;
}
