/* Unit tests of the count of rejected messages: logged once per peer per minute, counted in bulk, a
 * bounded peer map, and their names. */
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
#include "proto/log.h"
#include "tests/unit/proto/envelope_fixture.h"

/* Runs sm_rejects_note with stderr captured into buf. */
static int note_captured(sm_rejects *r, sm_reject why, const char *peer, uint64_t now, char *buf,
                         size_t cap)
{
    char dir[] = "/tmp/sm_env_logXXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/stderr", dir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    int level = sm_log_level;
    sm_log_level = LOG_WARNING;
    int logged = sm_rejects_note(r, why, peer, now, "MAC does not match");
    sm_log_level = level;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, buf, cap - 1, 0);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    unlink(path);
    rmdir(dir);
    return logged;
}

static void test_rejects_log_once_per_peer_per_minute_and_count_all(void **state)
{
    (void)state;
    sm_rejects *r = sm_rejects_new();
    assert_non_null(r);
    int level = sm_log_level;
    sm_log_level = LOG_ERR; /* only the captured calls below write their line */
    char line[1024];

    assert_int_equal(note_captured(r, SM_REJ_MAC, "10.0.0.1", T0, line, sizeof line), 1);
    assert_contains(line, "SM-REJECT");
    assert_contains(line, "10.0.0.1");
    assert_contains(line, "mac");
    assert_int_equal(note_captured(r, SM_REJ_MAC, "10.0.0.1", T0 + 1, line, sizeof line), 0);
    assert_string_equal(line, "");
    assert_int_equal(sm_rejects_note(r, SM_REJ_SKEW, "10.0.0.1", T0 + 59999, NULL), 0);
    /* Another peer is not held back by the first. */
    assert_int_equal(sm_rejects_note(r, SM_REJ_MAC, "10.0.0.2", T0 + 2, NULL), 1);
    assert_int_equal(sm_rejects_note(r, SM_REJ_MAC, "10.0.0.2", T0 + 3, NULL), 0);
    assert_int_equal(note_captured(r, SM_REJ_MAC, "10.0.0.1", T0 + 60000, line, sizeof line), 1);
    assert_contains(line, "2 more");
    assert_int_equal(note_captured(r, SM_REJ_MAC, "10.0.0.1", T0 + 60001, line, sizeof line), 0);

    assert_int_equal(sm_rejects_note(r, SM_REJ_JSON, NULL, T0, NULL), 1);
    assert_int_equal(sm_rejects_note(r, SM_REJ_JSON, NULL, T0, NULL), 0);

    assert_int_equal(sm_rejects_count(r, SM_REJ_MAC), 6);
    assert_int_equal(sm_rejects_count(r, SM_REJ_SKEW), 1);
    assert_int_equal(sm_rejects_count(r, SM_REJ_JSON), 2);
    assert_int_equal(sm_rejects_count(r, SM_REJ_REPLAY), 0);
    assert_int_equal(sm_rejects_total(r), 9);
    sm_log_level = level;
    sm_rejects_free(r);
    sm_rejects_free(NULL);
}

static void test_rejects_add_counts_in_bulk_and_ignores_bad_reasons(void **state)
{
    (void)state;
    sm_rejects *r = sm_rejects_new();
    assert_non_null(r);
    sm_rejects_add(r, SM_REJ_THROTTLED, 184);
    sm_rejects_add(r, SM_REJ_THROTTLED, 0);
    sm_rejects_add(r, SM_REJ__COUNT, 5);
    assert_int_equal(sm_rejects_count(r, SM_REJ_THROTTLED), 184);
    assert_int_equal(sm_rejects_total(r), 184);
    sm_rejects_add(NULL, SM_REJ_MAC, 1); /* no handle: nothing to count */
    sm_rejects_free(r);
}

static void test_rejects_peer_map_evicts_the_oldest_beyond_4096(void **state)
{
    (void)state;
    sm_rejects *r = sm_rejects_new();
    assert_non_null(r);
    int level = sm_log_level;
    sm_log_level = LOG_ERR; /* 4098 lines of noise otherwise */
    char peer[32];
    for (int i = 0; i <= 4096; i++) {
        snprintf(peer, sizeof peer, "p%d", i);
        assert_int_equal(sm_rejects_note(r, SM_REJ_MAC, peer, T0 + (uint64_t)i, NULL), 1);
    }
    /* p0 was evicted to make room for p4096, so it logs again within its minute; p1 does not. */
    assert_int_equal(sm_rejects_note(r, SM_REJ_MAC, "p1", T0 + 5000, NULL), 0);
    assert_int_equal(sm_rejects_note(r, SM_REJ_MAC, "p0", T0 + 5000, NULL), 1);
    assert_int_equal(sm_rejects_total(r), 4099);
    sm_log_level = level;
    sm_rejects_free(r);
}

static void test_reject_names_are_the_documented_words(void **state)
{
    (void)state;
    static const char *const want[] = {"none",    "size",  "depth",       "json",
                                       "version", "field", "mac",         "skew",
                                       "replay",  "body",  "misdirected", "throttled"};
    assert_int_equal(SM_REJ__COUNT, sizeof want / sizeof want[0]);
    for (int i = 0; i < SM_REJ__COUNT; i++)
        assert_string_equal(sm_reject_name((sm_reject)i), want[i]);
    assert_string_equal(sm_reject_name(SM_REJ__COUNT), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rejects_log_once_per_peer_per_minute_and_count_all),
        cmocka_unit_test(test_rejects_peer_map_evicts_the_oldest_beyond_4096),
        cmocka_unit_test(test_rejects_add_counts_in_bulk_and_ignores_bad_reasons),
        cmocka_unit_test(test_reject_names_are_the_documented_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
