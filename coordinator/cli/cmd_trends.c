/* sockmatrix trends --host H --test T: one host's cell of one test across the ended runs, a
 * point per run (finished time in UTC, run, median [95% CI] unit, flag), as a grid, CSV or
 * the coordinator's JSON. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static void utc(double ms, char *buf, size_t cap)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (!isfinite(ms) || !gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, cap, "-");
}

static int print_grid(const cJSON *o, sm_cli_format fmt)
{
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(o, "points");
    const bool table = fmt == SM_CLI_FMT_TABLE;
    if (table)
        printf("%s, %s", sm_cli_jstr(o, "host"), sm_cli_jstr(o, "test"));
    if (table && *sm_cli_jstr(o, "metric"))
        printf(", %s (%s)", sm_cli_jstr(o, "metric"), sm_cli_jstr(o, "unit"));
    if (table)
        printf(": %d %s\n", cJSON_GetArraySize(pts), cJSON_GetArraySize(pts) == 1 ? "run" : "runs");
    if (table && cJSON_GetArraySize(pts) == 0) {
        printf("note: %s\n", sm_cli_jstr(o, "note"));
        return fflush(stdout) == 0 ? 0 : 1;
    }
    sm_grid g = {5, 0, "llrrl", NULL, fmt};
    const char *head[] = {"FINISHED (UTC)", "RUN", "MEDIAN [95% CI]", "N", "FLAG"};
    int rc = sm_grid_row(&g, head);
    const cJSON *p;
    cJSON_ArrayForEach(p, pts)
    {
        if (rc)
            break;
        char when[32], med[160], n[16], m[48], lo[48], hi[48];
        utc(sm_cli_jnum(p, "finished_ms"), when, sizeof when);
        sm_cli_num4(sm_cli_jnum(p, "median"), m, sizeof m);
        sm_cli_num4(sm_cli_jnum(p, "ci_lo"), lo, sizeof lo);
        sm_cli_num4(sm_cli_jnum(p, "ci_hi"), hi, sizeof hi);
        snprintf(med, sizeof med, "%s [%s, %s] %s", m, lo, hi, sm_cli_jstr(o, "unit"));
        snprintf(n, sizeof n, "%.0f", sm_cli_jnum(p, "n"));
        const char *row[] = {when, sm_cli_jstr(p, "run"), med, n,
                             cJSON_IsTrue(cJSON_GetObjectItem(p, "flagged")) ? "flagged" : ""};
        rc = sm_grid_row(&g, row);
    }
    if ((rc = sm_grid_done(&g, rc)) != 0 || !table)
        return rc;
    if (*sm_cli_jstr(o, "note"))
        printf("\nnote: %s\n", sm_cli_jstr(o, "note"));
    printf("\na point is an ended run with a median in this cell, its 95%% interval in brackets;\n"
           "flagged: that run's analysis set this host apart on this test\n");
    return fflush(stdout) == 0 ? 0 : 1;
}

static int print_csv(const cJSON *o)
{
    /* Units in the header, as the table's CSV has them; unit is a short word, never quoted. */
    const char *u = sm_cli_jstr(o, "unit");
    printf("finished_utc,run,median (%s),ci95_low (%s),ci95_high (%s),n,flagged\r\n", u, u, u);
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(o, "points"))
    {
        char when[32];
        time_t t = (time_t)(sm_cli_jnum(p, "finished_ms") / 1000);
        struct tm tm;
        if (!gmtime_r(&t, &tm) || !strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
            when[0] = '\0';
        printf("%s,%s,", when, sm_cli_jstr(p, "run"));
        sm_cli_csv_num(sm_cli_jnum(p, "median"), ",");
        sm_cli_csv_num(sm_cli_jnum(p, "ci_lo"), ",");
        sm_cli_csv_num(sm_cli_jnum(p, "ci_hi"), ",");
        sm_cli_csv_num(sm_cli_jnum(p, "n"), ",");
        printf("%s\r\n", cJSON_IsTrue(cJSON_GetObjectItem(p, "flagged")) ? "true" : "false");
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
    if (o->format == SM_CLI_FMT_JSON) {
        const int rc = sm_cli_print_body(r.body, r.len);
        sm_http_resp_fini(&r);
        return rc;
    }
    cJSON *doc = cJSON_ParseWithLength(r.body, r.len);
    sm_http_resp_fini(&r);
    if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "points"))) {
        cJSON_Delete(doc);
        sm_error err = {0};
        sm_error_set(&err, SM_EPARSE, "expected points");
        return sm_cli_bad_answer(WHAT, &err);
    }
    const int rc = o->format == SM_CLI_FMT_CSV ? print_csv(doc) : print_grid(doc, o->format);
    cJSON_Delete(doc);
    return rc;
}
