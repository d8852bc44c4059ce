/* An experiment's report (reports.h, sm_reports_experiment): for each suspect of its plan, the
 * share of the anomaly's gap that its treatment closed on the anomaly's host, from the
 * experiment's own samples (control and treated, interleaved) and the fleet's samples of the
 * anomaly's cell in the run it explains; and, where the plan has one, the share of the gap its
 * reverse opened on a fleet host (that host's control and treated samples against the anomaly
 * host's control, all of the experiment). */
#include "coordinator/analysis/experiment.h"
#include "coordinator/analysis/export.h"
#include "coordinator/analysis/xpreport.h"
#include "coordinator/analysis/xpsearch.h"
#include "coordinator/reports/internal.h"
#include "coordinator/reports/reports.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The clean samples of one cell (or of several) in metric m: measured, ok, no warm-up, not
 * disturbed. disturbed and failed count what was left out; reason keeps the first failure's. */
typedef struct samples {
    double *v;
    size_t n;
    uint32_t disturbed, failed;
    const char *reason;
} samples;

static bool cell_is(const run_data *d, uint32_t cell, const char *host, const char *test,
                    bool other_hosts)
{
    const sm_cell *c = &d->cells[cell];
    if (c->params.scope != SM_SCOPE_LOCAL)
        return false;
    if ((strcmp(c->host, host) == 0) == other_hosts)
        return false;
    /* The treated arms are the anomaly's test with a treatment: named apart, matched as it. */
    sm_params untreated = c->params;
    untreated.treatment[0] = '\0';
    char label[SM_TABLE_LABEL_MAX];
    sm_export_label(&untreated, SM_LABEL_TEST, false, label, sizeof label);
    return strcmp(label, test) == 0;
}

/* The samples of d's cells of test on host (other_hosts: on every other host) whose treatment
 * is treatment (NULL: any). */
static int collect(const run_data *d, const char *host, const char *test, bool other_hosts,
                   const char *treatment, sm_metric m, samples *out)
{
    memset(out, 0, sizeof *out);
    out->v = calloc(d->np ? d->np : 1, sizeof *out->v);
    if (!out->v)
        return SM_ENOMEM;
    for (size_t i = 0; i < d->np; i++) {
        const sm_export_point *p = &d->points[i];
        if (p->cell >= d->nc || p->warmup || !p->measured ||
            !cell_is(d, p->cell, host, test, other_hosts))
            continue;
        if (treatment && strcmp(d->cells[p->cell].params.treatment, treatment) != 0)
            continue;
        if (!p->ok) {
            out->failed++;
            if (!out->reason && p->reason && p->reason[0])
                out->reason = p->reason;
        } else if (p->disturbed) {
            out->disturbed++;
        } else if ((p->have & (1ull << m)) != 0 && isfinite(p->v[m])) {
            out->v[out->n++] = p->v[m];
        }
    }
    return 0;
}

/* The metric of the anomaly's column: its cell's headline, from the first cell of that test. */
static bool anomaly_metric(const run_data *d, const char *test, sm_metric *m)
{
    for (size_t i = 0; i < d->nc; i++) {
        char label[SM_TABLE_LABEL_MAX];
        sm_export_label(&d->cells[i].params, SM_LABEL_TEST, false, label, sizeof label);
        if (strcmp(label, test) == 0) {
            *m = sm_export_headline(&d->cells[i].params);
            return true;
        }
    }
    return false;
}

/* One suspect's estimate; an untested suspect keeps its plan's why. */
static void estimate(const char *host, const sm_xp_suspect *s, const samples *ctrl,
                     const samples *treat, const samples *fleet, uint64_t seed, sm_xp_estimate *e)
{
    memset(e, 0, sizeof *e);
    e->share = e->lo = e->hi = NAN;
    e->ctrl_median = e->treat_median = e->fleet_median = NAN;
    if (s->treatment[0] == '\0') {
        e->verdict = SM_XP_UNTESTED;
        snprintf(e->why, sizeof e->why, "%s", s->why_untested);
        return;
    }
    if (treat->n == 0 && treat->failed > 0 && treat->reason) {
        /* Every treated job failed: the agent refused the treatment, or could not apply it. */
        e->verdict = SM_XP_UNTESTED;
        snprintf(e->why, sizeof e->why, "%s", treat->reason);
        e->n_ctrl = ctrl->n;
        return;
    }
    sm_xp_estimate_share_for(host, ctrl->v, ctrl->n, treat->v, treat->n, fleet->v, fleet->n, seed,
                             e);
    if (e->verdict == SM_XP_INCONCLUSIVE && (treat->disturbed || ctrl->disturbed)) {
        const size_t at = strlen(e->why);
        snprintf(e->why + at, sizeof e->why - at, " (%u treated and %u control samples disturbed)",
                 treat->disturbed, ctrl->disturbed);
    }
}

/* The reverse of suspect s on its reverse_host: ref's own control, ref with host's value, and
 * host's control as the other side; UNTESTED when s has none. false: out of memory. */
static bool reverse(const run_data *d, const char *host, const char *test, sm_metric m,
                    const sm_xp_suspect *s, const samples *rctrl, const samples *hctrl,
                    uint64_t seed, sm_xp_estimate *v)
{
    memset(v, 0, sizeof *v);
    v->share = v->lo = v->hi = NAN;
    v->ctrl_median = v->treat_median = v->fleet_median = NAN;
    v->verdict = SM_XP_UNTESTED;
    if (s->reverse[0] == '\0')
        return true;
    samples rt;
    if (collect(d, s->reverse_host, test, false, s->reverse, m, &rt))
        return false;
    if (rt.n == 0 && rt.failed > 0 && rt.reason) {
        v->verdict = SM_XP_INCONCLUSIVE;
        snprintf(v->why, sizeof v->why, "every job with %s's value on %s failed: %s", host,
                 s->reverse_host, rt.reason);
    } else {
        sm_xp_estimate_share_for(s->reverse_host, rctrl->v, rctrl->n, rt.v, rt.n, hctrl->v,
                                 hctrl->n, seed, v);
        sm_xp_reverse_judge(v, host, s->reverse_host);
    }
    free(rt.v);
    return true;
}

/* One experiment's estimates: its plan, each suspect's estimate and reverse, from its own run
 * and the run it explains. */
typedef struct answer {
    sm_xp_plan plan;
    sm_xp_estimate *est, *rev;
    samples ctrl, fleet;
    sm_metric m;
    sm_run_state state;
} answer;

static void answer_fini(answer *a)
{
    free(a->est);
    free(a->rev);
    free(a->ctrl.v);
    free(a->fleet.v);
    sm_xp_plan_fini(&a->plan);
    memset(a, 0, sizeof *a);
}

/* Loads experiment xr's answer into *a: 0, or a report status with its reason in err. */
static int answer_load(sm_reports *r, const sm_experiment_row *xr, answer *a, sm_error *err)
{
    memset(a, 0, sizeof *a);
    run_data d, p;
    memset(&d, 0, sizeof d);
    memset(&p, 0, sizeof p);
    samples rctrl = {0}, *treat = NULL;
    int status = 0;
    if (sm_xp_plan_from_json(xr->plan_json, &a->plan, err) != 0) {
        status = SM_REPORT_FAILED;
        goto out;
    }
    status = run_data_load(r->st, xr->run_id, report_limit(r), 0, &d, err);
    if (status == 0)
        status = run_data_load(r->st, xr->parent_run, report_limit(r), d.held, &p, err);
    if (status != 0)
        goto out;
    a->state = d.run.state;
    a->m = SM_M_SECONDS;
    if (!anomaly_metric(&p, xr->test, &a->m)) {
        sm_error_set(err, SM_EINVAL, "run %" PRIu64 " has no test %s any more", xr->parent_run,
                     xr->test);
        status = SM_REPORT_FAILED;
        goto out;
    }
    const size_t n = a->plan.n ? a->plan.n : 1;
    treat = calloc(n, sizeof *treat);
    a->est = calloc(n, sizeof *a->est);
    a->rev = calloc(n, sizeof *a->rev);
    /* The reverses share one fleet host, and its untreated control. */
    const char *ref = NULL;
    for (size_t i = 0; i < a->plan.n && !ref; i++)
        ref = a->plan.v[i].reverse[0] ? a->plan.v[i].reverse_host : NULL;
    bool ok = treat && a->est && a->rev &&
              !collect(&d, xr->host, xr->test, false, "", a->m, &a->ctrl) &&
              !collect(&p, xr->host, xr->test, true, NULL, a->m, &a->fleet) &&
              !(ref && collect(&d, ref, xr->test, false, "", a->m, &rctrl));
    for (size_t i = 0; ok && i < a->plan.n; i++) {
        const sm_xp_suspect *x = &a->plan.v[i];
        ok = !(x->treatment[0] &&
               collect(&d, xr->host, xr->test, false, x->treatment, a->m, &treat[i]));
        if (ok)
            estimate(xr->host, x, &a->ctrl, &treat[i], &a->fleet, xr->run_id * 1000003u + i,
                     &a->est[i]);
        ok = ok && reverse(&d, xr->host, xr->test, a->m, x, &rctrl, &a->ctrl,
                           xr->run_id * 1000003u + a->plan.n + i, &a->rev[i]);
    }
    if (!ok) {
        sm_error_set(err, SM_ENOMEM, "out of memory");
        status = SM_REPORT_FAILED;
    }
out:
    for (size_t i = 0; treat && i < a->plan.n; i++)
        free(treat[i].v);
    free(treat);
    free(rctrl.v);
    run_data_fini(&d);
    run_data_fini(&p);
    if (status != 0)
        answer_fini(a);
    return status;
}

/* Whether plan p is a first experiment's (it has single suspects), not a search's stage. */
static bool is_head(const sm_xp_plan *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].item[0])
            return true;
    return false;
}

/* A search as far as experiment xr: its head's plan, what each subset's estimate was and in
 * which run, and how many stages ran. */
typedef struct search {
    sm_xp_search s;
    sm_xp_plan head;
    uint64_t head_run;
    size_t stages;
    bool running; /* the newest stage still runs: its subsets are not known yet */
    uint64_t run_of[1u << SM_XP_DD_MAX];
    sm_xp_estimate est_of[1u << SM_XP_DD_MAX];
} search;

/* Records answer a's subsets, run run, into q. */
static void record(search *q, const answer *a, uint64_t run)
{
    for (size_t i = 0; i < a->plan.n; i++) {
        const sm_xp_suspect *x = &a->plan.v[i];
        const uint32_t m = sm_xp_search_mask(&q->s, &q->head, x->treatment);
        if (m && sm_xp_search_record(&q->s, &q->head, x->treatment, a->est[i].verdict)) {
            q->run_of[m] = run;
            q->est_of[m] = a->est[i];
        }
    }
}

/* The search experiment xr (whose answer is self) starts or is a stage of: false when it is
 * none (its head has nothing to narrow down), or on an error. q is the caller's, zeroed. */
static bool search_of(sm_reports *r, const sm_experiment_row *xr, const answer *self, search *q)
{
    sm_experiment_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (sm_store_experiments_of(r->st, xr->parent_run, &rows, &n, &err) != 0)
        return false;
    /* The newest head of the same host and test at or before xr; the stages after it. */
    size_t h = SIZE_MAX;
    for (size_t i = 0; i < n && rows[i].run_id <= xr->run_id; i++) {
        sm_xp_plan p = {0};
        if (strcmp(rows[i].host, xr->host) == 0 && strcmp(rows[i].test, xr->test) == 0 &&
            sm_xp_plan_from_json(rows[i].plan_json, &p, &err) == 0 && is_head(&p))
            h = i;
        sm_xp_plan_fini(&p);
    }
    bool found = false;
    answer ha = {0};
    const answer *head = NULL;
    if (h != SIZE_MAX && rows[h].run_id == xr->run_id)
        head = self;
    else if (h != SIZE_MAX && answer_load(r, &rows[h], &ha, &err) == 0)
        head = &ha;
    if (head && head->state != SM_RUN_RUNNING && head->state != SM_RUN_CANCELLED &&
        sm_xp_search_start(&q->s, &head->plan, head->est) &&
        sm_xp_plan_from_json(rows[h].plan_json, &q->head, &err) == 0) {
        found = true;
        q->head_run = rows[h].run_id;
        const size_t full = (1u << q->s.k) - 1;
        q->run_of[full] = q->head_run;
        q->est_of[full] = head->est[head->plan.n - 1];
        for (size_t b = 0; b < q->s.k; b++) {
            q->run_of[1u << b] = q->head_run;
            q->est_of[1u << b] = head->est[q->s.idx[b]];
        }
        for (size_t i = h + 1; i < n && rows[i].run_id <= xr->run_id; i++) {
            if (strcmp(rows[i].host, xr->host) != 0 || strcmp(rows[i].test, xr->test) != 0)
                continue;
            answer sa = {0};
            const answer *st = rows[i].run_id == xr->run_id ? self : NULL;
            if (!st && answer_load(r, &rows[i], &sa, &err) == 0)
                st = &sa;
            if (st && st->state == SM_RUN_RUNNING)
                q->running = true;
            else if (st && st->state != SM_RUN_CANCELLED)
                record(q, st, rows[i].run_id);
            q->stages += st != NULL;
            answer_fini(&sa);
        }
    }
    answer_fini(&ha);
    sm_store_experiments_free(rows, n);
    return found;
}

/* The search's state for the report: its next stage or its result. */
static void search_result(const search *q, sm_xp_search_view *v)
{
    memset(v, 0, sizeof *v);
    v->k = q->s.k;
    v->stages = q->stages;
    v->arms_max = sm_xp_dd_budget(q->s.k);
    v->stages_max = (size_t)sm_xp_dd_stages_max(q->s.k);
    v->head_run = q->head_run;
    for (size_t b = 0; b < q->s.k; b++)
        v->suspects[b] = q->head.v[q->s.idx[b]].label;
    uint32_t arms[SM_XP_DD_BATCH_MAX], result = 0;
    size_t n = 0;
    if (q->running ||
        sm_xp_dd_next(q->s.k, q->s.known, arms, SM_XP_DD_BATCH_MAX, &n, &result) != 0) {
        v->state = "running";
        return;
    }
    if (n > 0) {
        v->state = "narrowing";
        v->n_next = n;
        for (size_t i = 0; i < n; i++)
            sm_xp_search_label(&q->s, &q->head, arms[i], v->next[i], sizeof v->next[i]);
        return;
    }
    v->state = "done";
    v->result_run = q->run_of[result];
    v->result = q->est_of[result];
    sm_xp_search_label(&q->s, &q->head, result, v->label, sizeof v->label);
    sm_xp_plan one = {0};
    sm_error err = {0};
    if (sm_xp_search_stage_plan(&q->s, &q->head, &result, 1, &one, &err) == 0)
        v->found = one.v[0];
    sm_xp_plan_fini(&one);
    v->unresolved = sm_xp_dd_unresolved(q->s.k, q->s.known);
}

sm_report_status sm_reports_experiment(sm_reports *r, uint64_t id, sm_run_report *out)
{
    memset(out, 0, sizeof *out);
    out->ctype = "application/json";
    sm_experiment_row xr;
    sm_error err = {0};
    if (sm_store_experiment_get(r->st, id, &xr, &err) != 0)
        return report_error(out, err.code == SM_EINVAL ? SM_REPORT_NO_RUN : SM_REPORT_FAILED,
                            err.msg, err.code == SM_EINVAL ? "id" : NULL);
    answer a;
    int status = answer_load(r, &xr, &a, &err);
    if (status != 0) {
        sm_experiment_row_fini(&xr);
        return report_error(out, status, err.msg, NULL);
    }
    search *q = calloc(1, sizeof *q);
    sm_xp_search_view view;
    const bool searched = q && search_of(r, &xr, &a, q);
    if (searched)
        search_result(q, &view);
    const sm_xp_report rep = {
        .run_id = id,
        .parent_run = xr.parent_run,
        .host = xr.host,
        .test = xr.test,
        .unit = sm_metric_unit(a.m),
        .state = sm_run_state_name(a.state),
        .plan = &a.plan,
        .est = a.est,
        .rev = a.rev,
        .n_ctrl = a.ctrl.n,
        .n_fleet = a.fleet.n,
        .ctrl_disturbed = a.ctrl.disturbed,
        .search = searched ? &view : NULL,
    };
    status = report_body(out, sm_xp_report_json(&rep));
    if (q)
        sm_xp_plan_fini(&q->head);
    free(q);
    answer_fini(&a);
    sm_experiment_row_fini(&xr);
    return status;
}

int sm_reports_experiment_next(sm_reports *r, uint64_t id, sm_xp_plan *stage, sm_error *err)
{
    memset(stage, 0, sizeof *stage);
    sm_experiment_row xr;
    if (sm_store_experiment_get(r->st, id, &xr, err) != 0)
        return -1;
    answer a;
    int rc = answer_load(r, &xr, &a, err) == 0 ? 0 : -1;
    search *q = rc == 0 ? calloc(1, sizeof *q) : NULL;
    if (rc == 0 && q && a.state == SM_RUN_DONE && search_of(r, &xr, &a, q) && !q->running) {
        uint32_t arms[SM_XP_DD_BATCH_MAX], result = 0;
        size_t n = 0;
        if (sm_xp_dd_next(q->s.k, q->s.known, arms, SM_XP_DD_BATCH_MAX, &n, &result) == 0 && n > 0)
            rc = sm_xp_search_stage_plan(&q->s, &q->head, arms, n, stage, err) == 0 ? 1 : -1;
    }
    if (q)
        sm_xp_plan_fini(&q->head);
    free(q);
    answer_fini(&a);
    sm_experiment_row_fini(&xr);
    return rc;
}
