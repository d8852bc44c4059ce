/* Unit tests of the payload patterns: the receiver's verification must catch every kind of
 * damage a stream can suffer. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/workloads/pattern.h"

/* Copies n bytes of the stream that starts at offset off into a fresh buffer. */
static uint8_t *stream_copy(const sm_pattern *pt, uint64_t off, size_t n)
{
    uint8_t *b = malloc(n);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++)
        b[i] = *sm_pattern_at(pt, off + i);
    return b;
}

static void test_pattern_raw_windows_are_contiguous_across_the_period(void **state)
{
    (void)state;
    sm_pattern pt;
    assert_int_equal(sm_pattern_init_raw(&pt, 4096), 0);
    for (uint64_t off = SM_PATTERN_RAW_PERIOD - 100; off < SM_PATTERN_RAW_PERIOD + 100; off++)
        for (size_t i = 0; i < 4096; i += 97)
            assert_int_equal(sm_pattern_at(&pt, off)[i], pt.buf[(off + i) % pt.period]);
    sm_pattern_fini(&pt);
}

static void test_pattern_check_accepts_the_stream_in_any_chunking(void **state)
{
    (void)state;
    sm_pattern pt;
    assert_int_equal(sm_pattern_init_raw(&pt, 1000), 0);
    uint8_t *s = stream_copy(&pt, 0, 300000);
    /* Chunks larger than the window are checked window by window. */
    assert_int_equal(sm_pattern_check(&pt, 0, s, 300000), -1);
    for (size_t off = 0, n = 1; off < 300000; off += n, n = n * 3 % 4099 + 1)
        assert_int_equal(sm_pattern_check(&pt, off, s + off, off + n > 300000 ? 300000 - off : n),
                         -1);
    sm_pattern_fini(&pt);
    free(s);
}

static void test_pattern_check_reports_the_first_corrupted_byte(void **state)
{
    (void)state;
    sm_pattern pt;
    assert_int_equal(sm_pattern_init_raw(&pt, 8192), 0);
    uint8_t *s = stream_copy(&pt, 5000, 8192);
    s[4321] ^= 0x01;
    assert_int_equal(sm_pattern_check(&pt, 5000, s, 8192), 4321);
    sm_pattern_fini(&pt);
    free(s);
}

static void test_pattern_check_catches_a_lost_message(void **state)
{
    (void)state;
    sm_pattern pt;
    const size_t msg = 131072;
    assert_int_equal(sm_pattern_init_raw(&pt, msg), 0);
    /* The receiver expects offset 2*msg but the sender's third message arrives instead. */
    uint8_t *third = stream_copy(&pt, 3 * msg, msg);
    assert_true(sm_pattern_check(&pt, 2 * msg, third, msg) >= 0);
    free(third);
    /* Same for a lost 128-byte write. */
    uint8_t *small = stream_copy(&pt, 128 * 11, 128);
    assert_true(sm_pattern_check(&pt, 128 * 10, small, 128) >= 0);
    free(small);
    sm_pattern_fini(&pt);
}

static void test_pattern_lines_are_printable_with_crlf_and_differ_line_to_line(void **state)
{
    (void)state;
    sm_pattern pt;
    const size_t ls = 128, line = ls + 2;
    assert_int_equal(sm_pattern_init_lines(&pt, ls, line), 0);
    assert_int_equal(pt.period, SM_PATTERN_LINES_BLOCK * line);
    for (size_t l = 0; l < 200; l++) {
        const uint8_t *p = sm_pattern_at(&pt, l * line);
        for (size_t i = 0; i < ls; i++)
            assert_true(p[i] >= '0' && p[i] <= 'z' && p[i] != '\r' && p[i] != '\n');
        assert_int_equal(p[ls], '\r');
        assert_int_equal(p[ls + 1], '\n');
    }
    /* A lost line shows: line 7 where line 6 was expected differs. */
    assert_true(sm_pattern_check(&pt, 6 * line, sm_pattern_at(&pt, 7 * line), line) >= 0);
    assert_int_equal(sm_pattern_check(&pt, 6 * line, sm_pattern_at(&pt, 6 * line), line), -1);
    sm_pattern_fini(&pt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pattern_raw_windows_are_contiguous_across_the_period),
        cmocka_unit_test(test_pattern_check_accepts_the_stream_in_any_chunking),
        cmocka_unit_test(test_pattern_check_reports_the_first_corrupted_byte),
        cmocka_unit_test(test_pattern_check_catches_a_lost_message),
        cmocka_unit_test(test_pattern_lines_are_printable_with_crlf_and_differ_line_to_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
