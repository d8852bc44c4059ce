/* sm-swarm: a swarm of simulated agents against one coordinator, and what they cost it.
 *
 *   sm-swarm --coordinator tcp://127.0.0.1:PORT --http http://127.0.0.1:PORT --key-file K
 *            --agents N --coord-pid PID [--jobs-per-agent J] [--idle-s S] [--latency-jobs L]
 *            [--hold-ms H]
 *
 * Every simulated agent is what the real daemon is on the wire: its own REQ socket, signed
 * polls, facts on the first poll, results resent until acked, commands acked in the next poll.
 * It runs no workload: an assign is answered at once with a fake ok result, so the coordinator
 * is the only thing measured. Phases (progress on stderr): register, idle CPU, throughput,
 * dispatch latency, peak RSS. The summary is one JSON object on stdout, units in the keys.
 *
 * libnanomsg 1.1.5 allows 512 sockets per process (NN_MAX_SOCKETS, fixed when it is built),
 * so the agents are spread over shard processes of at most SHARD_MAX sockets each. Each shard
 * drives its sockets from one thread with nn_poll; the parent process only talks HTTP. They
 * share counters and the arrival time of every job through one MAP_SHARED mapping.
 *
 * This header holds what the tool's files share; each file is one part of it. */
#ifndef SM_BENCH_SWARM_H
#define SM_BENCH_SWARM_H

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/session/session.h"
#include "proto/buf.h"
#include "proto/clock.h"
#include "proto/envelope.h"
#include "proto/msg.h"
#include "proto/result.h"
#include "proto/signals.h"

#define SHARD_MAX       500 /* sockets per process, under libnanomsg's 512 */
#define PENDING_MAX     64  /* results an agent holds until acked */
#define PHASE_TIMEOUT_S 300
#define POST_BATCH      1000
#define RESEND_SLACK_MS 5000 /* a poll unanswered for hold + this is sent again */
#define SCAN_MS         50   /* how often a shard looks for polls to (re)send */
#define NS_PER_MS       1000000LL
#define NS_PER_S        1000000000LL

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the shared counters must be lock-free");

typedef struct opts {
    const char *bus_url;
    const char *http_url;
    const char *key_file;
    long agents;
    long jobs_per_agent;
    long idle_s;
    long latency_jobs;
    long hold_ms;
    pid_t coord_pid;
    /* rr jobs whose results carry a realistic latency histogram (about 461 non-empty buckets,
     * some 5 KB of JSON, as bench/hist_decode.c draws them) instead of stream jobs of one
     * 1-byte message: the store then holds results of the size real rr runs store. */
    bool rr;
} opts;

/* ---- what the shards and the parent share ---- */

/* The first arrival of one job at its agent; job 0 marks a free slot. */
typedef struct slot {
    _Atomic uint64_t job;
    _Atomic int64_t recv_ns; /* CLOCK_MONOTONIC; 0 until written */
} slot;

typedef struct shared {
    atomic_int stop;
    _Atomic uint64_t registered; /* agents that had at least one valid reply */
    _Atomic uint64_t replies;
    _Atomic uint64_t bad_replies;  /* failed sm_env_open, not from "coordinator", undecodable,
                                    * or not for this agent's last poll */
    _Atomic uint64_t assigns;      /* first arrivals of an assign */
    _Atomic uint64_t resends;      /* polls sent again after hold + RESEND_SLACK_MS */
    _Atomic uint64_t send_again;   /* nn_send said EAGAIN; tried again SCAN_MS later */
    _Atomic uint64_t acked;        /* results the coordinator acked */
    _Atomic int64_t pending;       /* results made and not yet acked */
    _Atomic uint64_t table_full;   /* arrivals the job table had no room for */
    _Atomic uint64_t hold_told_ms; /* the longest hold a reply said (0: none said one) */
    size_t cap;                    /* slots, a power of two */
    slot slots[];
} shared;

typedef struct ctx {
    const opts *o;
    shared *sh;
    CURL *curl;
    struct curl_slist *headers;
    sm_buf resp;
    pid_t *shards;
    size_t n_shards;
    volatile sig_atomic_t *stop;
} ctx;

typedef struct health {
    uint64_t agents_online, results, polls, dispatched, duplicate, orphan, rejected;
    uint64_t hold_ms; /* the coordinator's hold now, which grows with the fleet */
} health;

typedef struct summary {
    double register_s;
    double idle_s, idle_cpu, idle_polls_per_s, idle_rss;
    uint64_t tp_jobs;
    double tp_s, submit_per_s, results_per_s, dispatch_per_s, tp_coord_cpu, tp_swarm_cpu;
    size_t lat_n, lat_missing;
    double p50, p90, p99, max;
    double peak_rss, rss;
    health end;
} summary;

/* ---- shared.c ---- */

/* Sleeps ms milliseconds, a signal notwithstanding. */
void sleep_ms(long ms);
/* One line of progress or trouble on stderr, "sm-swarm: " first. */
__attribute__((format(printf, 1, 2))) void say(const char *fmt, ...);
/* Records the arrival of job; true the first time, false for a resent assign. */
bool job_arrived(shared *sh, uint64_t job, int64_t now_ns);
/* When job arrived, or 0 when it has not (yet). */
int64_t job_arrival(shared *sh, uint64_t job);

/* ---- shard.c ---- */

/* Runs agents [first, first + n) until sh->stop; returns the process's exit status. */
int shard_main(int index, const opts *o, const uint8_t *key, shared *sh, size_t first, size_t n,
               pid_t parent);

/* ---- http.c ---- */

/* libcurl's write callback into the sm_buf arg. */
size_t on_body(char *data, size_t size, size_t nmemb, void *arg);
/* GET (body NULL) or POST path; the response body is left in c->resp. */
int http(ctx *c, const char *path, const sm_buf *body, long want_status);
/* The coordinator's counters from GET /healthz. */
int get_health(ctx *c, health *h);
/* The ids of {"jobs":["12","13"]}, which must be exactly n. */
int job_ids(const char *json, uint64_t *ids, size_t n);
/* Appends one job for host swarm-INDEX to a POST /api/jobs body: an rr job when rr, else a
 * stream job of one 1-byte message. */
int add_job(sm_buf *b, size_t index, bool first, bool rr);

/* ---- proc.c ---- */

/* user + system CPU ticks of a process. */
int cpu_ticks(pid_t pid, uint64_t *ticks);
/* CPU ticks of the parent and every shard together. */
int swarm_ticks(ctx *c, uint64_t *ticks);
/* ticks over ns as a percentage of one core. */
double pct_of_core(uint64_t ticks, int64_t ns);
/* A line of /proc/PID/status in kB (VmHWM, VmRSS) as MB (10^6 bytes). */
int status_mb(pid_t pid, const char *field, double *mb);
/* Fails when a shard died or we were asked to stop. */
int still_running(ctx *c);

/* ---- phases.c ---- */

/* The summary: one JSON object, units in the keys, counters as integers. */
void print_summary(const ctx *c, const summary *s);
/* The phases in order, filling s; stops at the first failure. */
int run_phases(ctx *c, int64_t t0, summary *s);
/* Stops the shards and reaps them; a shard that does not leave in 10 s is killed. */
int stop_shards(ctx *c);

#endif
