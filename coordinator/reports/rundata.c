/* A run's cells and jobs for its reports (internal.h), read from the store one cell at a time
 * under the bound of --report-memory. */
#include "coordinator/reports/internal.h"

#include "coordinator/analysis/table.h"
#include "coordinator/reports/reports.h"
#include "proto/codec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A point with the job's place in the run: cells are read one at a time, and the table must
 * see the jobs in the run's order (the first reason a row shows, repeated repetitions). */
typedef struct ordered {
    int64_t ord;
    uint64_t job;
    sm_export_point p;
} ordered;

/* What decoding one result holds at its peak, per byte of its JSON: cJSON's tree beside the
 * sparse histogram it becomes. A histogram's bucket, "[5221,214]," in some 12 bytes, is three
 * 64-byte cJSON nodes and then 16 bytes: about 17 a byte; 32 leaves room for shorter numbers. */
#define DECODE_PER_JSON_BYTE 32
/* What the table's build adds per job (export.c's entries, values and loopback scratch: 3 x 32
 * + 8 bytes), and per cell (its table cells and reasons, and its share of the report's text and
 * of the cJSON tree that text is made from). With them the estimate of a run of 2,048 cells and
 * 20,480 rr jobs is 23 MB, and its table took 22 MB of RSS (bench/report_table.c). */
#define BUILD_PER_JOB  128
#define BUILD_PER_CELL 6144

/* The bytes a loaded run holds whatever cell is being read: its cells and its points. */
static uint64_t held_bytes(size_t n_cells, uint64_t n_jobs)
{
    return n_cells * (uint64_t)(sizeof(sm_cell) + BUILD_PER_CELL) +
           n_jobs * (uint64_t)(sizeof(ordered) + BUILD_PER_JOB);
}

/* The bytes reading cell c adds while it is in hand: its rows with their JSON, and one result
 * being decoded. */
static uint64_t cell_bytes(const sm_cell_size *c)
{
    return c->json_bytes + c->n * (uint64_t)sizeof(sm_run_result) +
           c->json_max * DECODE_PER_JSON_BYTE + sizeof(sm_result);
}

/* "h1 rr tcp 64 B" or "h1->h2 rr tcp 64 B": the cell as a table shows it. */
static void cell_name(const sm_cell *c, char *buf, size_t cap)
{
    sm_table_col col;
    sm_export_column(&c->params, &col);
    const char *test = col.brief[0] ? col.brief : col.label;
    if (c->peer[0])
        snprintf(buf, cap, "%.40s->%.40s %.64s", c->host, c->peer, test);
    else
        snprintf(buf, cap, "%.40s %.64s", c->host, test);
}

#define MB(bytes) (((bytes) + 999999) / 1000000)

/* SM_REPORT_TOO_BIG when the largest cell would take the report past limit; else 0. */
static int check_bound(run_data *d, const sm_cell_size *sz, size_t n, uint64_t limit,
                       uint64_t already, sm_error *err)
{
    uint64_t jobs = 0;
    size_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        jobs += sz[i].n;
        if (cell_bytes(&sz[i]) > cell_bytes(&sz[worst]))
            worst = i;
    }
    d->held = held_bytes(d->nc, jobs);
    const uint64_t need = already + d->held + (n ? cell_bytes(&sz[worst]) : 0);
    if (need <= limit)
        return 0;
    char name[200] = "no results";
    if (n && sz[worst].cell < d->nc)
        cell_name(&d->cells[sz[worst].cell], name, sizeof name);
    sm_error_set(err, SM_ENOMEM,
                 "the report of run %" PRIu64 " needs about %" PRIu64 " MB for cell %" PRIu32
                 " (%s), above --report-memory %" PRIu64 " MB",
                 d->run.id, MB(need), n ? sz[worst].cell : 0, name, limit / 1000000);
    return SM_REPORT_TOO_BIG;
}

/* The run's cells, their params decoded. */
static int load_cells(sm_store *st, run_data *d, sm_error *err)
{
    sm_cell_row *rows = NULL;
    size_t n = 0;
    if (sm_store_cells_list(st, d->run.id, &rows, &n, err) != 0)
        return SM_REPORT_FAILED;
    d->nc = n;
    d->cells = calloc(n ? n : 1, sizeof *d->cells);
    d->reasons = calloc(2 * n + 1, sizeof *d->reasons);
    if (!d->cells || !d->reasons) {
        sm_store_cells_free(rows, n);
        sm_error_set(err, SM_ENOMEM, "out of memory");
        return SM_REPORT_FAILED;
    }
    for (size_t i = 0; i < n; i++) {
        sm_cell *c = &d->cells[i];
        c->test = rows[i].test;
        c->variant = rows[i].variant;
        snprintf(c->host, sizeof c->host, "%s", rows[i].host);
        snprintf(c->peer, sizeof c->peer, "%s", rows[i].peer);
        c->stopped = rows[i].stopped;
        sm_codec_params_decode(rows[i].params_json, strlen(rows[i].params_json), &c->params, err);
        d->any_local |= c->params.scope == SM_SCOPE_LOCAL;
        d->any_pair |= c->params.scope == SM_SCOPE_PAIR;
    }
    sm_store_cells_free(rows, n);
    return 0;
}

/* The reason a point keeps: a copy owned by d; NULL when out of memory. */
static const char *keep(run_data *d, const char *reason)
{
    char *copy = strdup(reason);
    if (copy)
        d->reasons[d->n_reasons++] = copy;
    return copy;
}

/* Each counted job's reasons are dropped but the first non-empty failure reason and the first
 * non-empty disturbance reason of the cell: the only ones a table shows (export.c keeps the
 * first of each per row and column, and the cells of one run are its rows and columns). */
typedef struct cell_reasons {
    bool failed, disturbed;
} cell_reasons;

static int point_of(run_data *d, const sm_run_result *row, const sm_result *res, cell_reasons *cr,
                    ordered *o)
{
    const sm_export_sample s = {row->cell, row->rep, row->warmup, res};
    o->ord = row->ord;
    o->job = row->job;
    sm_export_point_of(&s, &o->p);
    o->p.reason = o->p.disturbed_reason = NULL;
    if (row->warmup)
        return 0;
    if (!res->ok && res->reason[0] && !cr->failed) {
        cr->failed = true;
        if (!(o->p.reason = keep(d, res->reason)))
            return SM_ENOMEM;
    }
    if (res->ok && res->host.disturbed && res->host.reason[0] && !cr->disturbed) {
        cr->disturbed = true;
        if (!(o->p.disturbed_reason = keep(d, res->host.reason)))
            return SM_ENOMEM;
    }
    return 0;
}

/* Reads cell c's results, one decoded at a time, into points from o[*n]. */
static int load_cell(sm_store *st, run_data *d, uint32_t c, ordered *o, size_t cap, size_t *n,
                     sm_error *err)
{
    sm_run_result *rows = NULL;
    size_t nr = 0;
    int rc = sm_store_cell_results_all(st, d->run.id, c, &rows, &nr, err);
    cell_reasons cr = {false, false};
    for (size_t i = 0; rc == 0 && i < nr && *n < cap; i++) {
        sm_result res;
        sm_error e = {0};
        sm_result_init(&res);
        /* The store holds only what proto encoded; a result that does not decode is a guard,
         * not a path, and is left out as the table leaves out a job without a result. */
        if (sm_codec_result_decode(rows[i].result_json, strlen(rows[i].result_json), &res, &e) ==
            0) {
            rc = point_of(d, &rows[i], &res, &cr, &o[*n]);
            *n += rc == 0;
        }
        sm_result_fini(&res);
    }
    sm_store_run_results_free(rows, nr);
    if (rc == SM_ENOMEM)
        sm_error_set(err, SM_ENOMEM, "out of memory");
    return rc;
}

static int cmp_ordered(const void *pa, const void *pb)
{
    const ordered *a = pa, *b = pb;
    if (a->ord != b->ord)
        return a->ord < b->ord ? -1 : 1;
    return (a->job > b->job) - (a->job < b->job);
}

/* Every cell's points, then in the run's order. */
static int load_points(sm_store *st, run_data *d, const sm_cell_size *sz, size_t n, sm_error *err)
{
    size_t cap = 0, np = 0;
    for (size_t i = 0; i < n; i++)
        cap += sz[i].n;
    ordered *o = malloc((cap ? cap : 1) * sizeof *o);
    if (!o) {
        sm_error_set(err, SM_ENOMEM, "out of memory");
        return SM_REPORT_FAILED;
    }
    int rc = 0;
    /* A job of a cell the run does not have counts in no table. */
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (sz[i].cell < d->nc)
            rc = load_cell(st, d, sz[i].cell, o, cap, &np, err);
    if (rc) {
        free(o);
        return SM_REPORT_FAILED;
    }
    qsort(o, np, sizeof *o, cmp_ordered);
    /* The points moved to the front of the same block, in order: point i goes to where
     * o[i] began or earlier, never over a point not yet moved. */
    sm_export_point *p = (sm_export_point *)(void *)o;
    for (size_t i = 0; i < np; i++)
        memmove(&p[i], &o[i].p, sizeof p[i]);
    sm_export_point *shrunk = realloc(p, (np ? np : 1) * sizeof *p);
    d->points = shrunk ? shrunk : p;
    d->np = np;
    return 0;
}

int run_data_load(sm_store *st, uint64_t id, uint64_t limit, uint64_t already, run_data *d,
                  sm_error *err)
{
    memset(d, 0, sizeof *d);
    if (sm_store_run_get(st, id, &d->run, err) != 0) {
        sm_error_set(err, SM_EINVAL, "no such run");
        return SM_REPORT_NO_RUN;
    }
    sm_cell_size *sz = NULL;
    size_t n = 0;
    int status = load_cells(st, d, err);
    if (status == 0 && sm_store_run_result_sizes(st, id, &sz, &n, err) != 0)
        status = SM_REPORT_FAILED;
    if (status == 0)
        status = check_bound(d, sz, n, limit, already, err);
    if (status == 0)
        status = load_points(st, d, sz, n, err);
    free(sz);
    return status;
}

int run_data_table(const run_data *d, sm_scope scope, sm_table *t, sm_error *err)
{
    return sm_export_build_points(d->run.id, d->run.name, scope, d->cells, d->nc, d->points, d->np,
                                  &d->eo, t, err);
}

void run_data_fini(run_data *d)
{
    for (size_t i = 0; d->reasons && i < d->n_reasons; i++)
        free(d->reasons[i]);
    free(d->reasons);
    free(d->points);
    free(d->cells);
    sm_run_row_fini(&d->run);
    memset(d, 0, sizeof *d);
}
