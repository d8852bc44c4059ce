/* Unit tests of proto/params' parsing of sizes and numbers: binary suffixes, and junk, signs,
 * spaces and overflow refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proto/params.h"

/* ---- sizes and numbers ---- */

static uint64_t size_of(const char *s)
{
    uint64_t v = 0xdeadbeef;
    assert_int_equal(sm_parse_size(s, &v), 0);
    return v;
}

static void test_parse_size_reads_plain_and_binary_suffixes(void **state)
{
    (void)state;
    assert_int_equal(size_of("128"), 128);
    assert_int_equal(size_of("0"), 0);
    assert_int_equal(size_of("64K"), 65536);
    assert_int_equal(size_of("1M"), 1048576);
    assert_int_equal(size_of("2G"), 2147483648ull);
    assert_int_equal(size_of("1KiB"), 1024);
    assert_int_equal(size_of("1mib"), 1048576);
    assert_int_equal(size_of("3gIB"), 3ull << 30);
    assert_int_equal(size_of("4k"), 4096);
    assert_int_equal(size_of("18446744073709551615"), UINT64_MAX);
    assert_int_equal(size_of("17179869183G"), 17179869183ull << 30);
}

static void test_parse_size_rejects_junk_signs_space_and_overflow(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "-1",
        "+1",
        "1X",
        "K",
        " 1",
        "1 ",
        "1KB",
        "1Ki",
        "1.5K",
        "0x10",
        "99999999999G",
        "18446744073709551616",
        "17179869184G",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 7;
        if (sm_parse_size(bad[i], &v) != SM_EINVAL)
            fail_msg("\"%s\" was accepted", bad[i]);
        assert_int_equal(v, 7);
    }
}

static void test_parse_u64_reads_plain_decimals_only(void **state)
{
    (void)state;
    uint64_t v = 1;
    assert_int_equal(sm_parse_u64("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(sm_parse_u64("18446744073709551615", &v), 0);
    assert_int_equal(v, UINT64_MAX);
    static const char *const bad[] = {"", "-0", "1K", " 1", "1 ", "18446744073709551616", "1e3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (sm_parse_u64(bad[i], &v) != SM_EINVAL)
            fail_msg("\"%s\" was accepted", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_size_reads_plain_and_binary_suffixes),
        cmocka_unit_test(test_parse_size_rejects_junk_signs_space_and_overflow),
        cmocka_unit_test(test_parse_u64_reads_plain_decimals_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
