/* Blocking socket I/O bounded by the job's deadline and cancel flag. The sockets carry a
 * SO_RCVTIMEO/SO_SNDTIMEO tick, so a call that succeeds costs exactly one system call and a
 * blocked one wakes every tick to look at the clock. */
#include "agent/workloads/workload.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <string.h>
#include <unistd.h>

int sm_io_fail(sm_side *s, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s->err.code = code;
    vsnprintf(s->err.msg, sizeof s->err.msg, fmt, ap);
    va_end(ap);
    atomic_store(&s->job->cancel, 1);
    return code;
}

/* Called when a blocking call timed out on its tick: 0 to try again, else the failure. */
static int on_tick(sm_side *s, const char *doing)
{
    if (s->job->abort && atomic_load(s->job->abort))
        return sm_io_fail(s, SM_ECANCELED, "cancelled while %s: the job was stopped", doing);
    if (atomic_load(&s->job->cancel))
        return sm_error_set(&s->err, SM_ECANCELED, "cancelled while %s: the other side failed",
                            doing);
    if (sm_now_ns() >= s->job->deadline_ns)
        return sm_io_fail(s, SM_ETIMEDOUT, "time limit of %u ms reached while %s",
                          s->job->p->time_limit_ms, doing);
    return 0;
}

/* After a successful call: every SM_IO_CHECK_EVERY calls, the same checks as a tick. */
static int on_progress(sm_side *s, const char *doing)
{
    if (++s->io_calls % SM_IO_CHECK_EVERY != 0)
        return 0;
    return on_tick(s, doing);
}

int sm_io_check_end(sm_side *s)
{
    const sm_job *job = s->job;
    if (s->t1_ns == 0 || s->t1_ns <= job->deadline_ns)
        return 0;
    uint64_t limit_ns = (uint64_t)job->p->time_limit_ms * 1000000u;
    uint64_t start_ns = job->deadline_ns > limit_ns ? job->deadline_ns - limit_ns : 0;
    return sm_io_fail(s, SM_ETIMEDOUT,
                      "time limit of %u ms reached: the measured part ended %.1f ms after the "
                      "job started",
                      job->p->time_limit_ms, (double)(s->t1_ns - start_ns) / 1e6);
}

int sm_io_write_all(sm_side *s, int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            if (len == 0)
                return on_progress(s, "writing");
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int rc = on_tick(s, "writing");
            if (rc)
                return rc;
            continue;
        }
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
            if (atomic_load(&s->job->cancel))
                return sm_error_set(&s->err, SM_ECANCELED, "cancelled: the other side failed");
            return sm_io_fail(s, SM_ECLOSED, "peer closed the connection while we were writing");
        }
        return sm_io_fail(s, SM_ESYS, "send: %s", n < 0 ? strerror(errno) : "returned 0");
    }
    return 0;
}

int sm_io_read_some(sm_side *s, int fd, void *buf, size_t len, size_t *got)
{
    for (;;) {
        ssize_t n = recv(fd, buf, len, 0);
        if (n >= 0) {
            *got = (size_t)n;
            return on_progress(s, "reading");
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int rc = on_tick(s, "reading");
            if (rc)
                return rc;
            continue;
        }
        if (errno == ECONNRESET) {
            *got = 0;
            return 0;
        }
        return sm_io_fail(s, SM_ESYS, "recv: %s", strerror(errno));
    }
}

int sm_io_read_exact(sm_side *s, int fd, void *buf, size_t len, const char *what)
{
    char *p = buf;
    size_t left = len;
    while (left > 0) {
        size_t got;
        int rc = sm_io_read_some(s, fd, p, left, &got);
        if (rc)
            return rc;
        if (got == 0) {
            if (atomic_load(&s->job->cancel))
                return sm_error_set(&s->err, SM_ECANCELED, "cancelled: the other side failed");
            return sm_io_fail(s, SM_ECLOSED, "peer closed after %zu of the %zu bytes of %s",
                              len - left, len, what);
        }
        p += got;
        left -= got;
    }
    return 0;
}

int sm_io_expect_eof(sm_side *s, int fd, const char *what)
{
    char c;
    size_t got;
    int rc = sm_io_read_some(s, fd, &c, 1, &got);
    if (rc)
        return rc;
    if (got != 0)
        return sm_io_fail(s, SM_EPROTO, "peer sent more bytes than promised after %s", what);
    return 0;
}

int sm_io_accept(sm_side *s, int lfd, int stop_on_done, int *fd)
{
    const sm_job *job = s->job;
    for (;;) {
        sm_error e;
        int rc = job->tr->accept(lfd, &job->server_opts, SM_IO_TICK_MS, fd, &e);
        if (rc == 0)
            return 0;
        if (rc != SM_ETIMEDOUT)
            return sm_io_fail(s, rc, "%s", e.msg);
        if (stop_on_done && (atomic_load(&job->client_done) ||
                             (s->accept_until_ns && sm_now_ns() >= s->accept_until_ns))) {
            *fd = -1;
            return 0;
        }
        if ((rc = on_tick(s, "waiting for a connection")))
            return rc;
    }
}

int sm_io_connect(sm_side *s, int *fd)
{
    const sm_job *job = s->job;
    uint64_t now = sm_now_ns();
    if (now >= job->deadline_ns)
        return sm_io_fail(s, SM_ETIMEDOUT, "time limit of %u ms reached before connecting",
                          job->p->time_limit_ms);
    uint64_t left_ms = (job->deadline_ns - now) / 1000000u + 1;
    sm_error e;
    int rc = job->tr->connect(&job->ep, &job->client_opts, (int)(left_ms > 60000 ? 60000 : left_ms),
                              fd, &e);
    if (rc)
        return sm_io_fail(s, rc, "%s", e.msg);
    return 0;
}

int sm_io_prepare(sm_side *s, int fd)
{
    sm_error e;
    int rc = sm_net_set_io_tick(fd, SM_IO_TICK_MS, &e);
    if (rc)
        return sm_io_fail(s, rc, "%s", e.msg);
    sm_net_get_bufs(fd, &s->sndbuf_eff, &s->rcvbuf_eff);
    return 0;
}

void sm_io_record_info(sm_side *s, int fd)
{
    sm_error e;
    if (s->job->tr->info && s->job->tr->info(fd, &s->tcp, &e) == 0)
        s->have_tcp_info = 1;
}

void sm_io_put_cpu(const sm_side *client, const sm_side *server, sm_result *r)
{
    sm_io_put_cpu_side(client, 0, r);
    sm_io_put_cpu_side(server, 1, r);
}

void sm_io_put_cpu_side(const sm_side *s, int is_server, sm_result *r)
{
    sm_result_set(r, is_server ? SM_M_RX_USER_S : SM_M_TX_USER_S, s->cpu.user_s);
    sm_result_set(r, is_server ? SM_M_RX_SYS_S : SM_M_TX_SYS_S, s->cpu.sys_s);
}

void sm_io_put_tcp_info(const sm_side *client, sm_result *r)
{
    if (client->have_tcp_info) {
        sm_result_set(r, SM_M_TCP_RETRANS, client->tcp.retrans);
        sm_result_set(r, SM_M_TCP_RTT_US, client->tcp.rtt_us);
    }
}
