/* Disturbance counters around a job and the rule that judges them. */
#include "agent/measure/disturb.h"

#include <inttypes.h>
#include <sched.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "agent/measure/clock.h"

/* Calibrated on the 2-core lab VM (docs/analysis.md): quiet jobs stay well below every cut, a
 * CPU hog pinned on a measuring CPU is far above the preemption and run-queue cuts. */
const sm_disturb_rule sm_disturb_default_rule = {
    .steal_pct = 5.0,
    .steal_min_ticks = 2,
    .nivcsw_per_ms = 1.0,
    .nivcsw_min = 5,
    .runq_pct = 10.0,
    .runq_min_us = 1000,
};

/* The aggregate line is the first of /proc/stat: "cpu  user nice system idle iowait irq
 * softirq steal guest guest_nice". guest and guest_nice are already inside user and nice, so
 * the total is the first eight; a kernel without steal (before 2.6.11) leaves it unknown. */
static void read_stat(sm_disturb_snap *s, const char *proc_root)
{
    char path[256], line[512];
    snprintf(path, sizeof path, "%s/stat", proc_root);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(line, sizeof line, f) && strncmp(line, "cpu ", 4) == 0) {
        unsigned long long v[8];
        int n = sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                       &v[3], &v[4], &v[5], &v[6], &v[7]);
        if (n == 8) {
            s->total = 0;
            for (int i = 0; i < 8; i++)
                s->total += v[i];
            s->iowait = v[4];
            s->steal = v[7];
            s->stat_ok = true;
        }
    }
    fclose(f);
}

/* "0.52 0.58 0.59 3/812 12345": the 1-minute load and procs_running/procs_total. */
static void read_loadavg(sm_disturb_snap *s, const char *proc_root)
{
    char path[256];
    snprintf(path, sizeof path, "%s/loadavg", proc_root);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    double l1, l5, l15;
    int running, total;
    if (fscanf(f, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running, &total) == 5 && running >= 0 &&
        isfinite(l1) && l1 >= 0) {
        s->load1 = l1;
        s->running = running;
        s->load_ok = true;
    }
    fclose(f);
}

void sm_disturb_snap_read(sm_disturb_snap *s, const char *proc_root)
{
    memset(s, 0, sizeof *s);
    s->load1 = NAN;
    s->running = -1;
    if (!proc_root)
        proc_root = "/proc";
    read_stat(s, proc_root);
    read_loadavg(s, proc_root);
    s->ns = sm_now_ns();
}

void sm_disturb_thread_read(sm_disturb_thread *t)
{
    struct rusage ru;
    t->nivcsw = getrusage(RUSAGE_THREAD, &ru) == 0 ? (int64_t)ru.ru_nivcsw : -1;
    /* "on-cpu ns, run-queue wait ns, timeslices": absent without CONFIG_SCHED_INFO. */
    t->oncpu_ns = -1;
    t->runq_ns = -1;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (f) {
        unsigned long long run, wait;
        if (fscanf(f, "%llu %llu", &run, &wait) == 2) {
            t->oncpu_ns = (int64_t)run;
            t->runq_ns = (int64_t)wait;
        }
        fclose(f);
    }
    t->cpu = sched_getcpu();
}

uint32_t sm_disturb_cpu_mhz(int cpu, const char *sys_root)
{
    if (cpu < 0)
        return 0;
    char path[256];
    snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq",
             sys_root ? sys_root : "/sys", cpu);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long khz = 0;
    if (fscanf(f, "%lu", &khz) != 1)
        khz = 0;
    fclose(f);
    return (uint32_t)((khz + 500) / 1000);
}

/* after - before of a counter known at both ends and not gone backwards; -1 otherwise. */
static int64_t delta(int64_t before, int64_t after)
{
    return before >= 0 && after >= before ? after - before : -1;
}

static int64_t us(int64_t ns)
{
    return ns >= 0 ? ns / 1000 : -1;
}

static int32_t others(int32_t running)
{
    /* The reader is running while it reads: the others are the rest. */
    return running >= 1 ? running - 1 : -1;
}

void sm_disturb_fill(sm_host_state *h, const sm_disturb_snap *before, const sm_disturb_snap *after,
                     const sm_disturb_thread *tx_before, const sm_disturb_thread *tx_after,
                     const sm_disturb_thread *rx_before, const sm_disturb_thread *rx_after,
                     uint32_t ncpu)
{
    sm_host_state_init(h);
    h->known = true;
    h->job_ms = after->ns >= before->ns ? (double)(after->ns - before->ns) / 1e6 : NAN;
    if (before->stat_ok && after->stat_ok && after->total >= before->total &&
        after->steal >= before->steal && after->iowait >= before->iowait) {
        h->stat_known = true;
        h->ticks_total = after->total - before->total;
        h->ticks_steal = after->steal - before->steal;
        h->ticks_iowait = after->iowait - before->iowait;
    }
    if (before->load_ok) {
        h->load1_before = before->load1;
        h->runnable_before = others(before->running);
    }
    if (after->load_ok) {
        h->load1_after = after->load1;
        h->runnable_after = others(after->running);
    }
    h->ncpu = ncpu;
    if (tx_before && tx_after) {
        h->nivcsw_tx = delta(tx_before->nivcsw, tx_after->nivcsw);
        h->runq_us_tx = us(delta(tx_before->runq_ns, tx_after->runq_ns));
        h->oncpu_us_tx = us(delta(tx_before->oncpu_ns, tx_after->oncpu_ns));
    }
    if (rx_before && rx_after) {
        h->nivcsw_rx = delta(rx_before->nivcsw, rx_after->nivcsw);
        h->runq_us_rx = us(delta(rx_before->runq_ns, rx_after->runq_ns));
        h->oncpu_us_rx = us(delta(rx_before->oncpu_ns, rx_after->oncpu_ns));
    }
    h->same_cpu = tx_after && rx_after && tx_after->cpu >= 0 && tx_after->cpu == rx_after->cpu;
}

static bool preempted(sm_host_state *h, const sm_disturb_rule *rule, const char *side,
                      int64_t nivcsw)
{
    /* Sharing a CPU, each end preempts the other at every wake-up (40 times/ms on the 2010
     * test): that count says nothing about anyone else. */
    if (nivcsw < 0 || !(h->job_ms > 0) || h->same_cpu)
        return false;
    double rate = (double)nivcsw / h->job_ms;
    if (rate <= rule->nivcsw_per_ms || nivcsw < rule->nivcsw_min)
        return false;
    snprintf(h->reason, sizeof h->reason,
             "%s thread preempted %.2f times/ms > %.2f (%" PRId64 " in %.1f ms)", side, rate,
             rule->nivcsw_per_ms, nivcsw, h->job_ms);
    return true;
}

/* wait_us beyond sibling_us (the other measuring thread's time on the shared CPU, 0 when
 * they did not share one) is time that something else held the CPU. */
static bool waited(sm_host_state *h, const sm_disturb_rule *rule, const char *side, int64_t wait_us,
                   int64_t sibling_us)
{
    if (wait_us < 0 || !(h->job_ms > 0))
        return false;
    if (h->same_cpu) {
        if (sibling_us < 0)
            return false;
        wait_us = wait_us > sibling_us ? wait_us - sibling_us : 0;
    }
    double pct = 100.0 * ((double)wait_us / 1e3) / h->job_ms;
    if (pct <= rule->runq_pct || wait_us < rule->runq_min_us)
        return false;
    snprintf(h->reason, sizeof h->reason,
             "%s thread waited for a CPU %.0f%% of the job > %.0f%% (%.1f of %.1f ms%s)", side, pct,
             rule->runq_pct, (double)wait_us / 1e3, h->job_ms,
             h->same_cpu ? ", beyond the other thread's turns" : "");
    return true;
}

void sm_disturb_judge(sm_host_state *h, const sm_disturb_rule *rule)
{
    h->disturbed = false;
    h->reason[0] = '\0';
    if (!h->known)
        return;
    double steal = sm_host_steal_pct(h);
    if (isfinite(steal) && steal > rule->steal_pct && h->ticks_steal >= rule->steal_min_ticks) {
        snprintf(h->reason, sizeof h->reason,
                 "steal %.1f%% of the CPU time > %.0f%% (%" PRIu64 " of %" PRIu64 " ticks)", steal,
                 rule->steal_pct, h->ticks_steal, h->ticks_total);
        h->disturbed = true;
        return;
    }
    if (preempted(h, rule, "tx", h->nivcsw_tx) || preempted(h, rule, "rx", h->nivcsw_rx) ||
        waited(h, rule, "tx", h->runq_us_tx, h->oncpu_us_rx) ||
        waited(h, rule, "rx", h->runq_us_rx, h->oncpu_us_tx)) {
        h->disturbed = true;
        return;
    }
    /* The run queue seen from outside, only where the threads' own wait is unknown (a kernel
     * without schedstat): it counts tasks on CPUs the job did not use. Both instants: one
     * reading is a snapshot that a short-lived task can fill. */
    if (h->runq_us_tx >= 0 || h->runq_us_rx >= 0)
        return;
    int32_t runnable =
        h->runnable_before < h->runnable_after ? h->runnable_before : h->runnable_after;
    if (h->ncpu > 0 && runnable >= 0 && (uint32_t)runnable > h->ncpu) {
        snprintf(h->reason, sizeof h->reason,
                 "%" PRId32 " other runnable tasks before and after > %" PRIu32 " CPUs", runnable,
                 h->ncpu);
        h->disturbed = true;
    }
}

/* A duration-bound sender stops on its own clock, within one write of its end (0.5 s for
 * 64 KiB at 1 Mbit/s) and a wake-up: half the job again plus a second is far beyond that, and
 * a link cut that holds its writes is not. A cut also makes TCP wait for its retransmission
 * timer, doubled at each timeout, until the link is back: the time in RTO recovery grows
 * with the cut. A saturated link loses segments too, by design, but TCP recovers them by fast
 * retransmit and RACK without a timeout, and the rare timeout there lasts one RTO. The
 * retransmit count cannot tell them apart (a link shaped to 10 Mbit/s retransmits 2.6-5.1%
 * of its segments, a 4 s cut 0.4%) and is not judged. docs/analysis.md has the
 * measurements. */
const sm_disturb_net_rule sm_disturb_net_default_rule = {
    .wall_factor = 1.5,
    .wall_slack_ms = 1000,
    .rto_min_ms = 1000,
    .rto_pct = 25.0,
};

/* "13.6 s" or "250 ms": a job's times in the unit that reads best. */
static void fmt_ms(char *buf, size_t cap, double ms)
{
    if (ms >= 1000)
        snprintf(buf, cap, "%.1f s", ms / 1e3);
    else
        snprintf(buf, cap, "%.0f ms", ms);
}

bool sm_disturb_net_judge(sm_host_state *h, const sm_disturb_net *in,
                          const sm_disturb_net_rule *rule)
{
    char wall[160] = "", rto[256] = "";
    bool wall_known = isfinite(in->wall_ms) && in->wall_ms >= 0;
    if (in->duration_ms > 0 && wall_known) {
        double limit = rule->wall_factor * in->duration_ms + rule->wall_slack_ms;
        if (in->wall_ms > limit) {
            char took[32], asked[32], lim[32];
            fmt_ms(took, sizeof took, in->wall_ms);
            fmt_ms(asked, sizeof asked, in->duration_ms);
            fmt_ms(lim, sizeof lim, limit);
            snprintf(wall, sizeof wall, "%s wall time for a %s job (limit %s)", took, asked, lim);
        }
    }
    if (in->rto_time_ms >= 0) {
        double limit = (double)rule->rto_min_ms;
        if (wall_known && rule->rto_pct / 100.0 * in->wall_ms > limit)
            limit = rule->rto_pct / 100.0 * in->wall_ms;
        if ((double)in->rto_time_ms >= limit) {
            char spent[32], lim[32], of[64] = "";
            fmt_ms(spent, sizeof spent, (double)in->rto_time_ms);
            fmt_ms(lim, sizeof lim, limit);
            if (wall_known) {
                char took[32];
                fmt_ms(took, sizeof took, in->wall_ms);
                snprintf(of, sizeof of, " of %s", took);
            }
            snprintf(rto, sizeof rto, "%s in RTO recovery%s (%" PRId64 " timeouts, limit %s)",
                     spent, of, in->rto, lim);
        }
    }
    if (!wall[0] && !rto[0])
        return false;
    /* The host's own reason stays first: both are kept, joined. */
    size_t at = strlen(h->reason);
    snprintf(h->reason + at, sizeof h->reason - at, "%snetwork: %s%s%s", at ? "; " : "", wall,
             wall[0] && rto[0] ? ", " : "", rto);
    h->disturbed = true;
    return true;
}
