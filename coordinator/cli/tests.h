/* Tests as the user names them: by any part of a label, or by the short id that sockmatrix
 * tests prints (t1, t2, ...). */
#ifndef SM_CLI_TESTS_H
#define SM_CLI_TESTS_H

#include <stdbool.h>
#include <stddef.h>

#include "coordinator/cli/http.h"

/* One test: its label as the run's table names it (sm_export_label), and its short form ("" when
 * the table gives none). */
typedef struct sm_cli_test {
    char *label, *brief; /* owned */
} sm_cli_test;

/* The tests, in their ids' order: t1 is v[0]. */
typedef struct sm_cli_tests {
    sm_cli_test *v;
    size_t n;
} sm_cli_tests;

void sm_cli_tests_fini(sm_cli_tests *t);

/* Adds a test unless its label is there already (the first short form stays). 0 or
 * SM_ENOMEM. */
int sm_cli_tests_add(sm_cli_tests *t, const char *label, const char *brief);

/* What part names among t: "t3" (any case) is the third; a label or short form equal to part
 * (letters in any case, '_' read as a blank) is that one; else the tests of which part is a
 * piece of the label or of the short form. Returns the count of matches (0, 1 or more) and
 * *first the index of the first one (only when 1 or more). */
size_t sm_cli_tests_match(const sm_cli_tests *t, const char *part, size_t *first);

/* Whether test i matches part as sm_cli_tests_match counts it (substring, not id or exact). */
bool sm_cli_test_has(const sm_cli_test *t, const char *part);

/* The tests the coordinator knows: those of the ended runs' latest cells (GET /api/grid), in
 * label order, with their short forms from those runs' tables; then the other tests of those
 * tables (a column without a cell to show); then, when run is not 0, those of run that are
 * not among them yet. 0, or 1 once the failure is reported. */
int sm_cli_tests_load(sm_http *h, unsigned long long run, sm_cli_tests *t);

/* Resolves --test part to a label (into buf) against the tests the coordinator knows.
 * Returns 0; or 2 after one line on stderr: part names several tests (they are listed) or
 * none (the tests are listed); 1 when the coordinator could not say. With no test known at
 * all, part is taken as it is. */
int sm_cli_test_resolve(sm_http *h, const char *part, char *buf, size_t cap);

#endif
