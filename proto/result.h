/* Job results: a fixed set of named metrics (units in their names) plus an optional histogram. */
#ifndef SM_PROTO_RESULT_H
#define SM_PROTO_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/err.h"
#include "proto/hist.h"

/* The metrics a job can report. MB = 10^6 bytes. Names are the JSON keys and CSV headers. */
typedef enum sm_metric {
    SM_M_BYTES = 0,      /* bytes: payload bytes received and verified */
    SM_M_SECONDS,        /* seconds: wall time at the receiver, CLOCK_MONOTONIC */
    SM_M_THROUGHPUT,     /* throughput_MBps */
    SM_M_MSGS_PER_S,     /* msgs_per_s */
    SM_M_TX_USER_S,      /* tx_user_s: sender (client) thread, getrusage RUSAGE_THREAD */
    SM_M_TX_SYS_S,       /* tx_sys_s */
    SM_M_RX_USER_S,      /* rx_user_s: receiver (server) thread */
    SM_M_RX_SYS_S,       /* rx_sys_s */
    SM_M_CPU_S_PER_GB,   /* cpu_s_per_GB: both sides' user+sys per 10^9 payload bytes */
    SM_M_TCP_RETRANS,    /* tcp_retrans: TCP_INFO total retransmits of the sender */
    SM_M_TCP_RTT_US,     /* tcp_rtt_us: TCP_INFO smoothed RTT of the sender */
    SM_M_RTT_P50_US,     /* rtt_p50_us */
    SM_M_RTT_P90_US,     /* rtt_p90_us */
    SM_M_RTT_P99_US,     /* rtt_p99_us */
    SM_M_RTT_P999_US,    /* rtt_p999_us */
    SM_M_RTT_MAX_US,     /* rtt_max_us */
    SM_M_RT_PER_S,       /* rt_per_s */
    SM_M_CONNECTS_PER_S, /* connects_per_s */
    SM_M_CONNECT_P50_US, /* connect_p50_us: socket() to the echo of the first byte */
    /* http: the rounds after the first, unless the job has one round only. */
    SM_M_USER_S,          /* user_s: the client model's threads, getrusage RUSAGE_THREAD */
    SM_M_SYS_S,           /* sys_s */
    SM_M_TTFB_MS,         /* ttfb_ms: median request to first body byte (STARTTRANSFER) */
    SM_M_CONNECT_MS,      /* connect_ms: median TCP connect of the transfers that opened one */
    SM_M_TLS_MS,          /* tls_ms: median TLS handshake of the transfers that opened one */
    SM_M_TRANSFERS,       /* transfers */
    SM_M_NEW_CONNECTIONS, /* new_connections: CURLINFO_NUM_CONNECTS summed */
    SM_M_FIRST_MBPS,      /* first_MBps: the first round alone, which pays the set-up */
    SM_M_FIRST_TTFB_MS,   /* first_ttfb_ms */
    SM_M_FIRST_USER_S,    /* first_user_s */
    SM_M__COUNT
} sm_metric;

/* Whether a larger value is better (throughput) or worse (seconds, latency, CPU). */
typedef enum sm_metric_sense { SM_SENSE_NONE = 0, SM_SENSE_HIGHER, SM_SENSE_LOWER } sm_metric_sense;

const char *sm_metric_name(sm_metric m);
const char *sm_metric_unit(sm_metric m); /* "B", "s", "MB/s", "1/s", "us", "s/GB", "count" */
/* What the unit does not say of a metric, for people: "p50" (rtt_p50_us), "sender user CPU"
 * (tx_user_s); "" where the unit and the test's name say it all (seconds, throughput_MBps,
 * connects_per_s). Texts name a metric "<unit>, <detail>" ("us, p50"), or by its unit. */
const char *sm_metric_detail(sm_metric m);
sm_metric_sense sm_metric_sense_of(sm_metric m);
/* Name -> metric; returns 0 or SM_EINVAL. */
int sm_metric_lookup(const char *name, sm_metric *out);

/* How the host was while one job ran, as the agent saw it (docs/analysis.md, "Disturbed
 * samples"). Every input may be unknown (a /proc file this kernel lacks, an older agent): a
 * flag says so, or a negative value, or NaN, as each field states, and an unknown input never
 * makes a sample disturbed. */
#define SM_HOST_REASON_MAX 512
typedef struct sm_host_state {
    bool known;    /* recorded at all; false in a result of an agent that did not */
    double job_ms; /* wall time the before/after pairs span (the job's threads), ms */
    /* /proc/stat, the aggregate "cpu" line: ticks (USER_HZ) that passed during the job over
     * all CPUs, and the steal and iowait among them. */
    bool stat_known;
    uint64_t ticks_total, ticks_steal, ticks_iowait;
    /* /proc/loadavg before and after: the 1-minute load (NaN unknown) and the runnable tasks
     * other than the reading thread itself (procs_running - 1; -1 unknown). */
    double load1_before, load1_after;
    int32_t runnable_before, runnable_after;
    uint32_t ncpu; /* online CPUs; 0 unknown */
    /* The measuring threads (tx = client, rx = server): involuntary context switches
     * (getrusage RUSAGE_THREAD ru_nivcsw) and time spent runnable but waiting for a CPU
     * (/proc/thread-self/schedstat), over the job; -1 unknown (or not on this host: the other
     * side of a pair job). */
    int64_t nivcsw_tx, nivcsw_rx;
    int64_t runq_us_tx, runq_us_rx;
    int64_t oncpu_us_tx, oncpu_us_rx; /* time on a CPU (schedstat), -1 unknown */
    /* Both measuring threads ended on one CPU: each then waits while the other runs, and
     * wakes it with a preemption, which is the job itself and not a disturbance. */
    bool same_cpu;
    /* scaling_cur_freq of the CPU each measuring thread ended on, MHz; 0 unknown. */
    uint32_t mhz_tx, mhz_rx;
    bool disturbed;
    char reason[SM_HOST_REASON_MAX]; /* which clause fired, with its numbers; "" when clean */
} sm_host_state;

/* Sets every input of *h unknown and h->known false. */
void sm_host_state_init(sm_host_state *h);
/* The steal and iowait shares of the ticks that passed, in percent; NaN when unknown. */
double sm_host_steal_pct(const sm_host_state *h);
double sm_host_iowait_pct(const sm_host_state *h);

/* One job's outcome. `have` has bit (1 << m) set for every metric present. The histogram
 * (round-trip or connect latency in nanoseconds) is owned by the result. */
typedef struct sm_result {
    bool ok; /* false: the job failed, reason says why */
    char reason[SM_ERR_MSG_MAX];
    double v[SM_M__COUNT];
    uint64_t have;
    sm_hist *hist; /* NULL for stream */
    /* Socket facts of the job, as the kernel granted them (0 if unknown). */
    uint32_t sndbuf_eff;
    uint32_t rcvbuf_eff;
    /* The CPU the sending (tx) and receiving (rx) threads ran on at the end of the job, -1 if
     * unknown: whether both ends shared a CPU can change a loopback result several-fold. */
    int32_t tx_cpu;
    int32_t rx_cpu;
    /* How the host was while the job ran, and whether that makes the sample disturbed. */
    sm_host_state host;
} sm_result;

/* Zeroes *r: not ok, no metrics, no histogram, CPUs unknown (-1). */
void sm_result_init(sm_result *r);
/* Frees the histogram; leaves *r re-initialised. */
void sm_result_fini(sm_result *r);
void sm_result_set(sm_result *r, sm_metric m, double value);
bool sm_result_has(const sm_result *r, sm_metric m);
/* The value, or NaN when absent. */
double sm_result_get(const sm_result *r, sm_metric m);

/* The one result of a pair job from its two sides. The side that times the job is canonical
 * (DESIGN section 6: the receiver for stream, as the 2010 test timed it; the client for rr and
 * connect, which holds the latency histogram); the other side adds its CPU (tx_* from the
 * client, rx_* from the server), cpu_s_per_GB is recomputed over both, and TCP_INFO comes from
 * the sender. Fails the result (ok false, a reason) when a side failed (its reason, prefixed
 * "server: " or "client: ") or the sides disagree (stream: bytes sent != bytes received).
 * The host state joins both sides': tx_* from the client, rx_* from the server, the rest
 * from the side that is disturbed (else the canonical side); disturbed when either side is,
 * its reason prefixed "client: " or "server: ".
 * *out is initialised here; the canonical side's histogram is copied into a sparse one
 * (proto/hist.h). 0 or SM_ENOMEM. */
struct sm_params;
int sm_result_merge_pair(const struct sm_params *p, const sm_result *server,
                         const sm_result *client, sm_result *out);

#endif
