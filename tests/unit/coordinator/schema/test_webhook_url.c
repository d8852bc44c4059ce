/* Unit tests of sm_webhook_url_check and the destination policy: what a schedule's webhook URL
 * may be. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "coordinator/schema/webhook_url.h"

static void refused(const char *url, const char *words)
{
    sm_error err = {0};
    assert_int_equal(sm_webhook_url_check(url, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, words));
    assert_string_equal(err.field, "webhook");
}

static void test_webhook_url_takes_http_and_https(void **state)
{
    (void)state;
    sm_error err = {0};
    assert_int_equal(sm_webhook_url_check("http://127.0.0.1:8080/hook", &err), 0);
    assert_int_equal(sm_webhook_url_check("HTTPS://alerts.lab.example/x?y=1", &err), 0);
    assert_int_equal(sm_webhook_url_check("http://[::1]:9/", &err), 0);
}

static void test_webhook_url_refuses_what_it_cannot_post_to(void **state)
{
    (void)state;
    refused("", "empty");
    refused(NULL, "empty");
    refused("ftp://x/", "only http:// and https://");
    refused("file:///etc/passwd", "only http:// and https://");
    refused("127.0.0.1:80/hook", "only http:// and https://");
    refused("http://", "no host");
    refused("http:///path", "no host");
    refused("http://:80/", "no host");
    refused("http://a b/", "byte 9");
    refused("http://x/\n", "control character");
    refused("http://user:pw@x/", "no user or password");
    char big[SM_WEBHOOK_URL_MAX + 8];
    memset(big, 'a', sizeof big);
    memcpy(big, "http://", 7);
    big[SM_WEBHOOK_URL_MAX] = '\0';
    refused(big, "at most 511");
    big[SM_WEBHOOK_URL_MAX - 1] = '\0';
    sm_error err = {0};
    assert_int_equal(sm_webhook_url_check(big, &err), 0);
}

static void test_webhook_url_host_strips_port_and_brackets(void **state)
{
    (void)state;
    char host[64];
    assert_int_equal(sm_webhook_url_host("http://127.0.0.1:8080/hook", host, sizeof host), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(sm_webhook_url_host("https://[fe80::1]:9/x", host, sizeof host), 0);
    assert_string_equal(host, "fe80::1");
    assert_int_equal(sm_webhook_url_host("http://alerts.example?x=1", host, sizeof host), 0);
    assert_string_equal(host, "alerts.example");
    assert_int_equal(sm_webhook_url_host("http://alerts.example/", host, 4), SM_EINVAL);
}

static void test_webhook_url_policy_refuses_inner_literals_and_names_the_option(void **state)
{
    (void)state;
    const sm_addr_policy def = {.refuse = SM_ADDR_PRIVATE, .option = "--webhook-allow"};
    static const char *const inner[][2] = {
        {"http://127.0.0.1:8080/hook", "127.0.0.1 is a loopback address"},
        {"http://[::1]:9/", "--webhook-allow loopback allows it"},
        {"http://169.254.169.254/latest/meta-data/", "--webhook-allow link-local"},
        {"http://[fe80::1]/", "link-local"},
        {"http://10.0.0.1/", "--webhook-allow private"},
        {"http://192.168.1.1/", "private"},
        {"http://100.64.0.1/", "private"},
        {"http://[fd12::1]/", "private"},
        {"http://0.0.0.0/", "unspecified"},
        {"http://[::]/", "unspecified"},
        {"http://224.0.0.1/", "multicast"},
    };
    for (size_t i = 0; i < sizeof inner / sizeof inner[0]; i++) {
        sm_error err = {0};
        if (sm_webhook_url_allowed(inner[i][0], &def, &err) != SM_EINVAL)
            fail_msg("%s was allowed", inner[i][0]);
        if (!strstr(err.msg, inner[i][1]))
            fail_msg("%s: '%s' lacks '%s'", inner[i][0], err.msg, inner[i][1]);
        assert_string_equal(err.field, "webhook");
    }
    sm_error err = {0};
    assert_int_equal(sm_webhook_url_allowed("https://203.0.113.9/x", &def, &err), 0);
    assert_int_equal(sm_webhook_url_allowed("https://[2001:db8::1]/x", &def, &err), 0);
    /* names are checked where a delivery connects */
    assert_int_equal(sm_webhook_url_allowed("http://localhost:9/", &def, &err), 0);
    sm_addr_policy lo = def;
    assert_int_equal(sm_addr_policy_parse(&lo, "loopback", &err), 0);
    assert_int_equal(sm_webhook_url_allowed("http://127.0.0.1:8080/hook", &lo, &err), 0);
    assert_int_equal(sm_webhook_url_allowed("http://10.0.0.1/", &lo, &err), SM_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_webhook_url_takes_http_and_https),
        cmocka_unit_test(test_webhook_url_refuses_what_it_cannot_post_to),
        cmocka_unit_test(test_webhook_url_host_strips_port_and_brackets),
        cmocka_unit_test(test_webhook_url_policy_refuses_inner_literals_and_names_the_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
