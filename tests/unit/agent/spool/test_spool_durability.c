/* Unit tests of agent/spool's durability: entries across reopen and at every crash point, a
 * thousand drained in order, and concurrent puts and removes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/spool/spool.h"
#include "tests/unit/agent/spool/spool_fixture.h"

static void test_spool_entry_survives_close_and_open_with_identical_bytes(void **state)
{
    fixture *f = *state;
    char data[4099];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)(i * 131 % 256); /* every byte value, NULs and newlines included */
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_ok(f->sp, UINT64_MAX, UINT32_MAX, data, sizeof data);
    spool_fixture_reopen(f);
    assert_int_equal(sm_spool_count(f->sp), 1);
    uint64_t job;
    uint32_t attempt;
    assert_int_equal(sm_spool_list(f->sp, &job, &attempt, 1), 1);
    assert_int_equal(job, UINT64_MAX);
    assert_int_equal(attempt, UINT32_MAX);
    spool_fixture_assert_entry(f->sp, UINT64_MAX, UINT32_MAX, data, sizeof data);
}

static void test_spool_crash_at_every_step_keeps_the_entry_exactly_from_the_rename_on(void **state)
{
    fixture *f = *state;
    const char *data = "{\"job\":42,\"attempt\":1,\"ok\":true}";
    const size_t len = strlen(data);
    const off_t tmp_size[] = {0, 0, (off_t)(len / 2), (off_t)len, (off_t)len};

    for (int step = 1; step <= 6; step++) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/step-%d", f->root, step);
        sm_spool *sp = spool_fixture_open_ok(dir);
        sm_error err;
        sm_error_clear(&err);
        assert_int_equal(sm_spool_put_until(sp, 42, 1, data, len, step, &err), 0);

        int renamed = step >= 5;
        assert_int_equal(sm_spool_count(sp), renamed);
        assert_int_equal(spool_fixture_count_files(dir, ".tmp-"), !renamed);
        if (!renamed)
            assert_int_equal(spool_fixture_file_size(dir, ".tmp-42-1"), tmp_size[step]);
        sm_spool_close(sp);

        sp = spool_fixture_open_ok(dir);
        assert_int_equal(sm_spool_count(sp), renamed);
        assert_int_equal(spool_fixture_count_files(dir, ".tmp-"), 0);
        if (renamed)
            spool_fixture_assert_entry(sp, 42, 1, data, len);
        else
            spool_fixture_assert_absent(sp, 42, 1);

        spool_fixture_put_str(sp, 42, 1, "retry");
        assert_int_equal(sm_spool_count(sp), 1);
        assert_int_equal(spool_fixture_count_files(dir, ".tmp-"), 0);
        if (renamed)
            spool_fixture_assert_entry(sp, 42, 1, data, len);
        else
            spool_fixture_assert_entry(sp, 42, 1, "retry", 5);
        sm_spool_close(sp);
    }
}

static void
test_spool_put_after_a_crashed_put_in_the_same_process_overwrites_its_temp_file(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_put_until(f->sp, 3, 0, "long stale content", 18, 3, &err), 0);
    spool_fixture_put_str(f->sp, 3, 0, "fresh");
    assert_int_equal(spool_fixture_count_files(f->dir, ".tmp-"), 0);
    spool_fixture_assert_entry(f->sp, 3, 0, "fresh", 5);
}

static void test_spool_thousand_entries_drain_oldest_first_in_batches_of_32(void **state)
{
    fixture *f = *state;
    enum { N = 1000, BATCH = 32 };
    char text[64];
    f->sp = spool_fixture_open_ok(f->dir);
    /* 7919 is prime to 1000: every job once, in an order unrelated to the job number. */
    for (uint64_t i = 0; i < N; i++) {
        snprintf(text, sizeof text, "{\"i\":%llu}", (unsigned long long)i);
        spool_fixture_put_str(f->sp, (i * 7919) % N + 1, (uint32_t)(i % 3), text);
    }
    assert_int_equal(sm_spool_count(f->sp), N);

    uint64_t next = 0;
    int batches = 0;
    sm_error err;
    sm_error_clear(&err);
    for (;;) {
        uint64_t jobs[BATCH];
        uint32_t attempts[BATCH];
        size_t n = sm_spool_list(f->sp, jobs, attempts, BATCH);
        if (n == 0)
            break;
        assert_int_equal(n, N - next < BATCH ? N - next : BATCH);
        for (size_t k = 0; k < n; k++, next++) {
            assert_int_equal(jobs[k], (next * 7919) % N + 1);
            assert_int_equal(attempts[k], next % 3);
        }
        snprintf(text, sizeof text, "{\"i\":%llu}", (unsigned long long)(next - n));
        spool_fixture_assert_entry(f->sp, jobs[0], attempts[0], text, strlen(text));
        for (size_t k = 0; k < n; k++)
            assert_int_equal(sm_spool_remove(f->sp, jobs[k], attempts[k], &err), 0);
        if (++batches == 1)
            spool_fixture_reopen(f);
    }
    assert_int_equal(next, N);
    assert_int_equal(batches, (N + BATCH - 1) / BATCH);
    assert_int_equal(sm_spool_count(f->sp), 0);
    assert_int_equal(spool_fixture_count_files(f->dir, "0"), 0);
}

enum { CONC_N = 500 };

typedef struct putter {
    sm_spool *sp;
    atomic_int done;
    atomic_int failures;
} putter;

static void *putter_main(void *arg)
{
    putter *p = arg;
    char text[32];
    for (uint64_t job = 1; job <= CONC_N; job++) {
        snprintf(text, sizeof text, "result-%llu", (unsigned long long)job);
        if (sm_spool_put(p->sp, job, 0, text, strlen(text), NULL) != 0)
            atomic_fetch_add(&p->failures, 1);
    }
    atomic_store(&p->done, 1);
    return NULL;
}

/* The control thread's side: lists, checks and removes the even jobs as they appear. */
static void test_spool_concurrent_put_and_remove_loses_and_duplicates_nothing(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    putter p = {.sp = f->sp};
    atomic_init(&p.done, 0);
    atomic_init(&p.failures, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, putter_main, &p), 0);

    static uint64_t jobs[CONC_N + 1];
    static uint32_t attempts[CONC_N + 1];
    int removed[CONC_N + 1] = {0};
    int out_of_order = 0, bad_content = 0, failed_ops = 0;
    for (;;) {
        int finished = atomic_load(&p.done);
        size_t n = sm_spool_list(f->sp, jobs, attempts, CONC_N + 1);
        int removed_now = 0;
        for (size_t k = 0; k < n; k++) {
            if (k > 0 && jobs[k] <= jobs[k - 1])
                out_of_order++;
            if (jobs[k] % 2 != 0)
                continue;
            char *data = NULL;
            size_t len = 0;
            char want[32];
            snprintf(want, sizeof want, "result-%llu", (unsigned long long)jobs[k]);
            if (sm_spool_get(f->sp, jobs[k], attempts[k], &data, &len, NULL) != 0)
                failed_ops++;
            else if (len != strlen(want) || strcmp(data, want) != 0)
                bad_content++;
            free(data);
            if (sm_spool_remove(f->sp, jobs[k], attempts[k], NULL) != 0)
                failed_ops++;
            removed[jobs[k]]++;
            removed_now++;
        }
        if (finished && removed_now == 0)
            break;
        sched_yield();
    }
    assert_int_equal(pthread_join(th, NULL), 0);

    assert_int_equal(atomic_load(&p.failures), 0);
    assert_int_equal(failed_ops, 0);
    assert_int_equal(bad_content, 0);
    assert_int_equal(out_of_order, 0);
    for (int job = 1; job <= CONC_N; job++)
        assert_int_equal(removed[job], job % 2 == 0);
    assert_int_equal(sm_spool_count(f->sp), CONC_N / 2);

    spool_fixture_reopen(f);
    assert_int_equal(sm_spool_count(f->sp), CONC_N / 2);
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, CONC_N), CONC_N / 2);
    for (size_t k = 0; k < CONC_N / 2; k++)
        assert_int_equal(jobs[k], 2 * k + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        fixture_test(test_spool_entry_survives_close_and_open_with_identical_bytes),
        fixture_test(test_spool_crash_at_every_step_keeps_the_entry_exactly_from_the_rename_on),
        fixture_test(
            test_spool_put_after_a_crashed_put_in_the_same_process_overwrites_its_temp_file),
        fixture_test(test_spool_thousand_entries_drain_oldest_first_in_batches_of_32),
        fixture_test(test_spool_concurrent_put_and_remove_loses_and_duplicates_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
