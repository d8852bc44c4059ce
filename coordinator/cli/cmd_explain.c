/* sockmatrix explain RUN: plans an experiment on one of the run's anomalies (each suspect's
 * treatment beside untreated controls on the anomaly's host), follows it, and prints what it
 * proved: which setting is the cause, with the share of the gap it closes and its interval. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"

/* "98% [91%, 103%]", or "-". */
static void share_text(const sm_apiview_suspect *s, char *buf, size_t cap)
{
    if (!isfinite(s->share)) {
        snprintf(buf, cap, "-");
        return;
    }
    if (isfinite(s->lo) && isfinite(s->hi))
        snprintf(buf, cap, "%.0f%% [%.0f%%, %.0f%%]", 100 * s->share, 100 * s->lo, 100 * s->hi);
    else
        snprintf(buf, cap, "%.0f%%", 100 * s->share);
}

/* A median with its unit, or "-". */
static void median_text(double v, const char *unit, char *buf, size_t cap)
{
    char n[32];
    sm_cli_num4(v, n, sizeof n);
    if (isfinite(v) && unit[0])
        snprintf(buf, cap, "%s %s", n, unit);
    else
        snprintf(buf, cap, "%s", n);
}

/* "lo qdisc: tbf rate ... -> noqueue", the fleet's value after the arrow. */
static void suspect_text(const sm_apiview_suspect *s, char *buf, size_t cap)
{
    if (!s->item[0])
        snprintf(buf, cap, "%s", s->label);
    else
        snprintf(buf, cap, "%s: %.60s -> %.60s", s->label, s->host_value,
                 s->fleet_value[0] ? s->fleet_value : "(no majority)");
}

/* The plan, before the experiment runs: each suspect with its treatment or why it is not
 * tested. On stderr, so that stdout holds the answer alone. */
static void print_plan(const sm_apiview_experiment *x)
{
    if (x->run)
        fprintf(stderr, "experiment run %s on %s (%s, from run %s): %s\n", x->run, x->host, x->test,
                x->explains, x->summary);
    else
        fprintf(stderr, "no experiment on %s (%s, run %s): %s\n", x->host, x->test, x->explains,
                x->summary);
    for (size_t i = 0; i < x->n; i++) {
        const sm_apiview_suspect *s = &x->v[i];
        char what[160];
        suspect_text(s, what, sizeof what);
        if (s->treatment)
            fprintf(stderr, "  treat     %s  (%s)\n", what, s->treatment);
        else
            fprintf(stderr, "  untested  %s: %s\n", what, s->why);
        if (s->rev_treatment)
            fprintf(stderr, "  reverse   on %s: %s  (%s)\n", s->rev_host, s->label,
                    s->rev_treatment);
        else if (s->treatment && s->why_no_reverse[0])
            fprintf(stderr, "  no reverse: %s\n", s->why_no_reverse);
    }
}

/* The answer: its headline, then one row per suspect. */
static int print_answer(const sm_apiview_experiment *x, const sm_cli_opts *o)
{
    printf("%s\n", x->summary);
    sm_grid g = {.cols = 6, .align = "llrrrl", .fmt = o->format};
    const char *head[] = {"VERDICT", "SUSPECT", "GAP CLOSED [95% CI]", "CONTROL", "TREATED", "WHY"};
    int rc = sm_grid_row(&g, head);
    for (size_t i = 0; !rc && i < x->n; i++) {
        const sm_apiview_suspect *s = &x->v[i];
        char what[160], share[64], ctrl[48], treated[48];
        suspect_text(s, what, sizeof what);
        share_text(s, share, sizeof share);
        median_text(s->control, x->unit, ctrl, sizeof ctrl);
        median_text(s->treated, x->unit, treated, sizeof treated);
        const char *row[] = {s->verdict, what, share, ctrl, treated, s->why};
        rc = sm_grid_row(&g, row);
        if (rc || !s->rev_treatment || !s->rev_verdict[0])
            continue;
        /* The reverse below its suspect: the gap it opened on the fleet host. */
        const sm_apiview_suspect r = {.share = s->rev_share, .lo = s->rev_lo, .hi = s->rev_hi};
        snprintf(what, sizeof what, "  reverse on %s: %s -> %.60s", s->rev_host, s->label,
                 s->host_value);
        share_text(&r, share, sizeof share);
        median_text(s->rev_control, x->unit, ctrl, sizeof ctrl);
        median_text(s->rev_treated, x->unit, treated, sizeof treated);
        const char *rrow[] = {s->rev_verdict, what, share, ctrl, treated, s->rev_why};
        rc = sm_grid_row(&g, rrow);
    }
    rc = sm_grid_done(&g, rc);
    if (!rc && x->n > 0) {
        char fleet[48];
        median_text(x->v[0].fleet, x->unit, fleet, sizeof fleet);
        printf("fleet median %s (the other hosts in run %s); the gap is %s's control against "
               "it\n",
               fleet, x->explains, x->host);
        for (size_t i = 0; i < x->n; i++) {
            if (x->v[i].rev_treatment && x->v[i].rev_verdict[0]) {
                printf("reverse: %s given %s's value, beside its own control (CONTROL); the "
                       "gap it opens is %s's control against that\n",
                       x->v[i].rev_host, x->host, x->host);
                break;
            }
        }
    }
    return rc;
}

/* GET the experiment's answer and print it; 0 or 1 once reported. */
static int show_answer(sm_http *h, const char *run, const sm_cli_opts *o)
{
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%s/experiment", run);
    sm_http_resp r;
    if (sm_cli_call(h, path, NULL, 0, &r))
        return 1;
    if (o->format == SM_CLI_FMT_JSON)
        return sm_cli_print_answer(&r);
    sm_apiview_experiment x;
    sm_error err = {0};
    int rc = sm_apiview_experiment_decode(r.body, r.len, &x, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("GET /api/runs/ID/experiment", &err);
    rc = print_answer(&x, o);
    sm_apiview_experiment_fini(&x);
    return rc;
}

int sm_cli_cmd_explain(sm_http *h, const sm_cli_opts *o)
{
    char path[80], run[24];
    snprintf(run, sizeof run, "%" PRIu64, o->run_id);
    /* An experiment's own run: its answer, once it has ended. */
    sm_http_resp r;
    sm_error err = {0};
    snprintf(path, sizeof path, "/api/runs/%s/experiment", run);
    if (sm_http_get(h, path, &r, &err) == 0 && r.status == 200) {
        sm_http_resp_fini(&r);
        sm_apiview_run st;
        if (sm_cli_wait_run(h, o->run_id, o->timeout_s, &st))
            return 1;
        return show_answer(h, run, o);
    }
    if (err.code == 0)
        sm_http_resp_fini(&r);
    char *body = NULL;
    if (sm_apiview_experiment_request(o->job_host, o->trend_test, &body, &err)) {
        sm_cli_fail("%s", err.msg);
        return 1;
    }
    snprintf(path, sizeof path, "/api/runs/%s/experiments", run);
    int rc = sm_cli_call_run(h, o->run_id, path, body, strlen(body), &r);
    free(body);
    if (rc)
        return 1;
    sm_apiview_experiment plan;
    rc = sm_apiview_experiment_decode(r.body, r.len, &plan, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("POST /api/runs/ID/experiments", &err);
    print_plan(&plan);
    if (!plan.run) {
        sm_apiview_experiment_fini(&plan);
        return 0;
    }
    char xp[24];
    snprintf(xp, sizeof xp, "%s", plan.run);
    sm_apiview_experiment_fini(&plan);
    uint64_t id = strtoull(xp, NULL, 10);
    sm_apiview_run st;
    if (sm_cli_wait_run(h, id, o->timeout_s, &st))
        return 1;
    return show_answer(h, xp, o);
}
