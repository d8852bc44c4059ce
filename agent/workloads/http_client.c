/* The http workload's client side: `repeat` rounds of `connections` simultaneous libcurl GETs,
 * one per lane, run by a client model (http_models.c), and the metrics they make.
 *
 * A lane owns one easy handle for the whole job, so keep-alive carries its connection from
 * round to round in every model: curl_easy_perform keeps a connection cache in the easy
 * handle, the multi model one in its multi handle, and both live as long as the job. */
#include "agent/workloads/http_models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How far before our deadline a libcurl timeout still counts as the job's time limit. */
#define CURL_CLOCK_SLACK_NS (50u * 1000000u)

/* How much of a url a reason quotes: the reason also names the transfer and the cause. */
#define URL_IN_REASON "%.120s"

/* Written once under pthread_once, read-only afterwards. */
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init_once(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int sm_http_global_init(sm_error *err)
{
    int e = pthread_once(&global_once, global_init_once);
    if (e)
        return sm_error_sys(err, e, "pthread_once for curl_global_init");
    if (global_rc != CURLE_OK)
        return sm_error_set(err, SM_ESYS, "curl_global_init: %s", curl_easy_strerror(global_rc));
    return 0;
}

/* The per-transfer figures of the whole job, for the medians. */
typedef struct figures {
    double *ttfb_first, *ttfb_rest, *connect, *tls;
    size_t n_first, n_rest, n_connect, n_tls;
} figures;

/* What stops the job, looked at before each round and in every progress callback. */
static sm_http_stop job_stop(sm_job *job)
{
    if (job->abort && atomic_load(job->abort))
        return SM_HTTP_STOP_ABORT;
    if (atomic_load(&job->cancel))
        return SM_HTTP_STOP_CANCEL;
    if (sm_now_ns() >= job->deadline_ns)
        return SM_HTTP_STOP_DEADLINE;
    return SM_HTTP_STOP_NONE;
}

/* The reason of a job stop, worded as io.c words it; `doing` says where it caught the job. */
static int stop_fail(sm_side *s, sm_http_stop why, const char *doing)
{
    if (why == SM_HTTP_STOP_ABORT)
        return sm_io_fail(s, SM_ECANCELED, "cancelled while %s: the job was stopped", doing);
    if (why == SM_HTTP_STOP_CANCEL)
        return sm_error_set(&s->err, SM_ECANCELED, "cancelled while %s: the other side failed",
                            doing);
    return sm_io_fail(s, SM_ETIMEDOUT, "time limit of %u ms reached while %s",
                      s->job->p->time_limit_ms, doing);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    sm_http_lane *l = arg;
    size_t len = size * nmemb;
    /* An error page is not the body to count or verify: stop at its first byte. */
    if (l->status == 0) {
        curl_easy_getinfo(l->easy, CURLINFO_RESPONSE_CODE, &l->status);
        if (l->status != 200) {
            l->stop = SM_HTTP_STOP_STATUS;
            return 0;
        }
    }
    if (l->run->verify) {
        long k = sm_pattern_check(l->run->s->job->pat, l->got, (const uint8_t *)data, len);
        if (k >= 0) {
            l->bad_at = l->got + (uint64_t)k;
            l->stop = SM_HTTP_STOP_VERIFY;
            return 0;
        }
    }
    l->got += len;
    return len;
}

/* curl_easy_perform calls this at least once a second while a transfer idles, the multi loop
 * every poll: a cancel is seen within a second (thread, pool) or a poll (multi); the deadline
 * to the millisecond, through CURLOPT_TIMEOUT_MS. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    sm_http_lane *l = arg;
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    if (l->stop == SM_HTTP_STOP_NONE)
        l->stop = job_stop(l->run->s->job);
    if (l->stop == SM_HTTP_STOP_NONE && atomic_load(&l->run->failed))
        l->stop = SM_HTTP_STOP_SIBLING;
    return l->stop != SM_HTTP_STOP_NONE;
}

/* The built-in source of the peer: http(s)://HOST:PORT/bytes/N, an IPv6 literal in brackets
 * with its zone's '%' escaped. Returns 0 or -1 when it does not fit. */
static int source_url(const sm_job *job, char *out, size_t size)
{
    char host[3 * sizeof job->ep.host];
    size_t k = 0;
    for (const char *c = job->ep.host; *c; c++) {
        if (*c == '%') {
            memcpy(host + k, "%25", 3);
            k += 3;
        } else {
            host[k++] = *c;
        }
    }
    host[k] = '\0';
    int v6 = strchr(host, ':') != NULL;
    int n = snprintf(out, size, "%s://%s%s%s:%u/bytes/%llu", job->p->tls ? "https" : "http",
                     v6 ? "[" : "", host, v6 ? "]" : "", (unsigned)job->ep.port,
                     (unsigned long long)job->p->bytes);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* The options every transfer of the lane shares; the time limit is set per round. */
static int lane_open(sm_http_run *run, sm_http_lane *l, const char *url)
{
    sm_side *s = run->s;
    const sm_job *job = s->job;
    const sm_params *p = job->p;
    CURLcode e = CURLE_OK;
    l->run = run;
    l->easy = curl_easy_init();
    if (!l->easy)
        return sm_io_fail(s, SM_ENOMEM, "curl_easy_init failed");
#define SETOPT(opt, val)                                                                           \
    do {                                                                                           \
        if (e == CURLE_OK)                                                                         \
            e = curl_easy_setopt(l->easy, opt, val);                                               \
    } while (0)
    SETOPT(CURLOPT_URL, url);
    SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
    /* Threads other than the side's own: libcurl must not use signals for its timeouts. */
    SETOPT(CURLOPT_NOSIGNAL, 1L);
    SETOPT(CURLOPT_PRIVATE, (void *)l);
    SETOPT(CURLOPT_ERRORBUFFER, l->errbuf);
    SETOPT(CURLOPT_WRITEFUNCTION, on_body);
    SETOPT(CURLOPT_WRITEDATA, (void *)l);
    SETOPT(CURLOPT_NOPROGRESS, 0L);
    SETOPT(CURLOPT_XFERINFOFUNCTION, on_progress);
    SETOPT(CURLOPT_XFERINFODATA, (void *)l);
    SETOPT(CURLOPT_HTTP_VERSION, p->http2 ? (long)CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
    if (p->buffer_size)
        SETOPT(CURLOPT_BUFFERSIZE, (long)p->buffer_size);
    if (p->fresh_connect) {
        SETOPT(CURLOPT_FRESH_CONNECT, 1L);
        SETOPT(CURLOPT_FORBID_REUSE, 1L);
    }
    if (!p->url[0]) {
        /* The peer agent is measured, not a proxy that http_proxy may name. */
        SETOPT(CURLOPT_PROXY, "");
        /* From the agent's data address: the peer accepts its client from there alone. */
        if (job->client_opts.bind_from && job->client_opts.bind_from[0]) {
            char iface[80];
            snprintf(iface, sizeof iface, "host!%s", job->client_opts.bind_from);
            SETOPT(CURLOPT_INTERFACE, iface);
        }
    }
    if (p->tls) {
        /* The source's certificate is self-signed and names no host: its key, pinned, is the
         * one thing accepted (libcurl checks the pin with verification off too). */
        SETOPT(CURLOPT_PINNEDPUBLICKEY, job->pin);
        SETOPT(CURLOPT_SSL_VERIFYPEER, 0L);
        SETOPT(CURLOPT_SSL_VERIFYHOST, 0L);
    }
#undef SETOPT
    if (e != CURLE_OK)
        return sm_io_fail(s, e == CURLE_OUT_OF_MEMORY ? SM_ENOMEM : SM_EINVAL,
                          "curl_easy_setopt: %s", curl_easy_strerror(e));
    return 0;
}

/* The SM_E code of a transfer libcurl failed by itself. */
static int code_of(CURLcode res)
{
    switch (res) {
    case CURLE_OUT_OF_MEMORY:
        return SM_ENOMEM;
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
        return SM_ECLOSED;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_BAD_CONTENT_ENCODING:
    case CURLE_TOO_MANY_REDIRECTS:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        return SM_EPROTO;
    default:
        return SM_ESYS;
    }
}

/* The failure of a lane's transfer of this round, if any; 0 when it is whole. A transfer
 * stopped because a sibling failed is not reported here (the sibling is). */
static int lane_check(sm_http_run *run, sm_http_lane *l, const char *url)
{
    sm_side *s = run->s;
    const sm_params *p = s->job->p;
    unsigned long long t = (unsigned long long)l->num;
    char doing[64];
    snprintf(doing, sizeof doing, "receiving transfer %llu (round %u)", t, run->round);
    switch (l->stop) {
    case SM_HTTP_STOP_VERIFY:
        return sm_io_fail(s, SM_EVERIFY, "body byte %llu of transfer %llu differs from the pattern",
                          (unsigned long long)l->bad_at, t);
    case SM_HTTP_STOP_ABORT:
    case SM_HTTP_STOP_CANCEL:
    case SM_HTTP_STOP_DEADLINE:
        return stop_fail(s, l->stop, doing);
    case SM_HTTP_STOP_SIBLING:
        return 0;
    default:
        break;
    }
    /* CURLOPT_TIMEOUT_MS is the deadline itself; an earlier timeout is libcurl's own (its
     * connect timeout). libcurl counts whole milliseconds from its own start and may call
     * time a little before our clock passes the deadline, hence the slack. */
    if (l->res == CURLE_OPERATION_TIMEDOUT &&
        sm_now_ns() + CURL_CLOCK_SLACK_NS >= s->job->deadline_ns)
        return stop_fail(s, SM_HTTP_STOP_DEADLINE, doing);
    if (l->res != CURLE_OK && l->stop != SM_HTTP_STOP_STATUS)
        return sm_io_fail(s, code_of(l->res), "transfer %llu (round %u): %s", t, run->round,
                          l->errbuf[0] ? l->errbuf : curl_easy_strerror(l->res));
    curl_easy_getinfo(l->easy, CURLINFO_RESPONSE_CODE, &l->status);
    if (l->status != 200)
        return sm_io_fail(s, SM_EPROTO, "HTTP status %ld from " URL_IN_REASON " (transfer %llu)",
                          l->status, url, t);
    if (p->bytes && l->got != p->bytes)
        return sm_io_fail(s, SM_EPROTO,
                          "transfer %llu (round %u): the body has %llu bytes, %llu expected", t,
                          run->round, (unsigned long long)l->got, (unsigned long long)p->bytes);
    return 0;
}

/* The first failure of the round: a lane's own before one stopped by it. */
static int round_check(sm_http_run *run, const char *url)
{
    int sibling = 0;
    for (unsigned i = 0; i < run->n; i++) {
        int rc = lane_check(run, &run->lanes[i], url);
        if (rc)
            return rc;
        sibling |= run->lanes[i].stop == SM_HTTP_STOP_SIBLING;
    }
    if (sibling)
        return sm_io_fail(run->s, SM_EPROTO, "round %u: a transfer stopped after another failed",
                          run->round);
    return 0;
}

static void add_cpu(sm_cpu *to, const sm_cpu *c)
{
    to->user_s += c->user_s;
    to->sys_s += c->sys_s;
}

static double us_to_ms(curl_off_t us)
{
    return (double)us / 1e3;
}

/* A whole round into s->http and the figures: the first round is first_*, the others (or
 * the only one) the rest. */
static void round_record(sm_http_run *run, figures *f, uint64_t ns, const sm_cpu *cpu)
{
    sm_side *s = run->s;
    const sm_params *p = s->job->p;
    sm_http_tally *h = &s->http;
    bool first = run->round == 1, rest = run->round > 1 || p->repeat == 1;
    bool tls = p->tls || strncmp(p->url, "https://", 8) == 0;
    for (unsigned i = 0; i < run->n; i++) {
        const sm_http_lane *l = &run->lanes[i];
        curl_off_t start = 0, dns = 0, tcp = 0, app = 0;
        long conns = 0;
        curl_easy_getinfo(l->easy, CURLINFO_STARTTRANSFER_TIME_T, &start);
        curl_easy_getinfo(l->easy, CURLINFO_NAMELOOKUP_TIME_T, &dns);
        curl_easy_getinfo(l->easy, CURLINFO_CONNECT_TIME_T, &tcp);
        curl_easy_getinfo(l->easy, CURLINFO_APPCONNECT_TIME_T, &app);
        curl_easy_getinfo(l->easy, CURLINFO_NUM_CONNECTS, &conns);
        if (first) {
            f->ttfb_first[f->n_first++] = us_to_ms(start);
            h->first_bytes += l->got;
        }
        if (rest) {
            f->ttfb_rest[f->n_rest++] = us_to_ms(start);
            h->bytes += l->got;
            h->transfers++;
            h->new_conns += (uint64_t)conns;
        }
        /* CONNECT_TIME counts from the start of the transfer: the name lookup is not part of
         * the TCP connect. */
        if (conns > 0) {
            f->connect[f->n_connect++] = us_to_ms(tcp - dns);
            if (tls && app >= tcp)
                f->tls[f->n_tls++] = us_to_ms(app - tcp);
        }
        s->bytes += l->got;
        s->msgs++;
    }
    h->rounds++;
    if (first) {
        h->first_ns = ns;
        h->first_cpu = *cpu;
    }
    if (rest) {
        h->ns += ns;
        add_cpu(&h->cpu, cpu);
    }
}

/* One round: every lane's transfer once, timed from the first start to the last end. Its
 * CPU is the side thread's (all of it in the multi model; thread creation, joins and waits in
 * the others) plus the threads' that performed the transfers. */
static int run_round(sm_http_run *run, const sm_http_model *model, const char *url, figures *f)
{
    sm_side *s = run->s;
    sm_job *job = s->job;
    char doing[48];
    snprintf(doing, sizeof doing, "starting round %u", run->round);
    sm_http_stop why = job_stop(job);
    if (why)
        return stop_fail(s, why, doing);
    /* The backstop of the progress callback, for a stall it might not see in time. */
    uint64_t now = sm_now_ns();
    long left_ms = now < job->deadline_ns ? (long)((job->deadline_ns - now) / 1000000u) + 1 : 1;
    for (unsigned i = 0; i < run->n; i++) {
        sm_http_lane *l = &run->lanes[i];
        l->num = (uint64_t)(run->round - 1) * run->n + i + 1;
        l->got = 0;
        l->bad_at = 0;
        l->status = 0;
        l->stop = SM_HTTP_STOP_NONE;
        l->res = CURLE_OK;
        l->cpu = (sm_cpu){0, 0};
        l->errbuf[0] = '\0';
        curl_easy_setopt(l->easy, CURLOPT_TIMEOUT_MS, left_ms);
    }
    atomic_store(&run->failed, 0);

    sm_cpu before, after;
    sm_cpu_thread(&before);
    uint64_t t0 = sm_now_ns();
    int rc = model->round(run);
    uint64_t t1 = sm_now_ns();
    sm_cpu_thread(&after);
    sm_cpu cpu = sm_cpu_diff(&after, &before);
    for (unsigned i = 0; i < run->n; i++) {
        add_cpu(&cpu, &run->lanes[i].cpu);
        add_cpu(&s->extra_cpu, &run->lanes[i].cpu);
    }
    if (!rc)
        rc = round_check(run, url);
    if (rc)
        return rc;
    if (run->round == 1)
        s->t0_ns = t0;
    s->t1_ns = t1;
    round_record(run, f, t1 - t0, &cpu);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place; NAN when n is 0. */
static double median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int figures_alloc(figures *f, size_t rounds, size_t lanes)
{
    f->ttfb_first = malloc(lanes * sizeof(double));
    f->ttfb_rest = malloc(rounds * lanes * sizeof(double));
    f->connect = malloc(rounds * lanes * sizeof(double));
    f->tls = malloc(rounds * lanes * sizeof(double));
    return f->ttfb_first && f->ttfb_rest && f->connect && f->tls ? 0 : -1;
}

static void figures_free(figures *f)
{
    free(f->ttfb_first);
    free(f->ttfb_rest);
    free(f->connect);
    free(f->tls);
}

static int http_client(sm_side *s)
{
    const sm_params *p = s->job->p;
    const sm_http_model *model = sm_http_model_get(p->client);
    sm_http_run run = {.s = s, .n = p->connections, .verify = sm_params_http_verifies(p)};
    figures f = {0};
    char url[SM_URL_MAX + 1];
    bool close_model = false;
    sm_error e;
    int rc = sm_http_global_init(&e);
    if (rc)
        return sm_io_fail(s, rc, "%s", e.msg);
    if (!model || run.n == 0)
        return sm_io_fail(s, SM_EINVAL, "http: client %d with %u connections cannot run",
                          (int)p->client, run.n);
    if (p->url[0])
        snprintf(url, sizeof url, "%s", p->url);
    else if (source_url(s->job, url, sizeof url))
        return sm_io_fail(s, SM_EINVAL, "the url of the source at %s is too long", s->job->ep.host);
    if (p->tls && !s->job->pin[0])
        return sm_io_fail(s, SM_EINVAL, "tls: no pin of the source's key");

    run.lanes = calloc(run.n, sizeof *run.lanes);
    if (!run.lanes || figures_alloc(&f, p->repeat, run.n)) {
        rc = sm_io_fail(s, SM_ENOMEM, "out of memory for %u lanes", run.n);
        goto out;
    }
    for (unsigned i = 0; i < run.n && !rc; i++)
        rc = lane_open(&run, &run.lanes[i], url);
    if (rc)
        goto out;
    close_model = true;
    if (model->open && (rc = model->open(&run)))
        goto out;
    for (run.round = 1; run.round <= p->repeat && !rc; run.round++)
        rc = run_round(&run, model, url, &f);
    if (rc)
        goto out;
    s->http.ttfb_ms = median(f.ttfb_rest, f.n_rest);
    s->http.first_ttfb_ms = median(f.ttfb_first, f.n_first);
    s->http.connect_ms = median(f.connect, f.n_connect);
    s->http.tls_ms = median(f.tls, f.n_tls);
out:
    if (close_model && model->close)
        model->close(&run);
    for (unsigned i = 0; run.lanes && i < run.n; i++)
        curl_easy_cleanup(run.lanes[i].easy);
    free(run.lanes);
    figures_free(&f);
    return rc;
}

/* The client's metrics: the rest rounds, the first apart, and the client model's CPU. */
static void put_client(const sm_side *client, sm_result *r)
{
    const sm_http_tally *h = &client->http;
    double secs = (double)h->ns / 1e9, first_secs = (double)h->first_ns / 1e9;
    double cpu = h->cpu.user_s + h->cpu.sys_s;
    sm_result_set(r, SM_M_BYTES, (double)h->bytes);
    sm_result_set(r, SM_M_SECONDS, secs);
    if (secs > 0)
        sm_result_set(r, SM_M_THROUGHPUT, (double)h->bytes / 1e6 / secs);
    sm_result_set(r, SM_M_USER_S, h->cpu.user_s);
    sm_result_set(r, SM_M_SYS_S, h->cpu.sys_s);
    if (h->bytes > 0)
        sm_result_set(r, SM_M_CPU_S_PER_GB, cpu / ((double)h->bytes / 1e9));
    if (!isnan(h->ttfb_ms))
        sm_result_set(r, SM_M_TTFB_MS, h->ttfb_ms);
    if (!isnan(h->connect_ms))
        sm_result_set(r, SM_M_CONNECT_MS, h->connect_ms);
    if (!isnan(h->tls_ms))
        sm_result_set(r, SM_M_TLS_MS, h->tls_ms);
    sm_result_set(r, SM_M_TRANSFERS, (double)h->transfers);
    sm_result_set(r, SM_M_NEW_CONNECTIONS, (double)h->new_conns);
    if (first_secs > 0)
        sm_result_set(r, SM_M_FIRST_MBPS, (double)h->first_bytes / 1e6 / first_secs);
    if (!isnan(h->first_ttfb_ms))
        sm_result_set(r, SM_M_FIRST_TTFB_MS, h->first_ttfb_ms);
    sm_result_set(r, SM_M_FIRST_USER_S, h->first_cpu.user_s);
}

/* The client times the job. A url job's server side never ran: the runner passes it zeroed. */
static void http_finish(const sm_job *job, const sm_side *server, const sm_side *client,
                        sm_result *r)
{
    (void)job;
    put_client(client, r);
    if (server->msgs > 0 || server->cpu.user_s > 0 || server->cpu.sys_s > 0)
        sm_io_put_cpu_side(server, 1, r);
}

static void http_finish_side(const sm_job *job, const sm_side *s, int is_server, sm_result *r)
{
    (void)job;
    if (is_server)
        sm_io_put_cpu_side(s, 1, r);
    else
        put_client(s, r);
}

const sm_workload_ops sm_workload_http = {SM_WL_HTTP,  "http",      sm_http_source_serve,
                                          http_client, http_finish, http_finish_side};
