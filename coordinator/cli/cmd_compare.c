/* sockmatrix compare A B: run A against run B, the cells both have side by side with their
 * change and verdict, then the cells only one run has. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
static void side_text(const cJSON *s, char *buf, size_t cap)
{
    double med = sm_cli_jnum(s, "median");
    if (!isfinite(med)) {
        snprintf(buf, cap, "- (%.0f failed)", sm_cli_jnum(s, "failed"));
        return;
    }
    snprintf(buf, cap, "%.6g %s [%.6g, %.6g] n=%.0f", med, sm_cli_jstr(s, "unit"),
             sm_cli_jnum(s, "ci95_low"), sm_cli_jnum(s, "ci95_high"), sm_cli_jnum(s, "n"));
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

static void only_lines(const cJSON *only, const char *which, const cJSON *run)
{
    const int n = cJSON_GetArraySize(only);
    if (n == 0)
        return;
    printf("\nonly in run %s (%s): %d %s\n", sm_cli_jstr(run, "id"), which, n,
           n == 1 ? "cell" : "cells");
    const cJSON *e;
    cJSON_ArrayForEach(e, only)
        printf("  %s  %s\n", sm_cli_jstr(e, "host"), sm_cli_jstr(e, "test"));
}

static int print_grid(const cJSON *o, sm_cli_format fmt)
{
    const bool table = fmt == SM_CLI_FMT_TABLE;
    const cJSON *shared = cJSON_GetObjectItemCaseSensitive(o, "shared");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "a");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "b");
    if (!cJSON_IsArray(shared) || !cJSON_IsObject(a) || !cJSON_IsObject(b))
        return bad("expected a, b and shared");
    if (table)
        printf("run %s (%s, %s) against run %s (%s, %s): change is B/A - 1\n", sm_cli_jstr(a, "id"),
               sm_cli_jstr(a, "name"), sm_cli_jstr(a, "state"), sm_cli_jstr(b, "id"),
               sm_cli_jstr(b, "name"), sm_cli_jstr(b, "state"));
    char ha[40], hb[40];
    snprintf(ha, sizeof ha, "A (run %s)", sm_cli_jstr(a, "id"));
    snprintf(hb, sizeof hb, "B (run %s)", sm_cli_jstr(b, "id"));
    sm_grid g = {6, 0, "llrrrl", NULL, fmt};
    const char *head[] = {"HOST", "TEST", ha, hb, "CHANGE", "VERDICT"};
    int rc = sm_grid_row(&g, head);
    const cJSON *e;
    cJSON_ArrayForEach(e, shared)
    {
        if (rc)
            break;
        char ta[96], tb[96], ch[24];
        side_text(cJSON_GetObjectItemCaseSensitive(e, "a"), ta, sizeof ta);
        side_text(cJSON_GetObjectItemCaseSensitive(e, "b"), tb, sizeof tb);
        double c = sm_cli_jnum(e, "change_pct");
        if (isfinite(c))
            snprintf(ch, sizeof ch, "%+.1f%%", c);
        else
            snprintf(ch, sizeof ch, "-");
        const char *row[] = {sm_cli_jstr(e, "host"),
                             sm_cli_jstr(e, "test"),
                             ta,
                             tb,
                             ch,
                             verdict_text(sm_cli_jstr(e, "verdict"))};
        rc = sm_grid_row(&g, row);
    }
    if ((rc = sm_grid_done(&g, rc)) != 0 || !table)
        return rc;
    printf("\nrule: a change is claimed only where the two medians' 95%% intervals are apart;\n"
           "below 6 samples an interval is [min, max] and covers less than 95%%\n");
    only_lines(cJSON_GetObjectItemCaseSensitive(o, "only_a"), "A", a);
    only_lines(cJSON_GetObjectItemCaseSensitive(o, "only_b"), "B", b);
    return 0;
}

static void csv_field(const char *v, const char *sep)
{
    sm_grid_csv_field(v, sep, stdout);
}

static void csv_side(const cJSON *s)
{
    sm_cli_csv_num(sm_cli_jnum(s, "median"), ",");
    sm_cli_csv_num(sm_cli_jnum(s, "ci95_low"), ",");
    sm_cli_csv_num(sm_cli_jnum(s, "ci95_high"), ",");
    sm_cli_csv_num(sm_cli_jnum(s, "n"), ",");
}

static int print_csv(const cJSON *o)
{
    const cJSON *shared = cJSON_GetObjectItemCaseSensitive(o, "shared");
    if (!cJSON_IsArray(shared))
        return bad("expected shared");
    printf("host,test,unit,a median,a ci95_low,a ci95_high,a n,b median,b ci95_low,b ci95_high,"
           "b n,change (%%),verdict\r\n");
    const cJSON *e;
    cJSON_ArrayForEach(e, shared)
    {
        csv_field(sm_cli_jstr(e, "host"), ",");
        csv_field(sm_cli_jstr(e, "test"), ",");
        csv_field(sm_cli_jstr(e, "unit"), ",");
        csv_side(cJSON_GetObjectItemCaseSensitive(e, "a"));
        csv_side(cJSON_GetObjectItemCaseSensitive(e, "b"));
        sm_cli_csv_num(sm_cli_jnum(e, "change_pct"), ",");
        csv_field(sm_cli_jstr(e, "verdict"), "\r\n");
    }
    static const char *const sides[] = {"only_a", "only_b"};
    for (size_t k = 0; k < 2; k++) {
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, sides[k]))
        {
            csv_field(sm_cli_jstr(e, "host"), ",");
            csv_field(sm_cli_jstr(e, "test"), ",");
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
    cJSON *doc = cJSON_ParseWithLength(r.body, r.len);
    sm_http_resp_fini(&r);
    if (!doc)
        return bad("not JSON");
    rc = o->format == SM_CLI_FMT_CSV ? print_csv(doc) : print_grid(doc, o->format);
    cJSON_Delete(doc);
    return rc;
}
