/* connect: open, exchange one byte, close, repeated; latency is socket() to the echo. */
#include "agent/workloads/workload.h"

#include <stdio.h>

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

static int connect_server(sm_side *s, int lfd)
{
    int rc = 0;
    for (;;) {
        int fd = -1;
        char c;
        if ((rc = sm_io_accept(s, lfd, 1, &fd)) || fd < 0)
            break;
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
    double secs = (double)(client->t1_ns - client->t0_ns) / 1e9;
    sm_result_set(r, SM_M_SECONDS, secs);
    if (secs > 0)
        sm_result_set(r, SM_M_CONNECTS_PER_S, (double)client->msgs / secs);
    sm_result_set(r, SM_M_CONNECT_P50_US, (double)sm_hist_percentile(client->hist, 50) / 1e3);
    sm_io_put_cpu(client, server, r);
}

const sm_workload_ops sm_workload_connect = {SM_WL_CONNECT, "connect", connect_server,
                                             connect_client, connect_finish};
