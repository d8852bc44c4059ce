/* Unit tests of the envelope's replay window: a nonce seen twice is refused, in bounded memory,
 * across clock steps. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "proto/envelope.h"
#include "tests/unit/proto/envelope_fixture.h"

static void test_replay_same_nonce_twice_is_rejected_until_the_window_passes(void **state)
{
    (void)state;
    sm_replay *r = sm_replay_new(2 * SM_SKEW_MS);
    assert_non_null(r);
    assert_int_equal(sm_replay_check(r, "h1", NONCE, T0), SM_REJ_NONE);
    assert_int_equal(sm_replay_check(r, "h1", NONCE, T0 + 1), SM_REJ_REPLAY);
    assert_int_equal(sm_replay_check(r, "h2", NONCE, T0 + 1), SM_REJ_NONE); /* other sender */
    assert_int_equal(sm_replay_size(r), 2);
    assert_int_equal(sm_replay_check(r, "h1", NONCE, T0 + 2 * SM_SKEW_MS), SM_REJ_REPLAY);
    assert_int_equal(sm_replay_check(r, "h1", NONCE, T0 + 2 * SM_SKEW_MS + 1), SM_REJ_NONE);
    /* The h2 entry (T0 + 1) is still inside; the old h1 entry was dropped and re-added. */
    assert_int_equal(sm_replay_size(r), 2);
    assert_int_equal(sm_replay_check(r, "h3", NONCE, T0 + 10 * SM_SKEW_MS), SM_REJ_NONE);
    assert_int_equal(sm_replay_size(r), 1);
    sm_replay_free(r);
    sm_replay_free(NULL);
}

static void test_replay_stays_bounded_by_the_window_under_steady_traffic(void **state)
{
    (void)state;
    sm_replay *r = sm_replay_new(1000);
    assert_non_null(r);
    char nonce[40];
    /* 10 accepted messages per ms for 5 s: only the last window's worth stays. */
    for (uint64_t i = 0; i < 50000; i++) {
        snprintf(nonce, sizeof nonce, "%032" PRIx64, i);
        assert_int_equal(sm_replay_check(r, "h1", nonce, T0 + i / 10), SM_REJ_NONE);
    }
    assert_true(sm_replay_size(r) <= 10010);
    assert_true(sm_replay_size(r) >= 10000);
    snprintf(nonce, sizeof nonce, "%032" PRIx64, (uint64_t)49999);
    assert_int_equal(sm_replay_check(r, "h1", nonce, T0 + 5000), SM_REJ_REPLAY);
    snprintf(nonce, sizeof nonce, "%032" PRIx64, (uint64_t)1);
    assert_int_equal(sm_replay_check(r, "h1", nonce, T0 + 5000), SM_REJ_NONE);
    sm_replay_free(r);
}

/* Expiry takes pairs out of the set as others go in: every pair still in the window must stay
 * findable (a deletion that broke a probe run would let its replay through), and each takes
 * at most 64 bytes however the tables grew. */
static void test_replay_keeps_every_pair_of_the_window_in_64_bytes_each(void **state)
{
    (void)state;
    sm_replay *r = sm_replay_new(1000);
    assert_non_null(r);
    char name[16], nonce[40];
    for (uint64_t i = 0; i < 100000; i++) {
        snprintf(name, sizeof name, "agent-%05" PRIu64, i % 997);
        snprintf(nonce, sizeof nonce, "%032" PRIx64, (uint64_t)(i * 0x9e3779b97f4a7c15ull));
        assert_int_equal(sm_replay_check(r, name, nonce, T0 + i / 20), SM_REJ_NONE);
    }
    const size_t kept = sm_replay_size(r);
    assert_true(kept >= 20000 && kept <= 20020);
    assert_true(sm_replay_bytes(r) <= 64 * kept);
    /* The last 20,000 (T0 + 4000 .. T0 + 4999) are all within the window at T0 + 4999. */
    for (uint64_t i = 80000; i < 100000; i++) {
        snprintf(name, sizeof name, "agent-%05" PRIu64, i % 997);
        snprintf(nonce, sizeof nonce, "%032" PRIx64, (uint64_t)(i * 0x9e3779b97f4a7c15ull));
        assert_int_equal(sm_replay_check(r, name, nonce, T0 + 4999), SM_REJ_REPLAY);
    }
    assert_int_equal(sm_replay_size(r), kept);
    sm_replay_free(r);
}

static void test_replay_clock_stepping_back_does_not_forget_early(void **state)
{
    (void)state;
    sm_replay *r = sm_replay_new(1000);
    assert_non_null(r);
    assert_int_equal(sm_replay_check(r, "h1", "a", T0), SM_REJ_NONE);
    assert_int_equal(sm_replay_check(r, "h1", "b", T0 - 5000), SM_REJ_NONE);
    assert_int_equal(sm_replay_check(r, "h1", "b", T0 + 999), SM_REJ_REPLAY);
    assert_int_equal(sm_replay_check(r, "h1", "a", T0 + 1000), SM_REJ_REPLAY);
    sm_replay_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_same_nonce_twice_is_rejected_until_the_window_passes),
        cmocka_unit_test(test_replay_stays_bounded_by_the_window_under_steady_traffic),
        cmocka_unit_test(test_replay_clock_stepping_back_does_not_forget_early),
        cmocka_unit_test(test_replay_keeps_every_pair_of_the_window_in_64_bytes_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
