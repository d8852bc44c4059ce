/* Unit tests of agent/spool's quarantine: files that are no entry moved aside once, logged in
 * bounded lines, and never blocking the entries behind. */
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

/* Lines of stderr written while fn runs, that contain id (the log goes to stderr). */
static int log_lines_during(void (*fn)(void *), void *arg, const char *id)
{
    char path[] = "/tmp/sm-spool-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fd, 2), 2);
    fn(arg);
    fflush(stderr);
    assert_int_equal(dup2(saved, 2), 2);
    close(saved);
    FILE *fp = fdopen(fd, "r");
    assert_non_null(fp);
    rewind(fp);
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, fp))
        n += strstr(line, id) != NULL;
    fclose(fp);
    unlink(path);
    return n;
}

static void reopen_cb(void *arg)
{
    spool_fixture_reopen(arg);
}

static void test_spool_open_quarantines_files_not_named_as_entries(void **state)
{
    fixture *f = *state;
    const char *junk[] = {
        "notes.txt",
        "junk.res",
        "zz-1-2.res",
        "0000000000000001-1.res",
        "0000000000000001-01-0.res", /* leading zero: not a name put writes */
        "000000000000000A-1-0.res",  /* upper-case hex */
        "00000000000000001-1-0.res", /* 17 hex digits */
        "0000000000000001-1-4294967296.res",
        "0000000000000001-99999999999999999999-0.res",
        "0000000000000001-+1-0.res",
        "0000000000000001-1-0.res.bak",
        "0000000000000001-1-0.resx",
        "tmp-1-0",
    };
    /* Hidden names (an editor's, NFS's) and directories are not the spool's to move. */
    const char *hidden[] = {".res", ".tmp-1", ".tmp-x-1", ".nfs0001"};
    const size_t n_junk = sizeof junk / sizeof junk[0];
    assert_int_equal(mkdir(f->dir, 0700), 0);
    for (size_t i = 0; i < n_junk; i++)
        spool_fixture_write_file(f->dir, junk[i], "junk");
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
        spool_fixture_write_file(f->dir, hidden[i], "junk");
    char sub[PATH_MAX + 64], link[PATH_MAX + 64], qdir[PATH_MAX + 64];
    snprintf(sub, sizeof sub, "%s/0000000000000009-3-0.res", f->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    /* Named as an entry but a link: never read (it could point anywhere), moved. */
    snprintf(link, sizeof link, "%s/0000000000000007-8-0.res", f->dir);
    assert_int_equal(symlink("/etc/hostname", link), 0);
    spool_fixture_write_file(f->dir, "0000000000000002-4-0.res", "real");

    int lines = log_lines_during(reopen_cb, f, "SM-SPOOL-QUARANTINE");
    assert_int_equal(lines, (int)n_junk + 1);
    assert_int_equal(sm_spool_count(f->sp), 1);
    assert_int_equal(sm_spool_quarantined(f->sp), n_junk + 1);
    spool_fixture_assert_entry(f->sp, 4, 0, "real", 4);
    snprintf(qdir, sizeof qdir, "%s/quarantine", f->dir);
    struct stat st;
    assert_int_equal(stat(qdir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    for (size_t i = 0; i < n_junk; i++) {
        assert_int_equal(spool_fixture_file_size(f->dir, junk[i]), -1);
        assert_int_equal(spool_fixture_file_size(qdir, junk[i]), 4); /* moved with its bytes */
    }
    assert_int_equal(lstat(link, &st), -1);
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
        assert_int_equal(spool_fixture_file_size(f->dir, hidden[i]), 4);
    assert_int_equal(stat(sub, &st), 0);
    /* The sub-directory's sequence must not count as the largest either. */
    spool_fixture_put_str(f->sp, 5, 0, "next");
    assert_int_equal(spool_fixture_file_size(f->dir, "0000000000000003-5-0.res"), 4);

    /* A later start counts what is in quarantine/ and logs nothing again. */
    lines = log_lines_during(reopen_cb, f, "SM-SPOOL-QUARANTINE");
    assert_int_equal(lines, 0);
    assert_int_equal(sm_spool_quarantined(f->sp), n_junk + 1);
    assert_int_equal(sm_spool_count(f->sp), 2);
}

/* A spool filled with junk (a broken disk, a script run in the wrong folder) is moved and
 * counted in full, but logs 100 lines and one more saying the rest are only counted. */
static void test_spool_quarantine_lines_are_bounded(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkdir(f->dir, 0700), 0);
    for (int i = 0; i < 150; i++) {
        char name[32];
        snprintf(name, sizeof name, "junk-%03d", i);
        spool_fixture_write_file(f->dir, name, "junk");
    }
    int lines = log_lines_during(reopen_cb, f, "SM-SPOOL-QUARANTINE");
    assert_int_equal(lines, 101);
    assert_int_equal(sm_spool_quarantined(f->sp), 150);
    char qdir[PATH_MAX + 64];
    snprintf(qdir, sizeof qdir, "%s/quarantine", f->dir);
    assert_int_equal(spool_fixture_count_files(qdir, "junk-"), 150);
    assert_int_equal(spool_fixture_count_files(f->dir, "junk-"), 0);
}

typedef struct quarantine_call {
    sm_spool *sp;
    uint64_t job;
    uint32_t attempt;
    int rc;
    sm_error err;
} quarantine_call;

static void quarantine_cb(void *arg)
{
    quarantine_call *q = arg;
    sm_error_clear(&q->err);
    q->rc = sm_spool_quarantine(q->sp, q->job, q->attempt, "not a result: test", &q->err);
}

static void
test_spool_quarantine_moves_an_entry_aside_once_and_unblocks_the_ones_behind(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 1, 1, "{broken");
    spool_fixture_put_str(f->sp, 2, 1, "{\"job\":\"2\"}");
    quarantine_call q = {.sp = f->sp, .job = 1, .attempt = 1};
    assert_int_equal(log_lines_during(quarantine_cb, &q, "SM-SPOOL-QUARANTINE"), 1);
    assert_int_equal(q.rc, 0);
    assert_int_equal(sm_spool_quarantined(f->sp), 1);
    uint64_t jobs[4];
    uint32_t attempts[4];
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 1);
    assert_int_equal(jobs[0], 2);
    spool_fixture_assert_absent(f->sp, 1, 1);
    char qdir[PATH_MAX + 64];
    snprintf(qdir, sizeof qdir, "%s/quarantine", f->dir);
    assert_int_equal(spool_fixture_file_size(qdir, "0000000000000001-1-1.res"), 7);
    struct stat st;
    assert_int_equal(stat(qdir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);

    /* Gone from the index: a second call finds nothing, logs nothing, counts nothing. */
    assert_int_equal(log_lines_during(quarantine_cb, &q, "SM-SPOOL-QUARANTINE"), 0);
    assert_int_equal(q.rc, SM_EINVAL);
    assert_int_equal(sm_spool_quarantined(f->sp), 1);

    /* A name already in quarantine/ (sequence numbers start over in an emptied spool) is
     * kept: the newcomer gets a suffix. */
    assert_int_equal(sm_spool_remove(f->sp, 2, 1, NULL), 0);
    spool_fixture_reopen(f);
    spool_fixture_put_str(f->sp, 1, 1, "{again");
    assert_int_equal(sm_spool_quarantine(f->sp, 1, 1, "test", NULL), 0);
    assert_int_equal(spool_fixture_file_size(qdir, "0000000000000001-1-1.res"), 7);
    assert_int_equal(spool_fixture_file_size(qdir, "0000000000000001-1-1.res.1"), 6);
    assert_int_equal(sm_spool_quarantined(f->sp), 2);
    assert_int_equal(sm_spool_count(f->sp), 0);
}

static void test_spool_quarantine_that_cannot_move_skips_the_entry_until_the_next_open(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 1, 1, "{broken");
    spool_fixture_put_str(f->sp, 2, 1, "{\"job\":\"2\"}");
    /* A file where the folder goes: every move fails, for root too (ENOTDIR). */
    spool_fixture_write_file(f->dir, "quarantine", "in the way");
    quarantine_call q = {.sp = f->sp, .job = 1, .attempt = 1};
    assert_int_equal(log_lines_during(quarantine_cb, &q, "SM-SPOOL-QUARANTINE"), 1);
    assert_int_equal(q.rc, SM_ESYS);
    assert_int_equal(q.err.code, SM_ESYS);
    assert_non_null(strstr(q.err.msg, strerror(ENOTDIR)));
    assert_int_equal(sm_spool_quarantined(f->sp), 1);
    uint64_t jobs[4];
    uint32_t attempts[4];
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 1);
    assert_int_equal(jobs[0], 2);
    /* Skipped, not lost, and not tried again by this process. */
    assert_int_equal(spool_fixture_file_size(f->dir, "0000000000000001-1-1.res"), 7);
    /* A caller that wants no reason gets the code all the same. */
    spool_fixture_put_str(f->sp, 3, 1, "{x");
    assert_int_equal(sm_spool_quarantine(f->sp, 3, 1, "test", NULL), SM_ESYS);
    assert_int_equal(sm_spool_quarantined(f->sp), 2);
    assert_int_equal(log_lines_during(quarantine_cb, &q, "SM-SPOOL-QUARANTINE"), 0);
    assert_int_equal(q.rc, SM_EINVAL);

    /* The next start lists it again, for the agent to judge once more; the file in the way is
     * the spool's own name and stays where it is. */
    int lines = log_lines_during(reopen_cb, f, "SM-SPOOL-QUARANTINE");
    assert_int_equal(lines, 0);
    assert_int_equal(sm_spool_count(f->sp), 3);
    assert_int_equal(sm_spool_quarantined(f->sp), 0);
    assert_int_equal(spool_fixture_file_size(f->dir, "quarantine"), 10);
}

static void test_spool_get_of_a_file_that_is_no_entry_is_eparse_and_never_blocks(void **state)
{
    fixture *f = *state;
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 1, 1, "one");
    spool_fixture_put_str(f->sp, 2, 1, "two");
    spool_fixture_put_str(f->sp, 3, 1, "three");
    char path[PATH_MAX + 64];
    /* A FIFO in an entry's place: an open without O_NONBLOCK would wait for a writer. */
    snprintf(path, sizeof path, "%s/0000000000000001-1-1.res", f->dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    /* A link in an entry's place: not followed. */
    snprintf(path, sizeof path, "%s/0000000000000002-2-1.res", f->dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink("/etc/hostname", path), 0);
    /* Over the 1 MiB an entry may hold. */
    snprintf(path, sizeof path, "%s/0000000000000003-3-1.res", f->dir);
    assert_int_equal(truncate(path, (off_t)MIB + 1), 0);

    for (uint64_t job = 1; job <= 3; job++) {
        char *data = NULL;
        size_t len = 0;
        sm_error err;
        sm_error_clear(&err);
        assert_int_equal(sm_spool_get(f->sp, job, 1, &data, &len, &err), SM_EPARSE);
        assert_int_equal(err.code, SM_EPARSE);
        assert_null(data);
        assert_int_equal(sm_spool_quarantine(f->sp, job, 1, err.msg, NULL), 0);
    }
    assert_int_equal(sm_spool_count(f->sp), 0);
    assert_int_equal(sm_spool_quarantined(f->sp), 3);
}

static void test_spool_set_aside_moves_an_entry_out_of_the_spool_and_keeps_its_bytes(void **state)
{
    fixture *f = *state;
    sm_error err;
    sm_error_clear(&err);
    f->sp = spool_fixture_open_ok(f->dir);
    spool_fixture_put_str(f->sp, 5, 1, "{\"job\":\"5\",\"old\":true}");
    spool_fixture_put_str(f->sp, 6, 1, "{\"job\":\"6\"}");
    assert_int_equal(sm_spool_set_aside(f->sp, 5, 1, "0123abcd", &err), 0);
    assert_int_equal(sm_spool_count(f->sp), 1);
    spool_fixture_assert_absent(f->sp, 5, 1);
    uint64_t jobs[4];
    uint32_t attempts[4];
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 1);
    assert_int_equal(jobs[0], 6);

    /* Where it went: aside/TAG/, same name, same bytes, the directories 0700. */
    char sub[PATH_MAX + 32], path[PATH_MAX + 32 + 260];
    snprintf(sub, sizeof sub, "%s/aside/0123abcd", f->dir);
    assert_int_equal(spool_fixture_count_files(sub, "0"), 1);
    DIR *d = opendir(sub);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)) && de->d_name[0] == '.')
        ;
    assert_non_null(de);
    snprintf(path, sizeof path, "%s/%s", sub, de->d_name);
    closedir(d);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char buf[64] = {0};
    assert_int_equal(fread(buf, 1, sizeof buf - 1, fp), 22);
    fclose(fp);
    assert_string_equal(buf, "{\"job\":\"5\",\"old\":true}");
    struct stat st;
    assert_int_equal(stat(sub, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);

    /* A new store's job 5 is a new entry; the one set aside stays out of the index. */
    spool_fixture_put_str(f->sp, 5, 1, "{\"job\":\"5\",\"new\":true}");
    spool_fixture_reopen(f);
    assert_int_equal(sm_spool_count(f->sp), 2);
    spool_fixture_assert_entry(f->sp, 5, 1, "{\"job\":\"5\",\"new\":true}", 22);
    assert_int_equal(spool_fixture_count_files(sub, "0"), 1);

    assert_int_equal(sm_spool_set_aside(f->sp, 99, 1, "0123abcd", &err), SM_EINVAL);
    assert_int_equal(sm_spool_set_aside(f->sp, 5, 1, "..", &err), SM_EINVAL);
    assert_int_equal(sm_spool_set_aside(f->sp, 5, 1, "a/b", &err), SM_EINVAL);
    assert_int_equal(sm_spool_set_aside(f->sp, 5, 1, "", &err), SM_EINVAL);
    assert_int_equal(sm_spool_count(f->sp), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        fixture_test(test_spool_open_quarantines_files_not_named_as_entries),
        fixture_test(test_spool_quarantine_lines_are_bounded),
        fixture_test(test_spool_quarantine_moves_an_entry_aside_once_and_unblocks_the_ones_behind),
        fixture_test(test_spool_quarantine_that_cannot_move_skips_the_entry_until_the_next_open),
        fixture_test(test_spool_get_of_a_file_that_is_no_entry_is_eparse_and_never_blocks),
        fixture_test(test_spool_set_aside_moves_an_entry_out_of_the_spool_and_keeps_its_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
