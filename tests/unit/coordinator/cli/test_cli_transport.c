/* Unit tests of how the sockmatrix CLI guards its token on the way: a token file with an
 * http:// coordinator off loopback is refused unless --insecure-http; https and loopback pass. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "coordinator/cli/cli.h"
#include "coordinator/cli/http.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof *(a)) - 1)

static int parse(char **argv, int argc, const char *env, sm_cli_opts *o, sm_error *err)
{
    memset(err, 0, sizeof *err);
    memset(o, 0, sizeof *o);
    return sm_cli_parse(argc, argv, env, o, err);
}

static void test_url_in_clear_is_http_to_a_host_that_is_not_loopback(void **state)
{
    (void)state;
    static const char *const clear[] = {"http://192.0.2.1:8080", "http://lab.example",
                                        "HTTP://10.0.0.1:8080/", "http://[2001:db8::1]:8080",
                                        "http://127.0.0.1@lab.example:8080"};
    static const char *const safe[] = {"https://192.0.2.1:8443", "https://lab.example",
                                       "http://127.0.0.1:8080",  "http://127.0.0.2:8080",
                                       "http://localhost:8080",  "http://LOCALHOST",
                                       "http://[::1]:8080"};
    for (size_t i = 0; i < sizeof clear / sizeof *clear; i++)
        if (!sm_http_url_in_clear(clear[i]))
            fail_msg("%s should count as in clear", clear[i]);
    for (size_t i = 0; i < sizeof safe / sizeof *safe; i++)
        if (sm_http_url_in_clear(safe[i]))
            fail_msg("%s should not count as in clear", safe[i]);
}

static void test_cli_refuses_a_token_over_http_off_loopback_naming_the_options(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err;
    char *argv[] = {
        "sockmatrix", "--coordinator", "http://192.0.2.1:8080", "--token-file", "t", "runs", NULL};
    assert_int_equal(parse(argv, ARGC(argv), NULL, &o, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "--coordinator: http://192.0.2.1:8080"));
    assert_non_null(strstr(err.msg, "in clear"));
    assert_non_null(strstr(err.msg, "--insecure-http"));
    assert_non_null(strstr(err.msg, "--cacert"));
    assert_null(strchr(err.msg, '\n'));

    char *env_argv[] = {"sockmatrix", "--token-file", "t", "runs", NULL};
    assert_int_equal(parse(env_argv, ARGC(env_argv), "http://lab.example:8080", &o, &err),
                     SM_EINVAL);
    assert_non_null(strstr(err.msg, "SOCKMATRIX_COORDINATOR: http://lab.example:8080"));
}

static void test_cli_takes_insecure_http_https_loopback_or_no_token(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err;
    char *insecure[] = {"sockmatrix", "--coordinator", "http://192.0.2.1:8080", "--token-file",
                        "t",          "runs",          "--insecure-http",       NULL};
    assert_int_equal(parse(insecure, ARGC(insecure), NULL, &o, &err), 0);
    assert_true(o.insecure_http);
    char *https[] = {"sockmatrix",
                     "--cacert",
                     "ca.pem",
                     "--coordinator",
                     "https://192.0.2.1:8443",
                     "--token-file",
                     "t",
                     "runs",
                     NULL};
    assert_int_equal(parse(https, ARGC(https), NULL, &o, &err), 0);
    assert_string_equal(o.cacert, "ca.pem");
    assert_false(o.insecure_http);
    char *loop[] = {
        "sockmatrix", "--coordinator", "http://localhost:8080", "--token-file", "t", "runs", NULL};
    assert_int_equal(parse(loop, ARGC(loop), NULL, &o, &err), 0);
    assert_null(o.cacert);
    char *no_token[] = {"sockmatrix", "--coordinator", "http://192.0.2.1:8080", "runs", NULL};
    assert_int_equal(parse(no_token, ARGC(no_token), NULL, &o, &err), 0);
    char *empty[] = {"sockmatrix", "--cacert", "", "runs", NULL};
    assert_int_equal(parse(empty, ARGC(empty), NULL, &o, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "--cacert"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_in_clear_is_http_to_a_host_that_is_not_loopback),
        cmocka_unit_test(test_cli_refuses_a_token_over_http_off_loopback_naming_the_options),
        cmocka_unit_test(test_cli_takes_insecure_http_https_loopback_or_no_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
