/* --once: run the variants of one test interleaved, then summarise and pair them. */
#include "agent/once/once.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/host/facts.h"
#include "agent/runner/runner.h"
#include "agent/workloads/tls.h"
#include "agent/workloads/http.h"

static const sm_metric stream_ratios[] = {SM_M_SECONDS, SM_M_THROUGHPUT, SM_M_CPU_S_PER_GB};
static const sm_metric rr_ratios[] = {SM_M_RTT_P50_US, SM_M_RT_PER_S};
static const sm_metric connect_ratios[] = {SM_M_CONNECTS_PER_S, SM_M_CONNECT_P50_US};
static const sm_metric http_ratios[] = {SM_M_THROUGHPUT, SM_M_USER_S, SM_M_SYS_S,
                                        SM_M_CPU_S_PER_GB};

const sm_metric *sm_once_ratio_metrics(sm_workload_kind w, size_t *n)
{
    switch (w) {
    case SM_WL_STREAM:
        *n = sizeof stream_ratios / sizeof *stream_ratios;
        return stream_ratios;
    case SM_WL_RR:
        *n = sizeof rr_ratios / sizeof *rr_ratios;
        return rr_ratios;
    case SM_WL_CONNECT:
        *n = sizeof connect_ratios / sizeof *connect_ratios;
        return connect_ratios;
    case SM_WL_HTTP:
        *n = sizeof http_ratios / sizeof *http_ratios;
        return http_ratios;
    default:
        *n = 0;
        return NULL;
    }
}

static void variant_name(const sm_params *p, char *out, size_t len)
{
    if (p->workload == SM_WL_HTTP)
        snprintf(out, len, "%s", sm_http_client_name(p->client));
    else
        snprintf(out, len, "%s%s%s", sm_transport_name(p->transport), p->nodelay ? "+nodelay" : "",
                 p->cork ? "+cork" : "");
}

static int alloc_samples(const sm_once_opts *o, sm_cell_report *c)
{
    sm_params_validate(&c->params, NULL); /* derives defaults; checked by opts */
    variant_name(&c->params, c->variant, sizeof c->variant);
    /* Adaptive repetitions may go up to max: room for all of them up front. */
    c->samples = calloc(o->reps_auto ? o->reps.max : o->repetitions, sizeof *c->samples);
    c->warmup = o->warmup ? calloc(o->warmup, sizeof *c->warmup) : NULL;
    if (!c->samples || (o->warmup && !c->warmup))
        return SM_ENOMEM;
    return 0;
}

/* http: the variants are the client models. */
static int build_http_cells(const sm_once_opts *o, sm_report *rep)
{
    rep->cells = calloc(o->n_clients, sizeof *rep->cells);
    if (!rep->cells)
        return SM_ENOMEM;
    for (size_t k = 0; k < o->n_clients; k++) {
        sm_cell_report *c = &rep->cells[rep->n_cells++];
        sm_opts_http_variant(o, o->clients[k], &c->params);
        if (alloc_samples(o, c))
            return SM_ENOMEM;
    }
    return 0;
}

static int build_cells(const sm_once_opts *o, sm_report *rep)
{
    if (o->base.workload == SM_WL_HTTP)
        return build_http_cells(o, rep);
    size_t n = 0;
    for (size_t t = 0; t < o->n_transports; t++)
        n += o->transports[t] == SM_TR_TCP ? o->n_nodelay : 1;
    rep->cells = calloc(n, sizeof *rep->cells);
    if (!rep->cells)
        return SM_ENOMEM;
    for (size_t t = 0; t < o->n_transports; t++) {
        size_t nv = o->transports[t] == SM_TR_TCP ? o->n_nodelay : 1;
        for (size_t v = 0; v < nv; v++) {
            sm_cell_report *c = &rep->cells[rep->n_cells++];
            sm_opts_variant(o, o->transports[t], o->nodelay_order[v], &c->params);
            if (alloc_samples(o, c))
                return SM_ENOMEM;
        }
    }
    return 0;
}

static void progress_line(FILE *f, size_t done, size_t total, const char *kind, uint32_t rep,
                          uint32_t reps, const sm_cell_report *c, const sm_result *r)
{
    if (!f)
        return;
    fprintf(f, "[%*zu/%zu] %s %u/%u %-14s ", total >= 100 ? 3 : 2, done, total, kind, rep, reps,
            c->variant);
    if (!r->ok)
        fprintf(f, "FAILED: %s\n", r->reason);
    else if (c->params.workload == SM_WL_STREAM)
        fprintf(f, "%.0f B in %.6f s (%.1f MB/s)\n", sm_result_get(r, SM_M_BYTES),
                sm_result_get(r, SM_M_SECONDS), sm_result_get(r, SM_M_THROUGHPUT));
    else if (c->params.workload == SM_WL_RR)
        fprintf(f, "rtt p50 %.2f us, %.0f round trips/s\n", sm_result_get(r, SM_M_RTT_P50_US),
                sm_result_get(r, SM_M_RT_PER_S));
    else if (c->params.workload == SM_WL_HTTP)
        fprintf(f, "%.0f B in %.6f s (%.1f MB/s), user %.3f s, sys %.3f s; first round %.1f MB/s\n",
                sm_result_get(r, SM_M_BYTES), sm_result_get(r, SM_M_SECONDS),
                sm_result_get(r, SM_M_THROUGHPUT), sm_result_get(r, SM_M_USER_S),
                sm_result_get(r, SM_M_SYS_S), sm_result_get(r, SM_M_FIRST_MBPS));
    else
        fprintf(f, "%.0f connects/s, p50 %.2f us\n", sm_result_get(r, SM_M_CONNECTS_PER_S),
                sm_result_get(r, SM_M_CONNECT_P50_US));
    if (r->ok && r->host.disturbed)
        fprintf(f, "      disturbed: %s\n", r->host.reason);
    fflush(f);
}

static void summarise_cell(const sm_report *rep, sm_cell_report *c)
{
    double *x = malloc((c->n_samples ? c->n_samples : 1) * sizeof *x);
    if (!x)
        return;
    for (int m = 0; m < SM_M__COUNT; m++) {
        size_t n = 0, ok = 0;
        for (size_t i = 0; i < c->n_samples; i++) {
            if (!sm_report_counts(rep, &c->samples[i]))
                continue;
            ok++;
            if (sm_result_has(&c->samples[i], (sm_metric)m))
                x[n++] = sm_result_get(&c->samples[i], (sm_metric)m);
        }
        /* A metric some samples lack is not summarised: its median would mix populations. */
        if (n > 0 && n == ok && sm_stats_summarize(x, n, &c->summary[m]) == 0)
            c->summary_have |= 1ull << m;
    }
    free(x);
}

/* --repetitions auto, after a measured round: whether any variant's CI of its headline metric
 * is still wide (another round of every variant, so that ratios stay paired); each variant's
 * reason to stop goes to its report. */
static int need_round(const sm_once_opts *o, sm_report *rep, bool *more)
{
    *more = false;
    for (size_t k = 0; k < rep->n_cells; k++) {
        sm_cell_report *c = &rep->cells[k];
        const sm_metric m = sm_reps_metric(&c->params);
        double *x = malloc((c->n_samples ? c->n_samples : 1) * sizeof *x);
        if (!x)
            return SM_ENOMEM;
        for (size_t i = 0; i < c->n_samples; i++)
            /* A failed repetition is no sample, nor a disturbed one that the summary leaves
             * out (--disturbed include puts it back); both count towards max. */
            x[i] = !(c->samples[i].ok && sm_result_has(&c->samples[i], m)) ? NAN
                   : !o->include_disturbed && c->samples[i].host.disturbed
                       ? SM_REPS_DISTURBED_SAMPLE
                       : sm_result_get(&c->samples[i], m);
        sm_reps_decision d;
        int rc = sm_reps_decide(x, c->n_samples, (uint32_t)c->n_samples, &o->reps, &d);
        free(x);
        if (rc)
            return rc;
        c->stopped = d.more ? SM_REPS_NONE : d.why;
        *more = *more || d.more;
    }
    return 0;
}

/* Pairs repetition i of cell a with repetition i of cell b: they ran back to back, so the
 * ratio cancels the drift of the machine that a ratio of medians would keep. */
static int add_ratios(sm_report *rep, const sm_cell_report *a, const sm_cell_report *b, size_t cap)
{
    size_t nm;
    const sm_metric *ms = sm_once_ratio_metrics(a->params.workload, &nm);
    double *x = malloc((a->n_samples ? a->n_samples : 1) * sizeof *x);
    if (!x)
        return SM_ENOMEM;
    for (size_t k = 0; k < nm && rep->n_ratios < cap; k++) {
        size_t n = 0;
        for (size_t i = 0; i < a->n_samples && i < b->n_samples; i++) {
            const sm_result *ra = &a->samples[i], *rb = &b->samples[i];
            if (!sm_report_counts(rep, ra) || !sm_report_counts(rep, rb) ||
                !sm_result_has(ra, ms[k]) || !sm_result_has(rb, ms[k]))
                continue;
            double den = sm_result_get(rb, ms[k]);
            if (den != 0 && isfinite(den))
                x[n++] = sm_result_get(ra, ms[k]) / den;
        }
        if (n == 0)
            continue;
        sm_ratio *r = &rep->ratios[rep->n_ratios];
        r->metric = ms[k];
        snprintf(r->numerator, sizeof r->numerator, "%s", a->variant);
        snprintf(r->denominator, sizeof r->denominator, "%s", b->variant);
        if (sm_stats_summarize(x, n, &r->summary) == 0)
            rep->n_ratios++;
    }
    free(x);
    return 0;
}

/* The denominator: the Unix socket, or for http the thread model (the seed's libcurl in a
 * thread), else the first model given. */
static const sm_cell_report *baseline(const sm_report *rep)
{
    const sm_cell_report *base = NULL;
    for (size_t i = 0; i < rep->n_cells; i++) {
        const sm_params *p = &rep->cells[i].params;
        if (p->workload == SM_WL_HTTP ? p->client == SM_HTTP_THREAD : p->transport == SM_TR_UNIX)
            base = &rep->cells[i];
    }
    if (!base && rep->n_cells > 1 && rep->cells[0].params.workload == SM_WL_HTTP)
        base = &rep->cells[0];
    return base;
}

static int build_ratios(sm_report *rep)
{
    const sm_cell_report *uds = baseline(rep);
    if (!uds)
        return 0;
    size_t cap = rep->n_cells * 4;
    rep->ratios = calloc(cap, sizeof *rep->ratios);
    if (!rep->ratios)
        return SM_ENOMEM;
    for (size_t i = 0; i < rep->n_cells; i++)
        if (&rep->cells[i] != uds) {
            int rc = add_ratios(rep, &rep->cells[i], uds, cap);
            if (rc)
                return rc;
        }
    return 0;
}

int sm_once_run(const sm_once_opts *o, sm_report *rep, FILE *progress, sm_error *err)
{
    char tmpdir[256] = "";
    sm_runner_opts ro = {
        .fault = o->fault, .pin = o->pin, .client_cpu = o->client_cpu, .server_cpu = o->server_cpu};
    int rc, failed = 0;

    sm_tls_id *tls = NULL;

    memset(rep, 0, sizeof *rep);
    if (build_cells(o, rep))
        return sm_error_set(err, SM_ENOMEM, "out of memory for %u repetitions", o->repetitions);
    if (o->sock_dir[0]) {
        ro.sock_dir = o->sock_dir;
    } else {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/sockmatrix-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir))
            return sm_error_sys(err, errno, "cannot make a directory for Unix sockets in %s",
                                base && *base ? base : "/tmp");
        ro.sock_dir = tmpdir;
    }
    sm_facts_collect(&rep->facts);
    if (o->base.workload == SM_WL_HTTP) {
        if ((rc = sm_http_global_init(err)) || (o->base.tls && (rc = sm_tls_id_new(&tls, err))))
            goto out;
        ro.tls = tls;
    }

    uint32_t planned = o->repetitions; /* measured rounds; auto adds to it */
    size_t total = (size_t)(o->warmup + planned) * rep->n_cells;
    size_t done = 0;
    for (uint32_t round = 0; round < o->warmup + planned; round++) {
        const int warm = round < o->warmup;
        const uint32_t i = warm ? round : round - o->warmup;
        for (size_t k = 0; k < rep->n_cells; k++) {
            sm_cell_report *c = &rep->cells[k];
            sm_result *r = warm ? &c->warmup[i] : &c->samples[i];
            sm_result_init(r);
            if ((rc = sm_runner_run(&c->params, &ro, r, err)))
                goto out;
            if (warm)
                c->n_warmup++;
            else
                c->n_samples++;
            failed += !r->ok;
            progress_line(progress, ++done, total, warm ? "warm-up" : "rep", i + 1,
                          warm ? o->warmup : planned, c, r);
        }
        bool more = false;
        if (o->reps_auto && round + 1 == o->warmup + planned && (rc = need_round(o, rep, &more))) {
            rc = sm_error_set(err, rc, "out of memory deciding on another round");
            goto out;
        }
        if (more) {
            planned++;
            total += rep->n_cells;
        }
    }
    rep->with_disturbed = o->include_disturbed;
    for (size_t k = 0; k < rep->n_cells; k++)
        summarise_cell(rep, &rep->cells[k]);
    if (build_ratios(rep)) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory for the ratios");
        goto out;
    }
    rc = failed;
out:
    if (tmpdir[0])
        rmdir(tmpdir);
    sm_tls_id_free(tls);
    return rc;
}

void sm_once_report_fini(sm_report *rep)
{
    for (size_t k = 0; k < rep->n_cells; k++) {
        sm_cell_report *c = &rep->cells[k];
        for (size_t i = 0; i < c->n_samples; i++)
            sm_result_fini(&c->samples[i]);
        for (size_t i = 0; i < c->n_warmup; i++)
            sm_result_fini(&c->warmup[i]);
        free(c->samples);
        free(c->warmup);
    }
    free(rep->cells);
    free(rep->ratios);
    memset(rep, 0, sizeof *rep);
}
