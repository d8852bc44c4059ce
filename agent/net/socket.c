/* Socket set-up for every transport, in one place. */
#include "agent/net/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
/* Not <netinet/tcp.h>: glibc's struct tcp_info stops at tcpi_total_retrans. */
#include <linux/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/log.h"

static int set_int(int fd, int level, int name, int value, const char *what, sm_error *err)
{
    if (setsockopt(fd, level, name, &value, sizeof value) != 0)
        return sm_error_sys(err, errno, "setsockopt %s=%d", what, value);
    return 0;
}

static int set_timeo(int fd, int name, int ms, sm_error *err)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    if (setsockopt(fd, SOL_SOCKET, name, &tv, sizeof tv) != 0)
        return sm_error_sys(err, errno, "setsockopt %s",
                            name == SO_RCVTIMEO ? "SO_RCVTIMEO" : "SO_SNDTIMEO");
    return 0;
}

/* Buffers go on before listen()/connect(): the window scale is agreed in the handshake. */
static int apply_bufs(int fd, const sm_sockopts *o, sm_error *err)
{
    if (o->sndbuf && set_int(fd, SOL_SOCKET, SO_SNDBUF, (int)o->sndbuf, "SO_SNDBUF", err))
        return SM_ESYS;
    if (o->rcvbuf && set_int(fd, SOL_SOCKET, SO_RCVBUF, (int)o->rcvbuf, "SO_RCVBUF", err))
        return SM_ESYS;
    return 0;
}

/* The options of both ends of a tcp connection. */
static int apply_tcp_ends(int fd, const sm_sockopts *o, sm_error *err)
{
    if (o->nodelay && set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY", err))
        return SM_ESYS;
    if (o->congestion && o->congestion[0] &&
        setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->congestion, strlen(o->congestion)) != 0)
        return sm_error_sys(err, errno, "setsockopt TCP_CONGESTION=%s", o->congestion);
    if (o->notsent_lowat && set_int(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, (int)o->notsent_lowat,
                                    "TCP_NOTSENT_LOWAT", err))
        return SM_ESYS;
    return 0;
}

static int apply_tcp(int fd, const sm_sockopts *o, sm_error *err)
{
    if (apply_tcp_ends(fd, o, err))
        return SM_ESYS;
    if (o->cork && set_int(fd, IPPROTO_TCP, TCP_CORK, 1, "TCP_CORK", err))
        return SM_ESYS;
    return 0;
}

static int parse_inet(const char *addr, uint16_t port, struct sockaddr_storage *ss, socklen_t *len,
                      sm_error *err)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons(port);
        *len = sizeof *in4;
        return 0;
    }
    if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        *len = sizeof *in6;
        return 0;
    }
    return sm_error_set(err, SM_EINVAL, "address '%s' is not an IPv4 or IPv6 literal", addr);
}

int sm_net_tcp_listen(const char *addr, uint16_t port, const sm_sockopts *o, int *fd,
                      uint16_t *bound_port, sm_error *err)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    int rc = parse_inet(addr, port, &ss, &len, err);
    if (rc)
        return rc;
    int s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return sm_error_sys(err, errno, "socket");
    if ((rc = set_int(s, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR", err)) ||
        (rc = apply_bufs(s, o, err)))
        goto fail;
    if (bind(s, (struct sockaddr *)&ss, len) != 0) {
        rc = sm_error_sys(err, errno, "bind %s:%u", addr, port);
        goto fail;
    }
    if (listen(s, 128) != 0) {
        rc = sm_error_sys(err, errno, "listen %s:%u", addr, port);
        goto fail;
    }
    len = sizeof ss;
    if (getsockname(s, (struct sockaddr *)&ss, &len) != 0) {
        rc = sm_error_sys(err, errno, "getsockname");
        goto fail;
    }
    *bound_port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                                : ((struct sockaddr_in6 *)&ss)->sin6_port);
    *fd = s;
    return 0;
fail:
    close(s);
    return rc;
}

/* A blocking connect() honours SO_SNDTIMEO for both TCP and Unix sockets, which bounds it
 * without a non-blocking dance; the timeout is cleared again by the caller's io tick. */
static int connect_timed(int s, const struct sockaddr *sa, socklen_t len, int timeout_ms,
                         const char *what, sm_error *err)
{
    int rc = set_timeo(s, SO_SNDTIMEO, timeout_ms > 0 ? timeout_ms : 1, err);
    if (rc)
        return rc;
    while (connect(s, sa, len) != 0) {
        if (errno == EINTR)
            continue;
        if (errno == EINPROGRESS || errno == EAGAIN)
            return sm_error_set(err, SM_ETIMEDOUT, "connect %s: no answer within %d ms", what,
                                timeout_ms);
        if (errno == ECONNREFUSED || errno == ENOENT)
            return sm_error_sys(err, errno, "connect %s", what);
        return sm_error_sys(err, errno, "connect %s", what);
    }
    return 0;
}

static int bind_source(int s, int family, const sm_sockopts *o, sm_error *err)
{
    struct sockaddr_storage src;
    socklen_t len = 0;
    if (!o->bind_from || !o->bind_from[0])
        return 0;
    int rc = parse_inet(o->bind_from, 0, &src, &len, err);
    if (rc || src.ss_family != family)
        return rc;
    if (bind(s, (struct sockaddr *)&src, len) != 0)
        return sm_error_sys(err, errno, "bind to the source address %s", o->bind_from);
    return 0;
}

int sm_net_tcp_connect(const char *addr, uint16_t port, const sm_sockopts *o, int timeout_ms,
                       int *fd, sm_error *err)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    char what[96];
    int rc = parse_inet(addr, port, &ss, &len, err);
    if (rc)
        return rc;
    snprintf(what, sizeof what, "%s:%u", addr, port);
    int s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return sm_error_sys(err, errno, "socket");
    if ((rc = apply_bufs(s, o, err)) || (rc = bind_source(s, ss.ss_family, o, err)) ||
        (rc = connect_timed(s, (struct sockaddr *)&ss, len, timeout_ms, what, err)) ||
        (rc = apply_tcp(s, o, err))) {
        close(s);
        return rc;
    }
    *fd = s;
    return 0;
}

static int unix_addr(const char *path, struct sockaddr_un *sun, sm_error *err)
{
    memset(sun, 0, sizeof *sun);
    sun->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sun->sun_path)
        return sm_error_set(err, SM_EINVAL, "unix socket path is longer than %zu bytes: %s",
                            sizeof sun->sun_path - 1, path);
    memcpy(sun->sun_path, path, strlen(path) + 1);
    return 0;
}

int sm_net_unix_listen(const char *path, const sm_sockopts *o, int *fd, sm_error *err)
{
    struct sockaddr_un sun;
    int rc = unix_addr(path, &sun, err);
    if (rc)
        return rc;
    /* Replace only a stale socket file, never a regular file someone pointed us at. */
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return sm_error_set(err, SM_EINVAL, "%s exists and is not a socket", path);
        unlink(path);
    }
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return sm_error_sys(err, errno, "socket AF_UNIX");
    if ((rc = apply_bufs(s, o, err)))
        goto fail;
    if (bind(s, (struct sockaddr *)&sun, sizeof sun) != 0) {
        rc = sm_error_sys(err, errno, "bind %s", path);
        goto fail;
    }
    if (listen(s, 128) != 0) {
        rc = sm_error_sys(err, errno, "listen %s", path);
        unlink(path);
        goto fail;
    }
    *fd = s;
    return 0;
fail:
    close(s);
    return rc;
}

int sm_net_unix_connect(const char *path, const sm_sockopts *o, int timeout_ms, int *fd,
                        sm_error *err)
{
    struct sockaddr_un sun;
    int rc = unix_addr(path, &sun, err);
    if (rc)
        return rc;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return sm_error_sys(err, errno, "socket AF_UNIX");
    if ((rc = apply_bufs(s, o, err)) ||
        (rc = connect_timed(s, (struct sockaddr *)&sun, sizeof sun, timeout_ms, path, err))) {
        close(s);
        return rc;
    }
    *fd = s;
    return 0;
}

/* Whether an accepted peer is the address text names (an IPv4 peer on an IPv6 socket comes
 * as ::ffff:a.b.c.d and matches a.b.c.d). */
static bool peer_is(const struct sockaddr_storage *peer, const char *text)
{
    uint8_t want[16], got[16];
    int fam;
    if (inet_pton(AF_INET, text, want) == 1)
        fam = AF_INET;
    else if (inet_pton(AF_INET6, text, want) == 1)
        fam = AF_INET6;
    else
        return false;
    if (peer->ss_family == AF_INET) {
        memcpy(got, &((const struct sockaddr_in *)peer)->sin_addr, 4);
        return fam == AF_INET && memcmp(got, want, 4) == 0;
    }
    if (peer->ss_family != AF_INET6)
        return false;
    const struct in6_addr *a6 = &((const struct sockaddr_in6 *)peer)->sin6_addr;
    if (fam == AF_INET6)
        return memcmp(a6, want, 16) == 0;
    return IN6_IS_ADDR_V4MAPPED(a6) && memcmp(a6->s6_addr + 12, want, 4) == 0;
}

static void peer_text(const struct sockaddr_storage *peer, char *buf, size_t len)
{
    if (peer->ss_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)peer)->sin_addr, buf, (socklen_t)len);
    else if (peer->ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)peer)->sin6_addr, buf, (socklen_t)len);
}

int sm_net_accept(int lfd, bool tcp, const sm_sockopts *o, int timeout_ms, int *fd, sm_error *err)
{
    struct pollfd pfd = {.fd = lfd, .events = POLLIN};
    int n;
    do
        n = poll(&pfd, 1, timeout_ms);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return sm_error_sys(err, errno, "poll on listener");
    if (n == 0)
        return sm_error_set(err, SM_ETIMEDOUT, "no connection within %d ms", timeout_ms);
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    int s = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
    if (s < 0) {
        if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
            return sm_error_set(err, SM_ETIMEDOUT, "connection went away before accept");
        return sm_error_sys(err, errno, "accept");
    }
    if (tcp && o->only_from && o->only_from[0] && !peer_is(&peer, o->only_from)) {
        /* A pair job's port is for its client alone: anyone else reaching it would be measured
         * as the job's traffic, or hold the port until the job's time limit. */
        char who[INET6_ADDRSTRLEN] = "?";
        peer_text(&peer, who, sizeof who);
        close(s);
        uint64_t k = o->refused ? ++*o->refused : 1;
        if ((k & (k - 1)) == 0)
            sm_log(LOG_WARNING, "SM-PAIR-PEER-REFUSED",
                   "closed a connection from %s to a pair job's port: only the job's client %s "
                   "may connect (%" PRIu64 " refused so far)",
                   who, o->only_from, k);
        return sm_error_set(err, SM_ETIMEDOUT, "closed a connection from %s", who);
    }
    /* TCP_CORK is a sender's option; an accepted (receiving) socket takes the others. */
    if (tcp && apply_tcp_ends(s, o, err)) {
        close(s);
        return SM_ESYS;
    }
    *fd = s;
    return 0;
}

int sm_net_set_io_tick(int fd, int tick_ms, sm_error *err)
{
    int rc = set_timeo(fd, SO_RCVTIMEO, tick_ms, err);
    return rc ? rc : set_timeo(fd, SO_SNDTIMEO, tick_ms, err);
}

void sm_net_get_bufs(int fd, uint32_t *sndbuf, uint32_t *rcvbuf)
{
    int v = 0;
    socklen_t len = sizeof v;
    *sndbuf = getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &len) == 0 && v > 0 ? (uint32_t)v : 0;
    len = sizeof v;
    *rcvbuf = getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len) == 0 && v > 0 ? (uint32_t)v : 0;
}

/* Linux 6.7 (commit 3868ab0f1925) appended, after tcpi_snd_wnd (offset 228, Linux 5.4):
 *   __u32 tcpi_rcv_wnd; __u32 tcpi_rehash; __u16 tcpi_total_rto;
 *   __u16 tcpi_total_rto_recoveries; __u32 tcpi_total_rto_time;   (ms)
 * The C library's kernel headers may predate them (linux-libc-dev 6.1 stops at tcpi_snd_wnd),
 * so they are read from the buffer at their fixed offsets. The layout is the kernel's ABI: it
 * only ever grows at the end, and the kernel copies as much of it as both it and the caller
 * know: a field beyond the returned length is one this kernel does not have. */
enum {
    TI_SND_WND_END = 232,
    TI_TOTAL_RTO = TI_SND_WND_END + 8,       /* __u16 */
    TI_TOTAL_RTO_TIME = TI_SND_WND_END + 12, /* __u32, ms */
    TI_RTO_END = TI_TOTAL_RTO_TIME + 4,
};
_Static_assert(offsetof(struct tcp_info, tcpi_snd_wnd) + sizeof(uint32_t) == TI_SND_WND_END,
               "struct tcp_info's layout differs from the kernel's ABI");

void sm_net_tcp_info_parse(const void *buf, size_t len, sm_net_tcp_stats *st)
{
    const unsigned char *raw = buf;
    uint32_t v;
    memset(st, 0, sizeof *st);
    if (len >= offsetof(struct tcp_info, tcpi_total_retrans) + sizeof v) {
        memcpy(&v, raw + offsetof(struct tcp_info, tcpi_total_retrans), sizeof v);
        st->retrans = v;
    }
    if (len >= offsetof(struct tcp_info, tcpi_rtt) + sizeof v) {
        memcpy(&v, raw + offsetof(struct tcp_info, tcpi_rtt), sizeof v);
        st->rtt_us = v;
    }
    st->rto = -1;
    st->rto_time_ms = -1;
    if (len >= TI_RTO_END) {
        uint16_t n;
        memcpy(&n, raw + TI_TOTAL_RTO, sizeof n);
        memcpy(&v, raw + TI_TOTAL_RTO_TIME, sizeof v);
        st->rto = n;
        st->rto_time_ms = v;
    }
}

int sm_net_tcp_info(int fd, sm_net_tcp_stats *st, sm_error *err)
{
    /* Room for the 6.7 fields whatever the headers declare. */
    union {
        struct tcp_info ti;
        unsigned char raw[TI_RTO_END];
    } u;
    socklen_t len = sizeof u;
    memset(&u, 0, sizeof u);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &u, &len) != 0)
        return sm_error_sys(err, errno, "getsockopt TCP_INFO");
    sm_net_tcp_info_parse(&u, len, st);
    return 0;
}

int sm_net_shutdown_write(int fd, sm_error *err)
{
    if (shutdown(fd, SHUT_WR) != 0 && errno != ENOTCONN)
        return sm_error_sys(err, errno, "shutdown");
    return 0;
}

void sm_net_shutdown_both(int fd)
{
    if (fd >= 0)
        (void)shutdown(fd, SHUT_RDWR);
}

void sm_net_close(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}
