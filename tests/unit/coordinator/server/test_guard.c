/* Unit tests of coordinator/server/guard (what the HTTP listener decides from a request head
 * besides its route, which test_routes.c covers) and of the dashboard's file lookup, which refuses
 * symbolic links below its folder. */
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

static void test_guard_a_read_from_another_site_is_refused(void **state)
{
    (void)state;
    static const char host[] = "127.0.0.1:8080";
    /* curl, the CLI, Prometheus: no Origin, no Sec-Fetch-Site */
    assert_true(sm_guard_fetch_ok(NULL, NULL, host));
    assert_true(sm_guard_fetch_ok("", "", host));
    /* the dashboard itself, and a URL typed in the address bar */
    assert_true(sm_guard_fetch_ok("http://127.0.0.1:8080", "same-origin", host));
    assert_true(sm_guard_fetch_ok(NULL, "same-origin", host));
    assert_true(sm_guard_fetch_ok(NULL, "none", host));
    /* another site's page: by its Origin, by Sec-Fetch-Site, or both */
    assert_false(sm_guard_fetch_ok("http://evil.example", NULL, host));
    assert_false(sm_guard_fetch_ok("null", NULL, host));
    assert_false(sm_guard_fetch_ok(NULL, "cross-site", host));
    assert_false(sm_guard_fetch_ok("http://127.0.0.1:8080", "cross-site", host));
    assert_false(sm_guard_fetch_ok("http://evil.example", "cross-site", host));
    /* same-site is another origin (another port, say) unless the Origin says it is ours */
    assert_false(sm_guard_fetch_ok(NULL, "same-site", host));
    assert_false(sm_guard_fetch_ok("http://127.0.0.1:3000", "same-site", host));
    assert_true(sm_guard_fetch_ok("http://127.0.0.1:8080", "same-site", host));
    /* an unknown value is a browser we do not know: the Origin decides */
    assert_true(sm_guard_fetch_ok(NULL, "someday", host));
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
        cmocka_unit_test(test_guard_host_names_the_listener_and_no_foreign_name),
        cmocka_unit_test(test_guard_origin_is_only_the_hosts_own),
        cmocka_unit_test(test_guard_a_read_from_another_site_is_refused),
        cmocka_unit_test(test_guard_json_media_type),
        cmocka_unit_test(test_guard_ws_token_is_decoded_and_bounded),
        cmocka_unit_test(test_web_file_refuses_symlinks_with_openat2),
        cmocka_unit_test(test_web_file_refuses_symlinks_without_openat2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
