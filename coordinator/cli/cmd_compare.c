/* sockmatrix compare A B: run A against run B, the cells both have side by side with their
 * change and verdict, then the cells only one run has. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"

#define WHAT "GET /api/compare"

static int bad(const char *msg)
{
    sm_error err = {0};
    sm_error_set(&err, SM_EPARSE, "%s", msg);
    return sm_cli_bad_answer(WHAT, &err);
}

/* "100 MB/s [98.5, 101] n=3", or "-" without a median. */
static void side_text(const sm_apiview_side *s, char *buf, size_t cap)
{
    if (!isfinite(s->median)) {
        snprintf(buf, cap, "- (%.0f failed)", s->failed);
        return;
    }
    snprintf(buf, cap, "%.6g %s [%.6g, %.6g] n=%.0f", s->median, s->unit, s->ci95_low, s->ci95_high,
             s->n);
}

static const char *verdict_text(const char *v)
{
    if (strcmp(v, "higher") == 0)
        return "higher, CIs apart";
    if (strcmp(v, "lower") == 0)
        return "lower, CIs apart";
    if (strcmp(v, "overlap") == 0)
        return "CIs overlap";
    return v;
}

static void only_lines(const sm_apiview_compare *c, size_t k)
{
    const size_t n = c->n_only[k];
    if (n == 0)
        return;
    printf("\nonly in run %s (%s): %zu %s\n", k == 0 ? c->a.id : c->b.id, k == 0 ? "A" : "B", n,
           n == 1 ? "cell" : "cells");
    for (size_t i = 0; i < n; i++)
        printf("  %s  %s\n", c->only[k][i].host, c->only[k][i].test);
}

static int print_grid(const sm_apiview_compare *c, sm_cli_format fmt)
{
    const bool table = fmt == SM_CLI_FMT_TABLE;
    if (!c->have_shared || !c->have_runs)
        return bad("expected a, b and shared");
    if (table)
        printf("run %s (%s, %s) against run %s (%s, %s): change is B/A - 1\n", c->a.id, c->a.name,
               c->a.state, c->b.id, c->b.name, c->b.state);
    char ha[40], hb[40];
    snprintf(ha, sizeof ha, "A (run %s)", c->a.id);
    snprintf(hb, sizeof hb, "B (run %s)", c->b.id);
    sm_grid g = {6, 0, "llrrrl", NULL, fmt};
    const char *head[] = {"HOST", "TEST", ha, hb, "CHANGE", "VERDICT"};
    int rc = sm_grid_row(&g, head);
    for (size_t i = 0; i < c->n_shared && !rc; i++) {
        const sm_apiview_compared *e = &c->shared[i];
        char ta[96], tb[96], ch[24];
        side_text(&e->a, ta, sizeof ta);
        side_text(&e->b, tb, sizeof tb);
        if (isfinite(e->change_pct))
            snprintf(ch, sizeof ch, "%+.1f%%", e->change_pct);
        else
            snprintf(ch, sizeof ch, "-");
        const char *row[] = {e->host, e->test, ta, tb, ch, verdict_text(e->verdict)};
        rc = sm_grid_row(&g, row);
    }
    if ((rc = sm_grid_done(&g, rc)) != 0 || !table)
        return rc;
    printf("\nrule: a change is claimed only where the two medians' 95%% intervals are apart;\n"
           "below 6 samples an interval is [min, max] and covers less than 95%%\n");
    only_lines(c, 0);
    only_lines(c, 1);
    return 0;
}

static void csv_field(const char *v, const char *sep)
{
    sm_grid_csv_field(v, sep, stdout);
}

static void csv_side(const sm_apiview_side *s)
{
    sm_cli_csv_num(s->median, ",");
    sm_cli_csv_num(s->ci95_low, ",");
    sm_cli_csv_num(s->ci95_high, ",");
    sm_cli_csv_num(s->n, ",");
}

static int print_csv(const sm_apiview_compare *c)
{
    if (!c->have_shared)
        return bad("expected shared");
    printf("host,test,unit,a median,a ci95_low,a ci95_high,a n,b median,b ci95_low,b ci95_high,"
           "b n,change (%%),verdict\r\n");
    for (size_t i = 0; i < c->n_shared; i++) {
        const sm_apiview_compared *e = &c->shared[i];
        csv_field(e->host, ",");
        csv_field(e->test, ",");
        csv_field(e->unit, ",");
        csv_side(&e->a);
        csv_side(&e->b);
        sm_cli_csv_num(e->change_pct, ",");
        csv_field(e->verdict, "\r\n");
    }
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; i < c->n_only[k]; i++) {
            csv_field(c->only[k][i].host, ",");
            csv_field(c->only[k][i].test, ",");
            printf(",,,,,,,,,,%s\r\n", k == 0 ? "only in a" : "only in b");
        }
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

int sm_cli_cmd_compare(sm_http *h, const sm_cli_opts *o)
{
    char path[128];
    snprintf(path, sizeof path, "/api/compare?a=%" PRIu64 "&b=%" PRIu64 "%s", o->run_id, o->run_b,
             o->include_disturbed ? "&disturbed=include" : "");
    sm_http_resp r;
    if (sm_cli_call(h, path, NULL, 0, &r))
        return 1;
    int rc;
    if (o->format == SM_CLI_FMT_JSON) {
        rc = sm_cli_print_body(r.body, r.len);
        sm_http_resp_fini(&r);
        return rc;
    }
    sm_apiview_compare c;
    sm_error err = {0};
    rc = sm_apiview_compare_decode(r.body, r.len, &c, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer(WHAT, &err);
    rc = o->format == SM_CLI_FMT_CSV ? print_csv(&c) : print_grid(&c, o->format);
    sm_apiview_compare_fini(&c);
    return rc;
}
