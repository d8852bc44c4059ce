/* Unit tests of coordinator/api/routes: the one route table (each route's methods, body cap and
 * scope), its lookup's 404 and 405, the dispatcher's parsing of path parameters, and the one
 * token check for each scope, listener and token. None of these reaches a handler, so the API
 * context is a zeroed one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coordinator/api/api.h"
#include "coordinator/api/routes.h"

#define SPEC  (256u << 10)
#define SMALL (4u << 10)

typedef struct want {
    const char *path; /* a path of the route */
    const char *method;
    const char *allow; /* every method the path answers */
    size_t body_max;
    sm_route_scope scope;
} want;

/* Every route of the table, once. */
static const want every[] = {
    {"/healthz", "GET", "GET", 0, SM_ROUTE_READ},
    {"/metrics", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/agents", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/agents/h1/fingerprint", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/agents/h1/jobs", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/fingerprints/diff", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/presets", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/jobs", "POST", "POST", SPEC, SM_ROUTE_WRITE},
    {"/api/jobs/7", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/runs", "GET", "GET, POST", 0, SM_ROUTE_READ},
    {"/api/runs", "POST", "GET, POST", SPEC, SM_ROUTE_WRITE},
    {"/api/runs/7", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/runs/7/table", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/runs/7/anomalies", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/runs/7/jobs", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/runs/7/cells/3", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/runs/7/cancel", "POST", "POST", SMALL, SM_ROUTE_WRITE},
    {"/api/runs/7/again", "POST", "POST", SMALL, SM_ROUTE_WRITE},
    {"/api/runs/7/experiments", "POST", "POST", SMALL, SM_ROUTE_WRITE},
    {"/api/runs/7/experiment", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/compare", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/trends", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/grid", "GET", "GET", 0, SM_ROUTE_READ},
    {"/api/schedules", "GET", "GET, POST", 0, SM_ROUTE_READ},
    {"/api/schedules", "POST", "GET, POST", SPEC, SM_ROUTE_WRITE},
    {"/api/schedules/3", "GET", "GET, DELETE", 0, SM_ROUTE_READ},
    {"/api/schedules/3", "DELETE", "GET, DELETE", 0, SM_ROUTE_WRITE},
    {"/api/schedules/3/pause", "POST", "POST", SMALL, SM_ROUTE_WRITE},
    {"/api/schedules/3/resume", "POST", "POST", SMALL, SM_ROUTE_WRITE},
    {"/api/schedules/3/webhook-secret", "POST", "POST", SMALL, SM_ROUTE_WRITE},
};
#define N_EVERY (sizeof every / sizeof every[0])

static void test_routes_each_route_has_its_methods_cap_and_scope(void **state)
{
    (void)state;
    assert_int_equal(sm_routes_n, N_EVERY);
    bool seen[N_EVERY] = {false};
    for (size_t i = 0; i < N_EVERY; i++) {
        const want *w = &every[i];
        const sm_route *r = NULL;
        char allow[SM_ROUTE_ALLOW_MAX];
        for (int web = 0; web < 2; web++) {
            assert_int_equal(sm_routes_find(w->path, w->method, web, &r, allow, sizeof allow), 0);
            assert_non_null(r);
            assert_string_equal(r->method, w->method);
            assert_string_equal(allow, w->allow);
            assert_int_equal(r->body_max, w->body_max);
            assert_int_equal(r->scope, w->scope);
            assert_non_null(r->handler);
        }
        const size_t k = (size_t)(r - sm_routes);
        assert_true(k < sm_routes_n);
        assert_false(seen[k]); /* each example names another route */
        seen[k] = true;
    }
}

static void test_routes_another_method_on_a_known_path_is_405_with_its_allow(void **state)
{
    (void)state;
    static const char *const others[] = {"PUT",  "PATCH", "OPTIONS", "HEAD", "DELETE",
                                         "POST", "GET",   "CONNECT", "",     "get"};
    for (size_t i = 0; i < N_EVERY; i++) {
        for (size_t m = 0; m < sizeof others / sizeof others[0]; m++) {
            if (strstr(every[i].allow, others[m]) && others[m][0])
                continue;
            const sm_route *r = NULL;
            char allow[SM_ROUTE_ALLOW_MAX];
            assert_int_equal(
                sm_routes_find(every[i].path, others[m], true, &r, allow, sizeof allow), 405);
            assert_null(r);
            assert_string_equal(allow, every[i].allow);
        }
    }
    /* the dispatcher says it in words, listing the same methods */
    static const struct {
        const char *method, *path, *msg;
    } said[] = {
        {"POST", "/healthz", "use GET"},
        {"PUT", "/api/runs", "use GET or POST"},
        {"POST", "/api/schedules/9", "use GET or DELETE"},
        {"GET", "/api/runs/1/cancel", "use POST"},
        {"DELETE", "/api/jobs", "use POST"},
        {"POST", "/api/agents/h1/fingerprint", "use GET"},
    };
    sm_api_ctx a = {0};
    for (size_t i = 0; i < sizeof said / sizeof said[0]; i++) {
        char *resp = NULL, want_body[96];
        size_t len = 0;
        const char *ctype = NULL;
        assert_int_equal(
            sm_api_handle(&a, said[i].method, said[i].path, NULL, NULL, "", 0, &resp, &len, &ctype),
            405);
        snprintf(want_body, sizeof want_body, "{\"error\":\"%s\"}", said[i].msg);
        assert_string_equal(resp, want_body);
        assert_string_equal(ctype, "application/json");
        free(resp);
    }
    /* a dashboard file is a GET */
    const sm_route *r = NULL;
    char allow[SM_ROUTE_ALLOW_MAX];
    assert_int_equal(sm_routes_find("/index.html", "PUT", true, &r, allow, sizeof allow), 405);
    assert_string_equal(allow, "GET");
}

static void test_routes_unknown_paths_are_404_and_files_only_with_the_web_dir(void **state)
{
    (void)state;
    static const char *const unknown[] = {
        "/api/runs/7/nope",
        "/api/nope",
        "/api",
        "/api/",
        "/api/runs/7/cells/",
        "/api/runs/7/cells/3/x",
        "/api/agents/h1",
        "/api/agents/h1/fingerprint/x",
        "/api/agents/h1/fingerprints",
        "/api/fingerprints",
        "/api/schedules/3/stop",
        "/api/runs/7/table/x",
        "/api/jobs/7/x",
        "/api/runsx",
        "/healthzx",
    };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        for (int web = 0; web < 2; web++) {
            const sm_route *r = NULL;
            char allow[SM_ROUTE_ALLOW_MAX] = "x";
            const int got = sm_routes_find(unknown[i], "GET", web, &r, allow, sizeof allow);
            /* outside /api/ a dashboard serves it as a file */
            const bool file = web && strncmp(unknown[i], "/api", 4) != 0;
            assert_int_equal(got, file ? 0 : 404);
            assert_string_equal(allow, file ? "GET" : "");
        }
    }
    const sm_route *r = NULL;
    char allow[SM_ROUTE_ALLOW_MAX];
    assert_int_equal(sm_routes_find("/index.html", "GET", false, &r, allow, sizeof allow), 404);
    assert_int_equal(sm_routes_find("/index.html", "GET", true, &r, allow, sizeof allow), 0);
    assert_int_equal(r->scope, SM_ROUTE_PUBLIC);
    assert_int_equal(r->body_max, 0);
    assert_null(r->handler);
    assert_int_equal(sm_routes_find("/", "GET", true, &r, allow, sizeof allow), 0);
    assert_int_equal(r->scope, SM_ROUTE_PUBLIC);
    /* the dispatcher has no files */
    sm_api_ctx a = {0};
    char *resp = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    assert_int_equal(sm_api_handle(&a, "GET", "/", NULL, NULL, "", 0, &resp, &len, &ctype), 404);
    assert_string_equal(resp, "{\"error\":\"no such endpoint\"}");
    free(resp);
}

/* sm_api_handle on a zeroed context: the answer's status and exact body. */
static void dispatch(sm_api_ctx *a, const char *method, const char *path, const char *auth,
                     int status, const char *body)
{
    char *resp = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    assert_int_equal(sm_api_handle(a, method, path, NULL, auth, "", 0, &resp, &len, &ctype),
                     status);
    assert_non_null(resp);
    assert_string_equal(resp, body);
    assert_int_equal(len, strlen(body));
    free(resp);
}

static void test_routes_path_parameters_that_do_not_parse_are_400_naming_the_field(void **state)
{
    (void)state;
    sm_api_ctx a = {0};
    static const char run_id[] = "{\"error\":\"run id: expected a number\",\"field\":\"id\"}";
    static const char job_id[] = "{\"error\":\"job id: expected a number\",\"field\":\"id\"}";
    static const char sched_id[] =
        "{\"error\":\"schedule id: expected a number\",\"field\":\"id\"}";
    dispatch(&a, "GET", "/api/runs/x", NULL, 400, run_id);
    dispatch(&a, "GET", "/api/runs/", NULL, 400, run_id);
    dispatch(&a, "GET", "/api/runs/-1", NULL, 400, run_id);
    dispatch(&a, "GET", "/api/runs/1x/table", NULL, 400, run_id);
    dispatch(&a, "GET", "/api/runs/x/anomalies", NULL, 400, run_id);
    dispatch(&a, "GET", "/api/runs/x/jobs", NULL, 400, run_id);
    dispatch(&a, "GET", "/api/runs/x/cells/1", NULL, 400, run_id);
    dispatch(&a, "POST", "/api/runs/x/cancel", NULL, 400, run_id);
    dispatch(&a, "GET", "/api/runs/1/cells/x", NULL, 400,
             "{\"error\":\"cell: expected a number\",\"field\":\"cell\"}");
    dispatch(&a, "GET", "/api/runs/1/cells/4294967296", NULL, 400,
             "{\"error\":\"cell: expected a number\",\"field\":\"cell\"}");
    dispatch(&a, "GET", "/api/jobs/abc", NULL, 400, job_id);
    dispatch(&a, "GET", "/api/jobs/", NULL, 400, job_id);
    dispatch(&a, "GET", "/api/schedules/x", NULL, 400, sched_id);
    dispatch(&a, "DELETE", "/api/schedules/x", NULL, 400, sched_id);
    dispatch(&a, "POST", "/api/schedules/x/pause", NULL, 400, sched_id);
    dispatch(&a, "POST", "/api/schedules/x/resume", NULL, 400, sched_id);
    char path[160];
    snprintf(path, sizeof path, "/api/agents/%066d/fingerprint", 0);
    dispatch(&a, "GET", path, NULL, 400,
             "{\"error\":\"agent name: longer than 64 characters\",\"field\":\"name\"}");
    snprintf(path, sizeof path, "/api/agents/%066d/jobs", 0);
    dispatch(&a, "GET", path, NULL, 400,
             "{\"error\":\"agent name: longer than 64 characters\",\"field\":\"name\"}");
}

static void test_routes_dispatcher_asks_the_token_each_scope_needs(void **state)
{
    (void)state;
    static const char need[] = "{\"error\":\"this call needs the dashboard token "
                               "(Authorization: Bearer ...)\",\"field\":\"Authorization\"}";
    static const char run_id[] = "{\"error\":\"run id: expected a number\",\"field\":\"id\"}";
    sm_api_ctx a = {.token = "s3cret"};
    /* loopback (a zeroed context): writes need the token, reads do not; the token comes before
     * the parameters, so a bad id says nothing to a caller without it */
    dispatch(&a, "POST", "/api/runs/x/cancel", NULL, 401, need);
    dispatch(&a, "POST", "/api/runs/x/cancel", "Bearer s3cre", 401, need);
    dispatch(&a, "DELETE", "/api/schedules/x", "s3cret", 401, need);
    dispatch(&a, "POST", "/api/schedules/x/pause", NULL, 401, need);
    dispatch(&a, "POST", "/api/runs/x/cancel", "Bearer s3cret", 400, run_id);
    dispatch(&a, "GET", "/api/runs/x", NULL, 400, run_id);
    /* off loopback: reads too */
    a.off_loopback = true;
    dispatch(&a, "GET", "/api/runs/x", NULL, 401, need);
    dispatch(&a, "GET", "/api/runs/x", "Bearer nope", 401, need);
    dispatch(&a, "GET", "/api/runs/x", "Bearer s3cret", 400, run_id);
    /* no token: nothing needs one */
    a.token = NULL;
    dispatch(&a, "POST", "/api/runs/x/cancel", NULL, 400, run_id);
    dispatch(&a, "GET", "/api/runs/x", NULL, 400, run_id);
}

static void test_routes_access_answers_for_each_scope_listener_and_token(void **state)
{
    (void)state;
    static const char *const reads[] = {"r3ad-token-one", "r3ad-token-two"};
    const sm_tokens none = {0}, only = {.operate = "s3cret"},
                    both = {.operate = "s3cret", .read = reads, .n_read = 2};
    static const char *const auths[] = {NULL,
                                        "Bearer s3cret",
                                        "Bearer nope",
                                        "s3cret",
                                        "Bearer s3cretX",
                                        "",
                                        "Bearer r3ad-token-one",
                                        "Bearer r3ad-token-two",
                                        "Bearer r3ad-token-on",
                                        "r3ad-token-one"};
    for (int scope = SM_ROUTE_PUBLIC; scope <= SM_ROUTE_WRITE; scope++) {
        for (int loopback = 0; loopback < 2; loopback++) {
            for (size_t i = 0; i < sizeof auths / sizeof auths[0]; i++) {
                const bool operate = i == 1, read = i == 6 || i == 7;
                /* no token on the coordinator: everything is open */
                assert_int_equal(sm_api_access(&none, scope, loopback, auths[i]), 0);
                const bool open = scope == SM_ROUTE_PUBLIC || (scope == SM_ROUTE_READ && loopback);
                assert_int_equal(sm_api_access(&only, scope, loopback, auths[i]),
                                 open || operate ? 0 : 401);
                /* a read token reads anywhere, and is a 403 (not a 401) on a write */
                int expected = open || operate ? 0 : 401;
                if (read)
                    expected = scope == SM_ROUTE_WRITE ? 403 : 0;
                assert_int_equal(sm_api_access(&both, scope, loopback, auths[i]), expected);
            }
        }
    }
    assert_int_equal(sm_api_caller(&none, NULL), SM_CALLER_OPERATE);
    assert_int_equal(sm_api_caller(&both, NULL), SM_CALLER_NONE);
    assert_int_equal(sm_api_caller(&both, "Bearer nope"), SM_CALLER_NONE);
    assert_int_equal(sm_api_caller(&both, "Bearer r3ad-token-two"), SM_CALLER_READ);
    assert_int_equal(sm_api_caller(&both, "Bearer s3cret"), SM_CALLER_OPERATE);
}

static void test_routes_dispatcher_answers_403_to_a_read_token_on_a_write(void **state)
{
    (void)state;
    static const char *const reads[] = {"r3ad-token-one"};
    static const char ro[] = "{\"error\":\"this call needs an operate token; the token given "
                             "is read-only\",\"field\":\"Authorization\"}";
    static const char run_id[] = "{\"error\":\"run id: expected a number\",\"field\":\"id\"}";
    sm_api_ctx a = {.token = "s3cret", .read_tokens = reads, .n_read_tokens = 1};
    a.off_loopback = true;
    dispatch(&a, "GET", "/api/runs/x", "Bearer r3ad-token-one", 400, run_id);
    dispatch(&a, "POST", "/api/runs/x/cancel", "Bearer r3ad-token-one", 403, ro);
    dispatch(&a, "DELETE", "/api/schedules/x", "Bearer r3ad-token-one", 403, ro);
    dispatch(&a, "POST", "/api/runs/x/cancel", "Bearer s3cret", 400, run_id);
}

/* No report is built on the loop: a route reads the store's reports either on the worker
 * (off_loop), or on the loop from what the worker built first (warm: a GET route of the same
 * {id} built off the loop), or it reads none. */
static void test_routes_a_warm_report_is_an_off_loop_route_of_the_same_id(void **state)
{
    (void)state;
    size_t warm = 0;
    for (size_t i = 0; i < sm_routes_n; i++) {
        const sm_route *r = &sm_routes[i];
        if (!r->warm)
            continue;
        warm++;
        assert_false(r->off_loop);
        char path[128];
        const char *slash = strrchr(r->pattern, '/');
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - r->pattern), r->pattern, r->warm);
        size_t found = 0;
        for (size_t j = 0; j < sm_routes_n; j++)
            if (strcmp(sm_routes[j].pattern, path) == 0 && strcmp(sm_routes[j].method, "GET") == 0)
                found += sm_routes[j].off_loop;
        assert_int_equal(found, 1);
    }
    /* POST /api/runs/{id}/again and .../experiments, which read the run's anomalies */
    assert_int_equal(warm, 2);
}

/* A host's latest jobs decode up to 100 results: the worker builds them. Its fingerprint reads
 * the live fleet, which only the loop may. */
static void test_routes_a_hosts_jobs_are_built_off_the_loop_its_fingerprint_on_it(void **state)
{
    (void)state;
    const sm_route *r = NULL;
    char allow[SM_ROUTE_ALLOW_MAX];
    assert_int_equal(sm_routes_find("/api/agents/h1/jobs", "GET", true, &r, allow, sizeof allow),
                     0);
    assert_string_equal(r->pattern, "/api/agents/{name}/jobs");
    assert_true(r->off_loop);
    assert_int_equal(
        sm_routes_find("/api/agents/h1/fingerprint", "GET", true, &r, allow, sizeof allow), 0);
    assert_false(r->off_loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes_each_route_has_its_methods_cap_and_scope),
        cmocka_unit_test(test_routes_another_method_on_a_known_path_is_405_with_its_allow),
        cmocka_unit_test(test_routes_unknown_paths_are_404_and_files_only_with_the_web_dir),
        cmocka_unit_test(test_routes_path_parameters_that_do_not_parse_are_400_naming_the_field),
        cmocka_unit_test(test_routes_dispatcher_asks_the_token_each_scope_needs),
        cmocka_unit_test(test_routes_access_answers_for_each_scope_listener_and_token),
        cmocka_unit_test(test_routes_dispatcher_answers_403_to_a_read_token_on_a_write),
        cmocka_unit_test(test_routes_a_warm_report_is_an_off_loop_route_of_the_same_id),
        cmocka_unit_test(test_routes_a_hosts_jobs_are_built_off_the_loop_its_fingerprint_on_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
