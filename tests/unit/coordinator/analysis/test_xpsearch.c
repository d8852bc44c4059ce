/* Unit tests of narrowing a combination down (coordinator/analysis/xpsearch.c): which
 * suspects a search runs over, the masks of stage treatments, the stage plans, and a whole
 * search driven to its end over a synthetic two-setting interaction. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/xpsearch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A first experiment's plan: four singles and their combination, as sm_xp_plan_make makes it. */
static const char *const ITEMS[4] = {"sysctl.net.ipv4.tcp_rmem", "sysctl.net.core.somaxconn",
                                     "if.lo.qdisc", "sysctl.net.ipv4.tcp_keepalive_time"};
static const char *const LABELS[4] = {"net.ipv4.tcp_rmem", "net.core.somaxconn", "lo qdisc",
                                      "net.ipv4.tcp_keepalive_time"};
static const char *const TREATS[4] = {"sysctl net.ipv4.tcp_rmem=4096 131072 6291456",
                                      "sysctl net.core.somaxconn=4096", "qdisc lo noqueue",
                                      "sysctl net.ipv4.tcp_keepalive_time=7200"};

static void head_of(sm_xp_plan *p, sm_xp_suspect v[5], sm_xp_estimate e[5], sm_xp_verdict single,
                    sm_xp_verdict combo)
{
    memset(v, 0, 5 * sizeof *v);
    memset(e, 0, 5 * sizeof *e);
    size_t at = 0;
    for (size_t i = 0; i < 4; i++) {
        snprintf(v[i].item, sizeof v[i].item, "%s", ITEMS[i]);
        snprintf(v[i].label, sizeof v[i].label, "%s", LABELS[i]);
        snprintf(v[i].host_value, sizeof v[i].host_value, "h%zu", i);
        snprintf(v[i].fleet_value, sizeof v[i].fleet_value, "f%zu", i);
        snprintf(v[i].treatment, sizeof v[i].treatment, "%s", TREATS[i]);
        at += (size_t)snprintf(v[4].treatment + at, sizeof v[4].treatment - at, "%s%s",
                               i ? "; " : "", TREATS[i]);
        e[i].verdict = single;
    }
    snprintf(v[4].label, sizeof v[4].label, "the 4 suspects together");
    e[4].verdict = combo;
    *p = (sm_xp_plan){v, 5, 5};
}

static void test_xpsearch_starts_only_when_the_combination_alone_closes(void **state)
{
    (void)state;
    sm_xp_suspect v[5];
    sm_xp_estimate e[5];
    sm_xp_plan head;
    sm_xp_search s;
    head_of(&head, v, e, SM_XP_NOT, SM_XP_CAUSE);
    assert_true(sm_xp_search_start(&s, &head, e));
    assert_int_equal(s.k, 4);
    for (size_t b = 0; b < 4; b++) {
        assert_int_equal(s.idx[b], b);
        assert_int_equal(s.known[1u << b], SM_XP_DD_NOT);
    }
    assert_int_equal(s.known[15], SM_XP_DD_CLOSES);
    assert_int_equal(s.known[3], SM_XP_DD_UNKNOWN);
    /* An inconclusive single is unresolved, not "not". */
    e[1].verdict = SM_XP_INCONCLUSIVE;
    assert_true(sm_xp_search_start(&s, &head, e));
    assert_int_equal(s.known[2], SM_XP_DD_UNRESOLVED);
    /* A single that is the cause itself, or a combination that is not: nothing to narrow. */
    e[2].verdict = SM_XP_CAUSE;
    assert_false(sm_xp_search_start(&s, &head, e));
    head_of(&head, v, e, SM_XP_NOT, SM_XP_PART);
    assert_false(sm_xp_search_start(&s, &head, e));
    /* A combination with a part that is no single's treatment. */
    head_of(&head, v, e, SM_XP_NOT, SM_XP_CAUSE);
    snprintf(v[4].treatment, sizeof v[4].treatment, "qdisc lo noqueue; socket nodelay=1");
    assert_false(sm_xp_search_start(&s, &head, e));
    assert_false(sm_xp_search_start(&s, NULL, e));
}

static void test_xpsearch_masks_and_stage_plans(void **state)
{
    (void)state;
    sm_xp_suspect v[5];
    sm_xp_estimate e[5];
    sm_xp_plan head;
    sm_xp_search s;
    head_of(&head, v, e, SM_XP_NOT, SM_XP_CAUSE);
    assert_true(sm_xp_search_start(&s, &head, e));
    assert_int_equal(sm_xp_search_mask(&s, &head, "qdisc lo noqueue"), 4);
    assert_int_equal(sm_xp_search_mask(&s, &head,
                                       "sysctl net.ipv4.tcp_rmem=4096 131072 6291456; qdisc lo "
                                       "noqueue"),
                     5);
    assert_int_equal(sm_xp_search_mask(&s, &head, "qdisc lo noqueue; qdisc lo noqueue"), 0);
    assert_int_equal(sm_xp_search_mask(&s, &head, "socket nodelay=1"), 0);
    assert_int_equal(sm_xp_search_mask(&s, &head, ""), 0);

    const uint32_t arms[2] = {5, 10};
    sm_xp_plan stage;
    sm_error err = {0};
    assert_int_equal(sm_xp_search_stage_plan(&s, &head, arms, 2, &stage, &err), 0);
    assert_int_equal(stage.n, 2);
    assert_int_equal(stage.tested, 2);
    assert_string_equal(stage.v[0].item, "");
    assert_string_equal(stage.v[0].label, "net.ipv4.tcp_rmem + lo qdisc");
    assert_string_equal(stage.v[0].treatment,
                        "sysctl net.ipv4.tcp_rmem=4096 131072 6291456; qdisc lo noqueue");
    assert_string_equal(stage.v[0].host_value, "net.ipv4.tcp_rmem h0; lo qdisc h2");
    assert_string_equal(stage.v[0].fleet_value, "net.ipv4.tcp_rmem f0; lo qdisc f2");
    assert_string_equal(stage.v[1].label, "net.core.somaxconn + net.ipv4.tcp_keepalive_time");
    /* Each arm's treatment reads back as its mask. */
    assert_int_equal(sm_xp_search_mask(&s, &head, stage.v[1].treatment), 10);
    /* What the plan reads back holds. */
    char *j = sm_xp_plan_json(&stage);
    sm_xp_plan back;
    assert_int_equal(sm_xp_plan_from_json(j, &back, &err), 0);
    assert_int_equal(back.n, 2);
    sm_xp_plan_fini(&back);
    free(j);
    sm_xp_plan_fini(&stage);

    const uint32_t bad[1] = {16};
    assert_int_equal(sm_xp_search_stage_plan(&s, &head, bad, 1, &stage, &err), SM_EINVAL);
    assert_int_equal(sm_xp_search_stage_plan(&s, &head, arms, 0, &stage, &err), SM_EINVAL);
}

/* The experiment's verdict on a subset when the gap closes only with rmem and the qdisc both
 * treated (bits 0 and 2). */
static sm_xp_verdict interaction(uint32_t mask)
{
    return (mask & 5u) == 5u ? SM_XP_CAUSE : SM_XP_NOT;
}

static void test_xpsearch_finds_a_two_setting_interaction(void **state)
{
    (void)state;
    sm_xp_suspect v[5];
    sm_xp_estimate e[5];
    sm_xp_plan head;
    sm_xp_search s;
    head_of(&head, v, e, SM_XP_NOT, SM_XP_CAUSE);
    assert_true(sm_xp_search_start(&s, &head, e));
    size_t stages = 0, arms_run = 0;
    uint32_t result = 0;
    for (;;) {
        uint32_t arms[SM_XP_DD_BATCH_MAX];
        size_t n = 0;
        assert_int_equal(sm_xp_dd_next(s.k, s.known, arms, SM_XP_DD_BATCH_MAX, &n, &result), 0);
        if (n == 0)
            break;
        /* A stage: its plan, then each arm's verdict recorded by its treatment, as the
         * experiments of the stages are. */
        sm_xp_plan stage;
        sm_error err = {0};
        assert_int_equal(sm_xp_search_stage_plan(&s, &head, arms, n, &stage, &err), 0);
        for (size_t i = 0; i < stage.n; i++) {
            const uint32_t m = sm_xp_search_mask(&s, &head, stage.v[i].treatment);
            assert_int_equal(m, arms[i]);
            assert_true(sm_xp_search_record(&s, &head, stage.v[i].treatment, interaction(m)));
            /* Recorded once. */
            assert_false(sm_xp_search_record(&s, &head, stage.v[i].treatment, SM_XP_NOT));
        }
        sm_xp_plan_fini(&stage);
        stages++;
        arms_run += n;
        assert_true(stages <= (size_t)sm_xp_dd_stages_max(4));
    }
    assert_int_equal(result, 5u);
    /* Within the worst case of 4 suspects whose singles are known (xpdd.h: 8 arms). */
    assert_true(arms_run <= 8);
    assert_true(stages >= 2);
    char label[160];
    sm_xp_search_label(&s, &head, result, label, sizeof label);
    assert_string_equal(label, "net.ipv4.tcp_rmem + lo qdisc");
    assert_int_equal(sm_xp_dd_unresolved(s.k, s.known), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xpsearch_starts_only_when_the_combination_alone_closes),
        cmocka_unit_test(test_xpsearch_masks_and_stage_plans),
        cmocka_unit_test(test_xpsearch_finds_a_two_setting_interaction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
