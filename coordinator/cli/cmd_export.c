/* sockmatrix export and anomalies: a run's comparison table and its flags, as the coordinator
 * renders them (anomalies as rows, for csv and md, from its JSON). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"

/* Whether path ends in ext (".md"). */
static bool ends_with(const char *path, const char *ext)
{
    const size_t n = strlen(path), e = strlen(ext);
    return n > e && strcmp(path + n - e, ext) == 0;
}

sm_cli_format sm_cli_export_format(const sm_cli_opts *o, bool stdout_tty)
{
    if (o->format_given)
        return o->format;
    /* Without --format: a file by its name (.md, .json, else CSV); stdout Markdown for a
     * person at a terminal, CSV for a program reading a pipe. */
    if (o->output)
        return ends_with(o->output, ".md")     ? SM_CLI_FMT_MD
               : ends_with(o->output, ".json") ? SM_CLI_FMT_JSON
                                               : SM_CLI_FMT_CSV;
    return stdout_tty ? SM_CLI_FMT_MD : SM_CLI_FMT_CSV;
}

int sm_cli_cmd_export(sm_http *h, const sm_cli_opts *o)
{
    sm_http_resp r;
    const sm_cli_format f = sm_cli_export_format(o, isatty(STDOUT_FILENO) == 1);
    if (sm_cli_get_table(h, o->run_id, f, o->include_disturbed, &r))
        return 1;
    int rc = 0;
    if (o->output) {
        sm_error err = {0};
        if (sm_cli_write_atomic(o->output, r.body, r.len, &err) != 0) {
            sm_cli_fail("%s", err.msg);
            rc = 1;
        }
    } else {
        rc = sm_cli_print_body(r.body, r.len);
    }
    sm_http_resp_fini(&r);
    return rc;
}

/* The anomalies of GET /api/runs/ID/anomalies?format=json as rows, one per flag. */
static int anomaly_rows(const char *body, size_t len, sm_cli_format fmt)
{
    sm_apiview_anomalies list;
    sm_error err = {0};
    if (sm_apiview_anomalies_decode(body, len, &list, &err) != 0)
        return sm_cli_bad_answer("GET /api/runs/ID/anomalies", &err);
    sm_grid g = {8, 0, "llllrrlr", NULL, fmt};
    static const char *const head[] = {"KIND",  "HOST",      "TEST", "METRIC",
                                       "VALUE", "REFERENCE", "UNIT", "CHANGE (%)"};
    int rc = sm_grid_row(&g, head);
    for (size_t i = 0; i < list.n && !rc; i++) {
        const sm_apiview_anomaly *a = &list.v[i];
        char v[48], ref[48], rel[48];
        sm_cli_num4(a->value, v, sizeof v);
        sm_cli_num4(a->reference, ref, sizeof ref);
        sm_cli_num4(100 * a->rel, rel, sizeof rel);
        const char *row[] = {a->kind, a->host, a->test, a->metric, v, ref, a->unit, rel};
        rc = sm_grid_row(&g, row);
    }
    sm_apiview_anomalies_fini(&list);
    return sm_grid_done(&g, rc);
}

int sm_cli_cmd_anomalies(sm_http *h, const sm_cli_opts *o)
{
    sm_http_resp r;
    const bool rows = o->format == SM_CLI_FMT_CSV || o->format == SM_CLI_FMT_MD;
    if (sm_cli_get_anomalies(h, o->run_id, o->baseline, o->floor, o->include_disturbed,
                             rows ? SM_CLI_FMT_JSON : o->format, &r))
        return 1;
    int rc = rows ? anomaly_rows(r.body, r.len, o->format) : sm_cli_print_body(r.body, r.len);
    sm_http_resp_fini(&r);
    return rc;
}
