/* Proving which setting causes an anomaly: the plan of an experiment on the odd host (one
 * treatment per suspect that gives it the fleet's value, then all of them together) and the
 * estimate of how much of the gap a treatment closes (a percentile bootstrap of medians). Pure
 * computation; the API runs the jobs and stores the plan with the run. docs/analysis.md,
 * "Proving a cause by experiment". */
#ifndef SM_COORD_EXPERIMENT_H
#define SM_COORD_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/fpdiff.h"
#include "proto/err.h"

#define SM_XP_BOOTSTRAP    2000 /* resamples of the estimate */
#define SM_XP_MIN_SAMPLES  3    /* in each group (control, treated, fleet) */
#define SM_XP_NEGLIGIBLE   0.10 /* a share whose interval stays below it is no part of the gap */
#define SM_XP_COMBINED_MAX 4    /* treatments in the combination */
/* A plan's suspects, the combination included: every item a fingerprint can differ on. */
#define SM_XP_SUSPECTS_MAX (SM_FP_ITEMS_MAX + 1)
/* The treatments' bounds: a sysctl's value, a socket buffer (bytes). */
#define SM_XP_SYSCTL_VALUE_MAX 128
#define SM_XP_SOCKBUF_MIN      4096u
#define SM_XP_SOCKBUF_MAX      268435456u

typedef enum sm_xp_verdict {
    SM_XP_CAUSE = 0,
    SM_XP_PART,
    SM_XP_NOT,
    SM_XP_INCONCLUSIVE,
    SM_XP_UNTESTED
} sm_xp_verdict;

/* "cause", "part of it", "not the cause", "inconclusive", "could not be tested"; "?" for a
 * value out of the enum. */
const char *sm_xp_verdict_name(sm_xp_verdict v);

/* One suspect of the plan: a difference of the host from the fleet, with the treatment that
 * gives the host the fleet's value, or why it has none. */
typedef struct sm_xp_suspect {
    char item[SM_FP_KEY_MAX + 1]; /* the fingerprint item, "" for the combination */
    char label[160];              /* sm_fp_item_label, or "the 3 suspects together" */
    char host_value[256];         /* cut with "..." when longer; the combination: each */
    char fleet_value[256];        /* suspect's label and value, joined by "; "; fleet_value ""
                                   * when the fleet has no majority */
    char treatment[256];          /* parts joined by "; " (below); "" when untested */
    char why_untested[200];       /* "" when tested */
    int relevance;                /* the difference's (fpdiff.h); 0 for the combination */
    /* The reverse (sm_xp_plan_reverse): the treatment that gives a fleet host, reverse_host,
     * the odd host's value; "" when there is none, why_no_reverse saying why ("" too for an
     * untested suspect and the combination). */
    char reverse_host[65];
    char reverse[256];
    char why_no_reverse[200];
} sm_xp_suspect;

/* The suspects in the differences' rank order, the combination (when there is one) last.
 * tested counts the suspects with a treatment, the combination included. v owned. */
typedef struct sm_xp_plan {
    sm_xp_suspect *v;
    size_t n;
    size_t tested;
} sm_xp_plan;

/* Frees v and leaves *p empty; an empty or zeroed plan is fine. */
void sm_xp_plan_fini(sm_xp_plan *p);

/* The plan for the anomaly host whose differences from the fleet are d (rank order, as
 * sm_fp_differences gives them). allow is the host's item info.allow_experiment: flags
 * "qdisc" and "sysctl" separated by commas ("none", "qdisc", "qdisc,sysctl"; other words are
 * ignored; NULL when unknown = none). Each difference becomes a suspect, whose treatment text
 * is one of
 *   sysctl KEY=VALUE      KEY "net." then [a-z0-9_.]; VALUE printable ASCII or tab, 1..128
 *                         bytes, no ';' (flag sysctl)
 *   qdisc IFACE VALUE     the root qdisc of IFACE; VALUE noqueue or "tbf ..." (flag qdisc)
 *   socket rcvbuf=N, socket sndbuf=N (4096..268435456), socket nodelay=0|1   (no flag)
 * as the rules of docs/analysis.md map it (sysctl.net.* and if.<iface>.qdisc exactly; without
 * flag sysctl, tcp_rmem / tcp_wmem fall back to rcvbuf / sndbuf of the fleet's default), or
 * untested with why_untested saying why in words. At most max_tested suspects get a treatment,
 * the first in rank order that have one; the others that have one are untested "beyond the
 * plan's budget of N suspects". When 2 or more got one, a last suspect holds the first
 * SM_XP_COMBINED_MAX of them together (their treatments joined by "; "). *out is set on success
 * only: 0, SM_EINVAL (d NULL, or more than SM_XP_SUSPECTS_MAX - 1 differences) or SM_ENOMEM,
 * with err set. The reasons call the host "the host"; sm_xp_plan_make_for names it. */
int sm_xp_plan_make(const sm_fp_diffs *d, const char *allow, size_t max_tested, sm_xp_plan *out,
                    sm_error *err);
/* sm_xp_plan_make with the host's name in the reasons ("h2's agent may not change sysctls:
 * start it with --allow-experiment sysctl"); host NULL or "": "the host". */
int sm_xp_plan_make_for(const char *host, const sm_fp_diffs *d, const char *allow,
                        size_t max_tested, sm_xp_plan *out, sm_error *err);

/* The fleet host of the reverse treatments: its name, its info.allow_experiment (as for
 * sm_xp_plan_make) and its fingerprint. */
typedef struct sm_xp_ref {
    const char *host;
    const char *allow;
    const sm_fingerprint *fp;
} sm_xp_ref;

/* Gives plan p, made by sm_xp_plan_make from d, its reverse treatments on ref->host: for each
 * tested suspect but the combination, the treatment that gives ref->host the odd host's value
 * (the difference's host_value, in the syntax above) when ref's own value of the item is the
 * fleet's (sm_fp_item_text of its fingerprint equals fleet_value; "(absent)" when it has no
 * such item) and its agent may apply it; otherwise why_no_reverse says why ("h1's lo qdisc is
 * pfifo_fast, not the fleet's noqueue", "h1's agent may not change qdiscs: start it with
 * --allow-experiment qdisc"). The reverse confirms a cause from the other side: the odd host's
 * value should open the gap on a normal host as much as the fleet's value closed it. Returns
 * how many suspects got a reverse; 0 when ref, its host or its fingerprint is NULL. */
size_t sm_xp_plan_reverse(sm_xp_plan *p, const sm_fp_diffs *d, const sm_xp_ref *ref);

/* The plan as a compact JSON array, one object per suspect in order: {"item","label",
 * "host_value","fleet_value","treatment","why_untested","relevance","reverse_host","reverse",
 * "why_no_reverse"}, every field present.
 * malloc'd (the caller frees it), NULL when out of memory. */
char *sm_xp_plan_json(const sm_xp_plan *p);

/* Reads what sm_xp_plan_json wrote (the plan is stored with the run), checking it as the plan
 * maker would have made it: every field present (the three of the reverse may be missing, in
 * a plan stored before there were reverses) and no other, each string fitting its field,
 * relevance a non-negative integer, exactly one of treatment and why_untested non-empty, each
 * treatment and reverse in the syntax above, a reverse only with its host and a treatment, at
 * most SM_XP_SUSPECTS_MAX suspects. tested is counted again.
 * *out is set on success only; SM_EINVAL (json NULL, a value out of its bounds) or SM_EPARSE
 * (not such an array), with err's reason and field ("[2].treatment") naming the place, or
 * SM_ENOMEM. */
int sm_xp_plan_from_json(const char *json, sm_xp_plan *out, sm_error *err);

/* How much of the host's gap from the fleet a treatment closed. */
typedef struct sm_xp_estimate {
    sm_xp_verdict verdict;
    double share, lo, hi; /* share of the gap closed, its 95% interval; NaN when not computed */
    double ctrl_median, treat_median, fleet_median; /* NaN for a group without a sample */
    size_t n_ctrl, n_treat, n_fleet;                /* finite samples of each group */
    char why[200];                                  /* the verdict's reason in words */
} sm_xp_estimate;

/* ctrl: the odd host's untreated samples in the experiment; treat: its treated samples; fleet:
 * the other hosts' samples of the anomaly's cell (the original run). Non-finite samples are
 * left out. Any metric direction: share = (med(ctrl) - med(treat)) / (med(ctrl) - med(fleet)),
 * 1 when the treatment makes the host the fleet, 0 when it does nothing, negative when it
 * widens the gap. Its interval is the 2.5% and 97.5% points of SM_XP_BOOTSTRAP resamples, each
 * group resampled with replacement on its own (xoshiro256** seeded by splitmix64 of seed: the
 * same inputs and seed give the same estimate). A resample whose gap is 0 or of the other
 * sign counts as -infinity for lo and +infinity for hi. Verdicts, the first that applies:
 *   inconclusive  a group with fewer than SM_XP_MIN_SAMPLES samples (why names them); the gap
 *                 0 or reversed in more than 2.5% of the resamples ("the host no longer stands
 *                 apart from the fleet in this experiment (control median X vs fleet Y)")
 *   cause         lo >= 0.5: closes most of the gap, clear of zero
 *   not the cause hi < 0 (it widens the gap), or 0 <= hi < SM_XP_NEGLIGIBLE (less than a tenth
 *                 of the gap, even when clear of zero: a real but negligible effect)
 *   part of it    lo > 0
 *   not the cause lo <= 0 <= hi and hi < 0.5
 *   inconclusive  otherwise: the interval holds 0 and reaches 0.5, too wide to decide
 * 0 with *out set (an inconclusive verdict is no error), SM_EINVAL (out NULL, or samples
 * NULL with a count), SM_ENOMEM. */
int sm_xp_estimate_share(const double *ctrl, size_t nc, const double *treat, size_t nt,
                         const double *fleet, size_t nf, uint64_t seed, sm_xp_estimate *out);
/* sm_xp_estimate_share with the host's name in the reasons; host NULL or "": "the host". */
int sm_xp_estimate_share_for(const char *host, const double *ctrl, size_t nc, const double *treat,
                             size_t nt, const double *fleet, size_t nf, uint64_t seed,
                             sm_xp_estimate *out);

/* {"verdict" (sm_xp_verdict_name),"share","lo","hi","ctrl_median","treat_median",
 * "fleet_median","n_ctrl","n_treat","n_fleet","why"}, compact, null for NaN. malloc'd, NULL
 * when out of memory. */
char *sm_xp_estimate_json(const sm_xp_estimate *e);

/* One line for people: the verdict padded to 12, the suspect ("lo qdisc tbf rate 400Mbit burst
 * ... -> noqueue", or its label alone for the combination) and what the estimate says:
 *   cause        lo qdisc tbf rate ... -> noqueue: closes 98% of the gap [91%, 103%]
 *                (control 0.0567 s, treated 0.0071 s, fleet 0.007 s; n 8/8/20)
 * ("widens the gap by 20%" for a negative share; an inconclusive verdict gives its why, then the
 * medians it has). e NULL, or the suspect untested: "could not be tested ...: <why_untested>".
 * unit follows each median ("s", "MB/s"; NULL or "" none). Writes at most len bytes; returns
 * what snprintf returns (the length it wanted). */
int sm_xp_estimate_text(const sm_xp_suspect *s, const sm_xp_estimate *e, const char *unit,
                        char *buf, size_t len);

#endif
