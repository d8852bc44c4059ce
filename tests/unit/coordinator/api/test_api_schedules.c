/* Unit tests of recurring runs over a real SQLite store and a real control: the routes of
 * /api/schedules with every refusal (its status and the field it names), and the tick that fires
 * them (coordinator/recurring/schedules.c): runs linked to their schedule, the schedule's hosts, a
 * slot skipped while the previous run runs, missed slots fired once, paused and deleted schedules
 * silent, and the webhook body told to the notifier. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/unit/coordinator/api/api_fixture.h"
#include "coordinator/recurring/schedules.h"

#define SPEC                                                                                       \
    "{\"name\":\"tiny\",\"hosts\":\"all\",\"repetitions\":3,\"warmup\":0,\"tests\":["              \
    "{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":\"tcp\",\"msg_size\":1000,"        \
    "\"count\":100}]}"

static cJSON *call_json(fixture *f, const char *method, const char *path, const char *body,
                        int want)
{
    response r = call(f, method, path, NULL, NULL, body);
    if (r.status != want)
        fail_msg("%s %s: %d, want %d: %s", method, path, r.status, want, r.body);
    cJSON *j = cJSON_Parse(r.body);
    if (!j)
        fail_msg("%s %s: not JSON: %s", method, path, r.body);
    free(r.body);
    return j;
}

static const char *s_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v))
        fail_msg("%s: not a string", key);
    return v->valuestring;
}

static double n_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        fail_msg("%s: not a number", key);
    return v->valuedouble;
}

/* A first of the month on a weekday whose next one is more than 8 years and a month away: a
 * day that exists, but not within the 8 years cron searches. The cron is "0 0 STAR/31 M D" (the
 * step keeps the day-of-month field starred, so both day fields must match, as "1st and a
 * Sunday"). Such pairs come with the calendar's 11-year gaps; searched from today, so that the
 * test holds on any date. */
static bool far_first_of_month(int *month, int *wday)
{
    const time_t now = time(NULL);
    struct tm t;
    gmtime_r(&now, &t);
    for (int m = 0; m < 12; m++)
        for (int w = 0; w < 7; w++)
            for (int y = t.tm_year; y <= t.tm_year + 30; y++) {
                struct tm d = {.tm_year = y, .tm_mon = m, .tm_mday = 1};
                const time_t at = timegm(&d);
                if (at <= now || d.tm_wday != w)
                    continue;
                if (at - now > (time_t)((8 * 365 + 2 + 31) * 86400)) {
                    *month = m + 1;
                    *wday = w;
                    return true;
                }
                break; /* the next one is within the search */
            }
    return false;
}

/* A 400 (or status) naming field, the message holding has. */
static void refused(fixture *f, const char *method, const char *path, const char *body, int status,
                    const char *field, const char *has)
{
    cJSON *j = call_json(f, method, path, body, status);
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(j, "field");
    if (field && (!cJSON_IsString(fl) || strcmp(fl->valuestring, field) != 0))
        fail_msg("%s %s: field %s, want %s", path, body ? body : "",
                 cJSON_IsString(fl) ? fl->valuestring : "(none)", field);
    if (has && !strstr(s_of(j, "error"), has))
        fail_msg("%s: \"%s\" lacks \"%s\"", body ? body : path, s_of(j, "error"), has);
    cJSON_Delete(j);
}

static void test_schedules_post_refuses_each_bad_field_by_name(void **state)
{
    fixture *f = *state;
    const char *p = "/api/schedules";
    refused(f, "POST", p, "[1]", 400, NULL, "not a JSON object");
    refused(f, "POST", p, "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\",\"x\":1}",
            400, "x", "not a field of a schedule");
    refused(f, "POST", p, "{\"preset\":\"seed-tcp-unix\",\"every\":\"1m\"}", 400, "name", "name");
    refused(f, "POST", p, "{\"name\":\"\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\"}", 400,
            "name", "1 to 64 bytes");
    refused(f, "POST", p, "{\"name\":\"n\",\"every\":\"1m\"}", 400, "spec", "either");
    refused(f, "POST", p,
            "{\"name\":\"n\",\"spec\":" SPEC ",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\"}", 400,
            "spec", "either");
    refused(f, "POST", p, "{\"name\":\"n\",\"preset\":\"nope\",\"every\":\"1m\"}", 400, "preset",
            "the presets are");
    refused(f, "POST", p, "{\"name\":\"n\",\"spec\":[],\"every\":\"1m\"}", 400, "spec",
            "expected an object");
    refused(f, "POST", p, "{\"name\":\"n\",\"spec\":{\"name\":\"t\"},\"every\":\"1m\"}", 400,
            "spec.tests", NULL);
    refused(f, "POST", p, "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\"}", 400, "every", "either");
    refused(f, "POST", p,
            "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\",\"cron\":\"* * * * *\"}",
            400, "every", "either");
    refused(f, "POST", p, "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"every\":\"5s\"}", 400,
            "every", "minimum of 10 s");
    refused(f, "POST", p, "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"every\":5}", 400, "every",
            "minimum of 10 s");
    refused(f, "POST", p, "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"every\":true}", 400,
            "every", "not seconds");
    refused(f, "POST", p, "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"cron\":\"0 25 * * *\"}",
            400, "cron", "hour field");
    refused(f, "POST", p, "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"cron\":\"0 0 30 2 *\"}",
            400, "cron", "never fires");
    refused(f, "POST", p,
            "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\",\"hosts\":\"all\"}", 400,
            "hosts", "a list of 1 to");
    refused(f, "POST", p,
            "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\",\"hosts\":[\"h1\",3]}",
            400, "hosts", "hosts[1]");
    refused(
        f, "POST", p,
        "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\",\"webhook\":\"ftp://x\"}",
        400, "webhook", "only http:// and https://");
    refused(f, "POST", p,
            "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\",\"webhook\":7}", 400,
            "webhook", "empty");
    /* nothing was stored by any of them */
    cJSON *list = call_json(f, "GET", p, NULL, 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(list, "schedules")), 0);
    cJSON_Delete(list);
}

/* A day that exists but not within the 8 years cron searches from now was stored with next_ms
 * -1 and fired at once. (test_cron has the issue's own expression at the date.) About
 * one week in 17 has no first of a month that far away: then the premise is missing and the
 * test says so as a skip. */
static void test_schedules_a_cron_past_8_years_is_refused(void **state)
{
    fixture *f = *state;
    int month = 0, wday = 0;
    if (!far_first_of_month(&month, &wday))
        skip();
    char late[128];
    snprintf(late, sizeof late,
             "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"cron\":\"0 0 */31 %d %d\"}", month,
             wday);
    refused(f, "POST", "/api/schedules", late, 400, "cron", "never fires within 8 years");
}

static void test_schedules_unknown_ids_methods_and_the_token(void **state)
{
    fixture *f = *state;
    refused(f, "GET", "/api/schedules/9", NULL, 404, "id", "no such schedule");
    refused(f, "DELETE", "/api/schedules/9", NULL, 404, "id", "no such schedule");
    refused(f, "POST", "/api/schedules/9/pause", NULL, 404, "id", "no such schedule");
    refused(f, "POST", "/api/schedules/9/resume", NULL, 404, "id", "no such schedule");
    refused(f, "GET", "/api/schedules/x", NULL, 400, "id", "expected a number");
    refused(f, "GET", "/api/schedules/9/stop", NULL, 404, NULL, "no such endpoint");
    refused(f, "GET", "/api/schedules/9/pause", NULL, 405, NULL, "use POST");
    refused(f, "POST", "/api/schedules/9", NULL, 405, NULL, "use GET or DELETE");
    refused(f, "DELETE", "/api/schedules", NULL, 405, NULL, "use GET or POST");
    f->api.token = "s3cret";
    const char *body = "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\"}";
    expect(f, "POST", "/api/schedules", NULL, NULL, body, 401, "dashboard token");
    expect(f, "DELETE", "/api/schedules/1", NULL, "Bearer nope", NULL, 401, "dashboard token");
    expect(f, "POST", "/api/schedules/1/pause", NULL, NULL, NULL, 401, "dashboard token");
    expect(f, "POST", "/api/schedules", NULL, "Bearer s3cret", body, 201, "\"id\":\"1\"");
    expect(f, "POST", "/api/schedules/1/pause", NULL, "Bearer s3cret", NULL, 200,
           "\"paused\":true");
    /* reads need none on this (loopback) context */
    expect(f, "GET", "/api/schedules/1", NULL, NULL, NULL, 200, "\"name\":\"n\"");
    expect(f, "DELETE", "/api/schedules/1", NULL, "Bearer s3cret", NULL, 200, "\"deleted\":true");
}

/* A webhook URL may carry a secret of its receiver's: only an operate token sees it. */
static void test_schedules_webhook_is_shown_only_to_an_operate_token(void **state)
{
    fixture *f = *state;
    static const char *const reads[] = {"r3ad-token-one"};
    const char *body = "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\","
                       "\"webhook\":\"https://hooks.example.com/h?key=abc\"}";
    /* no token on this loopback coordinator: everyone operates, and sees it */
    expect(f, "POST", "/api/schedules", NULL, NULL, body, 201, "\"id\":\"1\"");
    expect(f, "GET", "/api/schedules", NULL, NULL, NULL, 200, "key=abc");
    f->api.token = "s3cret";
    f->api.read_tokens = reads;
    f->api.n_read_tokens = 1;
    const char *none[] = {NULL, "Bearer r3ad-token-one", "Bearer nope"};
    for (size_t i = 0; i < 3; i++) {
        expect(f, "GET", "/api/schedules", NULL, none[i], NULL, 200, "\"webhook\":\"(hidden)\"");
        expect(f, "GET", "/api/schedules/1", NULL, none[i], NULL, 200, "\"webhook\":\"(hidden)\"");
    }
    expect(f, "GET", "/api/schedules", NULL, "Bearer s3cret", NULL, 200, "key=abc");
    expect(f, "GET", "/api/schedules/1", NULL, "Bearer s3cret", NULL, 200, "key=abc");
    /* a schedule without a webhook says so to everyone */
    expect(f, "POST", "/api/schedules", NULL, "Bearer s3cret",
           "{\"name\":\"m\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\"}", 201, "\"id\":\"2\"");
    expect(f, "GET", "/api/schedules/2", NULL, "Bearer r3ad-token-one", NULL, 200,
           "\"webhook\":null");
}

static void test_schedules_are_made_listed_paused_resumed_and_deleted(void **state)
{
    fixture *f = *state;
    const int64_t before = wall_ms();
    cJSON *made = call_json(
        f, "POST", "/api/schedules",
        "{\"name\":\"every-15m\",\"preset\":\"seed-tcp-unix\",\"every\":\"15m\",\"hosts\":[\"h1\"],"
        "\"webhook\":\"http://203.0.113.9:9/hook\"}",
        201);
    assert_string_equal(s_of(made, "id"), "1");
    const double next = n_of(made, "next_ms");
    assert_true(next >= before + 900000 && next <= wall_ms() + 900000);
    cJSON_Delete(made);
    made = call_json(f, "POST", "/api/schedules",
                     "{\"name\":\"nightly\",\"spec\":" SPEC ",\"cron\":\"0 3 * * *\"}", 201);
    assert_string_equal(s_of(made, "id"), "2");
    /* 03:00 UTC: a whole day's minute 180 */
    assert_int_equal((int64_t)n_of(made, "next_ms") % 86400000, 3 * 3600000);
    cJSON_Delete(made);

    cJSON *list = call_json(f, "GET", "/api/schedules", NULL, 200);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(list, "schedules");
    assert_int_equal(cJSON_GetArraySize(arr), 2);
    const cJSON *a = cJSON_GetArrayItem(arr, 0), *b = cJSON_GetArrayItem(arr, 1);
    assert_string_equal(s_of(a, "name"), "every-15m");
    assert_int_equal(n_of(a, "every_s"), 900);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a, "cron")));
    assert_string_equal(s_of(a, "webhook"), "http://203.0.113.9:9/hook");
    assert_string_equal(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(a, "hosts"), 0)->valuestring, "h1");
    assert_string_equal(s_of(cJSON_GetObjectItemCaseSensitive(a, "spec"), "name"), "seed-tcp-unix");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "paused")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a, "last_run")));
    assert_int_equal(n_of(a, "runs"), 0);
    assert_string_equal(s_of(b, "cron"), "0 3 * * *");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(b, "hosts")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(b, "webhook")));
    cJSON_Delete(list);

    cJSON *p = call_json(f, "POST", "/api/schedules/1/pause", NULL, 200);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "paused")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(p, "recent_runs")), 0);
    cJSON_Delete(p);
    p = call_json(f, "POST", "/api/schedules/1/resume", NULL, 200);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "paused")));
    assert_true(n_of(p, "next_ms") >= next);
    cJSON_Delete(p);

    p = call_json(f, "DELETE", "/api/schedules/1", NULL, 200);
    assert_string_equal(s_of(p, "id"), "1");
    cJSON_Delete(p);
    refused(f, "GET", "/api/schedules/1", NULL, 404, "id", NULL);
    refused(f, "DELETE", "/api/schedules/1", NULL, 404, "id", NULL);
    list = call_json(f, "GET", "/api/schedules", NULL, 200);
    arr = cJSON_GetObjectItemCaseSensitive(list, "schedules");
    assert_int_equal(cJSON_GetArraySize(arr), 1);
    assert_string_equal(s_of(cJSON_GetArrayItem(arr, 0), "id"), "2");
    cJSON_Delete(list);
}

/* The next_ms of schedule id, as GET gives it. */
static int64_t next_of(fixture *f, const char *path)
{
    cJSON *s = call_json(f, "GET", path, NULL, 200);
    const int64_t next = (int64_t)n_of(s, "next_ms");
    cJSON_Delete(s);
    return next;
}

static void test_tick_fires_a_due_schedule_once_and_skips_while_its_run_runs(void **state)
{
    fixture *f = *state;
    register_agent(f, "h1");
    register_agent(f, "h2");
    cJSON *made =
        call_json(f, "POST", "/api/schedules",
                  "{\"name\":\"ten\",\"spec\":" SPEC ",\"every\":\"10s\",\"hosts\":[\"h2\"]}", 201);
    const int64_t next = (int64_t)n_of(made, "next_ms");
    cJSON_Delete(made);
    /* not yet due */
    sm_schedules_tick(&f->sched, next - 1);
    expect(f, "GET", "/api/runs", NULL, NULL, NULL, 200, "{\"runs\":[]}");
    /* due, long after: three slots were missed, one run starts */
    const int queued = f->queued_calls;
    sm_schedules_tick(&f->sched, next + 35000);
    assert_int_equal(f->queued_calls, queued + 1);
    cJSON *runs = call_json(f, "GET", "/api/runs", NULL, 200);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(runs, "runs");
    assert_int_equal(cJSON_GetArraySize(arr), 1);
    assert_string_equal(s_of(cJSON_GetArrayItem(arr, 0), "schedule"), "1");
    cJSON_Delete(runs);
    /* the schedule's hosts, not the spec's "all": h2's cells only */
    cJSON *run = call_json(f, "GET", "/api/runs/1", NULL, 200);
    const cJSON *cells = cJSON_GetObjectItemCaseSensitive(run, "cells");
    assert_int_equal(cJSON_GetArraySize(cells), 1);
    assert_string_equal(s_of(cJSON_GetArrayItem(cells, 0), "host"), "h2");
    assert_string_equal(s_of(run, "schedule"), "1");
    cJSON_Delete(run);
    /* the next slot keeps the phase and lies ahead: the missed ones are not made up */
    assert_int_equal(next_of(f, "/api/schedules/1"), next + 40000);
    sm_schedules_tick(&f->sched, next + 36000);
    runs = call_json(f, "GET", "/api/runs", NULL, 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(runs, "runs")), 1);
    cJSON_Delete(runs);

    /* its run still runs at the next slot: skipped, said in an event */
    sm_schedules_tick(&f->sched, next + 40000);
    cJSON *s = call_json(f, "GET", "/api/schedules/1", NULL, 200);
    assert_int_equal(n_of(s, "next_ms"), next + 50000);
    assert_int_equal(n_of(s, "runs"), 1);
    const cJSON *ev = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "events"), 0);
    assert_non_null(ev);
    assert_string_equal(s_of(ev, "kind"), "skipped");
    assert_string_equal(s_of(ev, "detail"), "slot skipped: run 1 is still running");
    assert_string_equal(s_of(cJSON_GetObjectItemCaseSensitive(s, "last_run"), "state"), "running");
    cJSON_Delete(s);

    /* once it ended, the next slot starts the next run */
    finish_jobs(f, "h2", 100.0);
    sm_schedules_tick(&f->sched, next + 50000);
    s = call_json(f, "GET", "/api/schedules/1", NULL, 200);
    assert_int_equal(n_of(s, "runs"), 2);
    const cJSON *recent = cJSON_GetObjectItemCaseSensitive(s, "recent_runs");
    assert_int_equal(cJSON_GetArraySize(recent), 2);
    assert_string_equal(s_of(cJSON_GetArrayItem(recent, 0), "id"), "2");
    assert_string_equal(s_of(cJSON_GetArrayItem(recent, 1), "state"), "done");
    cJSON_Delete(s);
    /* a run started by hand has no schedule */
    expect(f, "POST", "/api/runs", NULL, NULL, SPEC, 201, NULL);
    expect(f, "GET", "/api/runs/3", NULL, NULL, NULL, 200, "\"schedule\":null");
}

/* A schedule stored with next_ms -1 (no slot: what POST stored before it refused such crons)
 * is parked at the end of time, not fired as if long due. */
static void test_tick_never_fires_a_schedule_without_a_slot(void **state)
{
    fixture *f = *state;
    register_agent(f, "h1");
    expect(f, "POST", "/api/schedules", NULL, NULL,
           "{\"name\":\"old\",\"spec\":" SPEC ",\"cron\":\"0 3 * * *\"}", 201, NULL);
    sm_error err = {0};
    assert_int_equal(sm_store_schedule_set_next(f->st, 1, -1, &err), 0);
    const int queued = f->queued_calls;
    sm_schedules_tick(&f->sched, wall_ms());
    assert_int_equal(f->queued_calls, queued);
    expect(f, "GET", "/api/runs", NULL, NULL, NULL, 200, "{\"runs\":[]}");
    expect(f, "GET", "/api/schedules/1", NULL, NULL, NULL, 200, "\"next_ms\":null");
}

static void test_tick_leaves_paused_and_deleted_schedules_alone(void **state)
{
    fixture *f = *state;
    register_agent(f, "h1");
    expect(f, "POST", "/api/schedules", NULL, NULL,
           "{\"name\":\"p\",\"spec\":" SPEC ",\"every\":\"10s\"}", 201, NULL);
    expect(f, "POST", "/api/schedules", NULL, NULL,
           "{\"name\":\"d\",\"spec\":" SPEC ",\"every\":\"10s\"}", 201, NULL);
    expect(f, "POST", "/api/schedules/1/pause", NULL, NULL, NULL, 200, NULL);
    expect(f, "DELETE", "/api/schedules/2", NULL, NULL, NULL, 200, NULL);
    sm_schedules_tick(&f->sched, wall_ms() + 3600000);
    expect(f, "GET", "/api/runs", NULL, NULL, NULL, 200, "{\"runs\":[]}");
    /* resumed, it fires at its next slot from now */
    expect(f, "POST", "/api/schedules/1/resume", NULL, NULL, NULL, 200, NULL);
    const int64_t next = next_of(f, "/api/schedules/1");
    assert_true(next > wall_ms());
    sm_schedules_tick(&f->sched, next);
    expect(f, "GET", "/api/runs/1", NULL, NULL, NULL, 200, "\"schedule\":\"1\"");
}

static void test_tick_passes_a_slot_whose_run_cannot_start(void **state)
{
    fixture *f = *state;
    register_agent(f, "h1");
    cJSON *made = call_json(
        f, "POST", "/api/schedules",
        "{\"name\":\"gone\",\"spec\":" SPEC ",\"every\":\"10s\",\"hosts\":[\"nosuch\"]}", 201);
    const int64_t next = (int64_t)n_of(made, "next_ms");
    cJSON_Delete(made);
    sm_schedules_tick(&f->sched, next);
    cJSON *s = call_json(f, "GET", "/api/schedules/1", NULL, 200);
    assert_int_equal(n_of(s, "next_ms"), next + 10000);
    assert_int_equal(n_of(s, "runs"), 0);
    const cJSON *ev = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "events"), 0);
    assert_string_equal(s_of(ev, "kind"), "not-started");
    assert_non_null(strstr(s_of(ev, "detail"), "nosuch"));
    cJSON_Delete(s);
}

/* What the notifier was told. */
typedef struct told {
    int calls;
    char url[128], event[32];
    uint64_t schedule;
    uint32_t generation;
    char *body;
} told;

static uint64_t record(void *ctx, const sm_webhook_dest *to, const char *event, const char *body)
{
    told *t = ctx;
    t->calls++;
    snprintf(t->url, sizeof t->url, "%s", to->url);
    t->schedule = to->schedule;
    t->generation = to->generation;
    snprintf(t->event, sizeof t->event, "%s", event);
    free(t->body);
    t->body = strdup(body);
    return 41;
}

/* Fires schedule 1 at its slot and ends its run with h2 at mbps2 (others at 100). */
static void one_run(fixture *f, double mbps2)
{
    sm_schedules_tick(&f->sched, next_of(f, "/api/schedules/1"));
    finish_jobs(f, "h1", 100.0);
    finish_jobs(f, "h2", mbps2);
    finish_jobs(f, "h3", 100.0);
}

/* Agents h1, h2 and h3 and schedule 1, "watch": every 10 s, with a webhook. */
static void add_watch(fixture *f)
{
    register_agent(f, "h1");
    register_agent(f, "h2");
    register_agent(f, "h3");
    expect(f, "POST", "/api/schedules", NULL, NULL,
           "{\"name\":\"watch\",\"spec\":" SPEC ",\"every\":\"10s\","
           "\"webhook\":\"http://203.0.113.9:9/hook\"}",
           201, NULL);
}

static void test_webhook_tells_new_flags_and_regressions_once(void **state)
{
    fixture *f = *state;
    told t = {0};
    f->sched.notify = record;
    f->sched.notify_ctx = &t;
    add_watch(f);
    /* run 1: all alike, nothing to tell */
    one_run(f, 100.0);
    sm_schedules_tick(&f->sched, wall_ms());
    assert_int_equal(t.calls, 0);
    /* run 2: h2 falls behind the fleet and its own last run */
    one_run(f, 30.0);
    sm_schedules_tick(&f->sched, wall_ms());
    assert_int_equal(t.calls, 1);
    assert_string_equal(t.url, "http://203.0.113.9:9/hook");
    assert_int_equal(t.schedule, 1);
    assert_int_equal(t.generation, 1);
    assert_string_equal(t.event, "regression");
    cJSON *b = cJSON_Parse(t.body);
    assert_non_null(b);
    assert_string_equal(s_of(b, "event"), "regression");
    assert_string_equal(s_of(cJSON_GetObjectItemCaseSensitive(b, "schedule"), "id"), "1");
    assert_string_equal(s_of(cJSON_GetObjectItemCaseSensitive(b, "schedule"), "name"), "watch");
    assert_string_equal(s_of(cJSON_GetObjectItemCaseSensitive(b, "run"), "id"), "2");
    assert_string_equal(s_of(cJSON_GetObjectItemCaseSensitive(b, "run"), "name"), "tiny");
    assert_true(n_of(cJSON_GetObjectItemCaseSensitive(b, "run"), "finished_ms") > 0);
    assert_string_equal(s_of(b, "baseline_run"), "1");
    const cJSON *flags = cJSON_GetObjectItemCaseSensitive(b, "flags");
    assert_int_equal(cJSON_GetArraySize(flags), 1);
    assert_string_equal(s_of(cJSON_GetArrayItem(flags, 0), "host"), "h2");
    assert_non_null(strstr(s_of(cJSON_GetArrayItem(flags, 0), "text"), "h2: "));
    const cJSON *regs = cJSON_GetObjectItemCaseSensitive(b, "regressions");
    assert_int_equal(cJSON_GetArraySize(regs), 1);
    assert_string_equal(s_of(cJSON_GetArrayItem(regs, 0), "host"), "h2");
    assert_non_null(strstr(s_of(cJSON_GetArrayItem(regs, 0), "text"), "baseline"));
    cJSON_Delete(b);
    /* judged once: later ticks say nothing more */
    sm_schedules_tick(&f->sched, wall_ms());
    assert_int_equal(t.calls, 1);
    /* run 3: h2 as slow as in run 2: the flag is not new and nothing regressed */
    one_run(f, 30.0);
    sm_schedules_tick(&f->sched, wall_ms());
    assert_int_equal(t.calls, 1);
    cJSON *s = call_json(f, "GET", "/api/schedules/1", NULL, 200);
    const cJSON *ev = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "events"), 0);
    assert_string_equal(s_of(ev, "kind"), "notified");
    assert_string_equal(s_of(ev, "detail"), "run 2: regression sent as delivery 41");
    cJSON_Delete(s);
    free(t.body);
}

static void test_webhook_without_a_notifier_sends_nothing_and_judges_once(void **state)
{
    fixture *f = *state;
    add_watch(f);
    one_run(f, 30.0);
    sm_schedules_tick(&f->sched, wall_ms());
    cJSON *s = call_json(f, "GET", "/api/schedules/1", NULL, 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "events")), 0);
    cJSON_Delete(s);
}

/* An anomalies builder off the loop, as the coordinator's worker is: the first ask of each
 * (run, baseline) is only queued, the next one is answered (from the routes). */
typedef struct deferred {
    fixture *f;
    uint64_t asked[16][2];
    size_t n;
    int answered;
} deferred;

static int deferred_anomalies(void *ctx, uint64_t run, uint64_t baseline, int *status, char **json)
{
    deferred *d = ctx;
    for (size_t i = 0; i < d->n; i++) {
        if (d->asked[i][0] != run || d->asked[i][1] != baseline)
            continue;
        char path[64], query[40];
        snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/anomalies", run);
        snprintf(query, sizeof query, "baseline=%" PRIu64, baseline);
        response r = call(d->f, "GET", path, baseline ? query : NULL, NULL, NULL);
        *status = r.status;
        *json = r.status == 200 ? r.body : NULL;
        if (r.status != 200)
            free(r.body);
        d->answered++;
        return 1;
    }
    assert_true(d->n < 16);
    d->asked[d->n][0] = run;
    d->asked[d->n++][1] = baseline;
    return 0;
}

/* Runs of schedules waiting for their judgement. */
static size_t to_judge(fixture *f)
{
    uint64_t pairs[16][2];
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_store_schedules_to_notify(f->st, pairs, 16, &n, &err), 0);
    return n;
}

/* With the anomalies built off the loop, a judgement waits for them, a tick at a time, and is
 * made (and told) exactly once when they come. */
static void test_webhook_waits_for_anomalies_built_off_the_loop(void **state)
{
    fixture *f = *state;
    told t = {0};
    deferred d = {.f = f};
    f->sched.notify = record;
    f->sched.notify_ctx = &t;
    f->sched.anomalies = deferred_anomalies;
    f->sched.anomalies_ctx = &d;
    add_watch(f);
    one_run(f, 100.0);
    sm_schedules_tick(&f->sched, wall_ms());
    assert_int_equal(d.n, 1); /* run 1, no earlier run: its default baseline */
    assert_int_equal(to_judge(f), 1);
    sm_schedules_tick(&f->sched, wall_ms());
    assert_int_equal(to_judge(f), 0);
    assert_int_equal(t.calls, 0);
    one_run(f, 30.0);
    sm_schedules_tick(&f->sched, wall_ms());
    /* run 2 against run 1 asked (run 1's own came before): nothing told yet */
    assert_int_equal(d.n, 2);
    assert_int_equal(d.asked[1][0], 2);
    assert_int_equal(d.asked[1][1], 1);
    assert_int_equal(t.calls, 0);
    assert_int_equal(to_judge(f), 1);
    sm_schedules_tick(&f->sched, wall_ms());
    assert_int_equal(t.calls, 1);
    assert_string_equal(t.event, "regression");
    assert_int_equal(to_judge(f), 0);
    sm_schedules_tick(&f->sched, wall_ms());
    assert_int_equal(t.calls, 1);
    free(t.body);
}

static bool fake_status(void *ctx, uint64_t schedule, char *out, size_t cap, int64_t *at_ms)
{
    (void)ctx;
    if (schedule != 1)
        return false;
    snprintf(out, cap, "refused ping delivery 1: 10.0.0.1 is a private address");
    *at_ms = 1767225600000;
    return true;
}

/* GET /api/schedules/{id} shows how its webhook's last delivery ended, null when unknown. */
static void test_a_schedule_shows_its_last_webhook_status(void **state)
{
    fixture *f = *state;
    f->api.webhook_status = fake_status;
    cJSON_Delete(call_json(f, "POST", "/api/schedules",
                           "{\"name\":\"a\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\","
                           "\"webhook\":\"https://203.0.113.9/hook\"}",
                           201));
    cJSON_Delete(call_json(f, "POST", "/api/schedules",
                           "{\"name\":\"b\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\","
                           "\"webhook\":\"https://203.0.113.9/hook\"}",
                           201));
    cJSON *one = call_json(f, "GET", "/api/schedules/1", NULL, 200);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(one, "webhook_status");
    assert_string_equal(s_of(st, "text"), "refused ping delivery 1: 10.0.0.1 is a private address");
    assert_int_equal((int64_t)n_of(st, "at_ms"), 1767225600000);
    cJSON_Delete(one);
    cJSON *two = call_json(f, "GET", "/api/schedules/2", NULL, 200);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(two, "webhook_status")));
    cJSON_Delete(two);
}

/* The secret is answered once at creation and at each rotation, never by a read; a webhook to
 * an inner address is refused at once, naming the field and the option. */
static void test_webhook_secret_is_shown_once_and_rotated(void **state)
{
    fixture *f = *state;
    cJSON *made = call_json(f, "POST", "/api/schedules",
                            "{\"name\":\"hooked\",\"preset\":\"seed-tcp-unix\",\"every\":\"15m\","
                            "\"webhook\":\"https://203.0.113.9/hook\"}",
                            201);
    assert_int_equal(strlen(s_of(made, "webhook_secret")), 70);
    assert_memory_equal(s_of(made, "webhook_secret"), "whsec_", 6);
    cJSON_Delete(made);
    for (int i = 2; i <= 7; i++) { /* up to schedule 7, test_webhook_secret's vector */
        made = call_json(f, "POST", "/api/schedules",
                         "{\"name\":\"h\",\"preset\":\"seed-tcp-unix\",\"every\":\"15m\","
                         "\"webhook\":\"https://203.0.113.9/hook\"}",
                         201);
        if (i == 7)
            assert_string_equal(
                s_of(made, "webhook_secret"),
                "whsec_c3801f5946e39019c8d8277b72deacae4a09f044987881f6360cbea798c66a7c");
        cJSON_Delete(made);
    }
    response r = call(f, "GET", "/api/schedules/7", NULL, NULL, NULL);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "whsec_"));
    free(r.body);
    r = call(f, "GET", "/api/schedules", NULL, NULL, NULL);
    assert_null(strstr(r.body, "whsec_"));
    free(r.body);
    cJSON *rot = call_json(f, "POST", "/api/schedules/7/webhook-secret", NULL, 200);
    assert_string_equal(s_of(rot, "id"), "7");
    assert_string_equal(s_of(rot, "webhook_secret"),
                        "whsec_cc4dec27bb942a3a8871b8466a3d1c8858519d4aeadc34416c9cb79ab3509e59");
    cJSON_Delete(rot);
    /* the judge signs with the new generation */
    sm_schedule_row row;
    sm_error err = {0};
    assert_int_equal(sm_store_schedule_get(f->st, 7, &row, &err), 0);
    assert_int_equal(row.webhook_generation, 2);
    sm_schedule_row_fini(&row);
    refused(f, "POST", "/api/schedules/99/webhook-secret", NULL, 404, "id", NULL);
    made = call_json(f, "POST", "/api/schedules",
                     "{\"name\":\"quiet\",\"preset\":\"seed-tcp-unix\",\"every\":\"15m\"}", 201);
    assert_null(cJSON_GetObjectItemCaseSensitive(made, "webhook_secret"));
    cJSON_Delete(made);
    refused(f, "POST", "/api/schedules/8/webhook-secret", NULL, 400, "webhook", "no webhook");
    static const char *const inner[][2] = {
        {"http://127.0.0.1:9/hook", "--webhook-allow loopback allows it"},
        {"http://169.254.169.254/latest/meta-data/", "--webhook-allow link-local"},
        {"http://10.0.0.1/", "--webhook-allow private"},
        {"http://[::1]/", "loopback"},
        {"http://0.0.0.0/", "unspecified"},
    };
    for (size_t i = 0; i < sizeof inner / sizeof inner[0]; i++) {
        char body[256];
        snprintf(body, sizeof body,
                 "{\"name\":\"in\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\","
                 "\"webhook\":\"%s\"}",
                 inner[i][0]);
        refused(f, "POST", "/api/schedules", body, 400, "webhook", inner[i][1]);
    }
    r = call(f, "GET", "/api/schedules", NULL, NULL, NULL);
    assert_null(strstr(r.body, "\"in\""));
    free(r.body);
    /* allowed by the operator: taken */
    sm_addr_policy lo;
    sm_webhook_policy_init(&lo);
    assert_int_equal(sm_addr_policy_parse(&lo, "loopback", &err), 0);
    f->api.webhook_allow = &lo;
    cJSON_Delete(call_json(f, "POST", "/api/schedules",
                           "{\"name\":\"lo\",\"preset\":\"seed-tcp-unix\",\"every\":\"1m\","
                           "\"webhook\":\"http://127.0.0.1:9/hook\"}",
                           201));
    f->api.webhook_allow = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_schedules_post_refuses_each_bad_field_by_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_schedules_webhook_is_shown_only_to_an_operate_token,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_schedules_a_cron_past_8_years_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_schedules_unknown_ids_methods_and_the_token, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_schedules_are_made_listed_paused_resumed_and_deleted,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_tick_fires_a_due_schedule_once_and_skips_while_its_run_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tick_never_fires_a_schedule_without_a_slot, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tick_leaves_paused_and_deleted_schedules_alone, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tick_passes_a_slot_whose_run_cannot_start, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_webhook_secret_is_shown_once_and_rotated, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_schedule_shows_its_last_webhook_status, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_webhook_tells_new_flags_and_regressions_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_webhook_without_a_notifier_sends_nothing_and_judges_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_webhook_waits_for_anomalies_built_off_the_loop, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
