/* How the host was while a job ran: machine-wide counters (/proc/stat, /proc/loadavg) and the
 * measuring threads' own (involuntary switches, run-queue wait) read before and after the job,
 * how the network treated it (wall time, TCP's RTO recovery), and the rules that call a sample
 * disturbed (docs/analysis.md, "Disturbed samples"). */
#ifndef SM_AGENT_MEASURE_DISTURB_H
#define SM_AGENT_MEASURE_DISTURB_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/result.h"

/* The machine at one instant. Read by the runner's thread outside the timed region. */
typedef struct sm_disturb_snap {
    uint64_t ns;  /* CLOCK_MONOTONIC when read */
    bool stat_ok; /* the aggregate "cpu" line of /proc/stat had its steal and iowait fields */
    uint64_t total, steal, iowait; /* ticks since boot; total sums every field of the line */
    bool load_ok;
    double load1;
    int32_t running; /* procs_running of /proc/loadavg, the reader included */
} sm_disturb_snap;

/* One measuring thread at one instant; read on that thread. */
typedef struct sm_disturb_thread {
    int64_t nivcsw;   /* getrusage(RUSAGE_THREAD) ru_nivcsw; -1 unknown */
    int64_t oncpu_ns; /* first field of /proc/thread-self/schedstat; -1 unknown */
    int64_t runq_ns;  /* its second field: runnable, waiting for a CPU; -1 unknown */
    int cpu;          /* sched_getcpu() when read, -1 unknown */
} sm_disturb_thread;

/* The cuts of the rule. */
typedef struct sm_disturb_rule {
    double steal_pct;         /* steal above this share of the ticks that passed, */
    uint64_t steal_min_ticks; /* and at least this many ticks (one tick is 10 ms of sampling) */
    double nivcsw_per_ms;     /* a measuring thread preempted more often than this per ms, */
    int64_t nivcsw_min;       /* and at least this many times */
    /* a measuring thread waited for a CPU above this share of the job (beyond the time the
     * other measuring thread ran when both shared one CPU) */
    double runq_pct;
    int64_t runq_min_us; /* and at least this long: a wake-up's 0.1 ms on a 1 ms job is not */
} sm_disturb_rule;

/* The rule as calibrated on the lab machine (docs/analysis.md). */
extern const sm_disturb_rule sm_disturb_default_rule;

/* Reads /proc/stat and /proc/loadavg (paths under proc_root, "/proc" normally; tests pass a
 * folder of their own); a file or field that cannot be read leaves its part unknown. */
void sm_disturb_snap_read(sm_disturb_snap *s, const char *proc_root);
/* Reads the calling thread's counters. */
void sm_disturb_thread_read(sm_disturb_thread *t);
/* scaling_cur_freq of cpu in MHz, 0 when unknown (no cpufreq on this machine, cpu < 0). */
uint32_t sm_disturb_cpu_mhz(int cpu, const char *sys_root);

/* Fills h's inputs from the before/after pairs: the machine's (both required), the tx and rx
 * threads' (either may be NULL: that side did not run here). ncpu 0 is unknown. Pure. */
void sm_disturb_fill(sm_host_state *h, const sm_disturb_snap *before, const sm_disturb_snap *after,
                     const sm_disturb_thread *tx_before, const sm_disturb_thread *tx_after,
                     const sm_disturb_thread *rx_before, const sm_disturb_thread *rx_after,
                     uint32_t ncpu);
/* Applies rule to h's inputs: sets h->disturbed and h->reason (the first clause that fired,
 * with its numbers; "" when clean). An unknown input never fires its clause. Pure. */
void sm_disturb_judge(sm_host_state *h, const sm_disturb_rule *rule);

/* What the network did to one job, as its sender saw it. */
typedef struct sm_disturb_net {
    double wall_ms;       /* the sender's time on the job (CLOCK_MONOTONIC), ms; NaN unknown */
    uint32_t duration_ms; /* the time it was asked to run; 0: it was bound by a count */
    int64_t rto;          /* RTO timeouts of its connection (tcpi_total_rto); -1 unknown */
    int64_t rto_time_ms;  /* time its connection spent in RTO recovery, ms; -1 unknown */
} sm_disturb_net;

/* The cuts of the network rule. */
typedef struct sm_disturb_net_rule {
    /* A duration-bound job whose wall time is above wall_factor x its duration plus
     * wall_slack_ms, */
    double wall_factor;
    uint32_t wall_slack_ms;
    /* or whose connection spent at least rto_min_ms in RTO recovery and at least rto_pct of
     * the sender's wall time (the minimum alone when the wall time is unknown). */
    int64_t rto_min_ms;
    double rto_pct;
} sm_disturb_net_rule;

/* The rule as docs/analysis.md gives it. */
extern const sm_disturb_net_rule sm_disturb_net_default_rule;

/* Applies rule to in. When a clause fires, h is disturbed and its reason gains "network: "
 * and the numbers of every clause that fired, after the host's own reason ("; ") when it
 * had one; returns whether one fired. An unknown input never fires its clause. Pure. */
bool sm_disturb_net_judge(sm_host_state *h, const sm_disturb_net *in,
                          const sm_disturb_net_rule *rule);

#endif
