/* sockmatrix, the command-line client: its token file, and its commands' dispatch. */
#include "coordinator/cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coordinator/cli/cmd.h"
#include "coordinator/cli/http.h"
#include "coordinator/cli/output.h"

int sm_cli_load_token(const char *path, char *out, size_t cap, sm_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sm_error_sys(err, errno, "--token-file: cannot open %s", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return sm_error_sys(err, e, "--token-file: cannot stat %s", path);
    }
    /* The token lets its holder start and cancel runs; a file others can read has leaked it. */
    if (st.st_mode & 077) {
        close(fd);
        return sm_error_set(err, SM_EINVAL,
                            "--token-file: %s is readable by group or others (mode %03o): chmod "
                            "600 it",
                            path, (unsigned)(st.st_mode & 0777));
    }
    char buf[SM_CLI_TOKEN_MAX + 2];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int e = errno;
    close(fd);
    if (n < 0)
        return sm_error_sys(err, e, "--token-file: cannot read %s", path);
    buf[n] = '\0';
    size_t len = strcspn(buf, "\r\n");
    buf[len] = '\0';
    int rc = 0;
    if (len == 0)
        rc = sm_error_set(err, SM_EINVAL, "--token-file: %s: the first line is empty", path);
    else if (len >= SM_CLI_TOKEN_MAX || len >= cap)
        rc = sm_error_set(err, SM_EINVAL, "--token-file: %s: the token is longer than %zu bytes",
                          path, (cap < SM_CLI_TOKEN_MAX ? cap : SM_CLI_TOKEN_MAX) - 1);
    else
        memcpy(out, buf, len + 1);
    memset(buf, 0, sizeof buf);
    return rc;
}

int sm_cli_exec(const sm_cli_opts *o, const char *token)
{
    sm_http *h;
    sm_error err = {0};
    if (sm_http_open(&h, o->coordinator, token, o->cacert, &err) != 0) {
        sm_cli_fail("%s", err.msg);
        return 1;
    }
    int rc;
    switch (o->cmd) {
    case SM_CLI_AGENTS:
        rc = sm_cli_cmd_agents(h, o);
        break;
    case SM_CLI_PRESETS:
        rc = sm_cli_cmd_presets(h, o);
        break;
    case SM_CLI_RUN:
        rc = sm_cli_cmd_run(h, o);
        break;
    case SM_CLI_RUNS:
        rc = sm_cli_cmd_runs(h, o);
        break;
    case SM_CLI_SHOW:
        rc = sm_cli_cmd_show(h, o);
        break;
    case SM_CLI_CANCEL:
        rc = sm_cli_cmd_cancel(h, o->run_id);
        break;
    case SM_CLI_AGAIN:
        rc = sm_cli_cmd_again(h, o->run_id);
        break;
    case SM_CLI_EXPORT:
        rc = sm_cli_cmd_export(h, o);
        break;
    case SM_CLI_ANOMALIES:
        rc = sm_cli_cmd_anomalies(h, o);
        break;
    case SM_CLI_HOSTS_DIFF:
        rc = sm_cli_cmd_hosts_diff(h, o);
        break;
    case SM_CLI_HOSTS_FINGERPRINT:
        rc = sm_cli_cmd_hosts_fingerprint(h, o);
        break;
    case SM_CLI_COMPARE:
        rc = sm_cli_cmd_compare(h, o);
        break;
    case SM_CLI_JOBS:
        rc = sm_cli_cmd_jobs(h, o);
        break;
    case SM_CLI_TESTS:
        rc = sm_cli_cmd_tests(h, o);
        break;
    case SM_CLI_TRENDS:
        rc = sm_cli_cmd_trends(h, o);
        break;
    case SM_CLI_EXPLAIN:
        rc = sm_cli_cmd_explain(h, o);
        break;
    case SM_CLI_SCHEDULES:
        rc = sm_cli_cmd_schedules(h, o);
        break;
    case SM_CLI_SCHEDULE_ADD:
    case SM_CLI_SCHEDULE_PAUSE:
    case SM_CLI_SCHEDULE_RESUME:
    case SM_CLI_SCHEDULE_DELETE:
    case SM_CLI_SCHEDULE_ROTATE:
        rc = sm_cli_cmd_schedule(h, o);
        break;
    default:
        sm_cli_fail("internal: command %d is main's to handle", (int)o->cmd);
        rc = 1;
        break;
    }
    sm_http_close(h);
    return rc;
}
