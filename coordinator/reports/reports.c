/* A stored run's reports (reports.h): its tables and anomalies, from the cache of ended runs'
 * reports (cache.h) when they were asked the same before, and two runs side by side. */
#include "coordinator/reports/reports.h"

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/compare.h"
#include "coordinator/analysis/explain.h"
#include "coordinator/analysis/export.h"
#include "coordinator/analysis/table.h"
#include "coordinator/reports/cache.h"
#include "coordinator/reports/internal.h"
#include "coordinator/schema/query.h"
#include "proto/fingerprint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sm_report_status report_error(sm_run_report *out, sm_report_status status, const char *msg,
                              const char *field)
{
    free(out->body);
    out->body = NULL;
    out->len = 0;
    out->status = status;
    sm_error_set(&out->err, SM_EINVAL, "%s", msg);
    if (field)
        sm_error_field(&out->err, "%s", field);
    return status;
}

sm_report_status report_body(sm_run_report *out, char *text)
{
    if (!text)
        return report_error(out, SM_REPORT_FAILED, "out of memory", NULL);
    out->body = text;
    out->len = strlen(text);
    out->status = SM_REPORT_OK;
    return SM_REPORT_OK;
}

/* format=csv|md|json from the query (json when absent); NULL for any other value. */
static const char *query_format(const char *query)
{
    static const char *const formats[] = {"csv", "md", "json"};
    const char *v;
    size_t n;
    if (!sm_query_find(query, "format", &v, &n))
        return "json";
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strlen(formats[i]) == n && strncmp(v, formats[i], n) == 0)
            return formats[i];
    return NULL;
}

uint64_t report_limit(const sm_reports *r)
{
    return r->memory_limit ? r->memory_limit : SM_REPORT_MEMORY_DEFAULT_MB * 1000000ull;
}

/* The value of name=... in the query, copied to buf as it is (not decoded); false when absent
 * or too long. */
static bool query_param(const char *query, const char *name, char *buf, size_t cap)
{
    const char *v;
    size_t n;
    if (!sm_query_find(query, name, &v, &n) || n >= cap)
        return false;
    memcpy(buf, v, n);
    buf[n] = '\0';
    return true;
}

/* floor=F (0 < F < 10) from the query; 0 (the default) when absent; -1 when malformed. */
static double query_floor(const char *query)
{
    char buf[32], *end;
    if (!query_param(query, "floor", buf, sizeof buf))
        return 0;
    double f = strtod(buf, &end);
    return *end == '\0' && f > 0 && f < 10 ? f : -1;
}

/* disturbed=include|exclude from the query: 1 include, 0 exclude (the default), -1 malformed. */
static int query_disturbed(const char *query)
{
    char buf[16];
    if (!query_param(query, "disturbed", buf, sizeof buf))
        return query && strstr(query, "disturbed=") ? -1 : 0;
    return strcmp(buf, "include") == 0 ? 1 : strcmp(buf, "exclude") == 0 ? 0 : -1;
}

#define DISTURBED_ERROR "disturbed: expected include or exclude"
/* The cells not judged that the text of the anomalies lists; the JSON lists them all. */
#define NOTES_SHOWN 20

/* A run's fingerprints (as of the run), decoded. */
typedef struct run_fps {
    sm_fp_row *rows;
    size_t n;
    sm_fingerprint *fp;
    sm_fp_host *hosts; /* hosts[i].fp NULL when rows[i]'s document does not decode */
} run_fps;

static void run_fps_fini(run_fps *f)
{
    for (size_t i = 0; f->fp && i < f->n; i++)
        sm_fp_fini(&f->fp[i]);
    free(f->fp);
    free(f->hosts);
    sm_fp_rows_free(f->rows, f->n);
    memset(f, 0, sizeof *f);
}

/* Loads run_id's fingerprints; a run without any (or a store that fails to give them) has
 * none: the fingerprints explain anomalies, they never keep a report from being served. */
static void run_fps_load(sm_reports *r, uint64_t run_id, run_fps *f)
{
    memset(f, 0, sizeof *f);
    sm_error err = {0};
    if (run_id == 0 || sm_store_run_fps(r->st, run_id, &f->rows, &f->n, &err) != 0) {
        memset(f, 0, sizeof *f);
        return;
    }
    if (f->n == 0) {
        run_fps_fini(f);
        return;
    }
    f->fp = calloc(f->n, sizeof *f->fp);
    f->hosts = calloc(f->n, sizeof *f->hosts);
    if (f->fp == NULL || f->hosts == NULL) {
        run_fps_fini(f);
        return;
    }
    for (size_t i = 0; i < f->n; i++) {
        sm_fp_init(&f->fp[i]);
        const char *json = f->rows[i].json ? f->rows[i].json : "";
        bool ok = sm_fp_decode(json, strlen(json), &f->fp[i], &err) == 0;
        f->hosts[i] = (sm_fp_host){f->rows[i].agent, ok ? &f->fp[i] : NULL};
    }
}

/* Explains the anomalies of run_id (against base_id's fingerprints for regressions). On
 * failure *ex is left empty: the anomalies are served without their explanation. */
static void explain_run(sm_reports *r, uint64_t run_id, uint64_t base_id, const sm_anomalies *an,
                        sm_explanation *ex)
{
    run_fps now, base;
    run_fps_load(r, run_id, &now);
    run_fps_load(r, base_id, &base);
    sm_error err = {0};
    if (now.n > 0 && sm_explain_anomalies(an, now.hosts, now.n, base.hosts, base.n, ex, &err) != 0)
        sm_explanation_fini(ex);
    run_fps_fini(&now);
    run_fps_fini(&base);
}

static int get_table(sm_reports *r, uint64_t id, const char *query, sm_run_report *out)
{
    const char *format = query_format(query);
    if (!format)
        return report_error(out, SM_REPORT_BAD_OPTION, "format: expected csv, md or json",
                            "format");
    sm_analysis_opts ao = {0, query_floor(query)};
    if (ao.floor < 0)
        return report_error(out, SM_REPORT_BAD_OPTION, "floor: expected a fraction such as 0.15",
                            "floor");
    int with_disturbed = query_disturbed(query);
    if (with_disturbed < 0)
        return report_error(out, SM_REPORT_BAD_OPTION, DISTURBED_ERROR, "disturbed");
    run_data d;
    sm_table table;
    sm_anomalies an = {0};
    sm_explanation ex = {0};
    memset(&table, 0, sizeof table);
    sm_error err = {0};
    int status = run_data_load(r->st, id, report_limit(r), 0, &d, &err);
    if (status != 0) {
        status = report_error(out, status, err.msg, status == SM_REPORT_NO_RUN ? "id" : NULL);
        goto out;
    }
    d.eo.include_disturbed = with_disturbed == 1;
    /* Hosts or pairs: ?scope=pair|local, else local when the run has local cells. */
    sm_scope scope = query && strstr(query, "scope=pair")    ? SM_SCOPE_PAIR
                     : query && strstr(query, "scope=local") ? SM_SCOPE_LOCAL
                     : d.any_local                           ? SM_SCOPE_LOCAL
                                                             : SM_SCOPE_PAIR;
    if (run_data_table(&d, scope, &table, &err) != 0 ||
        sm_analysis_table(&table, &ao, &an, &err) != 0) {
        status = report_error(out, SM_REPORT_FAILED, err.msg, NULL);
        goto out;
    }
    sm_analysis_flag_table(&table, &an);
    if (sm_verdict_table(&table, an.v, an.n) != 0) {
        status = report_error(out, SM_REPORT_FAILED, "out of memory", NULL);
        goto out;
    }
    /* The flags' explanations: a footnote in Markdown, beside the flag in JSON; CSV keeps its
     * columns. */
    if (strcmp(format, "csv") != 0)
        explain_run(r, id, 0, &an, &ex);
    char *text = strcmp(format, "csv") == 0  ? sm_table_csv(&table)
                 : strcmp(format, "md") == 0 ? sm_export_md(&table, &an, &ex)
                                             : sm_export_json(&table, &an, &ex);
    if (strcmp(format, "md") == 0)
        text = report_add_causes(r, id, text, REPORT_MD);
    out->ctype = strcmp(format, "csv") == 0  ? "text/csv; charset=utf-8"
                 : strcmp(format, "md") == 0 ? "text/markdown; charset=utf-8"
                                             : "application/json";
    status = report_body(out, text);
out:
    sm_explanation_fini(&ex);
    sm_anomalies_fini(&an);
    sm_table_fini(&table);
    run_data_fini(&d);
    return status;
}

/* The baseline of a run: the newest earlier run of the same name that ended done; 0 if none. */
static uint64_t default_baseline(sm_reports *r, const sm_run_row *run)
{
    sm_run_row *rows = NULL;
    size_t n = 0;
    sm_error err;
    uint64_t found = 0;
    if (sm_store_runs_list(r->st, 1000, &rows, &n, &err) != 0)
        return 0;
    for (size_t i = 0; i < n && !found; i++)
        if (rows[i].id < run->id && rows[i].state == SM_RUN_DONE &&
            strcmp(rows[i].name, run->name) == 0)
            found = rows[i].id;
    sm_store_runs_free(rows, n);
    return found;
}

/* The anomalies of both of a run's tables (hosts, pairs) and, against the baseline, its
 * regressions. */
static int analyse_run(sm_reports *r, const run_data *d, const run_data *base,
                       const sm_analysis_opts *ao, sm_anomalies *an, sm_run_verdict *v,
                       sm_error *err)
{
    static const sm_scope scopes[] = {SM_SCOPE_LOCAL, SM_SCOPE_PAIR};
    (void)r;
    for (size_t k = 0; k < 2; k++) {
        bool any = scopes[k] == SM_SCOPE_LOCAL ? d->any_local : d->any_pair;
        if (!any)
            continue;
        sm_table t, b;
        memset(&b, 0, sizeof b);
        const size_t from = an->n;
        int rc = run_data_table(d, scopes[k], &t, err);
        if (rc == 0)
            rc = sm_analysis_table(&t, ao, an, err);
        if (rc == 0 && base)
            rc = run_data_table(base, scopes[k], &b, err);
        if (rc == 0 && base)
            rc = sm_analysis_regression(&t, &b, ao, an, err);
        /* The verdict of this table's cells, from the anomalies found on it alone. */
        const sm_anomaly *mine = an->n > from ? an->v + from : NULL;
        if (rc == 0 && (sm_verdict_table(&t, mine, an->n - from) != 0 ||
                        sm_run_verdict_add(v, &t, an->n - from) != 0))
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        sm_table_fini(&t);
        sm_table_fini(&b);
        if (rc)
            return rc;
    }
    return 0;
}

/* For people and the CLI: a header line, then one line per anomaly, a host's together and
 * followed once by the top differences of its host(s) or what changed on it, indented
 * (sm_explain_text), then the cells not judged. */
static char *anomalies_text(const sm_run_row *run, uint64_t base_id, const sm_anomalies *an,
                            const sm_explanation *ex, const sm_run_verdict *v)
{
    /* An explanation's line: the indent, at most 511 bytes (sm_explain_text) and a newline. */
    size_t shown = v->n_notes < NOTES_SHOWN ? v->n_notes : NOTES_SHOWN;
    size_t cap =
               512 + an->n * (512 + SM_EXPLAIN_TEXT_MAX * 530) + shown * (sizeof v->notes[0] + 32),
           at = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    char summary[256];
    sm_run_verdict_summary(v, summary, sizeof summary);
    /* The verdict first: a run that could not judge its cells says so before anything else. */
    at += (size_t)snprintf(out, cap, "run %" PRIu64 " (%s): %s: %s", run->id, run->name,
                           sm_verdict_name(v->verdict), summary);
    if (base_id)
        at += (size_t)snprintf(out + at, cap - at, ", against baseline run %" PRIu64, base_id);
    else
        at += (size_t)snprintf(out + at, cap - at, ", no baseline run");
    at += (size_t)snprintf(out + at, cap - at, "\n");
    if (at < cap && sm_explain_text(an, ex, out, cap, &at) != 0) {
        free(out);
        return NULL;
    }
    for (size_t i = 0; i < shown && at < cap; i++) {
        const sm_verdict_note *n = &v->notes[i];
        at += (size_t)snprintf(out + at, cap - at, "  %-12s %s: %s: %s\n",
                               sm_verdict_name(n->verdict), n->row, n->test, n->why);
    }
    if (v->n_notes > shown && at < cap)
        snprintf(out + at, cap - at,
                 "  ... %zu more cells not judged (format=json lists them all)\n",
                 v->n_notes - shown);
    return out;
}

/* The cells runs d and b share, over both scopes (hosts, pairs); when they share none, *why
 * says so, naming each run's tests. 0, or SM_REPORT_FAILED with err set. */
static int compare_runs(const run_data *d, const run_data *b, sm_compare *out, char *why,
                        size_t why_cap, sm_error *err)
{
    static const sm_scope scopes[] = {SM_SCOPE_LOCAL, SM_SCOPE_PAIR};
    sm_table ta[2], tb[2];
    memset(ta, 0, sizeof ta);
    memset(tb, 0, sizeof tb);
    memset(out, 0, sizeof *out);
    int rc = 0;
    size_t na = 0, nb = 0;
    for (size_t k = 0; k < 2 && rc == 0; k++) {
        bool in_a = scopes[k] == SM_SCOPE_LOCAL ? d->any_local : d->any_pair;
        bool in_b = scopes[k] == SM_SCOPE_LOCAL ? b->any_local : b->any_pair;
        if (in_a && (rc = run_data_table(d, scopes[k], &ta[na], err)) == 0)
            na++;
        if (rc == 0 && in_b && (rc = run_data_table(b, scopes[k], &tb[nb], err)) == 0)
            nb++;
        if (rc == 0 && in_a && in_b && sm_compare_tables(&ta[na - 1], &tb[nb - 1], out) != 0)
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    if (rc == 0 && out->n_shared == 0 && why) {
        const sm_table *pa[2] = {&ta[0], &ta[1]}, *pb[2] = {&tb[0], &tb[1]};
        char tests_a[512], tests_b[512];
        sm_compare_tests_text(pa, na, tests_a, sizeof tests_a);
        sm_compare_tests_text(pb, nb, tests_b, sizeof tests_b);
        snprintf(why, why_cap,
                 "runs %" PRIu64 " and %" PRIu64
                 " share no cell (same host, same test): run %" PRIu64 " has tests %s; run %" PRIu64
                 " has tests %s",
                 d->run.id, b->run.id, d->run.id, tests_a, b->run.id, tests_b);
    }
    for (size_t k = 0; k < 2; k++) {
        sm_table_fini(&ta[k]);
        sm_table_fini(&tb[k]);
    }
    return rc ? SM_REPORT_FAILED : 0;
}

/* GET /api/compare?a=RUN&b=RUN[&disturbed=include] */
sm_report_status sm_reports_compare(sm_reports *r, const char *query, sm_run_report *out)
{
    memset(out, 0, sizeof *out);
    out->ctype = "application/json";
    char ia[24], ib[24];
    uint64_t id_a = 0, id_b = 0;
    if (!query_param(query, "a", ia, sizeof ia) || !sm_query_id(ia, strlen(ia), &id_a) || id_a == 0)
        return report_error(out, SM_REPORT_BAD_OPTION, "a: expected a run id (?a=RUN&b=RUN)", "a");
    if (!query_param(query, "b", ib, sizeof ib) || !sm_query_id(ib, strlen(ib), &id_b) || id_b == 0)
        return report_error(out, SM_REPORT_BAD_OPTION, "b: expected a run id (?a=RUN&b=RUN)", "b");
    if (id_a == id_b)
        return report_error(out, SM_REPORT_BAD_OPTION, "b: a run is not compared with itself", "b");
    int with_disturbed = query_disturbed(query);
    if (with_disturbed < 0)
        return report_error(out, SM_REPORT_BAD_OPTION, DISTURBED_ERROR, "disturbed");
    run_data d, b;
    memset(&b, 0, sizeof b);
    sm_compare cmp = {0};
    sm_error err = {0};
    char msg[1200];
    int status = run_data_load(r->st, id_a, report_limit(r), 0, &d, &err);
    if (status == 0)
        status = run_data_load(r->st, id_b, report_limit(r), d.held, &b, &err);
    if (status != 0) {
        const char *field = d.run.id == id_a ? "b" : "a";
        if (status == SM_REPORT_NO_RUN)
            snprintf(msg, sizeof msg, "%s: no such run %" PRIu64, field,
                     field[0] == 'a' ? id_a : id_b);
        status = report_error(out, status, status == SM_REPORT_NO_RUN ? msg : err.msg,
                              status == SM_REPORT_NO_RUN ? field : NULL);
        goto out;
    }
    d.eo.include_disturbed = b.eo.include_disturbed = with_disturbed == 1;
    msg[0] = '\0';
    if ((status = compare_runs(&d, &b, &cmp, msg, sizeof msg, &err)) != 0) {
        status = report_error(out, status, err.msg, NULL);
        goto out;
    }
    if (cmp.n_shared == 0) {
        status = report_error(out, SM_REPORT_NOTHING_SHARED, msg, "b");
        goto out;
    }
    sm_compare_run ra = {id_a, d.run.name, sm_run_state_name(d.run.state)};
    sm_compare_run rb = {id_b, b.run.name, sm_run_state_name(b.run.state)};
    status = report_body(out, sm_compare_json(&cmp, ra, rb, with_disturbed == 1));
out:
    sm_compare_fini(&cmp);
    run_data_fini(&d);
    run_data_fini(&b);
    return status;
}

/* GET /api/runs/{id}/anomalies[?baseline=ID][&floor=F][&format=text][&disturbed=include] */
/* A baseline that shares no cell with the run says nothing about it: an error (409) when it was
 * asked for, no baseline (*base_id 0, b released) when it was only the previous run of the same
 * name. Returns 0, or the status of the error it set in out. */
static int baseline_shares(run_data *d, run_data *b, bool asked, uint64_t *base_id,
                           sm_run_report *out)
{
    sm_compare cmp;
    sm_error err = {0};
    char why[1200] = "";
    int status = compare_runs(d, b, &cmp, why, sizeof why, &err);
    const size_t shared = cmp.n_shared;
    sm_compare_fini(&cmp);
    if (status != 0)
        return report_error(out, status, err.msg, NULL);
    if (shared == 0 && asked) {
        char msg[1300];
        snprintf(msg, sizeof msg, "baseline: %s", why);
        return report_error(out, SM_REPORT_NOTHING_SHARED, msg, "baseline");
    }
    if (shared == 0) {
        run_data_fini(b);
        *base_id = 0;
    }
    return 0;
}

static int get_anomalies(sm_reports *r, uint64_t id, const char *query, sm_run_report *out)
{
    char fmt[8] = "json", bl[24] = "";
    if (query_param(query, "format", fmt, sizeof fmt) && strcmp(fmt, "json") != 0 &&
        strcmp(fmt, "text") != 0)
        return report_error(out, SM_REPORT_BAD_OPTION, "format: expected json or text", "format");
    sm_analysis_opts ao = {0, query_floor(query)};
    if (ao.floor < 0)
        return report_error(out, SM_REPORT_BAD_OPTION, "floor: expected a fraction such as 0.15",
                            "floor");
    uint64_t base_id = 0;
    if (query_param(query, "baseline", bl, sizeof bl) && !sm_query_id(bl, strlen(bl), &base_id))
        return report_error(out, SM_REPORT_BAD_OPTION, "baseline: expected a run id", "baseline");
    int with_disturbed = query_disturbed(query);
    if (with_disturbed < 0)
        return report_error(out, SM_REPORT_BAD_OPTION, DISTURBED_ERROR, "disturbed");
    run_data d, b;
    memset(&b, 0, sizeof b);
    sm_anomalies an = {0};
    sm_explanation ex = {0};
    sm_run_verdict verdict = {0};
    sm_error err = {0};
    char *text = NULL;
    int status = run_data_load(r->st, id, report_limit(r), 0, &d, &err);
    if (status != 0) {
        status = report_error(out, status, err.msg, status == SM_REPORT_NO_RUN ? "id" : NULL);
        goto out;
    }
    if (base_id == 0)
        base_id = default_baseline(r, &d.run);
    else if (base_id == id) {
        status = report_error(out, SM_REPORT_BAD_OPTION, "baseline: a run is not its own baseline",
                              "baseline");
        goto out;
    }
    if (base_id != 0 &&
        (status = run_data_load(r->st, base_id, report_limit(r), d.held, &b, &err)) != 0) {
        status = report_error(out, status == SM_REPORT_NO_RUN ? SM_REPORT_BAD_OPTION : status,
                              status == SM_REPORT_NO_RUN ? "baseline: no such run" : err.msg,
                              "baseline");
        goto out;
    }
    d.eo.include_disturbed = b.eo.include_disturbed = with_disturbed == 1;
    if (base_id != 0 && (status = baseline_shares(&d, &b, bl[0] != '\0', &base_id, out)))
        goto out;
    if (analyse_run(r, &d, base_id ? &b : NULL, &ao, &an, &verdict, &err) != 0) {
        status = report_error(out, SM_REPORT_FAILED, err.msg, NULL);
        goto out;
    }
    explain_run(r, id, base_id, &an, &ex);
    if (strcmp(fmt, "text") == 0) {
        text = anomalies_text(&d.run, base_id, &an, &ex, &verdict);
        out->ctype = "text/plain; charset=utf-8";
    } else {
        text = sm_explain_anomalies_json(id, d.run.name, base_id, &ao, &an, &ex, &verdict);
    }
    text = report_add_causes(r, id, text, strcmp(fmt, "text") == 0 ? REPORT_TEXT : REPORT_JSON);
    status = report_body(out, text);
out:
    sm_run_verdict_fini(&verdict);
    sm_explanation_fini(&ex);
    sm_anomalies_fini(&an);
    run_data_fini(&d);
    run_data_fini(&b);
    return status;
}

sm_report_status sm_reports_verdict(sm_reports *r, uint64_t id, sm_run_verdict *v, sm_error *err)
{
    run_data d;
    sm_anomalies an = {0};
    const sm_analysis_opts ao = {0, 0};
    int status = run_data_load(r->st, id, report_limit(r), 0, &d, err);
    if (status == 0)
        status = analyse_run(r, &d, NULL, &ao, &an, v, err) ? SM_REPORT_FAILED : SM_REPORT_OK;
    sm_anomalies_fini(&an);
    run_data_fini(&d);
    return (sm_report_status)status;
}

/* From the cache when the run has ended and was asked the same before; else computed, and kept
 * when the run (and its baseline) had ended. */
sm_report_status sm_reports_get(sm_reports *r, uint64_t id, sm_report_kind kind, const char *query,
                                sm_run_report *out)
{
    const bool table = kind == SM_REPORT_TABLE;
    memset(out, 0, sizeof *out);
    out->ctype = "application/json";
    char key[512];
    const int kn =
        snprintf(key, sizeof key, "%s?%s", table ? "table" : "anomalies", query ? query : "");
    const bool keyed = kn > 0 && (size_t)kn < sizeof key;
    /* Before the store is read: an invalidation after this keeps the report out of the cache. */
    const uint64_t since = sm_report_cache_since(r->cache);
    const int hit =
        keyed ? sm_report_cache_get(r->cache, id, key, &out->body, &out->len, &out->ctype) : 0;
    if (hit < 0)
        return report_error(out, SM_REPORT_FAILED, "out of memory", NULL);
    if (hit)
        return out->status = SM_REPORT_OK;
    /* Its state before the report is computed: a run that ends meanwhile is not kept. */
    sm_run_row run;
    sm_error err = {0};
    bool ended = false;
    if (keyed && sm_store_run_get(r->st, id, &run, &err) == 0) {
        ended = run.state != SM_RUN_RUNNING;
        sm_run_row_fini(&run);
    }
    char bl[24] = "";
    uint64_t base = 0;
    if (!table && query_param(query, "baseline", bl, sizeof bl) &&
        sm_query_id(bl, strlen(bl), &base) && base != 0) {
        sm_run_row b;
        ended = ended && sm_store_run_get(r->st, base, &b, &err) == 0 && b.state != SM_RUN_RUNNING;
        if (ended)
            sm_run_row_fini(&b);
    }
    const int status = table ? get_table(r, id, query, out) : get_anomalies(r, id, query, out);
    if (status == SM_REPORT_OK && ended)
        sm_report_cache_put(&r->cache, since, id, key, base, out->body, out->len, out->ctype);
    return status;
}

char *sm_reports_body(sm_reports *r, uint64_t id, sm_report_kind kind, const char *options)
{
    sm_run_report rep;
    if (sm_reports_get(r, id, kind, options, &rep) == SM_REPORT_OK)
        return rep.body;
    sm_run_report_fini(&rep);
    return NULL;
}

void sm_reports_run_changed(sm_reports *r, uint64_t run_id)
{
    if (r)
        sm_report_cache_run_changed(r->cache, run_id);
}

void sm_reports_run_state_changed(sm_reports *r, uint64_t run_id)
{
    if (!r)
        return;
    sm_report_cache_run_changed(r->cache, run_id);
    sm_experiment_row xr;
    sm_error err = {0};
    if (r->st && sm_store_experiment_get(r->st, run_id, &xr, &err) == 0) {
        sm_report_cache_run_changed(r->cache, xr.parent_run);
        sm_experiment_row_fini(&xr);
    }
}

void sm_reports_fini(sm_reports *r)
{
    if (!r)
        return;
    sm_report_cache_free(r->cache);
    r->cache = NULL;
}

void sm_run_report_fini(sm_run_report *rep)
{
    if (!rep)
        return;
    free(rep->body);
    rep->body = NULL;
    rep->len = 0;
}
