/* Fingerprint items of the network interfaces: links and qdiscs over netlink (libnl-route-3),
 * driver, speed and offloads through the ethtool ioctl, and which one carries the data. */
#include "agent/host/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/pkt_sched.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/class.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/fifo.h>
#include <netlink/route/qdisc/fq_codel.h>
#include <netlink/route/qdisc/htb.h>
#include <netlink/route/qdisc/prio.h>
#include <netlink/route/qdisc/sfq.h>
#include <netlink/route/qdisc/tbf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* What the interfaces' items are read with. */
typedef struct net_ctx {
    struct nl_sock *sk;
    struct nl_cache *qdiscs; /* NULL when qerr */
    int qerr;                /* errno of the failed qdisc dump, 0 */
    int fd;                  /* for the ethtool ioctl; -1 when none could be made */
} net_ctx;

/* An errno for a libnl error code (libnl keeps its own numbers). */
static int nl_errno(int nlerr)
{
    switch (nlerr < 0 ? -nlerr : nlerr) {
    case NLE_NOMEM:
        return ENOMEM;
    case NLE_PERM:
        return EPERM;
    case NLE_NOACCESS:
        return EACCES;
    case NLE_OPNOTSUPP:
        return EOPNOTSUPP;
    case NLE_AF_NOSUPPORT:
        return EAFNOSUPPORT;
    case NLE_OBJ_NOTFOUND:
        return ENOENT;
    case NLE_DUMP_INTR: /* the interfaces kept changing while they were listed */
        return EAGAIN;
    default:
        return EPROTO;
    }
}

const char *sm_fp_rate_text(unsigned long long bits_per_s, char *buf, size_t len)
{
    static const char *const units[] = {"bit", "Kbit", "Mbit", "Gbit", "Tbit"};
    double v = (double)bits_per_s;
    size_t u = 0;
    while (v >= 1000.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1000.0;
        u++;
    }
    snprintf(buf, len, "%.6g%s", v, units[u]);
    return buf;
}

const char *sm_fp_size_text(unsigned long long bytes, char *buf, size_t len)
{
    if (bytes >= 1024ull * 1024 && bytes % (1024ull * 1024) == 0)
        snprintf(buf, len, "%lluMb", bytes / (1024ull * 1024));
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, len, "%lluKb", bytes / 1024);
    else
        snprintf(buf, len, "%llub", bytes);
    return buf;
}

/* A time in microseconds as tc prints it: "5ms", "100ms", "1.5s", "800us". */
static const char *time_text(unsigned long long us, char *buf, size_t len)
{
    if (us >= 1000000)
        snprintf(buf, len, "%.3gs", (double)us / 1e6);
    else if (us >= 1000)
        snprintf(buf, len, "%.3gms", (double)us / 1e3);
    else
        snprintf(buf, len, "%lluus", us);
    return buf;
}

/* A handle as tc writes it ("1:10", "1:", ":1"); a major the kernel assigned itself (8001:)
 * is left out, so that two hosts with the same shaping give the same text. */
static const char *handle_text(uint32_t h, char *buf, size_t len)
{
    uint32_t maj = TC_H_MAJ(h) >> 16, min = TC_H_MIN(h);
    if (maj & 0x8000)
        maj = 0;
    char a[16] = "", b[16] = "";
    if (maj)
        snprintf(a, sizeof a, "%x", maj);
    if (min || !maj)
        snprintf(b, sizeof b, "%x", min);
    snprintf(buf, len, "%s:%s", a, b);
    return buf;
}

/* A peak rate is said only when there is one: without it two tbfs of one text could differ, and
 * the agent, which sets a tbf back from this text (agent/experiment/qdisc.c), would drop it. */
static void tbf_text(struct rtnl_qdisc *q, char *out, size_t len)
{
    char r[32], b[32], l[32], pr[32], pb[32];
    int rate = rtnl_qdisc_tbf_get_rate(q), bucket = rtnl_qdisc_tbf_get_rate_bucket(q);
    int limit = rtnl_qdisc_tbf_get_limit(q), peak = rtnl_qdisc_tbf_get_peakrate(q);
    int n = snprintf(out, len, "tbf rate %s burst %s limit %s",
                     sm_fp_rate_text(rate > 0 ? 8ull * (unsigned)rate : 0, r, sizeof r),
                     sm_fp_size_text(bucket > 0 ? (unsigned)bucket : 0, b, sizeof b),
                     sm_fp_size_text(limit > 0 ? (unsigned)limit : 0, l, sizeof l));
    if (peak > 0 && n > 0 && (size_t)n < len) {
        int mtu = rtnl_qdisc_tbf_get_peakrate_bucket(q);
        snprintf(out + n, len - (size_t)n, " peakrate %s mtu %s",
                 sm_fp_rate_text(8ull * (unsigned)peak, pr, sizeof pr),
                 sm_fp_size_text(mtu > 0 ? (unsigned)mtu : 0, pb, sizeof pb));
    }
}

static void fq_codel_text(struct rtnl_qdisc *q, char *out, size_t len)
{
    char t[32], i[32];
    snprintf(out, len, "fq_codel limit %dp flows %d quantum %u target %s interval %s%s",
             rtnl_qdisc_fq_codel_get_limit(q), rtnl_qdisc_fq_codel_get_flows(q),
             rtnl_qdisc_fq_codel_get_quantum(q),
             time_text(rtnl_qdisc_fq_codel_get_target(q), t, sizeof t),
             time_text(rtnl_qdisc_fq_codel_get_interval(q), i, sizeof i),
             rtnl_qdisc_fq_codel_get_ecn(q) > 0 ? " ecn" : "");
}

static void prio_text(struct rtnl_qdisc *q, char *out, size_t len)
{
    int bands = rtnl_qdisc_prio_get_bands(q);
    const uint8_t *map = rtnl_qdisc_prio_get_priomap(q);
    int at = snprintf(out, len, "prio bands %d", bands);
    if (map == NULL || at < 0)
        return;
    at += snprintf(out + at, len - (size_t)at, " priomap");
    for (int i = 0; i <= TC_PRIO_MAX && (size_t)at < len; i++)
        at += snprintf(out + at, len - (size_t)at, " %u", map[i]);
}

/* A qdisc as tc describes it, without its handle: the kind and the parameters libnl exposes
 * for it; the kind alone for the others. */
static void qdisc_text(struct rtnl_qdisc *q, char *out, size_t len)
{
    const char *kind = rtnl_tc_get_kind(TC_CAST(q));
    char s[32];
    if (kind == NULL)
        snprintf(out, len, "unknown");
    else if (strcmp(kind, "tbf") == 0)
        tbf_text(q, out, len);
    else if (strcmp(kind, "htb") == 0)
        snprintf(out, len, "htb default %#x", rtnl_htb_get_defcls(q));
    else if (strcmp(kind, "fq_codel") == 0)
        fq_codel_text(q, out, len);
    else if (strcmp(kind, "sfq") == 0)
        snprintf(out, len, "sfq limit %dp quantum %s perturb %dsec divisor %d",
                 rtnl_sfq_get_limit(q),
                 sm_fp_size_text((unsigned)rtnl_sfq_get_quantum(q), s, sizeof s),
                 rtnl_sfq_get_perturb(q), rtnl_sfq_get_divisor(q));
    else if (strcmp(kind, "prio") == 0)
        prio_text(q, out, len);
    else if (strcmp(kind, "pfifo") == 0)
        snprintf(out, len, "pfifo limit %dp", rtnl_qdisc_fifo_get_limit(q));
    else if (strcmp(kind, "bfifo") == 0)
        snprintf(out, len, "bfifo limit %s",
                 sm_fp_size_text((unsigned)rtnl_qdisc_fifo_get_limit(q), s, sizeof s));
    else
        snprintf(out, len, "%s", kind);
}

static void htb_class_text(struct rtnl_class *c, char *out, size_t len)
{
    uint64_t rate = 0, ceil = 0;
    char r[32], cl[32], b[32], cb[32];
    if (rtnl_htb_get_rate64(c, &rate) < 0)
        rate = rtnl_htb_get_rate(c);
    if (rtnl_htb_get_ceil64(c, &ceil) < 0)
        ceil = rtnl_htb_get_ceil(c);
    snprintf(out, len, "htb rate %s ceil %s burst %s cburst %s",
             sm_fp_rate_text(8 * rate, r, sizeof r), sm_fp_rate_text(8 * ceil, cl, sizeof cl),
             sm_fp_size_text(rtnl_htb_get_rbuffer(c), b, sizeof b),
             sm_fp_size_text(rtnl_htb_get_cbuffer(c), cb, sizeof cb));
}

/* if.N.class.<classid> for the htb classes of interface ifindex. */
static int class_items(net_ctx *nc, sm_fp_iface *f, int ifindex, sm_error *err)
{
    struct nl_cache *cache = NULL;
    char key[SM_FP_KEY_MAX + 1], h[32], v[256];
    int nlrc = rtnl_class_alloc_cache(nc->sk, ifindex, &cache);
    if (nlrc < 0) {
        snprintf(key, sizeof key, "if.%s.class", f->name);
        return sm_fpc_unreadable(&f->items, key, nl_errno(nlrc), err);
    }
    int rc = 0;
    for (struct nl_object *o = nl_cache_get_first(cache); o && !rc; o = nl_cache_get_next(o)) {
        struct rtnl_class *c = (struct rtnl_class *)o;
        const char *kind = rtnl_tc_get_kind(TC_CAST(c));
        if (kind == NULL || strcmp(kind, "htb") != 0)
            continue;
        htb_class_text(c, v, sizeof v);
        snprintf(key, sizeof key, "if.%s.class.%s", f->name,
                 handle_text(rtnl_tc_get_handle(TC_CAST(c)), h, sizeof h));
        rc = sm_fpc_put(&f->items, key, v, err);
    }
    nl_cache_free(cache);
    return rc;
}

/* The root qdisc of ifindex in the cache, NULL when it lists none. */
static struct rtnl_qdisc *root_qdisc(struct nl_cache *qdiscs, int ifindex)
{
    for (struct nl_object *o = nl_cache_get_first(qdiscs); o; o = nl_cache_get_next(o)) {
        struct rtnl_qdisc *q = (struct rtnl_qdisc *)o;
        if (rtnl_tc_get_ifindex(TC_CAST(q)) == ifindex &&
            rtnl_tc_get_parent(TC_CAST(q)) == TC_H_ROOT)
            return q;
    }
    return NULL;
}

int sm_fp_root_qdisc(const char *ifname, char *out, size_t len, sm_error *err)
{
    struct nl_sock *sk = nl_socket_alloc();
    struct rtnl_link *link = NULL;
    struct nl_cache *qdiscs = NULL;
    int rc = 0, nlrc = sk ? nl_connect(sk, NETLINK_ROUTE) : -NLE_NOMEM;
    if (nlrc >= 0 && (nlrc = rtnl_link_get_kernel(sk, 0, ifname, &link)) < 0) {
        rc = nlrc == -NLE_OBJ_NOTFOUND || nlrc == -NLE_NODEV
                 ? sm_error_set(err, SM_EINVAL, "no interface %s here", ifname)
                 : sm_error_sys(err, nl_errno(nlrc), "interface %s: not read", ifname);
        goto out;
    }
    if (nlrc >= 0)
        nlrc = rtnl_qdisc_alloc_cache(sk, &qdiscs);
    for (int i = 0; nlrc == -NLE_DUMP_INTR && i < 2; i++)
        nlrc = rtnl_qdisc_alloc_cache(sk, &qdiscs);
    if (nlrc < 0) {
        rc = sm_error_sys(err, nl_errno(nlrc), "qdiscs of %s: not read", ifname);
        goto out;
    }
    struct rtnl_qdisc *q = root_qdisc(qdiscs, rtnl_link_get_ifindex(link));
    if (q != NULL)
        qdisc_text(q, out, len);
    else if (!(rtnl_link_get_flags(link) & IFF_UP))
        snprintf(out, len, "noop"); /* as qdisc_items says it */
    else
        rc = sm_error_sys(err, ENOENT, "qdiscs of %s: no root qdisc listed", ifname);
out:
    if (qdiscs)
        nl_cache_free(qdiscs);
    if (link)
        rtnl_link_put(link);
    nl_socket_free(sk);
    return rc;
}

/* if.N.qdisc (the root), if.N.qdisc.<parent> for the others, and the htb classes. */
static int qdisc_items(net_ctx *nc, sm_fp_iface *f, int ifindex, sm_error *err)
{
    char key[SM_FP_KEY_MAX + 1], h[32], v[512];
    snprintf(key, sizeof key, "if.%s.qdisc", f->name);
    if (nc->qerr)
        return sm_fpc_unreadable(&f->items, key, nc->qerr, err);
    bool root = false, htb = false;
    int rc = 0;
    for (struct nl_object *o = nl_cache_get_first(nc->qdiscs); o && !rc; o = nl_cache_get_next(o)) {
        struct rtnl_qdisc *q = (struct rtnl_qdisc *)o;
        if (rtnl_tc_get_ifindex(TC_CAST(q)) != ifindex)
            continue;
        uint32_t parent = rtnl_tc_get_parent(TC_CAST(q));
        const char *kind = rtnl_tc_get_kind(TC_CAST(q));
        htb = htb || (kind && strcmp(kind, "htb") == 0);
        qdisc_text(q, v, sizeof v);
        if (parent == TC_H_ROOT) {
            root = true;
            snprintf(key, sizeof key, "if.%s.qdisc", f->name);
        } else if (parent == TC_H_INGRESS) {
            snprintf(key, sizeof key, "if.%s.qdisc.ingress", f->name);
        } else {
            snprintf(key, sizeof key, "if.%s.qdisc.%s", f->name, handle_text(parent, h, sizeof h));
        }
        rc = sm_fpc_put(&f->items, key, v, err);
    }
    if (!rc && !root) {
        /* a device that is down holds the built-in noop qdisc, which no dump lists */
        snprintf(key, sizeof key, "if.%s.qdisc", f->name);
        rc = f->up ? sm_fpc_unreadable(&f->items, key, ENOENT, err)
                   : sm_fpc_put(&f->items, key, "noop", err);
    }
    return !rc && htb ? class_items(nc, f, ifindex, err) : rc;
}

const sm_fp_offload sm_fp_offloads[] = {
    {"gso", ETHTOOL_GGSO, ETHTOOL_SGSO},           {"gro", ETHTOOL_GGRO, ETHTOOL_SGRO},
    {"tso", ETHTOOL_GTSO, ETHTOOL_STSO},           {"tx_csum", ETHTOOL_GTXCSUM, ETHTOOL_STXCSUM},
    {"rx_csum", ETHTOOL_GRXCSUM, ETHTOOL_SRXCSUM}, {"sg", ETHTOOL_GSG, ETHTOOL_SSG},
};
const size_t sm_fp_n_offloads = sizeof sm_fp_offloads / sizeof sm_fp_offloads[0];

int sm_fp_ethtool(int fd, const char *name, void *data)
{
    if (fd < 0)
        return EBADF;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
    ifr.ifr_data = data;
    return ioctl(fd, SIOCETHTOOL, &ifr) == 0 ? 0 : errno;
}

/* The link speed: ETHTOOL_GLINKSETTINGS (its handshake first says how many mask words the
 * kernel has), ETHTOOL_GSET on kernels without it. 0 and *speed, or an errno. */
static int link_speed(int fd, const char *name, uint32_t *speed)
{
    /* the request and the kernel's link-mode masks after it (three of at most 127 words) */
    uint32_t buf[(sizeof(struct ethtool_link_settings) + 3 * 127 * 4) / 4 + 1];
    struct ethtool_link_settings *ls = (struct ethtool_link_settings *)buf;
    memset(buf, 0, sizeof buf);
    ls->cmd = ETHTOOL_GLINKSETTINGS;
    int e = sm_fp_ethtool(fd, name, ls);
    if (e == 0 && ls->link_mode_masks_nwords < 0) {
        int8_t nwords = (int8_t)-ls->link_mode_masks_nwords;
        memset(buf, 0, sizeof buf);
        ls->cmd = ETHTOOL_GLINKSETTINGS;
        ls->link_mode_masks_nwords = nwords;
        e = sm_fp_ethtool(fd, name, ls);
        if (e == 0) {
            *speed = ls->speed;
            return 0;
        }
    }
    struct ethtool_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.cmd = ETHTOOL_GSET;
    int e2 = sm_fp_ethtool(fd, name, &cmd);
    if (e2 == 0)
        *speed = ethtool_cmd_speed(&cmd);
    return e2 == 0 ? 0 : (e ? e : e2);
}

static int put_errno_or(sm_fingerprint *fp, const char *key, int e, const char *v, sm_error *err)
{
    return e ? sm_fpc_unreadable(fp, key, e, err) : sm_fpc_put(fp, key, v, err);
}

/* if.N.driver, if.N.speed, if.N.offload.*. */
static int ethtool_items(int fd, sm_fp_iface *f, sm_error *err)
{
    char key[SM_FP_KEY_MAX + 1], v[64];
    struct ethtool_drvinfo di;
    memset(&di, 0, sizeof di);
    di.cmd = ETHTOOL_GDRVINFO;
    int e = sm_fp_ethtool(fd, f->name, &di);
    snprintf(key, sizeof key, "if.%s.driver", f->name);
    int rc = put_errno_or(&f->items, key, e, di.driver, err);
    uint32_t speed = 0;
    e = link_speed(fd, f->name, &speed);
    if (speed == 0 || speed == (uint32_t)SPEED_UNKNOWN)
        snprintf(v, sizeof v, "unknown");
    else
        snprintf(v, sizeof v, "%uMb/s", speed);
    snprintf(key, sizeof key, "if.%s.speed", f->name);
    rc = rc ? rc : put_errno_or(&f->items, key, e, v, err);
    for (size_t i = 0; i < sm_fp_n_offloads && !rc; i++) {
        struct ethtool_value ev = {.cmd = sm_fp_offloads[i].get, .data = 0};
        e = sm_fp_ethtool(fd, f->name, &ev);
        snprintf(key, sizeof key, "if.%s.offload.%s", f->name, sm_fp_offloads[i].name);
        rc = put_errno_or(&f->items, key, e, ev.data ? "on" : "off", err);
    }
    return rc;
}

static int link_items(net_ctx *nc, struct rtnl_link *l, sm_fp_iface *f, sm_error *err)
{
    char key[SM_FP_KEY_MAX + 1];
    snprintf(f->name, sizeof f->name, "%s", rtnl_link_get_name(l) ? rtnl_link_get_name(l) : "");
    f->up = (rtnl_link_get_flags(l) & IFF_UP) != 0;
    sm_fp_init(&f->items);
    snprintf(key, sizeof key, "if.%s.mtu", f->name);
    int rc = sm_fpc_putf(&f->items, key, err, "%u", rtnl_link_get_mtu(l));
    snprintf(key, sizeof key, "if.%s.state", f->name);
    rc = rc ? rc : sm_fpc_put(&f->items, key, f->up ? "up" : "down", err);
    snprintf(key, sizeof key, "if.%s.txqueuelen", f->name);
    rc = rc ? rc : sm_fpc_putf(&f->items, key, err, "%u", rtnl_link_get_txqlen(l));
    rc = rc ? rc : qdisc_items(nc, f, rtnl_link_get_ifindex(l), err);
    rc = rc ? rc : ethtool_items(nc->fd, f, err);
    return rc;
}

/* The name of the interface that holds address addr, into out; 0 or an errno (EINVAL: not an
 * IP address; ENXIO: no interface holds it). */
static int data_iface(const char *addr, char *out, size_t len)
{
    struct in_addr a4;
    struct in6_addr a6;
    int fam = inet_pton(AF_INET, addr, &a4) == 1    ? AF_INET
              : inet_pton(AF_INET6, addr, &a6) == 1 ? AF_INET6
                                                    : 0;
    if (fam == 0)
        return EINVAL;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0)
        return errno;
    int e = ENXIO;
    for (struct ifaddrs *i = ifs; i && e; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != fam)
            continue;
        bool same =
            fam == AF_INET
                ? ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == a4.s_addr
                : memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, &a6, sizeof a6) == 0;
        if (same) {
            snprintf(out, len, "%s", i->ifa_name);
            e = 0;
        }
    }
    freeifaddrs(ifs);
    return e;
}

/* Collects every link of the cache into ifs (n of them), then bounds them into fp. */
static int links_into(net_ctx *nc, struct nl_cache *links, sm_fingerprint *fp, const char *keep_if,
                      sm_error *err)
{
    size_t n = 0, cap = (size_t)nl_cache_nitems(links);
    sm_fp_iface *ifs = calloc(cap ? cap : 1, sizeof *ifs);
    if (ifs == NULL)
        return sm_error_set(err, SM_ENOMEM, "fingerprint: out of memory");
    int rc = 0;
    for (struct nl_object *o = nl_cache_get_first(links); o && n < cap && !rc;
         o = nl_cache_get_next(o))
        rc = link_items(nc, (struct rtnl_link *)o, &ifs[n++], err);
    if (!rc)
        rc = sm_fp_add_ifaces(fp, ifs, n, keep_if, err);
    for (size_t i = 0; i < n; i++)
        sm_fp_fini(&ifs[i].items);
    free(ifs);
    return rc;
}

int sm_fpc_net(sm_fingerprint *fp, const char *data_addr, sm_error *err)
{
    char keep[IF_NAMESIZE] = "";
    int rc = 0;
    if (data_addr[0]) {
        int e = data_iface(data_addr, keep, sizeof keep);
        rc = put_errno_or(fp, "info.data_if", e, keep, err);
    }
    net_ctx nc = {.sk = nl_socket_alloc(), .qdiscs = NULL, .qerr = 0, .fd = -1};
    struct nl_cache *links = NULL;
    int nlrc = nc.sk ? nl_connect(nc.sk, NETLINK_ROUTE) : -NLE_NOMEM;
    /* a dump that interfaces changed under says so (NLE_DUMP_INTR): take it again */
    if (nlrc >= 0)
        nlrc = rtnl_link_alloc_cache(nc.sk, AF_UNSPEC, &links);
    for (int i = 0; nlrc == -NLE_DUMP_INTR && i < 2; i++)
        nlrc = rtnl_link_alloc_cache(nc.sk, AF_UNSPEC, &links);
    if (rc || nlrc < 0) {
        /* no list of interfaces: the one item that says why */
        rc = rc ? rc : sm_fpc_unreadable(fp, "if", nl_errno(nlrc), err);
        goto out;
    }
    int qrc = rtnl_qdisc_alloc_cache(nc.sk, &nc.qdiscs);
    for (int i = 0; qrc == -NLE_DUMP_INTR && i < 2; i++)
        qrc = rtnl_qdisc_alloc_cache(nc.sk, &nc.qdiscs);
    nc.qerr = qrc < 0 ? nl_errno(qrc) : 0;
    /* an ethtool ioctl acts in the namespace of the socket it is made on: ours */
    nc.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (nc.fd < 0)
        nc.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    rc = links_into(&nc, links, fp, keep, err);
out:
    if (nc.fd >= 0)
        close(nc.fd);
    if (nc.qdiscs)
        nl_cache_free(nc.qdiscs);
    if (links)
        nl_cache_free(links);
    nl_socket_free(nc.sk);
    return rc;
}
