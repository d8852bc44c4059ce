/* An experiment's plan: which of the odd host's differences can be given the fleet's value,
 * by which treatment, and why the others cannot; and the treatments' syntax. */
#include "coordinator/analysis/experiment.h"

#include "coordinator/analysis/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALLOW_QDISC   1u
#define ALLOW_SYSCTL  2u
#define ALLOW_OFFLOAD 4u
#define IFNAME_MAX    15 /* IFNAMSIZ - 1: the longest interface name Linux takes */
#define SEP           "; "
#define WHY_MAX       sizeof(((sm_xp_suspect *)0)->why_untested)

const char *sm_xp_verdict_name(sm_xp_verdict v)
{
    switch (v) {
    case SM_XP_CAUSE:
        return "cause";
    case SM_XP_PART:
        return "part of it";
    case SM_XP_NOT:
        return "not the cause";
    case SM_XP_INCONCLUSIVE:
        return "inconclusive";
    case SM_XP_UNTESTED:
        return "could not be tested";
    }
    return "?";
}

void sm_xp_plan_fini(sm_xp_plan *p)
{
    if (p == NULL)
        return;
    free(p->v);
    memset(p, 0, sizeof *p);
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- the treatments' syntax ---- */

/* Why v cannot be a treatment's value (into why, false), or true: printable ASCII or tab, no
 * ';' (it separates the parts of a treatment), 1..max bytes. */
static bool value_fits(const char *v, size_t n, size_t max, char *why, size_t len)
{
    if (n == 0) {
        snprintf(why, len, "it is empty");
        return false;
    }
    if (n > max) {
        snprintf(why, len, "it is %zu bytes, more than the %zu a treatment takes", n, max);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c == ';') {
            snprintf(why, len, "it holds a ';', which separates the parts of a treatment");
            return false;
        }
        if (c != '\t' && (c < 0x20 || c > 0x7e)) {
            snprintf(why, len, "it holds the byte 0x%02x, which is not printable ASCII", c);
            return false;
        }
    }
    return true;
}

/* Whether name[0..n) is a sysctl key a treatment can give: "net." then [a-z0-9_.]. */
static bool sysctl_key_valid(const char *name, size_t n)
{
    if (n <= 4 || strncmp(name, "net.", 4) != 0)
        return false;
    for (size_t i = 4; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
            return false;
    }
    return true;
}

/* Whether name[0..n) is an interface name Linux takes (dev_valid_name) and a treatment can
 * carry: 1..15 bytes of printable ASCII, no space, '/', ':' or ';', not "." or "..". */
static bool iface_valid(const char *name, size_t n)
{
    if (n == 0 || n > IFNAME_MAX || (n == 1 && name[0] == '.') ||
        (n == 2 && name[0] == '.' && name[1] == '.'))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= 0x20 || c > 0x7e || c == '/' || c == ':' || c == ';')
            return false;
    }
    return true;
}

/* Whether a root qdisc's fingerprint text is one the agent can set: noqueue, or tbf. */
static bool qdisc_settable(const char *v, size_t n)
{
    return (n == 7 && strncmp(v, "noqueue", 7) == 0) || (n > 4 && strncmp(v, "tbf ", 4) == 0);
}

/* Whether s[0..n) is a congestion control's name a socket option takes: 1..15 of [a-z0-9_]. */
static bool congestion_valid(const char *s, size_t n)
{
    if (n == 0 || n > 15)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}

/* The offloads a treatment sets: the ones Linux lets a software device such as lo change. */
static const char *const settable_offloads[] = {"gso", "gro", "tso"};

/* Whether name[0..n) is a settable offload's. */
static bool offload_name_settable(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof settable_offloads / sizeof settable_offloads[0]; i++)
        if (strlen(settable_offloads[i]) == n && strncmp(name, settable_offloads[i], n) == 0)
            return true;
    return false;
}

/* Whether f[0..n) is "NAME=on" or "NAME=off" of a settable offload. */
static bool offload_settable(const char *f, size_t n)
{
    const char *eq = memchr(f, '=', n);
    const size_t k = eq ? (size_t)(eq - f) : 0, vn = n - k - 1;
    return eq && offload_name_settable(f, k) &&
           ((vn == 2 && strncmp(eq + 1, "on", 2) == 0) ||
            (vn == 3 && strncmp(eq + 1, "off", 3) == 0));
}

/* s[0..n) as a decimal number (digits only) within lo..hi. */
static bool number_in(const char *s, size_t n, unsigned long long lo, unsigned long long hi,
                      unsigned long long *out)
{
    unsigned long long v = 0;
    if (n == 0 || n > 10)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = 10 * v + (unsigned long long)(s[i] - '0');
    }
    if (v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* One part of a treatment, p[0..n): true, or false with why. */
static bool part_check(const char *p, size_t n, char *why, size_t len)
{
    unsigned long long v;
    if (n > 7 && strncmp(p, "sysctl ", 7) == 0) {
        const char *key = p + 7, *eq = memchr(key, '=', n - 7);
        if (eq == NULL || !sysctl_key_valid(key, (size_t)(eq - key))) {
            snprintf(why, len, "'%.*s': a sysctl's key is net. then [a-z0-9_.], then '='",
                     (int)(n > 60 ? 60 : n), p);
            return false;
        }
        char vwhy[120];
        if (!value_fits(eq + 1, n - (size_t)(eq + 1 - p), SM_XP_SYSCTL_VALUE_MAX, vwhy,
                        sizeof vwhy)) {
            snprintf(why, len, "the value of '%.*s': %s", (int)(eq - p), p, vwhy);
            return false;
        }
        return true;
    }
    if (n > 6 && strncmp(p, "qdisc ", 6) == 0) {
        const char *name = p + 6, *sp = memchr(name, ' ', n - 6);
        if (sp == NULL || !iface_valid(name, (size_t)(sp - name))) {
            snprintf(why, len, "'%.*s': a qdisc's interface is 1..15 bytes, then a space",
                     (int)(n > 60 ? 60 : n), p);
            return false;
        }
        const char *q = sp + 1;
        size_t qn = n - (size_t)(q - p);
        char vwhy[120];
        if (!qdisc_settable(q, qn) || !value_fits(q, qn, SIZE_MAX, vwhy, sizeof vwhy)) {
            snprintf(why, len, "'%.*s': a qdisc treatment sets noqueue or tbf ...",
                     (int)(n > 60 ? 60 : n), p);
            return false;
        }
        return true;
    }
    if ((n > 14 && strncmp(p, "socket rcvbuf=", 14) == 0) ||
        (n > 14 && strncmp(p, "socket sndbuf=", 14) == 0)) {
        if (number_in(p + 14, n - 14, SM_XP_SOCKBUF_MIN, SM_XP_SOCKBUF_MAX, &v))
            return true;
        snprintf(why, len, "'%.*s': a socket buffer is %u..%u bytes", (int)(n > 60 ? 60 : n), p,
                 SM_XP_SOCKBUF_MIN, SM_XP_SOCKBUF_MAX);
        return false;
    }
    if (n == 16 &&
        (strncmp(p, "socket nodelay=0", 16) == 0 || strncmp(p, "socket nodelay=1", 16) == 0))
        return true;
    if (n == 13 && (strncmp(p, "socket cork=0", 13) == 0 || strncmp(p, "socket cork=1", 13) == 0))
        return true;
    if (n > 18 && strncmp(p, "socket congestion=", 18) == 0) {
        if (congestion_valid(p + 18, n - 18))
            return true;
        snprintf(why, len, "'%.*s': a congestion control is 1..15 of [a-z0-9_]",
                 (int)(n > 60 ? 60 : n), p);
        return false;
    }
    if (n > 21 && strncmp(p, "socket notsent_lowat=", 21) == 0) {
        if (p[21] != '0' && number_in(p + 21, n - 21, 1, 4294967295ull, &v))
            return true;
        snprintf(why, len, "'%.*s': notsent_lowat is 1..4294967295 bytes", (int)(n > 60 ? 60 : n),
                 p);
        return false;
    }
    if (n > 8 && strncmp(p, "offload ", 8) == 0) {
        const char *name = p + 8, *sp = memchr(name, ' ', n - 8);
        const char *f = sp ? sp + 1 : NULL;
        size_t fn = f ? n - (size_t)(f - p) : 0;
        if (sp != NULL && iface_valid(name, (size_t)(sp - name)) && offload_settable(f, fn))
            return true;
        snprintf(why, len, "'%.*s': an offload treatment is offload IFACE gso|gro|tso=on|off",
                 (int)(n > 60 ? 60 : n), p);
        return false;
    }
    snprintf(why, len, "'%.*s' is no treatment (sysctl, qdisc, socket or offload)",
             (int)(n > 60 ? 60 : n), p);
    return false;
}

bool sm_xp_treatment_check(const char *t, char *why, size_t len)
{
    size_t parts = 0;
    for (const char *p = t;; parts++) {
        const char *semi = strchr(p, ';');
        size_t n = semi ? (size_t)(semi - p) : strlen(p);
        if (parts == SM_XP_COMBINED_MAX) {
            snprintf(why, len, "more than %d parts", SM_XP_COMBINED_MAX);
            return false;
        }
        if (!part_check(p, n, why, len))
            return false;
        if (semi == NULL)
            return true;
        if (semi[1] != ' ') {
            snprintf(why, len, "parts are joined by \"; \"");
            return false;
        }
        p = semi + 2;
    }
}

/* ---- from a difference to its treatment ---- */

typedef struct mapper {
    const char *host; /* "the host" when unknown */
    unsigned allow;   /* ALLOW_* */
} mapper;

static unsigned allow_flags(const char *allow)
{
    unsigned f = 0;
    for (const char *s = allow; s != NULL && *s != '\0';) {
        size_t n = strcspn(s, ", \t");
        if (n == 5 && strncmp(s, "qdisc", 5) == 0)
            f |= ALLOW_QDISC;
        else if (n == 6 && strncmp(s, "sysctl", 6) == 0)
            f |= ALLOW_SYSCTL;
        else if (n == 7 && strncmp(s, "offload", 7) == 0)
            f |= ALLOW_OFFLOAD;
        s += n;
        s += strspn(s, ", \t");
    }
    return f;
}

/* What --allow-experiment would say with the flags f (at least one): the words in name order,
 * as the agent's info.allow_experiment gives them. */
static const char *allow_text(unsigned f)
{
    static const char *const texts[] = {
        "none",    "qdisc",         "sysctl",         "qdisc,sysctl",
        "offload", "offload,qdisc", "offload,sysctl", "offload,qdisc,sysctl",
    };
    return texts[f & 7u];
}

/* Copies src into dst[cap] (cap > 4), cut with "..." when longer, never inside a UTF-8
 * character. */
static void copy_cut(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n < cap) {
        memcpy(dst, src, n + 1);
        return;
    }
    size_t keep = cap - 4;
    while (keep > 0 && ((unsigned char)src[keep] & 0xC0) == 0x80)
        keep--;
    memcpy(dst, src, keep);
    memcpy(dst + keep, "...", 4);
}

/* Formats a reason into why (WHY_MAX bytes), cut with "..." when longer. */
static void because(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void because(char *why, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    copy_cut(why, WHY_MAX, text);
}

/* The interface of a root qdisc's item "if.<iface>.qdisc" (not a child's "if.<iface>.qdisc.1:10",
 * nor a class), or NULL. */
static const char *root_qdisc_iface(const char *item, size_t *n)
{
    size_t len = strlen(item), tail = strlen(".qdisc");
    if (!starts(item, "if.") || len <= 3 + tail || strcmp(item + len - tail, ".qdisc") != 0)
        return NULL;
    *n = len - 3 - tail;
    return item + 3;
}

/* The interface of an offload's item "if.<iface>.offload.<name>" with *name, or NULL. */
static const char *offload_iface(const char *item, size_t *n, const char **name)
{
    const char *at = starts(item, "if.") ? strstr(item + 3, ".offload.") : NULL;
    if (at == NULL || at == item + 3 || at[9] == '\0')
        return NULL;
    *n = (size_t)(at - item - 3);
    *name = at + 9;
    return item + 3;
}

/* The middle of three numbers "MIN DEFAULT MAX" (tcp_rmem, tcp_wmem), or false. */
static bool triple_middle(const char *v, unsigned long long *mid)
{
    const char *a = strchr(v, ' '), *b = a ? strchr(a + 1, ' ') : NULL;
    unsigned long long x;
    return a != NULL && b != NULL && strchr(b + 1, ' ') == NULL &&
           number_in(v, (size_t)(a - v), 0, 4294967295ull, &x) &&
           number_in(b + 1, strlen(b + 1), 0, 4294967295ull, &x) &&
           number_in(a + 1, (size_t)(b - a - 1), 0, 4294967295ull, mid);
}

/* tcp_rmem and tcp_wmem without the sysctl flag: the socket option of the fleet's default. */
static bool socket_fallback(const mapper *m, const sm_fp_diff *x, const char *label, char *t,
                            size_t tcap, char *why)
{
    bool rcv = strcmp(x->item, "sysctl.net.ipv4.tcp_rmem") == 0;
    const char *opt = rcv ? "rcvbuf" : "sndbuf";
    unsigned long long fleet, host;
    if (!triple_middle(x->fleet_value, &fleet)) {
        because(why, "the fleet's %s is not three numbers: no socket %s to give it", label, opt);
        return false;
    }
    if (x->host_value != NULL && triple_middle(x->host_value, &host) && host == fleet) {
        /* SO_RCVBUF / SO_SNDBUF of the default the host already has would change nothing
         * but turn its autotuning off: the difference is in the minimum or the maximum. */
        because(why,
                "%s's %s default %llu is the fleet's already: socket %s would not give it the "
                "fleet's value; start its agent with --allow-experiment %s",
                m->host, label, fleet, opt, allow_text(m->allow | ALLOW_SYSCTL));
        return false;
    }
    if (fleet < SM_XP_SOCKBUF_MIN || fleet > SM_XP_SOCKBUF_MAX) {
        because(why, "the fleet's default %s %llu is outside socket %s's %u..%u", label, fleet, opt,
                SM_XP_SOCKBUF_MIN, SM_XP_SOCKBUF_MAX);
        return false;
    }
    snprintf(t, tcap, "socket %s=%llu", opt, fleet);
    return true;
}

/* tcp_congestion_control and tcp_notsent_lowat without the sysctl flag: the socket option of
 * the fleet's value on the job's own sockets. */
static bool socket_option_fallback(const mapper *m, const sm_fp_diff *x, const char *label, char *t,
                                   size_t tcap, char *why)
{
    const char *fv = x->fleet_value;
    const bool cc = strcmp(x->item, "sysctl.net.ipv4.tcp_congestion_control") == 0;
    unsigned long long v = 0;
    if (cc ? !congestion_valid(fv, strlen(fv))
           : fv[0] == '0' || !number_in(fv, strlen(fv), 1, 4294967295ull, &v)) {
        because(why,
                "the fleet's %s '%.40s' is no value socket %s takes; start its agent with "
                "--allow-experiment %s",
                label, fv, cc ? "congestion" : "notsent_lowat",
                allow_text(m->allow | ALLOW_SYSCTL));
        return false;
    }
    snprintf(t, tcap, "socket %s=%s", cc ? "congestion" : "notsent_lowat", fv);
    return true;
}

static bool sysctl_treatment(const mapper *m, const sm_fp_diff *x, const char *label, char *t,
                             size_t tcap, char *why)
{
    const char *key = x->item + strlen("sysctl."), *fv = x->fleet_value;
    char vwhy[120] = "";
    bool key_ok = sysctl_key_valid(key, strlen(key));
    bool value_ok = value_fits(fv, strlen(fv), SM_XP_SYSCTL_VALUE_MAX, vwhy, sizeof vwhy);
    int n = key_ok && value_ok ? snprintf(t, tcap, "sysctl %s=%s", key, fv) : 0;
    bool fits = n >= 0 && (size_t)n < tcap;
    if ((m->allow & ALLOW_SYSCTL) && key_ok && value_ok && fits)
        return true;
    memset(t, 0, tcap); /* nothing of the sysctl's text left behind the NUL */
    if (strcmp(x->item, "sysctl.net.ipv4.tcp_rmem") == 0 ||
        strcmp(x->item, "sysctl.net.ipv4.tcp_wmem") == 0)
        return socket_fallback(m, x, label, t, tcap, why);
    if (strcmp(x->item, "sysctl.net.ipv4.tcp_congestion_control") == 0 ||
        strcmp(x->item, "sysctl.net.ipv4.tcp_notsent_lowat") == 0)
        return socket_option_fallback(m, x, label, t, tcap, why);
    if (!key_ok)
        because(why, "%s is not a sysctl a treatment can name ([a-z0-9_.] after net.)", label);
    else if (!value_ok)
        because(why, "the fleet's %s cannot be given as a treatment: %s", label, vwhy);
    else if (!fits)
        because(why, "the treatment would be %d bytes, more than the %zu it takes", n, tcap - 1);
    else
        because(why, "%s's agent may not change sysctls: start it with --allow-experiment %s",
                m->host, allow_text(m->allow | ALLOW_SYSCTL));
    return false;
}

/* Whether the host's agent may apply flag's kind (what: "qdiscs"); if not, t is cleared and why
 * names the flag that would let it. */
static bool allowed_or_why(const mapper *m, unsigned flag, const char *what, char *t, size_t tcap,
                           char *why)
{
    if (m->allow & flag)
        return true;
    memset(t, 0, tcap); /* nothing of it left behind the NUL */
    because(why, "%s's agent may not change %s: start it with --allow-experiment %s", m->host, what,
            allow_text(m->allow | flag));
    return false;
}

static bool qdisc_treatment(const mapper *m, const sm_fp_diff *x, const char *iface, size_t in,
                            const char *label, char *t, size_t tcap, char *why)
{
    const char *fv = x->fleet_value;
    size_t fn = strlen(fv), kind = strcspn(fv, " ");
    char vwhy[120];
    if (!iface_valid(iface, in)) {
        because(why, "%.*s is not an interface name a treatment can carry", (int)in, iface);
        return false;
    }
    if (!qdisc_settable(fv, fn)) {
        because(why,
                "sockmatrix-agent sets only noqueue and tbf root qdiscs; the fleet's is %.*s%s",
                (int)(kind > 40 ? 40 : kind), fv, kind < fn ? " ..." : "");
        return false;
    }
    if (!value_fits(fv, fn, SIZE_MAX, vwhy, sizeof vwhy)) {
        because(why, "the fleet's %s cannot be given as a treatment: %s", label, vwhy);
        return false;
    }
    int n = snprintf(t, tcap, "qdisc %.*s %s", (int)in, iface, fv);
    if (n < 0 || (size_t)n >= tcap) {
        memset(t, 0, tcap); /* nothing of it left behind the NUL */
        because(why, "the treatment would be %d bytes, more than the %zu it takes", n, tcap - 1);
        return false;
    }
    return allowed_or_why(m, ALLOW_QDISC, "qdiscs", t, tcap, why);
}

static bool offload_treatment(const mapper *m, const sm_fp_diff *x, const char *iface, size_t in,
                              const char *name, const char *label, char *t, size_t tcap, char *why)
{
    const char *fv = x->fleet_value;
    if (!iface_valid(iface, in)) {
        because(why, "%.*s is not an interface name a treatment can carry", (int)in, iface);
        return false;
    }
    if (strcmp(fv, "on") != 0 && strcmp(fv, "off") != 0) {
        because(why, "the fleet's %s is '%.40s', not on or off", label, fv);
        return false;
    }
    if (!offload_name_settable(name, strlen(name))) {
        because(why,
                "sockmatrix-agent sets only the gso, gro and tso offloads, the ones Linux lets lo "
                "change; not %.20s",
                name);
        return false;
    }
    const int n = snprintf(t, tcap, "offload %.*s %s=%s", (int)in, iface, name, fv);
    if (n < 0 || (size_t)n >= tcap) {
        memset(t, 0, tcap); /* nothing of it left behind the NUL */
        because(why, "the treatment would be %d bytes, more than the %zu it takes", n, tcap - 1);
        return false;
    }
    return allowed_or_why(m, ALLOW_OFFLOAD, "offloads", t, tcap, why);
}

/* The treatment that gives the host the fleet's value of x (into t, true), or why none can
 * (into why, false). */
static bool treatment_of(const mapper *m, const sm_fp_diff *x, const char *label, char *t,
                         size_t tcap, char *why)
{
    size_t in = 0, on = 0;
    const char *iface = root_qdisc_iface(x->item, &in), *name = NULL;
    const char *oface = offload_iface(x->item, &on, &name);
    bool sysctl = starts(x->item, "sysctl.net.");
    t[0] = '\0';
    if (x->fleet_value == NULL) {
        because(why, "the fleet has no majority value to give it");
        return false;
    }
    if (iface == NULL && oface == NULL && !sysctl) {
        because(why,
                "no treatment exists for %s (sockmatrix sets net.* sysctls, root qdiscs, "
                "offloads and socket options)",
                label);
        return false;
    }
    /* fpdiff's texts for an item the fleet lacks or cannot read: no value to give. */
    if (strcmp(x->fleet_value, "(absent)") == 0) {
        because(why, "the fleet's hosts have no %s: there is no value to give it", label);
        return false;
    }
    if (starts(x->fleet_value, "unreadable (")) {
        because(why, "the fleet's %s is %s: its value is not known", label, x->fleet_value);
        return false;
    }
    if (iface != NULL)
        return qdisc_treatment(m, x, iface, in, label, t, tcap, why);
    if (oface != NULL)
        return offload_treatment(m, x, oface, on, name, label, t, tcap, why);
    return sysctl_treatment(m, x, label, t, tcap, why);
}

/* ---- the plan ---- */

/* Appends "; " (unless first) and s to buf[cap] at *at; false when it does not fit. */
static bool join(char *buf, size_t cap, size_t *at, const char *s)
{
    int n = snprintf(buf + *at, cap - *at, "%s%s", *at ? SEP : "", s);
    if (n < 0 || (size_t)n >= cap - *at) {
        buf[*at] = '\0';
        return false;
    }
    *at += (size_t)n;
    return true;
}

/* The last suspect: the first SM_XP_COMBINED_MAX tested ones together, as many of them as one
 * treatment holds (a part that does not fit is passed over). With fewer than 2 that fit, it is
 * untested, naming the first SM_XP_COMBINED_MAX. */
static void combine(const sm_xp_plan *p, sm_xp_suspect *c)
{
    char host[2048] = "", fleet[2048] = "", part[sizeof c->label + sizeof c->host_value + 1];
    bool in[SM_XP_COMBINED_MAX];
    size_t idx[SM_XP_COMBINED_MAX], at = 0, hat = 0, fat = 0, parts = 0, seen = 0;
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < p->n && parts < SM_XP_COMBINED_MAX; i++) {
        if (p->v[i].treatment[0] == '\0')
            continue;
        bool fits = join(c->treatment, sizeof c->treatment, &at, p->v[i].treatment);
        parts += fits;
        if (seen < SM_XP_COMBINED_MAX) {
            idx[seen] = i;
            in[seen++] = fits;
        }
    }
    size_t named = 0;
    for (size_t k = 0; k < seen; k++) {
        const sm_xp_suspect *s = &p->v[idx[k]];
        if (parts >= 2 && !in[k])
            continue;
        named++;
        snprintf(part, sizeof part, "%s %s", s->label, s->host_value);
        join(host, sizeof host, &hat, part);
        snprintf(part, sizeof part, "%s %s", s->label, s->fleet_value);
        join(fleet, sizeof fleet, &fat, part);
    }
    snprintf(c->label, sizeof c->label, "the %zu suspects together", named);
    copy_cut(c->host_value, sizeof c->host_value, host);
    copy_cut(c->fleet_value, sizeof c->fleet_value, fleet);
    if (parts < 2) {
        c->treatment[0] = '\0';
        because(c->why_untested,
                "their %zu treatments together are longer than the %zu bytes a treatment takes",
                named, sizeof c->treatment - 1);
    }
}

int sm_xp_plan_make_for(const char *host, const sm_fp_diffs *d, const char *allow,
                        size_t max_tested, sm_xp_plan *out, sm_error *err)
{
    if (d == NULL || out == NULL || (d->n > 0 && d->v == NULL))
        return sm_error_set(err, SM_EINVAL, "experiment plan: no differences");
    if (d->n >= SM_XP_SUSPECTS_MAX)
        return sm_error_set(err, SM_EINVAL, "experiment plan: %zu differences, more than %d", d->n,
                            SM_XP_SUSPECTS_MAX - 1);
    mapper m = {host != NULL && host[0] != '\0' ? host : "the host", allow_flags(allow)};
    sm_xp_plan p = {calloc(d->n + 1, sizeof *p.v), 0, 0};
    if (p.v == NULL)
        return sm_error_set(err, SM_ENOMEM, "experiment plan: out of memory");
    size_t singles = 0;
    for (size_t i = 0; i < d->n; i++) {
        const sm_fp_diff *x = &d->v[i];
        sm_xp_suspect *s = &p.v[p.n++];
        char lb[SM_FP_KEY_MAX + 2];
        snprintf(s->item, sizeof s->item, "%s", x->item);
        snprintf(s->label, sizeof s->label, "%s", sm_fp_item_label(x->item, lb, sizeof lb));
        copy_cut(s->host_value, sizeof s->host_value, x->host_value ? x->host_value : "");
        copy_cut(s->fleet_value, sizeof s->fleet_value, x->fleet_value ? x->fleet_value : "");
        s->relevance = x->relevance;
        if (!treatment_of(&m, x, s->label, s->treatment, sizeof s->treatment, s->why_untested))
            continue;
        if (singles == max_tested) {
            s->treatment[0] = '\0';
            because(s->why_untested, "beyond the plan's budget of %zu suspect%s", max_tested,
                    max_tested == 1 ? "" : "s");
            continue;
        }
        singles++;
    }
    p.tested = singles;
    if (singles >= 2) {
        combine(&p, &p.v[p.n]);
        p.tested += p.v[p.n].treatment[0] != '\0';
        p.n++;
    }
    *out = p;
    return 0;
}

size_t sm_xp_plan_reverse(sm_xp_plan *p, const sm_fp_diffs *d, const sm_xp_ref *ref)
{
    if (p == NULL || d == NULL || ref == NULL || ref->host == NULL || ref->fp == NULL)
        return 0;
    mapper m = {ref->host, allow_flags(ref->allow)};
    size_t n = 0;
    /* The singles are the differences, one for one and in order; the combination follows. */
    for (size_t i = 0; i < p->n && i < d->n; i++) {
        sm_xp_suspect *s = &p->v[i];
        const sm_fp_diff *x = &d->v[i];
        memset(s->reverse_host, 0, sizeof s->reverse_host);
        memset(s->reverse, 0, sizeof s->reverse);
        memset(s->why_no_reverse, 0, sizeof s->why_no_reverse);
        if (s->treatment[0] == '\0' || s->item[0] == '\0' || strcmp(s->item, x->item) != 0)
            continue;
        snprintf(s->reverse_host, sizeof s->reverse_host, "%s", ref->host);
        char text[2048];
        const sm_fp_item *it = sm_fp_get(ref->fp, x->item);
        const char *own = it ? sm_fp_item_text(it, text, sizeof text) : "(absent)";
        if (x->fleet_value == NULL || strcmp(own, x->fleet_value) != 0) {
            because(s->why_no_reverse, "%s's %s is %s, not the fleet's %s", ref->host, s->label,
                    own, x->fleet_value ? x->fleet_value : "(no majority)");
            memset(s->reverse_host, 0, sizeof s->reverse_host);
            continue;
        }
        /* The same mapping with the two sides swapped: the odd host's value, given to ref. */
        sm_fp_diff swapped = *x;
        swapped.host_value = x->fleet_value;
        swapped.fleet_value = x->host_value;
        if (!treatment_of(&m, &swapped, s->label, s->reverse, sizeof s->reverse,
                          s->why_no_reverse)) {
            memset(s->reverse, 0, sizeof s->reverse);
            memset(s->reverse_host, 0, sizeof s->reverse_host);
            continue;
        }
        n++;
    }
    return n;
}

int sm_xp_plan_make(const sm_fp_diffs *d, const char *allow, size_t max_tested, sm_xp_plan *out,
                    sm_error *err)
{
    return sm_xp_plan_make_for(NULL, d, allow, max_tested, out, err);
}
