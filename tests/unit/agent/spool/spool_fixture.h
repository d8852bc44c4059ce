/* A spool in a fresh temporary folder for agent/spool's unit tests (cmocka setup/teardown),
 * and the checks of its entries and files they share. */
#ifndef SM_TESTS_UNIT_SPOOL_FIXTURE_H
#define SM_TESTS_UNIT_SPOOL_FIXTURE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/spool/spool.h"

#define MIB ((size_t)1 << 20)

/* A fresh mkdtemp folder per test; the spool lives in "spool" under it, not yet created. */
typedef struct fixture {
    char root[1024]; /* short enough that every path built on it fits in PATH_MAX */
    char dir[PATH_MAX];
    sm_spool *sp;
} fixture;

/* *state = a new fixture with its folder made (-1 when it cannot be); the teardown closes
 * f->sp if open, removes the folder with all in it and frees the fixture. */
int spool_fixture_setup(void **state);
int spool_fixture_teardown(void **state);
/* The spool opened at dir; an error fails the test. */
sm_spool *spool_fixture_open_ok(const char *dir);
/* Closes f->sp and opens f->dir again into it. */
void spool_fixture_reopen(fixture *f);
/* Puts len bytes of data (or text's) as job's attempt; an error fails the test. */
void spool_fixture_put_ok(sm_spool *sp, uint64_t job, uint32_t attempt, const char *data,
                          size_t len);
void spool_fixture_put_str(sm_spool *sp, uint64_t job, uint32_t attempt, const char *text);

/* The entry holds exactly these bytes, NUL-terminated. */
void spool_fixture_assert_entry(sm_spool *sp, uint64_t job, uint32_t attempt, const char *want,
                                size_t want_len);
/* There is no entry of job's attempt: get fails with SM_EINVAL, "no entry", and no data. */
void spool_fixture_assert_absent(sm_spool *sp, uint64_t job, uint32_t attempt);

/* Names in dir starting with prefix. */
int spool_fixture_count_files(const char *dir, const char *prefix);
/* The size of dir/name, -1 when it has none. */
off_t spool_fixture_file_size(const char *dir, const char *name);
/* Writes text into a new file dir/name. */
void spool_fixture_write_file(const char *dir, const char *name, const char *text);
/* A test case run with the fixture. */
#define fixture_test(fn)                                                                           \
    cmocka_unit_test_setup_teardown(fn, spool_fixture_setup, spool_fixture_teardown)

#endif
