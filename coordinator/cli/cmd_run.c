/* sockmatrix run: start a run from a preset or a spec file; with --wait, follow it to its
 * comparison table and anomalies. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/progress.h"
#include "coordinator/cli/request.h"
#include "coordinator/cli/specfile.h"

#define POLL_MS 500
/* How long --wait rides out a coordinator it cannot reach (a restart) before it gives up. */
#define UNREACHABLE_MS 30000

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static bool run_ended(const char *state)
{
    return strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
           strcmp(state, "cancelled") == 0;
}

/* What one poll of the run found. */
enum { POLL_ON, POLL_ENDED, POLL_FAILED };

/* Reads one 2xx answer about the run: says how its jobs go the first time, shows the
 * progress, and tells whether the run ended (*out its state then). */
static int poll_answer(sm_http_resp *r, uint64_t id, sm_progress *p, bool *noted,
                       sm_apiview_run *out)
{
    sm_apiview_run run;
    sm_error err = {0};
    int rc = sm_apiview_run_decode(r->body, r->len, &run, NULL, NULL, &err);
    sm_http_resp_fini(r);
    if (rc) {
        sm_progress_end(p);
        sm_cli_bad_answer("GET /api/runs/ID", &err);
        return POLL_FAILED;
    }
    if (!*noted) {
        char prefix[40];
        snprintf(prefix, sizeof prefix, "run %" PRIu64 ": ", id);
        sm_cli_print_parallel(stderr, prefix, &run);
        *noted = true;
    }
    sm_progress_show(p, &run);
    if (!run_ended(run.state))
        return POLL_ON;
    sm_progress_end(p);
    *out = run;
    return POLL_ENDED;
}

int sm_cli_wait_run(sm_http *h, uint64_t id, uint32_t timeout_s, sm_apiview_run *out)
{
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64, id);
    sm_progress p = {.tty = isatty(STDERR_FILENO) == 1};
    const int64_t deadline = mono_ms() + (int64_t)timeout_s * 1000;
    int64_t unreachable_since = -1;
    bool noted = false; /* how its jobs go is said once, first */
    for (;;) {
        sm_http_resp r;
        sm_error err = {0};
        int rc = sm_http_get(h, path, &r, &err);
        int64_t now = mono_ms();
        if (rc == SM_ESYS && unreachable_since < 0)
            unreachable_since = now;
        if (rc && (rc != SM_ESYS || now - unreachable_since >= UNREACHABLE_MS || now >= deadline)) {
            sm_progress_end(&p);
            sm_cli_report(h, NULL, &err);
            return 1;
        }
        if (!rc && (r.status < 200 || r.status > 299)) {
            sm_progress_end(&p);
            sm_cli_report(h, &r, &err);
            sm_http_resp_fini(&r);
            return 1;
        }
        if (!rc) {
            unreachable_since = -1;
            int state = poll_answer(&r, id, &p, &noted, out);
            if (state != POLL_ON)
                return state == POLL_ENDED ? 0 : 1;
        }
        if (now >= deadline) {
            sm_progress_end(&p);
            sm_cli_fail("gave up waiting for run %" PRIu64 " after %" PRIu32 " s; it goes on "
                        "(sockmatrix show %" PRIu64 ", sockmatrix cancel %" PRIu64 ")",
                        id, timeout_s, id, id);
            return 1;
        }
        sleep_ms(deadline - now < POLL_MS ? deadline - now : POLL_MS);
    }
}

/* After --wait: the run's table, then its flags as lines whatever the table's format (the
 * table says them in its flags column, the lines give the evidence); on stderr for csv and
 * json, so that stdout stays one document. Then the exit status the run's end gives. */
static int print_outcome(sm_http *h, const sm_cli_opts *o, uint64_t id, const sm_apiview_run *run)
{
    sm_http_resp r;
    /* The table of a failed or cancelled run still holds what was measured: print it too. */
    if (sm_cli_get_table(h, id, o->format, o->include_disturbed, &r))
        return 1;
    int rc = sm_cli_print_body(r.body, r.len);
    sm_http_resp_fini(&r);
    if (rc)
        return 1;
    if (sm_cli_get_anomalies(h, id, 0, o->floor, o->include_disturbed, SM_CLI_FMT_TABLE, &r))
        return 1;
    bool doc = o->format == SM_CLI_FMT_CSV || o->format == SM_CLI_FMT_JSON;
    if (doc)
        fwrite(r.body, 1, r.len, stderr);
    else
        rc = fputc('\n', stdout) == EOF || sm_cli_print_body(r.body, r.len);
    sm_http_resp_fini(&r);
    if (rc)
        return 1;
    if (strcmp(run->state, "done") == 0)
        return 0;
    if (run->reason[0])
        sm_cli_fail("run %" PRIu64 " %s: %s", id, run->state, run->reason);
    else
        sm_cli_fail("run %" PRIu64 " %s (%" PRIu32 " of %" PRIu32 " jobs failed)", id, run->state,
                    run->failed, run->total);
    return 1;
}

int sm_cli_cmd_run(sm_http *h, const sm_cli_opts *o)
{
    char *body = NULL;
    size_t len = 0;
    sm_error err = {0};
    int rc = o->spec_file ? sm_cli_spec_load(o->spec_file, &body, &len, &err)
             : o->reps_auto
                 ? sm_apiview_preset_request_adaptive(o->preset, o->hosts, &o->reps, &body, &err)
                 : sm_apiview_preset_request(o->preset, o->hosts, o->repetitions, &body, &err);
    if (rc) {
        sm_cli_fail("%s", err.msg);
        return 1;
    }
    if (!o->spec_file)
        len = strlen(body);
    sm_http_resp r;
    rc = sm_cli_call(h, "/api/runs", body, len, &r);
    free(body);
    if (rc)
        return 1;
    uint64_t id;
    rc = sm_apiview_run_id_decode(r.body, r.len, &id, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("POST /api/runs", &err);
    fprintf(stderr, "run %" PRIu64 " started\n", id);
    if (!o->wait) {
        printf("%" PRIu64 "\n", id);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    sm_apiview_run run;
    if (sm_cli_wait_run(h, id, o->timeout_s, &run))
        return 1;
    return print_outcome(h, o, id, &run);
}
