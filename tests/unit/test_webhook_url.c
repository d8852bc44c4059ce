/* Unit tests of sm_webhook_url_check: what a schedule's webhook URL may be. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_webhook_url_takes_http_and_https),
        cmocka_unit_test(test_webhook_url_refuses_what_it_cannot_post_to),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
