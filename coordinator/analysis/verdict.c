/* Verdicts of a table's cells, rows and the table, and of a run over its tables. */
#include "coordinator/analysis/verdict.h"

#include "coordinator/analysis/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fewer hosts than this in a column leave it without a fleet (sm_analysis_table's rule). */
#define FLEET_MIN 3

const char *sm_verdict_name(sm_verdict v)
{
    switch (v) {
    case SM_VERDICT_OK:
        return "ok";
    case SM_VERDICT_FLAGGED:
        return "flagged";
    case SM_VERDICT_INCONCLUSIVE:
        return "inconclusive";
    case SM_VERDICT_FAILED:
        return "failed";
    case SM_VERDICT_NONE:
        break;
    }
    return "none";
}

/* Sets j to v with a formatted why (NULL fmt: none). false: out of memory. */
static bool judge(sm_judgement *j, sm_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool judge(sm_judgement *j, sm_verdict v, const char *fmt, ...)
{
    free(j->why);
    j->why = NULL;
    j->verdict = v;
    if (fmt == NULL)
        return true;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&j->why, fmt, ap);
    va_end(ap);
    if (n < 0) {
        j->why = NULL;
        return false;
    }
    return true;
}

static const char *plural(uint32_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* "; 2 failed: REASON" for a cell with failed jobs, "" without. */
static void failed_tail(const sm_table_cell *c, char *buf, size_t len)
{
    buf[0] = '\0';
    if (c->failed > 0)
        snprintf(buf, len, "; %" PRIu32 " failed: %.200s", c->failed,
                 c->failed_reason ? c->failed_reason : "no reason recorded");
}

static bool at_limit(const sm_table_cell *c)
{
    return c->limited > 0 && c->limited >= (c->have ? c->s.n : 0);
}

/* The verdict of one cell that no anomaly is on; fleet is how many hosts of its column have
 * clean samples (n_hosts the column's hosts, 0 in a pair table where that is not counted). */
static bool judge_cell(const sm_table *t, sm_table_cell *c, size_t fleet, size_t n_hosts)
{
    uint32_t used = c->have ? (uint32_t)c->s.n : 0;
    uint32_t aside = t->with_disturbed ? 0 : c->disturbed;
    uint32_t total = used + c->failed + aside;
    char tail[256];
    failed_tail(c, tail, sizeof tail);
    const char *dreason = c->disturbed_reason ? c->disturbed_reason : "no reason recorded";
    /* Measured again to its remeasure bound and still short: more rounds were no way out. */
    const char *ran_out = c->stopped == SM_REPS_DISTURBED ? " (remeasure ran out)" : "";
    if (total == 0)
        return judge(&c->j, SM_VERDICT_NONE, NULL);
    if (used == 0 && aside == 0 && c->limited == 0)
        return c->failed == 1
                   ? judge(&c->j, SM_VERDICT_FAILED, "the job failed: %.200s",
                           c->failed_reason ? c->failed_reason : "no reason recorded")
                   : judge(&c->j, SM_VERDICT_FAILED, "every job failed (%" PRIu32 "): %.200s",
                           c->failed, c->failed_reason ? c->failed_reason : "no reason recorded");
    if (used == 0 && aside > 0)
        return judge(&c->j, SM_VERDICT_INCONCLUSIVE,
                     "%" PRIu32 " of %" PRIu32 " samples disturbed%s: %.200s%s", aside, total,
                     ran_out, dreason, tail);
    if (at_limit(c))
        return judge(&c->j, SM_VERDICT_INCONCLUSIVE,
                     "%" PRIu32 " of %" PRIu32 " jobs at the time limit, and too few hosts "
                     "finished to compare with",
                     c->limited, total);
    if (used < SM_ANALYSIS_NOISY_MIN_N) {
        char dist[300] = "";
        if (aside > 0)
            snprintf(dist, sizeof dist, "; %" PRIu32 " of %" PRIu32 " samples disturbed%s: %.200s",
                     aside, total, ran_out, dreason);
        return judge(&c->j, SM_VERDICT_INCONCLUSIVE, "%" PRIu32 " clean %s < %d%s%s", used,
                     plural(used, "sample", "samples"), SM_ANALYSIS_NOISY_MIN_N, dist, tail);
    }
    if (c->coarse)
        return judge(&c->j, SM_VERDICT_INCONCLUSIVE,
                     "CPU times of a few scheduler ticks: too coarse to compare");
    if (fleet < FLEET_MIN) {
        if (n_hosts > 0 && fleet == n_hosts)
            return judge(&c->j, SM_VERDICT_INCONCLUSIVE,
                         "%zu %s measured this test; judging a host needs %d", fleet,
                         fleet == 1 ? "host" : "hosts", FLEET_MIN);
        if (n_hosts > 0)
            return judge(&c->j, SM_VERDICT_INCONCLUSIVE,
                         "only %zu of %zu hosts %s clean samples of this test; judging needs %d",
                         fleet, n_hosts, fleet == 1 ? "has" : "have", FLEET_MIN);
        return judge(&c->j, SM_VERDICT_INCONCLUSIVE,
                     "only %zu hosts have clean samples of this test in pairs; judging needs %d",
                     fleet, FLEET_MIN);
    }
    return judge(&c->j, SM_VERDICT_OK, NULL);
}

/* Whether an anomaly of a[0..n) is on cell (r, k) of t. */
static bool flagged_at(const sm_table *t, const sm_anomaly *a, size_t n, size_t r,
                       const sm_analysis_column *k)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].ratio == k->ratio && a[i].col == k->index && a[i].row != SIZE_MAX &&
            sm_analysis_flags_row(t, &a[i], r))
            return true;
    return false;
}

/* Whether name[0..len) is among the first n of hosts. */
static bool host_seen(const char (*hosts)[sizeof(((sm_table *)0)->rows[0])], size_t n,
                      const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(hosts[i]) == len && memcmp(hosts[i], name, len) == 0)
            return true;
    return false;
}

/* The hosts with clean samples in column k: rows with a value (not at their time limit, not
 * coarse) in a host table; the distinct hosts of such rows in a pair table. SIZE_MAX when out
 * of memory. */
static size_t fleet_of(const sm_table *t, const sm_analysis_column *k)
{
    size_t n = 0;
    if (!t->pairs) {
        for (size_t r = 0; r < t->n_rows; r++) {
            const sm_table_cell *c = sm_analysis_cell_at(k, r);
            n += c->have && !at_limit(c) && !c->coarse;
        }
        return n;
    }
    char(*hosts)[sizeof t->rows[0]] = calloc(2 * t->n_rows + 1, sizeof t->rows[0]);
    if (hosts == NULL)
        return SIZE_MAX;
    for (size_t r = 0; r < t->n_rows; r++) {
        const sm_table_cell *c = sm_analysis_cell_at(k, r);
        if (!c->have || c->coarse)
            continue;
        const char *label = t->rows[r];
        size_t len = strnlen(label, sizeof t->rows[r]);
        const char *gt = memchr(label, '>', len);
        if (gt == NULL || gt == label || gt[-1] != '-')
            continue;
        const char *names[2] = {label, gt + 1};
        size_t lens[2] = {(size_t)(gt - 1 - label), (size_t)(label + len - gt - 1)};
        for (int s = 0; s < 2; s++) {
            if (lens[s] == 0 || lens[s] >= sizeof t->rows[0] ||
                host_seen(hosts, n, names[s], lens[s]))
                continue;
            memcpy(hosts[n], names[s], lens[s]);
            hosts[n++][lens[s]] = '\0';
        }
    }
    free(hosts);
    return n;
}

static bool judge_column(sm_table *t, bool ratio, size_t col, const sm_anomaly *a, size_t n)
{
    sm_analysis_column k = sm_analysis_column_of(t, ratio, col);
    size_t fleet = fleet_of(t, &k);
    if (fleet == SIZE_MAX)
        return false;
    for (size_t r = 0; r < t->n_rows; r++) {
        sm_table_cell *c = (sm_table_cell *)sm_analysis_cell_at(&k, r);
        bool ok = flagged_at(t, a, n, r, &k) ? judge(&c->j, SM_VERDICT_FLAGGED, NULL)
                                             : judge_cell(t, c, fleet, t->pairs ? 0 : t->n_rows);
        if (!ok)
            return false;
    }
    return true;
}

/* A column's label for people: its brief when it has one. */
static const char *col_name(const sm_table_col *c)
{
    return c->brief[0] ? c->brief : c->label;
}

static bool judge_row(sm_table *t, size_t r)
{
    size_t flagged = 0, failed = 0, unjudged = 0, measured = 0, first = SIZE_MAX;
    for (size_t c = 0; c < t->n_ratio_cols; c++)
        flagged += t->ratio_cells[r * t->n_ratio_cols + c].j.verdict == SM_VERDICT_FLAGGED;
    for (size_t c = 0; c < t->n_cols; c++) {
        sm_verdict v = t->cells[r * t->n_cols + c].j.verdict;
        flagged += v == SM_VERDICT_FLAGGED;
        failed += v == SM_VERDICT_FAILED;
        measured += v != SM_VERDICT_NONE;
        if (v == SM_VERDICT_INCONCLUSIVE || v == SM_VERDICT_FAILED) {
            unjudged++;
            if (first == SIZE_MAX)
                first = c;
        }
    }
    sm_judgement *j = &t->row_j[r];
    if (flagged > 0)
        return judge(j, SM_VERDICT_FLAGGED, NULL);
    if (measured == 0)
        return judge(j, SM_VERDICT_NONE, NULL);
    if (unjudged == 0)
        return judge(j, SM_VERDICT_OK, NULL);
    const sm_table_cell *c = &t->cells[r * t->n_cols + first];
    return judge(j, failed == measured ? SM_VERDICT_FAILED : SM_VERDICT_INCONCLUSIVE,
                 "%zu of %zu %s not judged: %s: %s", unjudged, measured,
                 measured == 1 ? "cell" : "cells", col_name(&t->cols[first]),
                 c->j.why ? c->j.why : "no reason recorded");
}

/* The verdict of counts: flagged with anomalies, else not judged when any cell was not. */
static sm_verdict whole_of(uint32_t ok, uint32_t inconclusive, uint32_t failed, uint32_t anomalies)
{
    if (anomalies > 0)
        return SM_VERDICT_FLAGGED;
    if (inconclusive + failed > 0)
        return ok == 0 && inconclusive == 0 ? SM_VERDICT_FAILED : SM_VERDICT_INCONCLUSIVE;
    return ok > 0 ? SM_VERDICT_OK : SM_VERDICT_NONE;
}

int sm_verdict_table(sm_table *t, const sm_anomaly *a, size_t n)
{
    if (t->row_j == NULL && t->n_rows > 0) {
        t->row_j = calloc(t->n_rows, sizeof *t->row_j);
        if (t->row_j == NULL)
            return SM_ENOMEM;
    }
    for (size_t c = 0; c < t->n_cols; c++)
        if (!judge_column(t, false, c, a, n))
            return SM_ENOMEM;
    for (size_t c = 0; c < t->n_ratio_cols; c++)
        if (!judge_column(t, true, c, a, n))
            return SM_ENOMEM;
    for (size_t r = 0; r < t->n_rows; r++)
        if (!judge_row(t, r))
            return SM_ENOMEM;
    t->n_ok = t->n_flagged = t->n_inconclusive = t->n_failed = 0;
    for (size_t i = 0; i < t->n_rows * t->n_cols; i++) {
        sm_verdict v = t->cells[i].j.verdict;
        t->n_ok += v == SM_VERDICT_OK;
        t->n_flagged += v == SM_VERDICT_FLAGGED;
        t->n_inconclusive += v == SM_VERDICT_INCONCLUSIVE;
        t->n_failed += v == SM_VERDICT_FAILED;
    }
    t->n_anomalies = (uint32_t)n;
    return judge(&t->whole, whole_of(t->n_ok, t->n_inconclusive, t->n_failed, (uint32_t)n), NULL)
               ? 0
               : SM_ENOMEM;
}

/* ---- a run over its tables ---- */

static int add_notes(sm_run_verdict *v, const sm_table *t, bool ratio)
{
    size_t n_cols = ratio ? t->n_ratio_cols : t->n_cols;
    const sm_table_cell *cells = ratio ? t->ratio_cells : t->cells;
    const sm_table_col *cols = ratio ? t->ratio_cols : t->cols;
    for (size_t r = 0; r < t->n_rows; r++) {
        for (size_t c = 0; c < n_cols; c++) {
            const sm_table_cell *x = &cells[r * n_cols + c];
            if (x->j.verdict != SM_VERDICT_INCONCLUSIVE && x->j.verdict != SM_VERDICT_FAILED)
                continue;
            sm_verdict_note *grown = realloc(v->notes, (v->n_notes + 1) * sizeof *v->notes);
            if (grown == NULL)
                return SM_ENOMEM;
            v->notes = grown;
            sm_verdict_note *note = &v->notes[v->n_notes++];
            memset(note, 0, sizeof *note);
            COPY_FIXED(note->row, t->rows[r]);
            COPY_FIXED(note->test, cols[c].label);
            COPY_FIXED(note->brief, cols[c].brief);
            note->ratio = ratio;
            note->verdict = x->j.verdict;
            snprintf(note->why, sizeof note->why, "%s", x->j.why ? x->j.why : "");
        }
    }
    return 0;
}

int sm_run_verdict_add(sm_run_verdict *v, const sm_table *t, size_t n_anomalies)
{
    v->n_ok += t->n_ok;
    v->n_flagged += t->n_flagged;
    v->n_inconclusive += t->n_inconclusive;
    v->n_failed += t->n_failed;
    v->n_anomalies += (uint32_t)n_anomalies;
    v->verdict = whole_of(v->n_ok, v->n_inconclusive, v->n_failed, v->n_anomalies);
    int rc = add_notes(v, t, false);
    return rc ? rc : add_notes(v, t, true);
}

void sm_run_verdict_fini(sm_run_verdict *v)
{
    if (v == NULL)
        return;
    free(v->notes);
    memset(v, 0, sizeof *v);
}

int sm_run_verdict_summary(const sm_run_verdict *v, char *buf, size_t len)
{
    uint32_t judged = v->n_ok + v->n_flagged;
    if (judged + v->n_inconclusive + v->n_failed == 0)
        return snprintf(buf, len, "no cell was measured");
    int at = snprintf(buf, len, "%" PRIu32 " %s among %" PRIu32 " judged %s", v->n_anomalies,
                      v->n_anomalies == 1 ? "anomaly" : "anomalies", judged,
                      judged == 1 ? "cell" : "cells");
    size_t off = at < 0 ? 0 : (size_t)at < len ? (size_t)at : len;
    if (v->n_inconclusive > 0)
        at += snprintf(buf + off, len - off, "; %" PRIu32 " %s inconclusive", v->n_inconclusive,
                       v->n_inconclusive == 1 ? "cell" : "cells");
    off = at < 0 ? 0 : (size_t)at < len ? (size_t)at : len;
    if (v->n_failed > 0)
        at += snprintf(buf + off, len - off, "%s%" PRIu32 " %s failed",
                       v->n_inconclusive > 0 ? ", " : "; ", v->n_failed,
                       v->n_failed == 1 ? "cell" : "cells");
    return at;
}

int sm_table_verdict_summary(const sm_table *t, char *buf, size_t len)
{
    const sm_run_verdict v = {.verdict = t->whole.verdict,
                              .n_ok = t->n_ok,
                              .n_flagged = t->n_flagged,
                              .n_inconclusive = t->n_inconclusive,
                              .n_failed = t->n_failed,
                              .n_anomalies = t->n_anomalies};
    return sm_run_verdict_summary(&v, buf, len);
}

bool sm_run_verdict_cjson(const sm_run_verdict *v, cJSON *root)
{
    char summary[256];
    sm_run_verdict_summary(v, summary, sizeof summary);
    bool ok = cJSON_AddStringToObject(root, "verdict", sm_verdict_name(v->verdict)) != NULL &&
              cJSON_AddStringToObject(root, "summary", summary) != NULL;
    cJSON *cells = ok ? cJSON_AddObjectToObject(root, "cells") : NULL;
    ok = cells != NULL &&
         cJSON_AddNumberToObject(cells, "judged", v->n_ok + v->n_flagged) != NULL &&
         cJSON_AddNumberToObject(cells, "ok", v->n_ok) != NULL &&
         cJSON_AddNumberToObject(cells, "flagged", v->n_flagged) != NULL &&
         cJSON_AddNumberToObject(cells, "inconclusive", v->n_inconclusive) != NULL &&
         cJSON_AddNumberToObject(cells, "failed", v->n_failed) != NULL;
    cJSON *arr = ok ? cJSON_AddArrayToObject(root, "inconclusive") : NULL;
    ok = arr != NULL;
    for (size_t i = 0; ok && i < v->n_notes; i++) {
        const sm_verdict_note *n = &v->notes[i];
        cJSON *o = cJSON_CreateObject();
        if (o == NULL || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            return false;
        }
        ok = cJSON_AddStringToObject(o, "row", n->row) != NULL &&
             cJSON_AddStringToObject(o, "test", n->test) != NULL &&
             cJSON_AddStringToObject(o, "brief", n->brief) != NULL &&
             cJSON_AddBoolToObject(o, "ratio", n->ratio) != NULL &&
             cJSON_AddStringToObject(o, "verdict", sm_verdict_name(n->verdict)) != NULL &&
             cJSON_AddStringToObject(o, "why", n->why) != NULL;
    }
    return ok;
}
