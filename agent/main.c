/* sockmatrix-agent: the fleet agent (--coordinator ...) and its single-machine --once mode. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/daemon.h"
#include "agent/dopts.h"
#include "agent/once.h"
#include "agent/opts.h"
#include "agent/output.h"
#include "proto/log.h"

static volatile sig_atomic_t stop_flag;
static int wake_fd = -1;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
    if (wake_fd >= 0) {
        const unsigned long long one = 1;
        ssize_t n = write(wake_fd, &one, sizeof one);
        (void)n;
    }
}

static int run_daemon(int argc, char **argv)
{
    sm_daemon_cfg cfg;
    sm_error err = {0};
    bool help;
    if (sm_dopts_parse(argc, argv, &cfg, &help, &err) != 0) {
        fprintf(stderr, "sockmatrix-agent: %s\n", err.msg);
        return 2;
    }
    if (help) {
        fputs(sm_dopts_usage(), stdout);
        return 0;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (sm_daemon_run(&cfg, &stop_flag, &wake_fd, &err) != 0) {
        fprintf(stderr, "sockmatrix-agent: %s\n", err.msg);
        return 1;
    }
    return 0;
}

static int run_once(int argc, char **argv)
{
    sm_once_opts o;
    sm_error err = {0};
    if (sm_opts_parse(argc, argv, &o, &err) != 0) {
        fprintf(stderr, "sockmatrix-agent: %s\n", err.msg);
        return 2;
    }
    if (o.help) {
        fputs(sm_opts_usage(), stdout);
        fputs("\n", stdout);
        fputs(sm_dopts_usage(), stdout);
        return 0;
    }
    if (o.version) {
        printf("sockmatrix-agent %s\n", SM_VERSION);
        return 0;
    }
    if (!o.once) {
        fprintf(stderr, "sockmatrix-agent: give --once (a local test) or --coordinator (fleet "
                        "mode); see --help\n");
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

int main(int argc, char **argv)
{
    return sm_dopts_wanted(argc, argv) ? run_daemon(argc, argv) : run_once(argc, argv);
}
