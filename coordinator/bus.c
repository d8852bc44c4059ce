/* Raw REP socket over nanomsg: receive with the routing header, reply to it later. */
#include "coordinator/bus.h"

#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sm_bus {
    int sock;
};

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
    sm_bus *b = malloc(sizeof *b);
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
    int n = nn_recvmsg(b->sock, &hdr, NN_DONTWAIT);
    if (n < 0) {
        int e = nn_errno();
        if (e == EAGAIN || e == EINTR)
            return 0;
        return sm_error_set(err, SM_ESYS, "nn_recvmsg: %s", nn_strerror(e));
    }
    m->body = body;
    m->len = (size_t)n;
    m->hdr = control;
    return 1;
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
