/* Verdicts: a report never says "fine" about what it did not judge. Every cell of a table,
 * every row (host or pair) and the table as a whole is ok (judged, nothing stands apart),
 * flagged (an anomaly is on it), inconclusive (measured, but not judged: too few clean
 * samples, every sample disturbed, no fleet to compare with) or failed (every job failed), and
 * the last two say why in words a user can act on. Pure computation on a table and its
 * anomalies. */
#ifndef SM_COORD_VERDICT_H
#define SM_COORD_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/table.h"

/* "ok", "flagged", "inconclusive", "failed"; "none" for SM_VERDICT_NONE. */
const char *sm_verdict_name(sm_verdict v);

/* Fills t's verdicts from the anomalies a[0..n) found on it (sm_analysis_table,
 * sm_analysis_regression), replacing any earlier ones. A cell (value or ratio) is:
 *   - flagged when an anomaly is on it (its column, and its row as sm_analysis_flag_table
 *     puts it);
 *   - none when it has no job at all;
 *   - failed when every job failed, none on its time limit ("every job failed: REASON");
 *   - inconclusive, in this order, when: no clean sample ("3 of 3 samples disturbed: REASON",
 *     with ", 1 failed" when some failed, and "disturbed (remeasure ran out):" when the cell
 *     was measured again as often as its run allows, SM_REPS_DISTURBED); its jobs mostly ran
 *     into their time limit and that was not enough to flag it ("3 of 3 jobs at the time
 *     limit: too few hosts finished to compare with"); fewer than 3 clean samples ("1 clean
 *     sample < 3; 2 of 3 samples disturbed: REASON"); CPU times too coarse (ratios of a few
 *     scheduler ticks); fewer than 3 hosts of its column have clean samples ("only 1 of 3
 *     hosts has clean samples of this test; judging needs 3"), since a host is never judged
 *     against a fleet whose samples were set aside;
 *   - ok otherwise.
 * With disturbed samples included (t->with_disturbed), they count as clean. A row is flagged
 * when any of its cells is, failed when all its cells with jobs failed, inconclusive when any
 * value cell is inconclusive or failed ("2 of 4 cells not judged: TEST: WHY"), else ok (none
 * without jobs). The table: t->n_* count its value cells by verdict; t->whole is flagged when n
 * > 0, else inconclusive when any value cell is not judged (failed when none was measured
 * clean), ok when some were judged, none when nothing ran. 0, or SM_ENOMEM (the verdicts
 * are then incomplete and the table must not be shown as judged). */
int sm_verdict_table(sm_table *t, const sm_anomaly *a, size_t n);

/* A run's verdict over its tables (hosts, pairs): the counts summed, the cells that were not
 * judged listed with why. */
typedef struct sm_verdict_note {
    char row[2 * 65 + 2];           /* the host, or "client->server" */
    char test[SM_TABLE_LABEL_MAX];  /* the column's label */
    char brief[SM_TABLE_BRIEF_MAX]; /* its short form, "" when the table has none */
    bool ratio;                     /* a ratio column */
    sm_verdict verdict;             /* inconclusive or failed */
    char why[320];
} sm_verdict_note;

typedef struct sm_run_verdict {
    sm_verdict verdict;
    uint32_t n_ok, n_flagged, n_inconclusive, n_failed; /* value cells */
    uint32_t n_anomalies;
    sm_verdict_note *notes; /* value cells first, then ratio cells; owned */
    size_t n_notes;
} sm_run_verdict;

/* Adds table t (after sm_verdict_table) to v: its counts, its anomalies' count (n_anomalies)
 * and a note for each cell not judged; v->verdict is recomputed as for one table. 0 or
 * SM_ENOMEM. */
int sm_run_verdict_add(sm_run_verdict *v, const sm_table *t, size_t n_anomalies);
void sm_run_verdict_fini(sm_run_verdict *v);

/* "0 anomalies among 1 judged cell; 17 cells inconclusive, 1 failed" (the words for people,
 * no newline); "no cell was measured" when there was none. */
int sm_run_verdict_summary(const sm_run_verdict *v, char *buf, size_t len);

/* sm_run_verdict_summary of table t alone (after sm_verdict_table). */
int sm_table_verdict_summary(const sm_table *t, char *buf, size_t len);

#endif
