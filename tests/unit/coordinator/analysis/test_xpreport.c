/* Unit tests of an experiment's answer (coordinator/analysis/xpreport.c): the headline with and
 * without a decided reverse, the reverse's verdict words and reasons, and the reverse in the
 * answer's JSON (an object where there is one, null where there is none). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/xpreport.h"
#include "proto/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A decided estimate: share, its interval, the verdict the interval gives. */
static sm_xp_estimate est(sm_xp_verdict v, double share, double lo, double hi)
{
    sm_xp_estimate e;
    memset(&e, 0, sizeof e);
    e.verdict = v;
    e.share = share;
    e.lo = lo;
    e.hi = hi;
    e.ctrl_median = 0.0095;
    e.treat_median = 0.079;
    e.fleet_median = 0.079;
    e.n_ctrl = e.n_treat = e.n_fleet = 8;
    snprintf(e.why, sizeof e.why, "as estimated");
    return e;
}

/* One suspect, lo qdisc, tested with its reverse on h1; plus an untested one. */
static void plan_of(sm_xp_plan *p, sm_xp_suspect v[2])
{
    memset(v, 0, 2 * sizeof *v);
    snprintf(v[0].item, sizeof v[0].item, "if.lo.qdisc");
    snprintf(v[0].label, sizeof v[0].label, "lo qdisc");
    snprintf(v[0].host_value, sizeof v[0].host_value, "tbf rate 95Mbit burst 131067b limit 1Mb");
    snprintf(v[0].fleet_value, sizeof v[0].fleet_value, "noqueue");
    snprintf(v[0].treatment, sizeof v[0].treatment, "qdisc lo noqueue");
    snprintf(v[0].reverse_host, sizeof v[0].reverse_host, "h1");
    snprintf(v[0].reverse, sizeof v[0].reverse, "qdisc lo tbf rate 95Mbit burst 131067b limit 1Mb");
    snprintf(v[1].item, sizeof v[1].item, "cpu.governor");
    snprintf(v[1].label, sizeof v[1].label, "cpu governor");
    snprintf(v[1].why_untested, sizeof v[1].why_untested, "no treatment exists");
    *p = (sm_xp_plan){v, 2, 1};
}

static sm_xp_report report(const sm_xp_plan *p, const sm_xp_estimate *est,
                           const sm_xp_estimate *rev)
{
    return (sm_xp_report){.run_id = 3,
                          .parent_run = 1,
                          .host = "h2",
                          .test = "stream tcp",
                          .unit = "s",
                          .state = "done",
                          .plan = p,
                          .est = est,
                          .rev = rev,
                          .n_ctrl = 8,
                          .n_fleet = 16};
}

static void test_xpreport_a_decided_reverse_joins_the_headline(void **state)
{
    (void)state;
    sm_xp_suspect v[2];
    sm_xp_plan p;
    plan_of(&p, v);
    sm_xp_estimate e[2] = {est(SM_XP_CAUSE, 0.97, 0.95, 0.99), est(SM_XP_UNTESTED, NAN, NAN, NAN)};
    sm_xp_estimate r[2] = {est(SM_XP_CAUSE, 1.02, 0.98, 1.06), est(SM_XP_UNTESTED, NAN, NAN, NAN)};
    sm_xp_report rep = report(&p, e, r);
    char buf[512];
    sm_xp_report_summary(&rep, buf, sizeof buf);
    assert_string_equal(buf, "h2: lo qdisc is the cause: the fleet's value (noqueue) closes 97% "
                             "of the gap [95%, 99%]; confirmed on h1: h2's value opens 102% of "
                             "it [98%, 106%]");
    r[0] = est(SM_XP_NOT, 0.03, -0.05, 0.09);
    sm_xp_report_summary(&rep, buf, sizeof buf);
    assert_non_null(strstr(buf, "; not confirmed on h1: h2's value opens 3% of it [-5%, 9%]"));
    r[0] = est(SM_XP_PART, 0.4, 0.2, 0.6);
    sm_xp_report_summary(&rep, buf, sizeof buf);
    assert_non_null(strstr(buf, "; confirmed in part on h1: "));
    /* An undecided reverse, or none at all, says nothing of it. */
    r[0] = est(SM_XP_INCONCLUSIVE, 0.5, -0.2, 1.3);
    sm_xp_report_summary(&rep, buf, sizeof buf);
    assert_null(strstr(buf, "confirmed"));
    assert_true(buf[strlen(buf) - 1] == ']');
    rep.rev = NULL;
    sm_xp_report_summary(&rep, buf, sizeof buf);
    assert_null(strstr(buf, " on h1"));
}

static void test_xpreport_the_reverse_says_its_verdict_in_its_own_words(void **state)
{
    (void)state;
    assert_string_equal(sm_xp_reverse_verdict(SM_XP_CAUSE), "confirms");
    assert_string_equal(sm_xp_reverse_verdict(SM_XP_PART), "confirms in part");
    assert_string_equal(sm_xp_reverse_verdict(SM_XP_NOT), "does not confirm");
    assert_string_equal(sm_xp_reverse_verdict(SM_XP_INCONCLUSIVE), "inconclusive");
    assert_string_equal(sm_xp_reverse_verdict(SM_XP_UNTESTED), "");

    sm_xp_estimate e = est(SM_XP_CAUSE, 1.0, 0.98, 1.02);
    sm_xp_reverse_judge(&e, "h2", "h1");
    assert_string_equal(e.why, "h2's value opens most of the gap on h1: its interval [98%, "
                               "102%] reaches no lower than 50%");
    assert_int_equal(e.verdict, SM_XP_CAUSE); /* the verdict and numbers stay */
    assert_true(e.share == 1.0);
    e = est(SM_XP_NOT, 0.01, -0.04, 0.06);
    sm_xp_reverse_judge(&e, "h2", "h1");
    assert_string_equal(e.why, "h2's value opens less than a tenth of the gap on h1: its interval "
                               "[-4%, 6%] stays below 10%");
    e = est(SM_XP_NOT, 0.05, -0.04, 0.36);
    sm_xp_reverse_judge(&e, "h2", "h1");
    assert_non_null(
        strstr(e.why, "h2's value does not open the gap on h1: its interval [-4%, 36%]"));
    e = est(SM_XP_INCONCLUSIVE, 0.5, -0.1, 1.1);
    sm_xp_reverse_judge(&e, "h2", "h1");
    assert_non_null(strstr(e.why, "is too wide to decide"));
    e = est(SM_XP_INCONCLUSIVE, NAN, NAN, NAN);
    sm_xp_reverse_judge(&e, "h2", "h1");
    assert_non_null(strstr(e.why, "h1 and h2 do not stand apart in this experiment"));
    e = est(SM_XP_INCONCLUSIVE, NAN, NAN, NAN);
    e.n_ctrl = 2;
    sm_xp_reverse_judge(&e, "h2", "h1");
    assert_string_equal(e.why, "too few samples: h1's control 2, with h2's value 8, h2's control "
                               "8 (each group needs 3)");
}

static void test_xpreport_the_json_has_the_reverse_where_there_is_one(void **state)
{
    (void)state;
    sm_xp_suspect v[2];
    sm_xp_plan p;
    plan_of(&p, v);
    snprintf(v[1].why_no_reverse, sizeof v[1].why_no_reverse, "untested");
    sm_xp_estimate e[2] = {est(SM_XP_CAUSE, 0.97, 0.95, 0.99), est(SM_XP_UNTESTED, NAN, NAN, NAN)};
    sm_xp_estimate r[2] = {est(SM_XP_CAUSE, 1.02, 0.98, 1.06), est(SM_XP_UNTESTED, NAN, NAN, NAN)};
    sm_xp_report rep = report(&p, e, r);
    char *j = sm_xp_report_json(&rep);
    assert_non_null(j);
    cJSON *doc = cJSON_Parse(j);
    assert_non_null(doc);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "suspects");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(list, 0), "reverse");
    assert_true(cJSON_IsObject(rv));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rv, "host")), "h1");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rv, "verdict")),
                        "confirms");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rv, "treatment")),
                        "qdisc lo tbf rate 95Mbit burst 131067b limit 1Mb");
    assert_true(cJSON_GetObjectItemCaseSensitive(rv, "lo")->valuedouble == 0.98);
    assert_true(cJSON_GetObjectItemCaseSensitive(rv, "odd_median")->valuedouble == 0.079);
    const cJSON *s1 = cJSON_GetArrayItem(list, 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(s1, "reverse")));
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s1, "why_no_reverse")), "untested");
    /* The cause carries its reverse too. */
    const cJSON *cause = cJSON_GetObjectItemCaseSensitive(doc, "cause");
    assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cause, "reverse")));
    cJSON_Delete(doc);
    free(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xpreport_a_decided_reverse_joins_the_headline),
        cmocka_unit_test(test_xpreport_the_reverse_says_its_verdict_in_its_own_words),
        cmocka_unit_test(test_xpreport_the_json_has_the_reverse_where_there_is_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
