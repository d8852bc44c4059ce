/* Planning: a spec and the fleet become cells and jobs (pure functions, no I/O).
 * A cell is one test variant on one host (scope local) or one ordered pair (scope pair:
 * client, server). A job is one repetition of one cell. */
#ifndef SM_COORD_PLAN_H
#define SM_COORD_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/model/spec.h"
#include "proto/err.h"
#include "proto/msg.h"

#define SM_PLAN_JOBS_MAX 100000 /* cells x (repetitions + warmup) of one run */

/* A registered agent as the planner sees it. */
typedef struct sm_plan_host {
    char name[SM_NAME_LEN];
    char data_addr[SM_ADDR_MAX + 1];
    sm_label labels[SM_LABELS_MAX];
    size_t n_labels;
    bool online; /* lost agents are not planned */
} sm_plan_host;

typedef struct sm_cell {
    uint32_t test;          /* index in spec.tests */
    uint32_t variant;       /* index in spec.tests[test].variants */
    char host[SM_NAME_LEN]; /* local: the host; pair: the client */
    char peer[SM_NAME_LEN]; /* pair: the server (receiver); "" for local */
    sm_params params;
    sm_reps_stop stopped; /* adaptive runs: why the cell got no more rounds (export reads it) */
} sm_cell;

typedef struct sm_plan_job {
    uint32_t cell; /* index in cells */
    uint32_t rep;  /* 0-based within warm-up or measured repetitions */
    bool warmup;
    uint32_t round; /* pair jobs: the circle-method round (0-based); local jobs: 0 */
    uint32_t order; /* dispatch priority: lower first (see sm_plan_expand) */
} sm_plan_job;

typedef struct sm_plan {
    sm_cell *cells;
    size_t n_cells;
    sm_plan_job *jobs;
    size_t n_jobs;
} sm_plan;

/* Expands spec over the fleet.
 * - Hosts: "all" = every online host; a list = those names (each must be registered and
 *   online, else SM_EINVAL naming it, field "hosts"); a label = online hosts with that label.
 *   No host selected is SM_EINVAL.
 * - Cells: for each test, each variant, each selected host (local) or each pair of the pairs
 *   rule over the selected hosts (pair; a named pair must use selected hosts); cells are
 *   ordered test, host (or pair), variant.
 * - Jobs: warm-up repetitions first, then the measured ones; within a repetition the variants of
 *   one test on one host (or pair) follow each other, so repetitions interleave (A B A B).
 *   `order` is the job's position in that sequence. Pair jobs carry the circle-method round of
 *   their pair (sm_plan_rounds): the coordinator queues jobs by (warm-up, repetition, round,
 *   order), so the disjoint pairs of a round run side by side.
 * - Bound: more than SM_PLAN_JOBS_MAX jobs is SM_EINVAL naming "repetitions" and the counts;
 *   an adaptive spec plans reps.min repetitions and is bounded by reps.max ("repetitions.max").
 * Errors name their field in err->field ("" when none is at fault).
 * *out must be sm_plan_fini'd on success; left empty on error. */
int sm_plan_expand(const sm_spec *spec, const sm_plan_host *fleet, size_t n_fleet, sm_plan *out,
                   sm_error *err);
void sm_plan_fini(sm_plan *p);

/* Keeps the cells i of p with keep[i] (keep has n_cells entries) and their jobs, in the same
 * order (jobs keep their order, round and repetition; their cell index follows the cells').
 * 0, or SM_ENOMEM with p unchanged. */
int sm_plan_keep(sm_plan *p, const bool *keep);

/* The circle method: n hosts (0..n-1) in rounds of disjoint unordered pairs, every pair
 * exactly once: n-1 rounds for even n, n for odd n (one host sits out each round). Writes
 * round[i * n + j] = the round in which {i, j} meet (i != j), symmetric. Returns the number of
 * rounds; 0 for n < 2. round must hold n * n entries. Each ordered pair (i, j) and (j, i) uses
 * the round of {i, j}: the two directions run one after the other. */
uint32_t sm_plan_rounds(size_t n, uint32_t *round);

#endif
