/* The deadline heap: deadlines move, expire in order, and leave from the middle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "coordinator/control/deadlines.h"
#include "proto/err.h"

typedef struct agent {
    int id;
    sm_deadline live;
} agent;

static agent *of(sm_deadline *d)
{
    return d ? (agent *)((char *)d - offsetof(agent, live)) : NULL;
}

static void test_deadlines_a_poll_moves_the_agents_deadline(void **state)
{
    (void)state;
    sm_deadlines h;
    sm_deadlines_init(&h);
    agent a = {1, {0}}, b = {2, {0}};
    assert_int_equal(sm_deadlines_set(&h, &a.live, 1000), 0);
    assert_int_equal(sm_deadlines_set(&h, &b.live, 2000), 0);
    assert_ptr_equal(of(sm_deadlines_peek(&h)), &a);
    /* a polls: its deadline moves past b's, and it is still queued once. */
    assert_int_equal(sm_deadlines_set(&h, &a.live, 3000), 0);
    assert_int_equal(sm_deadlines_size(&h), 2);
    assert_ptr_equal(of(sm_deadlines_peek(&h)), &b);
    assert_null(sm_deadlines_pop_due(&h, 1999));
    assert_ptr_equal(of(sm_deadlines_pop_due(&h, 2000)), &b);
    assert_false(sm_deadline_queued(&b.live));
    assert_null(sm_deadlines_pop_due(&h, 2999));
    /* Moved earlier, it comes out earlier. */
    assert_int_equal(sm_deadlines_set(&h, &a.live, 500), 0);
    assert_ptr_equal(of(sm_deadlines_pop_due(&h, 500)), &a);
    assert_null(sm_deadlines_peek(&h));
    sm_deadlines_fini(&h);
}

static void test_deadlines_expire_in_deadline_order(void **state)
{
    (void)state;
    sm_deadlines h;
    sm_deadlines_init(&h);
    agent ag[8];
    const int64_t at[8] = {50, 10, 40, 10, 70, 20, 60, 30};
    for (int i = 0; i < 8; i++) {
        ag[i] = (agent){i, {0}};
        assert_int_equal(sm_deadlines_set(&h, &ag[i].live, at[i]), 0);
    }
    /* Due up to 35: the four earliest, in order; the rest wait. */
    int64_t last = INT64_MIN;
    for (int k = 0; k < 5; k++) {
        sm_deadline *d = sm_deadlines_pop_due(&h, 35);
        if (k == 4) {
            assert_null(d);
            break;
        }
        assert_non_null(d);
        assert_true(d->at >= last && d->at <= 35);
        last = d->at;
    }
    assert_int_equal(sm_deadlines_size(&h), 4);
    assert_int_equal(sm_deadlines_peek(&h)->at, 40);
    sm_deadlines_fini(&h);
    for (int i = 0; i < 8; i++)
        assert_false(sm_deadline_queued(&ag[i].live));
}

static void test_deadlines_removing_one_from_the_middle_keeps_the_order(void **state)
{
    (void)state;
    sm_deadlines h;
    sm_deadlines_init(&h);
    agent ag[15];
    for (int i = 0; i < 15; i++) {
        ag[i] = (agent){i, {0}};
        assert_int_equal(sm_deadlines_set(&h, &ag[i].live, 100 * (i + 1)), 0);
    }
    sm_deadlines_remove(&h, &ag[7].live);
    sm_deadlines_remove(&h, &ag[7].live); /* not queued: nothing happens */
    sm_deadlines_remove(&h, &ag[3].live);
    assert_int_equal(sm_deadlines_size(&h), 13);
    for (int i = 0; i < 15; i++) {
        if (i == 3 || i == 7)
            continue;
        agent *a = of(sm_deadlines_pop_due(&h, INT64_MAX));
        assert_non_null(a);
        assert_int_equal(a->id, i);
    }
    assert_null(sm_deadlines_pop_due(&h, INT64_MAX));
    sm_deadlines_fini(&h);
}

static int64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int64_t)(*s >> 33) % 1000000;
}

static void test_deadlines_100000_agents_move_and_expire_in_order(void **state)
{
    (void)state;
    enum { N = 100000 };
    agent *ag = calloc(N, sizeof *ag);
    assert_non_null(ag);
    sm_deadlines h;
    sm_deadlines_init(&h);
    uint64_t seed = 42;
    for (int i = 0; i < N; i++) {
        ag[i].id = i;
        assert_int_equal(sm_deadlines_set(&h, &ag[i].live, rnd(&seed)), 0);
    }
    /* Every agent polls once more (its deadline moves either way); every tenth leaves. */
    for (int i = 0; i < N; i++)
        assert_int_equal(sm_deadlines_set(&h, &ag[i].live, rnd(&seed)), 0);
    for (int i = 0; i < N; i += 10)
        sm_deadlines_remove(&h, &ag[i].live);
    assert_int_equal(sm_deadlines_size(&h), N - N / 10);
    size_t popped = 0;
    int64_t last = INT64_MIN;
    for (int64_t now = 0; now <= 1000000; now += 1000) {
        sm_deadline *d;
        while ((d = sm_deadlines_pop_due(&h, now)) != NULL) {
            assert_true(d->at >= last);
            assert_true(d->at <= now);
            assert_int_not_equal(of(d)->id % 10, 0);
            last = d->at;
            popped++;
        }
    }
    assert_int_equal(popped, N - N / 10);
    assert_int_equal(sm_deadlines_size(&h), 0);
    sm_deadlines_fini(&h);
    free(ag);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadlines_a_poll_moves_the_agents_deadline),
        cmocka_unit_test(test_deadlines_expire_in_deadline_order),
        cmocka_unit_test(test_deadlines_removing_one_from_the_middle_keeps_the_order),
        cmocka_unit_test(test_deadlines_100000_agents_move_and_expire_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
