/* Unit tests of agent/spool's entries: put, get, list and remove, their order and names, the size
 * limit, and the calls on one entry. */
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
#include "agent/spool/internal.h"
#include "tests/unit/agent/spool/spool_fixture.h"

static void test_spool_put_get_list_remove_round_trip(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 7, 0, "{\"job\":7}");
    spool_fixture_put_str(f->sp, 7, 1, "{\"job\":7,\"attempt\":1}");
    assert_int_equal(sm_spool_count(f->sp), 2);

    uint64_t jobs[4];
    uint32_t attempts[4];
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 2);
    assert_int_equal(jobs[0], 7);
    assert_int_equal(attempts[0], 0);
    assert_int_equal(jobs[1], 7);
    assert_int_equal(attempts[1], 1);
    spool_fixture_assert_entry(f->sp, 7, 0, "{\"job\":7}", 9);
    spool_fixture_assert_entry(f->sp, 7, 1, "{\"job\":7,\"attempt\":1}", 21);

    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_remove(f->sp, 7, 0, &err), 0);
    assert_int_equal(sm_spool_count(f->sp), 1);
    spool_fixture_assert_absent(f->sp, 7, 0);
    assert_int_equal(spool_fixture_count_files(f->dir, "0"), 1);

    spool_fixture_reopen(f);
    assert_int_equal(sm_spool_count(f->sp), 1);
    spool_fixture_assert_absent(f->sp, 7, 0);
    spool_fixture_assert_entry(f->sp, 7, 1, "{\"job\":7,\"attempt\":1}", 21);
}

static void test_spool_empty_entry_round_trips(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_ok(f->sp, 1, 0, NULL, 0);
    spool_fixture_assert_entry(f->sp, 1, 0, "", 0);
}

static void test_spool_remove_of_absent_entry_is_zero(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 1, 0, "one");
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_remove(f->sp, 2, 0, &err), 0);
    assert_int_equal(sm_spool_remove(f->sp, 1, 1, &err), 0);
    assert_int_equal(sm_spool_remove(f->sp, 1, 0, &err), 0);
    assert_int_equal(sm_spool_remove(f->sp, 1, 0, &err), 0);
    assert_int_equal(err.code, SM_OK);
    assert_int_equal(sm_spool_count(f->sp), 0);
}

/* An acked result whose file cannot be deleted (a spool remounted read-only; here a directory
 * in its place, which unlink refuses even to root) must not be listed again: the agent sends
 * what is listed with every poll, and the coordinator would ack it again, for ever. */
static void test_spool_an_acked_entry_that_cannot_be_removed_is_no_longer_listed(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 7, 0, "seven");
    spool_fixture_put_str(f->sp, 8, 0, "eight");

    char name[sizeof((struct dirent *)0)->d_name] = "";
    DIR *d = opendir(f->dir);
    assert_non_null(d);
    for (struct dirent *de; (de = readdir(d));) {
        size_t n = strlen(de->d_name);
        if (n > 8 && strcmp(de->d_name + n - 8, "-7-0.res") == 0)
            snprintf(name, sizeof name, "%s", de->d_name);
    }
    closedir(d);
    assert_true(name[0] != '\0');
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0700), 0);

    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_remove(f->sp, 7, 0, &err), SM_ESYS);
    assert_non_null(strstr(err.msg, name));
    assert_non_null(strstr(err.msg, strerror(EISDIR)));

    uint64_t jobs[4];
    uint32_t attempts[4];
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 1);
    assert_int_equal(jobs[0], 8);
    /* Still taken: a second put of the key is the usual no-op, and it stays unlisted. */
    sm_error_clear(&err);
    assert_int_equal(sm_spool_put(f->sp, 7, 0, "seven", 5, &err), 0);
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 1);
    assert_int_equal(jobs[0], 8);
    /* The other entry is removed as usual. */
    assert_int_equal(sm_spool_remove(f->sp, 8, 0, &err), 0);
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 0);
}

static void test_spool_duplicate_put_keeps_first_content(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 5, 2, "first");
    spool_fixture_put_str(f->sp, 5, 2, "second, longer");
    assert_int_equal(sm_spool_count(f->sp), 1);
    assert_int_equal(spool_fixture_count_files(f->dir, "0"), 1);
    spool_fixture_assert_entry(f->sp, 5, 2, "first", 5);

    spool_fixture_reopen(f);
    spool_fixture_put_str(f->sp, 5, 2, "third");
    assert_int_equal(sm_spool_count(f->sp), 1);
    spool_fixture_assert_entry(f->sp, 5, 2, "first", 5);
}

static void test_spool_lists_oldest_first_across_reopen(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 30, 0, "a");
    spool_fixture_put_str(f->sp, 10, 0, "b");
    spool_fixture_put_str(f->sp, 20, 1, "c");
    spool_fixture_put_str(f->sp, 20, 0, "d");
    spool_fixture_reopen(f);
    spool_fixture_put_str(f->sp, 5, 0, "e");
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_remove(f->sp, 10, 0, &err), 0);
    spool_fixture_reopen(f);
    spool_fixture_put_str(f->sp, 1, 0, "f");

    const uint64_t want_jobs[] = {30, 20, 20, 5, 1};
    const uint32_t want_attempts[] = {0, 1, 0, 0, 0};
    uint64_t jobs[8];
    uint32_t attempts[8];
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 8), 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(jobs[i], want_jobs[i]);
        assert_int_equal(attempts[i], want_attempts[i]);
    }
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 2), 2);
    assert_int_equal(jobs[0], 30);
    assert_int_equal(jobs[1], 20);
    assert_int_equal(attempts[1], 1);
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 0), 0);
}

static void test_spool_names_files_by_sequence_and_continues_after_the_largest(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkdir(f->dir, 0700), 0);
    spool_fixture_write_file(f->dir, "00000000000000ff-7-1.res", "old");
    spool_fixture_write_file(f->dir, "0000000000000003-9-0.res", "older");
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 8, 2, "new");
    assert_int_equal(spool_fixture_file_size(f->dir, "0000000000000100-8-2.res"), 3);

    uint64_t jobs[4];
    uint32_t attempts[4];
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 3);
    assert_int_equal(jobs[0], 9);
    assert_int_equal(jobs[1], 7);
    assert_int_equal(jobs[2], 8);
    spool_fixture_assert_entry(f->sp, 7, 1, "old", 3);
}

static void test_spool_refuses_entries_over_1_mib(void **state)
{
    fixture *f = *state;
    char *big = malloc(MIB + 1);
    assert_non_null(big);
    memset(big, 'x', MIB + 1);
    f->sp = spool_fixture_open_ok(f->dir);

    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_put(f->sp, 1, 0, big, MIB + 1, &err), SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    assert_non_null(strstr(err.msg, "limit"));
    sm_error_clear(&err);
    assert_int_equal(sm_spool_put_until(f->sp, 1, 0, big, MIB + 1, 3, &err), SM_EINVAL);
    assert_int_equal(sm_spool_count(f->sp), 0);
    assert_int_equal(spool_fixture_count_files(f->dir, ""), 2); /* "." and ".." */

    spool_fixture_put_ok(f->sp, 1, 0, big, MIB);
    spool_fixture_reopen(f);
    spool_fixture_assert_entry(f->sp, 1, 0, big, MIB);
    free(big);
}

/* The locked lookup every per-entry call starts with: found, the lock stays held and the name
 * is the entry's file; missed, the lock is free again and the error names job and attempt. */
static void test_spool_lock_entry_holds_mu_on_a_hit_and_releases_it_on_a_miss(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 7, 2, "seven");
    spool_fixture_put_str(f->sp, 8, 0, "eight");
    char name[NAME_SIZE] = "";
    size_t i = 99;
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(spool_lock_entry(f->sp, 8, 0, &i, name, &err), 0);
    assert_int_equal(i, 1);
    assert_string_equal(name, "0000000000000002-8-0.res");
    assert_int_equal(pthread_mutex_trylock(&f->sp->mu), EBUSY);
    pthread_mutex_unlock(&f->sp->mu);
    assert_int_equal(err.code, SM_OK);

    /* index NULL: only the name. */
    assert_int_equal(spool_lock_entry(f->sp, 7, 2, NULL, name, &err), 0);
    assert_string_equal(name, "0000000000000001-7-2.res");
    pthread_mutex_unlock(&f->sp->mu);

    i = 99;
    strcpy(name, "untouched");
    assert_int_equal(spool_lock_entry(f->sp, 7, 3, &i, name, &err), SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "spool %s: no entry for job 7 attempt 3", f->dir);
    assert_string_equal(err.msg, want);
    assert_int_equal(i, 99);
    assert_string_equal(name, "untouched");
    assert_int_equal(pthread_mutex_trylock(&f->sp->mu), 0);
    pthread_mutex_unlock(&f->sp->mu);
    /* err NULL: a miss is only the code. */
    assert_int_equal(spool_lock_entry(f->sp, 9, 0, &i, name, NULL), SM_EINVAL);
    assert_int_equal(pthread_mutex_trylock(&f->sp->mu), 0);
    pthread_mutex_unlock(&f->sp->mu);
}

static void test_spool_drop_entry_keeps_the_others_in_order(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 1, 0, "a");
    spool_fixture_put_str(f->sp, 2, 0, "b");
    spool_fixture_put_str(f->sp, 3, 0, "c");
    pthread_mutex_lock(&f->sp->mu);
    drop_entry(f->sp, 1);
    assert_int_equal(f->sp->n, 2);
    assert_int_equal(f->sp->v[0].job, 1);
    assert_int_equal(f->sp->v[1].job, 3);
    drop_entry(f->sp, 1);
    assert_int_equal(f->sp->n, 1);
    assert_int_equal(f->sp->v[0].job, 1);
    pthread_mutex_unlock(&f->sp->mu);
}

/* Every per-entry call that can miss says so the same way, and leaves the spool as it was. */
static void test_spool_calls_on_a_missing_entry_fail_alike_but_remove(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 1, 0, "one");
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "spool %s: no entry for job 4 attempt 1", f->dir);
    sm_error err;
    char *data = NULL;
    size_t len = 0;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_get(f->sp, 4, 1, &data, &len, &err), SM_EINVAL);
    assert_string_equal(err.msg, want);
    assert_null(data);
    sm_error_clear(&err);
    assert_int_equal(sm_spool_set_aside(f->sp, 4, 1, "tag", &err), SM_EINVAL);
    assert_string_equal(err.msg, want);
    sm_error_clear(&err);
    assert_int_equal(sm_spool_quarantine(f->sp, 4, 1, "why", &err), SM_EINVAL);
    assert_string_equal(err.msg, want);
    sm_error_clear(&err);
    assert_int_equal(sm_spool_remove(f->sp, 4, 1, &err), 0);
    assert_int_equal(err.code, SM_OK);
    assert_int_equal(sm_spool_count(f->sp), 1);
    assert_int_equal(sm_spool_quarantined(f->sp), 0);
    spool_fixture_assert_entry(f->sp, 1, 0, "one", 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        fixture_test(test_spool_put_get_list_remove_round_trip),
        fixture_test(test_spool_empty_entry_round_trips),
        fixture_test(test_spool_remove_of_absent_entry_is_zero),
        fixture_test(test_spool_an_acked_entry_that_cannot_be_removed_is_no_longer_listed),
        fixture_test(test_spool_duplicate_put_keeps_first_content),
        fixture_test(test_spool_lists_oldest_first_across_reopen),
        fixture_test(test_spool_names_files_by_sequence_and_continues_after_the_largest),
        fixture_test(test_spool_refuses_entries_over_1_mib),
        fixture_test(test_spool_lock_entry_holds_mu_on_a_hit_and_releases_it_on_a_miss),
        fixture_test(test_spool_drop_entry_keeps_the_others_in_order),
        fixture_test(test_spool_calls_on_a_missing_entry_fail_alike_but_remove),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
