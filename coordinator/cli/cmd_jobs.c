/* What sockmatrix show adds under a run's progress (its times, its failed jobs with their
 * reasons and its flags) and sockmatrix jobs, from GET /api/runs/ID/jobs and the anomalies'
 * text; sockmatrix jobs --cell, from GET /api/runs/ID/cells/N. */
#include <inttypes.h>
#include <math.h>
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

/* GET path (as sm_cli_call_run when run is not 0): a page of jobs, 0 with *page decoded (the
 * caller's to fini), or 1 once the failure is reported. */
static int get_jobs(sm_http *h, uint64_t run, const char *path, sm_apiview_jobs_page *page)
{
    sm_http_resp r;
    if (run ? sm_cli_call_run(h, run, path, NULL, 0, &r) : sm_cli_call(h, path, NULL, 0, &r))
        return 1;
    sm_error err = {0};
    const int rc = sm_apiview_jobs_page_decode(r.body, r.len, page, &err);
    sm_http_resp_fini(&r);
    return rc ? sm_cli_bad_answer("GET /api/runs/ID/jobs", &err) : 0;
}

/* The answer doc pretty-printed on stdout (its figures as the API wrote them); 0, or 1 once out
 * of memory is reported. */
static int print_json(sm_apiview_doc *doc)
{
    char *text = sm_apiview_print(doc);
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
        sm_apiview_jobs_page page;
        if (get_jobs(h, 0, path, &page))
            return 1;
        for (size_t i = 0; i < page.n; i++) {
            const sm_apiview_job *j = &page.jobs[i];
            if (shown++ == 0)
                printf("failures:\n");
            printf("  job %s on %s%s%s: %s\n", j->id ? j->id : "?", j->host ? j->host : "?",
                   j->peer ? "->" : "", j->peer ? j->peer : "",
                   j->reason && *j->reason ? j->reason : "no reason");
        }
        const bool more = page.next != NULL;
        if (more)
            snprintf(after, sizeof after, "%.30s", page.next);
        sm_apiview_jobs_page_fini(&page);
        if (!more)
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

static const char *str_or(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

static int jobs_row(sm_grid *g, const sm_apiview_job *j)
{
    char who[140], rep[16] = "", took[32] = "-", head[64] = "-";
    snprintf(who, sizeof who, "%s%s%s", str_or(j->host, "?"), j->peer ? "->" : "",
             str_or(j->peer, ""));
    if (j->has_repetition)
        snprintf(rep, sizeof rep, "%d", j->repetition);
    if (!isnan(j->duration_ms))
        duration_text((int64_t)j->duration_ms, took, sizeof took);
    if (!isnan(j->headline)) {
        char n[40];
        sm_cli_num4(j->headline, n, sizeof n);
        snprintf(head, sizeof head, "%s %s", n, str_or(j->headline_unit, ""));
    }
    char reason[300];
    sm_cli_job_reason(j, reason, sizeof reason);
    const char *row[] = {str_or(j->id, "?"),
                         who,
                         str_or(j->test, ""),
                         rep,
                         j->warmup ? "yes" : "",
                         str_or(j->state, "?"),
                         took,
                         head,
                         reason};
    return sm_grid_row(g, row);
}

/* "104 [103, 106] n=3", "-" before the table has the cell's figures */
static void figures_text(const sm_apiview_cell_values *c, char *buf, size_t cap)
{
    if (isnan(c->median) || !c->has_n) {
        snprintf(buf, cap, "-");
        return;
    }
    char tm[40], tl[40] = "?", th[40] = "?";
    sm_cli_num4(c->median, tm, sizeof tm);
    if (!isnan(c->ci95_low))
        sm_cli_num4(c->ci95_low, tl, sizeof tl);
    if (!isnan(c->ci95_high))
        sm_cli_num4(c->ci95_high, th, sizeof th);
    snprintf(buf, cap, "%s [%s, %s] n=%d", tm, tl, th, c->n);
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
    sm_http_resp r;
    if (sm_cli_call_run(h, o->run_id, path, NULL, 0, &r))
        return 1;
    sm_apiview_cell_values c;
    sm_error err = {0};
    int rc = sm_apiview_cell_values_decode(r.body, r.len, &c, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("GET /api/runs/ID/cells/N", &err);
    if (o->format == SM_CLI_FMT_JSON) {
        rc = print_json(c.doc);
        sm_apiview_cell_values_fini(&c);
        return rc;
    }
    char fig[160];
    figures_text(&c, fig, sizeof fig);
    if (o->format == SM_CLI_FMT_TABLE) {
        printf("cell %" PRIu32 ": %s, %s (%s, %s)\n", o->job_cell, str_or(c.row, "?"),
               str_or(c.test, "?"), str_or(c.metric, "?"), str_or(c.unit, ""));
        printf("table: %s\n", fig);
    }
    sm_grid g = {7, 0, "lrlllrl", NULL, o->format};
    static const char *const header[] = {"JOB",     "REP",   "WARM-UP", "STATE",
                                         "COUNTED", "VALUE", "WHY"};
    rc = sm_grid_row(&g, header);
    for (size_t i = 0; i < c.n_values && !rc; i++) {
        const sm_apiview_cell_value *v = &c.values[i];
        char rep[16] = "", val[48] = "-";
        if (v->has_repetition)
            snprintf(rep, sizeof rep, "%d", v->repetition);
        if (!isnan(v->value))
            sm_cli_num4(v->value, val, sizeof val);
        const char *row[] = {str_or(v->job, "?"), rep, v->warmup ? "yes" : "",
                             str_or(v->state, "?"),
                             v->counted     ? "yes"
                             : v->disturbed ? "no (disturbed)"
                                            : "no",
                             val,
                             /* The agent's word for what disturbed the host. */
                             v->disturbed ? str_or(v->disturbed_reason, "") : ""};
        rc = sm_grid_row(&g, row);
    }
    sm_apiview_cell_values_fini(&c);
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
    sm_apiview_doc *all = o->format == SM_CLI_FMT_JSON ? sm_apiview_list_new() : NULL;
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
        sm_apiview_jobs_page page;
        if (get_jobs(h, o->run_id, path, &page)) {
            rc = 1;
            break;
        }
        if (all) {
            /* The page's jobs move to the one array printed at the end. */
            sm_apiview_jobs_move(&page, all);
        } else {
            for (size_t i = 0; i < page.n && !rc; i++)
                rc = jobs_row(&g, &page.jobs[i]);
        }
        more = page.next != NULL;
        if (more)
            snprintf(after, sizeof after, "%.30s", page.next);
        sm_apiview_jobs_page_fini(&page);
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
        sm_apiview_doc_free(all);
        return 1;
    }
    rc = print_json(all);
    sm_apiview_doc_free(all);
    return rc;
}
