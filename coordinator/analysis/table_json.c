/* Comparison tables in JSON (sm_table_json): versioned, one object per cell with all its
 * statistics and verdict, the table's verdict with its rows, the flags. */
#include "coordinator/analysis/table.h"

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/internal.h"
#include "coordinator/analysis/verdict.h"
#include "proto/json.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

static bool json_columns(cJSON *root, const char *key, const sm_table_col *cols, size_t n)
{
    cJSON *arr = cJSON_AddArrayToObject(root, key);
    if (arr == NULL)
        return false;
    for (size_t c = 0; c < n; c++) {
        cJSON *o = cJSON_CreateObject();
        if (!sm_json_append(arr, o) ||
            !sm_json_put_fixed(o, "label", cols[c].label, sizeof cols[c].label) ||
            !sm_json_put_fixed(o, "short", cols[c].brief[0] ? cols[c].brief : cols[c].label,
                               cols[c].brief[0] ? sizeof cols[c].brief : sizeof cols[c].label) ||
            !sm_json_put_fixed(o, "metric", cols[c].metric, sizeof cols[c].metric) ||
            !sm_json_put_fixed(o, "unit", cols[c].unit, sizeof cols[c].unit))
            return false;
    }
    return true;
}

/* "stopped": "ci", "max", "failed" or "disturbed" when the cell's rule said why, else null. */
static bool put_stopped(cJSON *o, sm_reps_stop why)
{
    const char *name = sm_reps_stop_name(why);
    return name ? cJSON_AddStringToObject(o, "stopped", name) != NULL
                : cJSON_AddNullToObject(o, "stopped") != NULL;
}

/* "verdict" and "why" (null when there is nothing to say). */
static bool json_judgement(cJSON *o, const sm_judgement *j)
{
    return cJSON_AddStringToObject(o, "verdict", sm_verdict_name(j->verdict)) != NULL &&
           (j->why ? cJSON_AddStringToObject(o, "why", j->why) : cJSON_AddNullToObject(o, "why")) !=
               NULL;
}

/* One object per cell that has data or failures; a cell with neither says nothing. Without
 * data the statistics are null (n 0) so that every object has the same keys. */
static bool json_cells(cJSON *root, const char *key, const sm_table_cell *cells, size_t n_rows,
                       size_t n_cols, bool with_disturbed, bool judged)
{
    cJSON *arr = cJSON_AddArrayToObject(root, key);
    if (arr == NULL)
        return false;
    for (size_t r = 0; r < n_rows; r++) {
        for (size_t c = 0; c < n_cols; c++) {
            const sm_table_cell *cell = &cells[r * n_cols + c];
            if (!cell->have && cell->failed == 0 && cell->disturbed == 0)
                continue;
            char why[96];
            sm_table_noisy_reason(cell, with_disturbed, why, sizeof why);
            double nan = NAN;
            const sm_summary *s = &cell->s;
            bool h = cell->have;
            cJSON *o = cJSON_CreateObject();
            if (!sm_json_append(arr, o) || !sm_json_put_u64(o, "row", r) ||
                !sm_json_put_u64(o, "column", c) || !sm_json_put_u64(o, "n", h ? s->n : 0) ||
                !sm_json_put_double(o, "median", h ? s->median : nan) ||
                !sm_json_put_double(o, "mean", h ? s->mean : nan) ||
                !sm_json_put_double(o, "stddev", h ? s->stddev : nan) ||
                !sm_json_put_double(o, "min", h ? s->min : nan) ||
                !sm_json_put_double(o, "max", h ? s->max : nan) ||
                !sm_json_put_double(o, "cv", h ? s->cv : nan) ||
                !sm_json_put_double(o, "ci95_low", h ? s->ci95_low : nan) ||
                !sm_json_put_double(o, "ci95_high", h ? s->ci95_high : nan) ||
                !sm_json_put_double(o, "ci_coverage", h ? s->ci_coverage : nan) ||
                !cJSON_AddBoolToObject(o, "ci_short", sm_table_ci_short(cell)) ||
                !sm_json_put_u64(o, "failed", cell->failed) ||
                !sm_json_put_u64(o, "limited", cell->limited) ||
                !sm_json_put_double(o, "limit_bound", cell->limited ? cell->limit_bound : nan) ||
                !sm_json_put_u64(o, "disturbed", cell->disturbed) ||
                !put_stopped(o, cell->stopped) ||
                !cJSON_AddBoolToObject(o, "coarse", cell->coarse) ||
                !cJSON_AddBoolToObject(o, "noisy", !h || sm_analysis_noisy(s)) ||
                !cJSON_AddStringToObject(o, "noisy_reason", why) ||
                (judged && !json_judgement(o, &cell->j)))
                return false;
        }
    }
    return true;
}

static bool json_table_verdict(const sm_table *t, cJSON *o)
{
    char summary[256];
    sm_table_verdict_summary(t, summary, sizeof summary);
    bool ok = cJSON_AddStringToObject(o, "verdict", sm_verdict_name(t->whole.verdict)) != NULL &&
              cJSON_AddStringToObject(o, "summary", summary) != NULL &&
              sm_json_put_u64(o, "judged", t->n_ok + t->n_flagged) &&
              sm_json_put_u64(o, "ok", t->n_ok) && sm_json_put_u64(o, "flagged", t->n_flagged) &&
              sm_json_put_u64(o, "inconclusive", t->n_inconclusive) &&
              sm_json_put_u64(o, "failed", t->n_failed);
    cJSON *rows = ok ? cJSON_AddArrayToObject(o, "rows") : NULL;
    ok = rows != NULL;
    for (size_t r = 0; ok && r < t->n_rows; r++) {
        cJSON *x = cJSON_CreateObject();
        ok = sm_json_append(rows, x) && sm_json_put_u64(x, "row", r) &&
             json_judgement(x, &t->row_j[r]);
    }
    return ok;
}

char *sm_table_json(const sm_table *t)
{
    return sm_table_json_more(t, NULL, NULL);
}

char *sm_table_json_more(const sm_table *t, sm_table_json_more_fn more, void *arg)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRIu64, t->run_id);
    /* Containers are added to their parent as they are made, so that one cJSON_Delete of the
     * root frees whatever was built when something fails half-way. */
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL && cJSON_AddNumberToObject(root, "version", 1) != NULL;
    cJSON *run = ok ? cJSON_AddObjectToObject(root, "run") : NULL;
    ok = run != NULL;
    /* The run id is a string: ids are 64-bit and JSON numbers lose precision past 2^53. */
    ok = ok && cJSON_AddStringToObject(run, "id", id) != NULL &&
         sm_json_put_fixed(run, "name", t->run_name, sizeof t->run_name);
    /* Whether the rows are hosts or "client->server" pairs: readers must not have to guess
     * from the labels. */
    ok = ok && cJSON_AddBoolToObject(root, "pairs", t->pairs) != NULL;
    /* Whether the statistics hold the disturbed samples that every cell counts. */
    ok = ok && cJSON_AddStringToObject(root, "disturbed",
                                       t->with_disturbed ? "include" : "exclude") != NULL;
    cJSON *rows = ok ? cJSON_AddArrayToObject(root, "rows") : NULL;
    ok = rows != NULL;
    for (size_t r = 0; ok && r < t->n_rows; r++)
        ok = sm_json_append(rows, sm_json_fixed(t->rows[r], sizeof t->rows[r]));
    ok = ok && json_columns(root, "columns", t->cols, t->n_cols) &&
         json_columns(root, "ratio_columns", t->ratio_cols, t->n_ratio_cols) &&
         json_cells(root, "cells", t->cells, t->n_rows, t->n_cols, t->with_disturbed,
                    t->row_j != NULL) &&
         json_cells(root, "ratios", t->ratio_cells, t->n_rows, t->n_ratio_cols, t->with_disturbed,
                    t->row_j != NULL);
    /* The verdicts: the table's, in words too, and each row's. */
    cJSON *verdict = ok && t->row_j ? cJSON_AddObjectToObject(root, "verdict") : NULL;
    ok = ok && (t->row_j == NULL || (verdict && json_table_verdict(t, verdict)));
    cJSON *flags = ok ? cJSON_AddArrayToObject(root, "flags") : NULL;
    ok = flags != NULL;
    for (size_t r = 0; ok && r < t->n_rows; r++) {
        if (t->flags[r][0] == '\0')
            continue;
        cJSON *o = cJSON_CreateObject();
        ok = sm_json_append(flags, o) && sm_json_put_u64(o, "row", r) &&
             sm_json_put_fixed(o, "flag", t->flags[r], sizeof t->flags[r]) &&
             (more == NULL || more(arg, r, o));
    }
    return sm_json_finish(root, ok, 0, "table", NULL);
}
