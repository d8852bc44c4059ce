/* Matrix runs: starting one (planned over the fleet, its cells and jobs stored, its jobs queued
 * in one order, side by side or one at a time), cancelling one, and freeing what one holds. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/control/internal.h"
#include "coordinator/control/sharing.h"
#include "coordinator/analysis/export.h"
#include "proto/codec.h"
#include "proto/log.h"

void ctl_run_free(void *p)
{
    crun *r = p;
    if (!r)
        return;
    ctl_adapt_free(r->ad);
    free(r);
}

/* Orders job indexes of the plan given as context (qsort_r). */
static int by_schedule(const void *x, const void *y, void *ctx)
{
    const sm_plan *plan = ctx;
    const sm_plan_job *a = &plan->jobs[*(const size_t *)x];
    const sm_plan_job *b = &plan->jobs[*(const size_t *)y];
    if (a->warmup != b->warmup)
        return a->warmup ? -1 : 1;
    if (a->rep != b->rep)
        return a->rep < b->rep ? -1 : 1;
    if (a->round != b->round)
        return a->round < b->round ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Adds the agent named to the run's hosts, once. */
static int add_host(sm_control *c, sm_map *seen, const char *name, sm_sharing_host *hosts,
                    size_t *n)
{
    const cagent *a = name[0] ? sm_map_get(c->agents, name) : NULL;
    if (!a || sm_map_get(seen, name))
        return 0;
    if (sm_map_put(seen, name, (void *)a) != 0)
        return SM_ENOMEM;
    hosts[(*n)++] = (sm_sharing_host){a->name, a->boot_id, a->machine_id};
    return 0;
}

/* Whether the run's jobs go side by side, and the note that says why (see control.h). */
static int run_parallel(sm_control *c, const sm_spec *spec, const sm_plan *plan, bool *parallel,
                        char *note, size_t len, sm_error *err)
{
    size_t n = 0, sharing = 0;
    char machines[SM_RUN_NOTE_MAX - 128]; /* the rest is room for the words around it */
    sm_map *seen = sm_map_new();
    sm_sharing_host *hosts = calloc(sm_map_size(c->agents) + 1, sizeof *hosts);
    int rc = seen && hosts ? 0 : SM_ENOMEM;
    for (size_t i = 0; i < plan->n_cells && !rc; i++)
        if (!(rc = add_host(c, seen, plan->cells[i].host, hosts, &n)))
            rc = add_host(c, seen, plan->cells[i].peer, hosts, &n);
    if (!rc)
        rc = sm_sharing_find(hosts, n, &sharing, machines, sizeof machines, err);
    else
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    sm_map_free(seen, NULL);
    free(hosts);
    if (rc)
        return rc;
    *parallel = spec->parallel_given ? spec->parallel : sharing == 0;
    if (!*parallel && spec->parallel_given)
        snprintf(note, len, "the spec says \"parallel\": false");
    else if (!*parallel)
        snprintf(note, len, "%s", machines);
    else if (sharing)
        snprintf(note, len,
                 "%s: their jobs run side by side on its CPUs, as the spec asks "
                 "(\"parallel\": true)",
                 machines);
    else
        note[0] = '\0';
    return 0;
}

/* Expands the spec over the fleet as the planner sees it: every agent the coordinator knows. A
 * pair's client connects to its server's registered data address, and nowhere else, so a server
 * without one is refused. On success *plan is the caller's to sm_plan_fini. */
static int plan_run(sm_control *c, const sm_spec *spec, sm_plan *plan, sm_error *err)
{
    size_t n = sm_map_size(c->agents), k = 0, cur = 0;
    sm_plan_host *fleet = calloc(n ? n : 1, sizeof *fleet);
    if (!fleet)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    const char *key;
    void *val;
    while (sm_map_next(c->agents, &cur, &key, &val) && k < n) {
        const cagent *a = val;
        sm_plan_host *h = &fleet[k++];
        snprintf(h->name, sizeof h->name, "%s", a->name);
        snprintf(h->data_addr, sizeof h->data_addr, "%s", a->data_addr);
        if (a->n_labels)
            memcpy(h->labels, a->labels, a->n_labels * sizeof *a->labels);
        h->n_labels = a->n_labels;
        h->online = a->status != SM_AGENT_LOST;
    }
    int rc = sm_plan_expand(spec, fleet, k, plan, err);
    free(fleet);
    if (rc)
        return rc;
    for (size_t i = 0; i < plan->n_cells; i++) {
        const cagent *srv =
            plan->cells[i].peer[0] ? sm_map_get(c->agents, plan->cells[i].peer) : NULL;
        if (plan->cells[i].peer[0] && (!srv || !srv->data_addr[0])) {
            sm_error_field(err, "hosts");
            rc = sm_error_set(err, SM_EINVAL,
                              "hosts: %s has no data address (start its agent with "
                              "--data-addr) and cannot serve pair jobs",
                              plan->cells[i].peer);
            sm_plan_fini(plan);
            return rc;
        }
    }
    return 0;
}

/* Stores the run's cells; cell_params[i] gets cell i's params as JSON, for its jobs' rows. */
static int store_cells(sm_control *c, uint64_t run_id, const sm_plan *plan, char **cell_params,
                       sm_error *err)
{
    int rc = 0;
    for (size_t i = 0; i < plan->n_cells && !rc; i++) {
        const sm_cell *cell = &plan->cells[i];
        if (!(cell_params[i] = sm_codec_params_encode(&cell->params, err)))
            return SM_ENOMEM;
        sm_cell_row row = {.idx = (uint32_t)i,
                           .test = cell->test,
                           .variant = cell->variant,
                           .params_json = cell_params[i]};
        snprintf(row.host, sizeof row.host, "%s", cell->host);
        snprintf(row.peer, sizeof row.peer, "%s", cell->peer);
        rc = sm_store_cell_insert(c->st, run_id, &row, err);
    }
    return rc;
}

/* Stores the run's jobs in dispatch order; made[i] gets plan job i in memory, not yet queued. */
static int store_jobs(sm_control *c, uint64_t run_id, const sm_plan *plan, const size_t *order,
                      char *const *cell_params, cjob **made, int64_t now_ms, sm_error *err)
{
    for (size_t k = 0; k < plan->n_jobs; k++) {
        const size_t i = order[k];
        const sm_plan_job *pj = &plan->jobs[i];
        const sm_cell *cell = &plan->cells[pj->cell];
        sm_job_row row;
        memset(&row, 0, sizeof row);
        snprintf(row.host, sizeof row.host, "%s", cell->host);
        snprintf(row.peer, sizeof row.peer, "%s", cell->peer);
        row.params_json = cell_params[pj->cell];
        row.run_id = run_id;
        row.cell = pj->cell;
        row.rep = pj->rep;
        row.warmup = pj->warmup;
        row.round = pj->round;
        row.ord = pj->order;
        cjob *j = made[i] = calloc(1, sizeof *j);
        if (!j)
            return sm_error_set(err, SM_ENOMEM, "out of memory");
        int rc = sm_store_job_insert_run(c->st, &row, now_ms, &j->id, err);
        if (rc)
            return rc;
        snprintf(j->host, sizeof j->host, "%s", cell->host);
        snprintf(j->peer, sizeof j->peer, "%s", cell->peer);
        j->params = cell->params;
        j->state = SM_JOB_QUEUED;
        j->attempt = 1;
        j->run_id = run_id;
        j->cell = pj->cell;
    }
    return 0;
}

/* Queues the jobs made in dispatch order, which is each host's queue order: repetitions interleave
 * per host. A job queued is no longer made[]'s. */
static void queue_jobs(sm_control *c, const sm_plan *plan, const size_t *order, cjob **made)
{
    for (size_t k = 0; k < plan->n_jobs; k++) {
        const size_t i = order[k];
        cjob *j = made[i];
        cagent *a = sm_map_get(c->agents, j->host);
        cagent *b = j->peer[0] ? sm_map_get(c->agents, j->peer) : NULL;
        if (!a || (j->peer[0] && !b) || sm_map_put_id(c->jobs, j->id, j) != 0) {
            free(j);
            made[i] = NULL;
            continue;
        }
        made[i] = NULL;
        j->ord = (uint32_t)k;
        ctl_enqueue(a, j);
        ctl_wake(c, a);
        if (b) {
            ctl_enqueue(b, j);
            ctl_wake(c, b);
        }
    }
}

/* Whether cell x is one of only[0..n). */
static bool picked(const sm_cell *x, const sm_control_pick *only, size_t n)
{
    char row[2 * SM_NAME_LEN + 2];
    snprintf(row, sizeof row, "%s%s%s", x->host, x->peer[0] ? "->" : "", x->peer);
    sm_table_col col;
    sm_export_column(&x->params, &col);
    for (size_t i = 0; i < n; i++)
        if (strcmp(only[i].row, row) == 0 && strcmp(only[i].test, col.label) == 0)
            return true;
    return false;
}

/* Narrows plan to the cells only[0..n) names; none left is SM_EINVAL. */
static int plan_only(sm_plan *plan, const sm_control_pick *only, size_t n, sm_error *err)
{
    bool *keep = calloc(plan->n_cells ? plan->n_cells : 1, sizeof *keep);
    if (!keep)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    for (size_t i = 0; i < plan->n_cells; i++)
        keep[i] = picked(&plan->cells[i], only, n);
    int rc = sm_plan_keep(plan, keep);
    free(keep);
    if (rc)
        return sm_error_set(err, rc, "out of memory");
    if (plan->n_cells == 0) {
        sm_error_field(err, "cells");
        return sm_error_set(err, SM_EINVAL,
                            "cells: none of the %zu cells can be planned now (their hosts are "
                            "gone or offline)",
                            n);
    }
    return 0;
}

int ctl_run_start(sm_control *c, const char *spec_json, const sm_spec *spec,
                  const sm_control_pick *only, size_t n_only, int64_t now_ms, uint64_t *run_id,
                  sm_error *err)
{
    sm_plan plan;
    int rc = plan_run(c, spec, &plan, err);
    if (rc)
        return rc;
    if (only && (rc = plan_only(&plan, only, n_only, err)) != 0) {
        sm_plan_fini(&plan);
        return rc;
    }
    /* One global order for every queue: warm-up first, then by repetition, then the pair
     * rounds (disjoint pairs side by side), then the plan's order. */
    size_t *order = calloc(plan.n_jobs ? plan.n_jobs : 1, sizeof *order);
    if (!order) {
        sm_plan_fini(&plan);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < plan.n_jobs; i++)
        order[i] = i;
    qsort_r(order, plan.n_jobs, sizeof *order, by_schedule, &plan);
    crun *r = calloc(1, sizeof *r);
    cjob **made = calloc(plan.n_jobs ? plan.n_jobs : 1, sizeof *made);
    char **cell_params = calloc(plan.n_cells ? plan.n_cells : 1, sizeof *cell_params);
    if (!r || !made || !cell_params) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        goto out;
    }
    bool parallel;
    char note[SM_RUN_NOTE_MAX];
    /* On an error the caller rolls the transaction back. */
    if ((rc = run_parallel(c, spec, &plan, &parallel, note, sizeof note, err)) ||
        (rc = sm_store_run_insert(c->st, spec->name, spec_json, (uint32_t)plan.n_jobs, now_ms,
                                  run_id, err)) ||
        (rc = sm_store_run_set_parallel(c->st, *run_id, parallel, note, err)) ||
        (rc = store_cells(c, *run_id, &plan, cell_params, err)) ||
        (rc = store_jobs(c, *run_id, &plan, order, cell_params, made, now_ms, err)))
        goto out;
    r->id = *run_id;
    r->parallel = parallel;
    r->total = (uint32_t)plan.n_jobs;
    /* Any run whose rule can add rounds: adaptive, or remeasuring disturbed samples. */
    if ((spec->adaptive || plan.remeasure > 0) && (rc = ctl_adapt_plan(r, spec, &plan, err)))
        goto out;
    if (sm_map_put_id(c->runs, r->id, r) != 0) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        goto out;
    }
    r = NULL;
    queue_jobs(c, &plan, order, made);
    char extra[64] = "";
    if (plan.remeasure)
        snprintf(extra, sizeof extra, ", up to %u more a cell where samples are disturbed",
                 plan.remeasure);
    sm_log(LOG_NOTICE, "SM-RUN-START", "run %" PRIu64 " (%s): %zu cells, %zu jobs%s", *run_id,
           spec->name, plan.n_cells, plan.n_jobs, extra);
    tell_change(c, SM_CHANGE_RUN, NULL, 0, *run_id);
    if (note[0])
        sm_log(parallel ? LOG_WARNING : LOG_NOTICE,
               parallel ? "SM-RUN-SHARED-CPUS" : "SM-RUN-SERIAL", "run %" PRIu64 " (%s): %s",
               *run_id, spec->name, note);
out:
    for (size_t i = 0; made && i < plan.n_jobs; i++)
        free(made[i]);
    for (size_t i = 0; cell_params && i < plan.n_cells; i++)
        free(cell_params[i]);
    free(made);
    free(cell_params);
    free(order);
    ctl_run_free(r);
    sm_plan_fini(&plan);
    return rc;
}

int ctl_run_cancel(sm_control *c, uint64_t run_id, int64_t now_ms, sm_error *err)
{
    crun *r = run_get(c, run_id);
    if (!r)
        return sm_error_set(err, SM_EINVAL, "run %" PRIu64 " is not running", run_id);
    size_t cur = 0;
    const char *key;
    void *val;
    int rc = 0;
    /* Counting happens in ctl_job_finish; keep the run out of the map's way until the end. */
    const uint32_t total = r->total;
    r->cancelling = true;
    while (!rc && sm_map_next(c->agents, &cur, &key, &val)) {
        cagent *a = val;
        for (cjob *j = a->qhead, *next; !rc && j; j = next) {
            next = *link_of(a, j);
            if (j->run_id != run_id)
                continue;
            ctl_unqueue_all(c, j);
            rc = ctl_job_finish(c, j, SM_JOB_FAILED, "cancelled: the run was cancelled", now_ms,
                                err);
        }
        cjob *j = a->current;
        if (!rc && j && j->run_id == run_id) {
            ctl_cancel(c, a, j, true);
            rc = ctl_job_finish(c, j, SM_JOB_FAILED, "cancelled: the run was cancelled", now_ms,
                                err);
        }
    }
    if (rc)
        return rc;
    /* ctl_job_finish ended the run as failed when its last job went; say cancelled instead. */
    sm_run_row row;
    if ((rc = sm_store_run_get(c->st, run_id, &row, err)) != 0)
        return rc;
    rc = sm_store_run_update(c->st, run_id, SM_RUN_CANCELLED, "cancelled", row.done, row.failed,
                             now_ms, err);
    if (!rc)
        tell_change(c, SM_CHANGE_RUN, NULL, 0, run_id);
    sm_run_row_fini(&row);
    ctl_run_free(sm_map_del_id(c->runs, run_id));
    sm_log(LOG_NOTICE, "SM-RUN-CANCEL", "run %" PRIu64 " cancelled (%u jobs)", run_id, total);
    return rc;
}
