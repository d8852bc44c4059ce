/* Transports behind one table of operations: a new one is one table plus a registry line. */
#ifndef SM_AGENT_NET_TRANSPORT_H
#define SM_AGENT_NET_TRANSPORT_H

#include <stdint.h>

#include "agent/net/socket.h"
#include "proto/err.h"
#include "proto/params.h"

/* Where a server listens: host:port for tcp, a filesystem path for unix. */
typedef struct sm_endpoint {
    char host[64];
    uint16_t port;
    char path[108];
} sm_endpoint;

typedef struct sm_transport_ops {
    sm_transport_kind kind;
    const char *name;
    /* Listens at *ep (port 0 picks one); on success ep holds the bound address. */
    int (*listen)(sm_endpoint *ep, const sm_sockopts *o, int *lfd, sm_error *err);
    /* Connects to ep within timeout_ms. */
    int (*connect)(const sm_endpoint *ep, const sm_sockopts *o, int timeout_ms, int *fd,
                   sm_error *err);
    /* Accepts one connection within timeout_ms (SM_ETIMEDOUT when none). */
    int (*accept)(int lfd, const sm_sockopts *o, int timeout_ms, int *fd, sm_error *err);
    /* Closes the listener and removes what listen() created. */
    void (*unlisten)(const sm_endpoint *ep, int *lfd);
    /* Kernel counters of a connected socket: retransmits, smoothed RTT, RTO timeouts
     * and time in RTO recovery; NULL where the transport has none. */
    int (*info)(int fd, sm_net_tcp_stats *st, sm_error *err);
} sm_transport_ops;

/* The table for a transport; never NULL for a valid kind. */
const sm_transport_ops *sm_transport_get(sm_transport_kind kind);

#endif
