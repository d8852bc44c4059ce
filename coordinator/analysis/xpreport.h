/* An experiment's answer: each suspect of its plan with its estimate (experiment.h), the
 * suspect proven the cause, a headline in words, and the whole as the API's JSON. Pure. */
#ifndef SM_COORD_XPREPORT_H
#define SM_COORD_XPREPORT_H

#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/experiment.h"
#include "coordinator/analysis/xpdd.h"

/* A search that narrows a combination down (xpsearch.h), as the report shows it. */
typedef struct sm_xp_search_view {
    const char *state; /* "narrowing" (next holds the next stage), "running", "done" */
    size_t k;          /* the suspects it narrows down */
    const char *suspects[SM_XP_DD_MAX]; /* their labels */
    size_t stages;                      /* stages run after the first experiment */
    size_t arms_max, stages_max;        /* its bounds (sm_xp_dd_budget, sm_xp_dd_stages_max) */
    uint64_t head_run;                  /* the first experiment */
    size_t n_next;
    char next[SM_XP_DD_BATCH_MAX][160]; /* "narrowing": the next stage's subsets */
    char label[160];                    /* "done": the subset found */
    sm_xp_suspect found;                /* "done": it, as one combined suspect */
    uint64_t result_run;                /* "done": the experiment that measured it */
    sm_xp_estimate result;              /* "done": its estimate there */
    size_t unresolved;                  /* subsets read as not closing, undecided */
} sm_xp_search_view;

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
    size_t n_ctrl;                   /* the control's clean samples */
    size_t n_fleet;                  /* the fleet's samples of the anomaly's cell */
    uint32_t ctrl_disturbed;         /* control samples left out as disturbed */
    const sm_xp_search_view *search; /* NULL: the experiment starts or is in no search */
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
 * on h1: h2's value opens 3% of it [-5%, 9%]". A search that ended on a subset heads it:
 * "h2: lo qdisc + net.core.somaxconn are the cause together (narrowed down from 4 suspects in
 * 2 stages): they close 95% of the gap [90%, 99%]"; one still narrowing adds "; narrowing the
 * 4 suspects down: stage 2 of at most 3 next". Returns what snprintf returns. */
int sm_xp_report_summary(const sm_xp_report *r, char *buf, size_t len);

/* {"run","explains","host","test","unit","state","summary","cause":{...}|null,
 *  "control":{"n","disturbed"},"fleet":{"n"},"suspects":[{"item","label","host_value",
 *  "fleet_value","treatment","verdict","why","share","lo","hi","control_median",
 *  "treated_median","fleet_median","n_control","n_treated","n_fleet","why_no_reverse",
 *  "reverse":{"host","treatment","verdict" (sm_xp_reverse_verdict),"why","share","lo","hi",
 *  "control_median","treated_median","odd_median","n_control","n_treated","n_odd"}|null}...]}
 *  ("cause" is such a suspect too), "search":{"state","suspects":[labels],"stages",
 *  "arms_max","stages_max","first_run","next":[labels],"result":{"label","run","verdict",
 *  "share","lo","hi"}|null,"unresolved"}|null: ids as strings,
 * shares as fractions (1 = all of the gap), null where not computed. malloc'd, or NULL when
 * out of memory. */
char *sm_xp_report_json(const sm_xp_report *r);

#endif
