/* Workloads behind one table of operations, the job context both sides share, and the I/O
 * helpers that bound every blocking call by the job's deadline and cancel flag. */
#ifndef SM_AGENT_WORKLOADS_WORKLOAD_H
#define SM_AGENT_WORKLOADS_WORKLOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/measure/clock.h"
#include "agent/net/transport.h"
#include "agent/workloads/pattern.h"
#include "proto/err.h"
#include "proto/hist.h"
#include "proto/params.h"
#include "proto/result.h"

/* How often a blocked read/write/accept wakes to look at the deadline and the cancel flag. */
#define SM_IO_TICK_MS 100
/* A side that never blocks looks every this many successful calls: a clock read is ~20 ns
 * against the ~1 us of the system call, and a job must end at its limit even at full speed. */
#define SM_IO_CHECK_EVERY 64

/* Faults a test can inject into the sender of a stream job (or the built-in http source, or
 * the http client's pin), to prove the other side notices. */
typedef enum sm_fault {
    SM_FAULT_NONE = 0,
    SM_FAULT_CORRUPT,   /* flip one byte in the middle of the stream */
    SM_FAULT_SHORT,     /* stop after half the bytes and close */
    SM_FAULT_STALL,     /* stop after half the bytes and keep the connection open */
    SM_FAULT_WRONG_PIN, /* http with tls: the client pins a key the source does not have */
} sm_fault;

/* The built-in source's TLS identity (tls.h); NULL in a job without TLS. */
struct sm_tls_id;

/* What both sides of one job share. Read-only during the job but for the atomics. */
typedef struct sm_job {
    const sm_params *p;
    const sm_transport_ops *tr;
    sm_endpoint ep;          /* where the server listens */
    sm_sockopts client_opts; /* applied by connect */
    sm_sockopts server_opts; /* applied by accept */
    const sm_pattern *pat;   /* payload and its verification */
    uint64_t deadline_ns;    /* CLOCK_MONOTONIC; past it every side fails with SM_ETIMEDOUT */
    sm_fault fault;
    atomic_int cancel;      /* set by a failing side: the other side stops at its next tick */
    atomic_int client_done; /* set when the client side returned (ends open-ended servers) */
    atomic_int *abort;      /* external stop (runner opts), NULL when none */
    /* One side of a pair job: the peer runs on another host, so no client_done ever comes
     * and the workload must know by itself when its side is over. */
    bool alone;
    /* http with tls: the server's certificate and key (server side), and the pin of the
     * server's key the client accepts and nothing else (client side). */
    const struct sm_tls_id *tls;
    char pin[SM_PIN_MAX + 1];
} sm_job;

/* What the http client measured, for its finish. Rounds after the first are "rest"; with one
 * round only, that round is both first and rest. */
typedef struct sm_http_tally {
    uint32_t rounds;
    uint64_t transfers;   /* rest */
    uint64_t bytes;       /* body bytes received (and verified) in the rest rounds */
    uint64_t new_conns;   /* CURLINFO_NUM_CONNECTS summed over the rest rounds */
    uint64_t ns;          /* wall time of the rest rounds, summed round by round */
    sm_cpu cpu;           /* the client model's threads over the rest rounds */
    double ttfb_ms;       /* median over the rest transfers */
    double connect_ms;    /* median over all transfers that opened a connection; NAN if none */
    double tls_ms;        /* same, TLS handshake; NAN without TLS */
    uint64_t first_bytes; /* the first round */
    uint64_t first_ns;
    sm_cpu first_cpu;
    double first_ttfb_ms;
} sm_http_tally;

/* One side's outcome, filled by the workload (counters, times) and the runner (cpu, rc). */
typedef struct sm_side {
    sm_job *job;
    int rc;
    sm_error err;
    sm_cpu cpu;
    uint64_t bytes; /* payload bytes sent (client) or received and verified (server) */
    uint64_t msgs;  /* writes, lines, round trips or connections completed */
    uint64_t t0_ns; /* start of the timed interval (the side that times the job) */
    uint64_t t1_ns; /* end of the timed interval */
    sm_hist *hist;  /* latency in ns (rr, connect); owned by the runner */
    int have_tcp_info;
    sm_net_tcp_stats tcp; /* when have_tcp_info */
    uint32_t sndbuf_eff, rcvbuf_eff;
    int cpu_id;        /* the CPU this side's thread ran on when it finished, -1 if unknown */
    uint32_t io_calls; /* successful I/O calls, to look at the clock every SM_IO_CHECK_EVERY */
    /* sm_io_accept with stop_on_done also ends (*fd = -1, 0) once the clock passes this; 0 for
     * never. Set by a workload whose server side runs alone. */
    uint64_t accept_until_ns;
    /* CPU of threads the side started besides its own (the source's connection threads);
     * the runner adds it to cpu. */
    sm_cpu extra_cpu;
    sm_http_tally http; /* the http client's figures */
} sm_side;

typedef struct sm_workload_ops {
    sm_workload_kind kind;
    const char *name;
    /* Accepts on lfd and serves; returns 0 or an SM_E code with s->err set. */
    int (*server)(sm_side *s, int lfd);
    /* Connects to s->job->ep and drives the job. */
    int (*client)(sm_side *s);
    /* Turns both sides' counters into metrics once both succeeded. May fail the result
     * (ok = false) when the sides disagree, e.g. on the byte count. */
    void (*finish)(const sm_job *job, const sm_side *server, const sm_side *client, sm_result *r);
    /* One side of a pair job, once it succeeded: the metrics that side knows by itself (see
     * sm_result_merge_pair for how the two are joined). The runner adds the socket buffers,
     * the CPU ids and the histogram. NULL: the workload cannot run as a pair job. */
    void (*finish_side)(const sm_job *job, const sm_side *s, int is_server, sm_result *r);
} sm_workload_ops;

/* The table of a workload; NULL for a kind without one. */
const sm_workload_ops *sm_workload_get(sm_workload_kind kind);

extern const sm_workload_ops sm_workload_stream;
extern const sm_workload_ops sm_workload_rr;
extern const sm_workload_ops sm_workload_connect;
extern const sm_workload_ops sm_workload_http;

/* --- I/O helpers for workloads. Each returns 0 or an SM_E code with s->err set, and marks
 * the job cancelled when it fails for a reason of its own (not when it saw the cancel). --- */

/* Writes all len bytes (MSG_NOSIGNAL). */
int sm_io_write_all(sm_side *s, int fd, const void *buf, size_t len);
/* Reads up to len bytes; *got = 0 means the peer closed. */
int sm_io_read_some(sm_side *s, int fd, void *buf, size_t len, size_t *got);
/* Reads exactly len bytes; a close before that is SM_ECLOSED naming `what`. */
int sm_io_read_exact(sm_side *s, int fd, void *buf, size_t len, const char *what);
/* Expects end of stream: one more byte is SM_EPROTO naming `what`. */
int sm_io_expect_eof(sm_side *s, int fd, const char *what);
/* Accepts one connection, ticking until the deadline, a cancel, or (when stop_on_done) the
 * client finishing or s->accept_until_ns passing; *fd = -1 with return 0 in those last cases. */
int sm_io_accept(sm_side *s, int lfd, int stop_on_done, int *fd);
/* Connects to the job's endpoint within what is left of the deadline. */
int sm_io_connect(sm_side *s, int *fd);
/* Sets the io tick on a connected socket and records its buffer sizes in s. */
int sm_io_prepare(sm_side *s, int fd);
/* Records TCP_INFO of fd in s when the transport has it. */
void sm_io_record_info(sm_side *s, int fd);
/* Metrics every workload reports the same way: CPU per side (tx = client, rx = server) and,
 * when the client's transport had it, TCP_INFO. */
void sm_io_put_cpu(const sm_side *client, const sm_side *server, sm_result *r);
/* One side's CPU alone: rx_* for the server, tx_* for the client. */
void sm_io_put_cpu_side(const sm_side *s, int is_server, sm_result *r);
void sm_io_put_tcp_info(const sm_side *client, sm_result *r);

/* After a side's workload returned 0: a measured part that ended past the deadline (t1_ns
 * beyond deadline_ns) fails all the same, SM_ETIMEDOUT with s->err set. The I/O helpers see
 * the clock only on a blocked call's tick or every SM_IO_CHECK_EVERY calls, so a job of few,
 * slow calls can finish past its limit without either; this is the check at its end. A side
 * that does not time the job (t1_ns 0) is left to the side that does. */
int sm_io_check_end(sm_side *s);

/* Marks the job failed with code and reason (sets cancel); returns code. */
int sm_io_fail(sm_side *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
