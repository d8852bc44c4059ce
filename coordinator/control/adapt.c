/* Repetitions a matrix run adds as it goes: more rounds for the cells whose confidence interval
 * is still wide, or whose samples were disturbed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/control/internal.h"
#include "proto/codec.h"
#include "proto/log.h"

/* A run whose spec gives repetitions as {"min","max","ci_rel"} starts each cell with min
 * measured repetitions; a run of a fixed count starts with that count, min = max. The variants
 * of one test on one host (or pair) form a group that is planned together, A B A B; a group
 * whose jobs have all ended is judged cell by cell with sm_reps_decide, and while any of its
 * cells is wide (and below max), or short of max undisturbed repetitions for disturbed ones
 * (and below max + remeasure), the whole group gets one more round, queued behind everything
 * its hosts already have, so that the paired ratio columns (tcp/unix of the same repetition)
 * stay paired and interleaved. A fixed run with remeasure 0 has no state here. */

typedef struct acell {
    uint32_t group;
    uint32_t round; /* the pair round its jobs carry (0 for local cells) */
    char host[SM_NAME_MAX + 1];
    char peer[SM_NAME_MAX + 1];
    sm_params params;
} acell;

typedef struct agroup {
    uint32_t first, n; /* its cells: first .. first + n - 1 (cells are ordered by group) */
    uint32_t pending;  /* its jobs not yet ended for good */
    uint32_t reps;     /* measured repetitions planned per cell so far */
} agroup;

struct adapt {
    sm_reps_rule rule; /* remeasure as sm_plan_remeasure bounds it */
    acell *cells;
    size_t n_cells;
    agroup *groups;
    size_t n_groups;
    uint32_t next_ord; /* the stored ord of the next job added: after every planned one */
};

/* Cells of one group are adjacent (the plan orders them test, host or pair, variant). */
static bool same_group(uint32_t test_a, const char *host_a, const char *peer_a, uint32_t test_b,
                       const char *host_b, const char *peer_b)
{
    return test_a == test_b && strcmp(host_a, host_b) == 0 && strcmp(peer_a, peer_b) == 0;
}

static adapt *adapt_new(const sm_spec *spec, size_t n_cells)
{
    adapt *ad = calloc(1, sizeof *ad);
    if (!ad)
        return NULL;
    ad->rule = sm_spec_rule(spec);
    ad->rule.remeasure = sm_plan_remeasure(spec, n_cells);
    ad->n_cells = n_cells;
    ad->cells = calloc(n_cells ? n_cells : 1, sizeof *ad->cells);
    ad->groups = calloc(n_cells ? n_cells : 1, sizeof *ad->groups);
    if (!ad->cells || !ad->groups) {
        free(ad->cells);
        free(ad->groups);
        free(ad);
        return NULL;
    }
    return ad;
}

void ctl_adapt_free(adapt *ad)
{
    if (!ad)
        return;
    free(ad->cells);
    free(ad->groups);
    free(ad);
}

/* Adds cell i, opening a group when it starts one. */
static void adapt_group_cell(adapt *ad, size_t i, bool starts, const char *host, const char *peer,
                             const sm_params *params)
{
    snprintf(ad->cells[i].host, sizeof ad->cells[i].host, "%s", host);
    snprintf(ad->cells[i].peer, sizeof ad->cells[i].peer, "%s", peer);
    ad->cells[i].params = *params;
    if (starts || ad->n_groups == 0)
        ad->groups[ad->n_groups++].first = (uint32_t)i;
    agroup *g = &ad->groups[ad->n_groups - 1];
    g->n++;
    ad->cells[i].group = (uint32_t)(ad->n_groups - 1);
}

/* The state of a run just planned: every job is pending, min repetitions each. */
int ctl_adapt_plan(crun *r, const sm_spec *spec, const sm_plan *plan, sm_error *err)
{
    adapt *ad = adapt_new(spec, plan->n_cells);
    if (!ad)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    for (size_t i = 0; i < plan->n_cells; i++) {
        const sm_cell *a = &plan->cells[i], *b = i ? &plan->cells[i - 1] : NULL;
        adapt_group_cell(ad, i,
                         !b || !same_group(a->test, a->host, a->peer, b->test, b->host, b->peer),
                         a->host, a->peer, &a->params);
    }
    for (size_t g = 0; g < ad->n_groups; g++)
        ad->groups[g].reps = spec->repetitions;
    for (size_t k = 0; k < plan->n_jobs; k++) {
        const sm_plan_job *pj = &plan->jobs[k];
        ad->cells[pj->cell].round = pj->round;
        ad->groups[ad->cells[pj->cell].group].pending++;
    }
    ad->next_ord = (uint32_t)plan->n_jobs;
    r->ad = ad;
    return 0;
}

/* The state of a run resumed after a restart, from its stored cells and jobs: the rounds it
 * added are jobs like the others, so the store holds all there is to know. A fixed run that
 * remeasures nothing (its default remeasure took no room in the job bound) gets none. */
int ctl_adapt_open(sm_control *c, crun *r, const sm_spec *spec, sm_error *err)
{
    sm_cell_row *cells = NULL;
    sm_job_row *jobs = NULL;
    size_t nc = 0, nj = 0;
    adapt *ad = NULL;
    int rc = sm_store_cells_list(c->st, r->id, &cells, &nc, err);
    if (!rc)
        rc = sm_store_run_jobs(c->st, r->id, &jobs, &nj, err);
    if (!rc && !(ad = adapt_new(spec, nc)))
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < nc; i++) {
        const sm_cell_row *a = &cells[i], *b = i ? &cells[i - 1] : NULL;
        sm_params params;
        if ((rc = sm_codec_params_decode(a->params_json, strlen(a->params_json), &params, err)))
            break;
        adapt_group_cell(ad, i,
                         !b || !same_group(a->test, a->host, a->peer, b->test, b->host, b->peer),
                         a->host, a->peer, &params);
    }
    for (size_t k = 0; !rc && k < nj; k++) {
        const sm_job_row *j = &jobs[k];
        if (j->cell >= nc)
            continue;
        agroup *g = &ad->groups[ad->cells[j->cell].group];
        ad->cells[j->cell].round = j->round;
        if (!j->warmup && j->rep + 1 > g->reps)
            g->reps = j->rep + 1;
        if (j->state != SM_JOB_DONE && j->state != SM_JOB_FAILED)
            g->pending++;
        if (j->ord >= ad->next_ord)
            ad->next_ord = j->ord + 1;
    }
    sm_store_cells_free(cells, nc);
    sm_store_jobs_free(jobs, nj);
    if (rc || (!spec->adaptive && ad->rule.remeasure == 0)) {
        ctl_adapt_free(ad);
        return rc;
    }
    r->ad = ad;
    return 0;
}

/* The decision for one cell of run r after reps measured repetitions, from its stored results:
 * the headline metric of each ok one, NaN for each failed one, SM_REPS_DISTURBED_SAMPLE for
 * each disturbed one. */
static int adapt_decide_cell(sm_control *c, const crun *r, uint32_t cell, uint32_t reps,
                             sm_reps_decision *d, sm_error *err)
{
    sm_run_result *rows = NULL;
    size_t n = 0;
    int rc = sm_store_cell_results(c->st, r->id, cell, &rows, &n, err);
    double *x = rc ? NULL : calloc(n ? n : 1, sizeof *x);
    if (!rc && !x)
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    const sm_metric m = sm_reps_metric(&r->ad->cells[cell].params);
    for (size_t i = 0; !rc && i < n; i++) {
        sm_result res;
        sm_error e;
        sm_result_init(&res);
        bool ok = sm_codec_result_decode(rows[i].result_json, strlen(rows[i].result_json), &res,
                                         &e) == 0 &&
                  res.ok && sm_result_has(&res, m);
        /* A disturbed sample is no sample, as the table leaves it out by default; the rule
         * may have it measured again. */
        x[i] = !ok ? NAN : res.host.disturbed ? SM_REPS_DISTURBED_SAMPLE : sm_result_get(&res, m);
        sm_result_fini(&res);
    }
    if (!rc && sm_reps_decide(x, n, reps, &r->ad->rule, d) != 0)
        rc = sm_error_set(err, SM_EINVAL, "run %" PRIu64 ": repetitions rule out of bounds", r->id);
    free(x);
    sm_store_run_results_free(rows, n);
    return rc;
}

/* Queues one more measured repetition of every cell of group g, in cell order (A B), behind
 * whatever the hosts already have. */
static int adapt_add_round(sm_control *c, crun *r, agroup *g, int64_t now_ms, sm_error *err)
{
    adapt *ad = r->ad;
    int rc = 0;
    for (uint32_t i = g->first; !rc && i < g->first + g->n; i++) {
        const acell *ac = &ad->cells[i];
        cagent *a = sm_map_get(c->agents, ac->host);
        cagent *b = ac->peer[0] ? sm_map_get(c->agents, ac->peer) : NULL;
        if (!a || (ac->peer[0] && !b))
            return sm_error_set(err, SM_EINVAL, "run %" PRIu64 ": cell %u has no agent", r->id, i);
        char *params_json = sm_codec_params_encode(&ac->params, err);
        cjob *j = calloc(1, sizeof *j);
        if (!params_json || !j) {
            free(params_json);
            free(j);
            return sm_error_set(err, SM_ENOMEM, "out of memory");
        }
        sm_job_row row;
        memset(&row, 0, sizeof row);
        snprintf(row.host, sizeof row.host, "%s", ac->host);
        snprintf(row.peer, sizeof row.peer, "%s", ac->peer);
        row.params_json = params_json;
        row.run_id = r->id;
        row.cell = i;
        row.rep = g->reps;
        row.round = ac->round;
        row.ord = ad->next_ord;
        rc = sm_store_job_insert_run(c->st, &row, now_ms, &j->id, err);
        free(params_json);
        if (!rc && sm_map_put_id(c->jobs, j->id, j) != 0)
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        if (rc) {
            free(j);
            return rc; /* the caller rolls the transaction back */
        }
        tell_change(c, SM_CHANGE_JOB, NULL, j->id, r->id);
        snprintf(j->host, sizeof j->host, "%s", ac->host);
        snprintf(j->peer, sizeof j->peer, "%s", ac->peer);
        j->params = ac->params;
        j->state = SM_JOB_QUEUED;
        j->attempt = 1;
        j->run_id = r->id;
        j->cell = i;
        /* After every job queued so far, in every queue: the one global order that keeps pair
         * jobs from waiting on each other holds. */
        j->ord = ad->next_ord++;
        ctl_enqueue(a, j);
        ctl_wake(c, a);
        if (b) {
            ctl_enqueue(b, j);
            ctl_wake(c, b);
        }
        g->pending++;
        r->total++;
    }
    g->reps++;
    rc = sm_store_run_set_total(c->st, r->id, r->total, err);
    if (!rc)
        tell_change(c, SM_CHANGE_RUN, NULL, 0, r->id);
    return rc;
}

/* Says why group g gets one more round: a CI still wide, or (past max) disturbed samples,
 * counted on the first cell that has them; d holds the decisions of its first n cells. */
static void log_round(const crun *r, const agroup *g, const sm_reps_decision *d, uint32_t n)
{
    const adapt *ad = r->ad;
    const acell *first = &ad->cells[g->first];
    uint32_t k = 0;
    while (k + 1 < n && !d[k].remeasure)
        k++;
    if (!d[k].remeasure) {
        sm_log(LOG_INFO, "SM-RUN-ROUND",
               "run %" PRIu64 ": cells %u..%u on %s%s%s: a CI is wider than +-%g%% of its median "
               "after %u repetitions, one more round",
               r->id, g->first, g->first + g->n - 1, first->host, first->peer[0] ? "->" : "",
               first->peer, ad->rule.ci_rel * 100, g->reps);
        return;
    }
    sm_log(LOG_NOTICE, "SM-RUN-ROUND",
           "run %" PRIu64 ": cells %u..%u on %s%s%s: %zu of %u samples of cell %u disturbed, one "
           "more round (%u of %u extra)",
           r->id, g->first, g->first + g->n - 1, first->host, first->peer[0] ? "->" : "",
           first->peer, d[k].n_disturbed, g->reps, g->first + k, g->reps - ad->rule.max + 1,
           ad->rule.remeasure);
}

/* Stores why each cell of group g stopped. A cell still wanting a round stopped on no rule
 * (its hosts are gone); a fixed count's cell that got its clean samples has nothing to say. */
static int stop_group(sm_control *c, const crun *r, const agroup *g, const sm_reps_decision *d,
                      uint32_t n, sm_error *err)
{
    const adapt *ad = r->ad;
    for (uint32_t i = 0; i < n; i++) {
        if (d[i].more || d[i].why == SM_REPS_NONE)
            continue;
        const acell *ac = &ad->cells[g->first + i];
        if (d[i].why == SM_REPS_DISTURBED)
            sm_log(LOG_WARNING, "SM-RUN-DISTURBED",
                   "run %" PRIu64 ": cell %u on %s%s%s stops short: %zu of %u repetitions "
                   "disturbed with %u extra, %zu clean",
                   r->id, g->first + i, ac->host, ac->peer[0] ? "->" : "", ac->peer,
                   d[i].n_disturbed, g->reps, g->reps - ad->rule.max, d[i].n_ok);
        int rc = sm_store_cell_set_stopped(c->st, r->id, g->first + i, d[i].why, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* Whether every host of group g is still there to run another round. */
static bool group_hosts_up(sm_control *c, const adapt *ad, const agroup *g)
{
    for (uint32_t i = g->first; i < g->first + g->n; i++) {
        const acell *ac = &ad->cells[i];
        const cagent *a = sm_map_get(c->agents, ac->host);
        const cagent *b = ac->peer[0] ? sm_map_get(c->agents, ac->peer) : NULL;
        if (!a || a->status == SM_AGENT_LOST || (ac->peer[0] && (!b || b->status == SM_AGENT_LOST)))
            return false;
    }
    return true;
}

/* A job of run r ended for good (done, or failed after its retry): when it was the last
 * pending one of its group, the group is judged. A group whose hosts are gone, or a run being
 * cancelled, gets no new round. */
int ctl_adapt_job_ended(sm_control *c, crun *r, uint32_t cell, int64_t now_ms, sm_error *err)
{
    adapt *ad = r->ad;
    if (cell >= ad->n_cells)
        return 0;
    agroup *g = &ad->groups[ad->cells[cell].group];
    if (g->pending > 0)
        g->pending--;
    if (g->pending > 0 || r->cancelling)
        return 0;
    bool more = false;
    sm_reps_decision d[SM_SPEC_VARIANTS_MAX]; /* a group is one test's variants */
    const uint32_t n = g->n < SM_SPEC_VARIANTS_MAX ? g->n : SM_SPEC_VARIANTS_MAX;
    for (uint32_t i = 0; i < n; i++) {
        int rc = adapt_decide_cell(c, r, g->first + i, g->reps, &d[i], err);
        if (rc)
            return rc;
        more = more || d[i].more;
    }
    if (more && group_hosts_up(c, ad, g)) {
        log_round(r, g, d, n);
        return adapt_add_round(c, r, g, now_ms, err);
    }
    return stop_group(c, r, g, d, n, err);
}
