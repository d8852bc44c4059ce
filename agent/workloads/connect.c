/* connect: open, exchange one byte, close, repeated; latency is socket() to the echo.
 *
 * The server serves until the client is done. In a pair job the client is on another host
 * and cannot say so: the server then stops after `count` connections, or, for a duration,
 * duration_ms + PAIR_GRACE_MS after its first connection (or at the time limit, if that
 * comes first) and ends ok; the client's side tells how many connections there were. */
#include "agent/workloads/workload.h"

#include <stdio.h>

/* Past the client's duration, counted from its first connection: room for the connection in
 * flight when the client's clock runs out, and for the two clocks starting apart. */
#define PAIR_GRACE_MS 5000u

static int connect_client(sm_side *s)
{
    const sm_params *p = s->job->p;
    uint64_t end = p->duration_ms ? sm_now_ns() + (uint64_t)p->duration_ms * 1000000u : 0;
    int rc = 0;
    s->t0_ns = sm_now_ns();
    uint64_t t = s->t0_ns;
    for (uint64_t i = 0; !rc && (end ? t < end : i < p->count); i++) {
        int fd = -1;
        char c = (char)('a' + i % 26), echo = 0;
        rc = sm_io_connect(s, &fd);
        if (!rc)
            rc = sm_io_prepare(s, fd);
        if (!rc)
            rc = sm_io_write_all(s, fd, &c, 1);
        if (!rc)
            rc = sm_io_read_exact(s, fd, &echo, 1, "the echo");
        if (!rc && echo != c)
            rc = sm_io_fail(s, SM_EVERIFY, "connection %llu: the echo differs from the byte sent",
                            (unsigned long long)i);
        uint64_t now = sm_now_ns();
        if (!rc) {
            sm_hist_record(s->hist, now - t);
            s->msgs++;
        }
        sm_net_close(&fd);
        t = sm_now_ns();
    }
    s->t1_ns = t;
    s->bytes = s->msgs;
    return rc;
}

/* A server alone stops by itself (see the top of the file). */
static int served_all(const sm_side *s)
{
    const sm_params *p = s->job->p;
    return s->job->alone && !p->duration_ms && s->msgs >= p->count;
}

static void after_first(sm_side *s)
{
    const sm_job *job = s->job;
    if (!job->alone || !job->p->duration_ms || s->accept_until_ns)
        return;
    uint64_t until = sm_now_ns() + ((uint64_t)job->p->duration_ms + PAIR_GRACE_MS) * 1000000u;
    s->accept_until_ns = until < job->deadline_ns ? until : job->deadline_ns;
}

static int connect_server(sm_side *s, int lfd)
{
    int rc = 0;
    while (!served_all(s)) {
        int fd = -1;
        char c;
        if ((rc = sm_io_accept(s, lfd, 1, &fd)) || fd < 0)
            break;
        after_first(s);
        rc = sm_io_prepare(s, fd);
        if (!rc)
            rc = sm_io_read_exact(s, fd, &c, 1, "the byte of a connection");
        if (!rc)
            rc = sm_io_write_all(s, fd, &c, 1);
        /* Let the client close first, so the server's accept loop is not the bottleneck. */
        if (!rc)
            rc = sm_io_expect_eof(s, fd, "the echo");
        sm_net_close(&fd);
        if (rc)
            break;
        s->msgs++;
    }
    s->bytes = s->msgs;
    return rc;
}

/* What the client measures: everything but the server's CPU. */
static void put_client(const sm_side *client, sm_result *r)
{
    double secs = (double)(client->t1_ns - client->t0_ns) / 1e9;
    sm_result_set(r, SM_M_SECONDS, secs);
    if (secs > 0)
        sm_result_set(r, SM_M_CONNECTS_PER_S, (double)client->msgs / secs);
    sm_result_set(r, SM_M_CONNECT_P50_US, (double)sm_hist_percentile(client->hist, 50) / 1e3);
}

static void connect_finish(const sm_job *job, const sm_side *server, const sm_side *client,
                           sm_result *r)
{
    (void)job;
    if (server->msgs != client->msgs) {
        r->ok = false;
        snprintf(r->reason, sizeof r->reason,
                 "the client completed %llu connections, the server served %llu",
                 (unsigned long long)client->msgs, (unsigned long long)server->msgs);
        return;
    }
    put_client(client, r);
    sm_io_put_cpu(client, server, r);
}

/* The client times the job; the server adds its CPU. */
static void connect_finish_side(const sm_job *job, const sm_side *s, int is_server, sm_result *r)
{
    (void)job;
    if (!is_server)
        put_client(s, r);
    sm_io_put_cpu_side(s, is_server, r);
}

const sm_workload_ops sm_workload_connect = {SM_WL_CONNECT,  "connect",      connect_server,
                                             connect_client, connect_finish, connect_finish_side};
