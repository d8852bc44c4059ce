/* An experiment's answer: each suspect of its plan with its estimate (experiment.h), the
 * suspect proven the cause, a headline in words, and the whole as the API's JSON. Pure. */
#ifndef SM_COORD_XPREPORT_H
#define SM_COORD_XPREPORT_H

#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/experiment.h"

typedef struct sm_xp_report {
    uint64_t run_id;     /* the experiment's run */
    uint64_t parent_run; /* the run whose anomaly it explains */
    const char *host;    /* the anomaly's host */
    const char *test;    /* the anomaly's test (its column's label) */
    const char *unit;    /* the metric's unit ("s", "MB/s") */
    const char *state;   /* the experiment run's state: "running", "done", ... */
    const sm_xp_plan *plan;
    const sm_xp_estimate *est; /* plan->n, in the plan's order */
    /* plan->n, or NULL: the reverse of each suspect on its reverse_host (sm_xp_reverse_judge),
     * verdict SM_XP_UNTESTED where the suspect has no reverse. */
    const sm_xp_estimate *rev;
    size_t n_ctrl;           /* the control's clean samples */
    size_t n_fleet;          /* the fleet's samples of the anomaly's cell */
    uint32_t ctrl_disturbed; /* control samples left out as disturbed */
} sm_xp_report;

/* The reverse's verdict in words: "confirms" (cause), "confirms in part" (part of it), "does
 * not confirm" (not the cause), "inconclusive"; "" for an untested one. */
const char *sm_xp_reverse_verdict(sm_xp_verdict v);

/* Rewrites the estimate e of a reverse, which sm_xp_estimate_share made from ref's untreated
 * samples (as its control), ref's samples with the odd host's value (treated) and the odd
 * host's own control (as its fleet), in the reverse's words: e->why becomes "h2's value opens
 * most of the gap on h1: its interval [91%, 103%] reaches no lower than 50%", "... opens part
 * of the gap ...", "... does not open the gap on h1 ...", "too few samples: h1's control 2,
 * ... (each group needs 3)" or "h1 and h2 do not stand apart in this experiment ...". The
 * verdict and numbers stay. */
void sm_xp_reverse_judge(sm_xp_estimate *e, const char *host, const char *ref);

/* The suspect proven the cause: among those whose verdict is cause, a single suspect before
 * the combination of all, then the one whose interval's lower end is highest. SIZE_MAX when
 * none is. */
size_t sm_xp_report_cause(const sm_xp_report *r);

/* The headline, e.g. "h2: lo qdisc is the cause: the fleet's value (noqueue) closes 98% of the
 * gap [91%, 103%]", "h2: no tested suspect closes most of the gap (2 tested, 1 could not be
 * tested)"; "so far, " first while the experiment runs. A cause with a decided reverse says
 * so after: "; confirmed on h1: h2's value opens 97% of it [90%, 104%]", or "; not confirmed
 * on h1: h2's value opens 3% of it [-5%, 9%]". Returns what snprintf returns. */
int sm_xp_report_summary(const sm_xp_report *r, char *buf, size_t len);

/* {"run","explains","host","test","unit","state","summary","cause":{...}|null,
 *  "control":{"n","disturbed"},"fleet":{"n"},"suspects":[{"item","label","host_value",
 *  "fleet_value","treatment","verdict","why","share","lo","hi","control_median",
 *  "treated_median","fleet_median","n_control","n_treated","n_fleet","why_no_reverse",
 *  "reverse":{"host","treatment","verdict" (sm_xp_reverse_verdict),"why","share","lo","hi",
 *  "control_median","treated_median","odd_median","n_control","n_treated","n_odd"}|null}...]}
 *  ("cause" is such a suspect too): ids as strings,
 * shares as fractions (1 = all of the gap), null where not computed. malloc'd, or NULL when
 * out of memory. */
char *sm_xp_report_json(const sm_xp_report *r);

#endif
