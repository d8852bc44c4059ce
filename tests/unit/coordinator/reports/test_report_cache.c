/* Unit tests of the cache of ended runs' reports (coordinator/reports/cache.c): a hit hands back
 * a copy, the least recently asked run makes room, a run keeps its 8 newest reports, and a
 * changed run drops its own reports and the anomalies that took it as their baseline, and a
 * report computed across an invalidation that would drop it is not kept. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/reports/cache.h"

static const char *const JSON = "application/json";

static void put(sm_report_cache **c, uint64_t run, const char *key, uint64_t base, const char *body)
{
    sm_report_cache_put(c, sm_report_cache_since(*c), run, key, base, body, strlen(body), JSON);
}

/* 1 and the body when (run, key) is cached, 0 when not. */
static int get(sm_report_cache *c, uint64_t run, const char *key, char *out, size_t cap)
{
    char *body = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    int rc = sm_report_cache_get(c, run, key, &body, &len, &ctype);
    if (rc == 1) {
        assert_ptr_equal(ctype, JSON);
        assert_int_equal(len, strlen(body));
        snprintf(out, cap, "%s", body);
        free(body);
    }
    return rc;
}

static void test_report_cache_hands_back_a_copy_of_what_was_put(void **state)
{
    (void)state;
    sm_report_cache *c = NULL;
    char buf[64];
    assert_int_equal(get(c, 7, "table?", buf, sizeof buf), 0); /* no cache yet: a miss */
    char body[] = "{\"a\":1}";
    put(&c, 7, "table?", 0, body);
    assert_non_null(c);
    body[2] = 'b'; /* the cache kept its own copy */
    assert_int_equal(get(c, 7, "table?", buf, sizeof buf), 1);
    assert_string_equal(buf, "{\"a\":1}");
    assert_int_equal(get(c, 7, "table?format=csv", buf, sizeof buf), 0);
    assert_int_equal(get(c, 8, "table?", buf, sizeof buf), 0);
    sm_report_cache_free(c);
    sm_report_cache_free(NULL);
}

static void test_report_cache_drops_the_least_recently_asked_run_when_full(void **state)
{
    (void)state;
    sm_report_cache *c = NULL;
    char buf[64];
    const uint64_t full = SM_REPORT_CACHE_RUNS;
    for (uint64_t run = 1; run <= full; run++)
        put(&c, run, "table?", 0, "t");
    /* Asking for run 1 makes run 2 the least recently used. */
    assert_int_equal(get(c, 1, "table?", buf, sizeof buf), 1);
    put(&c, full + 1, "table?", 0, "new");
    assert_int_equal(get(c, 2, "table?", buf, sizeof buf), 0);
    assert_int_equal(get(c, 1, "table?", buf, sizeof buf), 1);
    for (uint64_t run = 3; run <= full + 1; run++)
        assert_int_equal(get(c, run, "table?", buf, sizeof buf), 1);
    sm_report_cache_free(c);
}

static void test_report_cache_keeps_eight_reports_a_run_dropping_the_oldest(void **state)
{
    (void)state;
    sm_report_cache *c = NULL;
    char key[32], buf[64];
    for (int i = 0; i < 9; i++) {
        snprintf(key, sizeof key, "table?floor=0.%d", i + 1);
        put(&c, 5, key, 0, key);
    }
    assert_int_equal(get(c, 5, "table?floor=0.1", buf, sizeof buf), 0);
    for (int i = 1; i < 9; i++) {
        snprintf(key, sizeof key, "table?floor=0.%d", i + 1);
        assert_int_equal(get(c, 5, key, buf, sizeof buf), 1);
        assert_string_equal(buf, key);
    }
    sm_report_cache_free(c);
}

static void test_report_cache_run_changed_drops_its_reports_and_anomalies_against_it(void **state)
{
    (void)state;
    sm_report_cache *c = NULL;
    char buf[64];
    put(&c, 5, "table?", 0, "t5");
    put(&c, 5, "anomalies?", 0, "a5");
    put(&c, 6, "table?", 0, "t6");
    put(&c, 6, "anomalies?", 0, "a6 default baseline");
    put(&c, 6, "anomalies?baseline=5", 5, "a6 against 5");
    put(&c, 6, "anomalies?baseline=4", 4, "a6 against 4");
    put(&c, 4, "anomalies?", 0, "a4: 5 is later, not its baseline");
    sm_report_cache_run_changed(c, 5);
    assert_int_equal(get(c, 5, "table?", buf, sizeof buf), 0);
    assert_int_equal(get(c, 5, "anomalies?", buf, sizeof buf), 0);
    assert_int_equal(get(c, 6, "anomalies?", buf, sizeof buf), 0);
    assert_int_equal(get(c, 6, "anomalies?baseline=5", buf, sizeof buf), 0);
    /* A table takes no baseline, another named baseline is not run 5, nor is a later run an
     * earlier run's default baseline. */
    assert_int_equal(get(c, 6, "table?", buf, sizeof buf), 1);
    assert_int_equal(get(c, 6, "anomalies?baseline=4", buf, sizeof buf), 1);
    assert_string_equal(buf, "a6 against 4");
    assert_int_equal(get(c, 4, "anomalies?", buf, sizeof buf), 1);
    sm_report_cache_run_changed(c, 0); /* no run: nothing */
    sm_report_cache_run_changed(NULL, 6);
    assert_int_equal(get(c, 6, "table?", buf, sizeof buf), 1);
    sm_report_cache_free(c);
}

/* A report computed from generation since (read before its store reads), put back after an
 * invalidation that would have dropped it: its reads may predate the change, so it is not kept;
 * an unrelated invalidation does not keep it out. */
static void test_report_cache_keeps_no_report_computed_across_its_invalidation(void **state)
{
    (void)state;
    sm_report_cache *c = NULL;
    assert_int_equal(sm_report_cache_new(&c, false), 0);
    char buf[64];
    const uint64_t since = sm_report_cache_since(c);
    sm_report_cache_run_changed(c, 5);
    sm_report_cache_put(&c, since, 5, "table?", 0, "old t5", 6, JSON);
    sm_report_cache_put(&c, since, 6, "anomalies?", 0, "old a6", 6, JSON); /* 5: its default */
    sm_report_cache_put(&c, since, 6, "table?", 0, "t6", 2, JSON);
    sm_report_cache_put(&c, since, 4, "anomalies?", 0, "a4", 2, JSON);
    assert_int_equal(get(c, 5, "table?", buf, sizeof buf), 0);
    assert_int_equal(get(c, 6, "anomalies?", buf, sizeof buf), 0);
    assert_int_equal(get(c, 6, "table?", buf, sizeof buf), 1);
    assert_int_equal(get(c, 4, "anomalies?", buf, sizeof buf), 1);
    /* Begun after it: kept. */
    put(&c, 5, "table?", 0, "new t5");
    assert_int_equal(get(c, 5, "table?", buf, sizeof buf), 1);
    assert_string_equal(buf, "new t5");
    /* Begun more invalidations ago than are remembered: not kept, whatever run they named. */
    const uint64_t old = sm_report_cache_since(c);
    for (uint64_t i = 0; i <= SM_REPORT_CACHE_CHANGES; i++)
        sm_report_cache_run_changed(c, 1000 + i);
    sm_report_cache_put(&c, old, 7, "table?", 0, "t7", 2, JSON);
    assert_int_equal(get(c, 7, "table?", buf, sizeof buf), 0);
    sm_report_cache_free(c);
}

/* A deferred cache: an invalidation made inside the writer's transaction counts against every
 * report begun before sm_report_cache_settle says it committed, since those may read the rows
 * from before the commit. */
static void test_report_cache_deferred_checks_reports_begun_before_the_commit(void **state)
{
    (void)state;
    sm_report_cache *c = NULL;
    assert_int_equal(sm_report_cache_new(&c, true), 0);
    char buf[64];
    sm_report_cache_run_changed(c, 5); /* in the writer's transaction */
    const uint64_t before_commit = sm_report_cache_since(c);
    sm_report_cache_put(&c, before_commit, 5, "table?", 0, "pre-commit t5", 13, JSON);
    assert_int_equal(get(c, 5, "table?", buf, sizeof buf), 0);
    sm_report_cache_settle(c); /* committed */
    const uint64_t after = sm_report_cache_since(c);
    assert_true(after > before_commit);
    sm_report_cache_put(&c, after, 5, "table?", 0, "t5", 2, JSON);
    assert_int_equal(get(c, 5, "table?", buf, sizeof buf), 1);
    assert_string_equal(buf, "t5");
    sm_report_cache_settle(NULL);
    assert_int_equal(sm_report_cache_since(NULL), 0);
    sm_report_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_cache_hands_back_a_copy_of_what_was_put),
        cmocka_unit_test(test_report_cache_drops_the_least_recently_asked_run_when_full),
        cmocka_unit_test(test_report_cache_keeps_eight_reports_a_run_dropping_the_oldest),
        cmocka_unit_test(test_report_cache_run_changed_drops_its_reports_and_anomalies_against_it),
        cmocka_unit_test(test_report_cache_keeps_no_report_computed_across_its_invalidation),
        cmocka_unit_test(test_report_cache_deferred_checks_reports_begun_before_the_commit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
