/* Output formats of --once. JSON goes through proto's codec; table and CSV are text. */
#include "agent/once/output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/once/once.h"
#include "proto/codec.h"
#include "proto/csv.h"

/* A table column: a metric shown in `unit` after multiplying by `scale`. */
typedef struct column {
    sm_metric m;
    const char *label;
    double scale;
    int ci; /* show the 95% CI of the median */
} column;

static const column stream_cols[] = {
    {SM_M_SECONDS, "time (s)", 1, 1},       {SM_M_THROUGHPUT, "MB/s", 1, 1},
    {SM_M_TX_USER_S, "tx user ms", 1e3, 0}, {SM_M_TX_SYS_S, "tx sys ms", 1e3, 0},
    {SM_M_RX_USER_S, "rx user ms", 1e3, 0}, {SM_M_RX_SYS_S, "rx sys ms", 1e3, 0},
    {SM_M_CPU_S_PER_GB, "cpu s/GB", 1, 0},
};
static const column rr_cols[] = {
    {SM_M_RTT_P50_US, "rtt p50 (us)", 1, 1}, {SM_M_RTT_P99_US, "rtt p99 (us)", 1, 1},
    {SM_M_RT_PER_S, "round trips/s", 1, 1},  {SM_M_TX_USER_S, "tx user ms", 1e3, 0},
    {SM_M_TX_SYS_S, "tx sys ms", 1e3, 0},    {SM_M_RX_USER_S, "rx user ms", 1e3, 0},
    {SM_M_RX_SYS_S, "rx sys ms", 1e3, 0},
};
static const column connect_cols[] = {
    {SM_M_CONNECTS_PER_S, "connects/s", 1, 1}, {SM_M_CONNECT_P50_US, "connect p50 (us)", 1, 1},
    {SM_M_TX_USER_S, "tx user ms", 1e3, 0},    {SM_M_TX_SYS_S, "tx sys ms", 1e3, 0},
    {SM_M_RX_USER_S, "rx user ms", 1e3, 0},    {SM_M_RX_SYS_S, "rx sys ms", 1e3, 0},
};

/* The 2009 comparison: throughput and the client model's CPU, then what the set-up cost. */
static const column http_cols[] = {
    {SM_M_THROUGHPUT, "MB/s", 1, 1},
    {SM_M_USER_S, "user ms", 1e3, 1},
    {SM_M_SYS_S, "sys ms", 1e3, 0},
    {SM_M_CPU_S_PER_GB, "cpu s/GB", 1, 0},
    {SM_M_TTFB_MS, "ttfb ms", 1, 0},
    {SM_M_FIRST_MBPS, "first MB/s", 1, 0},
    {SM_M_NEW_CONNECTIONS, "new conns", 1, 0},
};

static const column *columns_of(sm_workload_kind w, size_t *n)
{
    switch (w) {
    case SM_WL_HTTP:
        *n = sizeof http_cols / sizeof *http_cols;
        return http_cols;
    case SM_WL_RR:
        *n = sizeof rr_cols / sizeof *rr_cols;
        return rr_cols;
    case SM_WL_CONNECT:
        *n = sizeof connect_cols / sizeof *connect_cols;
        return connect_cols;
    default:
        *n = sizeof stream_cols / sizeof *stream_cols;
        return stream_cols;
    }
}

/* Four significant digits whatever the magnitude: 0.0007123, 1496, 12.34. */
static void num(char *out, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(out, len, "-");
    else if (v != 0 && fabs(v) < 1e-3)
        snprintf(out, len, "%.3e", v);
    else if (fabs(v) >= 1e4)
        snprintf(out, len, "%.0f", v);
    else
        snprintf(out, len, "%.4g", v);
}

static void cell_text(char *out, size_t len, const sm_summary *s, double scale, int ci,
                      const char *suffix)
{
    char a[40], b[32], c[32];
    num(a, sizeof a, s->median * scale);
    strncat(a, suffix, sizeof a - strlen(a) - 1);
    if (!ci) {
        snprintf(out, len, "%s", a);
        return;
    }
    num(b, sizeof b, s->ci95_low * scale);
    num(c, sizeof c, s->ci95_high * scale);
    /* "~" marks an interval whose coverage is below 95% (too few repetitions). */
    snprintf(out, len, "%s [%s, %s]%s", a, b, c, s->ci_coverage < 0.95 ? "~" : "");
}

static void describe_test(FILE *f, const sm_params *p, const sm_once_opts *o)
{
    fprintf(f, "sockmatrix %s, workload %s", SM_VERSION, sm_workload_name(p->workload));
    if (p->workload == SM_WL_STREAM) {
        if (p->framing == SM_FRAMING_LINES)
            fprintf(f, ", framing lines: %llu lines of %u B + CRLF", (unsigned long long)p->count,
                    p->msg_size);
        else if (p->count)
            fprintf(f, ", %llu writes of %u B", (unsigned long long)p->count, p->msg_size);
        else if (p->bytes)
            fprintf(f, ", %llu B in writes of %u B", (unsigned long long)p->bytes, p->msg_size);
        else
            fprintf(f, ", %u ms in writes of %u B", p->duration_ms, p->msg_size);
    } else if (p->workload == SM_WL_RR) {
        fprintf(f, ", %u B requests, %u B responses, ", p->req_size, p->resp_size);
        if (p->count)
            fprintf(f, "%llu round trips", (unsigned long long)p->count);
        else
            fprintf(f, "%u ms", p->duration_ms);
    } else if (p->workload == SM_WL_HTTP) {
        if (p->url[0])
            fprintf(f, ", GET %s", p->url);
        else
            fprintf(f, ", GET %llu B from the built-in source%s", (unsigned long long)p->bytes,
                    p->tls ? " over TLS" : "");
        fprintf(f, ", %u round%s of %u connection%s%s%s", p->repeat, p->repeat == 1 ? "" : "s",
                p->connections, p->connections == 1 ? "" : "s",
                p->fresh_connect ? ", fresh connections" : ", keep-alive",
                p->http2 ? ", HTTP/2 asked" : "");
        if (p->buffer_size)
            fprintf(f, ", buffer %u B", p->buffer_size);
    } else {
        if (p->count)
            fprintf(f, ", %llu connections", (unsigned long long)p->count);
        else
            fprintf(f, ", %u ms of connections", p->duration_ms);
    }
    if (o->reps_auto)
        fprintf(f, "; %u to %u repetitions until the CI is tight (+%u warm-up) interleaved\n",
                o->reps.min, o->reps.max, o->warmup);
    else
        fprintf(f, "; %u repetitions (+%u warm-up) interleaved\n", o->repetitions, o->warmup);
}

static void describe_host(FILE *f, const sm_facts *h)
{
    fprintf(f,
            "host %s: %s, %u cores, %.1f GiB, kernel %s, congestion %s, lo mtu %u, "
            "tcp_autocorking %u, load %.2f\n",
            h->hostname, h->cpu_model, h->cores, (double)h->mem_bytes / (1024.0 * 1024 * 1024),
            h->kernel, h->congestion, h->lo_mtu, h->tcp_autocorking, h->loadavg[0]);
}

/* Where the two ends ran. On loopback, sender and receiver sharing a CPU or not can change a
 * small-write result several-fold, so a reader must see it beside the numbers. */
static void placement(FILE *f, const sm_report *rep, const sm_once_opts *o)
{
    /* http's threads are the client model's own; where they ran is what is being compared. */
    if (rep->n_cells && rep->cells[0].params.workload == SM_WL_HTTP)
        return;
    if (o->pin) {
        fprintf(f, "\nthreads pinned: sender on CPU %d, receiver on CPU %d\n", o->client_cpu,
                o->server_cpu);
        return;
    }
    if (rep->facts.cores < 2)
        return;
    fprintf(f, "\nsender and receiver on the same CPU (at the end of the job), not pinned:");
    for (size_t i = 0; i < rep->n_cells; i++) {
        const sm_cell_report *c = &rep->cells[i];
        size_t same = 0, known = 0;
        for (size_t k = 0; k < c->n_samples; k++) {
            const sm_result *r = &c->samples[k];
            if (!r->ok || r->tx_cpu < 0 || r->rx_cpu < 0)
                continue;
            known++;
            same += r->tx_cpu == r->rx_cpu;
        }
        fprintf(f, "%s %s %zu/%zu", i ? "," : "", c->variant, same, known);
    }
    fprintf(f, "\n");
}

/* The fixed-width grid: one row per variant, a column per metric of the workload. */
static void variants_grid(FILE *f, const sm_report *rep)
{
    size_t nc;
    const column *cols = columns_of(rep->cells[0].params.workload, &nc);
    fprintf(f, "\n%-14s %3s %4s", "variant", "n", "dist");
    for (size_t k = 0; k < nc; k++)
        fprintf(f, "  %*s", cols[k].ci ? 30 : 10, cols[k].label);
    fprintf(f, "\n");
    for (size_t i = 0; i < rep->n_cells; i++) {
        const sm_cell_report *c = &rep->cells[i];
        const sm_summary *s0 = &c->summary[cols[0].m];
        size_t dist = 0;
        for (size_t k = 0; k < c->n_samples; k++)
            dist += c->samples[k].ok && c->samples[k].host.disturbed;
        fprintf(f, "%-14s %3zu %4zu", c->variant, c->summary_have & (1ull << cols[0].m) ? s0->n : 0,
                dist);
        for (size_t k = 0; k < nc; k++) {
            char t[128] = "-";
            if (c->summary_have & (1ull << cols[k].m))
                cell_text(t, sizeof t, &c->summary[cols[k].m], cols[k].scale, cols[k].ci, "");
            fprintf(f, "  %*s", cols[k].ci ? 30 : 10, t);
        }
        fprintf(f, "\n");
    }
}

/* With --repetitions auto: why each variant stopped where it did. */
static void auto_repetitions(FILE *f, const sm_report *rep, const sm_once_opts *o)
{
    fprintf(f,
            "\nrepetitions: auto, %u to %u until the 95%% CI of %s is within +-%g%% of "
            "the median:\n",
            o->reps.min, o->reps.max, sm_metric_name(sm_reps_metric(&rep->cells[0].params)),
            o->reps.ci_rel * 100);
    for (size_t i = 0; i < rep->n_cells; i++) {
        const sm_cell_report *c = &rep->cells[i];
        const char *why = sm_reps_stop_name(c->stopped);
        fprintf(f, "  %-14s %3zu  %s\n", c->variant, c->n_samples,
                c->stopped == SM_REPS_MAX  ? "stopped on max: the CI is still wider"
                : c->stopped == SM_REPS_CI ? "stopped on ci"
                : why                      ? why
                                           : "-");
    }
}

static void ratios(FILE *f, const sm_report *rep)
{
    if (!rep->n_ratios)
        return;
    fprintf(f, "\nratios, paired by repetition (median [95%% CI]):\n");
    for (size_t i = 0; i < rep->n_ratios; i++) {
        const sm_ratio *r = &rep->ratios[i];
        char t[128], name[140];
        cell_text(t, sizeof t, &r->summary, 1, 1, "x");
        snprintf(name, sizeof name, "%s/%s", r->numerator, r->denominator);
        fprintf(f, "  %-22s %-16s %s  (n=%zu)\n", name, sm_metric_name(r->metric), t, r->summary.n);
    }
}

static void disturbed_samples(FILE *f, const sm_report *rep)
{
    int header = 0;
    for (size_t i = 0; i < rep->n_cells; i++) {
        const sm_cell_report *c = &rep->cells[i];
        for (size_t k = 0; k < c->n_samples; k++) {
            const sm_result *r = &c->samples[k];
            if (!r->ok || !r->host.disturbed)
                continue;
            if (!header++)
                fprintf(f, "\ndisturbed samples (%s):\n",
                        rep->with_disturbed ? "in the statistics above, --disturbed include"
                                            : "not in the statistics above; --disturbed "
                                              "include keeps them");
            fprintf(f, "  %s repetition %zu: %s\n", c->variant, k + 1, r->host.reason);
        }
    }
}

static void failed_jobs(FILE *f, const sm_report *rep)
{
    int header = 0;
    for (size_t i = 0; i < rep->n_cells; i++) {
        const sm_cell_report *c = &rep->cells[i];
        for (size_t k = 0; k < c->n_samples + c->n_warmup; k++) {
            const int warm = k >= c->n_samples;
            const sm_result *r = warm ? &c->warmup[k - c->n_samples] : &c->samples[k];
            if (r->ok)
                continue;
            if (!header++)
                fprintf(f, "\nfailed jobs (not in the statistics above):\n");
            fprintf(f, "  %s %s %zu: %s\n", c->variant, warm ? "warm-up" : "repetition",
                    (warm ? k - c->n_samples : k) + 1, r->reason);
        }
    }
}

/* What the CI and the CPU figures mean. */
static void footnotes(FILE *f, const sm_report *rep)
{
    fprintf(f, "\nCI: distribution-free 95%% interval of the median (order statistics); "
               "~ marks fewer than 6 samples, where [min, max] covers less than 95%%.\n");
    if (rep->cells[0].params.workload == SM_WL_HTTP)
        fprintf(f, "http: every figure but first MB/s covers the rounds after the first; user/sys "
                   "are getrusage(RUSAGE_THREAD)\nof the client model's threads (the built-in "
                   "source's CPU is not in them); cpu s/GB is theirs per 10^9 body bytes.\n");
    else
        fprintf(f,
                "CPU: getrusage(RUSAGE_THREAD) of the sending (tx) and receiving (rx) threads; ");
    fprintf(f, "user+sys is exact, the kernel splits it\nbetween user and sys by tick samples, "
               "so short jobs may show all of it on one side. MB = 10^6 bytes.\n");
}

void sm_output_table(FILE *f, const sm_report *rep, const sm_once_opts *o)
{
    if (rep->n_cells == 0)
        return;
    describe_test(f, &rep->cells[0].params, o);
    describe_host(f, &rep->facts);
    variants_grid(f, rep);
    if (o && o->reps_auto)
        auto_repetitions(f, rep, o);
    placement(f, rep, o);
    ratios(f, rep);
    disturbed_samples(f, rep);
    failed_jobs(f, rep);
    footnotes(f, rep);
}

static void csv_put(void *arg, const char *p, size_t n)
{
    fwrite(p, 1, n, arg);
}

static void csv_field(FILE *f, const char *s)
{
    sm_csv_field(s, strlen(s), csv_put, f);
}

static void csv_row(FILE *f, const sm_report *rep, const sm_cell_report *c, size_t rep_i, int warm,
                    const sm_result *r)
{
    csv_field(f, rep->facts.hostname);
    fprintf(f, ",%s,%s,", sm_workload_name(c->params.workload),
            sm_transport_name(c->params.transport));
    csv_field(f, c->variant);
    fprintf(f, ",%zu,%d,%d,", rep_i + 1, warm, r->ok ? 1 : 0);
    csv_field(f, r->ok ? "" : r->reason);
    fputc(',', f);
    if (r->sndbuf_eff)
        fprintf(f, "%u", r->sndbuf_eff);
    fputc(',', f);
    if (r->rcvbuf_eff)
        fprintf(f, "%u", r->rcvbuf_eff);
    fputc(',', f);
    if (r->tx_cpu >= 0)
        fprintf(f, "%d", (int)r->tx_cpu);
    fputc(',', f);
    if (r->rx_cpu >= 0)
        fprintf(f, "%d", (int)r->rx_cpu);
    for (int m = 0; m < SM_M__COUNT; m++) {
        fputc(',', f);
        if (sm_result_has(r, (sm_metric)m))
            fprintf(f, "%.9g", sm_result_get(r, (sm_metric)m));
    }
    fputs("\r\n", f);
}

void sm_output_csv(FILE *f, const sm_report *rep)
{
    fputs("host,workload,transport,variant,repetition,warmup,ok,reason,sndbuf,rcvbuf,tx_cpu,rx_cpu",
          f);
    for (int m = 0; m < SM_M__COUNT; m++)
        fprintf(f, ",%s", sm_metric_name((sm_metric)m));
    fputs("\r\n", f);
    for (size_t i = 0; i < rep->n_cells; i++) {
        const sm_cell_report *c = &rep->cells[i];
        for (size_t k = 0; k < c->n_warmup; k++)
            csv_row(f, rep, c, k, 1, &c->warmup[k]);
        for (size_t k = 0; k < c->n_samples; k++)
            csv_row(f, rep, c, k, 0, &c->samples[k]);
    }
}

int sm_output_json(FILE *f, const sm_report *rep, sm_error *err)
{
    char *text = sm_codec_report_encode(rep, 1, err);
    if (!text)
        return err ? err->code : SM_ENOMEM;
    fputs(text, f);
    fputc('\n', f);
    free(text);
    return 0;
}
