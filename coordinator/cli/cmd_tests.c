/* sockmatrix tests [RUN]: the tests with their ids and labels; and naming a test by a part of
 * its label or its id, for trends. */
#include "coordinator/cli/tests.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"

#define LIST_MAX 24 /* tests named in one error line before "..." */

void sm_cli_tests_fini(sm_cli_tests *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].label);
        free(t->v[i].brief);
    }
    free(t->v);
    t->v = NULL;
    t->n = 0;
}

int sm_cli_tests_add(sm_cli_tests *t, const char *label, const char *brief)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].label, label) == 0) {
            if (!t->v[i].brief[0] && brief && *brief) {
                char *b = strdup(brief);
                if (!b)
                    return SM_ENOMEM;
                free(t->v[i].brief);
                t->v[i].brief = b;
            }
            return 0;
        }
    sm_cli_test *v = realloc(t->v, (t->n + 1) * sizeof *v);
    if (!v)
        return SM_ENOMEM;
    t->v = v;
    char *l = strdup(label), *b = strdup(brief ? brief : "");
    if (!l || !b) {
        free(l);
        free(b);
        return SM_ENOMEM;
    }
    t->v[t->n++] = (sm_cli_test){l, b};
    return 0;
}

/* a and b alike: letters in any case, '_' as a blank. */
static char fold(char c)
{
    if (c >= 'A' && c <= 'Z')
        return (char)(c - 'A' + 'a');
    return c == '_' ? ' ' : c;
}

static bool same(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (fold(*a) != fold(*b))
            return false;
    return *a == *b;
}

static bool contains(const char *hay, const char *part)
{
    const size_t n = strlen(part);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k] && fold(hay[k]) == fold(part[k]))
            k++;
        if (k == n)
            return true;
    }
    return n == 0;
}

bool sm_cli_test_has(const sm_cli_test *t, const char *part)
{
    return contains(t->label, part) || (t->brief[0] && contains(t->brief, part));
}

size_t sm_cli_tests_match(const sm_cli_tests *t, const char *part, size_t *first)
{
    if ((part[0] == 't' || part[0] == 'T') && part[1] &&
        strspn(part + 1, "0123456789") == strlen(part + 1)) {
        const unsigned long id = strtoul(part + 1, NULL, 10);
        if (id >= 1 && id <= t->n) {
            *first = id - 1;
            return 1;
        }
    }
    for (size_t i = 0; i < t->n; i++)
        if (same(t->v[i].label, part) || (t->v[i].brief[0] && same(t->v[i].brief, part))) {
            *first = i;
            return 1;
        }
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (sm_cli_test_has(&t->v[i], part) && n++ == 0)
            *first = i;
    return n;
}

/* The columns of run's table (value and ratio columns) into t, labels with short forms, those
 * t has not yet after the others. quiet: a table that cannot be had is no error. 0, or 1 once
 * reported. */
static int add_table(sm_http *h, const char *run, sm_cli_tests *t, bool quiet)
{
    char path[96];
    snprintf(path, sizeof path, "/api/runs/%.24s/table?format=json", run);
    sm_http_resp r;
    sm_error err = {0};
    if (quiet) {
        /* A run whose table cannot be had only lacks short forms. */
        if (sm_http_get(h, path, &r, &err) != 0)
            return 0;
        if (r.status != 200) {
            sm_http_resp_fini(&r);
            return 0;
        }
    } else if (sm_cli_call_run(h, strtoull(run, NULL, 10), path, NULL, 0, &r)) {
        return 1;
    }
    sm_apiview_columns cols;
    int rc = sm_apiview_columns_decode(r.body, r.len, &cols, &err);
    sm_http_resp_fini(&r);
    for (size_t i = 0; i < cols.n && !rc; i++) {
        const char *label = cols.v[i].label, *brief = cols.v[i].brief;
        if (*label)
            rc = sm_cli_tests_add(t, label, strcmp(brief, label) ? brief : "");
    }
    sm_apiview_columns_fini(&cols);
    if (rc)
        sm_cli_fail("out of memory");
    return rc ? 1 : 0;
}

int sm_cli_tests_load(sm_http *h, unsigned long long run, sm_cli_tests *t)
{
    sm_http_resp r;
    if (sm_cli_call(h, "/api/grid", NULL, 0, &r))
        return 1;
    sm_apiview_grid_tests grid;
    sm_error err = {0};
    int rc = sm_apiview_grid_tests_decode(r.body, r.len, &grid, &err);
    sm_http_resp_fini(&r);
    for (size_t i = 0; i < grid.n_tests && !rc; i++)
        rc = sm_cli_tests_add(t, grid.tests[i], "");
    /* The short forms, from the tables of the runs the grid took its cells from; and their
     * tests without a cell to show (a ratio whose samples were all disturbed), after the
     * others, so that every test of those runs has an id. */
    char seen[16][24];
    size_t n_seen = 0;
    for (size_t c = 0; c < grid.n_cells; c++) {
        const char *id = grid.cell_runs[c];
        bool again = !*id;
        for (size_t i = 0; i < n_seen && !again; i++)
            again = strcmp(seen[i], id) == 0;
        if (again || rc || n_seen == 16)
            continue;
        snprintf(seen[n_seen++], sizeof seen[0], "%.23s", id);
        rc = add_table(h, id, t, true);
    }
    sm_apiview_grid_tests_fini(&grid);
    if (rc == SM_ENOMEM) {
        sm_cli_fail("out of memory");
        rc = 1;
    }
    if (!rc && run) {
        char id[24];
        snprintf(id, sizeof id, "%llu", run);
        rc = add_table(h, id, t, false);
    }
    return rc ? 1 : 0;
}

/* The labels of the tests (those matching part when it is not NULL) as one text for an error
 * line: "t1 'stream tcp ...', t2 '...'", at most LIST_MAX. */
static void list_text(const sm_cli_tests *t, const char *part, char *buf, size_t cap)
{
    size_t at = 0, shown = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->n && at + 1 < cap; i++) {
        if (part && !sm_cli_test_has(&t->v[i], part))
            continue;
        if (shown++ == LIST_MAX) {
            snprintf(buf + at, cap - at, ", ...");
            return;
        }
        at += (size_t)snprintf(buf + at, cap - at, "%st%zu '%s'", shown > 1 ? ", " : "", i + 1,
                               t->v[i].label);
    }
}

int sm_cli_test_resolve(sm_http *h, const char *part, char *buf, size_t cap)
{
    sm_cli_tests t = {0};
    if (sm_cli_tests_load(h, 0, &t)) {
        sm_cli_tests_fini(&t);
        return 1;
    }
    size_t first = 0;
    const size_t n = t.n ? sm_cli_tests_match(&t, part, &first) : 1;
    char list[4096];
    int rc = 0;
    if (t.n == 0) {
        snprintf(buf, cap, "%s", part); /* no ended run yet: the coordinator says so */
    } else if (n == 1) {
        snprintf(buf, cap, "%s", t.v[first].label);
    } else if (n > 1) {
        list_text(&t, part, list, sizeof list);
        sm_cli_fail("--test '%s' names %zu tests: give more of the label, or the id: %s", part, n,
                    list);
        rc = 2;
    } else {
        list_text(&t, NULL, list, sizeof list);
        sm_cli_fail("--test '%s' names no test; the tests are: %s", part, list);
        rc = 2;
    }
    sm_cli_tests_fini(&t);
    return rc;
}

int sm_cli_cmd_tests(sm_http *h, const sm_cli_opts *o)
{
    sm_cli_tests t = {0};
    if (sm_cli_tests_load(h, o->run_id, &t)) {
        sm_cli_tests_fini(&t);
        return 1;
    }
    /* With RUN: only that run's tests, under the ids they have everywhere. */
    sm_cli_tests mine = {0};
    int rc = o->run_id ? 0 : 1;
    if (o->run_id) {
        char id[24];
        snprintf(id, sizeof id, "%" PRIu64, o->run_id);
        rc = add_table(h, id, &mine, false);
    }
    if (rc == 1 && o->run_id) {
        sm_cli_tests_fini(&t);
        sm_cli_tests_fini(&mine);
        return 1;
    }
    if (t.n == 0 && o->format == SM_CLI_FMT_TABLE) {
        sm_cli_fail("no tests yet: no run has ended (sockmatrix runs lists them)");
        sm_cli_tests_fini(&t);
        return 0;
    }
    sm_grid g = {3, 0, "lll", NULL, o->format};
    static const char *const head[] = {"ID", "SHORT", "TEST"};
    rc = sm_grid_row(&g, head);
    for (size_t i = 0; i < t.n && !rc; i++) {
        bool in = !o->run_id;
        for (size_t k = 0; k < mine.n && !in; k++)
            in = strcmp(mine.v[k].label, t.v[i].label) == 0;
        if (!in)
            continue;
        char id[24];
        snprintf(id, sizeof id, "t%zu", i + 1);
        const char *row[] = {id, t.v[i].brief[0] ? t.v[i].brief : t.v[i].label, t.v[i].label};
        rc = sm_grid_row(&g, row);
    }
    sm_cli_tests_fini(&t);
    sm_cli_tests_fini(&mine);
    return sm_grid_done(&g, rc);
}
