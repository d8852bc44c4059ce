/* The store's helpers under every other file of it: SQLite's errors as ours, a statement
 * made ready for its next use, reading columns, collecting rows, binding ids. Calls run one
 * way: store.c and the table files call these, and nothing here calls back into them. */
#include "coordinator/store/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* A constraint, type or size the statement broke is the caller's (SM_EINVAL); the rest, but
 * memory, is the store's own (SM_ESYS). */
int store_code_of(int sqlite_rc)
{
    switch (sqlite_rc & 0xff) {
    case SQLITE_NOMEM:
        return SM_ENOMEM;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
        return SM_EINVAL;
    default:
        return SM_ESYS;
    }
}

/* The error of the connection's last failed call, with SQLite's own words. */
int store_db_error(sqlite3 *db, sm_error *err, const char *what)
{
    return sm_error_set(err, store_code_of(sqlite3_extended_errcode(db)), "%s: %s", what,
                        sqlite3_errmsg(db));
}

/* Unbinding matters as much as resetting: text bound SQLITE_STATIC points into the caller's
 * memory, which may be gone by the statement's next use. */
void store_done_with(sqlite3_stmt *s)
{
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
}

/* A fixed-size field from the caller must be terminated inside its array. */
bool store_fits(const char *s, size_t size)
{
    return memchr(s, '\0', size) != NULL;
}

/* Copies a text column into a fixed-size field; NULL reads as "". */
int store_column_copy(sqlite3_stmt *s, int col, char *dst, size_t size, sm_error *err)
{
    const unsigned char *text = sqlite3_column_text(s, col);
    size_t len = (size_t)sqlite3_column_bytes(s, col);
    if (len >= size)
        return sm_error_set(err, SM_EPARSE, "stored %s is %zu bytes, more than %zu",
                            sqlite3_column_name(s, col), len, size - 1);
    if (text != NULL)
        memcpy(dst, text, len);
    dst[len] = '\0';
    return 0;
}

/* A malloc'd copy of a text column; *out = NULL for SQL NULL. */
int store_column_dup(sqlite3_stmt *s, int col, char **out, sm_error *err)
{
    *out = NULL;
    if (sqlite3_column_type(s, col) == SQLITE_NULL)
        return 0;
    const unsigned char *text = sqlite3_column_text(s, col);
    if (text == NULL)
        return sm_error_set(err, SM_ENOMEM, "reading %s: out of memory",
                            sqlite3_column_name(s, col));
    size_t len = (size_t)sqlite3_column_bytes(s, col);
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return sm_error_set(err, SM_ENOMEM, "reading %s: out of memory",
                            sqlite3_column_name(s, col));
    memcpy(copy, text, len + 1);
    *out = copy;
    return 0;
}

/* Maps a stored name back to its enum value, or -1. */
int store_name_index(const char *const *names, size_t n, const unsigned char *name)
{
    if (name == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], (const char *)name) == 0)
            return (int)i;
    return -1;
}

/* Grows *rows to hold one more element of size elem; cap doubles so appends stay linear. */
static int grow(void **rows, size_t *cap, size_t n, size_t elem, sm_error *err)
{
    if (n < *cap)
        return 0;
    size_t new_cap = *cap ? *cap * 2 : 16;
    void *p = realloc(*rows, new_cap * elem);
    if (p == NULL) {
        sm_error_set(err, SM_ENOMEM, "store: out of memory");
        return SM_ENOMEM;
    }
    *rows = p;
    *cap = new_cap;
    return 0;
}

void store_rows_free(const store_row_type *t, void *rows, size_t n)
{
    for (size_t i = 0; t->fini != NULL && rows != NULL && i < n; i++)
        t->fini((char *)rows + i * t->size);
    free(rows);
}

/* Steps s (already bound) to its end, reading each row into a growing array, and resets it.
 * A failure frees what was read: no caller wants half a list. */
int store_collect(sqlite3_stmt *s, const store_row_type *t, void **prows, size_t *pn,
                  const char *what, sm_error *err)
{
    void *rows = NULL;
    size_t n = 0, cap = 0;
    int ret = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ret = grow(&rows, &cap, n, t->size, err);
        if (ret != 0)
            break;
        ret = t->read(s, (char *)rows + n * t->size, err);
        if (ret != 0)
            break;
        n++;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_error(sqlite3_db_handle(s), err, what);
    store_done_with(s);
    if (ret != 0) {
        store_rows_free(t, rows, n);
        return ret;
    }
    *prows = rows;
    *pn = n;
    return 0;
}

/* SQLite's integers are signed: a larger id can name no row and would wrap if bound. */
int store_bind_id(sqlite3_stmt *s, int idx, uint64_t id, const char *what, sm_error *err)
{
    if (id > (uint64_t)INT64_MAX)
        return sm_error_set(err, SM_EINVAL, "%s id %llu out of range", what,
                            (unsigned long long)id);
    if (sqlite3_bind_int64(s, idx, (int64_t)id) != SQLITE_OK)
        return store_db_error(sqlite3_db_handle(s), err, "binding an id");
    return 0;
}

int store_get_row(sm_store *st, int q, uint64_t id, const char *what, store_row_reader read,
                  void *out, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[q];
    int ret = store_bind_id(s, 1, id, what, err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        ret = read(s, out, err);
    else if (rc == SQLITE_DONE)
        ret = sm_error_set(err, SM_EINVAL, "no %s %llu", what, (unsigned long long)id);
    else {
        char op[48];
        snprintf(op, sizeof op, "%s get", what);
        ret = store_db_error(st->db, err, op);
    }
out:
    store_done_with(s);
    return ret;
}

/* SM_EINVAL when no run has that id. */
static int run_exists(sm_store *st, uint64_t id, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RUN_EXISTS];
    int ret = store_bind_id(s, 1, id, "run", err);
    if (ret == 0) {
        int rc = sqlite3_step(s);
        if (rc == SQLITE_DONE)
            ret = sm_error_set(err, SM_EINVAL, "no run %llu", (unsigned long long)id);
        else if (rc != SQLITE_ROW)
            ret = store_db_error(st->db, err, "run lookup");
    }
    store_done_with(s);
    return ret;
}

/* store_collect() over the rows of one run. A run without rows may not exist at all, and an unknown
 * run must not pass for an empty one. */
int store_collect_run(sm_store *st, int q, uint64_t run_id, const store_row_type *t, void **prows,
                      size_t *pn, const char *what, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[q];
    int ret = store_bind_id(s, 1, run_id, "run", err);
    if (ret != 0) {
        store_done_with(s);
        return ret;
    }
    void *rows;
    size_t n;
    ret = store_collect(s, t, &rows, &n, what, err);
    /* No rows: nothing to free, the array is NULL. */
    if (ret == 0 && n == 0)
        ret = run_exists(st, run_id, err);
    if (ret == 0) {
        *prows = rows;
        *pn = n;
    }
    return ret;
}
