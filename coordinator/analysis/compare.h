/* Run against run: the cells two runs' comparison tables share (same row label, same test
 * column), side by side with their change and whether their 95% CIs of the median are apart,
 * and the cells only one run has. Pure: two sm_tables in, a list out. */
#ifndef SM_COORD_COMPARE_H
#define SM_COORD_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/table.h"

/* The rule, said once wherever a verdict is shown. */
#define SM_COMPARE_RULE                                                                            \
    "apart: the two 95% CIs of the medians do not overlap (higher or lower is b against a); "      \
    "overlap: they do, and no change is claimed; no data: a cell has no median. Below 6 samples "  \
    "a CI is [min, max] and covers less than 95% (ci_coverage)"

typedef enum sm_compare_verdict {
    SM_COMPARE_OVERLAP = 0, /* the CIs overlap: not a change */
    SM_COMPARE_HIGHER,      /* b's CI lies wholly above a's */
    SM_COMPARE_LOWER,       /* b's CI lies wholly below a's */
    SM_COMPARE_NO_DATA,     /* a or b has no median (only failed jobs) */
} sm_compare_verdict;

const char *sm_compare_verdict_name(sm_compare_verdict v); /* "overlap", "higher", ... */

typedef struct sm_compare_cell {
    char row[2 * 65 + 2];          /* host, or "client->server" */
    char test[SM_TABLE_LABEL_MAX]; /* the column's label */
    char metric[32], unit[16];     /* the column's metric and unit (a's) */
    bool ratio;                    /* a ratio column */
    sm_table_cell a, b;            /* copies of both runs' cells */
    double change;                 /* b/a - 1 (a fraction); NaN without two medians or a 0 */
    sm_compare_verdict verdict;
} sm_compare_cell;

typedef struct sm_compare_only {
    char row[2 * 65 + 2];
    char test[SM_TABLE_LABEL_MAX];
    bool ratio;
} sm_compare_only;

typedef struct sm_compare {
    sm_compare_cell *shared;
    size_t n_shared;
    sm_compare_only *only_a, *only_b;
    size_t n_only_a, n_only_b;
} sm_compare;

/* The verdict of two cells by the rule above. */
sm_compare_verdict sm_compare_cells(const sm_table_cell *a, const sm_table_cell *b);

/* Appends to *out (zeroed before the first call; call once per scope: hosts, pairs) the cells
 * of a and b: a cell is in a table when it has a median, failed jobs or disturbed ones. Returns 0
 * or SM_ENOMEM (*out then holds what was appended before; sm_compare_fini frees it). */
int sm_compare_tables(const sm_table *a, const sm_table *b, sm_compare *out);
void sm_compare_fini(sm_compare *c);

/* Appends to buf (cap bytes, NUL-terminated, cut when full) the distinct test labels of the
 * n tables, "; " between them; "no tests" when there is none. For the error of two runs that
 * share no cell. */
void sm_compare_tests_text(const sm_table *const *t, size_t n, char *buf, size_t cap);

/* One side of a comparison, for the JSON. */
typedef struct sm_compare_run {
    uint64_t id;
    const char *name, *state; /* state: "running", "done", ... */
} sm_compare_run;

/* {"version":1,"a":{"id","name","state"},"b":{...},"a_state","b_state",
 * "disturbed":"exclude"|"include","rule":SM_COMPARE_RULE,"change_unit":"%",
 * "shared":[{"host","test","metric","unit","ratio","a":{"median","ci95_low","ci95_high",
 * "ci_coverage","n","failed","unit"},"b":{...},"change_pct","verdict"}],
 * "only_a":[{"host","test","ratio"}],"only_b":[...],"counts":{"shared","changed","only_a",
 * "only_b"}}: malloc'd, NULL when out of memory. A number without a value is null. */
char *sm_compare_json(const sm_compare *c, sm_compare_run a, sm_compare_run b, bool with_disturbed);

#endif
