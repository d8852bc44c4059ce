/* Raw REP socket over nanomsg: receive with the routing header, reply to it later, and drop
 * the messages of a connection that keeps sending what is rejected. */
#include "coordinator/server/bus.h"

#include <errno.h>
#include <inttypes.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/clock.h"
#include "proto/log.h"

/* Connections with recent rejections. A small fixed table: a connection that sent nothing
 * wrong is never in it, and when it is full the entry heard from longest ago goes (its count
 * restarts; a throttled one is kept while any is not). */
#define PIPES_MAX 256

typedef struct pipe_state {
    uint32_t pipe;
    bool used;
    uint32_t rejects;
    int64_t window_ms; /* start of the counting window, monotonic */
    int64_t until_ms;  /* throttled until then; 0: not */
    int64_t last_ms;
} pipe_state;

struct sm_bus {
    int sock;
    uint64_t dropped;
    pipe_state pipes[PIPES_MAX];
};

static pipe_state *pipe_find(sm_bus *b, uint32_t pipe)
{
    for (size_t i = 0; i < PIPES_MAX; i++)
        if (b->pipes[i].used && b->pipes[i].pipe == pipe)
            return &b->pipes[i];
    return NULL;
}

static pipe_state *pipe_add(sm_bus *b, uint32_t pipe, int64_t now)
{
    pipe_state *victim = NULL;
    for (size_t i = 0; i < PIPES_MAX; i++) {
        pipe_state *p = &b->pipes[i];
        if (!p->used) {
            victim = p;
            break;
        }
        const bool throttled = p->until_ms > now;
        if (!victim || (victim->until_ms > now && !throttled) ||
            ((victim->until_ms > now) == throttled && p->last_ms < victim->last_ms))
            victim = p;
    }
    *victim = (pipe_state){.pipe = pipe, .used = true, .window_ms = now, .last_ms = now};
    return victim;
}

/* The pipe key raw REP puts first in the request's header: 4 bytes, big-endian. nanomsg's
 * SP_HDR control message holds the header's length (a size_t), then the header. */
static uint32_t pipe_of(struct nn_msghdr *hdr)
{
    for (struct nn_cmsghdr *c = NN_CMSG_FIRSTHDR(hdr); c != NULL; c = NN_CMSG_NXTHDR(hdr, c)) {
        if (c->cmsg_level != PROTO_SP || c->cmsg_type != SP_HDR ||
            c->cmsg_len < NN_CMSG_LEN(sizeof(size_t) + 4))
            continue;
        const unsigned char *d = NN_CMSG_DATA(c);
        size_t n;
        memcpy(&n, d, sizeof n);
        if (n < 4)
            continue;
        d += sizeof n;
        return (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
    }
    return 0;
}

int sm_bus_open(sm_bus **out, const char *url, sm_error *err)
{
    int s = nn_socket(AF_SP_RAW, NN_REP);
    if (s < 0)
        return sm_error_set(err, SM_ESYS, "nn_socket: %s", nn_strerror(nn_errno()));
    int max = SM_BUS_RCVMAX;
    if (nn_setsockopt(s, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max) < 0 ||
        nn_bind(s, url) < 0) {
        int e = nn_errno();
        nn_close(s);
        return sm_error_set(err, SM_ESYS, "cannot listen on %s: %s", url, nn_strerror(e));
    }
    sm_bus *b = calloc(1, sizeof *b);
    if (!b) {
        nn_close(s);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    b->sock = s;
    *out = b;
    return 0;
}

void sm_bus_close(sm_bus *b)
{
    if (!b)
        return;
    nn_close(b->sock);
    free(b);
}

int sm_bus_fd(sm_bus *b, sm_error *err)
{
    int fd;
    size_t sz = sizeof fd;
    if (nn_getsockopt(b->sock, NN_SOL_SOCKET, NN_RCVFD, &fd, &sz) < 0)
        return sm_error_set(err, SM_ESYS, "NN_RCVFD: %s", nn_strerror(nn_errno()));
    /* nanomsg keeps its descriptor; the event loop gets a duplicate it may close. */
    int d = dup(fd);
    if (d < 0)
        return sm_error_sys(err, errno, "dup");
    return d;
}

int sm_bus_recv(sm_bus *b, sm_bus_msg *m, sm_error *err)
{
    void *body = NULL, *control = NULL;
    struct nn_iovec iov = {.iov_base = &body, .iov_len = NN_MSG};
    struct nn_msghdr hdr;
    memset(&hdr, 0, sizeof hdr);
    hdr.msg_iov = &iov;
    hdr.msg_iovlen = 1;
    hdr.msg_control = &control;
    hdr.msg_controllen = NN_MSG;
    for (;;) {
        int n = nn_recvmsg(b->sock, &hdr, NN_DONTWAIT);
        if (n < 0) {
            int e = nn_errno();
            if (e == EAGAIN || e == EINTR)
                return 0;
            return sm_error_set(err, SM_ESYS, "nn_recvmsg: %s", nn_strerror(e));
        }
        const uint32_t pipe = pipe_of(&hdr);
        const pipe_state *p = pipe_find(b, pipe);
        if (p && p->until_ms > sm_mono_ms()) {
            /* Unread: a connection that keeps sending what is refused costs no MAC work. */
            nn_freemsg(body);
            nn_freemsg(control);
            body = control = NULL;
            b->dropped++;
            continue;
        }
        m->body = body;
        m->len = (size_t)n;
        m->hdr = control;
        m->pipe = pipe;
        return 1;
    }
}

int sm_bus_note_reject(sm_bus *b, const sm_bus_msg *m)
{
    const int64_t now = sm_mono_ms();
    pipe_state *p = pipe_find(b, m->pipe);
    if (!p)
        p = pipe_add(b, m->pipe, now);
    p->last_ms = now;
    if (now - p->window_ms > SM_BUS_REJECT_WINDOW_MS) {
        p->window_ms = now;
        p->rejects = 0;
    }
    if (++p->rejects < SM_BUS_REJECTS_MAX || p->until_ms > now)
        return 0;
    p->until_ms = now + SM_BUS_THROTTLE_MS;
    p->rejects = 0;
    sm_log(LOG_WARNING, "SM-BUS-THROTTLE",
           "connection %" PRIu32 " sent %d rejected messages within %d s: its messages are "
           "dropped unread for %d s (counted as \"throttled\")",
           m->pipe, SM_BUS_REJECTS_MAX, SM_BUS_REJECT_WINDOW_MS / 1000, SM_BUS_THROTTLE_MS / 1000);
    return 1;
}

uint64_t sm_bus_take_dropped(sm_bus *b)
{
    uint64_t n = b->dropped;
    b->dropped = 0;
    return n;
}

int sm_bus_reply(sm_bus *b, sm_bus_msg *m, const char *data, size_t len, sm_error *err)
{
    void *body = nn_allocmsg(len, 0);
    if (!body) {
        sm_bus_msg_fini(m);
        return sm_error_set(err, SM_ENOMEM, "nn_allocmsg of %zu bytes", len);
    }
    memcpy(body, data, len);
    struct nn_iovec iov = {.iov_base = &body, .iov_len = NN_MSG};
    struct nn_msghdr hdr;
    memset(&hdr, 0, sizeof hdr);
    hdr.msg_iov = &iov;
    hdr.msg_iovlen = 1;
    hdr.msg_control = &m->hdr;
    hdr.msg_controllen = NN_MSG;
    /* On success nanomsg owns both the body and the header. */
    int rc = nn_sendmsg(b->sock, &hdr, NN_DONTWAIT);
    if (rc < 0) {
        int e = nn_errno();
        nn_freemsg(body);
        sm_bus_msg_fini(m);
        /* The requester went away: its REQ will ask again on its own. */
        return sm_error_set(err, SM_ESYS, "nn_sendmsg: %s", nn_strerror(e));
    }
    m->hdr = NULL;
    if (m->body)
        nn_freemsg(m->body);
    m->body = NULL;
    return 0;
}

void sm_bus_msg_fini(sm_bus_msg *m)
{
    if (m->body)
        nn_freemsg(m->body);
    if (m->hdr)
        nn_freemsg(m->hdr);
    m->body = NULL;
    m->hdr = NULL;
    m->len = 0;
}
