/* Unit tests of RFC 4180 fields (proto/csv.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proto/csv.h"

#include <string.h>

typedef struct out {
    char text[128];
    size_t len;
    int calls;
} out;

static void put(void *arg, const char *p, size_t n)
{
    out *o = arg;
    assert_true(o->len + n < sizeof o->text);
    memcpy(o->text + o->len, p, n);
    o->len += n;
    o->text[o->len] = '\0';
    o->calls++;
}

static const char *field(out *o, const char *s, size_t n)
{
    memset(o, 0, sizeof *o);
    sm_csv_field(s, n, put, o);
    return o->text;
}

static void test_csv_plain_text_goes_out_as_it_is_in_one_piece(void **state)
{
    (void)state;
    out o;
    assert_string_equal(field(&o, "tcp+nodelay h1 128 B", 20), "tcp+nodelay h1 128 B");
    assert_int_equal(o.calls, 1);
    assert_string_equal(field(&o, "", 0), "");
}

static void test_csv_comma_quote_cr_and_lf_each_make_a_quoted_field(void **state)
{
    (void)state;
    out o;
    assert_string_equal(field(&o, "a,b", 3), "\"a,b\"");
    assert_string_equal(field(&o, "a\rb", 3), "\"a\rb\"");
    assert_string_equal(field(&o, "a\nb", 3), "\"a\nb\"");
    assert_string_equal(field(&o, "say \"hi\"", 8), "\"say \"\"hi\"\"\"");
    assert_string_equal(field(&o, "\"", 1), "\"\"\"\"");
    assert_string_equal(field(&o, "x\"\"y", 4), "\"x\"\"\"\"y\"");
}

static void test_csv_reads_no_further_than_n(void **state)
{
    (void)state;
    out o;
    /* The comma past n does not count, and no NUL is needed. */
    const char fixed[4] = {'a', 'b', 'c', ','};
    assert_string_equal(field(&o, fixed, 3), "abc");
    assert_string_equal(field(&o, "a\"b,c", 3), "\"a\"\"b\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_plain_text_goes_out_as_it_is_in_one_piece),
        cmocka_unit_test(test_csv_comma_quote_cr_and_lf_each_make_a_quoted_field),
        cmocka_unit_test(test_csv_reads_no_further_than_n),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
