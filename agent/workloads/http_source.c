/* The http workload's built-in source: GET /bytes/N over HTTP/1.1 (or TLS), one thread per
 * connection, every body written straight out of the payload pattern.
 *
 * The side's own thread accepts; each connection thread serves its requests in order and
 * ends when the client closes, when the job ends, or after a bad request. Every failure of
 * the job goes through src_fail, which keeps the first one: several threads share one side. */
#include "agent/workloads/http.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "agent/workloads/tls.h"
#include "agent/workloads/http_request.h"
#include "proto/log.h"

#define CHUNK_MAX (256u << 10) /* one write of a body */
/* Connections served at once beyond SM_HTTP_CONNECTIONS_MAX: a client that reconnects for
 * every transfer opens the next connection before our thread has read the old one's close. */
#define CONN_SLACK 8u
#define LIVE_MAX   (SM_HTTP_CONNECTIONS_MAX + CONN_SLACK)
/* After answering with Connection: close, what we still read and drop, and for how long. */
#define LINGER_BYTES (256u << 10)
#define LINGER_MS    500u
/* BIO_get_new_index never gives an index back, so one per job would run out: the type of our
 * socket BIO is a fixed one from the range left to applications. */
#define BIO_TYPE_SM_SOCKET ((BIO_TYPE_START + 23) | BIO_TYPE_SOURCE_SINK)

/* How a step of a connection ended, besides a failure of the job (negative, recorded): */
enum {
    GO = 0, /* go on */
    END = 1 /* end this connection, the job goes on */
};

typedef struct source source;

typedef struct conn {
    source *src;
    int fd;
    SSL *ssl;
    pthread_t thread;
    bool finished;  /* the thread is about to return (under src->mu) */
    bool linger;    /* we close first: drain what the client still sends (see linger_close) */
    bool tls_dead;  /* a fatal TLS error: no SSL_shutdown */
    int send_flags; /* extra send() flags for the BIO's next writes (MSG_MORE) */
    int sys_errno;  /* errno of the BIO's last failed call */
    uint32_t io_calls;
    uint64_t bytes; /* body bytes written */
    size_t have;    /* bytes in head */
    char head[SM_HTTP_HEAD_MAX];
    struct conn *next;
} conn;

struct source {
    sm_side *s;
    BIO_METHOD *bio_meth; /* NULL without TLS */
    pthread_mutex_t mu;   /* guards the fields below */
    pthread_cond_t cv;    /* a connection thread ended */
    conn *conns;          /* started and not yet joined */
    unsigned live;        /* connection threads running */
    uint64_t responses;   /* whole responses written */
    uint64_t bytes;
    sm_cpu cpu;
    sm_error err; /* the first failure */
};

/* Records the first failure of the job; `own` when it is the source's own, not a reaction to
 * the other side's, which then cancels the job as sm_io_fail does. Returns code. */
static int src_fail(source *src, bool own, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int src_fail(source *src, bool own, int code, const char *fmt, ...)
{
    pthread_mutex_lock(&src->mu);
    if (!src->err.code) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(src->err.msg, sizeof src->err.msg, fmt, ap);
        va_end(ap);
        src->err.code = code;
    }
    pthread_mutex_unlock(&src->mu);
    if (own)
        atomic_store(&src->s->job->cancel, 1);
    return code;
}

/* The checks of a blocked call's tick (io.c's on_tick). A local job's connection ends quietly
 * once the client is done (`quiet`): nobody is left to send it anything. */
static int job_check(source *src, bool quiet, const char *doing)
{
    sm_job *job = src->s->job;
    if (job->abort && atomic_load(job->abort))
        return src_fail(src, true, SM_ECANCELED, "cancelled while %s: the job was stopped", doing);
    if (atomic_load(&job->cancel))
        return src_fail(src, false, SM_ECANCELED, "cancelled while %s: the other side failed",
                        doing);
    if (quiet && !job->alone && atomic_load(&job->client_done))
        return END;
    if (sm_now_ns() >= job->deadline_ns)
        return src_fail(src, true, SM_ETIMEDOUT, "time limit of %u ms reached while %s",
                        job->p->time_limit_ms, doing);
    return GO;
}

static int conn_tick(conn *c, const char *doing)
{
    return job_check(c->src, true, doing);
}

/* A call that never blocks still looks at the clock now and then (SM_IO_CHECK_EVERY). */
static int conn_progress(conn *c, const char *doing)
{
    return ++c->io_calls % SM_IO_CHECK_EVERY ? GO : conn_tick(c, doing);
}

/* A client that goes away mid-connection ends that connection, not the job: in a local job
 * the client reports its own failure, and in a pair job it may be a stray client. */
static bool peer_gone(int e)
{
    return e == 0 || e == ECONNRESET || e == EPIPE || e == ETIMEDOUT || e == EHOSTUNREACH ||
           e == ENETUNREACH;
}

/* ---- the socket BIO under TLS: send() with MSG_NOSIGNAL, as the agent keeps SIGPIPE ---- */

static int bio_write(BIO *b, const char *buf, int len)
{
    conn *c = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    for (;;) {
        ssize_t n = send(c->fd, buf, (size_t)len, MSG_NOSIGNAL | c->send_flags);
        if (n >= 0)
            return (int)n;
        if (errno == EINTR)
            continue;
        c->sys_errno = errno;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            BIO_set_retry_write(b);
        return -1;
    }
}

static int bio_read(BIO *b, char *buf, int len)
{
    conn *c = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    for (;;) {
        ssize_t n = recv(c->fd, buf, (size_t)len, 0);
        if (n >= 0) {
            c->sys_errno = 0;
            return (int)n;
        }
        if (errno == EINTR)
            continue;
        c->sys_errno = errno;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            BIO_set_retry_read(b);
        return -1;
    }
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static BIO_METHOD *bio_method_new(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_TYPE_SM_SOCKET, "sockmatrix socket");
    if (m && BIO_meth_set_write(m, bio_write) && BIO_meth_set_read(m, bio_read) &&
        BIO_meth_set_ctrl(m, bio_ctrl))
        return m;
    BIO_meth_free(m);
    return NULL;
}

/* Logs why OpenSSL ended a connection and empties this thread's error queue. */
static int tls_end(conn *c, int ssl_err, const char *doing)
{
    char why[160] = "no reason given";
    unsigned long e = ERR_peek_error();
    c->tls_dead = true;
    if (e)
        ERR_error_string_n(e, why, sizeof why);
    else if (ssl_err == SSL_ERROR_SYSCALL)
        snprintf(why, sizeof why, "%s", strerror(c->sys_errno));
    ERR_clear_error();
    if (ssl_err == SSL_ERROR_SYSCALL && !peer_gone(c->sys_errno))
        return src_fail(c->src, true, SM_ESYS, "tls: %s while %s", why, doing);
    sm_log(LOG_WARNING, "SM-HTTP-TLS", "http source: TLS ended a connection while %s: %s", doing,
           why);
    return END;
}

/* GO while a TLS call may be retried (its socket timed out on the io tick), else how it ended. */
static int tls_retry(conn *c, int ret, const char *doing)
{
    int e = SSL_get_error(c->ssl, ret);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return conn_tick(c, doing);
    if (e == SSL_ERROR_ZERO_RETURN) {
        ERR_clear_error();
        return END;
    }
    if (e == SSL_ERROR_SYSCALL && peer_gone(c->sys_errno)) {
        c->tls_dead = true;
        ERR_clear_error();
        return END;
    }
    return tls_end(c, e, doing);
}

static int tls_start(conn *c)
{
    source *src = c->src;
    c->ssl = SSL_new(sm_tls_id_ctx(src->s->job->tls));
    BIO *bio = c->ssl ? BIO_new(src->bio_meth) : NULL;
    if (!bio) {
        ERR_clear_error();
        return src_fail(src, true, SM_ENOMEM, "tls: out of memory for a connection");
    }
    BIO_set_data(bio, c);
    BIO_set_init(bio, 1);
    SSL_set_bio(c->ssl, bio, bio);
    /* A write returns after each record, so that a timed-out write is retried from where it
     * stopped and the byte count stays exact. */
    SSL_set_mode(c->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE);
    for (;;) {
        ERR_clear_error();
        c->sys_errno = 0;
        int n = SSL_accept(c->ssl);
        if (n == 1)
            return GO;
        int rc = tls_retry(c, n, "in the TLS handshake");
        if (rc)
            return rc;
    }
}

/* ---- reads and writes bounded by the job's deadline and cancel flag ---- */

/* Reads some bytes; *got = 0 with GO when the client closed (or vanished). */
static int conn_read(conn *c, void *buf, size_t len, size_t *got, const char *doing)
{
    *got = 0;
    for (;;) {
        if (c->ssl) {
            ERR_clear_error();
            c->sys_errno = 0;
            int n = SSL_read(c->ssl, buf, len > INT_MAX ? INT_MAX : (int)len);
            if (n > 0) {
                *got = (size_t)n;
                return conn_progress(c, doing);
            }
            int rc = tls_retry(c, n, doing);
            if (rc == END && !c->tls_dead)
                return GO; /* close_notify: an orderly close */
            if (rc)
                return rc;
            continue;
        }
        ssize_t n = recv(c->fd, buf, len, 0);
        if (n >= 0) {
            *got = (size_t)n;
            return n ? conn_progress(c, doing) : GO;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int rc = conn_tick(c, doing);
            if (rc)
                return rc;
            continue;
        }
        if (peer_gone(errno))
            return GO;
        return src_fail(c->src, true, SM_ESYS, "recv: %s", strerror(errno));
    }
}

/* Writes all of buf; END when the client went away. Body bytes count as they leave. */
static int conn_write(conn *c, const void *buf, size_t len, int flags, bool body, const char *doing)
{
    const char *p = buf;
    c->send_flags = flags;
    while (len > 0) {
        ssize_t n;
        if (c->ssl) {
            ERR_clear_error();
            c->sys_errno = 0;
            int r = SSL_write(c->ssl, p, len > CHUNK_MAX ? (int)CHUNK_MAX : (int)len);
            if (r <= 0) {
                int rc = tls_retry(c, r, doing);
                if (rc)
                    return rc;
                continue;
            }
            n = r;
        } else {
            n = send(c->fd, p, len, MSG_NOSIGNAL | flags);
            if (n < 0) {
                int rc = GO;
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                    rc = conn_tick(c, doing);
                else if (peer_gone(errno))
                    rc = END;
                else if (errno != EINTR)
                    rc = src_fail(c->src, true, SM_ESYS, "send: %s", strerror(errno));
                if (rc)
                    return rc;
                continue;
            }
        }
        p += n;
        len -= (size_t)n;
        if (body)
            c->bytes += (uint64_t)n;
        int rc = conn_progress(c, doing);
        if (rc)
            return rc;
    }
    c->send_flags = 0;
    return GO;
}

/* Closing with unread bytes queued makes the kernel send a reset, which can destroy the
 * answer still on its way to the client (a 431 while the client is still sending its head):
 * so the source shuts down its side and reads what the client still sends, for a while. */
static void linger_close(conn *c)
{
    sm_error e;
    sm_job *job = c->src->s->job;
    c->send_flags = 0;
    if (c->ssl && !c->tls_dead)
        (void)SSL_shutdown(c->ssl);
    ERR_clear_error();
    if (sm_net_shutdown_write(c->fd, &e))
        return;
    uint64_t until = sm_now_ns() + (uint64_t)LINGER_MS * 1000000u;
    size_t total = 0;
    while (total < LINGER_BYTES && sm_now_ns() < until && !atomic_load(&job->cancel)) {
        ssize_t n = recv(c->fd, c->head, sizeof c->head, 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
            break;
        total += n > 0 ? (size_t)n : 0;
    }
}

/* Answers a bad request and ends the connection; the job goes on. */
static int answer_bad(conn *c, int status, const char *why)
{
    char buf[320];
    const char *text = sm_http_reason_phrase(status);
    int n = snprintf(buf, sizeof buf,
                     "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                     "%sConnection: close\r\n\r\n%s: %s\n",
                     status, text, strlen(text) + strlen(why) + 3,
                     status == 405 ? "Allow: GET\r\n" : "", text, why);
    sm_log(LOG_WARNING, "SM-HTTP-BAD", "http source: answered %d %s: %s", status, text, why);
    c->linger = true;
    int rc = conn_write(c, buf, (size_t)n, 0, false, "answering a bad request");
    return rc < 0 ? rc : END;
}

/* The client must be the one to see its time limit: the connection stays open, silent, until
 * the job ends or the client closes it. */
static int stall(conn *c)
{
    for (;;) {
        char b;
        int rc = conn_tick(c, "holding a stalled body");
        if (rc)
            return rc;
        ssize_t n = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return END;
        usleep(SM_IO_TICK_MS * 1000);
    }
}

/* One chunk of a body at offset off, with the byte at `flip` changed when it falls in it. */
static int write_chunk(conn *c, uint64_t off, size_t n, uint64_t flip)
{
    const uint8_t *data = sm_pattern_at(c->src->s->job->pat, off);
    if (flip < off || flip >= off + n)
        return conn_write(c, data, n, 0, true, "writing a body");
    uint8_t *bad = malloc(n);
    if (!bad)
        return src_fail(c->src, true, SM_ENOMEM, "out of memory");
    memcpy(bad, data, n);
    bad[flip - off] ^= 0x5a;
    int rc = conn_write(c, bad, n, 0, true, "writing a body");
    free(bad);
    return rc;
}

/* Writes the answer to a good request, applying an injected fault to its body. */
static int respond(conn *c, const sm_http_request *rq)
{
    const sm_job *job = c->src->s->job;
    const sm_fault fault = job->fault;
    const bool cut = fault == SM_FAULT_SHORT || fault == SM_FAULT_STALL;
    const uint64_t stop_at = cut ? rq->size / 2 : rq->size;
    const uint64_t flip = fault == SM_FAULT_CORRUPT ? rq->size / 2 : UINT64_MAX;
    char head[192];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                     "Content-Length: %llu\r\n%s\r\n",
                     (unsigned long long)rq->size,
                     rq->close    ? "Connection: close\r\n"
                     : rq->http10 ? "Connection: keep-alive\r\n"
                                  : "");
    /* MSG_MORE: the head leaves with the first bytes of the body, in one segment. */
    int rc = conn_write(c, head, (size_t)n, stop_at ? MSG_MORE : 0, false, "writing a response");
    size_t chunk = job->pat->window < CHUNK_MAX ? job->pat->window : CHUNK_MAX;
    if (chunk == 0)
        chunk = 1;
    for (uint64_t off = 0; !rc && off < stop_at;) {
        size_t len = stop_at - off < chunk ? (size_t)(stop_at - off) : chunk;
        rc = write_chunk(c, off, len, flip);
        off += len;
    }
    if (rc)
        return rc;
    if (fault == SM_FAULT_STALL)
        return stall(c);
    if (fault == SM_FAULT_SHORT) {
        c->linger = true;
        return END;
    }
    return GO;
}

/* Reads until the buffer holds a whole request head; *len is its length. */
static int read_head(conn *c, size_t *len)
{
    for (;;) {
        if ((*len = sm_http_head_end(c->head, c->have)) > 0)
            return GO;
        if (c->have == sizeof c->head)
            return answer_bad(c, 431, "the request head is longer than 8 KiB");
        size_t got;
        int rc = conn_read(c, c->head + c->have, sizeof c->head - c->have, &got,
                           c->have ? "reading a request" : "waiting for a request");
        if (rc)
            return rc;
        if (got == 0)
            return END;
        c->have += got;
    }
}

static int serve(conn *c)
{
    source *src = c->src;
    int rc = src->s->job->p->tls ? tls_start(c) : GO;
    while (!rc) {
        size_t len;
        sm_http_request rq = {0};
        const char *why = "";
        if ((rc = read_head(c, &len)))
            break;
        int status = sm_http_parse_head(c->head, len, &rq, &why);
        if (status != 200) {
            rc = answer_bad(c, status, why);
            break;
        }
        if ((rc = respond(c, &rq)))
            break;
        pthread_mutex_lock(&src->mu);
        src->responses++;
        pthread_mutex_unlock(&src->mu);
        /* A pipelined request may be in the buffer already. */
        memmove(c->head, c->head + len, c->have - len);
        c->have -= len;
        if (rq.close) {
            c->linger = true;
            rc = END;
        }
    }
    return rc;
}

static void *conn_main(void *arg)
{
    conn *c = arg;
    source *src = c->src;
    sm_cpu before, after;
    sm_cpu_thread(&before);
    int rc = serve(c);
    if (rc == END && c->linger)
        linger_close(c);
    else if (rc == END && c->ssl && !c->tls_dead)
        (void)SSL_shutdown(c->ssl); /* once: the client has closed, there is nothing to wait for */
    ERR_clear_error();
    SSL_free(c->ssl);
    c->ssl = NULL;
    sm_net_close(&c->fd);
    sm_cpu_thread(&after);
    sm_cpu d = sm_cpu_diff(&after, &before);
    pthread_mutex_lock(&src->mu);
    src->cpu.user_s += d.user_s;
    src->cpu.sys_s += d.sys_s;
    src->bytes += c->bytes;
    src->live--;
    c->finished = true;
    pthread_cond_broadcast(&src->cv);
    pthread_mutex_unlock(&src->mu);
    return NULL;
}

/* ---- the side's thread: accept, start, join ---- */

/* Joins the connection threads that ended, or all of them (waiting) when `all`. */
static void reap(source *src, bool all)
{
    for (;;) {
        conn *c = NULL;
        pthread_mutex_lock(&src->mu);
        for (conn **pp = &src->conns; *pp; pp = &(*pp)->next) {
            if (all || (*pp)->finished) {
                c = *pp;
                *pp = c->next;
                break;
            }
        }
        pthread_mutex_unlock(&src->mu);
        if (!c)
            return;
        pthread_join(c->thread, NULL);
        free(c);
    }
}

/* Whether to stop accepting: a local job's client is done, or, alone, every response the
 * client will ask for has been written (see http.h). */
static bool accept_over(source *src)
{
    const sm_side *s = src->s;
    const sm_job *job = s->job;
    if (s->accept_until_ns && sm_now_ns() >= s->accept_until_ns)
        return true;
    if (!job->alone)
        return atomic_load(&job->client_done) != 0;
    uint64_t want = (uint64_t)job->p->connections * job->p->repeat;
    pthread_mutex_lock(&src->mu);
    bool over = src->responses >= want;
    pthread_mutex_unlock(&src->mu);
    return over;
}

/* The next connection, or *fd = -1 with 0 once accept_over. */
static int accept_next(source *src, int lfd, int *fd)
{
    const sm_job *job = src->s->job;
    *fd = -1;
    for (;;) {
        reap(src, false);
        if (accept_over(src))
            return 0;
        sm_error e;
        int rc = job->tr->accept(lfd, &job->server_opts, SM_IO_TICK_MS, fd, &e);
        if (rc == 0)
            return 0;
        *fd = -1;
        if (rc != SM_ETIMEDOUT)
            return src_fail(src, true, rc, "%s", e.msg);
        if ((rc = job_check(src, false, "waiting for a connection")))
            return rc;
    }
}

/* Waits up to a tick for a free connection slot; false when there is none. */
static bool wait_slot(source *src)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += SM_IO_TICK_MS * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&src->mu);
    while (src->live >= LIVE_MAX && pthread_cond_timedwait(&src->cv, &src->mu, &until) == 0)
        ;
    bool free_slot = src->live < LIVE_MAX;
    pthread_mutex_unlock(&src->mu);
    return free_slot;
}

/* Starts a thread for the connection fd, which it then owns. */
static int start_conn(source *src, int fd)
{
    sm_side *s = src->s;
    sm_error e;
    int rc = sm_net_set_io_tick(fd, SM_IO_TICK_MS, &e);
    if (rc) {
        close(fd);
        return src_fail(src, true, rc, "%s", e.msg);
    }
    if (!s->sndbuf_eff && !s->rcvbuf_eff)
        sm_net_get_bufs(fd, &s->sndbuf_eff, &s->rcvbuf_eff);
    if (!wait_slot(src)) {
        sm_log(LOG_WARNING, "SM-HTTP-FULL",
               "http source: refused a connection, %u are open already", LIVE_MAX);
        close(fd);
        return 0;
    }
    conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return src_fail(src, true, SM_ENOMEM, "out of memory for a connection");
    }
    c->src = src;
    c->fd = fd;
    pthread_mutex_lock(&src->mu);
    rc = pthread_create(&c->thread, NULL, conn_main, c);
    if (rc == 0) {
        c->next = src->conns;
        src->conns = c;
        src->live++;
    }
    pthread_mutex_unlock(&src->mu);
    if (rc) {
        close(fd);
        free(c);
        return src_fail(src, true, SM_ESYS, "cannot start a connection thread: %s", strerror(rc));
    }
    return 0;
}

static int source_init(source *src, sm_side *s)
{
    pthread_condattr_t ca;
    memset(src, 0, sizeof *src);
    src->s = s;
    if (pthread_condattr_init(&ca))
        return sm_io_fail(s, SM_ENOMEM, "out of memory for the source");
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&src->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (rc)
        return sm_io_fail(s, SM_ENOMEM, "out of memory for the source");
    pthread_mutex_init(&src->mu, NULL);
    if (s->job->p->tls) {
        if (!s->job->tls) {
            rc = sm_io_fail(s, SM_EINVAL, "https asked for, but the agent has no TLS identity");
        } else if (!(src->bio_meth = bio_method_new())) {
            ERR_clear_error();
            rc = sm_io_fail(s, SM_ENOMEM, "tls: out of memory for the socket BIO");
        }
        if (rc) {
            pthread_mutex_destroy(&src->mu);
            pthread_cond_destroy(&src->cv);
        }
    }
    return rc;
}

int sm_http_source_serve(sm_side *s, int lfd)
{
    source src;
    int rc = source_init(&src, s);
    if (rc)
        return rc;
    for (;;) {
        int fd;
        if (accept_next(&src, lfd, &fd) || fd < 0 || start_conn(&src, fd))
            break;
    }
    reap(&src, true);
    s->bytes += src.bytes;
    s->msgs += src.responses;
    s->extra_cpu.user_s += src.cpu.user_s;
    s->extra_cpu.sys_s += src.cpu.sys_s;
    rc = src.err.code;
    if (rc)
        s->err = src.err;
    BIO_meth_free(src.bio_meth);
    pthread_mutex_destroy(&src.mu);
    pthread_cond_destroy(&src.cv);
    return rc;
}
