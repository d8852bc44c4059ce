/* Unit tests of coordinator/guard (what the HTTP listener decides from a request head) and of
 * the dashboard's file lookup, which refuses symbolic links below its folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "coordinator/server/guard.h"
#include "coordinator/server/web.h"

static void test_guard_route_gives_methods_caps_and_api(void **state)
{
    (void)state;
    sm_route r;
    assert_true(sm_guard_route("/api/runs", true, &r));
    assert_string_equal(r.allow, "GET, POST");
    assert_int_equal(r.body_max, 256u << 10);
    assert_true(r.api);
    assert_true(sm_guard_route("/api/jobs", false, &r));
    assert_string_equal(r.allow, "POST");
    assert_true(sm_guard_route("/api/runs/7/cancel", false, &r));
    assert_string_equal(r.allow, "POST");
    assert_int_equal(r.body_max, 4u << 10);
    assert_true(sm_guard_route("/api/runs/7/table", false, &r));
    assert_string_equal(r.allow, "GET");
    assert_int_equal(r.body_max, 0);
    assert_true(sm_guard_route("/api/runs/7/jobs", false, &r));
    assert_string_equal(r.allow, "GET");
    assert_true(r.api);
    assert_true(sm_guard_route("/api/runs/7/cells/3", false, &r));
    assert_string_equal(r.allow, "GET");
    assert_true(r.api);
    assert_false(sm_guard_route("/api/runs/7/cells/", true, &r));
    assert_false(sm_guard_route("/api/runs/7/cells/3/x", true, &r));
    assert_true(sm_guard_route("/healthz", false, &r));
    assert_true(r.api);
    /* schedules: a DELETE of one, a POST to pause or resume it */
    assert_true(sm_guard_route("/api/schedules", false, &r));
    assert_string_equal(r.allow, "GET, POST");
    assert_true(sm_guard_route("/api/schedules/3", false, &r));
    assert_string_equal(r.allow, "GET, DELETE");
    assert_int_equal(r.body_max, 0);
    assert_true(sm_guard_method_ok(&r, "DELETE"));
    assert_false(sm_guard_method_ok(&r, "POST"));
    assert_true(sm_guard_route("/api/schedules/3/pause", false, &r));
    assert_string_equal(r.allow, "POST");
    assert_true(sm_guard_route("/api/schedules/3/resume", false, &r));
    assert_false(sm_guard_route("/api/schedules/3/stop", true, &r));
    /* the token guards /metrics as the other API reads, dashboard or not */
    assert_true(sm_guard_route("/metrics", true, &r));
    assert_string_equal(r.allow, "GET");
    assert_true(r.api);
    assert_true(sm_guard_route("/api/agents/h1/fingerprint", false, &r));
    assert_string_equal(r.allow, "GET");
    assert_true(r.api);
    assert_true(sm_guard_route("/api/fingerprints/diff", false, &r));
    assert_string_equal(r.allow, "GET");
    assert_false(sm_guard_route("/api/agents/h1", true, &r));
    assert_false(sm_guard_route("/api/agents/h1/fingerprint/x", true, &r));
    assert_false(sm_guard_route("/api/fingerprints", true, &r));
    assert_true(sm_guard_route("/api/trends", false, &r));
    assert_string_equal(r.allow, "GET");
    assert_true(r.api);
    assert_true(sm_guard_route("/api/grid", true, &r));
    assert_string_equal(r.allow, "GET");
    assert_true(r.api);
    assert_false(sm_guard_route("/api/runs/7/nope", true, &r));
    assert_false(sm_guard_route("/api/nope", true, &r));
    assert_false(sm_guard_route("/index.html", false, &r));
    assert_true(sm_guard_route("/index.html", true, &r));
    assert_false(r.api);
    assert_string_equal(r.allow, "GET");
}

static void test_guard_method_matches_whole_names_only(void **state)
{
    (void)state;
    sm_route r = {"GET, POST", 1, true};
    assert_true(sm_guard_method_ok(&r, "GET"));
    assert_true(sm_guard_method_ok(&r, "POST"));
    assert_false(sm_guard_method_ok(&r, "PUT"));
    assert_false(sm_guard_method_ok(&r, "GE"));
    assert_false(sm_guard_method_ok(&r, "POS"));
    assert_false(sm_guard_method_ok(&r, ""));
}

static void test_guard_host_names_the_listener_and_no_foreign_name(void **state)
{
    (void)state;
    const char *names[] = {"lab.example"};
    sm_guard lo = {"127.0.0.1", true, false, names, 1};
    assert_true(sm_guard_host_ok(&lo, "127.0.0.1:8080"));
    assert_true(sm_guard_host_ok(&lo, "127.0.0.1"));
    assert_true(sm_guard_host_ok(&lo, "localhost:9000")); /* an ssh tunnel's port */
    assert_true(sm_guard_host_ok(&lo, "LAB.example:443"));
    assert_false(sm_guard_host_ok(&lo, "127.0.0.2:8080"));
    assert_false(sm_guard_host_ok(&lo, "attacker.example:8080"));
    assert_false(sm_guard_host_ok(&lo, "localhost.attacker.example"));
    assert_false(sm_guard_host_ok(&lo, ""));
    assert_false(sm_guard_host_ok(&lo, NULL));
    assert_false(sm_guard_host_ok(&lo, ":8080"));
    sm_guard any = {"0.0.0.0", false, true, NULL, 0};
    assert_true(sm_guard_host_ok(&any, "192.0.2.7:8080"));
    assert_true(sm_guard_host_ok(&any, "[::1]:8080"));
    assert_false(sm_guard_host_ok(&any, "localhost:8080"));
    assert_false(sm_guard_host_ok(&any, "[::1"));
    sm_guard v6 = {"::1", true, false, NULL, 0};
    assert_true(sm_guard_host_ok(&v6, "[::1]:8080"));
    assert_false(sm_guard_host_ok(&v6, "[::2]:8080"));
    assert_true(sm_guard_is_loopback("127.3.4.5"));
    assert_true(sm_guard_is_loopback("::1"));
    assert_false(sm_guard_is_loopback("0.0.0.0"));
    assert_false(sm_guard_is_loopback("127.0.0.1.example"));
    assert_true(sm_guard_is_wildcard("::"));
}

static void test_guard_origin_is_only_the_hosts_own(void **state)
{
    (void)state;
    assert_true(sm_guard_origin_ok("http://127.0.0.1:8080", "127.0.0.1:8080"));
    assert_true(sm_guard_origin_ok("https://lab.example", "lab.example"));
    assert_false(sm_guard_origin_ok("http://127.0.0.1:8081", "127.0.0.1:8080"));
    assert_false(sm_guard_origin_ok("http://attacker.example", "127.0.0.1:8080"));
    assert_false(sm_guard_origin_ok("null", "127.0.0.1:8080"));
    assert_false(sm_guard_origin_ok("http://", ""));
}

static void test_guard_json_media_type(void **state)
{
    (void)state;
    assert_true(sm_guard_is_json("application/json"));
    assert_true(sm_guard_is_json("Application/JSON; charset=utf-8"));
    assert_false(sm_guard_is_json("text/plain"));
    assert_false(sm_guard_is_json("application/jsonx"));
    assert_false(sm_guard_is_json("application/x-www-form-urlencoded"));
    assert_false(sm_guard_is_json(""));
    assert_false(sm_guard_is_json(NULL));
}

static void test_guard_ws_token_is_decoded_and_bounded(void **state)
{
    (void)state;
    char t[SM_TOKEN_MAX + 1];
    assert_int_equal(sm_guard_ws_token("sm-events, sm-token.abc%28d%29", t, sizeof t), 1);
    assert_string_equal(t, "abc(d)");
    assert_int_equal(sm_guard_ws_token("sm-events", t, sizeof t), 0);
    assert_int_equal(sm_guard_ws_token("sm-token.ab%2", t, sizeof t), -1);
    assert_int_equal(sm_guard_ws_token("sm-token.ab%zz", t, sizeof t), -1);
    char longer[400] = "sm-token.";
    memset(longer + 9, 'a', 300);
    assert_int_equal(sm_guard_ws_token(longer, t, sizeof t), -1);
}

/* A web folder with index.html, a link to a file outside it and a link to a folder outside. */
static char *web_with_links(char *tmp)
{
    static char web[300];
    char path[400];
    assert_non_null(mkdtemp(tmp));
    snprintf(web, sizeof web, "%s/web", tmp);
    assert_int_equal(mkdir(web, 0700), 0);
    snprintf(path, sizeof path, "%s/index.html", web);
    FILE *f = fopen(path, "w");
    fputs("<p>in</p>", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/secret", tmp);
    f = fopen(path, "w");
    fputs("out", f);
    fclose(f);
    char link[400];
    snprintf(link, sizeof link, "%s/leak.js", web);
    assert_int_equal(symlink(path, link), 0);
    snprintf(link, sizeof link, "%s/up", web);
    assert_int_equal(symlink(tmp, link), 0);
    return web;
}

static void check_links_refused(void)
{
    char tmp[] = "/tmp/sm-guard-XXXXXX";
    const char *web = web_with_links(tmp);
    char *body;
    size_t len;
    const char *ctype;
    assert_int_equal(sm_web_file(web, "/index.html", &body, &len, &ctype), 200);
    assert_string_equal(body, "<p>in</p>");
    free(body);
    assert_int_equal(sm_web_file(web, "/leak.js", &body, &len, &ctype), 404);
    assert_null(body);
    assert_int_equal(sm_web_file(web, "/up/secret", &body, &len, &ctype), 404);
    assert_int_equal(sm_web_file(web, "/up/web/index.html", &body, &len, &ctype), 404);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
}

static void test_web_file_refuses_symlinks_with_openat2(void **state)
{
    (void)state;
    unsetenv("SM_WEB_NO_OPENAT2");
    check_links_refused();
}

static void test_web_file_refuses_symlinks_without_openat2(void **state)
{
    (void)state;
    setenv("SM_WEB_NO_OPENAT2", "1", 1);
    check_links_refused();
    unsetenv("SM_WEB_NO_OPENAT2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guard_route_gives_methods_caps_and_api),
        cmocka_unit_test(test_guard_method_matches_whole_names_only),
        cmocka_unit_test(test_guard_host_names_the_listener_and_no_foreign_name),
        cmocka_unit_test(test_guard_origin_is_only_the_hosts_own),
        cmocka_unit_test(test_guard_json_media_type),
        cmocka_unit_test(test_guard_ws_token_is_decoded_and_bounded),
        cmocka_unit_test(test_web_file_refuses_symlinks_with_openat2),
        cmocka_unit_test(test_web_file_refuses_symlinks_without_openat2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
