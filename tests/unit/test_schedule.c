/* Unit tests of scheduling: one job per host at a time, rounds keep their shape, nothing starves.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "coordinator/schedule.h"

#define PICK_MAX 64

static sm_sched_job local(int32_t host, uint32_t order)
{
    return (sm_sched_job){.host = host, .peer = -1, .round = 0, .order = order, .waiting = true};
}

static sm_sched_job pair(int32_t client, int32_t server, uint32_t round, uint32_t order)
{
    return (sm_sched_job){
        .host = client, .peer = server, .round = round, .order = order, .waiting = true};
}

static void assert_picked(const size_t *got, size_t n, const size_t *want, size_t n_want)
{
    assert_int_equal(n, n_want);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(got[i], want[i]);
}

static void test_schedule_local_jobs_of_different_hosts_start_together(void **state)
{
    (void)state;
    sm_sched_job jobs[] = {local(0, 0), local(1, 1), local(2, 2)};
    bool busy[3] = {false};
    size_t picked[PICK_MAX];
    size_t n = sm_schedule_pick(jobs, 3, busy, 3, true, 0, picked, PICK_MAX);
    static const size_t want[] = {0, 1, 2};
    assert_picked(picked, n, want, 3);
    assert_true(busy[0] && busy[1] && busy[2]);
}

static void test_schedule_a_host_never_gets_two_jobs(void **state)
{
    (void)state;
    sm_sched_job jobs[] = {local(0, 0), local(0, 1), pair(0, 1, 0, 2), local(1, 3),
                           pair(1, 2, 0, 4)};
    bool busy[3] = {false};
    size_t picked[PICK_MAX];
    size_t n = sm_schedule_pick(jobs, 5, busy, 3, true, 0, picked, PICK_MAX);
    /* job 0 takes host 0; the second job on 0 and the pair with 0 wait; job 3 takes host 1 */
    static const size_t want[] = {0, 3};
    assert_picked(picked, n, want, 2);
    assert_true(busy[0] && busy[1]);
    assert_false(busy[2]);
}

static void test_schedule_busy_hosts_from_running_jobs_are_skipped(void **state)
{
    (void)state;
    sm_sched_job jobs[] = {local(0, 0), local(0, 1), local(1, 2), local(2, 3)};
    jobs[0].waiting = false; /* running on host 0 */
    bool busy[3] = {true, false, false};
    size_t picked[PICK_MAX];
    size_t n = sm_schedule_pick(jobs, 4, busy, 3, true, 1, picked, PICK_MAX);
    static const size_t want[] = {2, 3};
    assert_picked(picked, n, want, 2);
}

static void test_schedule_disjoint_pairs_of_a_round_run_side_by_side(void **state)
{
    (void)state;
    /* the round 0 of four hosts: {0, 3} and {1, 2}, then the other direction in round 1 */
    sm_sched_job jobs[] = {pair(0, 3, 0, 0), pair(1, 2, 0, 1), pair(3, 0, 1, 2), pair(2, 1, 1, 3)};
    bool busy[4] = {false};
    size_t picked[PICK_MAX];
    size_t n = sm_schedule_pick(jobs, 4, busy, 4, true, 0, picked, PICK_MAX);
    static const size_t want[] = {0, 1};
    assert_picked(picked, n, want, 2);
    assert_true(busy[0] && busy[1] && busy[2] && busy[3]);
}

static void test_schedule_earlier_round_pair_blocks_a_later_one_sharing_a_host(void **state)
{
    (void)state;
    /* host 1 is busy, so (0, 1) of round 0 waits; (0, 2) of round 1 must not take host 0
     * before it, while (2, 3) of round 1 shares nothing with it and starts */
    sm_sched_job jobs[] = {pair(0, 1, 0, 0), pair(0, 2, 1, 1), pair(3, 4, 1, 2)};
    bool busy[5] = {false, true, false, false, false};
    size_t picked[PICK_MAX];
    size_t n = sm_schedule_pick(jobs, 3, busy, 5, true, 1, picked, PICK_MAX);
    static const size_t want[] = {2};
    assert_picked(picked, n, want, 1);
    assert_false(busy[0]);
    assert_false(busy[2]);

    /* once (0, 1) is done, the round 1 pair goes */
    jobs[0].waiting = false;
    busy[1] = false;
    n = sm_schedule_pick(jobs, 3, busy, 5, true, 1, picked, PICK_MAX);
    static const size_t want2[] = {1};
    assert_picked(picked, n, want2, 1);
}

static void
test_schedule_same_round_pair_does_not_block_and_local_jobs_are_not_blocked(void **state)
{
    (void)state;
    /* (0, 1) waits on busy host 1; another round 0 pair on host 0 may go, and so may a local
     * job on host 2 though a waiting round 0 pair (1, 2) shares it */
    sm_sched_job jobs[] = {pair(0, 1, 0, 0), pair(2, 1, 0, 1), pair(0, 3, 0, 2), local(2, 3)};
    bool busy[4] = {false, true, false, false};
    size_t picked[PICK_MAX];
    size_t n = sm_schedule_pick(jobs, 4, busy, 4, true, 1, picked, PICK_MAX);
    static const size_t want[] = {2, 3};
    assert_picked(picked, n, want, 2);
}

static void test_schedule_serial_runs_exactly_one_job_at_a_time(void **state)
{
    (void)state;
    sm_sched_job jobs[] = {local(0, 0), local(1, 1), pair(2, 3, 0, 2)};
    bool busy[4] = {false};
    size_t picked[PICK_MAX];
    size_t n = sm_schedule_pick(jobs, 3, busy, 4, false, 0, picked, PICK_MAX);
    static const size_t want[] = {0};
    assert_picked(picked, n, want, 1);
    assert_true(busy[0]);
    assert_false(busy[1]);

    jobs[0].waiting = false;
    assert_int_equal(sm_schedule_pick(jobs, 3, busy, 4, false, 1, picked, PICK_MAX), 0);
    assert_false(busy[1]);

    busy[0] = false;
    n = sm_schedule_pick(jobs, 3, busy, 4, false, 0, picked, PICK_MAX);
    static const size_t want2[] = {1};
    assert_picked(picked, n, want2, 1);
}

static void test_schedule_picks_at_most_max(void **state)
{
    (void)state;
    sm_sched_job jobs[] = {local(0, 0), local(1, 1), local(2, 2)};
    bool busy[3] = {false};
    size_t picked[2];
    size_t n = sm_schedule_pick(jobs, 3, busy, 3, true, 0, picked, 2);
    static const size_t want[] = {0, 1};
    assert_picked(picked, n, want, 2);
    assert_false(busy[2]);
    assert_int_equal(sm_schedule_pick(jobs, 3, busy, 3, true, 0, picked, 0), 0);
}

static void test_schedule_jobs_naming_unknown_hosts_are_never_picked(void **state)
{
    (void)state;
    sm_sched_job jobs[] = {local(5, 0), pair(0, 9, 0, 1), local(-2, 2), local(1, 3)};
    bool busy[2] = {false};
    size_t picked[PICK_MAX];
    size_t n = sm_schedule_pick(jobs, 4, busy, 2, true, 0, picked, PICK_MAX);
    static const size_t want[] = {3};
    assert_picked(picked, n, want, 1);
    assert_false(busy[0]);
}

static void test_schedule_large_fleet_keeps_the_round_rule(void **state)
{
    (void)state;
    /* more hosts than fit the scheduler's stack bookkeeping */
    enum { N = 1000 };
    bool *busy = calloc(N, sizeof *busy);
    assert_non_null(busy);
    busy[998] = true;
    sm_sched_job jobs[] = {pair(999, 998, 0, 0), pair(999, 0, 1, 1), pair(1, 2, 1, 2)};
    size_t picked[PICK_MAX];
    size_t n = sm_schedule_pick(jobs, 3, busy, N, true, 1, picked, PICK_MAX);
    static const size_t want[] = {2};
    assert_picked(picked, n, want, 1);
    free(busy);
}

/* splitmix64: a fixed seed makes every run of the property test the same. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t rng_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(rng_next(s) % n);
}

static int cmp_job(const void *a, const void *b)
{
    const sm_sched_job *x = a, *y = b;
    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

enum { JOBS_MAX = 80, HOSTS_MAX = 10 };
typedef enum { WAITING, RUNNING, DONE } job_state;

/* Checks one pick against the rules by brute force, before the picks are marked running. */
static void check_picks(const sm_sched_job *jobs, size_t n_jobs, const job_state *st,
                        const size_t *picked, size_t n, bool parallel, size_t running)
{
    if (!parallel)
        assert_true(n <= (running == 0 ? 1u : 0u));
    for (size_t k = 0; k < n; k++) {
        const sm_sched_job *j = &jobs[picked[k]];
        assert_int_equal(st[picked[k]], WAITING);
        if (k > 0)
            assert_true(picked[k] > picked[k - 1]);
        if (j->peer < 0)
            continue;
        for (size_t i = 0; i < n_jobs; i++) {
            const sm_sched_job *e = &jobs[i];
            if (st[i] != WAITING || e->peer < 0 || e->round >= j->round)
                continue;
            assert_false(e->host == j->host || e->host == j->peer || e->peer == j->host ||
                         e->peer == j->peer);
        }
    }
}

static void run_case(uint64_t *rng)
{
    size_t n_hosts = 2 + rng_below(rng, HOSTS_MAX - 1);
    size_t n_jobs = 1 + rng_below(rng, JOBS_MAX);
    bool parallel = rng_below(rng, 5) != 0;
    sm_sched_job jobs[JOBS_MAX];
    for (size_t i = 0; i < n_jobs; i++) {
        int32_t h = (int32_t)rng_below(rng, (uint32_t)n_hosts);
        if (rng_below(rng, 2)) {
            jobs[i] = local(h, (uint32_t)i);
        } else {
            int32_t p = (int32_t)((h + 1 + rng_below(rng, (uint32_t)n_hosts - 1)) % n_hosts);
            jobs[i] = pair(h, p, rng_below(rng, 6), (uint32_t)i);
        }
    }
    qsort(jobs, n_jobs, sizeof *jobs, cmp_job);

    job_state st[JOBS_MAX] = {WAITING};
    bool busy[HOSTS_MAX] = {false};
    size_t running = 0, done = 0;
    /* each step finishes one job, so n_jobs steps are enough unless something starves */
    for (size_t step = 0; done < n_jobs; step++) {
        assert_true(step < n_jobs);
        size_t picked[JOBS_MAX];
        size_t n =
            sm_schedule_pick(jobs, n_jobs, busy, n_hosts, parallel, running, picked, JOBS_MAX);
        check_picks(jobs, n_jobs, st, picked, n, parallel, running);
        for (size_t k = 0; k < n; k++) {
            st[picked[k]] = RUNNING;
            jobs[picked[k]].waiting = false;
        }
        running += n;
        /* no host in two running jobs, and busy[] says exactly which hosts run */
        unsigned uses[HOSTS_MAX] = {0};
        size_t run_ids[JOBS_MAX], n_run = 0;
        for (size_t i = 0; i < n_jobs; i++) {
            if (st[i] != RUNNING)
                continue;
            run_ids[n_run++] = i;
            uses[jobs[i].host]++;
            if (jobs[i].peer >= 0)
                uses[jobs[i].peer]++;
        }
        assert_int_equal(n_run, running);
        for (size_t h = 0; h < n_hosts; h++) {
            assert_true(uses[h] <= 1);
            assert_int_equal(busy[h], uses[h] == 1);
        }
        /* waiting jobs with nothing running would be a deadlock */
        assert_true(running > 0);
        size_t fin = run_ids[rng_below(rng, (uint32_t)n_run)];
        st[fin] = DONE;
        busy[jobs[fin].host] = false;
        if (jobs[fin].peer >= 0)
            busy[jobs[fin].peer] = false;
        running--;
        done++;
    }
}

static void test_schedule_random_fleets_never_share_a_host_and_run_every_job(void **state)
{
    (void)state;
    uint64_t rng = 20240601;
    for (int c = 0; c < 200; c++)
        run_case(&rng);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule_local_jobs_of_different_hosts_start_together),
        cmocka_unit_test(test_schedule_a_host_never_gets_two_jobs),
        cmocka_unit_test(test_schedule_busy_hosts_from_running_jobs_are_skipped),
        cmocka_unit_test(test_schedule_disjoint_pairs_of_a_round_run_side_by_side),
        cmocka_unit_test(test_schedule_earlier_round_pair_blocks_a_later_one_sharing_a_host),
        cmocka_unit_test(
            test_schedule_same_round_pair_does_not_block_and_local_jobs_are_not_blocked),
        cmocka_unit_test(test_schedule_serial_runs_exactly_one_job_at_a_time),
        cmocka_unit_test(test_schedule_picks_at_most_max),
        cmocka_unit_test(test_schedule_jobs_naming_unknown_hosts_are_never_picked),
        cmocka_unit_test(test_schedule_large_fleet_keeps_the_round_rule),
        cmocka_unit_test(test_schedule_random_fleets_never_share_a_host_and_run_every_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
