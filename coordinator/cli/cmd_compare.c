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

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* A number of the answer; NaN when null or absent. */
static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* "100 MB/s [98.5, 101] n=3", or "-" without a median. */
static void side_text(const cJSON *s, char *buf, size_t cap)
{
    double med = num(s, "median");
    if (!isfinite(med)) {
        snprintf(buf, cap, "- (%.0f failed)", num(s, "failed"));
        return;
    }
    snprintf(buf, cap, "%.6g %s [%.6g, %.6g] n=%.0f", med, str(s, "unit"), num(s, "ci95_low"),
             num(s, "ci95_high"), num(s, "n"));
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
    printf("\nonly in run %s (%s): %d %s\n", str(run, "id"), which, n, n == 1 ? "cell" : "cells");
    const cJSON *e;
    cJSON_ArrayForEach(e, only) printf("  %s  %s\n", str(e, "host"), str(e, "test"));
}

static int print_grid(const cJSON *o)
{
    const cJSON *shared = cJSON_GetObjectItemCaseSensitive(o, "shared");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "a");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "b");
    if (!cJSON_IsArray(shared) || !cJSON_IsObject(a) || !cJSON_IsObject(b))
        return bad("expected a, b and shared");
    printf("run %s (%s, %s) against run %s (%s, %s): change is B/A - 1\n", str(a, "id"),
           str(a, "name"), str(a, "state"), str(b, "id"), str(b, "name"), str(b, "state"));
    char ha[40], hb[40];
    snprintf(ha, sizeof ha, "A (run %s)", str(a, "id"));
    snprintf(hb, sizeof hb, "B (run %s)", str(b, "id"));
    sm_grid g = {6, 0, "llrrrl", NULL};
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
        double c = num(e, "change_pct");
        if (isfinite(c))
            snprintf(ch, sizeof ch, "%+.1f%%", c);
        else
            snprintf(ch, sizeof ch, "-");
        const char *row[] = {
            str(e, "host"), str(e, "test"), ta, tb, ch, verdict_text(str(e, "verdict"))};
        rc = sm_grid_row(&g, row);
    }
    if ((rc = sm_grid_done(&g, rc)) != 0)
        return rc;
    printf("\nrule: %s\n", str(o, "rule"));
    only_lines(cJSON_GetObjectItemCaseSensitive(o, "only_a"), "A", a);
    only_lines(cJSON_GetObjectItemCaseSensitive(o, "only_b"), "B", b);
    return 0;
}

/* RFC 4180: a field quoted when it holds a comma, a quote or a line end. */
static void csv_field(const char *v, const char *sep)
{
    if (strpbrk(v, ",\"\r\n")) {
        putchar('"');
        for (; *v; v++) {
            if (*v == '"')
                putchar('"');
            putchar(*v);
        }
        putchar('"');
    } else {
        fputs(v, stdout);
    }
    fputs(sep, stdout);
}

static void csv_num(double v, const char *sep)
{
    if (isfinite(v))
        printf("%.17g", v);
    fputs(sep, stdout);
}

static void csv_side(const cJSON *s)
{
    csv_num(num(s, "median"), ",");
    csv_num(num(s, "ci95_low"), ",");
    csv_num(num(s, "ci95_high"), ",");
    csv_num(num(s, "n"), ",");
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
        csv_field(str(e, "host"), ",");
        csv_field(str(e, "test"), ",");
        csv_field(str(e, "unit"), ",");
        csv_side(cJSON_GetObjectItemCaseSensitive(e, "a"));
        csv_side(cJSON_GetObjectItemCaseSensitive(e, "b"));
        csv_num(num(e, "change_pct"), ",");
        csv_field(str(e, "verdict"), "\r\n");
    }
    static const char *const sides[] = {"only_a", "only_b"};
    for (size_t k = 0; k < 2; k++) {
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, sides[k]))
        {
            csv_field(str(e, "host"), ",");
            csv_field(str(e, "test"), ",");
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
    rc = o->format == SM_CLI_FMT_CSV ? print_csv(doc) : print_grid(doc);
    cJSON_Delete(doc);
    return rc;
}
