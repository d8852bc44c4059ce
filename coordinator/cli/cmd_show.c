/* sockmatrix show, cancel and again: one run's state, progress and cells; cancelling it;
 * measuring again the cells it could not judge. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"

/* The per-cell counts, under the run's lines. */
static int print_cells(const sm_apiview_cell *cells, size_t n, sm_cli_format fmt)
{
    if (fmt == SM_CLI_FMT_TABLE)
        putchar('\n');
    sm_grid g = {9, 0, "rlllrrrrr", NULL, fmt};
    static const char *const head[] = {"CELL",   "HOST",   "PEER", "TEST",  "JOBS",
                                       "QUEUED", "ACTIVE", "DONE", "FAILED"};
    int rc = sm_grid_row(&g, head);
    for (size_t i = 0; i < n && !rc; i++) {
        char num[6][16];
        const uint32_t v[6] = {cells[i].index,  cells[i].jobs, cells[i].queued,
                               cells[i].active, cells[i].done, cells[i].failed};
        for (size_t k = 0; k < 6; k++)
            snprintf(num[k], sizeof num[k], "%" PRIu32, v[k]);
        const char *row[] = {num[0],        cells[i].host, cells[i].peer[0] ? cells[i].peer : "-",
                             cells[i].test, num[1],        num[2],
                             num[3],        num[4],        num[5]};
        rc = sm_grid_row(&g, row);
    }
    return sm_grid_done(&g, rc);
}

int sm_cli_cmd_show(sm_http *h, const sm_cli_opts *o)
{
    const uint64_t id = o->run_id;
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64, id);
    sm_http_resp r;
    if (sm_cli_call_run(h, id, path, NULL, 0, &r))
        return 1;
    if (o->format == SM_CLI_FMT_JSON)
        return sm_cli_print_answer(&r);
    sm_apiview_run run;
    sm_apiview_cell *cells = NULL;
    size_t n = 0;
    sm_error err = {0};
    int rc = sm_apiview_run_decode(r.body, r.len, &run, &cells, &n, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("GET /api/runs/ID", &err);
    if (o->format != SM_CLI_FMT_TABLE) {
        /* The data alone: the cells, each a row. */
        rc = print_cells(cells, n, o->format);
        free(cells);
        return rc;
    }
    printf("run %" PRIu64 " (%s): %s\n", run.id, run.name, run.state);
    if (run.reason[0])
        printf("reason: %s\n", run.reason);
    sm_cli_print_parallel(stdout, NULL, &run);
    printf("progress: %" PRIu32 "/%" PRIu32 " jobs done, %" PRIu32 " failed\n", run.done, run.total,
           run.failed);
    rc = sm_cli_show_details(h, &run);
    if (!rc && n)
        rc = print_cells(cells, n, o->format);
    free(cells);
    return rc;
}

int sm_cli_cmd_again(sm_http *h, uint64_t id)
{
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/again", id);
    sm_http_resp r;
    if (sm_cli_call_run(h, id, path, "{}", 2, &r))
        return 1;
    uint64_t again;
    sm_error err = {0};
    int rc = sm_apiview_run_id_decode(r.body, r.len, &again, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("POST /api/runs/ID/again", &err);
    fprintf(stderr,
            "run %" PRIu64 " started: the cells run %" PRIu64 " could not judge "
            "(sockmatrix show %" PRIu64 ")\n",
            again, id, again);
    printf("%" PRIu64 "\n", again);
    return fflush(stdout) == 0 ? 0 : 1;
}

int sm_cli_cmd_cancel(sm_http *h, uint64_t id)
{
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/cancel", id);
    sm_http_resp r;
    /* The call has nothing to say, but it is sent as application/json: an empty object. */
    if (sm_cli_call_run(h, id, path, "{}", 2, &r))
        return 1;
    sm_apiview_run run;
    sm_error err = {0};
    int rc = sm_apiview_run_decode(r.body, r.len, &run, NULL, NULL, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("POST /api/runs/ID/cancel", &err);
    printf("run %" PRIu64 ": %s\n", run.id, run.state);
    return 0;
}
