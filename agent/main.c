/* sockmatrix-agent: the fleet agent; for now its single-machine --once mode. */
#include <stdio.h>
#include <stdlib.h>

#include "agent/once.h"
#include "agent/opts.h"
#include "agent/output.h"
#include "proto/log.h"

int main(int argc, char **argv)
{
    sm_once_opts o;
    sm_error err = {0};
    if (sm_opts_parse(argc, argv, &o, &err) != 0) {
        fprintf(stderr, "sockmatrix-agent: %s\n", err.msg);
        return 2;
    }
    if (o.help) {
        fputs(sm_opts_usage(), stdout);
        return 0;
    }
    if (o.version) {
        printf("sockmatrix-agent %s\n", SM_VERSION);
        return 0;
    }
    if (!o.once) {
        fprintf(stderr, "sockmatrix-agent: only --once is available in this version; the "
                        "fleet mode comes with the coordinator (see --help)\n");
        return 2;
    }
    if (o.log_level >= 0)
        sm_log_level = o.log_level;

    sm_report rep;
    int failed = sm_once_run(&o, &rep, o.quiet ? NULL : stderr, &err);
    if (failed < 0) {
        fprintf(stderr, "sockmatrix-agent: %s\n", err.msg);
        sm_once_report_fini(&rep);
        return 1;
    }
    int rc = 0;
    switch (o.format) {
    case SM_FMT_JSON:
        rc = sm_output_json(stdout, &rep, &err);
        break;
    case SM_FMT_CSV:
        sm_output_csv(stdout, &rep);
        break;
    default:
        sm_output_table(stdout, &rep, &o);
        break;
    }
    sm_once_report_fini(&rep);
    if (rc) {
        fprintf(stderr, "sockmatrix-agent: %s\n", err.msg);
        return 1;
    }
    if (failed)
        fprintf(stderr, "sockmatrix-agent: %d job%s failed\n", failed, failed == 1 ? "" : "s");
    return failed ? 1 : 0;
}
