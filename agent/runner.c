/* One job, both ends on this host: listener, server and client threads, CPU per thread,
 * the time limit, and a verdict that names the side that failed first. */
#include "agent/runner.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proto/log.h"

typedef struct side_thread {
    sm_side side;
    const sm_workload_ops *wl;
    int lfd; /* server only */
    int is_server;
    int pin_cpu;              /* -1: leave the thread where the scheduler puts it */
    atomic_int *first_failed; /* 0 none, 1 server, 2 client */
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
    sm_cpu_thread(&before);
    t->side.rc = t->is_server ? t->wl->server(&t->side, t->lfd) : t->wl->client(&t->side);
    sm_cpu_thread(&after);
    t->side.cpu = sm_cpu_diff(&after, &before);
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

static int make_pattern(const sm_params *p, sm_pattern *pt)
{
    if (p->workload == SM_WL_STREAM && p->framing == SM_FRAMING_LINES)
        return sm_pattern_init_lines(pt, p->msg_size, (size_t)p->msg_size + 2);
    size_t window = 1;
    if (p->workload == SM_WL_STREAM)
        window = p->msg_size > sm_params_read_size(p) ? p->msg_size : sm_params_read_size(p);
    else if (p->workload == SM_WL_RR)
        window = p->req_size > p->resp_size ? p->req_size : p->resp_size;
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
}

int sm_runner_run(const sm_params *p, const sm_runner_opts *o, sm_result *out, sm_error *err)
{
    static atomic_uint seq;
    const sm_workload_ops *wl = sm_workload_get(p->workload);
    sm_job job;
    sm_pattern pat = {0};
    side_thread server, client;
    atomic_int first_failed = 0;
    pthread_t ts, tc;
    int rc, lfd = -1;

    sm_result_fini(out);
    sm_result_init(out);
    if (!wl)
        return sm_error_set(err, SM_EINVAL, "workload %s cannot run here",
                            sm_workload_name(p->workload));

    memset(&job, 0, sizeof job);
    job.p = p;
    job.tr = sm_transport_get(p->transport);
    job.fault = o->fault;
    job.abort = o->abort;
    job.pat = &pat;
    job.client_opts = (sm_sockopts){p->nodelay, p->cork, p->sndbuf, p->rcvbuf};
    job.server_opts = (sm_sockopts){p->nodelay, false, p->sndbuf, p->rcvbuf};
    if (p->transport == SM_TR_UNIX) {
        int n = snprintf(job.ep.path, sizeof job.ep.path, "%s/sm-%d-%u.sock", o->sock_dir,
                         (int)getpid(), atomic_fetch_add(&seq, 1));
        if (n < 0 || (size_t)n >= sizeof job.ep.path)
            return sm_error_set(err, SM_EINVAL, "socket directory path too long: %s", o->sock_dir);
    } else {
        snprintf(job.ep.host, sizeof job.ep.host, "%s", o->tcp_host ? o->tcp_host : "127.0.0.1");
    }
    if (make_pattern(p, &pat))
        return sm_error_set(err, SM_ENOMEM, "out of memory for the payload pattern");

    side_init(&server, &job, wl, 1, &first_failed);
    side_init(&client, &job, wl, 0, &first_failed);
    if (o->pin) {
        server.pin_cpu = o->server_cpu;
        client.pin_cpu = o->client_cpu;
    }
    if (p->workload != SM_WL_STREAM) {
        client.side.hist = sm_hist_new();
        if (!client.side.hist) {
            rc = sm_error_set(err, SM_ENOMEM, "out of memory for the latency histogram");
            goto out;
        }
    }
    if ((rc = job.tr->listen(&job.ep, &job.server_opts, &lfd, err)))
        goto out;
    server.lfd = lfd;
    job.deadline_ns = sm_now_ns() + (uint64_t)p->time_limit_ms * 1000000u;

    if ((rc = pthread_create(&ts, NULL, side_main, &server))) {
        rc = sm_error_set(err, SM_ESYS, "cannot start the server thread: %s", strerror(rc));
        goto out;
    }
    if ((rc = pthread_create(&tc, NULL, side_main, &client))) {
        /* Without a client the server would wait for its time limit: stop it now. */
        atomic_store(&job.cancel, 1);
        pthread_join(ts, NULL);
        rc = sm_error_set(err, SM_ESYS, "cannot start the client thread: %s", strerror(rc));
        goto out;
    }
    pthread_join(tc, NULL);
    pthread_join(ts, NULL);
    rc = 0;

    if (server.side.rc || client.side.rc) {
        int who = atomic_load(&first_failed);
        const side_thread *f = who == 1         ? &server
                               : who == 2       ? &client
                               : server.side.rc ? &server
                                                : &client;
        out->ok = false;
        /* "server: " or "client: " first; the precision keeps a long reason from pushing
         * it out. */
        snprintf(out->reason, sizeof out->reason, "%s: %.240s", f->is_server ? "server" : "client",
                 f->side.err.msg);
    } else {
        out->ok = true;
        wl->finish(&job, &server.side, &client.side, out);
        out->sndbuf_eff = client.side.sndbuf_eff;
        out->rcvbuf_eff = server.side.rcvbuf_eff;
        out->tx_cpu = client.side.cpu_id;
        out->rx_cpu = server.side.cpu_id;
        if (client.side.hist) {
            out->hist = client.side.hist;
            client.side.hist = NULL;
        }
    }
out:
    if (lfd >= 0)
        job.tr->unlisten(&job.ep, &lfd);
    sm_hist_free(client.side.hist);
    sm_pattern_fini(&pat);
    return rc;
}
