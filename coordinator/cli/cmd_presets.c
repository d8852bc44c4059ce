/* sockmatrix presets: each preset with its job count on the fleet as it is now, and a time
 * estimate taken from the last run of that preset that finished. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"
#include "coordinator/model/plan.h"

/* What the coordinator knows that the estimates need: its agents and its latest runs. */
typedef struct fleet_view {
    sm_plan_host *hosts;
    size_t n_hosts;
    size_t online;
    sm_apiview_run *runs;
    size_t n_runs;
} fleet_view;

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
    /* The presets take "hosts": "all": the plan needs the names and who is online. */
    for (size_t i = 0; i < n; i++) {
        snprintf(f->hosts[i].name, sizeof f->hosts[i].name, "%s", a[i].name);
        f->hosts[i].online = strcmp(a[i].status, "online") == 0;
        f->online += f->hosts[i].online;
    }
    f->n_hosts = n;
    free(a);
    if (sm_cli_call(h, "/api/runs", NULL, 0, &r))
        return 1;
    rc = sm_apiview_runs_decode(r.body, r.len, &f->runs, &f->n_runs, &err);
    sm_http_resp_fini(&r);
    return rc ? sm_cli_bad_answer("GET /api/runs", &err) : 0;
}

/* The preset's jobs on the online hosts ("24", "24+" when adaptive runs add rounds), or "-"
 * when this CLI does not know the preset or it cannot be planned there; *jobs 0 then. */
static void count_jobs(const char *name, const fleet_view *f, char *out, size_t cap, size_t *jobs)
{
    *jobs = 0;
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

/* From the newest run of the preset that ended done: its time, scaled by the jobs it had
 * against the jobs now (a fleet that grew takes longer). Said with where it comes from. */
static void estimate(const char *name, size_t jobs, const fleet_view *f, char *out, size_t cap)
{
    const sm_apiview_run *last = NULL;
    for (size_t i = 0; i < f->n_runs; i++) {
        const sm_apiview_run *r = &f->runs[i];
        if (strcmp(r->name, name) == 0 && strcmp(r->state, "done") == 0 && r->total &&
            r->finished_ms > r->created_ms && (!last || r->id > last->id))
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
        snprintf(out, cap, "about %s (run %" PRIu64 ": %" PRIu32 " jobs in %s)", then, last->id,
                 last->total, then);
        return;
    }
    format_duration(now, sizeof now, (int64_t)((double)took * (double)jobs / last->total));
    snprintf(out, cap, "about %s (run %" PRIu64 ": %" PRIu32 " jobs in %s, scaled)", now, last->id,
             last->total, then);
}

int sm_cli_cmd_presets(sm_http *h)
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
        free(f.hosts);
        free(f.runs);
        return 1;
    }
    char head_jobs[48];
    snprintf(head_jobs, sizeof head_jobs, "JOBS (%zu HOSTS)", f.online);
    sm_grid g = {4, 0, "lrll", NULL};
    const char *head[] = {"NAME", head_jobs, "ESTIMATE", "DESCRIPTION"};
    rc = sm_grid_row(&g, head);
    for (size_t i = 0; i < n && !rc; i++) {
        char jobs[32], est[160];
        size_t nj;
        count_jobs(p[i].name, &f, jobs, sizeof jobs, &nj);
        estimate(p[i].name, nj, &f, est, sizeof est);
        const char *row[] = {p[i].name, jobs, est, p[i].description};
        rc = sm_grid_row(&g, row);
    }
    free(p);
    free(f.hosts);
    free(f.runs);
    return sm_grid_done(&g, rc);
}
