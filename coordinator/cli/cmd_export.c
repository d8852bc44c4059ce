/* sockmatrix export and anomalies: a run's comparison table and its flags, as the coordinator
 * renders them. */
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"

int sm_cli_cmd_export(sm_http *h, const sm_cli_opts *o)
{
    sm_http_resp r;
    if (sm_cli_get_table(h, o->run_id, o->format, o->include_disturbed, &r))
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

int sm_cli_cmd_anomalies(sm_http *h, const sm_cli_opts *o)
{
    sm_http_resp r;
    if (sm_cli_get_anomalies(h, o->run_id, o->baseline, o->floor, o->include_disturbed, o->format,
                             &r))
        return 1;
    int rc = sm_cli_print_body(r.body, r.len);
    sm_http_resp_fini(&r);
    return rc;
}
