/* Unit tests of the store's open: the schema in WAL mode, its files' modes, its identity, a cut
 * WAL, and a corrupted file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "coordinator/store/store.h"
#include "tests/unit/coordinator/store/store_fixture.h"
#include "proto/clock.h"
#include "proto/log.h"

#define assert_ok(expr) store_fixture_check_ok((expr), &err, #expr, __FILE__, __LINE__)

static void test_store_open_creates_the_current_schema_in_wal_mode(void **state)
{
    fixture *f = *state;
    store_fixture_open(f);
    assert_int_equal(sm_store_schema_version(f->st), 11);

    sqlite3 *db = store_fixture_raw_open(f->path);
    char mode[16];
    store_fixture_raw_text(db, "PRAGMA journal_mode", mode, sizeof mode);
    assert_string_equal(mode, "wal");
    assert_int_equal(store_fixture_raw_int(db, "PRAGMA user_version"), 11);
    assert_int_equal(
        store_fixture_raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND"
                                  " name IN ('agents', 'jobs', 'results', 'events', 'runs',"
                                  " 'cells')"),
        6);
    assert_int_equal(
        store_fixture_raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND"
                                  " name IN ('jobs_state', 'jobs_host_state', 'jobs_run')"),
        3);
    sqlite3_close(db);
}

static void test_store_reopen_keeps_data_and_version(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t id = store_fixture_insert_job(f->st, "h1", 1000);
    sm_agent_row a = store_fixture_agent("h1", 1000, "{\"cores\":4}");
    assert_ok(sm_store_agent_upsert(f->st, &a, &err));

    store_fixture_open(f);
    assert_int_equal(sm_store_schema_version(f->st), 11);
    sm_job_row j;
    assert_ok(sm_store_job_get(f->st, id, &j, &err));
    assert_string_equal(j.host, "h1");
    sm_job_row_fini(&j);
    sm_agent_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].facts_json, "{\"cores\":4}");
    sm_store_agents_free(rows, n);
}

static void test_store_open_of_an_unreachable_path_fails_with_reason(void **state)
{
    fixture *f = *state;
    char path[200];
    snprintf(path, sizeof path, "%s/missing/sm.db", f->dir);
    sm_error err;
    sm_error_clear(&err);
    sm_store *st = NULL;
    assert_int_equal(sm_store_open(&st, path, &err), SM_ESYS);
    assert_null(st);
    assert_non_null(strstr(err.msg, "unable to open database file"));
}

static mode_t mode_of(const char *path, const char *suffix)
{
    char p[192];
    struct stat sb;
    snprintf(p, sizeof p, "%s%s", path, suffix);
    if (stat(p, &sb) != 0)
        fail_msg("stat %s: %s", p, strerror(errno));
    return sb.st_mode & 07777;
}

/* The store holds every result and the fleet's addresses: its files are the coordinator's
 * alone whatever umask it was started with (0644 under the usual 022 before). */
static void test_store_files_are_0600_under_any_umask(void **state)
{
    fixture *f = *state;
    sm_error err;
    const mode_t masks[] = {022, 0, 0277};
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        const mode_t old = umask(masks[i]);
        store_fixture_open(f);
        /* A write makes the -wal and -shm files next to the database. */
        sm_agent_row a = store_fixture_agent("h1", 1000, "{\"cores\":4}");
        assert_ok(sm_store_agent_upsert(f->st, &a, &err));
        umask(old);
        assert_int_equal(mode_of(f->path, ""), 0600);
        assert_int_equal(mode_of(f->path, "-wal"), 0600);
        assert_int_equal(mode_of(f->path, "-shm"), 0600);
        sm_store_close(f->st);
        f->st = NULL;
        const char *suffixes[] = {"", "-wal", "-shm"};
        for (size_t k = 0; k < 3; k++) {
            char p[192];
            snprintf(p, sizeof p, "%s%s", f->path, suffixes[k]);
            unlink(p);
        }
    }
    /* A store made before keeps the mode it has (the operator's to change), and opens. */
    FILE *fp = fopen(f->path, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(chmod(f->path, 0640), 0);
    store_fixture_open(f);
    assert_int_equal(mode_of(f->path, ""), 0640);
}

/* What a corrupted store file did: every transaction failed with "database disk image is
 * malformed" while /healthz said ok. The store now says it is failing, with SQLite's words,
 * until a commit succeeds and a minute has passed. */
static void test_store_a_corrupted_file_makes_the_store_failing_with_sqlites_words(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    store_fixture_open(f);
    char msg[256] = "";
    int64_t at = 0;
    assert_false(sm_store_failing(f->st, sm_wall_ms(), msg, sizeof msg, &at));
    assert_ok(sm_store_begin(f->st, &err));
    for (int i = 0; i < 200; i++)
        store_fixture_insert_job(f->st, "h1", 1);
    assert_ok(sm_store_commit(f->st, &err));
    assert_false(sm_store_failing(f->st, sm_wall_ms(), msg, sizeof msg, &at));

    /* Everything into the main file, then garbage over every page but the first (the schema
     * the store has read already). The checkpoint also tells the store's connection that its
     * cached pages are stale. */
    sqlite3 *raw = store_fixture_raw_open(f->path);
    const int64_t page = store_fixture_raw_int(raw, "PRAGMA page_size");
    const int64_t pages = store_fixture_raw_int(raw, "PRAGMA page_count");
    assert_true(pages > 2);
    assert_int_equal(sqlite3_exec(raw, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(raw);
    FILE *fp = fopen(f->path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, (long)page, SEEK_SET), 0);
    for (int64_t i = page; i < page * pages; i++)
        fputc(0x5a, fp);
    assert_int_equal(fclose(fp), 0);

    const int64_t before = sm_wall_ms();
    uint64_t id = 0;
    assert_ok(sm_store_begin(f->st, &err));
    assert_int_not_equal(sm_store_job_insert(f->st, "h1", "{}", 1, &id, &err), 0);
    sm_store_rollback(f->st);
    assert_true(sm_store_failing(f->st, sm_wall_ms(), msg, sizeof msg, &at));
    assert_non_null(strstr(msg, "malformed"));
    assert_true(at >= before && at <= sm_wall_ms());

    /* A commit that touches no page succeeds: the failure stays shown for a minute after it,
     * then clears. */
    assert_ok(sm_store_begin(f->st, &err));
    assert_ok(sm_store_commit(f->st, &err));
    assert_true(sm_store_failing(f->st, at + SM_STORE_FAIL_SHOWN_MS - 1, NULL, 0, NULL));
    assert_false(sm_store_failing(f->st, at + SM_STORE_FAIL_SHOWN_MS, NULL, 0, NULL));
}

/* A caller's broken constraint is the caller's failure, not the store's. */
static void test_store_a_rejected_insert_does_not_make_the_store_failing(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    store_fixture_open(f);
    bool inserted = false;
    sm_result_cols c = store_fixture_cols_ok();
    assert_ok(sm_store_begin(f->st, &err));
    /* No job 999: the foreign key refuses the result. */
    assert_int_not_equal(sm_store_result_insert(f->st, 999, 1, "h1", "{}", &c, 1, &inserted, &err),
                         0);
    sm_store_rollback(f->st);
    assert_false(sm_store_failing(f->st, sm_wall_ms(), NULL, 0, NULL));
}

/* ---- the store's identity and a cut WAL ---- */

static void test_store_id_is_made_once_and_kept_across_reopen(void **state)
{
    fixture *f = *state;
    store_fixture_open(f);
    char id[SM_STORE_ID_SIZE];
    snprintf(id, sizeof id, "%s", sm_store_id(f->st));
    assert_true(store_fixture_is_store_id(id));
    assert_string_equal(sm_store_warning(f->st), "");
    store_fixture_open(f);
    assert_string_equal(sm_store_id(f->st), id);
    sqlite3 *db = store_fixture_raw_open(f->path);
    char stored[64];
    store_fixture_raw_text(db, "SELECT value FROM store_meta WHERE key = 'store_id'", stored,
                           sizeof stored);
    assert_string_equal(stored, id);
    sqlite3_close(db);

    /* Another store, another id: what tells an agent that job ids started over. */
    char other[160];
    snprintf(other, sizeof other, "%s/other.db", f->dir);
    sm_store *st2 = NULL;
    sm_error err;
    assert_ok(sm_store_open(&st2, other, &err));
    assert_true(store_fixture_is_store_id(sm_store_id(st2)));
    assert_string_not_equal(sm_store_id(st2), id);
    sm_store_close(st2);
    for (const char *sfx = ""; sfx; sfx = *sfx ? NULL : "-wal") {
        char p[170];
        snprintf(p, sizeof p, "%s%s", other, sfx);
        unlink(p);
    }
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    assert_non_null(in);
    FILE *out = fopen(to, "wb");
    assert_non_null(out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static long file_size(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fclose(fp);
    return n;
}

/* A copy of the open store's database and WAL, as a kill -9 would leave them: the frames not
 * yet checkpointed are in the WAL only. Returns the copy's path in out. */
static void copy_open_store(fixture *f, const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", f->dir, name);
    char from[200], to[200];
    copy_file(f->path, out);
    snprintf(from, sizeof from, "%s-wal", f->path);
    snprintf(to, sizeof to, "%s-wal", out);
    copy_file(from, to);
}

static void remove_db(const char *path)
{
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        char p[200];
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
}

static void test_store_wal_check_finds_a_wal_cut_mid_frame_and_not_an_intact_one(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    char id[SM_STORE_ID_SIZE];
    snprintf(id, sizeof id, "%s", sm_store_id(f->st));
    uint64_t last = 0;
    for (int i = 0; i < 5; i++)
        last = store_fixture_insert_job(f->st, "h1", 1000 + i); /* one commit each */

    char intact[160], cut[160], wal[200];
    copy_open_store(f, "intact.db", intact, sizeof intact);
    copy_open_store(f, "cut.db", cut, sizeof cut);
    sm_wal_check c;
    memset(&c, 0xff, sizeof c);
    assert_ok(sm_store_wal_check(intact, &c, &err));
    assert_true(c.present);
    assert_false(c.cut);
    assert_int_equal(c.page_size, 4096);
    assert_int_equal(c.partial, 0);
    assert_true(c.frames > 5);
    assert_int_equal(c.valid, c.frames);
    assert_int_equal(c.kept, c.frames); /* the last frame ends the last commit */
    const uint64_t frames = c.frames;

    /* Into the last frame: the last commit (job `last`) is lost. */
    snprintf(wal, sizeof wal, "%s-wal", cut);
    long size = file_size(wal);
    assert_int_equal(truncate(wal, size - 100), 0);
    assert_ok(sm_store_wal_check(cut, &c, &err));
    assert_true(c.present);
    assert_true(c.cut);
    assert_int_equal(c.frames, frames - 1);
    assert_int_equal(c.partial, 4096 + 24 - 100);
    assert_int_equal(c.valid, frames - 1);
    assert_true(c.kept > 0 && c.kept <= c.valid);

    /* Opening it says so, and the store that lost transactions is a new store for agents. */
    sm_store *st = NULL;
    assert_ok(sm_store_open(&st, cut, &err));
    assert_non_null(strstr(sm_store_warning(st), "-wal was cut: 4020 bytes beyond its last whole"
                                                 " frame"));
    assert_true(store_fixture_is_store_id(sm_store_id(st)));
    assert_string_not_equal(sm_store_id(st), id);
    char renewed[SM_STORE_ID_SIZE];
    snprintf(renewed, sizeof renewed, "%s", sm_store_id(st));
    sm_job_row j;
    assert_int_equal(sm_store_job_get(st, last, &j, &err), SM_EINVAL); /* lost with the cut */
    assert_ok(sm_store_job_get(st, last - 1, &j, &err));
    sm_job_row_fini(&j);
    sm_store_close(st);
    /* Checkpointed to empty at that open: the next open finds nothing cut. */
    assert_ok(sm_store_wal_check(cut, &c, &err));
    assert_false(c.cut);
    st = NULL;
    assert_ok(sm_store_open(&st, cut, &err));
    assert_string_equal(sm_store_warning(st), "");
    assert_string_equal(sm_store_id(st), renewed);
    sm_store_close(st);

    /* The intact copy opens without a word, as the same store. */
    st = NULL;
    assert_ok(sm_store_open(&st, intact, &err));
    assert_string_equal(sm_store_warning(st), "");
    assert_string_equal(sm_store_id(st), id);
    assert_ok(sm_store_job_get(st, last, &j, &err));
    sm_job_row_fini(&j);
    sm_store_close(st);
    remove_db(intact);
    remove_db(cut);
}

static void test_store_wal_check_ignores_an_older_logs_leftover_tail(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    for (int i = 0; i < 3; i++)
        store_fixture_insert_job(f->st, "h1", 1000 + i);
    char copy[160], wal[200];
    copy_open_store(f, "old.db", copy, sizeof copy);
    snprintf(wal, sizeof wal, "%s-wal", copy);
    sm_wal_check c;
    assert_ok(sm_store_wal_check(copy, &c, &err));
    const uint64_t frames = c.frames;

    /* The last frame belongs to an older log (other salts), and a partial frame follows it: a
     * log written from the start over a longer one; nothing of the current log is past it. */
    FILE *fp = fopen(wal, "r+b");
    assert_non_null(fp);
    /* Flip the first byte of its salt-1: a fixed byte would equal the random salt's one time
     * in 256, and the frame would stay the current log's. */
    const long salt = 32 + (long)(frames - 1) * (4096 + 24) + 8;
    assert_int_equal(fseek(fp, salt, SEEK_SET), 0);
    const int byte = fgetc(fp);
    assert_int_not_equal(byte, EOF);
    assert_int_equal(fseek(fp, salt, SEEK_SET), 0);
    assert_int_equal(fputc(byte ^ 0xff, fp) != EOF, 1);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    for (int i = 0; i < 100; i++)
        fputc(0, fp);
    assert_int_equal(fclose(fp), 0);
    assert_ok(sm_store_wal_check(copy, &c, &err));
    assert_int_equal(c.frames, frames);
    assert_int_equal(c.partial, 100);
    assert_int_equal(c.valid, frames - 1);
    assert_false(c.cut);

    /* A header cut short is a cut: SQLite ignores the whole log. */
    assert_int_equal(truncate(wal, 20), 0);
    assert_ok(sm_store_wal_check(copy, &c, &err));
    assert_true(c.cut);
    assert_int_equal(c.partial, 20);
    assert_int_equal(c.page_size, 0);

    /* No WAL at all: nothing to say. */
    unlink(wal);
    assert_ok(sm_store_wal_check(copy, &c, &err));
    assert_false(c.present);
    assert_false(c.cut);
    remove_db(copy);
}

#define T(name)                                                                                    \
    cmocka_unit_test_setup_teardown(name, store_fixture_setup_closed, store_fixture_teardown)

int main(void)
{
    /* Every open of a fresh file logs its migration; the tests check the schema directly. */
    sm_log_level = LOG_WARNING;
    const struct CMUnitTest tests[] = {
        T(test_store_files_are_0600_under_any_umask),
        T(test_store_open_creates_the_current_schema_in_wal_mode),
        T(test_store_id_is_made_once_and_kept_across_reopen),
        T(test_store_wal_check_finds_a_wal_cut_mid_frame_and_not_an_intact_one),
        T(test_store_wal_check_ignores_an_older_logs_leftover_tail),
        T(test_store_reopen_keeps_data_and_version),
        T(test_store_a_corrupted_file_makes_the_store_failing_with_sqlites_words),
        T(test_store_a_rejected_insert_does_not_make_the_store_failing),
        T(test_store_open_of_an_unreachable_path_fails_with_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
