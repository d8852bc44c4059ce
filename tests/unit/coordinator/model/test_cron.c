/* Unit tests of cron expressions and intervals (coordinator/model/cron.c): each field's forms, the
 * day-of-month / day-of-week rule, month ends and leap years, and every refusal naming its
 * field. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include "coordinator/model/cron.h"

/* ms of a UTC date and time */
static int64_t utc(int y, int mo, int d, int h, int mi)
{
    struct tm tm = {
        .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi};
    return (int64_t)timegm(&tm) * 1000;
}

static int64_t next_of(const char *expr, int64_t after)
{
    sm_cron c;
    sm_error err = {0};
    if (sm_cron_parse(expr, &c, &err) != 0)
        fail_msg("%s: %s", expr, err.msg);
    return sm_cron_next(&c, after);
}

static void test_cron_daily_fires_at_its_hour_strictly_after(void **state)
{
    (void)state;
    assert_int_equal(next_of("0 3 * * *", utc(2026, 5, 1, 2, 59)), utc(2026, 5, 1, 3, 0));
    /* exactly at a firing: the next one, not the same */
    assert_int_equal(next_of("0 3 * * *", utc(2026, 5, 1, 3, 0)), utc(2026, 5, 2, 3, 0));
    /* seconds into a firing minute count as after it */
    assert_int_equal(next_of("0 3 * * *", utc(2026, 5, 1, 3, 0) + 1500), utc(2026, 5, 2, 3, 0));
    assert_int_equal(next_of("* * * * *", utc(2026, 5, 1, 3, 0) + 1), utc(2026, 5, 1, 3, 1));
}

static void test_cron_steps_ranges_and_lists(void **state)
{
    (void)state;
    assert_int_equal(next_of("*/15 * * * *", utc(2026, 5, 1, 10, 16)), utc(2026, 5, 1, 10, 30));
    assert_int_equal(next_of("*/15 * * * *", utc(2026, 5, 1, 10, 50)), utc(2026, 5, 1, 11, 0));
    assert_int_equal(next_of("10-20/5 * * * *", utc(2026, 5, 1, 10, 16)), utc(2026, 5, 1, 10, 20));
    assert_int_equal(next_of("10-20/5 * * * *", utc(2026, 5, 1, 10, 20)), utc(2026, 5, 1, 11, 10));
    assert_int_equal(next_of("5,35 9-17 * * *", utc(2026, 5, 1, 17, 40)), utc(2026, 5, 2, 9, 5));
    assert_int_equal(next_of("0 0 1,15 * *", utc(2026, 5, 2, 0, 0)), utc(2026, 5, 15, 0, 0));
    /* "5/20": from 5 to the end by 20 */
    assert_int_equal(next_of("5/20 * * * *", utc(2026, 5, 1, 10, 30)), utc(2026, 5, 1, 10, 45));
}

static void test_cron_day_of_week_and_day_of_month(void **state)
{
    (void)state;
    /* 2026-05-01 is a Friday; Monday is 2026-05-04 */
    assert_int_equal(next_of("30 6 * * 1", utc(2026, 5, 1, 0, 0)), utc(2026, 5, 4, 6, 30));
    /* 7 is Sunday too */
    assert_int_equal(next_of("0 0 * * 7", utc(2026, 5, 1, 0, 0)), utc(2026, 5, 3, 0, 0));
    assert_int_equal(next_of("0 0 * * 0", utc(2026, 5, 1, 0, 0)), utc(2026, 5, 3, 0, 0));
    /* both restricted: either matches (the 10th, or a Monday first) */
    assert_int_equal(next_of("0 0 10 * 1", utc(2026, 5, 1, 0, 0)), utc(2026, 5, 4, 0, 0));
    assert_int_equal(next_of("0 0 10 * 1", utc(2026, 5, 4, 0, 0)), utc(2026, 5, 10, 0, 0));
    /* day-of-week starred with a step: both must match */
    assert_int_equal(next_of("0 0 10 * */1", utc(2026, 5, 1, 0, 0)), utc(2026, 5, 10, 0, 0));
}

static void test_cron_month_ends_and_leap_years(void **state)
{
    (void)state;
    /* the 31st skips the months without one */
    assert_int_equal(next_of("0 0 31 * *", utc(2026, 4, 1, 0, 0)), utc(2026, 5, 31, 0, 0));
    assert_int_equal(next_of("0 0 31 * *", utc(2026, 5, 31, 0, 0)), utc(2026, 7, 31, 0, 0));
    /* 29 February: only in leap years */
    assert_int_equal(next_of("0 12 29 2 *", utc(2026, 3, 1, 0, 0)), utc(2028, 2, 29, 12, 0));
    /* the year turns over */
    assert_int_equal(next_of("0 0 1 1 *", utc(2026, 12, 31, 23, 59)), utc(2027, 1, 1, 0, 0));
    /* a day that never comes */
    assert_int_equal(next_of("0 0 30 2 *", utc(2026, 1, 1, 0, 0)), -1);
    /* 1 March on a Sunday ("*" + step: both day fields must match): from 2026-12-02 the next
     * is 2037, past the 8-year search, though it is a day that comes */
    assert_int_equal(next_of("0 0 */31 3 0", utc(2026, 12, 2, 12, 0)), -1);
    assert_int_equal(next_of("0 0 */31 3 0", utc(2030, 1, 1, 0, 0)), utc(2037, 3, 1, 0, 0));
}

static void expect_cron_error(const char *expr, const char *has)
{
    sm_cron c;
    sm_error err = {0};
    assert_int_equal(sm_cron_parse(expr, &c, &err), SM_EINVAL);
    assert_string_equal(err.field, "cron");
    if (!strstr(err.msg, has))
        fail_msg("%s: \"%s\" does not say \"%s\"", expr, err.msg, has);
}

static void test_cron_errors_name_the_field(void **state)
{
    (void)state;
    expect_cron_error("", "5 fields");
    expect_cron_error("0 3 * *", "4 fields");
    expect_cron_error("0 3 * * * *", "6 fields");
    expect_cron_error("60 3 * * *", "minute field \"60\": values are 0-59");
    expect_cron_error("0 24 * * *", "hour field \"24\": values are 0-23");
    expect_cron_error("0 0 0 * *", "day-of-month field \"0\": values are 1-31");
    expect_cron_error("0 0 * 13 *", "month field \"13\"");
    expect_cron_error("0 0 * * 8", "day-of-week field \"8\"");
    expect_cron_error("0 0 * jan *", "month field \"jan\": expected a number");
    expect_cron_error("*/0 * * * *", "minute field \"*/0\": a step needs");
    expect_cron_error("0 5-2 * * *", "hour field \"5-2\": a range must go upwards");
    expect_cron_error("0 1- * * *", "hour field \"1-\"");
    expect_cron_error("0 1,,2 * * *", "hour field");
}

static void test_every_takes_seconds_and_units(void **state)
{
    (void)state;
    uint32_t s = 0;
    sm_error err = {0};
    assert_int_equal(sm_every_parse("90", &s, &err), 0);
    assert_int_equal(s, 90);
    assert_int_equal(sm_every_parse("30s", &s, &err), 0);
    assert_int_equal(s, 30);
    assert_int_equal(sm_every_parse("15m", &s, &err), 0);
    assert_int_equal(s, 900);
    assert_int_equal(sm_every_parse("6h", &s, &err), 0);
    assert_int_equal(s, 21600);
    assert_int_equal(sm_every_parse("1d", &s, &err), 0);
    assert_int_equal(s, 86400);
    assert_int_equal(sm_every_parse("10", &s, &err), 0);
    assert_int_equal(s, 10);
}

static void expect_every_error(const char *text, const char *has)
{
    uint32_t s = 7;
    sm_error err = {0};
    assert_int_equal(sm_every_parse(text, &s, &err), SM_EINVAL);
    assert_int_equal(s, 7);
    assert_string_equal(err.field, "every");
    if (!strstr(err.msg, has))
        fail_msg("%s: \"%s\" does not say \"%s\"", text, err.msg, has);
}

static void test_every_refuses_short_long_and_unknown(void **state)
{
    (void)state;
    expect_every_error("9", "under the minimum of 10 s");
    expect_every_error("5s", "under the minimum of 10 s");
    expect_every_error("0m", "under the minimum");
    expect_every_error("367d", "longer than a year");
    expect_every_error("99999999999999999999d", "longer than a year");
    expect_every_error("15 m", "not seconds nor a number with s, m, h or d");
    expect_every_error("1w", "not seconds");
    expect_every_error("-5m", "not seconds");
    expect_every_error("", "empty");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cron_daily_fires_at_its_hour_strictly_after),
        cmocka_unit_test(test_cron_steps_ranges_and_lists),
        cmocka_unit_test(test_cron_day_of_week_and_day_of_month),
        cmocka_unit_test(test_cron_month_ends_and_leap_years),
        cmocka_unit_test(test_cron_errors_name_the_field),
        cmocka_unit_test(test_every_takes_seconds_and_units),
        cmocka_unit_test(test_every_refuses_short_long_and_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
