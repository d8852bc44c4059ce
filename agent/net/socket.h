/* All socket set-up of the agent: create, bind, listen, accept, connect, options, TCP_INFO.
 * Workloads never call socket() or setsockopt() themselves; they go through transport.h. */
#ifndef SM_AGENT_NET_SOCKET_H
#define SM_AGENT_NET_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"

/* Options applied to a data socket. Buffer sizes of 0 leave the kernel default. */
typedef struct sm_sockopts {
    bool nodelay;
    bool cork;
    uint32_t sndbuf;
    uint32_t rcvbuf;
    /* TCP_CONGESTION of both ends (NULL or "": the kernel's default) and TCP_NOTSENT_LOWAT (0:
     * the kernel's), which a treatment sets (proto/treatment.h). */
    const char *congestion;
    uint32_t notsent_lowat;
    /* Accepting: a connection from another address than this IPv4/IPv6 literal is closed at
     * once and counted in *refused (NULL or "": any peer). */
    const char *only_from;
    uint64_t *refused;
    /* Connecting over tcp: the source address to bind first, so that the server sees the
     * address it expects (NULL or "": the kernel's choice; ignored for another family). */
    const char *bind_from;
} sm_sockopts;

/* Listens on addr:port (IPv4 or IPv6 literal, port 0 = any) with SO_REUSEADDR; buffer sizes
 * are set on the listener so that accepted sockets inherit them before the handshake (the
 * window scale is fixed then). On success *fd is the listener and *bound_port its port. */
int sm_net_tcp_listen(const char *addr, uint16_t port, const sm_sockopts *o, int *fd,
                      uint16_t *bound_port, sm_error *err);

/* Connects to addr:port, waiting at most timeout_ms; applies o before connecting (buffers)
 * and after (nodelay, cork). */
int sm_net_tcp_connect(const char *addr, uint16_t port, const sm_sockopts *o, int timeout_ms,
                       int *fd, sm_error *err);

/* Listens on a filesystem Unix stream socket at path (an existing socket file there is
 * replaced). */
int sm_net_unix_listen(const char *path, const sm_sockopts *o, int *fd, sm_error *err);
int sm_net_unix_connect(const char *path, const sm_sockopts *o, int timeout_ms, int *fd,
                        sm_error *err);

/* Waits at most timeout_ms for a connection on lfd and accepts it (close-on-exec).
 * Returns SM_ETIMEDOUT when none came, or when the one that came was from another address than
 * o->only_from and was closed (logged at the 1st, 2nd, 4th, 8th... such). `tcp` says whether
 * nodelay and only_from apply. */
int sm_net_accept(int lfd, bool tcp, const sm_sockopts *o, int timeout_ms, int *fd, sm_error *err);

/* Sets SO_RCVTIMEO and SO_SNDTIMEO so that blocking reads and writes return EAGAIN every
 * tick_ms: the workloads then check their deadline and the cancel flag without a poll() per
 * operation. */
int sm_net_set_io_tick(int fd, int tick_ms, sm_error *err);

/* Effective SO_SNDBUF / SO_RCVBUF as the kernel reports them (0 when unknown). */
void sm_net_get_bufs(int fd, uint32_t *sndbuf, uint32_t *rcvbuf);

/* TCP_INFO of a connected socket, as far as this kernel fills it. */
typedef struct sm_net_tcp_stats {
    uint32_t retrans; /* tcpi_total_retrans: segments retransmitted over the connection */
    uint32_t rtt_us;  /* tcpi_rtt: smoothed round-trip time */
    /* Linux 6.7: the RTO timeouts (tcpi_total_rto, SYN's and repeated ones included) and the
     * time spent in RTO recovery (tcpi_total_rto_time, ms, one still under way included); -1
     * on an older kernel. */
    int32_t rto;
    int64_t rto_time_ms;
} sm_net_tcp_stats;

/* Fills *st from TCP_INFO; 0 or SM_ESYS with err set. */
int sm_net_tcp_info(int fd, sm_net_tcp_stats *st, sm_error *err);
/* Fills *st from the first len bytes of a struct tcp_info as the kernel copied it: a field
 * beyond len is unknown (the RTO fields -1, the others 0). Pure; sm_net_tcp_info's reader. */
void sm_net_tcp_info_parse(const void *buf, size_t len, sm_net_tcp_stats *st);

/* shutdown(SHUT_WR): flushes corked data and tells the peer no more bytes follow. */
int sm_net_shutdown_write(int fd, sm_error *err);
/* shutdown(SHUT_RDWR), errors ignored: wakes a peer or a thread blocked on fd. */
void sm_net_shutdown_both(int fd);

/* Closes fd if >= 0 and sets it to -1. */
void sm_net_close(int *fd);

#endif
