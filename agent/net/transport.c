/* The tcp and unix transports: thin adapters from the operations table onto socket.c. */
#include "agent/net/transport.h"

#include <unistd.h>

static int tcp_listen(sm_endpoint *ep, const sm_sockopts *o, int *lfd, sm_error *err)
{
    return sm_net_tcp_listen(ep->host, ep->port, o, lfd, &ep->port, err);
}

static int tcp_connect(const sm_endpoint *ep, const sm_sockopts *o, int timeout_ms, int *fd,
                       sm_error *err)
{
    return sm_net_tcp_connect(ep->host, ep->port, o, timeout_ms, fd, err);
}

static int tcp_accept(int lfd, const sm_sockopts *o, int timeout_ms, int *fd, sm_error *err)
{
    return sm_net_accept(lfd, true, o, timeout_ms, fd, err);
}

static void tcp_unlisten(const sm_endpoint *ep, int *lfd)
{
    (void)ep;
    sm_net_close(lfd);
}

static int unix_listen(sm_endpoint *ep, const sm_sockopts *o, int *lfd, sm_error *err)
{
    return sm_net_unix_listen(ep->path, o, lfd, err);
}

static int unix_connect(const sm_endpoint *ep, const sm_sockopts *o, int timeout_ms, int *fd,
                        sm_error *err)
{
    return sm_net_unix_connect(ep->path, o, timeout_ms, fd, err);
}

static int unix_accept(int lfd, const sm_sockopts *o, int timeout_ms, int *fd, sm_error *err)
{
    return sm_net_accept(lfd, false, o, timeout_ms, fd, err);
}

static void unix_unlisten(const sm_endpoint *ep, int *lfd)
{
    sm_net_close(lfd);
    if (ep->path[0])
        unlink(ep->path);
}

static const sm_transport_ops transports[SM_TR__COUNT] = {
    [SM_TR_TCP] = {SM_TR_TCP, "tcp", tcp_listen, tcp_connect, tcp_accept, tcp_unlisten,
                   sm_net_tcp_info},
    [SM_TR_UNIX] = {SM_TR_UNIX, "unix", unix_listen, unix_connect, unix_accept, unix_unlisten,
                    NULL},
};

const sm_transport_ops *sm_transport_get(sm_transport_kind kind)
{
    return (unsigned)kind < SM_TR__COUNT ? &transports[kind] : NULL;
}
