/* A comparison report of local runs: the structure that `--once --format json` prints and
 * that the coordinator will later hold per cell. Plain data; the agent fills it. */
#ifndef SM_PROTO_REPORT_H
#define SM_PROTO_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/facts.h"
#include "proto/params.h"
#include "proto/reps.h"
#include "proto/result.h"
#include "proto/stats.h"

#define SM_VARIANT_MAX 64

/* One cell: a test (params) repeated. samples[] are the measured repetitions in the order they
 * ran, failed ones included (ok == false); summary[m] covers the ok samples of metric m when
 * bit m of summary_have is set, less the disturbed ones (host.disturbed) unless the report is
 * with_disturbed. Warm-up repetitions are kept apart and never summarised. */
typedef struct sm_cell_report {
    sm_params params;
    char variant[SM_VARIANT_MAX]; /* "tcp", "tcp+nodelay", "unix", ... */
    sm_result *samples;
    size_t n_samples;
    sm_result *warmup;
    size_t n_warmup;
    sm_summary summary[SM_M__COUNT];
    uint64_t summary_have;
    sm_reps_stop stopped; /* adaptive repetitions: why it got no more rounds; NONE if fixed */
} sm_cell_report;

/* A paired ratio numerator/denominator of one metric: repetition i of one cell over
 * repetition i of the other (they ran back to back), summarised like a metric. */
typedef struct sm_ratio {
    sm_metric metric;
    char numerator[SM_VARIANT_MAX];
    char denominator[SM_VARIANT_MAX];
    sm_summary summary;
} sm_ratio;

typedef struct sm_report {
    sm_facts facts;
    sm_cell_report *cells;
    size_t n_cells;
    sm_ratio *ratios;
    size_t n_ratios;
    bool with_disturbed; /* disturbed samples are in the summaries and ratios */
} sm_report;

/* Whether sample r of a report counts in its summaries: ok, and not disturbed unless the
 * report includes disturbed samples. */
static inline bool sm_report_counts(const sm_report *rep, const sm_result *r)
{
    return r->ok && (!r->host.disturbed || rep->with_disturbed);
}

#endif
