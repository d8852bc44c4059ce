/* sockmatrix-agent: the fleet agent (--coordinator ...) and its single-machine --once mode. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/fleet/daemon.h"
#include "agent/fleet/opts.h"
#include "agent/host/fingerprint.h"
#include "agent/once/once.h"
#include "agent/once/opts.h"
#include "agent/once/output.h"
#include "agent/workloads/pattern.h"
#include "proto/log.h"
#include "proto/signals.h"

/* Set by the signal handler: a signal is process-wide, so its flag is too. */
static volatile sig_atomic_t stop_flag;
/* The daemon's eventfd the handler wakes it by; process-wide for the same reason. */
static int wake_fd = -1;

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
    if (sm_signals_install(&stop_flag, &wake_fd, &err) != 0 ||
        sm_daemon_run(&cfg, &stop_flag, &wake_fd, &err) != 0) {
        fprintf(stderr, "sockmatrix-agent: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* --fingerprint: this host's fingerprint, pretty JSON on stdout. */
static int print_fingerprint(const char *data_addr)
{
    sm_fingerprint fp;
    sm_error err = {0};
    sm_fp_init(&fp);
    int rc = sm_fp_collect(&fp, data_addr, &err);
    char *text = rc ? NULL : sm_fp_text(&fp, true, &err);
    sm_fp_fini(&fp);
    if (text == NULL) {
        fprintf(stderr, "sockmatrix-agent: %s\n", err.msg);
        return 1;
    }
    int ok = puts(text) >= 0 && fflush(stdout) == 0;
    free(text);
    return ok ? 0 : 1;
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
    if (o.fingerprint)
        return print_fingerprint(o.data_addr);
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

/* --write-pattern SIZE: the bytes the built-in source serves for GET /bytes/SIZE, for a file
 * another web server serves to an http job with --verify. */
static int write_pattern(int argc, char **argv)
{
    uint64_t size;
    if (argc != 3 || sm_parse_size(argv[2], &size) != 0 || size > SM_HTTP_SIZE_MAX) {
        fprintf(stderr, "sockmatrix-agent: --write-pattern takes one size up to 16G (e.g. 50M)\n");
        return 2;
    }
    sm_pattern pat = {0};
    if (sm_pattern_init_raw(&pat, 1) != 0) {
        fprintf(stderr, "sockmatrix-agent: out of memory\n");
        return 1;
    }
    for (uint64_t off = 0; off < size;) {
        size_t n = size - off < pat.period ? (size_t)(size - off) : pat.period;
        if (fwrite(sm_pattern_at(&pat, off), 1, n, stdout) != n) {
            sm_pattern_fini(&pat);
            fprintf(stderr, "sockmatrix-agent: cannot write the pattern\n");
            return 1;
        }
        off += n;
    }
    sm_pattern_fini(&pat);
    return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--write-pattern") == 0)
        return write_pattern(argc, argv);
    return sm_dopts_wanted(argc, argv) ? run_daemon(argc, argv) : run_once(argc, argv);
}
