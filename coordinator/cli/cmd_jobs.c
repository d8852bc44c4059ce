/* What sockmatrix show adds under a run's progress (its times, its failed jobs with their
 * reasons and its flags) and sockmatrix jobs, from GET /api/runs/ID/jobs and the anomalies'
 * text; sockmatrix jobs --cell, from GET /api/runs/ID/cells/N. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"
#include "proto/clock.h"
#include "proto/json.h"

/* "2026-12-01T16:53:02Z" */
static void iso_utc(int64_t ms, char *buf, size_t cap)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, cap, "?");
}

/* "8.4 s", "2m 08s", "1h 02m 08s" */
static void duration_text(int64_t ms, char *buf, size_t cap)
{
    if (ms < 0)
        ms = 0;
    if (ms < 60000) {
        snprintf(buf, cap, "%.1f s", (double)ms / 1000.0);
        return;
    }
    const int64_t s = ms / 1000;
    if (s < 3600)
        snprintf(buf, cap, "%" PRId64 "m %02" PRId64 "s", s / 60, s % 60);
    else
        snprintf(buf, cap, "%" PRId64 "h %02" PRId64 "m %02" PRId64 "s", s / 3600, s / 60 % 60,
                 s % 60);
}

static void print_times(const sm_apiview_run *run)
{
    char created[32], finished[32], took[32];
    iso_utc(run->created_ms, created, sizeof created);
    printf("created: %s\n", created);
    if (run->finished_ms > 0) {
        iso_utc(run->finished_ms, finished, sizeof finished);
        duration_text(run->finished_ms - run->created_ms, took, sizeof took);
        printf("finished: %s (took %s)\n", finished, took);
    } else {
        duration_text(sm_wall_ms() - run->created_ms, took, sizeof took);
        printf("finished: not yet (running for %s)\n", took);
    }
}

/* GET path (as sm_cli_call_run when run is not 0) whose answer must hold an array named key:
 * 0 with *root the answer (the caller's to cJSON_Delete) and *arr the array in it, or 1 once
 * the failure is reported, what naming the call. */
static int get_array(sm_http *h, uint64_t run, const char *path, const char *key, const char *what,
                     cJSON **root, const cJSON **arr)
{
    sm_http_resp r;
    if (run ? sm_cli_call_run(h, run, path, NULL, 0, &r) : sm_cli_call(h, path, NULL, 0, &r))
        return 1;
    cJSON *o = cJSON_ParseWithLength(r.body, r.len);
    sm_http_resp_fini(&r);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsArray(a)) {
        cJSON_Delete(o);
        sm_error err = {0};
        sm_error_set(&err, SM_EPARSE, "no \"%s\" array", key);
        return sm_cli_bad_answer(what, &err);
    }
    *root = o;
    *arr = a;
    return 0;
}

/* o pretty-printed on stdout, then deleted; 0, or 1 once out of memory is reported. */
static int print_json(cJSON *o)
{
    /* every figure as the API wrote it, not cut to cJSON's 15 digits */
    char *text = sm_json_exact_numbers(o) ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (!text) {
        sm_cli_fail("out of memory");
        return 1;
    }
    printf("%s\n", text);
    free(text);
    return 0;
}

/* Every failed job, page by page; 1 when the coordinator could not say. */
static int print_failed(sm_http *h, uint64_t id)
{
    char after[32] = "";
    size_t shown = 0;
    for (;;) {
        char path[128];
        snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/jobs?state=failed&limit=1000%s%s", id,
                 after[0] ? "&after=" : "", after);
        cJSON *o = NULL;
        const cJSON *jobs = NULL;
        if (get_array(h, 0, path, "jobs", "GET /api/runs/ID/jobs", &o, &jobs))
            return 1;
        const cJSON *j;
        cJSON_ArrayForEach(j, jobs)
        {
            const char *jid = cJSON_GetStringValue(cJSON_GetObjectItem(j, "id"));
            const char *host = cJSON_GetStringValue(cJSON_GetObjectItem(j, "host"));
            const char *peer = cJSON_GetStringValue(cJSON_GetObjectItem(j, "peer"));
            const char *reason = cJSON_GetStringValue(cJSON_GetObjectItem(j, "reason"));
            if (shown++ == 0)
                printf("failures:\n");
            printf("  job %s on %s%s%s: %s\n", jid ? jid : "?", host ? host : "?", peer ? "->" : "",
                   peer ? peer : "", reason && *reason ? reason : "no reason");
        }
        const char *next = cJSON_GetStringValue(cJSON_GetObjectItem(o, "next"));
        if (next)
            snprintf(after, sizeof after, "%.30s", next);
        cJSON_Delete(o);
        if (!next)
            break;
    }
    if (shown == 0)
        printf("failures: none\n");
    return 0;
}

/* Whether line p[0..n) of the anomalies' text is a cell that was not judged ("  inconclusive
 * ...", "  failed ...", "  ... N more ..."). */
static bool not_judged_line(const char *p, size_t n)
{
    static const char *const starts[] = {"  inconclusive ", "  failed ", "  ... "};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
        if (n >= strlen(starts[i]) && memcmp(p, starts[i], strlen(starts[i])) == 0)
            return true;
    return false;
}

/* The verdict in the text's first line, "run N (NAME): VERDICT: SUMMARY, no baseline run":
 * "VERDICT: SUMMARY" into buf; "" when the line is not of that form. */
static void verdict_of(const char *p, size_t n, char *buf, size_t cap)
{
    buf[0] = '\0';
    const char *at = memmem(p, n, "): ", 3);
    if (!at)
        return;
    at += 3;
    const char *end = p + n;
    static const char *const tails[] = {", no baseline run", ", against baseline run"};
    for (size_t i = 0; i < 2; i++) {
        const char *t = memmem(at, (size_t)(end - at), tails[i], strlen(tails[i]));
        if (t)
            end = t;
    }
    snprintf(buf, cap, "%.*s", (int)(end - at), at);
}

void sm_cli_print_flags(const char *text, size_t len, FILE *f)
{
    char verdict[512] = "";
    size_t shown = 0, unjudged = 0;
    const char *end = text + len;
    for (int pass = 0; pass < 3; pass++) {
        bool first = true, follow = false; /* follow: the last flag line was printed */
        for (const char *p = text; p < end; first = false) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
            bool flag = n > 2 && p[0] == ' ' && p[1] == ' ' && p[2] != ' ';
            /* The why: lines indented deeper, under the last of a host's flags. */
            bool why = n > 2 && p[0] == ' ' && p[1] == ' ' && p[2] == ' ';
            if (pass == 0 && first)
                verdict_of(p, n, verdict, sizeof verdict);
            else if (why && follow)
                fprintf(f, "%.*s\n", (int)n, p);
            else if (pass == 1 && flag && !not_judged_line(p, n))
                fprintf(f, "%s%.*s\n", shown++ == 0 ? "flags:\n" : "", (int)n, p);
            else if (pass == 2 && flag && not_judged_line(p, n))
                fprintf(f, "%s%.*s\n", unjudged++ == 0 ? "not judged:\n" : "", (int)n, p);
            if (flag)
                follow = pass == 1 ? !not_judged_line(p, n) : pass == 2 && not_judged_line(p, n);
            else if (!why)
                follow = false;
            p = nl ? nl + 1 : end;
        }
        if (pass == 0 && verdict[0])
            fprintf(f, "verdict: %s\n", verdict);
        if (pass == 1 && shown == 0)
            fprintf(f, "flags: none\n");
    }
}

/* The run's flags from the anomalies' text, as sm_cli_print_flags says them; a run whose table
 * cannot be built yet has none to show. */
static void print_flags(sm_http *h, uint64_t id)
{
    char path[96];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/anomalies?format=text", id);
    sm_http_resp r;
    sm_error err = {0};
    if (sm_http_get(h, path, &r, &err) != 0) {
        printf("flags: none\n");
        return;
    }
    sm_cli_print_flags(r.status == 200 ? r.body : "", r.status == 200 ? r.len : 0, stdout);
    sm_http_resp_fini(&r);
}

int sm_cli_show_details(sm_http *h, const sm_apiview_run *run)
{
    print_times(run);
    if (print_failed(h, run->id))
        return 1;
    print_flags(h, run->id);
    return 0;
}

/* ---- sockmatrix jobs ---- */

static const char *str_or(const cJSON *o, const char *k, const char *dflt)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
    return v ? v : dflt;
}

static int jobs_row(sm_grid *g, const cJSON *j)
{
    char who[140], rep[16] = "", took[32] = "-", head[64] = "-";
    const char *peer = str_or(j, "peer", NULL);
    snprintf(who, sizeof who, "%s%s%s", str_or(j, "host", "?"), peer ? "->" : "", peer ? peer : "");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "repetition");
    if (cJSON_IsNumber(r))
        snprintf(rep, sizeof rep, "%d", r->valueint);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "duration_ms");
    if (cJSON_IsNumber(d))
        duration_text((int64_t)d->valuedouble, took, sizeof took);
    const cJSON *hl = cJSON_GetObjectItemCaseSensitive(j, "headline");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hl, "value");
    if (cJSON_IsNumber(v)) {
        char n[40];
        sm_cli_num4(v->valuedouble, n, sizeof n);
        snprintf(head, sizeof head, "%s %s", n, str_or(hl, "unit", ""));
    }
    const char *state = str_or(j, "state", "?");
    char reason[300];
    sm_cli_job_reason(j, reason, sizeof reason);
    const char *row[] = {str_or(j, "id", "?"),
                         who,
                         str_or(j, "test", ""),
                         rep,
                         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "warmup")) ? "yes" : "",
                         state,
                         took,
                         head,
                         reason};
    return sm_grid_row(g, row);
}

/* "104 [103, 106] n=3", "-" before the table has the cell's figures */
static void figures_text(const cJSON *c, char *buf, size_t cap)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(c, "median"),
                *lo = cJSON_GetObjectItemCaseSensitive(c, "ci95_low"),
                *hi = cJSON_GetObjectItemCaseSensitive(c, "ci95_high"),
                *n = cJSON_GetObjectItemCaseSensitive(c, "n");
    if (!cJSON_IsNumber(m) || !cJSON_IsNumber(n)) {
        snprintf(buf, cap, "-");
        return;
    }
    char tm[40], tl[40] = "?", th[40] = "?";
    sm_cli_num4(m->valuedouble, tm, sizeof tm);
    if (cJSON_IsNumber(lo))
        sm_cli_num4(lo->valuedouble, tl, sizeof tl);
    if (cJSON_IsNumber(hi))
        sm_cli_num4(hi->valuedouble, th, sizeof th);
    snprintf(buf, cap, "%s [%s, %s] n=%d", tm, tl, th, n->valueint);
}

/* sockmatrix jobs RUN --cell N: GET /api/runs/ID/cells/N, a heading with the table's figures
 * and one line per job of the cell in run order. */
/* Whether run has cell N; when it has not, says so with the cells it has (exit status 2). 0
 * when it has, 1 when the coordinator could not say. */
static int check_cell(sm_http *h, const sm_cli_opts *o)
{
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64, o->run_id);
    sm_http_resp r;
    if (sm_cli_call_run(h, o->run_id, path, NULL, 0, &r))
        return 1;
    sm_apiview_run run;
    sm_apiview_cell *cells = NULL;
    size_t n = 0;
    sm_error err = {0};
    int rc = sm_apiview_run_decode(r.body, r.len, &run, &cells, &n, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("GET /api/runs/ID", &err);
    bool found = false;
    char list[2048] = "";
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        found = found || cells[i].index == o->job_cell;
        if (at + 1 < sizeof list)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%" PRIu32 " (%s%s%s, %s)",
                                   i ? ", " : "", cells[i].index, cells[i].host,
                                   cells[i].peer[0] ? "->" : "", cells[i].peer, cells[i].test);
    }
    free(cells);
    if (found)
        return 0;
    if (n == 0)
        sm_cli_fail("--cell %" PRIu32 ": run %" PRIu64 " has no cells", o->job_cell, o->run_id);
    else
        sm_cli_fail("--cell %" PRIu32 ": run %" PRIu64 " has no such cell; its cells are %s",
                    o->job_cell, o->run_id, list);
    return 2;
}

static int cell_values(sm_http *h, const sm_cli_opts *o)
{
    const int known = check_cell(h, o);
    if (known)
        return known;
    char path[96];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/cells/%" PRIu32, o->run_id, o->job_cell);
    cJSON *c = NULL;
    const cJSON *values = NULL;
    if (get_array(h, o->run_id, path, "values", "GET /api/runs/ID/cells/N", &c, &values))
        return 1;
    if (o->format == SM_CLI_FMT_JSON)
        return print_json(c);
    char fig[160];
    figures_text(c, fig, sizeof fig);
    if (o->format == SM_CLI_FMT_TABLE) {
        printf("cell %" PRIu32 ": %s, %s (%s, %s)\n", o->job_cell, str_or(c, "row", "?"),
               str_or(c, "test", "?"), str_or(c, "metric", "?"), str_or(c, "unit", ""));
        printf("table: %s\n", fig);
    }
    sm_grid g = {7, 0, "lrlllrl", NULL, o->format};
    static const char *const header[] = {"JOB",     "REP",   "WARM-UP", "STATE",
                                         "COUNTED", "VALUE", "WHY"};
    int rc = sm_grid_row(&g, header);
    for (const cJSON *v = values->child; v && !rc; v = v->next) {
        char rep[16] = "", val[48] = "-";
        const cJSON *rv = cJSON_GetObjectItemCaseSensitive(v, "repetition");
        if (cJSON_IsNumber(rv))
            snprintf(rep, sizeof rep, "%d", rv->valueint);
        const cJSON *vv = cJSON_GetObjectItemCaseSensitive(v, "value");
        if (cJSON_IsNumber(vv))
            sm_cli_num4(vv->valuedouble, val, sizeof val);
        const bool counted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "counted"));
        const bool disturbed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "disturbed"));
        const char *row[] = {str_or(v, "job", "?"), rep,
                             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "warmup")) ? "yes"
                                                                                         : "",
                             str_or(v, "state", "?"),
                             counted     ? "yes"
                             : disturbed ? "no (disturbed)"
                                         : "no",
                             val,
                             /* The agent's word for what disturbed the host. */
                             disturbed ? str_or(v, "disturbed_reason", "") : ""};
        rc = sm_grid_row(&g, row);
    }
    cJSON_Delete(c);
    return sm_grid_done(&g, rc);
}

int sm_cli_cmd_jobs(sm_http *h, const sm_cli_opts *o)
{
    if (o->have_job_cell)
        return cell_values(h, o);
    sm_grid g = {9, 0, "rllrllrrl", NULL, o->format};
    static const char *const header[] = {"ID",    "HOST",     "TEST",     "REP",   "WARM-UP",
                                         "STATE", "DURATION", "HEADLINE", "REASON"};
    int rc = o->format == SM_CLI_FMT_JSON ? 0 : sm_grid_row(&g, header);
    cJSON *all = o->format == SM_CLI_FMT_JSON ? cJSON_CreateArray() : NULL;
    if (o->format == SM_CLI_FMT_JSON && !all) {
        sm_cli_fail("out of memory");
        return 1;
    }
    char after[32] = "";
    for (bool more = true; more && !rc;) {
        char path[256];
        snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/jobs?limit=1000%s%s%s%s%s%s", o->run_id,
                 o->job_host ? "&host=" : "", o->job_host ? o->job_host : "",
                 o->job_state ? "&state=" : "", o->job_state ? o->job_state : "",
                 after[0] ? "&after=" : "", after);
        sm_http_resp r;
        if (sm_cli_call_run(h, o->run_id, path, NULL, 0, &r)) {
            rc = 1;
            break;
        }
        cJSON *page = cJSON_ParseWithLength(r.body, r.len);
        sm_http_resp_fini(&r);
        cJSON *jobs = cJSON_GetObjectItemCaseSensitive(page, "jobs");
        if (!cJSON_IsArray(jobs)) {
            cJSON_Delete(page);
            sm_error err = {0};
            sm_error_set(&err, SM_EPARSE, "no \"jobs\" array");
            rc = sm_cli_bad_answer("GET /api/runs/ID/jobs", &err);
            break;
        }
        if (all) {
            /* The page's jobs move to the one array printed at the end. */
            for (cJSON *j; (j = cJSON_DetachItemFromArray(jobs, 0)) != NULL;)
                cJSON_AddItemToArray(all, j);
        } else {
            for (const cJSON *j = jobs->child; j && !rc; j = j->next)
                rc = jobs_row(&g, j);
        }
        const char *next = cJSON_GetStringValue(cJSON_GetObjectItem(page, "next"));
        more = next != NULL;
        if (next)
            snprintf(after, sizeof after, "%.30s", next);
        cJSON_Delete(page);
    }
    if (o->format != SM_CLI_FMT_JSON) {
        if (rc == 1) {
            sm_grid_fini(&g);
            return 1;
        }
        return sm_grid_done(&g, rc);
    }
    sm_grid_fini(&g);
    if (rc) {
        cJSON_Delete(all);
        return 1;
    }
    return print_json(all);
}
