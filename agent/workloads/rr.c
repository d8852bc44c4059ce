/* rr: request/response round trips; the client times each one into a histogram (ns). */
#include "agent/workloads/workload.h"

#include <stdio.h>
#include <stdlib.h>

static int rr_client(sm_side *s)
{
    const sm_job *job = s->job;
    const sm_params *p = job->p;
    int fd = -1;
    uint8_t *resp = malloc(p->resp_size);
    if (!resp)
        return sm_io_fail(s, SM_ENOMEM, "out of memory");
    int rc = sm_io_connect(s, &fd);
    if (!rc)
        rc = sm_io_prepare(s, fd);
    uint64_t end = p->duration_ms ? sm_now_ns() + (uint64_t)p->duration_ms * 1000000u : 0;
    s->t0_ns = sm_now_ns();
    uint64_t t = s->t0_ns;
    for (uint64_t i = 0; !rc && (end ? t < end : i < p->count); i++) {
        rc = sm_io_write_all(s, fd, sm_pattern_at(job->pat, i * p->req_size), p->req_size);
        if (!rc)
            rc = sm_io_read_exact(s, fd, resp, p->resp_size, "a response");
        if (rc)
            break;
        uint64_t now = sm_now_ns();
        sm_hist_record(s->hist, now - t);
        t = now;
        if (sm_pattern_check(job->pat, i * p->resp_size, resp, p->resp_size) >= 0)
            rc = sm_io_fail(s, SM_EVERIFY, "response %llu differs from what the server sent",
                            (unsigned long long)i);
        s->msgs++;
    }
    s->t1_ns = t;
    s->bytes = s->msgs * ((uint64_t)p->req_size + p->resp_size);
    if (!rc) {
        sm_io_record_info(s, fd);
        sm_error e;
        if (sm_net_shutdown_write(fd, &e))
            rc = sm_io_fail(s, SM_ESYS, "%s", e.msg);
    }
    /* Wait for the server to see our end, so both sides agree on the count. */
    if (!rc)
        rc = sm_io_expect_eof(s, fd, "the last response");
    sm_net_close(&fd);
    free(resp);
    return rc;
}

static int rr_server(sm_side *s, int lfd)
{
    const sm_job *job = s->job;
    const sm_params *p = job->p;
    int fd = -1;
    uint8_t *req = malloc(p->req_size);
    if (!req)
        return sm_io_fail(s, SM_ENOMEM, "out of memory");
    int rc = sm_io_accept(s, lfd, 0, &fd);
    if (!rc)
        rc = sm_io_prepare(s, fd);
    for (uint64_t i = 0; !rc; i++) {
        /* The first byte of a request may instead be the end of the job. */
        size_t got;
        if ((rc = sm_io_read_some(s, fd, req, p->req_size, &got)) || got == 0)
            break;
        if (got < p->req_size)
            rc = sm_io_read_exact(s, fd, req + got, p->req_size - got, "a request");
        if (rc)
            break;
        if (sm_pattern_check(job->pat, i * p->req_size, req, p->req_size) >= 0) {
            rc = sm_io_fail(s, SM_EVERIFY, "request %llu differs from what the client sent",
                            (unsigned long long)i);
            break;
        }
        rc = sm_io_write_all(s, fd, sm_pattern_at(job->pat, i * p->resp_size), p->resp_size);
        if (!rc)
            s->msgs++;
    }
    s->bytes = s->msgs * ((uint64_t)p->req_size + p->resp_size);
    sm_net_close(&fd);
    free(req);
    return rc;
}

/* What the client measures: everything but the server's CPU. */
static void put_client(const sm_side *client, sm_result *r)
{
    double secs = (double)(client->t1_ns - client->t0_ns) / 1e9;
    const sm_hist *h = client->hist;
    sm_result_set(r, SM_M_BYTES, (double)client->bytes);
    sm_result_set(r, SM_M_SECONDS, secs);
    if (secs > 0)
        sm_result_set(r, SM_M_RT_PER_S, (double)client->msgs / secs);
    sm_result_set(r, SM_M_RTT_P50_US, (double)sm_hist_percentile(h, 50) / 1e3);
    sm_result_set(r, SM_M_RTT_P90_US, (double)sm_hist_percentile(h, 90) / 1e3);
    sm_result_set(r, SM_M_RTT_P99_US, (double)sm_hist_percentile(h, 99) / 1e3);
    sm_result_set(r, SM_M_RTT_P999_US, (double)sm_hist_percentile(h, 99.9) / 1e3);
    sm_result_set(r, SM_M_RTT_MAX_US, (double)sm_hist_max(h) / 1e3);
}

static void rr_finish(const sm_job *job, const sm_side *server, const sm_side *client, sm_result *r)
{
    (void)job;
    if (server->msgs != client->msgs) {
        r->ok = false;
        snprintf(r->reason, sizeof r->reason,
                 "the client completed %llu round trips, the server answered %llu",
                 (unsigned long long)client->msgs, (unsigned long long)server->msgs);
        return;
    }
    put_client(client, r);
    sm_io_put_cpu(client, server, r);
    sm_io_put_tcp_info(client, r);
}

/* The client times every round trip, so it has all the job's numbers but the server's CPU;
 * the server reports its count as bytes for sm_result_merge_pair to compare. */
static void rr_finish_side(const sm_job *job, const sm_side *s, int is_server, sm_result *r)
{
    (void)job;
    if (is_server) {
        sm_result_set(r, SM_M_BYTES, (double)s->bytes);
    } else {
        put_client(s, r);
        sm_io_put_tcp_info(s, r);
    }
    sm_io_put_cpu_side(s, is_server, r);
}

const sm_workload_ops sm_workload_rr = {SM_WL_RR,  "rr",      rr_server,
                                        rr_client, rr_finish, rr_finish_side};
