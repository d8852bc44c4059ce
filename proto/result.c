/* Job results: the metric table (names, units, which way is better) and the result record. */
#include "proto/result.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto/params.h"

_Static_assert(SM_M__COUNT <= 64, "sm_result.have holds one bit per metric");

static const struct metric_info {
    const char *name;
    const char *unit;
    sm_metric_sense sense;
    const char *detail; /* what the unit does not say, for people (sm_metric_detail) */
} metrics[SM_M__COUNT] = {
    [SM_M_BYTES] = {"bytes", "B", SM_SENSE_NONE, ""},
    [SM_M_SECONDS] = {"seconds", "s", SM_SENSE_LOWER, ""},
    [SM_M_THROUGHPUT] = {"throughput_MBps", "MB/s", SM_SENSE_HIGHER, ""},
    [SM_M_MSGS_PER_S] = {"msgs_per_s", "1/s", SM_SENSE_HIGHER, "messages"},
    [SM_M_TX_USER_S] = {"tx_user_s", "s", SM_SENSE_LOWER, "sender user CPU"},
    [SM_M_TX_SYS_S] = {"tx_sys_s", "s", SM_SENSE_LOWER, "sender system CPU"},
    [SM_M_RX_USER_S] = {"rx_user_s", "s", SM_SENSE_LOWER, "receiver user CPU"},
    [SM_M_RX_SYS_S] = {"rx_sys_s", "s", SM_SENSE_LOWER, "receiver system CPU"},
    [SM_M_CPU_S_PER_GB] = {"cpu_s_per_GB", "s/GB", SM_SENSE_LOWER, "CPU"},
    [SM_M_TCP_RETRANS] = {"tcp_retrans", "count", SM_SENSE_LOWER, "retransmits"},
    [SM_M_TCP_RTT_US] = {"tcp_rtt_us", "us", SM_SENSE_LOWER, "TCP RTT"},
    [SM_M_RTT_P50_US] = {"rtt_p50_us", "us", SM_SENSE_LOWER, "p50"},
    [SM_M_RTT_P90_US] = {"rtt_p90_us", "us", SM_SENSE_LOWER, "p90"},
    [SM_M_RTT_P99_US] = {"rtt_p99_us", "us", SM_SENSE_LOWER, "p99"},
    [SM_M_RTT_P999_US] = {"rtt_p999_us", "us", SM_SENSE_LOWER, "p99.9"},
    [SM_M_RTT_MAX_US] = {"rtt_max_us", "us", SM_SENSE_LOWER, "max"},
    [SM_M_RT_PER_S] = {"rt_per_s", "1/s", SM_SENSE_HIGHER, "round trips"},
    [SM_M_CONNECTS_PER_S] = {"connects_per_s", "1/s", SM_SENSE_HIGHER, ""},
    [SM_M_CONNECT_P50_US] = {"connect_p50_us", "us", SM_SENSE_LOWER, "connect p50"},
    [SM_M_USER_S] = {"user_s", "s", SM_SENSE_LOWER, "user CPU"},
    [SM_M_SYS_S] = {"sys_s", "s", SM_SENSE_LOWER, "system CPU"},
    [SM_M_TTFB_MS] = {"ttfb_ms", "ms", SM_SENSE_LOWER, "TTFB"},
    [SM_M_CONNECT_MS] = {"connect_ms", "ms", SM_SENSE_LOWER, "connect"},
    [SM_M_TLS_MS] = {"tls_ms", "ms", SM_SENSE_LOWER, "TLS"},
    [SM_M_TRANSFERS] = {"transfers", "count", SM_SENSE_NONE, "transfers"},
    [SM_M_NEW_CONNECTIONS] = {"new_connections", "count", SM_SENSE_NONE, "new connections"},
    [SM_M_FIRST_MBPS] = {"first_MBps", "MB/s", SM_SENSE_HIGHER, "first round"},
    [SM_M_FIRST_TTFB_MS] = {"first_ttfb_ms", "ms", SM_SENSE_LOWER, "first TTFB"},
    [SM_M_FIRST_USER_S] = {"first_user_s", "s", SM_SENSE_LOWER, "first round user CPU"},
};

static bool valid(sm_metric m)
{
    return (unsigned)m < SM_M__COUNT;
}

/* Out-of-range metrics get a placeholder rather than NULL so callers can print blindly. */
const char *sm_metric_name(sm_metric m)
{
    return valid(m) ? metrics[m].name : "unknown";
}

const char *sm_metric_unit(sm_metric m)
{
    return valid(m) ? metrics[m].unit : "";
}

const char *sm_metric_detail(sm_metric m)
{
    return valid(m) ? metrics[m].detail : "";
}

sm_metric_sense sm_metric_sense_of(sm_metric m)
{
    return valid(m) ? metrics[m].sense : SM_SENSE_NONE;
}

int sm_metric_lookup(const char *name, sm_metric *out)
{
    if (name == NULL)
        return SM_EINVAL;
    for (unsigned i = 0; i < SM_M__COUNT; i++) {
        if (strcmp(name, metrics[i].name) == 0) {
            *out = (sm_metric)i;
            return 0;
        }
    }
    return SM_EINVAL;
}

/* ok starts false: only the job runner, once both sides finished, may declare success. */
void sm_result_init(sm_result *r)
{
    memset(r, 0, sizeof *r);
    r->ok = false;
    r->hist = NULL;
    r->tx_cpu = -1;
    r->rx_cpu = -1;
    sm_host_state_init(&r->host);
}

void sm_host_state_init(sm_host_state *h)
{
    memset(h, 0, sizeof *h);
    h->job_ms = NAN;
    h->load1_before = NAN;
    h->load1_after = NAN;
    h->runnable_before = -1;
    h->runnable_after = -1;
    h->nivcsw_tx = -1;
    h->nivcsw_rx = -1;
    h->runq_us_tx = -1;
    h->runq_us_rx = -1;
    h->oncpu_us_tx = -1;
    h->oncpu_us_rx = -1;
}

static double share_pct(const sm_host_state *h, uint64_t part)
{
    if (!h->known || !h->stat_known || h->ticks_total == 0)
        return NAN;
    return 100.0 * (double)part / (double)h->ticks_total;
}

double sm_host_steal_pct(const sm_host_state *h)
{
    return share_pct(h, h->ticks_steal);
}

double sm_host_iowait_pct(const sm_host_state *h)
{
    return share_pct(h, h->ticks_iowait);
}

void sm_result_fini(sm_result *r)
{
    sm_hist_free(r->hist);
    sm_result_init(r);
}

void sm_result_set(sm_result *r, sm_metric m, double value)
{
    if (!valid(m))
        return;
    r->v[m] = value;
    r->have |= 1ull << m;
}

bool sm_result_has(const sm_result *r, sm_metric m)
{
    return valid(m) && (r->have & (1ull << m)) != 0;
}

double sm_result_get(const sm_result *r, sm_metric m)
{
    return sm_result_has(r, m) ? r->v[m] : NAN;
}

/* ---- pair jobs ---- */

/* A failed merge carries no metrics, as a failed local job carries none. */
static void fail_pair(sm_result *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail_pair(sm_result *out, const char *fmt, ...)
{
    va_list ap;
    sm_hist_free(out->hist);
    sm_result_init(out);
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
}

/* Both sides count the same thing the same way (payload bytes); a side that does not say
 * counts as a disagreement, never as a match. */
static bool same_bytes(const sm_result *a, const sm_result *b)
{
    return sm_result_has(a, SM_M_BYTES) && sm_result_has(b, SM_M_BYTES) &&
           a->v[SM_M_BYTES] == b->v[SM_M_BYTES];
}

static unsigned long long count_of(const sm_result *r, double per)
{
    return sm_result_has(r, SM_M_BYTES) && per > 0 ? (unsigned long long)(r->v[SM_M_BYTES] / per)
                                                   : 0;
}

/* Whether the sides agree; on disagreement out holds the reason (the local runner's words). */
static bool sides_agree(const struct sm_params *p, const sm_result *server, const sm_result *client,
                        sm_result *out)
{
    if (p->workload == SM_WL_STREAM && !same_bytes(server, client)) {
        fail_pair(out, "the sender wrote %.0f bytes, the receiver got %.0f",
                  sm_result_get(client, SM_M_BYTES), sm_result_get(server, SM_M_BYTES));
        return false;
    }
    if (p->workload == SM_WL_RR && !same_bytes(server, client)) {
        double per = (double)p->req_size + (double)p->resp_size;
        fail_pair(out, "the client completed %llu round trips, the server answered %llu",
                  count_of(client, per), count_of(server, per));
        return false;
    }
    return true;
}

static void take(sm_result *out, const sm_result *from, sm_metric m)
{
    if (sm_result_has(from, m))
        sm_result_set(out, m, from->v[m]);
    else
        out->have &= ~(1ull << m);
}

/* Each host judged its own side; the pair is disturbed when either was. The machine-wide
 * inputs come from the side whose reason is shown, so that the reason and its numbers agree. */
static void merge_host(const sm_host_state *server, const sm_host_state *client, bool canon_server,
                       sm_host_state *out)
{
    bool use_server = server->disturbed || (!client->disturbed && canon_server);
    const sm_host_state *base = use_server ? server : client;
    if (!server->known && !client->known) {
        sm_host_state_init(out);
        return;
    }
    *out = base->known ? *base : (use_server ? *client : *server);
    out->nivcsw_tx = client->known ? client->nivcsw_tx : -1;
    out->runq_us_tx = client->known ? client->runq_us_tx : -1;
    out->oncpu_us_tx = client->known ? client->oncpu_us_tx : -1;
    out->oncpu_us_rx = server->known ? server->oncpu_us_rx : -1;
    out->same_cpu = false; /* two hosts */
    out->mhz_tx = client->known ? client->mhz_tx : 0;
    out->nivcsw_rx = server->known ? server->nivcsw_rx : -1;
    out->runq_us_rx = server->known ? server->runq_us_rx : -1;
    out->mhz_rx = server->known ? server->mhz_rx : 0;
    out->disturbed = server->disturbed || client->disturbed;
    out->reason[0] = '\0';
    if (server->disturbed && client->disturbed)
        snprintf(out->reason, sizeof out->reason, "client: %.240s; server: %.240s", client->reason,
                 server->reason);
    else if (out->disturbed)
        snprintf(out->reason, sizeof out->reason, "%s: %.480s",
                 server->disturbed ? "server" : "client",
                 server->disturbed ? server->reason : client->reason);
}

int sm_result_merge_pair(const struct sm_params *p, const sm_result *server,
                         const sm_result *client, sm_result *out)
{
    sm_result_init(out);
    /* The client's reason first when both failed: a client that never got through leaves the
     * server waiting out its time limit, so the client's reason is usually the cause. */
    if (!client->ok && !server->ok) {
        snprintf(out->reason, sizeof out->reason, "client: %.115s; server: %.115s", client->reason,
                 server->reason);
        return 0;
    }
    if (!client->ok || !server->ok) {
        bool srv = !server->ok;
        snprintf(out->reason, sizeof out->reason, "%s: %.240s", srv ? "server" : "client",
                 srv ? server->reason : client->reason);
        return 0;
    }
    if (!sides_agree(p, server, client, out))
        return 0;

    /* The side that timed the job gives every metric; the other adds what only it knows. */
    const sm_result *canon = p->workload == SM_WL_STREAM ? server : client;
    memcpy(out->v, canon->v, sizeof out->v);
    out->have = canon->have;
    take(out, client, SM_M_TX_USER_S);
    take(out, client, SM_M_TX_SYS_S);
    take(out, server, SM_M_RX_USER_S);
    take(out, server, SM_M_RX_SYS_S);
    /* TCP_INFO of the sender: the client in every workload. */
    take(out, client, SM_M_TCP_RETRANS);
    take(out, client, SM_M_TCP_RTT_US);
    /* http's cpu_s_per_GB is the client model's alone, which the client has already. */
    if (p->workload != SM_WL_HTTP)
        out->have &= ~(1ull << SM_M_CPU_S_PER_GB);
    if (p->workload == SM_WL_STREAM) {
        static const sm_metric cpu[] = {SM_M_TX_USER_S, SM_M_TX_SYS_S, SM_M_RX_USER_S,
                                        SM_M_RX_SYS_S};
        double total = 0, bytes = sm_result_get(out, SM_M_BYTES);
        bool all = bytes > 0;
        for (size_t i = 0; i < sizeof cpu / sizeof cpu[0]; i++) {
            all = all && sm_result_has(out, cpu[i]);
            total += all ? out->v[cpu[i]] : 0;
        }
        if (all)
            sm_result_set(out, SM_M_CPU_S_PER_GB, total / (bytes / 1e9));
    }
    out->sndbuf_eff = client->sndbuf_eff;
    out->rcvbuf_eff = server->rcvbuf_eff;
    out->tx_cpu = client->tx_cpu;
    out->rx_cpu = server->rx_cpu;
    merge_host(&server->host, &client->host, canon == server, &out->host);
    if (canon->hist) {
        /* Sparse: the coordinator keeps merged results as it keeps decoded ones. */
        out->hist = sm_hist_new_sparse(sm_hist_nonempty(canon->hist));
        if (!out->hist || sm_hist_merge(out->hist, canon->hist) != 0) {
            sm_result_fini(out);
            return SM_ENOMEM;
        }
    }
    out->ok = true;
    return 0;
}
