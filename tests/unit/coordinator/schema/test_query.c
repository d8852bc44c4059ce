/* Unit tests of the API's query-string helpers (query.c): pairs, percent escapes, '+', NUL,
 * empty and too long values, repeated keys and the integers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "coordinator/schema/query.h"

static void test_query_next_splits_pieces_at_ampersands_and_keys_at_the_first_equals(void **state)
{
    (void)state;
    const char *c = "a=1&b&&c=x=y";
    sm_query_pair p;
    assert_true(sm_query_next(&c, &p));
    assert_int_equal(p.klen, 1);
    assert_memory_equal(p.key, "a", 1);
    assert_true(p.has_val);
    assert_int_equal(p.vlen, 1);
    assert_memory_equal(p.val, "1", 1);
    assert_true(sm_query_next(&c, &p));
    assert_int_equal(p.klen, 1);
    assert_memory_equal(p.key, "b", 1);
    assert_false(p.has_val);
    assert_int_equal(p.vlen, 0);
    assert_true(sm_query_next(&c, &p));
    assert_int_equal(p.klen, 0);
    assert_false(p.has_val);
    assert_true(sm_query_next(&c, &p));
    assert_int_equal(p.klen, 1);
    assert_int_equal(p.vlen, 3);
    assert_memory_equal(p.val, "x=y", 3);
    assert_false(sm_query_next(&c, &p));
    const char *none = NULL, *empty = "";
    assert_false(sm_query_next(&none, &p));
    assert_false(sm_query_next(&empty, &p));
}

static void test_query_find_takes_the_first_of_repeated_keys_and_whole_names_only(void **state)
{
    (void)state;
    const char *v;
    size_t n;
    assert_true(sm_query_find("hostx=1&host=a&host=b", "host", &v, &n));
    assert_int_equal(n, 1);
    assert_memory_equal(v, "a", 1);
    assert_true(sm_query_find("x=1&host=", "host", &v, &n));
    assert_int_equal(n, 0);
    assert_false(sm_query_find("host&x=1", "host", &v, &n));
    assert_false(sm_query_find("ho=1", "host", &v, &n));
    assert_false(sm_query_find(NULL, "host", &v, &n));
    assert_false(sm_query_find("", "host", &v, &n));
}

static void test_query_get_decodes_percent_escapes_and_keeps_plus(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(sm_query_get("test=stream%20tcp+nodelay%2c%2C&x=1", "test", buf, sizeof buf),
                     1);
    assert_string_equal(buf, "stream tcp+nodelay,,");
    assert_int_equal(sm_query_get("a->b=1&host=a-%3Eb", "host", buf, sizeof buf), 1);
    assert_string_equal(buf, "a->b");
    assert_int_equal(sm_query_get("host=", "host", buf, sizeof buf), 1);
    assert_string_equal(buf, "");
    assert_int_equal(sm_query_get("x=1", "host", buf, sizeof buf), 0);
}

static void test_query_get_refuses_bad_escapes_nul_and_values_too_long(void **state)
{
    (void)state;
    char buf[4];
    assert_int_equal(sm_query_get("h=%", "h", buf, sizeof buf), -1);
    assert_int_equal(sm_query_get("h=%4", "h", buf, sizeof buf), -1);
    assert_int_equal(sm_query_get("h=%4&x=1", "h", buf, sizeof buf), -1);
    assert_int_equal(sm_query_get("h=%G1", "h", buf, sizeof buf), -1);
    assert_int_equal(sm_query_get("h=%1g", "h", buf, sizeof buf), -1);
    assert_int_equal(sm_query_get("h=a%00b", "h", buf, sizeof buf), -1);
    /* cap 4 holds 3 characters: an escape counts once decoded. */
    assert_int_equal(sm_query_get("h=abc", "h", buf, sizeof buf), 1);
    assert_string_equal(buf, "abc");
    assert_int_equal(sm_query_get("h=a%41c", "h", buf, sizeof buf), 1);
    assert_string_equal(buf, "aAc");
    assert_int_equal(sm_query_get("h=abcd", "h", buf, sizeof buf), -1);
    assert_int_equal(sm_query_decode("", 0, buf, 0), -1);
}

static void test_parse_int_takes_plain_digits_within_the_bounds(void **state)
{
    (void)state;
    int64_t v = -1;
    assert_true(sm_query_int("0", 0, 10, &v));
    assert_int_equal(v, 0);
    assert_true(sm_query_int("10", 1, 10, &v));
    assert_int_equal(v, 10);
    v = 7;
    assert_false(sm_query_int("11", 1, 10, &v));
    assert_false(sm_query_int("0", 1, 10, &v));
    assert_false(sm_query_int("", 0, 10, &v));
    assert_false(sm_query_int("-1", -5, 10, &v));
    assert_false(sm_query_int("+1", 0, 10, &v));
    assert_false(sm_query_int(" 1", 0, 10, &v));
    assert_false(sm_query_int("1x", 0, 10, &v));
    assert_false(sm_query_int("99999999999999999999", 0, INT64_MAX, &v));
    assert_int_equal(v, 7);
    assert_true(sm_query_int("9223372036854775807", 0, INT64_MAX, &v));
    assert_true(v == INT64_MAX);
}

static void test_query_id_takes_digits_up_to_uint64_max_and_nothing_else(void **state)
{
    (void)state;
    uint64_t id = 7;
    assert_true(sm_query_id("42", 2, &id));
    assert_int_equal(id, 42);
    assert_true(sm_query_id("4211", 2, &id)); /* only text[0..len) is read */
    assert_int_equal(id, 42);
    assert_true(sm_query_id("18446744073709551615", 20, &id));
    assert_true(id == UINT64_MAX);
    id = 7;
    static const char *const bad[] = {
        "",   "18446744073709551616", "99999999999999999999999", "-1", "+1", " 1", "1 ", "0x10",
        "1e3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(sm_query_id(bad[i], strlen(bad[i]), &id));
        assert_int_equal(id, 7);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_next_splits_pieces_at_ampersands_and_keys_at_the_first_equals),
        cmocka_unit_test(test_query_find_takes_the_first_of_repeated_keys_and_whole_names_only),
        cmocka_unit_test(test_query_get_decodes_percent_escapes_and_keeps_plus),
        cmocka_unit_test(test_query_get_refuses_bad_escapes_nul_and_values_too_long),
        cmocka_unit_test(test_parse_int_takes_plain_digits_within_the_bounds),
        cmocka_unit_test(test_query_id_takes_digits_up_to_uint64_max_and_nothing_else),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
