/* Repetitions until the interval is tight, and again for disturbed samples: the rule that says
 * whether a cell needs one more interleaved round, shared by the coordinator (matrix runs) and
 * the agent's --once. Pure functions, no I/O. */
#ifndef SM_PROTO_REPS_H
#define SM_PROTO_REPS_H

#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>

#include "proto/params.h"
#include "proto/result.h"

#define SM_REPS_AUTO_MIN    5
#define SM_REPS_AUTO_MAX    30
#define SM_REPS_AUTO_CI_REL 0.05

/* "repetitions": {"min": 5, "max": 30, "ci_rel": 0.05} (or "auto" for these defaults), or a
 * fixed count n as {n, n, 0}; "remeasure" beside it. */
typedef struct sm_reps_rule {
    uint32_t min;  /* measured repetitions every cell gets; 1 <= min <= max */
    uint32_t max;  /* never more than this many measured repetitions of a cell that were not
                    * disturbed (a disturbed one may be measured again: remeasure) */
    double ci_rel; /* stop once the CI's half-width is within ci_rel x |median|; 0 < ci_rel < 1,
                    * or 0 for fixed repetitions (min == max), which have no CI to reach */
    uint32_t remeasure; /* extra measured repetitions past max a cell may get while disturbed
                         * samples keep it short of max undisturbed ones; 0: none */
} sm_reps_rule;

/* Why a cell stopped (or has not). SM_REPS_NONE: fixed repetitions, or not decided yet. */
typedef enum sm_reps_stop {
    SM_REPS_NONE = 0,
    SM_REPS_CI,        /* the 95% CI of the median is within +-ci_rel of it */
    SM_REPS_MAX,       /* max repetitions reached with the CI still wider */
    SM_REPS_FAILED,    /* min repetitions ran and none succeeded: another round only costs time */
    SM_REPS_DISTURBED, /* max + remeasure repetitions ran and disturbed ones still keep it
                        * short of max undisturbed repetitions */
} sm_reps_stop;

/* "ci", "max", "failed", "disturbed"; NULL for SM_REPS_NONE. */
const char *sm_reps_stop_name(sm_reps_stop s);
/* The inverse, for the store; SM_REPS_NONE for NULL, "" or an unknown name. */
sm_reps_stop sm_reps_stop_parse(const char *name);

typedef struct sm_reps_decision {
    bool more;          /* add one more interleaved round */
    bool remeasure;     /* when more: the round is past max, for disturbed samples */
    sm_reps_stop why;   /* when !more */
    size_t n_ok;        /* finite samples used */
    size_t n_disturbed; /* repetitions that ran but were disturbed */
    double median;      /* NaN when n_ok is 0 */
    double half_width;  /* (ci95_high - ci95_low) / 2; NaN when n_ok is 0 */
} sm_reps_decision;

/* The value of a repetition that ran but was disturbed (sm_host_state.disturbed): no sample,
 * as the tables leave it out by default, but no failure either. */
#define SM_REPS_DISTURBED_SAMPLE INFINITY

/* Decides for one cell after `reps` measured repetitions, whose headline values are
 * x[0..n-1]; a failed repetition is NaN (or absent: reps - n of them) and a disturbed one
 * SM_REPS_DISTURBED_SAMPLE: neither is a sample. The interval is
 * sm_stats_summarize's distribution-free order-statistics CI of the median; with fewer than 6
 * samples that is [min, max] (coverage below 95%), which is taken as the interval as it is:
 * wider than a 95% one would be where the samples spread, so it never stops a cell early.
 * A cell is short for disturbed samples when rule->remeasure > 0, some repetition was
 * disturbed, and fewer than rule->max repetitions were not (ok or failed: a failure is the
 * host's answer and is not measured again). In order:
 *   - ci_rel > 0, at least rule->min ok samples and half-width <= ci_rel x |median|: stop,
 *     SM_REPS_CI;
 *   - reps >= rule->max and short for disturbed samples: one more round (remeasure) while
 *     reps < max + remeasure, else stop, SM_REPS_DISTURBED;
 *   - reps >= rule->max: stop, SM_REPS_MAX (SM_REPS_NONE for fixed repetitions, ci_rel 0);
 *   - reps >= rule->min and every repetition failed (none ok, none disturbed): stop,
 *     SM_REPS_FAILED;
 *   - otherwise one more round (fewer than min ok samples counts as wide: a failed repetition
 *     is made up for).
 * With remeasure 0 a disturbed repetition counts towards max like any other (the agent's
 * --once). Returns 0, or SM_EINVAL for a rule out of its bounds (see sm_reps_check), or
 * SM_ENOMEM. */
int sm_reps_decide(const double *x, size_t n, uint32_t reps, const sm_reps_rule *rule,
                   sm_reps_decision *out);

/* The metric whose CI the rule tightens: the headline of the comparison tables (stream
 * throughput_MBps, framing lines seconds as the 2010 test reported, rr rtt_p50_us, connect
 * connects_per_s, http throughput_MBps; seconds otherwise). */
sm_metric sm_reps_metric(const sm_params *p);

/* 0 when 1 <= min <= max <= max_reps, 0 < ci_rel < 1 (or ci_rel 0 with min == max) and
 * remeasure <= max_reps; SM_EINVAL otherwise. */
int sm_reps_check(const sm_reps_rule *rule, uint32_t max_reps);

#endif
