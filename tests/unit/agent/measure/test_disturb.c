/* Unit tests of the disturbed-sample rules: synthetic before/after counters through
 * sm_disturb_fill and sm_disturb_judge, /proc files that lack fields, a real runner job, the
 * network rule (sm_disturb_net_judge) and the TCP_INFO it reads, and sm_result_merge_pair
 * joining two hosts' verdicts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/measure/disturb.h"
#include "agent/net/socket.h"
#include "agent/runner/runner.h"
#include "agent/net/transport.h"
#include "proto/params.h"
#include "proto/result.h"
#include "tests/unit/testutil.h"

/* A quiet 20 ms job on a 2-CPU machine: 4 ticks passed, no steal, nobody else runnable. */
static void quiet(sm_disturb_snap *b, sm_disturb_snap *a, sm_disturb_thread tx[2],
                  sm_disturb_thread rx[2])
{
    *b = (sm_disturb_snap){.ns = 1000000000ull,
                           .stat_ok = true,
                           .total = 100000,
                           .steal = 50,
                           .iowait = 10,
                           .load_ok = true,
                           .load1 = 0.5,
                           .running = 1};
    *a = *b;
    a->ns = b->ns + 20000000ull;
    a->total = b->total + 4;
    tx[0] = (sm_disturb_thread){.nivcsw = 10, .oncpu_ns = 0, .runq_ns = 5000000, .cpu = 0};
    tx[1] = (sm_disturb_thread){.nivcsw = 12, .oncpu_ns = 9000000, .runq_ns = 5100000, .cpu = 0};
    rx[0] = (sm_disturb_thread){.nivcsw = 3, .oncpu_ns = 0, .runq_ns = 0, .cpu = 1};
    rx[1] = (sm_disturb_thread){.nivcsw = 3, .oncpu_ns = 4000000, .runq_ns = 200000, .cpu = 1};
}

static void judge(sm_host_state *h, const sm_disturb_snap *b, const sm_disturb_snap *a,
                  const sm_disturb_thread tx[2], const sm_disturb_thread rx[2])
{
    sm_disturb_fill(h, b, a, &tx[0], &tx[1], &rx[0], &rx[1], 2);
    sm_disturb_judge(h, &sm_disturb_default_rule);
}

static void test_disturb_quiet_job_is_clean_with_its_inputs_recorded(void **state)
{
    (void)state;
    sm_disturb_snap b, a;
    sm_disturb_thread tx[2], rx[2];
    sm_host_state h;
    quiet(&b, &a, tx, rx);
    judge(&h, &b, &a, tx, rx);
    assert_true(h.known);
    assert_false(h.disturbed);
    assert_string_equal(h.reason, "");
    assert_double_near(h.job_ms, 20.0, 1e-9);
    assert_true(h.stat_known);
    assert_int_equal(h.ticks_total, 4);
    assert_int_equal(h.ticks_steal, 0);
    assert_double_near(sm_host_steal_pct(&h), 0.0, 1e-12);
    assert_int_equal(h.nivcsw_tx, 2);
    assert_int_equal(h.nivcsw_rx, 0);
    assert_int_equal(h.runq_us_tx, 100);
    assert_int_equal(h.runq_us_rx, 200);
    assert_int_equal(h.oncpu_us_tx, 9000);
    assert_int_equal(h.runnable_before, 0); /* the reader itself is not "other" */
    assert_int_equal(h.runnable_after, 0);
    assert_double_near(h.load1_before, 0.5, 1e-12);
    assert_int_equal(h.ncpu, 2);
    assert_false(h.same_cpu);
}

static void test_disturb_steal_over_the_cut_is_disturbed_with_that_reason(void **state)
{
    (void)state;
    sm_disturb_snap b, a;
    sm_disturb_thread tx[2], rx[2];
    sm_host_state h;
    quiet(&b, &a, tx, rx);
    a.total = b.total + 20;
    a.steal = b.steal + 3; /* 15% of the ticks that passed */
    judge(&h, &b, &a, tx, rx);
    assert_true(h.disturbed);
    assert_string_equal(h.reason, "steal 15.0% of the CPU time > 5% (3 of 20 ticks)");
    assert_double_near(sm_host_steal_pct(&h), 15.0, 1e-9);
}

static void test_disturb_one_tick_of_steal_is_sampling_not_disturbance(void **state)
{
    (void)state;
    sm_disturb_snap b, a;
    sm_disturb_thread tx[2], rx[2];
    sm_host_state h;
    quiet(&b, &a, tx, rx);
    a.steal = b.steal + 1; /* 25% of 4 ticks, but one 10 ms sample */
    judge(&h, &b, &a, tx, rx);
    assert_false(h.disturbed);
}

static void test_disturb_preemptions_over_the_cut_are_disturbed(void **state)
{
    (void)state;
    sm_disturb_snap b, a;
    sm_disturb_thread tx[2], rx[2];
    sm_host_state h;
    quiet(&b, &a, tx, rx);
    rx[1].nivcsw = rx[0].nivcsw + 64; /* 3.2 per ms over 20 ms */
    judge(&h, &b, &a, tx, rx);
    assert_true(h.disturbed);
    assert_string_equal(h.reason, "rx thread preempted 3.20 times/ms > 1.00 (64 in 20.0 ms)");
}

/* A short job's wake-up latency is a large share of it and no disturbance. */
static void test_disturb_a_wait_under_a_millisecond_is_not_disturbance(void **state)
{
    (void)state;
    sm_disturb_snap b, a;
    sm_disturb_thread tx[2], rx[2];
    sm_host_state h;
    quiet(&b, &a, tx, rx);
    a.ns = b.ns + 1100000ull;               /* a 1.1 ms job */
    rx[1].runq_ns = rx[0].runq_ns + 300000; /* 27% of it, 0.3 ms */
    judge(&h, &b, &a, tx, rx);
    assert_false(h.disturbed);
    rx[1].runq_ns = rx[0].runq_ns + 1000000;
    judge(&h, &b, &a, tx, rx);
    assert_true(h.disturbed);
}

static void test_disturb_waiting_for_a_cpu_over_the_cut_is_disturbed(void **state)
{
    (void)state;
    sm_disturb_snap b, a;
    sm_disturb_thread tx[2], rx[2];
    sm_host_state h;
    quiet(&b, &a, tx, rx);
    tx[1].runq_ns = tx[0].runq_ns + 9000000; /* 45% of the job: a hog on its CPU */
    judge(&h, &b, &a, tx, rx);
    assert_true(h.disturbed);
    assert_string_equal(h.reason,
                        "tx thread waited for a CPU 45% of the job > 10% (9.0 of 20.0 ms)");
}

/* Both ends on one CPU wait for each other and preempt each other at every wake-up: that is
 * the job, and only the wait beyond the other thread's time on the CPU counts. */
static void test_disturb_two_ends_sharing_a_cpu_count_only_the_wait_beyond_each_other(void **state)
{
    (void)state;
    sm_disturb_snap b, a;
    sm_disturb_thread tx[2], rx[2];
    sm_host_state h;
    quiet(&b, &a, tx, rx);
    rx[0].cpu = rx[1].cpu = 0;
    tx[1].nivcsw = tx[0].nivcsw + 900;         /* 45 per ms, as measured on the 2010 test */
    tx[1].runq_ns = tx[0].runq_ns + 7000000;   /* 7 ms waiting ... */
    rx[1].oncpu_ns = rx[0].oncpu_ns + 7200000; /* ... while rx ran 7.2 ms */
    rx[1].runq_ns = rx[0].runq_ns + 8000000;   /* 8 ms waiting while tx ran 9 ms */
    judge(&h, &b, &a, tx, rx);
    assert_true(h.same_cpu);
    assert_false(h.disturbed);
    tx[1].runq_ns = tx[0].runq_ns + 7200000 + 6000000; /* 6 ms more: someone else's */
    judge(&h, &b, &a, tx, rx);
    assert_true(h.disturbed);
    assert_string_equal(h.reason, "tx thread waited for a CPU 30% of the job > 10% "
                                  "(6.0 of 20.0 ms, beyond the other thread's turns)");
}

static void test_disturb_missing_counters_are_unknown_and_never_disturb(void **state)
{
    (void)state;
    sm_disturb_snap b, a;
    sm_disturb_thread tx[2], rx[2];
    sm_host_state h;
    quiet(&b, &a, tx, rx);
    b.stat_ok = false;
    a.steal = b.steal + 10;
    b.load_ok = false;
    a.running = 50;
    tx[0].nivcsw = -1;
    tx[1].nivcsw = 500;
    tx[0].runq_ns = -1;
    rx[1].runq_ns = -1;
    judge(&h, &b, &a, tx, rx);
    assert_false(h.stat_known);
    assert_true(isnan(sm_host_steal_pct(&h)));
    assert_true(isnan(h.load1_before));
    assert_int_equal(h.runnable_before, -1);
    assert_int_equal(h.nivcsw_tx, -1);
    assert_int_equal(h.runq_us_tx, -1);
    assert_int_equal(h.runq_us_rx, -1);
    assert_false(h.disturbed);
    assert_string_equal(h.reason, "");
    /* A counter that went backwards (a reset) is unknown too. */
    quiet(&b, &a, tx, rx);
    a.total = b.total - 1;
    rx[1].nivcsw = rx[0].nivcsw - 1;
    judge(&h, &b, &a, tx, rx);
    assert_false(h.stat_known);
    assert_int_equal(h.nivcsw_rx, -1);
    assert_false(h.disturbed);
}

/* Without the threads' own run-queue wait (a kernel without schedstat), a run queue longer
 * than the CPUs before and after the job stands in for it. */
static void test_disturb_runnable_tasks_count_only_without_schedstat(void **state)
{
    (void)state;
    sm_disturb_snap b, a;
    sm_disturb_thread tx[2], rx[2];
    sm_host_state h;
    quiet(&b, &a, tx, rx);
    b.running = 4;
    a.running = 5;
    judge(&h, &b, &a, tx, rx);
    assert_false(h.disturbed); /* the threads' own wait says they were not held up */
    tx[0].runq_ns = rx[0].runq_ns = -1;
    judge(&h, &b, &a, tx, rx);
    assert_true(h.disturbed);
    assert_string_equal(h.reason, "3 other runnable tasks before and after > 2 CPUs");
    a.running = 2; /* a passing task at one instant is not enough */
    judge(&h, &b, &a, tx, rx);
    assert_false(h.disturbed);
}

/* A folder standing in for /proc, with the files given (NULL: absent). */
static void fake_proc(char *dir, const char *stat, const char *loadavg)
{
    strcpy(dir, "/tmp/sm-disturb-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char path[256];
    if (stat) {
        snprintf(path, sizeof path, "%s/stat", dir);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(stat, f);
        fclose(f);
    }
    if (loadavg) {
        snprintf(path, sizeof path, "%s/loadavg", dir);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(loadavg, f);
        fclose(f);
    }
}

static void rm_proc(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/stat", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/loadavg", dir);
    unlink(path);
    rmdir(dir);
}

static void test_disturb_snap_reads_the_aggregate_line_and_the_run_queue(void **state)
{
    (void)state;
    char dir[64];
    sm_disturb_snap s;
    fake_proc(dir, "cpu  10 1 5 56 9 0 6 14 3 0\ncpu0 5 0 2 28 4 0 3 7 0 0\n",
              "0.52 0.58 0.59 3/812 12345\n");
    sm_disturb_snap_read(&s, dir);
    rm_proc(dir);
    assert_true(s.stat_ok);
    assert_int_equal(s.total, 10 + 1 + 5 + 56 + 9 + 0 + 6 + 14); /* guest is inside user */
    assert_int_equal(s.steal, 14);
    assert_int_equal(s.iowait, 9);
    assert_true(s.load_ok);
    assert_double_near(s.load1, 0.52, 1e-12);
    assert_int_equal(s.running, 3);
    assert_true(s.ns > 0);
}

static void test_disturb_snap_without_steal_or_files_is_unknown(void **state)
{
    (void)state;
    char dir[64];
    sm_disturb_snap s;
    /* An old kernel's line: four fields, no iowait nor steal. */
    fake_proc(dir, "cpu  10 1 5 56\n", "garbage\n");
    sm_disturb_snap_read(&s, dir);
    rm_proc(dir);
    assert_false(s.stat_ok);
    assert_false(s.load_ok);
    assert_true(isnan(s.load1));
    assert_int_equal(s.running, -1);
    fake_proc(dir, NULL, NULL);
    sm_disturb_snap_read(&s, dir);
    rm_proc(dir);
    assert_false(s.stat_ok);
    assert_false(s.load_ok);
    assert_int_equal(sm_disturb_cpu_mhz(0, dir), 0); /* no cpufreq there: unknown, not 0 MHz */
    assert_int_equal(sm_disturb_cpu_mhz(-1, NULL), 0);
}

/* A real local job records the host block: every job, outside the timed region. */
static void test_disturb_runner_records_the_host_around_a_local_job(void **state)
{
    (void)state;
    char dir[] = "/tmp/sm-disturb-run-XXXXXX";
    assert_non_null(mkdtemp(dir));
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    p.transport = SM_TR_UNIX;
    p.count = 64;
    p.msg_size = 1024;
    sm_error err = {0};
    assert_int_equal(sm_params_validate(&p, &err), 0);
    sm_runner_opts o = {.sock_dir = dir};
    sm_result r;
    sm_result_init(&r);
    assert_int_equal(sm_runner_run(&p, &o, &r, &err), 0);
    rmdir(dir);
    assert_true(r.ok);
    assert_true(r.host.known);
    assert_true(r.host.job_ms > 0);
    assert_true(r.host.nivcsw_tx >= 0);
    assert_true(r.host.nivcsw_rx >= 0);
    assert_true(r.host.ncpu >= 1);
    if (access("/proc/thread-self/schedstat", R_OK) == 0)
        assert_true(r.host.runq_us_tx >= 0);
    assert_true(r.host.stat_known);
    sm_result_fini(&r);
}

/* ---- the network rule ---- */

static sm_host_state clean_host(void)
{
    sm_host_state h;
    sm_host_state_init(&h);
    h.known = true;
    return h;
}

static bool net_judge(sm_host_state *h, double wall_ms, uint32_t duration_ms, int64_t rto,
                      int64_t rto_time_ms)
{
    sm_disturb_net in = {wall_ms, duration_ms, rto, rto_time_ms};
    return sm_disturb_net_judge(h, &in, &sm_disturb_net_default_rule);
}

/* The lab's finding: a 3 s pair job held up by a 10 s link cut. */
static void
test_disturb_net_a_duration_job_far_over_its_time_is_disturbed_by_the_network(void **state)
{
    (void)state;
    sm_host_state h = clean_host();
    assert_true(net_judge(&h, 13600, 3000, -1, -1));
    assert_true(h.disturbed);
    assert_string_equal(h.reason, "network: 13.6 s wall time for a 3.0 s job (limit 5.5 s)");
    /* Short jobs in milliseconds: 1.5 x 200 ms + 1 s. */
    h = clean_host();
    assert_true(net_judge(&h, 1400, 200, 0, 0));
    assert_string_equal(h.reason, "network: 1.4 s wall time for a 200 ms job (limit 1.3 s)");
}

static void test_disturb_net_wall_time_within_the_limit_or_unknown_is_clean(void **state)
{
    (void)state;
    sm_host_state h = clean_host();
    assert_false(net_judge(&h, 5500, 3000, 0, 0)); /* at the limit, not above it */
    assert_false(net_judge(&h, 3100, 3000, 0, 0));
    /* Bound by a count: no time was asked for, however long it took. */
    assert_false(net_judge(&h, 60000, 0, 0, 0));
    assert_false(net_judge(&h, NAN, 3000, 0, 0));
    assert_false(h.disturbed);
    assert_string_equal(h.reason, "");
}

/* The sender's own link down 4 s in a 3 s job: 5.1 s, under the wall-time limit, but 3.9 s
 * of it waiting on the retransmission timer. */
static void test_disturb_net_time_in_rto_recovery_over_the_limit_is_disturbed(void **state)
{
    (void)state;
    sm_host_state h = clean_host();
    assert_true(net_judge(&h, 5146, 3000, 4, 3869));
    assert_true(h.disturbed);
    assert_string_equal(h.reason,
                        "network: 3.9 s in RTO recovery of 5.1 s (4 timeouts, limit 1.3 s)");
    /* A count-bound job has no duration: only this clause can see its cut. */
    h = clean_host();
    assert_true(net_judge(&h, 60000, 0, 7, 55000));
    assert_string_equal(h.reason,
                        "network: 55.0 s in RTO recovery of 60.0 s (7 timeouts, limit 15.0 s)");
    /* At the minimum on a short job; the minimum alone when the wall time is unknown. */
    h = clean_host();
    assert_true(net_judge(&h, 2000, 0, 2, 1000));
    assert_string_equal(h.reason,
                        "network: 1.0 s in RTO recovery of 2.0 s (2 timeouts, limit 1.0 s)");
    h = clean_host();
    assert_true(net_judge(&h, NAN, 0, 3, 1500));
    assert_string_equal(h.reason, "network: 1.5 s in RTO recovery (3 timeouts, limit 1.0 s)");
}

static void test_disturb_net_time_in_rto_recovery_under_the_limit_or_unknown_is_clean(void **state)
{
    (void)state;
    sm_host_state h = clean_host();
    /* A link shaped to 1 Mbit/s: tbf drops, TCP recovers mostly without a timeout. */
    assert_false(net_judge(&h, 3000, 3000, 1, 400));
    /* Under the minimum, however large a share of a short job. */
    assert_false(net_judge(&h, 1200, 0, 2, 999));
    /* Over the minimum but under a quarter of a long job. */
    assert_false(net_judge(&h, 30000, 0, 3, 7400));
    /* Unknown: a kernel before 6.7. */
    assert_false(net_judge(&h, 60000, 0, -1, -1));
    assert_false(h.disturbed);
    assert_string_equal(h.reason, "");
}

/* The host's own reason stays, the network's joins it; both clauses give their numbers. */
static void test_disturb_net_keeps_the_hosts_reason_and_joins_both_clauses(void **state)
{
    (void)state;
    sm_host_state h = clean_host();
    h.disturbed = true;
    snprintf(h.reason, sizeof h.reason, "%s",
             "tx thread waited for a CPU 45% of the job > 10% (9.1 of 20.2 ms)");
    assert_true(net_judge(&h, 13600, 3000, 6, 12900));
    assert_true(h.disturbed);
    assert_string_equal(h.reason,
                        "tx thread waited for a CPU 45% of the job > 10% (9.1 of 20.2 ms); "
                        "network: 13.6 s wall time for a 3.0 s job (limit 5.5 s), 12.9 s in RTO "
                        "recovery of 13.6 s (6 timeouts, limit 3.4 s)");
    /* A clean network leaves a host verdict as it was. */
    sm_host_state before = h;
    assert_false(net_judge(&h, 3000, 3000, 0, 0));
    assert_true(h.disturbed);
    assert_string_equal(h.reason, before.reason);
}

/* Linux 6.7 put the RTO counters after tcpi_snd_wnd (offset 228): tcpi_total_rto at 240,
 * tcpi_total_rto_time at 244, the struct 248 bytes long. A shorter copy is an older kernel. */
static void
test_disturb_tcp_info_reads_the_rto_fields_only_when_the_kernel_copied_them(void **state)
{
    (void)state;
    unsigned char buf[256];
    memset(buf, 0, sizeof buf);
    uint16_t rto = 5;
    uint32_t rto_ms = 6256, retrans = 1823;
    memcpy(buf + 240, &rto, sizeof rto);
    memcpy(buf + 244, &rto_ms, sizeof rto_ms);
    memcpy(buf + 100, &retrans, sizeof retrans); /* tcpi_total_retrans, Linux 2.6 */
    sm_net_tcp_stats st;
    sm_net_tcp_info_parse(buf, 248, &st);
    assert_int_equal(st.retrans, 1823);
    assert_int_equal(st.rto, 5);
    assert_int_equal(st.rto_time_ms, 6256);
    sm_net_tcp_info_parse(buf, sizeof buf, &st); /* a later kernel's longer struct */
    assert_int_equal(st.rto_time_ms, 6256);
    /* Linux 6.2-6.6 (up to tcpi_rehash), 5.4 (up to tcpi_snd_wnd): unknown, not 0. */
    sm_net_tcp_info_parse(buf, 240, &st);
    assert_int_equal(st.retrans, 1823);
    assert_int_equal(st.rto, -1);
    assert_int_equal(st.rto_time_ms, -1);
    sm_net_tcp_info_parse(buf, 232, &st);
    assert_int_equal(st.rto_time_ms, -1);
    sm_net_tcp_info_parse(buf, 246, &st);
    assert_int_equal(st.rto_time_ms, -1);
}

/* From the kernel: a quiet loopback connection spent no time in RTO recovery, on a kernel
 * that says so. */
static void test_disturb_tcp_info_of_a_quiet_connection_has_no_rto_time(void **state)
{
    (void)state;
    sm_sockopts o = {0};
    sm_error err = {0};
    int lfd = -1, cfd = -1, sfd = -1;
    uint16_t port = 0;
    assert_int_equal(sm_net_tcp_listen("127.0.0.1", 0, &o, &lfd, &port, &err), 0);
    sm_endpoint ep = {.port = port};
    snprintf(ep.host, sizeof ep.host, "127.0.0.1");
    assert_int_equal(sm_transport_get(SM_TR_TCP)->connect(&ep, &o, 5000, &cfd, &err), 0);
    assert_int_equal(sm_transport_get(SM_TR_TCP)->accept(lfd, &o, 5000, &sfd, &err), 0);
    static char buf[64 * 1024];
    memset(buf, 'x', sizeof buf);
    size_t sent = 0;
    while (sent < sizeof buf) {
        ssize_t n = write(cfd, buf + sent, sizeof buf - sent);
        assert_true(n > 0);
        sent += (size_t)n;
    }
    size_t got = 0;
    while (got < sizeof buf) {
        ssize_t n = read(sfd, buf, sizeof buf);
        assert_true(n > 0);
        got += (size_t)n;
    }
    sm_net_tcp_stats st;
    assert_int_equal(sm_net_tcp_info(cfd, &st, &err), 0);
    if (st.retrans != 0) {
        /* The premise, measured: on a machine too busy to run the receiver in time, loopback
         * TCP retransmits (a tail-loss probe, an RTO) and the connection was not quiet. */
        print_message("skipped: %u retransmissions on loopback, the machine starved the "
                      "receiver: not a quiet connection\n",
                      (unsigned)st.retrans);
        sm_net_close(&sfd);
        sm_net_close(&cfd);
        sm_net_close(&lfd);
        skip();
    }
    struct utsname u;
    int major = 0, minor = 0;
    if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
        (major > 6 || (major == 6 && minor >= 7))) {
        assert_int_equal(st.rto, 0);
        assert_int_equal(st.rto_time_ms, 0);
    } else {
        /* Known only if backported; never faked. */
        assert_true(st.rto_time_ms == -1 || st.rto_time_ms == 0);
    }
    sm_net_close(&sfd);
    sm_net_close(&cfd);
    sm_net_close(&lfd);
}

/* A duration job on loopback takes the time asked for: the network rule stays quiet. */
static void test_disturb_runner_judges_a_quiet_duration_job_clean_of_the_network(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_RR);
    p.transport = SM_TR_TCP;
    p.req_size = 1;
    p.resp_size = 1;
    p.count = 0;
    p.duration_ms = 200;
    sm_error err = {0};
    assert_int_equal(sm_params_validate(&p, &err), 0);
    sm_runner_opts o = {.sock_dir = "/tmp"};
    sm_result r;
    sm_result_init(&r);
    assert_int_equal(sm_runner_run(&p, &o, &r, &err), 0);
    assert_true(r.ok);
    assert_true(sm_result_get(&r, SM_M_SECONDS) < 1.3);
    assert_null(strstr(r.host.reason, "network"));
    sm_result_fini(&r);
}

static void side(sm_result *r, bool disturbed, const char *reason, int64_t nivcsw_tx,
                 int64_t nivcsw_rx)
{
    sm_result_init(r);
    r->ok = true;
    sm_result_set(r, SM_M_BYTES, 1000);
    sm_result_set(r, SM_M_SECONDS, 0.01);
    r->host.known = true;
    r->host.nivcsw_tx = nivcsw_tx;
    r->host.nivcsw_rx = nivcsw_rx;
    r->host.disturbed = disturbed;
    snprintf(r->host.reason, sizeof r->host.reason, "%s", reason);
}

static void test_disturb_pair_is_disturbed_when_either_side_is(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    p.scope = SM_SCOPE_PAIR;
    sm_result srv, cli, m;
    side(&srv, false, "", -1, 4);
    side(&cli, true, "tx thread preempted 3.20 times/ms > 1.00 (64 in 20.0 ms)", 64, -1);
    assert_int_equal(sm_result_merge_pair(&p, &srv, &cli, &m), 0);
    assert_true(m.ok);
    assert_true(m.host.known);
    assert_true(m.host.disturbed);
    assert_string_equal(m.host.reason,
                        "client: tx thread preempted 3.20 times/ms > 1.00 (64 in 20.0 ms)");
    assert_int_equal(m.host.nivcsw_tx, 64); /* each thread's count from its own host */
    assert_int_equal(m.host.nivcsw_rx, 4);
    sm_result_fini(&m);
    side(&cli, false, "", 2, -1);
    assert_int_equal(sm_result_merge_pair(&p, &srv, &cli, &m), 0);
    assert_false(m.host.disturbed);
    assert_string_equal(m.host.reason, "");
    sm_result_fini(&m);
    side(&srv, true, "steal 15.0% of the CPU time > 5% (3 of 20 ticks)", -1, 4);
    side(&cli, true, "tx thread waited", 2, -1);
    assert_int_equal(sm_result_merge_pair(&p, &srv, &cli, &m), 0);
    assert_true(m.host.disturbed);
    assert_string_equal(m.host.reason, "client: tx thread waited; server: steal 15.0% of the "
                                       "CPU time > 5% (3 of 20 ticks)");
    sm_result_fini(&m);
    /* Sides of agents that did not record the host: nothing known, not disturbed. */
    sm_result_init(&srv);
    sm_result_init(&cli);
    srv.ok = cli.ok = true;
    sm_result_set(&srv, SM_M_BYTES, 1000);
    sm_result_set(&cli, SM_M_BYTES, 1000);
    assert_int_equal(sm_result_merge_pair(&p, &srv, &cli, &m), 0);
    assert_false(m.host.known);
    assert_false(m.host.disturbed);
    sm_result_fini(&m);
}

/* Each side judged the network by what it saw; the merged result keeps every mark in full. */
static void test_disturb_pair_keeps_a_network_mark_through_the_merge(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    p.scope = SM_SCOPE_PAIR;
    p.duration_ms = 3000;
    sm_result srv, cli, m;
    side(&srv, false, "", -1, 4);
    assert_true(net_judge(&srv.host, 13600, 3000, -1, -1));
    side(&cli, false, "", 2, -1);
    assert_int_equal(sm_result_merge_pair(&p, &srv, &cli, &m), 0);
    assert_true(m.ok);
    assert_true(m.host.disturbed);
    assert_string_equal(m.host.reason,
                        "server: network: 13.6 s wall time for a 3.0 s job (limit 5.5 s)");
    sm_result_fini(&m);
    /* Both sides, one with a host reason as well: nothing cut off. */
    side(&cli, true, "tx thread waited for a CPU 27% of the job > 10% (822.0 of 3002.4 ms)", 2, -1);
    assert_true(net_judge(&cli.host, 13600, 3000, 6, 12900));
    assert_int_equal(sm_result_merge_pair(&p, &srv, &cli, &m), 0);
    assert_true(m.host.disturbed);
    assert_string_equal(m.host.reason,
                        "client: tx thread waited for a CPU 27% of the job > 10% (822.0 of 3002.4 "
                        "ms); network: 13.6 s wall time for a 3.0 s job (limit 5.5 s), 12.9 s in "
                        "RTO recovery of 13.6 s (6 timeouts, limit 3.4 s); server: network: "
                        "13.6 s wall time for a 3.0 s job (limit 5.5 s)");
    sm_result_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disturb_quiet_job_is_clean_with_its_inputs_recorded),
        cmocka_unit_test(test_disturb_steal_over_the_cut_is_disturbed_with_that_reason),
        cmocka_unit_test(test_disturb_one_tick_of_steal_is_sampling_not_disturbance),
        cmocka_unit_test(test_disturb_preemptions_over_the_cut_are_disturbed),
        cmocka_unit_test(test_disturb_waiting_for_a_cpu_over_the_cut_is_disturbed),
        cmocka_unit_test(test_disturb_a_wait_under_a_millisecond_is_not_disturbance),
        cmocka_unit_test(test_disturb_two_ends_sharing_a_cpu_count_only_the_wait_beyond_each_other),
        cmocka_unit_test(test_disturb_missing_counters_are_unknown_and_never_disturb),
        cmocka_unit_test(test_disturb_runnable_tasks_count_only_without_schedstat),
        cmocka_unit_test(test_disturb_snap_reads_the_aggregate_line_and_the_run_queue),
        cmocka_unit_test(test_disturb_snap_without_steal_or_files_is_unknown),
        cmocka_unit_test(test_disturb_runner_records_the_host_around_a_local_job),
        cmocka_unit_test(test_disturb_pair_is_disturbed_when_either_side_is),
        cmocka_unit_test(
            test_disturb_net_a_duration_job_far_over_its_time_is_disturbed_by_the_network),
        cmocka_unit_test(test_disturb_net_wall_time_within_the_limit_or_unknown_is_clean),
        cmocka_unit_test(test_disturb_net_time_in_rto_recovery_over_the_limit_is_disturbed),
        cmocka_unit_test(test_disturb_net_time_in_rto_recovery_under_the_limit_or_unknown_is_clean),
        cmocka_unit_test(test_disturb_net_keeps_the_hosts_reason_and_joins_both_clauses),
        cmocka_unit_test(
            test_disturb_tcp_info_reads_the_rto_fields_only_when_the_kernel_copied_them),
        cmocka_unit_test(test_disturb_tcp_info_of_a_quiet_connection_has_no_rto_time),
        cmocka_unit_test(test_disturb_runner_judges_a_quiet_duration_job_clean_of_the_network),
        cmocka_unit_test(test_disturb_pair_keeps_a_network_mark_through_the_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
