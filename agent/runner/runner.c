/* One job, both ends on this host (listener, server and client threads) or one side of a pair
 * job alone: CPU per thread, the time limit, and a verdict that names the side that failed. */
#include "agent/runner/runner.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/measure/disturb.h"
#include "agent/workloads/tls.h"
#include "proto/log.h"

typedef struct side_thread {
    sm_side side;
    const sm_workload_ops *wl;
    int lfd; /* server only */
    int is_server;
    int pin_cpu;              /* -1: leave the thread where the scheduler puts it */
    atomic_int *first_failed; /* 0 none, 1 server, 2 client */
    sm_disturb_thread dist_before, dist_after; /* this thread's preemptions, run-queue wait */
    uint64_t ran_ns; /* CLOCK_MONOTONIC time the workload's side took on this thread */
} side_thread;

static void *side_main(void *arg)
{
    side_thread *t = arg;
    sm_cpu before, after;
    if (t->pin_cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(t->pin_cpu, &set);
        int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        if (rc) {
            t->side.rc = sm_io_fail(&t->side, SM_ESYS, "cannot pin the %s thread to CPU %d: %s",
                                    t->is_server ? "server" : "client", t->pin_cpu, strerror(rc));
            goto done;
        }
    }
    /* Outside the timed region, which the workload opens and closes itself. */
    sm_disturb_thread_read(&t->dist_before);
    sm_cpu_thread(&before);
    uint64_t t0 = sm_now_ns();
    t->side.rc = t->is_server ? t->wl->server(&t->side, t->lfd) : t->wl->client(&t->side);
    if (t->side.rc == 0)
        t->side.rc = sm_io_check_end(&t->side);
    t->ran_ns = sm_now_ns() - t0;
    sm_cpu_thread(&after);
    sm_disturb_thread_read(&t->dist_after);
    t->side.cpu = sm_cpu_diff(&after, &before);
    t->side.cpu.user_s += t->side.extra_cpu.user_s;
    t->side.cpu.sys_s += t->side.extra_cpu.sys_s;
    t->side.cpu_id = sched_getcpu();
done:
    /* An external abort is the reason itself, not a consequence of the other side failing. */
    if (t->side.rc &&
        (t->side.rc != SM_ECANCELED || (t->side.job->abort && atomic_load(t->side.job->abort)))) {
        int none = 0;
        atomic_compare_exchange_strong(t->first_failed, &none, t->is_server ? 1 : 2);
    }
    if (!t->is_server)
        atomic_store(&t->side.job->client_done, 1);
    return NULL;
}

#define HTTP_WINDOW (256u << 10)

/* rr and connect time every exchange into a latency histogram. */
static bool wants_hist(const sm_params *p)
{
    return p->workload == SM_WL_RR || p->workload == SM_WL_CONNECT;
}

static int make_pattern(const sm_params *p, sm_pattern *pt)
{
    if (p->workload == SM_WL_STREAM && p->framing == SM_FRAMING_LINES)
        return sm_pattern_init_lines(pt, p->msg_size, (size_t)p->msg_size + 2);
    size_t window = 1;
    if (p->workload == SM_WL_STREAM)
        window = p->msg_size > sm_params_read_size(p) ? p->msg_size : sm_params_read_size(p);
    else if (p->workload == SM_WL_RR)
        window = p->req_size > p->resp_size ? p->req_size : p->resp_size;
    else if (p->workload == SM_WL_HTTP)
        window = HTTP_WINDOW; /* the source writes and the client checks up to this at once */
    return sm_pattern_init_raw(pt, window);
}

static void side_init(side_thread *t, sm_job *job, const sm_workload_ops *wl, int is_server,
                      atomic_int *first_failed)
{
    memset(t, 0, sizeof *t);
    t->side.job = job;
    t->wl = wl;
    t->lfd = -1;
    t->is_server = is_server;
    t->pin_cpu = -1;
    t->side.cpu_id = -1;
    t->first_failed = first_failed;
    t->dist_before = (sm_disturb_thread){-1, -1, -1, -1};
    t->dist_after = (sm_disturb_thread){-1, -1, -1, -1};
}

/* How the host was during the job (before/after snapshots taken by the caller around the
 * threads) and the verdict; tx and rx are NULL for a side that did not run here. */
static void judge_host(sm_result *out, const sm_disturb_snap *before, const side_thread *tx,
                       const side_thread *rx)
{
    sm_disturb_snap after;
    sm_disturb_snap_read(&after, NULL);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    sm_disturb_fill(&out->host, before, &after, tx ? &tx->dist_before : NULL,
                    tx ? &tx->dist_after : NULL, rx ? &rx->dist_before : NULL,
                    rx ? &rx->dist_after : NULL, ncpu > 0 ? (uint32_t)ncpu : 0);
    if (tx)
        out->host.mhz_tx = sm_disturb_cpu_mhz(tx->side.cpu_id, NULL);
    if (rx)
        out->host.mhz_rx = sm_disturb_cpu_mhz(rx->side.cpu_id, NULL);
    sm_disturb_judge(&out->host, &sm_disturb_default_rule);
}

/* Whether the network disturbed a job that succeeded, judged on its sender (the client in
 * every workload; tx NULL: it ran on the other host, which judges it). The wall time is the
 * sender's: a duration-bound sender stops on its own clock, and only a path that will not
 * take its bytes holds it longer. The receiver's clock is no measure of that: it also runs
 * while the sender's socket drains, for seconds on a link shaped to 1 Mbit/s, and a server's
 * thread waits for its client to start. */
static void judge_network(sm_result *out, const sm_params *p, const side_thread *tx)
{
    if (!out->ok || !tx)
        return;
    sm_disturb_net in = {(double)tx->ran_ns / 1e6, p->duration_ms, -1, -1};
    if (tx->side.have_tcp_info) {
        in.rto = tx->side.tcp.rto;
        in.rto_time_ms = tx->side.tcp.rto_time_ms;
        /* The numbers the rule reads, each job: what an operator calibrating it needs. */
        sm_log(LOG_DEBUG, "SM-JOB-NET",
               "sender %.0f ms (asked %" PRIu32 " ms): %" PRIu32 " retransmits, %" PRId64
               " RTO timeouts, %" PRId64 " ms in RTO recovery",
               in.wall_ms, p->duration_ms, tx->side.tcp.retrans, in.rto, in.rto_time_ms);
    }
    sm_disturb_net_judge(&out->host, &in, &sm_disturb_net_default_rule);
}

/* What every way of running a job sets up alike: the workload's table, the record both sides
 * share (sockopts, fault, abort) and the payload pattern, which *pat then owns (the caller
 * finis it, also on a later failure). The endpoint and the deadline are the caller's. */
static int job_init(sm_job *job, sm_pattern *pat, const sm_params *p, const sm_runner_opts *o,
                    bool alone, const sm_workload_ops **wl, sm_error *err)
{
    *wl = sm_workload_get(p->workload);
    if (!*wl)
        return sm_error_set(err, SM_EINVAL, "workload %s cannot run here",
                            sm_workload_name(p->workload));
    if (alone && !(*wl)->finish_side)
        return sm_error_set(err, SM_EINVAL, "workload %s cannot run as a pair job",
                            sm_workload_name(p->workload));
    memset(job, 0, sizeof *job);
    job->p = p;
    job->tr = sm_transport_get(p->transport);
    job->fault = o->fault;
    job->abort = o->abort;
    job->alone = alone;
    job->pat = pat;
    if (p->workload == SM_WL_HTTP && p->tls) {
        if (!o->tls && !o->tls_pin)
            return sm_error_set(err, SM_EINVAL, "tls: this agent has no TLS identity");
        job->tls = o->tls;
        const char *pin = o->tls_pin ? o->tls_pin : sm_tls_id_pin(o->tls);
        if (strlen(pin) > SM_PIN_MAX)
            return sm_error_set(err, SM_EINVAL, "tls: the key pin is longer than %d bytes",
                                SM_PIN_MAX);
        snprintf(job->pin, sizeof job->pin, "%s", pin);
        /* Another valid pin: one base64 digit of the hash changed. */
        if (o->fault == SM_FAULT_WRONG_PIN && strlen(job->pin) > 10)
            job->pin[10] = job->pin[10] == 'A' ? 'B' : 'A';
    }
    job->client_opts = (sm_sockopts){.nodelay = p->nodelay,
                                     .cork = p->cork,
                                     .sndbuf = p->sndbuf,
                                     .rcvbuf = p->rcvbuf,
                                     .congestion = p->congestion,
                                     .notsent_lowat = p->notsent_lowat};
    job->server_opts = (sm_sockopts){.nodelay = p->nodelay,
                                     .sndbuf = p->sndbuf,
                                     .rcvbuf = p->rcvbuf,
                                     .congestion = p->congestion,
                                     .notsent_lowat = p->notsent_lowat};
    if (make_pattern(p, pat))
        return sm_error_set(err, SM_ENOMEM, "out of memory for the payload pattern");
    return 0;
}

/* The time limit runs from here: once the server listens, or once a client alone starts. */
static void start_clock(sm_job *job)
{
    job->deadline_ns = sm_now_ns() + (uint64_t)job->p->time_limit_ms * 1000000u;
}

/* Where the server listens: a Unix socket path in o->sock_dir, or a TCP host. */
static int set_endpoint(sm_job *job, const sm_params *p, const sm_runner_opts *o, sm_error *err)
{
    /* Process-wide on purpose: with the pid it makes each socket name unique in a folder
     * every run of this process may share (the daemon's jobs, the tests' parallel runs). */
    static atomic_uint seq;
    if (p->transport != SM_TR_UNIX) {
        snprintf(job->ep.host, sizeof job->ep.host, "%s", o->tcp_host ? o->tcp_host : "127.0.0.1");
        return 0;
    }
    int n = snprintf(job->ep.path, sizeof job->ep.path, "%s/sm-%d-%u.sock", o->sock_dir,
                     (int)getpid(), atomic_fetch_add(&seq, 1));
    if (n < 0 || (size_t)n >= sizeof job->ep.path)
        return sm_error_set(err, SM_EINVAL, "socket directory path too long: %s", o->sock_dir);
    return 0;
}

/* Runs the two sides on their threads (the client alone without serve) until both end. */
static int run_sides(sm_job *job, side_thread *server, side_thread *client, bool serve,
                     sm_error *err)
{
    pthread_t ts, tc;
    int rc;
    if (serve && (rc = pthread_create(&ts, NULL, side_main, server)))
        return sm_error_set(err, SM_ESYS, "cannot start the server thread: %s", strerror(rc));
    if ((rc = pthread_create(&tc, NULL, side_main, client))) {
        /* Without a client the server would wait for its time limit: stop it now. */
        atomic_store(&job->cancel, 1);
        if (serve)
            pthread_join(ts, NULL);
        return sm_error_set(err, SM_ESYS, "cannot start the client thread: %s", strerror(rc));
    }
    pthread_join(tc, NULL);
    if (serve)
        pthread_join(ts, NULL);
    return 0;
}

/* The result of two ended sides: the first failure's reason, or the workload's figures. */
static void collect(sm_result *out, sm_job *job, const sm_workload_ops *wl, side_thread *server,
                    side_thread *client, int first_failed)
{
    if (server->side.rc || client->side.rc) {
        const side_thread *f = first_failed == 1   ? server
                               : first_failed == 2 ? client
                               : server->side.rc   ? server
                                                   : client;
        out->ok = false;
        /* "server: " or "client: " first; the precision keeps a long reason from pushing
         * it out. */
        snprintf(out->reason, sizeof out->reason, "%s: %.240s", f->is_server ? "server" : "client",
                 f->side.err.msg);
        return;
    }
    out->ok = true;
    wl->finish(job, &server->side, &client->side, out);
    out->sndbuf_eff = client->side.sndbuf_eff;
    out->rcvbuf_eff = server->side.rcvbuf_eff;
    out->tx_cpu = client->side.cpu_id;
    out->rx_cpu = server->side.cpu_id;
    if (client->side.hist) {
        out->hist = client->side.hist;
        client->side.hist = NULL;
    }
}

int sm_runner_run(const sm_params *p, const sm_runner_opts *o, sm_result *out, sm_error *err)
{
    const sm_workload_ops *wl;
    sm_job job;
    sm_pattern pat = {0};
    side_thread server, client;
    atomic_int first_failed = 0;
    int rc, lfd = -1;

    sm_result_fini(out);
    sm_result_init(out);
    if ((rc = job_init(&job, &pat, p, o, false, &wl, err))) {
        sm_pattern_fini(&pat);
        return rc;
    }
    side_init(&server, &job, wl, 1, &first_failed);
    side_init(&client, &job, wl, 0, &first_failed);
    if ((rc = set_endpoint(&job, p, o, err)))
        goto out;
    if (o->pin) {
        server.pin_cpu = o->server_cpu;
        client.pin_cpu = o->client_cpu;
    }
    if (wants_hist(p) && !(client.side.hist = sm_hist_new())) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory for the latency histogram");
        goto out;
    }
    /* An http job with a url fetches from a server that is not ours: the client runs alone. */
    bool serve = !(p->workload == SM_WL_HTTP && p->url[0]);
    if (serve && (rc = job.tr->listen(&job.ep, &job.server_opts, &lfd, err)))
        goto out;
    server.lfd = lfd;
    sm_disturb_snap host_before;
    sm_disturb_snap_read(&host_before, NULL);
    start_clock(&job);
    if ((rc = run_sides(&job, &server, &client, serve, err)))
        goto out;
    collect(out, &job, wl, &server, &client, atomic_load(&first_failed));
    judge_host(out, &host_before, &client, serve ? &server : NULL);
    judge_network(out, p, &client);
out:
    if (lfd >= 0)
        job.tr->unlisten(&job.ep, &lfd);
    sm_hist_free(client.side.hist);
    sm_pattern_fini(&pat);
    return rc;
}

/* ---- one side of a pair job ---- */

static int check_pair(const sm_params *p, sm_error *err)
{
    if (p->scope != SM_SCOPE_PAIR || p->transport != SM_TR_TCP)
        return sm_error_set(err, SM_EINVAL,
                            "one side of a job runs with scope pair over tcp, not scope %s over %s",
                            sm_scope_name(p->scope), sm_transport_name(p->transport));
    return 0;
}

/* Runs the one side on a thread of its own, as a local job runs each side: its CPU time is
 * then that side's alone, and pinning it leaves the caller's thread where it was. The reason
 * of a failed side is its own; sm_result_merge_pair says which side it was. */
static int run_alone(side_thread *t, sm_result *out, sm_error *err)
{
    pthread_t th;
    sm_disturb_snap host_before;
    sm_disturb_snap_read(&host_before, NULL);
    int rc = pthread_create(&th, NULL, side_main, t);
    if (rc)
        return sm_error_set(err, SM_ESYS, "cannot start the %s thread: %s",
                            t->is_server ? "server" : "client", strerror(rc));
    pthread_join(th, NULL);
    judge_host(out, &host_before, t->is_server ? NULL : t, t->is_server ? t : NULL);
    if (t->side.rc) {
        out->ok = false;
        snprintf(out->reason, sizeof out->reason, "%s", t->side.err.msg);
        return 0;
    }
    out->ok = true;
    t->wl->finish_side(t->side.job, &t->side, t->is_server, out);
    if (t->is_server) {
        out->rcvbuf_eff = t->side.rcvbuf_eff;
        out->rx_cpu = t->side.cpu_id;
    } else {
        out->sndbuf_eff = t->side.sndbuf_eff;
        out->tx_cpu = t->side.cpu_id;
    }
    if (t->side.hist) {
        out->hist = t->side.hist;
        t->side.hist = NULL;
    }
    judge_network(out, t->side.job->p, t->is_server ? NULL : t);
    return 0;
}

int sm_runner_serve(const sm_params *p, const char *bind_addr, const sm_runner_opts *o,
                    void (*on_ready)(void *arg, uint16_t port), void *arg, sm_result *out,
                    sm_error *err)
{
    const sm_workload_ops *wl;
    sm_job job;
    sm_pattern pat = {0};
    side_thread server;
    atomic_int first_failed = 0;
    int rc, lfd = -1;

    sm_result_fini(out);
    sm_result_init(out);
    if ((rc = check_pair(p, err)))
        return rc;
    if (!bind_addr || !bind_addr[0])
        bind_addr = "0.0.0.0";
    if (strlen(bind_addr) >= sizeof job.ep.host)
        return sm_error_set(err, SM_EINVAL, "bind address too long: %.80s", bind_addr);
    if ((rc = job_init(&job, &pat, p, o, true, &wl, err)))
        goto out;
    snprintf(job.ep.host, sizeof job.ep.host, "%s", bind_addr);
    uint64_t refused = 0;
    job.server_opts.only_from = o->client_addr;
    job.server_opts.refused = &refused;
    if ((rc = job.tr->listen(&job.ep, &job.server_opts, &lfd, err)))
        goto out;
    start_clock(&job);
    sm_log(LOG_INFO, "SM-PAIR-LISTEN", "%s server listening on %s port %u",
           sm_workload_name(p->workload), job.ep.host, (unsigned)job.ep.port);
    if (on_ready)
        on_ready(arg, job.ep.port);
    side_init(&server, &job, wl, 1, &first_failed);
    server.lfd = lfd;
    if (o->pin)
        server.pin_cpu = o->server_cpu;
    rc = run_alone(&server, out, err);
out:
    if (lfd >= 0)
        job.tr->unlisten(&job.ep, &lfd);
    sm_pattern_fini(&pat);
    return rc;
}

int sm_runner_connect(const sm_params *p, const char *addr, uint16_t port, const sm_runner_opts *o,
                      sm_result *out, sm_error *err)
{
    const sm_workload_ops *wl;
    sm_job job;
    sm_pattern pat = {0};
    side_thread client;
    atomic_int first_failed = 0;
    int rc;

    sm_result_fini(out);
    sm_result_init(out);
    if ((rc = check_pair(p, err)))
        return rc;
    if (!addr || !addr[0] || strlen(addr) >= sizeof job.ep.host || port == 0)
        return sm_error_set(err, SM_EINVAL, "no server address to connect to: '%.80s' port %u",
                            addr ? addr : "", (unsigned)port);
    if ((rc = job_init(&job, &pat, p, o, true, &wl, err))) {
        sm_pattern_fini(&pat);
        return rc;
    }
    snprintf(job.ep.host, sizeof job.ep.host, "%s", addr);
    job.ep.port = port;
    job.client_opts.bind_from = o->source_addr;
    side_init(&client, &job, wl, 0, &first_failed);
    if (o->pin)
        client.pin_cpu = o->client_cpu;
    if (wants_hist(p)) {
        client.side.hist = sm_hist_new();
        if (!client.side.hist) {
            rc = sm_error_set(err, SM_ENOMEM, "out of memory for the latency histogram");
            goto out;
        }
    }
    start_clock(&job);
    rc = run_alone(&client, out, err);
out:
    sm_hist_free(client.side.hist);
    sm_pattern_fini(&pat);
    return rc;
}
