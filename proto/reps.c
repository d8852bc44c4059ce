/* The stopping rule of repetitions: one more round while the median's CI is wide, or while
 * disturbed samples keep a cell short. */
#include "proto/reps.h"

#include "proto/err.h"
#include "proto/stats.h"

#include <math.h>
#include <string.h>

static const char *const stop_names[] = {
    [SM_REPS_NONE] = NULL,
    [SM_REPS_CI] = "ci",
    [SM_REPS_MAX] = "max",
    [SM_REPS_FAILED] = "failed",
    [SM_REPS_DISTURBED] = "disturbed",
};

const char *sm_reps_stop_name(sm_reps_stop s)
{
    return (size_t)s < sizeof stop_names / sizeof stop_names[0] ? stop_names[s] : NULL;
}

sm_reps_stop sm_reps_stop_parse(const char *name)
{
    for (size_t i = 1; name && i < sizeof stop_names / sizeof stop_names[0]; i++)
        if (strcmp(name, stop_names[i]) == 0)
            return (sm_reps_stop)i;
    return SM_REPS_NONE;
}

sm_metric sm_reps_metric(const sm_params *p)
{
    switch (p->workload) {
    case SM_WL_STREAM:
        /* The 2010 line test reported the receiver's time for a fixed amount, not a rate. */
        return p->framing == SM_FRAMING_LINES ? SM_M_SECONDS : SM_M_THROUGHPUT;
    case SM_WL_RR:
        return SM_M_RTT_P50_US;
    case SM_WL_CONNECT:
        return SM_M_CONNECTS_PER_S;
    case SM_WL_HTTP:
        return SM_M_THROUGHPUT;
    default:
        /* Every workload reports its wall time. */
        return SM_M_SECONDS;
    }
}

int sm_reps_check(const sm_reps_rule *rule, uint32_t max_reps)
{
    if (!rule || rule->min < 1 || rule->min > rule->max || rule->max > max_reps ||
        rule->remeasure > max_reps)
        return SM_EINVAL;
    /* ci_rel 0 is a fixed count: a cell of min repetitions can have no more but for remeasuring. */
    if (rule->ci_rel == 0 ? rule->min != rule->max : !(rule->ci_rel > 0 && rule->ci_rel < 1))
        return SM_EINVAL;
    return 0;
}

/* The repetitions that ran but were disturbed: the cell did not fail then, it was measured at
 * a bad time, and another round may well be clean. */
static size_t count_disturbed(const double *x, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += x[i] == SM_REPS_DISTURBED_SAMPLE;
    return k;
}

/* Past max: another round while disturbed repetitions keep the cell short of max undisturbed
 * ones and remeasure allows it. A failed repetition counts as undisturbed: a host at its time
 * limit, or one that fails, would only do it again. */
static void past_max(uint32_t reps, const sm_reps_rule *rule, sm_reps_decision *out)
{
    const uint64_t undisturbed = reps > out->n_disturbed ? reps - out->n_disturbed : 0;
    const bool short_of = rule->remeasure > 0 && out->n_disturbed > 0 && undisturbed < rule->max;
    if (short_of && (uint64_t)reps < (uint64_t)rule->max + rule->remeasure)
        out->more = out->remeasure = true;
    else if (short_of)
        out->why = SM_REPS_DISTURBED;
    else
        out->why = rule->ci_rel == 0 ? SM_REPS_NONE : SM_REPS_MAX;
}

int sm_reps_decide(const double *x, size_t n, uint32_t reps, const sm_reps_rule *rule,
                   sm_reps_decision *out)
{
    memset(out, 0, sizeof *out);
    out->median = NAN;
    out->half_width = NAN;
    /* Any bound works here: the caller's own maximum was checked where the rule was read. */
    if (sm_reps_check(rule, UINT32_MAX) != 0)
        return SM_EINVAL;
    sm_summary s;
    int rc = n > 0 ? sm_stats_summarize(x, n, &s) : SM_EINVAL;
    if (rc == SM_ENOMEM)
        return rc;
    bool tight = false;
    if (rc == 0) {
        out->n_ok = s.n;
        out->median = s.median;
        out->half_width = (s.ci95_high - s.ci95_low) / 2;
        tight = rule->ci_rel > 0 && s.n >= rule->min &&
                out->half_width <= rule->ci_rel * fabs(s.median);
    }
    out->n_disturbed = count_disturbed(x, n);
    if (tight)
        out->why = SM_REPS_CI;
    else if (reps >= rule->max)
        past_max(reps, rule, out);
    else if (reps >= rule->min && out->n_ok == 0 && out->n_disturbed == 0)
        out->why = SM_REPS_FAILED;
    else
        out->more = true;
    return 0;
}
