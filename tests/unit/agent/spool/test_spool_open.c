/* Unit tests of agent/spool's open: the folder made with mode 0700 or refused, the probe, one open
 * per folder, and NULL handles. */
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

static void test_spool_open_creates_missing_directory_with_mode_0700(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    struct stat st;
    assert_int_equal(stat(f->dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(sm_spool_count(f->sp), 0);
}

static void test_spool_open_refuses_a_regular_file_path(void **state)
{
    fixture *f = *state;
    spool_fixture_write_file(f->root, "spool", "not a directory\n");
    sm_spool *sp = (sm_spool *)(uintptr_t)1;
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_open(&sp, f->dir, &err), SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    assert_non_null(strstr(err.msg, f->dir));
    assert_non_null(strstr(err.msg, "not a directory"));
    assert_ptr_equal(sp, (sm_spool *)(uintptr_t)1);
    assert_int_equal(spool_fixture_file_size(f->root, "spool"), strlen("not a directory\n"));
}

static void test_spool_open_does_not_create_missing_parents(void **state)
{
    fixture *f = *state;
    char deep[PATH_MAX];
    snprintf(deep, sizeof deep, "%s/missing/spool", f->root);
    sm_spool *sp = NULL;
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_open(&sp, deep, &err), SM_ESYS);
    assert_non_null(strstr(err.msg, strerror(ENOENT)));
    assert_null(sp);
    assert_int_equal(spool_fixture_count_files(f->root, "missing"), 0);
}

static void test_spool_probe_of_a_writable_directory_leaves_nothing_behind(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_probe(f->sp, &err), 0);
    assert_int_equal(spool_fixture_count_files(f->dir, SM_SPOOL_PROBE_NAME), 0);
    assert_int_equal(sm_spool_count(f->sp), 0);
}

/* Root ignores permission bits, so the unwritable spool is one where the probe's own name is
 * taken by a directory: creating the probe file fails with EISDIR for every user. */
static void test_spool_probe_fails_when_the_probe_file_cannot_be_created(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    char blocker[PATH_MAX + 16];
    snprintf(blocker, sizeof blocker, "%s/%s", f->dir, SM_SPOOL_PROBE_NAME);
    assert_int_equal(mkdir(blocker, 0700), 0);
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_probe(f->sp, &err), SM_ESYS);
    assert_int_equal(err.code, SM_ESYS);
    assert_non_null(strstr(err.msg, f->dir));
    assert_non_null(strstr(err.msg, "not writable"));
    assert_non_null(strstr(err.msg, strerror(EISDIR)));
    struct stat st;
    assert_int_equal(stat(blocker, &st), 0); /* the probe removes only what it made */
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(sm_spool_probe(NULL, &err), SM_EINVAL);
}

static void test_spool_null_handles_are_harmless(void **state)
{
    (void)state;
    uint64_t job;
    uint32_t attempt;
    sm_error err;
    sm_error_clear(&err);
    sm_spool_close(NULL);
    assert_int_equal(sm_spool_count(NULL), 0);
    assert_int_equal(sm_spool_list(NULL, &job, &attempt, 1), 0);
    assert_int_equal(sm_spool_put(NULL, 1, 0, "x", 1, &err), SM_EINVAL);
    assert_int_equal(sm_spool_remove(NULL, 1, 0, &err), SM_EINVAL);
    assert_int_equal(sm_spool_open(NULL, "/tmp", &err), SM_EINVAL);
}

static void test_spool_a_second_open_of_the_same_directory_is_refused(void **state)
{
    (void)state;
    char dir[] = "/tmp/sm-spool-lock-XXXXXX";
    assert_non_null(mkdtemp(dir));
    sm_spool *a = NULL, *b = NULL;
    sm_error err = {0};
    assert_int_equal(sm_spool_open(&a, dir, &err), 0);
    assert_int_equal(sm_spool_open(&b, dir, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "in use by another agent"));
    assert_null(b);
    sm_spool_close(a);
    /* Released with the first: the next agent gets it. */
    assert_int_equal(sm_spool_open(&b, dir, &err), 0);
    sm_spool_close(b);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spool_a_second_open_of_the_same_directory_is_refused),
        fixture_test(test_spool_open_creates_missing_directory_with_mode_0700),
        fixture_test(test_spool_open_refuses_a_regular_file_path),
        fixture_test(test_spool_open_does_not_create_missing_parents),
        fixture_test(test_spool_probe_of_a_writable_directory_leaves_nothing_behind),
        fixture_test(test_spool_probe_fails_when_the_probe_file_cannot_be_created),
        cmocka_unit_test(test_spool_null_handles_are_harmless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
