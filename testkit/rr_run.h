/* A store holding a matrix run of rr jobs whose results carry realistic latency histograms
 * (about 461 non-empty buckets, as bench/hist_decode.c draws them): the report builder's
 * memory test and bench/report_table.c make the same run. */
#ifndef SM_TESTKIT_RR_RUN_H
#define SM_TESTKIT_RR_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/store/store.h"
#include "proto/params.h"
#include "proto/err.h"

typedef struct rr_run_shape {
    uint32_t hosts;     /* h0, h1, ... */
    uint32_t tests;     /* rr of request size 1 + t/2 bytes, tcp for even t, unix for odd t
                         * (two variants of test t/2, so that the table has their ratio) */
    uint32_t warmups;   /* warm-up repetitions of each cell (never in the table) */
    uint32_t reps;      /* measured repetitions of each cell */
    uint32_t templates; /* distinct encoded results the jobs cycle through */
    uint32_t samples;   /* round trips in each result's histogram */
} rr_run_shape;

/* 64 hosts x 32 tests x 10 repetitions (20,480 jobs), 256 templates of 20,000 round trips:
 * the issue's ordinary matrix of a 64-machine lab, with twice its repetitions. */
#define RR_RUN_ISSUE                                                                               \
    {                                                                                              \
        64, 32, 0, 10, 256, 20000                                                                  \
    }

/* The templates' headline (rtt_p50_us) values, so that a test knows each cell's median. */
typedef struct rr_run {
    uint64_t id;
    uint32_t n_cells; /* tests x hosts, cell i = test i / hosts on host i % hosts */
    double *p50;      /* p50[k]: template k's rtt_p50_us; owned */
    uint64_t json_bytes;
} rr_run;

/* The template of measured repetition rep of cell c. */
uint32_t rr_run_template(const rr_run_shape *s, uint32_t cell, uint32_t rep);

/* Makes the run in st (one transaction). 0, or an SM_E code with err set. */
int rr_run_make(sm_store *st, const rr_run_shape *s, rr_run *out, sm_error *err);
void rr_run_fini(rr_run *r);

/* Run id's table report as reports.c built it before it read runs cell by cell: every result
 * of the run read and decoded at once, then the steps of its get_table (no fingerprints: no
 * explanation), in format "csv", "md" or "json"; malloc'd, or NULL with err set. The
 * reference the cell-by-cell builder is held to, and the "before" of sm-bench-report. */
char *rr_whole_run_report(sm_store *st, uint64_t id, sm_scope scope, bool disturbed,
                          const char *format, sm_error *err);

#endif
