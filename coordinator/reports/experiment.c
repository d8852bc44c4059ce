/* An experiment's report (reports.h, sm_reports_experiment): for each suspect of its plan, the
 * share of the anomaly's gap that its treatment closed on the anomaly's host, from the
 * experiment's own samples (control and treated, interleaved) and the fleet's samples of the
 * anomaly's cell in the run it explains; and, where the plan has one, the share of the gap its
 * reverse opened on a fleet host (that host's control and treated samples against the anomaly
 * host's control, all of the experiment). */
#include "coordinator/analysis/experiment.h"
#include "coordinator/analysis/export.h"
#include "coordinator/analysis/xpreport.h"
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

sm_report_status sm_reports_experiment(sm_reports *r, uint64_t id, sm_run_report *out)
{
    memset(out, 0, sizeof *out);
    out->ctype = "application/json";
    sm_experiment_row xr;
    sm_error err = {0};
    if (sm_store_experiment_get(r->st, id, &xr, &err) != 0)
        return report_error(out, err.code == SM_EINVAL ? SM_REPORT_NO_RUN : SM_REPORT_FAILED,
                            err.msg, err.code == SM_EINVAL ? "id" : NULL);
    sm_xp_plan plan = {0};
    run_data d, p;
    memset(&d, 0, sizeof d);
    memset(&p, 0, sizeof p);
    samples ctrl = {0}, fleet = {0}, rctrl = {0}, *treat = NULL;
    sm_xp_estimate *est = NULL, *rev = NULL;
    int status = 0;
    if (sm_xp_plan_from_json(xr.plan_json, &plan, &err) != 0) {
        status = report_error(out, SM_REPORT_FAILED, err.msg, NULL);
        goto out;
    }
    status = run_data_load(r->st, id, report_limit(r), 0, &d, &err);
    if (status == 0)
        status = run_data_load(r->st, xr.parent_run, report_limit(r), d.held, &p, &err);
    if (status != 0) {
        status = report_error(out, status, err.msg, NULL);
        goto out;
    }
    sm_metric m = SM_M_SECONDS;
    if (!anomaly_metric(&p, xr.test, &m)) {
        char msg[256];
        snprintf(msg, sizeof msg, "run %" PRIu64 " has no test %s any more", xr.parent_run,
                 xr.test);
        status = report_error(out, SM_REPORT_FAILED, msg, NULL);
        goto out;
    }
    treat = calloc(plan.n ? plan.n : 1, sizeof *treat);
    est = calloc(plan.n ? plan.n : 1, sizeof *est);
    rev = calloc(plan.n ? plan.n : 1, sizeof *rev);
    /* The reverses share one fleet host, and its untreated control. */
    const char *ref = NULL;
    for (size_t i = 0; i < plan.n && !ref; i++)
        ref = plan.v[i].reverse[0] ? plan.v[i].reverse_host : NULL;
    if (!treat || !est || !rev || collect(&d, xr.host, xr.test, false, "", m, &ctrl) ||
        collect(&p, xr.host, xr.test, true, NULL, m, &fleet) ||
        (ref && collect(&d, ref, xr.test, false, "", m, &rctrl))) {
        status = report_error(out, SM_REPORT_FAILED, "out of memory", NULL);
        goto out;
    }
    for (size_t i = 0; i < plan.n; i++) {
        if (plan.v[i].treatment[0] &&
            collect(&d, xr.host, xr.test, false, plan.v[i].treatment, m, &treat[i])) {
            status = report_error(out, SM_REPORT_FAILED, "out of memory", NULL);
            goto out;
        }
        estimate(xr.host, &plan.v[i], &ctrl, &treat[i], &fleet, id * 1000003u + i, &est[i]);
        if (!reverse(&d, xr.host, xr.test, m, &plan.v[i], &rctrl, &ctrl, id * 1000003u + plan.n + i,
                     &rev[i])) {
            status = report_error(out, SM_REPORT_FAILED, "out of memory", NULL);
            goto out;
        }
    }
    const sm_xp_report rep = {
        .run_id = id,
        .parent_run = xr.parent_run,
        .host = xr.host,
        .test = xr.test,
        .unit = sm_metric_unit(m),
        .state = sm_run_state_name(d.run.state),
        .plan = &plan,
        .est = est,
        .rev = rev,
        .n_ctrl = ctrl.n,
        .n_fleet = fleet.n,
        .ctrl_disturbed = ctrl.disturbed,
    };
    status = report_body(out, sm_xp_report_json(&rep));
out:
    for (size_t i = 0; treat && i < plan.n; i++)
        free(treat[i].v);
    free(treat);
    free(est);
    free(rev);
    free(rctrl.v);
    free(ctrl.v);
    free(fleet.v);
    sm_xp_plan_fini(&plan);
    run_data_fini(&d);
    run_data_fini(&p);
    sm_experiment_row_fini(&xr);
    return status;
}
