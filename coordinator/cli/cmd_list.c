/* sockmatrix agents and runs: the coordinator's lists as aligned grids. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The agent's last-seen age in seconds, or "-" when it has never been seen. */
static void format_age(char *out, size_t cap, int64_t last_seen_ms, int64_t now)
{
    if (!last_seen_ms) {
        snprintf(out, cap, "-");
        return;
    }
    /* The two clocks may differ a little: never show a negative age. */
    int64_t age = (now - last_seen_ms) / 1000;
    snprintf(out, cap, "%" PRId64, age < 0 ? 0 : age);
}

int sm_cli_cmd_agents(sm_http *h, const sm_cli_opts *o)
{
    sm_http_resp r;
    if (sm_cli_call(h, "/api/agents", NULL, 0, &r))
        return 1;
    if (o->format == SM_CLI_FMT_JSON)
        return sm_cli_print_answer(&r);
    sm_apiview_agent *a = NULL;
    size_t n = 0;
    sm_error err = {0};
    int rc = sm_apiview_agents_decode(r.body, r.len, &a, &n, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("GET /api/agents", &err);
    if (n == 0 && o->format == SM_CLI_FMT_TABLE) {
        sm_cli_fail("no agent has registered with the coordinator at %s yet", sm_http_url(h));
        return 0;
    }
    sm_grid g = {7, 0, "lllrrlr", NULL, o->format};
    static const char *const head[] = {"NAME",    "STATUS", "KERNEL",       "CORES",
                                       "MEM GiB", "LABELS", "LAST SEEN (s)"};
    rc = sm_grid_row(&g, head);
    int64_t now = now_ms();
    for (size_t i = 0; i < n && !rc; i++) {
        char cores[16], mem[32], seen[32];
        snprintf(cores, sizeof cores, "%" PRIu32, a[i].cores);
        snprintf(mem, sizeof mem, "%.1f", (double)a[i].mem_bytes / (1024.0 * 1024 * 1024));
        format_age(seen, sizeof seen, a[i].last_seen_ms, now);
        const char *row[] = {a[i].name, a[i].status, a[i].kernel[0] ? a[i].kernel : "-",
                             cores,     mem,         a[i].labels[0] ? a[i].labels : "-",
                             seen};
        rc = sm_grid_row(&g, row);
    }
    free(a);
    return sm_grid_done(&g, rc);
}

int sm_cli_cmd_runs(sm_http *h, const sm_cli_opts *o)
{
    sm_http_resp r;
    if (sm_cli_call(h, "/api/runs", NULL, 0, &r))
        return 1;
    if (o->format == SM_CLI_FMT_JSON)
        return sm_cli_print_answer(&r);
    sm_apiview_run *runs = NULL;
    size_t n = 0;
    sm_error err = {0};
    int rc = sm_apiview_runs_decode(r.body, r.len, &runs, &n, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("GET /api/runs", &err);
    if (n == 0 && o->format == SM_CLI_FMT_TABLE) {
        sm_cli_fail("no runs yet (start one: sockmatrix run --preset NAME)");
        return 0;
    }
    sm_grid g = {4, 0, "rllr", NULL, o->format};
    static const char *const head[] = {"ID", "NAME", "STATE", "DONE/FAILED/TOTAL"};
    rc = sm_grid_row(&g, head);
    for (size_t i = 0; i < n && !rc; i++) {
        char id[24], prog[48];
        snprintf(id, sizeof id, "%" PRIu64, runs[i].id);
        snprintf(prog, sizeof prog, "%" PRIu32 "/%" PRIu32 "/%" PRIu32, runs[i].done,
                 runs[i].failed, runs[i].total);
        const char *row[] = {id, runs[i].name, runs[i].state, prog};
        rc = sm_grid_row(&g, row);
    }
    free(runs);
    return sm_grid_done(&g, rc);
}
