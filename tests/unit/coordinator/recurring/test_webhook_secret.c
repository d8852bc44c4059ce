/* Unit tests of webhook secrets and signatures (recurring/secret.h) against vectors computed
 * apart from the coordinator's code (Python's hmac: HKDF-SHA256 by RFC 5869's two steps, then
 * HMAC-SHA256 of "t.body"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "coordinator/recurring/secret.h"

/* 1, 2, ..., 32 */
static void key_of(uint8_t key[SM_KEY_LEN])
{
    for (int i = 0; i < SM_KEY_LEN; i++)
        key[i] = (uint8_t)(i + 1);
}

static void test_webhook_secret_is_hkdf_of_the_fleet_key_schedule_and_generation(void **state)
{
    (void)state;
    uint8_t key[SM_KEY_LEN];
    key_of(key);
    char s1[SM_WEBHOOK_SECRET_SIZE], s2[SM_WEBHOOK_SECRET_SIZE], other[SM_WEBHOOK_SECRET_SIZE];
    sm_error err = {0};
    assert_int_equal(sm_webhook_secret(key, 7, 1, s1, &err), 0);
    assert_string_equal(s1,
                        "whsec_c3801f5946e39019c8d8277b72deacae4a09f044987881f6360cbea798c66a7c");
    /* a rotation makes another */
    assert_int_equal(sm_webhook_secret(key, 7, 2, s2, &err), 0);
    assert_string_equal(s2,
                        "whsec_cc4dec27bb942a3a8871b8466a3d1c8858519d4aeadc34416c9cb79ab3509e59");
    /* another schedule, another fleet key: other secrets */
    assert_int_equal(sm_webhook_secret(key, 8, 1, other, &err), 0);
    assert_string_not_equal(other, s1);
    key[0] ^= 1;
    assert_int_equal(sm_webhook_secret(key, 7, 1, other, &err), 0);
    assert_string_not_equal(other, s1);
    assert_int_equal(strlen(s1), SM_WEBHOOK_SECRET_SIZE - 1);
}

static void test_webhook_signature_covers_the_time_and_the_body(void **state)
{
    (void)state;
    const char *secret = "whsec_c3801f5946e39019c8d8277b72deacae4a09f044987881f6360cbea798c66a7c";
    const char *body = "{\"event\":\"ping\",\"schedule\":{\"id\":\"7\",\"name\":\"watch\"}}";
    char sig[SM_WEBHOOK_SIG_SIZE], other[SM_WEBHOOK_SIG_SIZE];
    sm_webhook_sign(secret, 1767225600, body, strlen(body), sig);
    assert_string_equal(sig, "t=1767225600,v1="
                             "4cb4efba7b772be95625a67d376acb91d67b4353aa52e795a290dfaa8cbb8a6e");
    /* the same body a second later is another signature: a replay cannot move its time */
    sm_webhook_sign(secret, 1767225601, body, strlen(body), other);
    assert_string_not_equal(strchr(other, 'v'), strchr(sig, 'v'));
    sm_webhook_sign(secret, 1767225600, body, strlen(body) - 1, other);
    assert_string_not_equal(other, sig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_webhook_secret_is_hkdf_of_the_fleet_key_schedule_and_generation),
        cmocka_unit_test(test_webhook_signature_covers_the_time_and_the_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
