/* lo's root qdisc as treatments set it (qdisc.h). */
#include "agent/experiment/qdisc.h"

#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/tbf.h>
#include <netlink/route/tc.h>
#include <netlink/utils.h>
#include <linux/pkt_sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/host/fingerprint.h"
#include "proto/log.h"

static const char only[] = "sockmatrix-agent sets only noqueue and tbf root qdiscs";

/* "100Mbit", "57.3Kbit": bits per second in units of 1000, into bytes per second. */
static int parse_rate(const char *s, uint32_t *out)
{
    static const char *const units[] = {"bit", "Kbit", "Mbit", "Gbit", "Tbit"};
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno != 0 || !(v > 0) || !(s[0] >= '0' && s[0] <= '9'))
        return -1;
    double mult = 1;
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++, mult *= 1000) {
        if (strcmp(end, units[u]) != 0)
            continue;
        double bytes = round(v * mult / 8);
        if (bytes < 1 || bytes > INT32_MAX) /* libnl takes an int */
            return -1;
        *out = (uint32_t)bytes;
        return 0;
    }
    return -1;
}

/* "131062b", "128Kb", "2Mb": bytes in units of 1024. */
static int parse_size(const char *s, uint32_t *out)
{
    char *end;
    if (!(s[0] >= '1' && s[0] <= '9'))
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long mult = strcmp(end, "b") == 0    ? 1
                              : strcmp(end, "Kb") == 0 ? 1024
                              : strcmp(end, "Mb") == 0 ? 1024 * 1024
                                                       : 0;
    if (errno != 0 || mult == 0 || v > INT32_MAX / mult)
        return -1;
    *out = (uint32_t)(v * mult);
    return 0;
}

int sm_treat_tbf_parse(const char *text, sm_tbf *out, sm_error *err)
{
    if (strncmp(text, "tbf ", 4) != 0)
        return sm_error_set(err, SM_EINVAL, "%s", only);
    if (strstr(text, " peakrate ") != NULL)
        return sm_error_set(err, SM_EINVAL, "a tbf with a peak rate: %s", only);
    char rate[32], burst[32], limit[32];
    int used = 0;
    if (sscanf(text, "tbf rate %31s burst %31s limit %31s%n", rate, burst, limit, &used) != 3 ||
        text[used] != '\0')
        return sm_error_set(err, SM_EINVAL, "not 'tbf rate R burst B limit L'");
    sm_tbf t;
    if (parse_rate(rate, &t.rate) != 0 || parse_size(burst, &t.burst) != 0 ||
        parse_size(limit, &t.limit) != 0)
        return sm_error_set(err, SM_EINVAL,
                            "tbf takes a rate as 100Mbit (8bit to 17.1799Gbit) and sizes as "
                            "131062b, 128Kb or 2Mb");
    /* Only the fingerprint's own spelling: it is what the setting must read back as. */
    char canon[128], r[32], b[32], l[32];
    snprintf(canon, sizeof canon, "tbf rate %s burst %s limit %s",
             sm_fp_rate_text(8ull * t.rate, r, sizeof r), sm_fp_size_text(t.burst, b, sizeof b),
             sm_fp_size_text(t.limit, l, sizeof l));
    if (strcmp(canon, text) != 0)
        return sm_error_set(err, SM_EINVAL, "not as the fingerprint writes it ('%s')", canon);
    *out = t;
    return 0;
}

/* The burst a bucket of b bytes at rate reads back as: libnl keeps it as txtime =
 * us2ticks(txtime_us(bucket)) and reads it back as bufsize(ticks2us(txtime)), each step
 * truncating. */
static int64_t libnl_reads(uint32_t rate, uint64_t b)
{
    int us = rtnl_tc_calc_txtime((int)b, (int)rate);
    uint32_t ticks = nl_us2ticks((uint32_t)us);
    return rtnl_tc_calc_bufsize((int)nl_ticks2us(ticks), (int)rate);
}

int64_t sm_treat_tbf_bucket(uint32_t rate, uint32_t burst)
{
    /* Past 100 s of buffer the clock ticks would overflow the kernel's 32 bits. */
    if (rate == 0 || rate > INT32_MAX || burst == 0 || burst > INT32_MAX ||
        (double)burst / rate > 100.0)
        return -1;
    /* Each step truncating, the bucket that reads back as burst is at most a couple of
     * microseconds' worth of bytes above it. */
    const uint64_t span = (uint64_t)(3.0 * rate / 1e6) + 16;
    for (uint64_t b = burst; b <= burst + span && b <= INT32_MAX; b++)
        if (libnl_reads(rate, b) == (int64_t)burst)
            return (int64_t)b;
    return -1;
}

uint32_t sm_treat_tbf_slack(uint32_t rate)
{
    return rate / 1000000u + 2;
}

int64_t sm_treat_tbf_bucket_near(uint32_t rate, uint32_t burst, uint32_t *reads)
{
    int64_t exact = sm_treat_tbf_bucket(rate, burst);
    if (exact >= 0) {
        *reads = burst;
        return exact;
    }
    if (rate == 0 || rate > INT32_MAX || burst == 0 || burst > INT32_MAX ||
        (double)burst / rate > 100.0)
        return -1;
    const uint32_t slack = sm_treat_tbf_slack(rate);
    const uint64_t span = (uint64_t)(3.0 * rate / 1e6) + 16 + slack;
    int64_t best = -1, best_off = INT64_MAX;
    const uint64_t from = burst > span ? burst - span : 1;
    for (uint64_t b = from; b <= (uint64_t)burst + span && b <= INT32_MAX; b++) {
        const int64_t got = libnl_reads(rate, b);
        const int64_t off = got > burst ? got - burst : (int64_t)burst - got;
        if (got > 0 && off <= (int64_t)slack && off < best_off) {
            best = (int64_t)b;
            best_off = off;
            *reads = (uint32_t)got;
        }
    }
    return best;
}

bool sm_treat_tbf_near(const char *got, const char *want)
{
    sm_tbf g, w;
    sm_error err = {0};
    if (sm_treat_tbf_parse(got, &g, &err) != 0 || sm_treat_tbf_parse(want, &w, &err) != 0)
        return false;
    const uint32_t off = g.burst > w.burst ? g.burst - w.burst : w.burst - g.burst;
    return g.rate == w.rate && g.limit == w.limit && off <= sm_treat_tbf_slack(w.rate);
}

int sm_treat_qdisc_set(const char *iface, const char *value, sm_error *err)
{
    const bool noqueue = strcmp(value, "noqueue") == 0;
    sm_tbf t = {0};
    int64_t bucket = 0;
    if (!noqueue) {
        if (sm_treat_tbf_parse(value, &t, err) != 0)
            return SM_EINVAL;
        uint32_t reads = 0;
        if ((bucket = sm_treat_tbf_bucket_near(t.rate, t.burst, &reads)) < 0)
            return sm_error_set(err, SM_EINVAL,
                                "qdisc %s: no tbf bucket reads back within %u bytes of burst %ub "
                                "at this rate",
                                iface, sm_treat_tbf_slack(t.rate), t.burst);
        if (reads != t.burst)
            sm_log(LOG_NOTICE, "SM-TREAT-TBF-NEAR",
                   "qdisc %s: burst %ub reads back as %ub, the nearest the kernel keeps in whole "
                   "clock ticks at this rate",
                   iface, t.burst, reads);
    } else {
        /* The default root qdisc (lo's noqueue) has no handle and cannot be deleted: there is
         * nothing to do when it is there already. */
        char now[512];
        int rc = sm_fp_root_qdisc(iface, now, sizeof now, err);
        if (rc != 0 || strcmp(now, "noqueue") == 0)
            return rc;
    }
    unsigned ifindex = if_nametoindex(iface);
    if (ifindex == 0)
        return sm_error_sys(err, errno, "qdisc %s: no such interface here", iface);
    struct nl_sock *sk = nl_socket_alloc();
    struct rtnl_qdisc *q = rtnl_qdisc_alloc();
    int nlrc = sk && q ? nl_connect(sk, NETLINK_ROUTE) : -NLE_NOMEM;
    if (nlrc >= 0) {
        rtnl_tc_set_ifindex(TC_CAST(q), (int)ifindex);
        rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
    }
    if (nlrc >= 0 && noqueue) {
        nlrc = rtnl_qdisc_delete(sk, q);
    } else if (nlrc >= 0 && (nlrc = rtnl_tc_set_kind(TC_CAST(q), "tbf")) >= 0) {
        rtnl_qdisc_tbf_set_limit(q, (int)t.limit);
        rtnl_qdisc_tbf_set_rate(q, (int)t.rate, (int)bucket, 0);
        /* CREATE | REPLACE: a tbf there is changed in place, another root is replaced. */
        nlrc = rtnl_qdisc_add(sk, q, NLM_F_CREATE | NLM_F_REPLACE);
    }
    int rc = 0;
    if (nlrc < 0)
        rc = sm_error_set(err, SM_ESYS, "qdisc %s: netlink refused '%s': %s%s", iface, value,
                          nl_geterror(nlrc),
                          nlrc == -NLE_PERM ? " (changing a qdisc needs CAP_NET_ADMIN)" : "");
    rtnl_qdisc_put(q);
    nl_socket_free(sk);
    return rc;
}

/* ---- the root qdisc in the kernel's own words ---- */

#define SM_QDISC_KIND_MAX 16 /* IFNAMSIZ, as the kernel keeps a kind */

typedef struct saved {
    int ifindex;
    bool found, too_big;
    char kind[SM_QDISC_KIND_MAX];
    unsigned char opt[SM_TREAT_QDISC_OPT_MAX];
    int optlen;
} saved;

static int on_qdisc(struct nl_msg *msg, void *arg)
{
    saved *s = arg;
    struct nlmsghdr *h = nlmsg_hdr(msg);
    const struct tcmsg *t = nlmsg_data(h);
    struct nlattr *tb[TCA_MAX + 1];
    if (h->nlmsg_type != RTM_NEWQDISC || t->tcm_ifindex != s->ifindex ||
        t->tcm_parent != TC_H_ROOT || nlmsg_parse(h, sizeof *t, tb, TCA_MAX, NULL) < 0 ||
        !tb[TCA_KIND])
        return NL_OK;
    s->found = true;
    nla_strlcpy(s->kind, tb[TCA_KIND], sizeof s->kind);
    s->optlen = tb[TCA_OPTIONS] ? nla_len(tb[TCA_OPTIONS]) : 0;
    if (s->optlen > (int)sizeof s->opt)
        s->too_big = true;
    else if (s->optlen > 0)
        memcpy(s->opt, nla_data(tb[TCA_OPTIONS]), (size_t)s->optlen);
    return NL_OK;
}

static int connect_route(struct nl_sock **sk, const char *iface, int *ifindex, sm_error *err)
{
    *ifindex = (int)if_nametoindex(iface);
    if (*ifindex == 0)
        return sm_error_sys(err, errno, "qdisc %s: no such interface here", iface);
    *sk = nl_socket_alloc();
    int nlrc = *sk ? nl_connect(*sk, NETLINK_ROUTE) : -NLE_NOMEM;
    if (nlrc < 0) {
        nl_socket_free(*sk);
        *sk = NULL;
        return sm_error_set(err, SM_ESYS, "qdisc %s: netlink: %s", iface, nl_geterror(nlrc));
    }
    return 0;
}

int sm_treat_qdisc_save(const char *iface, char *out, size_t len, sm_error *err)
{
    struct nl_sock *sk;
    saved s = {0};
    int rc = connect_route(&sk, iface, &s.ifindex, err);
    if (rc)
        return rc;
    struct tcmsg tcm = {.tcm_family = AF_UNSPEC, .tcm_ifindex = s.ifindex};
    int nlrc = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_qdisc, &s);
    if (nlrc >= 0)
        nlrc = nl_send_simple(sk, RTM_GETQDISC, NLM_F_DUMP, &tcm, sizeof tcm);
    if (nlrc >= 0)
        nlrc = nl_recvmsgs_default(sk);
    nl_socket_free(sk);
    if (nlrc < 0)
        return sm_error_set(err, SM_ESYS, "qdisc %s: not read: %s", iface, nl_geterror(nlrc));
    if (!s.found)
        return sm_error_set(err, SM_ESYS, "qdisc %s: no root qdisc listed", iface);
    if (s.too_big || strlen(s.kind) + 2 + 2 * (size_t)s.optlen > len)
        return sm_error_set(err, SM_EINVAL, "qdisc %s: the root %s's options are too long to keep",
                            iface, s.kind);
    size_t at = (size_t)snprintf(out, len, "%s:", s.kind);
    for (int i = 0; i < s.optlen; i++, at += 2)
        snprintf(out + at, len - at, "%02x", s.opt[i]);
    return 0;
}

int sm_treat_qdisc_restore(const char *iface, const char *kept, sm_error *err)
{
    const char *colon = strchr(kept, ':');
    const size_t klen = colon ? (size_t)(colon - kept) : 0;
    if (klen == 0 || klen >= SM_QDISC_KIND_MAX)
        return sm_error_set(err, SM_EINVAL, "qdisc %s: '%.40s' is not a kept qdisc", iface, kept);
    char kind[SM_QDISC_KIND_MAX];
    memcpy(kind, kept, klen);
    kind[klen] = '\0';
    if (strcmp(kind, "noqueue") == 0)
        return sm_treat_qdisc_set(iface, "noqueue", err);
    const char *hex = colon + 1;
    const size_t hlen = strlen(hex);
    unsigned char opt[SM_TREAT_QDISC_OPT_MAX];
    if (hlen % 2 != 0 || hlen / 2 > sizeof opt)
        return sm_error_set(err, SM_EINVAL, "qdisc %s: the kept %s options are damaged", iface,
                            kind);
    for (size_t i = 0; i < hlen / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return sm_error_set(err, SM_EINVAL, "qdisc %s: the kept %s options are damaged", iface,
                                kind);
        opt[i] = (unsigned char)v;
    }
    struct nl_sock *sk;
    int ifindex, rc = connect_route(&sk, iface, &ifindex, err);
    if (rc)
        return rc;
    struct nl_msg *m = nlmsg_alloc_simple(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE);
    struct tcmsg tcm = {.tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex, .tcm_parent = TC_H_ROOT};
    int nlrc = m ? nlmsg_append(m, &tcm, sizeof tcm, NLMSG_ALIGNTO) : -NLE_NOMEM;
    if (nlrc >= 0)
        nlrc = nla_put_string(m, TCA_KIND, kind);
    if (nlrc >= 0)
        nlrc = nla_put(m, TCA_OPTIONS, (int)(hlen / 2), opt);
    if (nlrc >= 0)
        nlrc = nl_send_auto(sk, m);
    if (nlrc >= 0)
        nlrc = nl_wait_for_ack(sk);
    nlmsg_free(m);
    nl_socket_free(sk);
    if (nlrc < 0)
        return sm_error_set(err, SM_ESYS, "qdisc %s: netlink refused the %s put back: %s%s", iface,
                            kind, nl_geterror(nlrc),
                            nlrc == -NLE_PERM ? " (changing a qdisc needs CAP_NET_ADMIN)" : "");
    return 0;
}
