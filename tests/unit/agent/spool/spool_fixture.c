/* A spool in a fresh temporary folder, for agent/spool's unit tests: see spool_fixture.h. */
#include "tests/unit/agent/spool/spool_fixture.h"

#include <dirent.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

int spool_fixture_setup(void **state)
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

int spool_fixture_teardown(void **state)
{
    fixture *f = *state;
    sm_spool_close(f->sp);
    int rc = nftw(f->root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return rc;
}

sm_spool *spool_fixture_open_ok(const char *dir)
{
    sm_spool *sp = NULL;
    sm_error err;
    sm_error_clear(&err);
    int rc = sm_spool_open(&sp, dir, &err);
    if (rc != 0)
        fail_msg("sm_spool_open(%s) = %d: %s", dir, rc, err.msg);
    return sp;
}

void spool_fixture_reopen(fixture *f)
{
    sm_spool_close(f->sp);
    f->sp = NULL;
    f->sp = spool_fixture_open_ok(f->dir);
}

void spool_fixture_put_ok(sm_spool *sp, uint64_t job, uint32_t attempt, const char *data,
                          size_t len)
{
    sm_error err;
    sm_error_clear(&err);
    int rc = sm_spool_put(sp, job, attempt, data, len, &err);
    if (rc != 0)
        fail_msg("sm_spool_put(%llu, %u) = %d: %s", (unsigned long long)job, attempt, rc, err.msg);
}

void spool_fixture_put_str(sm_spool *sp, uint64_t job, uint32_t attempt, const char *text)
{
    spool_fixture_put_ok(sp, job, attempt, text, strlen(text));
}

void spool_fixture_assert_entry(sm_spool *sp, uint64_t job, uint32_t attempt, const char *want,
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

void spool_fixture_assert_absent(sm_spool *sp, uint64_t job, uint32_t attempt)
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

int spool_fixture_count_files(const char *dir, const char *prefix)
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

off_t spool_fixture_file_size(const char *dir, const char *name)
{
    char path[PATH_MAX + 256];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return -1;
    if (stat(path, &st) != 0)
        return -1;
    return st.st_size;
}

void spool_fixture_write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX + 64]; /* a dir of up to PATH_MAX and a short name: no truncation */
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}
