/* sockmatrix schedules, and schedule add, pause, resume, delete and rotate-secret: the recurring
 * runs. */
#include "coordinator/cli/cmd.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"
#include "coordinator/cli/specfile.h"
#include "coordinator/model/cron.h"
#include "coordinator/schema/webhook_url.h"

/* ---- the command line ---- */

/* The model's message ("every: ...") as the option's ("--every: ..."). */
static int as_option(sm_error *err)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return sm_error_set(err, SM_EINVAL, "--%s", msg);
}

int sm_cli_schedule_option(sm_cli_opts *o, int k, const char *v, sm_error *err)
{
    uint32_t secs;
    sm_cron c;
    switch (k) {
    case 0:
        if (strlen(v) > 64)
            return sm_error_set(err, SM_EINVAL, "--name: longer than 64 bytes");
        o->sched_name = v;
        return 0;
    case 1:
        if (sm_every_parse(v, &secs, err))
            return as_option(err);
        o->every = v;
        return 0;
    case 2:
        if (sm_cron_parse(v, &c, err))
            return as_option(err);
        o->cron = v;
        return 0;
    default:
        if (sm_webhook_url_check(v, err))
            return as_option(err);
        o->webhook = v;
        return 0;
    }
}

int sm_cli_schedule_positional(sm_cli_opts *o, const char **sub, const char *arg, sm_error *err)
{
    if (!*sub) {
        static const struct {
            const char *word;
            sm_cli_cmd cmd;
        } subs[] = {{"add", SM_CLI_SCHEDULE_ADD},
                    {"pause", SM_CLI_SCHEDULE_PAUSE},
                    {"resume", SM_CLI_SCHEDULE_RESUME},
                    {"delete", SM_CLI_SCHEDULE_DELETE},
                    {"rotate-secret", SM_CLI_SCHEDULE_ROTATE}};
        for (size_t i = 0; i < sizeof subs / sizeof *subs; i++)
            if (strcmp(arg, subs[i].word) == 0) {
                *sub = subs[i].word;
                o->cmd = subs[i].cmd;
                return 0;
            }
        return sm_error_set(
            err, SM_EINVAL,
            "schedule: '%s' is not add, pause, resume, delete or rotate-secret (see "
            "--help)",
            arg);
    }
    if (o->cmd == SM_CLI_SCHEDULE_ADD || o->schedule_id)
        return sm_error_set(err, SM_EINVAL, "schedule %s: unexpected argument '%s' (see --help)",
                            *sub, arg);
    char *end;
    unsigned long long id = arg[0] >= '0' && arg[0] <= '9' ? strtoull(arg, &end, 10) : 0;
    if (!id || *end)
        return sm_error_set(err, SM_EINVAL,
                            "schedule %s: '%s' is not a schedule id (a number; sockmatrix "
                            "schedules lists them)",
                            *sub, arg);
    o->schedule_id = id;
    return 0;
}

int sm_cli_schedule_check(const sm_cli_opts *o, const char *sub, sm_error *err)
{
    if (!sub)
        return sm_error_set(err, SM_EINVAL,
                            "schedule: add, pause, resume, delete or rotate-secret? (sockmatrix "
                            "schedule add "
                            "--name N ..., sockmatrix schedule pause ID)");
    const bool add = o->cmd == SM_CLI_SCHEDULE_ADD;
    const bool add_opts =
        o->sched_name || o->every || o->cron || o->webhook || o->preset || o->spec_file || o->hosts;
    if (!add && add_opts)
        return sm_error_set(err, SM_EINVAL,
                            "schedule %s: takes an id only (the options go with schedule add)",
                            sub);
    if (!add && !o->schedule_id)
        return sm_error_set(err, SM_EINVAL,
                            "schedule %s: which schedule? (sockmatrix schedule %s ID; sockmatrix "
                            "schedules lists them)",
                            sub, sub);
    if (!add)
        return 0;
    if (!o->sched_name)
        return sm_error_set(err, SM_EINVAL, "schedule add: give it a --name");
    if (!o->preset == !o->spec_file)
        return sm_error_set(err, SM_EINVAL, "schedule add: give --preset NAME or --spec FILE");
    if (!o->every == !o->cron)
        return sm_error_set(
            err, SM_EINVAL,
            "schedule add: give --every D (\"15m\") or --cron EXPR (\"0 3 * * *\")");
    return 0;
}

/* ---- the commands ---- */

static void utc(double ms, char *out, size_t cap)
{
    struct tm tm;
    const time_t t = (time_t)(ms / 1000);
    if (ms <= 0 || !gmtime_r(&t, &tm) || !strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, cap, "-");
}

/* "every 15m" / "every 90 s" / "cron 0 3 * * *" */
static void when_of(const sm_apiview_schedule *s, char *out, size_t cap)
{
    const char *cron = s->cron;
    if (!isnan(s->every_s)) {
        const double v = s->every_s;
        if ((long long)v % 86400 == 0)
            snprintf(out, cap, "every %lldd", (long long)v / 86400);
        else if ((long long)v % 3600 == 0)
            snprintf(out, cap, "every %lldh", (long long)v / 3600);
        else if ((long long)v % 60 == 0)
            snprintf(out, cap, "every %lldm", (long long)v / 60);
        else
            snprintf(out, cap, "every %llds", (long long)v);
    } else {
        snprintf(out, cap, "cron %s", cron ? cron : "?");
    }
}

int sm_cli_cmd_schedules(sm_http *h, const sm_cli_opts *o)
{
    sm_http_resp r;
    if (sm_cli_call(h, "/api/schedules", NULL, 0, &r))
        return 1;
    if (o->format == SM_CLI_FMT_JSON)
        return sm_cli_print_answer(&r);
    sm_apiview_schedules list;
    sm_error err = {0};
    const int bad = sm_apiview_schedules_decode(r.body, r.len, &list, &err);
    sm_http_resp_fini(&r);
    if (bad)
        return sm_cli_bad_answer("GET /api/schedules", &err);
    if (list.n == 0 && o->format == SM_CLI_FMT_TABLE) {
        sm_apiview_schedules_fini(&list);
        sm_cli_fail("no schedules yet (make one: sockmatrix schedule add --name N --preset P "
                    "--every 1h)");
        return 0;
    }
    sm_grid g = {7, 0, "rlllrlr", NULL, o->format};
    static const char *const head[] = {"ID",     "NAME",     "WHEN", "NEXT (UTC)",
                                       "PAUSED", "LAST RUN", "RUNS"};
    int rc = sm_grid_row(&g, head);
    for (size_t i = 0; i < list.n && !rc; i++) {
        const sm_apiview_schedule *s = &list.v[i];
        char when[160], next[32], last[64], runs[24];
        when_of(s, when, sizeof when);
        if (!isnan(s->next_ms))
            utc(s->next_ms, next, sizeof next);
        else
            snprintf(next, sizeof next, "never");
        if (s->has_last_run)
            snprintf(last, sizeof last, "%s (%s)", s->last_run_id ? s->last_run_id : "?",
                     s->last_run_state ? s->last_run_state : "?");
        else
            snprintf(last, sizeof last, "-");
        snprintf(runs, sizeof runs, "%.0f", s->runs);
        const char *row[] = {s->id, s->name, when, next, s->paused ? "yes" : "no", last, runs};
        rc = sm_grid_row(&g, row);
    }
    sm_apiview_schedules_fini(&list);
    return sm_grid_done(&g, rc);
}

/* The body of POST /api/schedules from the command line; NULL with the failure reported. */
static char *add_body(const sm_cli_opts *o)
{
    sm_apiview_schedule_req req = {.name = o->sched_name,
                                   .preset = o->preset,
                                   .every = o->every,
                                   .cron = o->cron,
                                   .hosts = o->hosts,
                                   .webhook = o->webhook};
    char *spec = NULL;
    sm_error err = {0};
    if (o->spec_file && sm_cli_spec_load(o->spec_file, &spec, &req.spec_len, &err) != 0) {
        sm_cli_fail("%s", err.msg);
        return NULL;
    }
    req.spec = spec;
    char *body = NULL;
    if (sm_apiview_schedule_request(&req, &body, &err) != 0)
        sm_cli_fail("out of memory");
    free(spec);
    return body;
}

/* A 404 about a schedule's id says which and where they are listed. */
static int refused(sm_http *h, const sm_cli_opts *o, const sm_http_resp *r)
{
    sm_error err = {0};
    if (r->status == 404 && r->body && strstr(r->body, "\"field\":\"id\""))
        sm_cli_fail("no schedule %" PRIu64 " (sockmatrix schedules lists them)", o->schedule_id);
    else
        sm_cli_report(h, r, &err);
    return 1;
}

/* The webhook secret an answer carries, said once: the coordinator keeps no copy to show. */
static void print_secret(const sm_apiview_schedule_made *m)
{
    const char *secret = m->webhook_secret;
    if (secret)
        printf("webhook secret: %s\n"
               "  give it to the receiver to check X-Sockmatrix-Signature (docs/webhooks.md);\n"
               "  it is not shown again (sockmatrix schedule rotate-secret ID makes a new one)\n",
               secret);
}

/* schedule rotate-secret ID */
static int rotate(sm_http *h, const sm_cli_opts *o)
{
    char path[96];
    snprintf(path, sizeof path, "/api/schedules/%" PRIu64 "/webhook-secret", o->schedule_id);
    sm_http_resp r;
    sm_error err = {0};
    if (sm_http_post(h, path, "{}", 2, &r, &err)) {
        sm_cli_report(h, NULL, &err);
        return 1;
    }
    if (r.status != 200) {
        refused(h, o, &r);
        sm_http_resp_fini(&r);
        return 1;
    }
    sm_apiview_schedule_made made;
    sm_apiview_schedule_made_decode(r.body, r.len, &made);
    printf("schedule %" PRIu64 ": a new webhook secret; the old one signs no more\n",
           o->schedule_id);
    print_secret(&made);
    sm_apiview_schedule_made_fini(&made);
    sm_http_resp_fini(&r);
    return 0;
}

int sm_cli_cmd_schedule(sm_http *h, const sm_cli_opts *o)
{
    if (o->cmd == SM_CLI_SCHEDULE_ROTATE)
        return rotate(h, o);
    if (o->cmd == SM_CLI_SCHEDULE_ADD) {
        char *body = add_body(o);
        if (!body)
            return 1;
        sm_http_resp r;
        const int rc = sm_cli_call(h, "/api/schedules", body, strlen(body), &r);
        free(body);
        if (rc)
            return 1;
        sm_apiview_schedule_made made;
        sm_apiview_schedule_made_decode(r.body, r.len, &made);
        char when[32];
        utc(made.next_ms, when, sizeof when);
        printf("schedule %s: first run at %s\n", made.id ? made.id : "?", when);
        print_secret(&made);
        sm_apiview_schedule_made_fini(&made);
        sm_http_resp_fini(&r);
        return 0;
    }
    char path[80];
    const char *verb = o->cmd == SM_CLI_SCHEDULE_PAUSE    ? "pause"
                       : o->cmd == SM_CLI_SCHEDULE_RESUME ? "resume"
                                                          : NULL;
    if (verb)
        snprintf(path, sizeof path, "/api/schedules/%" PRIu64 "/%s", o->schedule_id, verb);
    else
        snprintf(path, sizeof path, "/api/schedules/%" PRIu64, o->schedule_id);
    sm_http_resp r;
    sm_error err = {0};
    const int rc =
        verb ? sm_http_post(h, path, "{}", 2, &r, &err) : sm_http_delete(h, path, &r, &err);
    if (rc) {
        sm_cli_report(h, NULL, &err);
        return 1;
    }
    if (r.status < 200 || r.status > 299) {
        refused(h, o, &r);
        sm_http_resp_fini(&r);
        return 1;
    }
    sm_http_resp_fini(&r);
    printf("schedule %" PRIu64 ": %s\n", o->schedule_id,
           verb ? (o->cmd == SM_CLI_SCHEDULE_PAUSE ? "paused" : "resumed") : "deleted");
    return 0;
}
