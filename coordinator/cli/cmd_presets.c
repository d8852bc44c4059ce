/* sockmatrix presets: each preset with its job count on the whole fleet (every registered
 * host, busy or idle), and a time estimate taken from the newest finished run of the same
 * tests, whatever that run was called. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"
#include "coordinator/analysis/label.h"
#include "coordinator/model/plan.h"

#define SCAN_RUNS 30 /* finished runs whose tests are looked at for an estimate */

/* What the coordinator knows that the estimates need: its agents and its latest runs. */
typedef struct fleet_view {
    sm_plan_host *hosts;
    size_t n_hosts;
    size_t online;
    sm_apiview_run *runs;
    size_t n_runs;
    char **tests; /* per run: its tests (tests_of), loaded when first needed; owned */
} fleet_view;

static void fleet_fini(fleet_view *f)
{
    for (size_t i = 0; f->tests && i < f->n_runs; i++)
        free(f->tests[i]);
    free(f->tests);
    free(f->hosts);
    free(f->runs);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A set of test labels as one text: sorted, each once, each ending in a newline; malloc'd,
 * NULL when out of memory. labels is sorted in place. */
static char *label_set(const char **labels, size_t n)
{
    qsort(labels, n, sizeof *labels, cmp_str);
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(labels[i]) + 1;
    char *out = malloc(len), *at = out;
    for (size_t i = 0; out && i < n; i++)
        if (i == 0 || strcmp(labels[i], labels[i - 1]) != 0)
            at += sprintf(at, "%s\n", labels[i]);
    if (out)
        *at = '\0';
    return out;
}

/* The tests of run i (its cells' labels, as label_set), "" when it cannot be read. */
static const char *tests_of(sm_http *h, fleet_view *f, size_t i)
{
    if (f->tests[i])
        return f->tests[i];
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64, f->runs[i].id);
    sm_http_resp r;
    sm_error err = {0};
    sm_apiview_run run;
    sm_apiview_cell *cells = NULL;
    size_t n = 0;
    const char **labels = NULL;
    if (sm_http_get(h, path, &r, &err) == 0) {
        if (r.status == 200 && sm_apiview_run_decode(r.body, r.len, &run, &cells, &n, &err) == 0 &&
            (labels = calloc(n ? n : 1, sizeof *labels)) != NULL) {
            for (size_t k = 0; k < n; k++)
                labels[k] = cells[k].test;
            f->tests[i] = label_set(labels, n);
        }
        sm_http_resp_fini(&r);
    }
    free(labels);
    free(cells);
    if (!f->tests[i])
        f->tests[i] = calloc(1, 1);
    return f->tests[i] ? f->tests[i] : "";
}

static int load_fleet(sm_http *h, fleet_view *f)
{
    sm_http_resp r;
    sm_apiview_agent *a = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (sm_cli_call(h, "/api/agents", NULL, 0, &r))
        return 1;
    int rc = sm_apiview_agents_decode(r.body, r.len, &a, &n, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("GET /api/agents", &err);
    f->hosts = calloc(n ? n : 1, sizeof *f->hosts);
    if (!f->hosts) {
        free(a);
        sm_cli_fail("out of memory");
        return 1;
    }
    /* The presets take "hosts": "all". The count is the fleet's, every registered host: one
     * busy with another run now, or away for a moment, does not change what the preset is. */
    for (size_t i = 0; i < n; i++) {
        snprintf(f->hosts[i].name, sizeof f->hosts[i].name, "%s", a[i].name);
        f->hosts[i].online = true;
        f->online++;
    }
    f->n_hosts = n;
    free(a);
    if (sm_cli_call(h, "/api/runs", NULL, 0, &r))
        return 1;
    rc = sm_apiview_runs_decode(r.body, r.len, &f->runs, &f->n_runs, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("GET /api/runs", &err);
    f->tests = calloc(f->n_runs ? f->n_runs : 1, sizeof *f->tests);
    if (!f->tests) {
        sm_cli_fail("out of memory");
        return 1;
    }
    return 0;
}

/* The preset's jobs on the fleet ("24", "24+" when adaptive runs add rounds), or "-" when
 * this CLI does not know the preset or it cannot be planned there; *jobs 0 then. *tests: its
 * tests as label_set says them (malloc'd; NULL when not planned). */
static void count_jobs(const char *name, const fleet_view *f, char *out, size_t cap, size_t *jobs,
                       char **tests)
{
    *jobs = 0;
    *tests = NULL;
    snprintf(out, cap, "-");
    const sm_preset *p = sm_preset_find(name);
    sm_spec spec;
    sm_error err = {0};
    if (!p || !f->online || sm_spec_decode(p->spec_json, strlen(p->spec_json), &spec, &err))
        return;
    sm_plan plan;
    if (sm_plan_expand(&spec, f->hosts, f->n_hosts, &plan, &err) == 0) {
        *jobs = plan.n_jobs;
        snprintf(out, cap, "%zu%s", plan.n_jobs, spec.adaptive ? "+" : "");
        char(*text)[SM_APIVIEW_PROSE] = calloc(plan.n_cells ? plan.n_cells : 1, sizeof *text);
        const char **labels = calloc(plan.n_cells ? plan.n_cells : 1, sizeof *labels);
        for (size_t k = 0; text && labels && k < plan.n_cells; k++) {
            sm_export_label(&plan.cells[k].params, SM_LABEL_TEST, false, text[k], sizeof text[k]);
            labels[k] = text[k];
        }
        if (text && labels)
            *tests = label_set(labels, plan.n_cells);
        free(labels);
        free(text);
        sm_plan_fini(&plan);
    }
    sm_spec_fini(&spec);
}

static void format_duration(char *out, size_t cap, int64_t ms)
{
    int64_t s = (ms + 500) / 1000;
    if (s < 60)
        snprintf(out, cap, "%" PRId64 "s", s);
    else if (s < 3600)
        snprintf(out, cap, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
    else
        snprintf(out, cap, "%" PRId64 "h%02" PRId64 "m", s / 3600, s % 3600 / 60);
}

/* From the newest run that ended done with the preset's tests (by name, or the same tests
 * under any name): its time, scaled by the jobs it had against the jobs now (a fleet that
 * grew takes longer). Said with where it comes from. */
static void estimate(sm_http *h, const char *name, size_t jobs, const char *tests, fleet_view *f,
                     char *out, size_t cap)
{
    const sm_apiview_run *last = NULL;
    size_t scanned = 0;
    for (size_t i = 0; i < f->n_runs; i++) {
        const sm_apiview_run *r = &f->runs[i];
        if (strcmp(r->state, "done") != 0 || !r->total || r->finished_ms <= r->created_ms ||
            (last && r->id < last->id))
            continue;
        if (strcmp(r->name, name) == 0 ||
            (tests && *tests && scanned++ < SCAN_RUNS && strcmp(tests_of(h, f, i), tests) == 0))
            last = r;
    }
    if (!last) {
        snprintf(out, cap, "no estimate (no finished run of it yet)");
        return;
    }
    const int64_t took = last->finished_ms - last->created_ms;
    char then[32], now[32];
    format_duration(then, sizeof then, took);
    if (!jobs || jobs == last->total) {
        snprintf(out, cap, "about %s (run %" PRIu64 " %s: %" PRIu32 " jobs in %s)", then, last->id,
                 last->name, last->total, then);
        return;
    }
    format_duration(now, sizeof now, (int64_t)((double)took * (double)jobs / last->total));
    snprintf(out, cap, "about %s (run %" PRIu64 " %s: %" PRIu32 " jobs in %s, scaled)", now,
             last->id, last->name, last->total, then);
}

int sm_cli_cmd_presets(sm_http *h, const sm_cli_opts *o)
{
    sm_http_resp r;
    if (sm_cli_call(h, "/api/presets", NULL, 0, &r))
        return 1;
    sm_apiview_preset *p = NULL;
    size_t n = 0;
    sm_error err = {0};
    int rc = sm_apiview_presets_decode(r.body, r.len, &p, &n, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("GET /api/presets", &err);
    fleet_view f = {0};
    if (load_fleet(h, &f)) {
        free(p);
        fleet_fini(&f);
        return 1;
    }
    char head_jobs[48];
    snprintf(head_jobs, sizeof head_jobs, "JOBS (%zu HOSTS)", f.online);
    sm_grid g = {4, 0, "lrll", NULL, o->format};
    const char *head[] = {"NAME", head_jobs, "ESTIMATE", "DESCRIPTION"};
    rc = sm_grid_row(&g, head);
    for (size_t i = 0; i < n && !rc; i++) {
        char jobs[32], est[256], *tests;
        size_t nj;
        count_jobs(p[i].name, &f, jobs, sizeof jobs, &nj, &tests);
        estimate(h, p[i].name, nj, tests, &f, est, sizeof est);
        free(tests);
        const char *row[] = {p[i].name, jobs, est, p[i].description};
        rc = sm_grid_row(&g, row);
    }
    free(p);
    fleet_fini(&f);
    return sm_grid_done(&g, rc);
}
