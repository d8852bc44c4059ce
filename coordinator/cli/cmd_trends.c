/* sockmatrix trends --host H --test T: one host's cell of one test across the ended runs, a
 * point per run (finished time in UTC, run, median [95% CI] unit, flag), as a grid, CSV or
 * the coordinator's JSON. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"
#include "coordinator/cli/tests.h"

#define WHAT "GET /api/trends"

/* Appends name=value to buf, value percent-encoded (all but RFC 3986's unreserved). */
static void add_param(char *buf, size_t cap, const char *name, const char *value)
{
    size_t len = strlen(buf);
    len += (size_t)snprintf(buf + len, cap - len, "%s%s=", len && buf[len - 1] != '?' ? "&" : "",
                            name);
    for (const unsigned char *p = (const unsigned char *)value; *p && len + 4 < cap; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~", *p))
            buf[len++] = (char)*p;
        else
            len += (size_t)snprintf(buf + len, cap - len, "%%%02X", *p);
    }
    buf[len] = '\0';
}

/* ms (since the epoch) as UTC into buf, ISO 8601 ("...T...Z") or for reading; false for a time
 * that is absent (NaN) or that no time_t holds, which the conversion must not be given. */
static bool utc_text(double ms, bool iso, char *buf, size_t cap)
{
    if (!isfinite(ms) || fabs(ms / 1000) > 0x1p62)
        return false;
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        return false;
    return iso ? strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) != 0
               : strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm) != 0;
}

static void utc(double ms, char *buf, size_t cap)
{
    if (!utc_text(ms, false, buf, cap))
        snprintf(buf, cap, "-");
}

static int print_grid(const sm_apiview_trend *t, sm_cli_format fmt)
{
    const bool table = fmt == SM_CLI_FMT_TABLE;
    if (table)
        printf("%s, %s", t->host, t->test);
    if (table && *t->metric)
        printf(", %s (%s)", t->metric, t->unit);
    if (table)
        printf(": %zu %s\n", t->n_points, t->n_points == 1 ? "run" : "runs");
    if (table && t->n_points == 0) {
        printf("note: %s\n", t->note);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    sm_grid g = {5, 0, "llrrl", NULL, fmt};
    const char *head[] = {"FINISHED (UTC)", "RUN", "MEDIAN [95% CI]", "N", "FLAG"};
    int rc = sm_grid_row(&g, head);
    for (size_t i = 0; i < t->n_points && !rc; i++) {
        const sm_apiview_trend_point *p = &t->points[i];
        char when[32], med[160], n[16], m[48], lo[48], hi[48];
        utc(p->finished_ms, when, sizeof when);
        sm_cli_num4(p->median, m, sizeof m);
        sm_cli_num4(p->ci_lo, lo, sizeof lo);
        sm_cli_num4(p->ci_hi, hi, sizeof hi);
        snprintf(med, sizeof med, "%s [%s, %s] %s", m, lo, hi, t->unit);
        snprintf(n, sizeof n, "%.0f", p->n);
        const char *row[] = {when, p->run, med, n, p->flagged ? "flagged" : ""};
        rc = sm_grid_row(&g, row);
    }
    if ((rc = sm_grid_done(&g, rc)) != 0 || !table)
        return rc;
    if (*t->note)
        printf("\nnote: %s\n", t->note);
    printf("\na point is an ended run with a median in this cell, its 95%% interval in brackets;\n"
           "flagged: that run's analysis set this host apart on this test\n");
    return fflush(stdout) == 0 ? 0 : 1;
}

static int print_csv(const sm_apiview_trend *t)
{
    /* Units in the header, as the table's CSV has them; unit is a short word, never quoted. */
    const char *u = t->unit;
    printf("finished_utc,run,median (%s),ci95_low (%s),ci95_high (%s),n,flagged\r\n", u, u, u);
    for (size_t i = 0; i < t->n_points; i++) {
        const sm_apiview_trend_point *p = &t->points[i];
        char when[32];
        if (!utc_text(p->finished_ms, true, when, sizeof when))
            when[0] = '\0';
        printf("%s,%s,", when, p->run);
        sm_cli_csv_num(p->median, ",");
        sm_cli_csv_num(p->ci_lo, ",");
        sm_cli_csv_num(p->ci_hi, ",");
        sm_cli_csv_num(p->n, ",");
        printf("%s\r\n", p->flagged ? "true" : "false");
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

int sm_cli_cmd_trends(sm_http *h, const sm_cli_opts *o)
{
    /* --test is any part of a label, or an id: the coordinator takes the whole label. */
    char label[512];
    const int resolved = sm_cli_test_resolve(h, o->trend_test, label, sizeof label);
    if (resolved)
        return resolved;
    char path[1024] = "/api/trends?";
    add_param(path, sizeof path, "host", o->job_host);
    add_param(path, sizeof path, "test", label);
    if (o->trend_metric)
        add_param(path, sizeof path, "metric", o->trend_metric);
    if (o->include_disturbed)
        add_param(path, sizeof path, "disturbed", "include");
    sm_http_resp r;
    if (sm_cli_call(h, path, NULL, 0, &r))
        return 1;
    sm_apiview_trend t;
    sm_error err = {0};
    int rc = sm_apiview_trend_decode(r.body, r.len, &t, &err);
    if (rc) {
        sm_http_resp_fini(&r);
        return sm_cli_bad_answer(WHAT, &err);
    }
    /* A host or test that no ended run has ("unknown") is a mistyped argument, in every
     * format: the coordinator's note names what was typed and what there is. Runs that have
     * the cell without a clean sample are an answer: the note says so under the empty table. */
    if (t.n_points == 0 && *t.unknown) {
        fprintf(stderr, "sockmatrix: trends: %s\n", t.note);
        sm_apiview_trend_fini(&t);
        sm_http_resp_fini(&r);
        return 2;
    }
    if (o->format == SM_CLI_FMT_JSON)
        rc = sm_cli_print_body(r.body, r.len);
    else
        rc = o->format == SM_CLI_FMT_CSV ? print_csv(&t) : print_grid(&t, o->format);
    sm_http_resp_fini(&r);
    sm_apiview_trend_fini(&t);
    return rc;
}
