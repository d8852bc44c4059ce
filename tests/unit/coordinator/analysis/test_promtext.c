/* Unit tests of the Prometheus text format (promtext.c): label escaping, HELP and TYPE once per
 * family, the value notation, and the exact text of a small exposition. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/analysis/promtext.h"
#include "proto/err.h"

static void test_prom_escapes_backslash_quote_and_newline_in_label_values(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(sm_prom_escape("a\\b\"c\nd", out, sizeof out), 10);
    assert_string_equal(out, "a\\\\b\\\"c\\nd");
    /* truncated, still terminated, the full length returned */
    assert_int_equal(sm_prom_escape("a\"b", out, 3), 4);
    assert_string_equal(out, "a\\");
}

static void test_prom_writes_the_exact_exposition_text(void **state)
{
    (void)state;
    sm_prom p;
    sm_prom_init(&p);
    assert_int_equal(sm_prom_family(&p, "sm_x_total", "counter", "Things \\ seen.\nTwice"), 0);
    const char *keys[] = {"host", "test"};
    const char *vals[] = {"h\"1", "a\\b\nc"};
    sm_prom_sample(&p, "sm_x_total", keys, vals, 2, 3);
    sm_prom_sample(&p, "sm_x_total", NULL, NULL, 0, 0.1);
    assert_int_equal(sm_prom_family(&p, "sm_y", "gauge", "Quote \" kept."), 0);
    sm_prom_sample(&p, "sm_y", NULL, NULL, 0, NAN);
    sm_prom_sample(&p, "sm_y", NULL, NULL, 0, INFINITY);
    sm_prom_sample(&p, "sm_y", NULL, NULL, 0, -INFINITY);
    sm_prom_sample(&p, "sm_y", NULL, NULL, 0, 1e21);
    sm_prom_comment(&p, "at most\n5");
    size_t len = 0;
    char *text = sm_prom_take(&p, &len);
    assert_non_null(text);
    assert_string_equal(text, "# HELP sm_x_total Things \\\\ seen.\\nTwice\n"
                              "# TYPE sm_x_total counter\n"
                              "sm_x_total{host=\"h\\\"1\",test=\"a\\\\b\\nc\"} 3\n"
                              "sm_x_total 0.1\n"
                              "# HELP sm_y Quote \" kept.\n"
                              "# TYPE sm_y gauge\n"
                              "sm_y NaN\n"
                              "sm_y +Inf\n"
                              "sm_y -Inf\n"
                              "sm_y 1e+21\n"
                              "# at most 5\n");
    assert_int_equal(len, strlen(text));
    free(text);
}

static void test_prom_values_read_back_exactly(void **state)
{
    (void)state;
    const double vs[] = {0.1 + 0.2, 1.0 / 3.0, 0.04505, 123456789012345678.0, -2.5e-300};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        sm_prom p;
        sm_prom_init(&p);
        sm_prom_sample(&p, "v", NULL, NULL, 0, vs[i]);
        size_t len;
        char *text = sm_prom_take(&p, &len);
        assert_non_null(text);
        assert_true(strtod(text + 2, NULL) == vs[i]);
        free(text);
    }
}

static void test_prom_refuses_a_family_declared_twice_or_misnamed(void **state)
{
    (void)state;
    sm_prom p;
    sm_prom_init(&p);
    assert_int_equal(sm_prom_family(&p, "sm_a", "gauge", "A."), 0);
    assert_int_equal(sm_prom_family(&p, "sm_a", "gauge", "A again."), SM_EINVAL);
    assert_int_equal(sm_prom_family(&p, "9lives", "gauge", "Bad."), SM_EINVAL);
    assert_int_equal(sm_prom_family(&p, "sm-dash", "gauge", "Bad."), SM_EINVAL);
    assert_int_equal(sm_prom_family(&p, "", "gauge", "Bad."), SM_EINVAL);
    size_t len;
    char *text = sm_prom_take(&p, &len);
    assert_string_equal(text, "# HELP sm_a A.\n# TYPE sm_a gauge\n");
    free(text);
}

static void test_prom_take_of_nothing_is_an_empty_text(void **state)
{
    (void)state;
    sm_prom p;
    sm_prom_init(&p);
    size_t len = 7;
    char *text = sm_prom_take(&p, &len);
    assert_string_equal(text, "");
    assert_int_equal(len, 0);
    free(text);
    sm_prom_fini(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prom_escapes_backslash_quote_and_newline_in_label_values),
        cmocka_unit_test(test_prom_writes_the_exact_exposition_text),
        cmocka_unit_test(test_prom_values_read_back_exactly),
        cmocka_unit_test(test_prom_refuses_a_family_declared_twice_or_misnamed),
        cmocka_unit_test(test_prom_take_of_nothing_is_an_empty_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
