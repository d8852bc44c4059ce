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
    size_t n_ctrl;             /* the control's clean samples */
    size_t n_fleet;            /* the fleet's samples of the anomaly's cell */
    uint32_t ctrl_disturbed;   /* control samples left out as disturbed */
} sm_xp_report;

/* The suspect proven the cause: among those whose verdict is cause, a single suspect before
 * the combination of all, then the one whose interval's lower end is highest. SIZE_MAX when
 * none is. */
size_t sm_xp_report_cause(const sm_xp_report *r);

/* The headline, e.g. "h2: lo qdisc is the cause: the fleet's value (noqueue) closes 98% of the
 * gap [91%, 103%]", "h2: no tested suspect closes most of the gap (2 tested, 1 could not be
 * tested)"; "so far, " first while the experiment runs. Returns what snprintf returns. */
int sm_xp_report_summary(const sm_xp_report *r, char *buf, size_t len);

/* {"run","explains","host","test","unit","state","summary","cause":{...}|null,
 *  "control":{"n","disturbed"},"fleet":{"n"},"suspects":[{"item","label","host_value",
 *  "fleet_value","treatment","verdict","why","share","lo","hi","control_median",
 *  "treated_median","fleet_median","n_control","n_treated","n_fleet"}...]}: ids as strings,
 * shares as fractions (1 = all of the gap), null where not computed. malloc'd, or NULL when
 * out of memory. */
char *sm_xp_report_json(const sm_xp_report *r);

#endif
