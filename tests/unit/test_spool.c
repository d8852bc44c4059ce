/* Unit tests of agent/spool: durability at every crash point, order, limits and concurrency. */
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

#define MIB ((size_t)1 << 20)

/* A fresh mkdtemp folder per test; the spool lives in "spool" under it, not yet created. */
typedef struct fixture {
    char root[1024]; /* short enough that every path built on it fits in PATH_MAX */
    char dir[PATH_MAX];
    sm_spool *sp;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(f->root, sizeof f->root, "%s/sm-spool-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (n < 0 || (size_t)n >= sizeof f->root || !mkdtemp(f->root)) {
        free(f);
        return -1;
    }
    snprintf(f->dir, sizeof f->dir, "%s/spool", f->root);
    *state = f;
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fixture *f = *state;
    sm_spool_close(f->sp);
    int rc = nftw(f->root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return rc;
}

static sm_spool *open_ok(const char *dir)
{
    sm_spool *sp = NULL;
    sm_error err;
    sm_error_clear(&err);
    int rc = sm_spool_open(&sp, dir, &err);
    if (rc != 0)
        fail_msg("sm_spool_open(%s) = %d: %s", dir, rc, err.msg);
    return sp;
}

static void reopen(fixture *f)
{
    sm_spool_close(f->sp);
    f->sp = NULL;
    f->sp = open_ok(f->dir);
}

static void put_ok(sm_spool *sp, uint64_t job, uint32_t attempt, const char *data, size_t len)
{
    sm_error err;
    sm_error_clear(&err);
    int rc = sm_spool_put(sp, job, attempt, data, len, &err);
    if (rc != 0)
        fail_msg("sm_spool_put(%llu, %u) = %d: %s", (unsigned long long)job, attempt, rc, err.msg);
}

static void put_str(sm_spool *sp, uint64_t job, uint32_t attempt, const char *text)
{
    put_ok(sp, job, attempt, text, strlen(text));
}

/* The entry holds exactly these bytes, NUL-terminated. */
static void assert_entry(sm_spool *sp, uint64_t job, uint32_t attempt, const char *want,
                         size_t want_len)
{
    char *data = NULL;
    size_t len = 0;
    sm_error err;
    sm_error_clear(&err);
    int rc = sm_spool_get(sp, job, attempt, &data, &len, &err);
    if (rc != 0)
        fail_msg("sm_spool_get(%llu, %u) = %d: %s", (unsigned long long)job, attempt, rc, err.msg);
    assert_int_equal(len, want_len);
    if (want_len > 0)
        assert_memory_equal(data, want, want_len);
    assert_int_equal(data[len], '\0');
    free(data);
}

static void assert_absent(sm_spool *sp, uint64_t job, uint32_t attempt)
{
    char *data = NULL;
    size_t len = 12345;
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_get(sp, job, attempt, &data, &len, &err), SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    assert_non_null(strstr(err.msg, "no entry"));
    assert_null(data);
    assert_int_equal(len, 12345);
}

/* Names in dir starting with prefix. */
static int count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}

static off_t file_size(const char *dir, const char *name)
{
    char path[PATH_MAX + 256];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return -1;
    if (stat(path, &st) != 0)
        return -1;
    return st.st_size;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX + 64]; /* a dir of up to PATH_MAX and a short name: no truncation */
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

static void test_spool_open_creates_missing_directory_with_mode_0700(void **state)
{
    fixture *f = *state;
    f->sp = open_ok(f->dir);
    struct stat st;
    assert_int_equal(stat(f->dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(sm_spool_count(f->sp), 0);
}

static void test_spool_open_refuses_a_regular_file_path(void **state)
{
    fixture *f = *state;
    write_file(f->root, "spool", "not a directory\n");
    sm_spool *sp = (sm_spool *)(uintptr_t)1;
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_open(&sp, f->dir, &err), SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    assert_non_null(strstr(err.msg, f->dir));
    assert_non_null(strstr(err.msg, "not a directory"));
    assert_ptr_equal(sp, (sm_spool *)(uintptr_t)1);
    assert_int_equal(file_size(f->root, "spool"), strlen("not a directory\n"));
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
    assert_int_equal(count_files(f->root, "missing"), 0);
}

static void test_spool_probe_of_a_writable_directory_leaves_nothing_behind(void **state)
{
    fixture *f = *state;
    f->sp = open_ok(f->dir);
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_probe(f->sp, &err), 0);
    assert_int_equal(count_files(f->dir, SM_SPOOL_PROBE_NAME), 0);
    assert_int_equal(sm_spool_count(f->sp), 0);
}

/* Root ignores permission bits, so the unwritable spool is one where the probe's own name is
 * taken by a directory: creating the probe file fails with EISDIR for every user. */
static void test_spool_probe_fails_when_the_probe_file_cannot_be_created(void **state)
{
    fixture *f = *state;
    f->sp = open_ok(f->dir);
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

static void test_spool_put_get_list_remove_round_trip(void **state)
{
    fixture *f = *state;
    f->sp = open_ok(f->dir);
    put_str(f->sp, 7, 0, "{\"job\":7}");
    put_str(f->sp, 7, 1, "{\"job\":7,\"attempt\":1}");
    assert_int_equal(sm_spool_count(f->sp), 2);

    uint64_t jobs[4];
    uint32_t attempts[4];
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 2);
    assert_int_equal(jobs[0], 7);
    assert_int_equal(attempts[0], 0);
    assert_int_equal(jobs[1], 7);
    assert_int_equal(attempts[1], 1);
    assert_entry(f->sp, 7, 0, "{\"job\":7}", 9);
    assert_entry(f->sp, 7, 1, "{\"job\":7,\"attempt\":1}", 21);

    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_remove(f->sp, 7, 0, &err), 0);
    assert_int_equal(sm_spool_count(f->sp), 1);
    assert_absent(f->sp, 7, 0);
    assert_int_equal(count_files(f->dir, "0"), 1);

    reopen(f);
    assert_int_equal(sm_spool_count(f->sp), 1);
    assert_absent(f->sp, 7, 0);
    assert_entry(f->sp, 7, 1, "{\"job\":7,\"attempt\":1}", 21);
}

static void test_spool_empty_entry_round_trips(void **state)
{
    fixture *f = *state;
    f->sp = open_ok(f->dir);
    put_ok(f->sp, 1, 0, NULL, 0);
    assert_entry(f->sp, 1, 0, "", 0);
}

static void test_spool_remove_of_absent_entry_is_zero(void **state)
{
    fixture *f = *state;
    f->sp = open_ok(f->dir);
    put_str(f->sp, 1, 0, "one");
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
    f->sp = open_ok(f->dir);
    put_str(f->sp, 7, 0, "seven");
    put_str(f->sp, 8, 0, "eight");

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
    f->sp = open_ok(f->dir);
    put_str(f->sp, 5, 2, "first");
    put_str(f->sp, 5, 2, "second, longer");
    assert_int_equal(sm_spool_count(f->sp), 1);
    assert_int_equal(count_files(f->dir, "0"), 1);
    assert_entry(f->sp, 5, 2, "first", 5);

    reopen(f);
    put_str(f->sp, 5, 2, "third");
    assert_int_equal(sm_spool_count(f->sp), 1);
    assert_entry(f->sp, 5, 2, "first", 5);
}

static void test_spool_entry_survives_close_and_open_with_identical_bytes(void **state)
{
    fixture *f = *state;
    char data[4099];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)(i * 131 % 256); /* every byte value, NULs and newlines included */
    f->sp = open_ok(f->dir);
    put_ok(f->sp, UINT64_MAX, UINT32_MAX, data, sizeof data);
    reopen(f);
    assert_int_equal(sm_spool_count(f->sp), 1);
    uint64_t job;
    uint32_t attempt;
    assert_int_equal(sm_spool_list(f->sp, &job, &attempt, 1), 1);
    assert_int_equal(job, UINT64_MAX);
    assert_int_equal(attempt, UINT32_MAX);
    assert_entry(f->sp, UINT64_MAX, UINT32_MAX, data, sizeof data);
}

static void test_spool_lists_oldest_first_across_reopen(void **state)
{
    fixture *f = *state;
    f->sp = open_ok(f->dir);
    put_str(f->sp, 30, 0, "a");
    put_str(f->sp, 10, 0, "b");
    put_str(f->sp, 20, 1, "c");
    put_str(f->sp, 20, 0, "d");
    reopen(f);
    put_str(f->sp, 5, 0, "e");
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_remove(f->sp, 10, 0, &err), 0);
    reopen(f);
    put_str(f->sp, 1, 0, "f");

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
    write_file(f->dir, "00000000000000ff-7-1.res", "old");
    write_file(f->dir, "0000000000000003-9-0.res", "older");
    f->sp = open_ok(f->dir);
    put_str(f->sp, 8, 2, "new");
    assert_int_equal(file_size(f->dir, "0000000000000100-8-2.res"), 3);

    uint64_t jobs[4];
    uint32_t attempts[4];
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 3);
    assert_int_equal(jobs[0], 9);
    assert_int_equal(jobs[1], 7);
    assert_int_equal(jobs[2], 8);
    assert_entry(f->sp, 7, 1, "old", 3);
}

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
    reopen(arg);
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
        write_file(f->dir, junk[i], "junk");
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
        write_file(f->dir, hidden[i], "junk");
    char sub[PATH_MAX + 64], link[PATH_MAX + 64], qdir[PATH_MAX + 64];
    snprintf(sub, sizeof sub, "%s/0000000000000009-3-0.res", f->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    /* Named as an entry but a link: never read (it could point anywhere), moved. */
    snprintf(link, sizeof link, "%s/0000000000000007-8-0.res", f->dir);
    assert_int_equal(symlink("/etc/hostname", link), 0);
    write_file(f->dir, "0000000000000002-4-0.res", "real");

    int lines = log_lines_during(reopen_cb, f, "SM-SPOOL-QUARANTINE");
    assert_int_equal(lines, (int)n_junk + 1);
    assert_int_equal(sm_spool_count(f->sp), 1);
    assert_int_equal(sm_spool_quarantined(f->sp), n_junk + 1);
    assert_entry(f->sp, 4, 0, "real", 4);
    snprintf(qdir, sizeof qdir, "%s/quarantine", f->dir);
    struct stat st;
    assert_int_equal(stat(qdir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    for (size_t i = 0; i < n_junk; i++) {
        assert_int_equal(file_size(f->dir, junk[i]), -1);
        assert_int_equal(file_size(qdir, junk[i]), 4); /* moved with its bytes */
    }
    assert_int_equal(lstat(link, &st), -1);
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
        assert_int_equal(file_size(f->dir, hidden[i]), 4);
    assert_int_equal(stat(sub, &st), 0);
    /* The sub-directory's sequence must not count as the largest either. */
    put_str(f->sp, 5, 0, "next");
    assert_int_equal(file_size(f->dir, "0000000000000003-5-0.res"), 4);

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
        write_file(f->dir, name, "junk");
    }
    int lines = log_lines_during(reopen_cb, f, "SM-SPOOL-QUARANTINE");
    assert_int_equal(lines, 101);
    assert_int_equal(sm_spool_quarantined(f->sp), 150);
    char qdir[PATH_MAX + 64];
    snprintf(qdir, sizeof qdir, "%s/quarantine", f->dir);
    assert_int_equal(count_files(qdir, "junk-"), 150);
    assert_int_equal(count_files(f->dir, "junk-"), 0);
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
    f->sp = open_ok(f->dir);
    put_str(f->sp, 1, 1, "{broken");
    put_str(f->sp, 2, 1, "{\"job\":\"2\"}");
    quarantine_call q = {.sp = f->sp, .job = 1, .attempt = 1};
    assert_int_equal(log_lines_during(quarantine_cb, &q, "SM-SPOOL-QUARANTINE"), 1);
    assert_int_equal(q.rc, 0);
    assert_int_equal(sm_spool_quarantined(f->sp), 1);
    uint64_t jobs[4];
    uint32_t attempts[4];
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 1);
    assert_int_equal(jobs[0], 2);
    assert_absent(f->sp, 1, 1);
    char qdir[PATH_MAX + 64];
    snprintf(qdir, sizeof qdir, "%s/quarantine", f->dir);
    assert_int_equal(file_size(qdir, "0000000000000001-1-1.res"), 7);
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
    reopen(f);
    put_str(f->sp, 1, 1, "{again");
    assert_int_equal(sm_spool_quarantine(f->sp, 1, 1, "test", NULL), 0);
    assert_int_equal(file_size(qdir, "0000000000000001-1-1.res"), 7);
    assert_int_equal(file_size(qdir, "0000000000000001-1-1.res.1"), 6);
    assert_int_equal(sm_spool_quarantined(f->sp), 2);
    assert_int_equal(sm_spool_count(f->sp), 0);
}

static void test_spool_quarantine_that_cannot_move_skips_the_entry_until_the_next_open(void **state)
{
    fixture *f = *state;
    f->sp = open_ok(f->dir);
    put_str(f->sp, 1, 1, "{broken");
    put_str(f->sp, 2, 1, "{\"job\":\"2\"}");
    /* A file where the folder goes: every move fails, for root too (ENOTDIR). */
    write_file(f->dir, "quarantine", "in the way");
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
    assert_int_equal(file_size(f->dir, "0000000000000001-1-1.res"), 7);
    /* A caller that wants no reason gets the code all the same. */
    put_str(f->sp, 3, 1, "{x");
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
    assert_int_equal(file_size(f->dir, "quarantine"), 10);
}

static void test_spool_get_of_a_file_that_is_no_entry_is_eparse_and_never_blocks(void **state)
{
    fixture *f = *state;
    f->sp = open_ok(f->dir);
    put_str(f->sp, 1, 1, "one");
    put_str(f->sp, 2, 1, "two");
    put_str(f->sp, 3, 1, "three");
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

static void test_spool_crash_at_every_step_keeps_the_entry_exactly_from_the_rename_on(void **state)
{
    fixture *f = *state;
    const char *data = "{\"job\":42,\"attempt\":1,\"ok\":true}";
    const size_t len = strlen(data);
    const off_t tmp_size[] = {0, 0, (off_t)(len / 2), (off_t)len, (off_t)len};

    for (int step = 1; step <= 6; step++) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/step-%d", f->root, step);
        sm_spool *sp = open_ok(dir);
        sm_error err;
        sm_error_clear(&err);
        assert_int_equal(sm_spool_put_until(sp, 42, 1, data, len, step, &err), 0);

        int renamed = step >= 5;
        assert_int_equal(sm_spool_count(sp), renamed);
        assert_int_equal(count_files(dir, ".tmp-"), !renamed);
        if (!renamed)
            assert_int_equal(file_size(dir, ".tmp-42-1"), tmp_size[step]);
        sm_spool_close(sp);

        sp = open_ok(dir);
        assert_int_equal(sm_spool_count(sp), renamed);
        assert_int_equal(count_files(dir, ".tmp-"), 0);
        if (renamed)
            assert_entry(sp, 42, 1, data, len);
        else
            assert_absent(sp, 42, 1);

        put_str(sp, 42, 1, "retry");
        assert_int_equal(sm_spool_count(sp), 1);
        assert_int_equal(count_files(dir, ".tmp-"), 0);
        if (renamed)
            assert_entry(sp, 42, 1, data, len);
        else
            assert_entry(sp, 42, 1, "retry", 5);
        sm_spool_close(sp);
    }
}

static void
test_spool_put_after_a_crashed_put_in_the_same_process_overwrites_its_temp_file(void **state)
{
    fixture *f = *state;
    f->sp = open_ok(f->dir);
    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_put_until(f->sp, 3, 0, "long stale content", 18, 3, &err), 0);
    put_str(f->sp, 3, 0, "fresh");
    assert_int_equal(count_files(f->dir, ".tmp-"), 0);
    assert_entry(f->sp, 3, 0, "fresh", 5);
}

static void test_spool_thousand_entries_drain_oldest_first_in_batches_of_32(void **state)
{
    fixture *f = *state;
    enum { N = 1000, BATCH = 32 };
    char text[64];
    f->sp = open_ok(f->dir);
    /* 7919 is prime to 1000: every job once, in an order unrelated to the job number. */
    for (uint64_t i = 0; i < N; i++) {
        snprintf(text, sizeof text, "{\"i\":%llu}", (unsigned long long)i);
        put_str(f->sp, (i * 7919) % N + 1, (uint32_t)(i % 3), text);
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
        assert_entry(f->sp, jobs[0], attempts[0], text, strlen(text));
        for (size_t k = 0; k < n; k++)
            assert_int_equal(sm_spool_remove(f->sp, jobs[k], attempts[k], &err), 0);
        if (++batches == 1)
            reopen(f);
    }
    assert_int_equal(next, N);
    assert_int_equal(batches, (N + BATCH - 1) / BATCH);
    assert_int_equal(sm_spool_count(f->sp), 0);
    assert_int_equal(count_files(f->dir, "0"), 0);
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
    f->sp = open_ok(f->dir);
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

    reopen(f);
    assert_int_equal(sm_spool_count(f->sp), CONC_N / 2);
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, CONC_N), CONC_N / 2);
    for (size_t k = 0; k < CONC_N / 2; k++)
        assert_int_equal(jobs[k], 2 * k + 1);
}

static void test_spool_refuses_entries_over_1_mib(void **state)
{
    fixture *f = *state;
    char *big = malloc(MIB + 1);
    assert_non_null(big);
    memset(big, 'x', MIB + 1);
    f->sp = open_ok(f->dir);

    sm_error err;
    sm_error_clear(&err);
    assert_int_equal(sm_spool_put(f->sp, 1, 0, big, MIB + 1, &err), SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    assert_non_null(strstr(err.msg, "limit"));
    sm_error_clear(&err);
    assert_int_equal(sm_spool_put_until(f->sp, 1, 0, big, MIB + 1, 3, &err), SM_EINVAL);
    assert_int_equal(sm_spool_count(f->sp), 0);
    assert_int_equal(count_files(f->dir, ""), 2); /* "." and ".." */

    put_ok(f->sp, 1, 0, big, MIB);
    reopen(f);
    assert_entry(f->sp, 1, 0, big, MIB);
    free(big);
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

#define fixture_test(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

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

static void test_spool_set_aside_moves_an_entry_out_of_the_spool_and_keeps_its_bytes(void **state)
{
    fixture *f = *state;
    sm_error err;
    sm_error_clear(&err);
    f->sp = open_ok(f->dir);
    put_str(f->sp, 5, 1, "{\"job\":\"5\",\"old\":true}");
    put_str(f->sp, 6, 1, "{\"job\":\"6\"}");
    assert_int_equal(sm_spool_set_aside(f->sp, 5, 1, "0123abcd", &err), 0);
    assert_int_equal(sm_spool_count(f->sp), 1);
    assert_absent(f->sp, 5, 1);
    uint64_t jobs[4];
    uint32_t attempts[4];
    assert_int_equal(sm_spool_list(f->sp, jobs, attempts, 4), 1);
    assert_int_equal(jobs[0], 6);

    /* Where it went: aside/TAG/, same name, same bytes, the directories 0700. */
    char sub[PATH_MAX + 32], path[PATH_MAX + 32 + 260];
    snprintf(sub, sizeof sub, "%s/aside/0123abcd", f->dir);
    assert_int_equal(count_files(sub, "0"), 1);
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
    put_str(f->sp, 5, 1, "{\"job\":\"5\",\"new\":true}");
    reopen(f);
    assert_int_equal(sm_spool_count(f->sp), 2);
    assert_entry(f->sp, 5, 1, "{\"job\":\"5\",\"new\":true}", 22);
    assert_int_equal(count_files(sub, "0"), 1);

    assert_int_equal(sm_spool_set_aside(f->sp, 99, 1, "0123abcd", &err), SM_EINVAL);
    assert_int_equal(sm_spool_set_aside(f->sp, 5, 1, "..", &err), SM_EINVAL);
    assert_int_equal(sm_spool_set_aside(f->sp, 5, 1, "a/b", &err), SM_EINVAL);
    assert_int_equal(sm_spool_set_aside(f->sp, 5, 1, "", &err), SM_EINVAL);
    assert_int_equal(sm_spool_count(f->sp), 2);
}

/* The locked lookup every per-entry call starts with: found, the lock stays held and the name
 * is the entry's file; missed, the lock is free again and the error names job and attempt. */
static void test_spool_lock_entry_holds_mu_on_a_hit_and_releases_it_on_a_miss(void **state)
{
    fixture *f = *state;
    f->sp = open_ok(f->dir);
    put_str(f->sp, 7, 2, "seven");
    put_str(f->sp, 8, 0, "eight");
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
    f->sp = open_ok(f->dir);
    put_str(f->sp, 1, 0, "a");
    put_str(f->sp, 2, 0, "b");
    put_str(f->sp, 3, 0, "c");
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
    f->sp = open_ok(f->dir);
    put_str(f->sp, 1, 0, "one");
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
    assert_entry(f->sp, 1, 0, "one", 3);
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
        fixture_test(test_spool_put_get_list_remove_round_trip),
        fixture_test(test_spool_empty_entry_round_trips),
        fixture_test(test_spool_remove_of_absent_entry_is_zero),
        fixture_test(test_spool_an_acked_entry_that_cannot_be_removed_is_no_longer_listed),
        fixture_test(test_spool_duplicate_put_keeps_first_content),
        fixture_test(test_spool_entry_survives_close_and_open_with_identical_bytes),
        fixture_test(test_spool_lists_oldest_first_across_reopen),
        fixture_test(test_spool_names_files_by_sequence_and_continues_after_the_largest),
        fixture_test(test_spool_open_quarantines_files_not_named_as_entries),
        fixture_test(test_spool_quarantine_lines_are_bounded),
        fixture_test(test_spool_quarantine_moves_an_entry_aside_once_and_unblocks_the_ones_behind),
        fixture_test(test_spool_quarantine_that_cannot_move_skips_the_entry_until_the_next_open),
        fixture_test(test_spool_get_of_a_file_that_is_no_entry_is_eparse_and_never_blocks),
        fixture_test(test_spool_crash_at_every_step_keeps_the_entry_exactly_from_the_rename_on),
        fixture_test(
            test_spool_put_after_a_crashed_put_in_the_same_process_overwrites_its_temp_file),
        fixture_test(test_spool_thousand_entries_drain_oldest_first_in_batches_of_32),
        fixture_test(test_spool_concurrent_put_and_remove_loses_and_duplicates_nothing),
        fixture_test(test_spool_refuses_entries_over_1_mib),
        fixture_test(test_spool_set_aside_moves_an_entry_out_of_the_spool_and_keeps_its_bytes),
        fixture_test(test_spool_lock_entry_holds_mu_on_a_hit_and_releases_it_on_a_miss),
        fixture_test(test_spool_drop_entry_keeps_the_others_in_order),
        fixture_test(test_spool_calls_on_a_missing_entry_fail_alike_but_remove),
        cmocka_unit_test(test_spool_null_handles_are_harmless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
