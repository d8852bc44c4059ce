/* A job's treatment text: parsed strictly, so that one setting has one spelling (the coordinator
 * compares treatments as text) and nothing an agent writes to /proc/sys or netlink is
 * ambiguous. */
#include "proto/treatment.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "proto/params.h"

static const char *const kind_names[] = {"sysctl", "qdisc", "socket", "offload"};
/* The offloads the fingerprint reads (if.IFACE.offload.NAME), in its order. */
static const char *const offloads[] = {"gso", "gro", "tso", "tx_csum", "rx_csum", "sg"};
#define N_KINDS (sizeof kind_names / sizeof kind_names[0])

const char *sm_treat_kind_name(sm_treat_kind k)
{
    return (unsigned)k < N_KINDS ? kind_names[k] : "unknown";
}

const char *sm_treat_flag(sm_treat_kind k)
{
    return k == SM_TREAT_SYSCTL || k == SM_TREAT_QDISC || k == SM_TREAT_OFFLOAD ? kind_names[k]
                                                                                : NULL;
}

const char *sm_treatment_part_text(const sm_treat_part *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s%s%s", sm_treat_kind_name(p->kind), p->key,
             p->kind == SM_TREAT_QDISC ? " " : "=", p->value);
    return buf;
}

/* A value written to the kernel as it is: printable ASCII or tab, bounded, no ';' (it ends a
 * part), and no blank at either end (two spellings of one setting). */
static int check_value(const char *v, size_t part, const char *what, sm_error *err)
{
    size_t n = strlen(v);
    if (n == 0)
        return sm_error_set(err, SM_EINVAL, "treatment: part %zu: the value of %s is empty", part,
                            what);
    if (n > SM_TREAT_VALUE_MAX)
        return sm_error_set(err, SM_EINVAL,
                            "treatment: part %zu: the value of %s is longer than %d bytes", part,
                            what, SM_TREAT_VALUE_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if ((c < 0x20 && c != '\t') || c >= 0x7f || c == ';')
            return sm_error_set(err, SM_EINVAL,
                                "treatment: part %zu: byte %zu of the value of %s is not "
                                "printable ASCII or tab (or is ';')",
                                part, i, what);
    }
    if (strchr(" \t", v[0]) || strchr(" \t", v[n - 1]))
        return sm_error_set(err, SM_EINVAL,
                            "treatment: part %zu: the value of %s starts or ends with a blank",
                            part, what);
    return 0;
}

static int check_sysctl_key(const char *k, size_t part, sm_error *err)
{
    size_t n = strlen(k);
    if (strncmp(k, "net.", 4) != 0)
        return sm_error_set(err, SM_EINVAL,
                            "treatment: part %zu: sysctl key '%s' does not start with net.", part,
                            k);
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
            return sm_error_set(err, SM_EINVAL,
                                "treatment: part %zu: sysctl key '%s' holds '%c': only a-z 0-9 _ "
                                "and . are allowed",
                                part, k, (c >= 0x20 && c < 0x7f) ? c : '?');
        if (c == '.' && (k[i + 1] == '.' || k[i + 1] == '\0'))
            return sm_error_set(err, SM_EINVAL,
                                "treatment: part %zu: sysctl key '%s' has an empty component", part,
                                k);
    }
    return 0;
}

static int check_iface(const char *k, size_t part, sm_error *err)
{
    size_t n = strlen(k);
    bool ok = n >= 1 && n <= SM_TREAT_IFACE_MAX;
    for (size_t i = 0; ok && i < n; i++) {
        char c = k[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '.' || c == '-';
    }
    if (!ok)
        return sm_error_set(err, SM_EINVAL,
                            "treatment: part %zu: interface '%.20s' is not 1 to %d of A-Z a-z 0-9 "
                            "_ . -",
                            part, k, SM_TREAT_IFACE_MAX);
    return 0;
}

/* offload IFACE NAME=on|off: key "IFACE NAME", value "on" or "off". */
static int parse_offload(const char *rest, size_t part, sm_treat_part *out, sm_error *err)
{
    const char *sp = strchr(rest, ' '), *eq = sp ? strchr(sp + 1, '=') : NULL;
    if (!sp || !eq)
        return sm_error_set(err, SM_EINVAL, "treatment: part %zu: offload takes IFACE NAME=on|off",
                            part);
    char iface[SM_TREAT_IFACE_MAX + 2]; /* one byte more than a name takes: check_iface says */
    size_t in = (size_t)(sp - rest);
    in = in > SM_TREAT_IFACE_MAX + 1 ? SM_TREAT_IFACE_MAX + 1 : in;
    memcpy(iface, rest, in);
    iface[in] = '\0';
    int rc = check_iface(iface, part, err);
    if (rc != 0)
        return rc;
    const char *name = sp + 1;
    size_t nn = (size_t)(eq - name), i = 0;
    while (i < sizeof offloads / sizeof offloads[0] &&
           !(strlen(offloads[i]) == nn && strncmp(name, offloads[i], nn) == 0))
        i++;
    if (i == sizeof offloads / sizeof offloads[0])
        return sm_error_set(err, SM_EINVAL,
                            "treatment: part %zu: offload '%.20s' is not gso, gro, tso, tx_csum, "
                            "rx_csum or sg",
                            part, name);
    if (strcmp(eq + 1, "on") != 0 && strcmp(eq + 1, "off") != 0)
        return sm_error_set(err, SM_EINVAL, "treatment: part %zu: offload %s %s is on or off", part,
                            iface, offloads[i]);
    snprintf(out->key, sizeof out->key, "%s %s", iface, offloads[i]);
    snprintf(out->value, sizeof out->value, "%s", eq + 1);
    return 0;
}

/* socket NAME=N: the job's own socket options, within params' bounds. */
static int parse_socket(const char *rest, size_t part, sm_treat_part *out, sm_error *err)
{
    const char *eq = strchr(rest, '=');
    size_t kn = eq ? (size_t)(eq - rest) : 0;
    if (!eq || kn >= sizeof out->key)
        return sm_error_set(err, SM_EINVAL,
                            "treatment: part %zu: socket takes NAME=VALUE (rcvbuf, sndbuf, "
                            "nodelay, cork, congestion, notsent_lowat)",
                            part);
    memcpy(out->key, rest, kn);
    out->key[kn] = '\0';
    snprintf(out->value, sizeof out->value, "%s", eq + 1);
    uint64_t v;
    bool num = sm_parse_u64(out->value, &v) == 0;
    if (strcmp(out->key, "nodelay") == 0 || strcmp(out->key, "cork") == 0) {
        if (strcmp(out->value, "0") != 0 && strcmp(out->value, "1") != 0)
            return sm_error_set(err, SM_EINVAL, "treatment: part %zu: socket %s is 0 or 1", part,
                                out->key);
        return 0;
    }
    if (strcmp(out->key, "congestion") == 0) {
        const size_t n = strlen(out->value);
        bool ok = n >= 1 && n <= SM_TREAT_CONGESTION_MAX;
        for (size_t i = 0; ok && i < n; i++) {
            char c = out->value[i];
            ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        }
        if (!ok)
            return sm_error_set(err, SM_EINVAL,
                                "treatment: part %zu: socket congestion is 1 to %d of a-z 0-9 _",
                                part, SM_TREAT_CONGESTION_MAX);
        return 0;
    }
    if (strcmp(out->key, "notsent_lowat") == 0) {
        if (!num || v < 1 || v > UINT32_MAX || out->value[0] == '0')
            return sm_error_set(err, SM_EINVAL,
                                "treatment: part %zu: socket notsent_lowat is a number of bytes "
                                "from 1 to 4294967295",
                                part);
        return 0;
    }
    if (strcmp(out->key, "rcvbuf") != 0 && strcmp(out->key, "sndbuf") != 0)
        return sm_error_set(err, SM_EINVAL,
                            "treatment: part %zu: socket '%.20s' is not rcvbuf, sndbuf, nodelay, "
                            "cork, congestion or notsent_lowat",
                            part, out->key);
    if (!num || v < SM_SOCKBUF_MIN || v > SM_SOCKBUF_MAX || out->value[0] == '0')
        return sm_error_set(err, SM_EINVAL,
                            "treatment: part %zu: socket %s is a number of bytes from %u to %u",
                            part, out->key, SM_SOCKBUF_MIN, SM_SOCKBUF_MAX);
    return 0;
}

/* One part, text[0..len), numbered from 1 in the messages. */
static int parse_part(const char *text, size_t len, size_t part, sm_treat_part *out, sm_error *err)
{
    char buf[SM_TREATMENT_MAX + 1];
    memcpy(buf, text, len);
    buf[len] = '\0';
    memset(out, 0, sizeof *out);
    char *sp = strchr(buf, ' ');
    size_t kind_len = sp ? (size_t)(sp - buf) : len;
    size_t k = 0;
    while (k < N_KINDS &&
           !(strlen(kind_names[k]) == kind_len && strncmp(buf, kind_names[k], kind_len) == 0))
        k++;
    if (k == N_KINDS)
        return sm_error_set(err, SM_EINVAL,
                            "treatment: part %zu: unknown kind '%.*s' (sysctl, qdisc, socket, "
                            "offload%s)",
                            part, (int)(kind_len > 20 ? 20 : kind_len), buf,
                            part > 1 ? "; a value may not hold ';'" : "");
    out->kind = (sm_treat_kind)k;
    if (!sp || sp[1] == '\0')
        return sm_error_set(err, SM_EINVAL, "treatment: part %zu: %s takes a setting", part,
                            kind_names[k]);
    const char *rest = sp + 1;
    if (out->kind == SM_TREAT_SOCKET)
        return parse_socket(rest, part, out, err);
    if (out->kind == SM_TREAT_OFFLOAD)
        return parse_offload(rest, part, out, err);
    /* sysctl KEY=VALUE splits at the first '=' (a key has none); qdisc IFACE VALUE at the
     * first space (an interface has none). */
    const char *cut = strchr(rest, out->kind == SM_TREAT_SYSCTL ? '=' : ' ');
    if (!cut)
        return sm_error_set(err, SM_EINVAL, "treatment: part %zu: %s", part,
                            out->kind == SM_TREAT_SYSCTL ? "sysctl takes KEY=VALUE"
                                                         : "qdisc takes IFACE VALUE");
    size_t kn = (size_t)(cut - rest);
    const bool sysctl = out->kind == SM_TREAT_SYSCTL;
    if (kn > SM_TREAT_KEY_MAX && sysctl)
        return sm_error_set(err, SM_EINVAL,
                            "treatment: part %zu: sysctl key '%.20s...' is longer than %d bytes",
                            part, rest, SM_TREAT_KEY_MAX);
    if (kn > SM_TREAT_KEY_MAX)
        kn = SM_TREAT_KEY_MAX; /* still too long for an interface: check_iface says so */
    memcpy(out->key, rest, kn);
    out->key[kn] = '\0';
    int rc = sysctl ? check_sysctl_key(out->key, part, err) : check_iface(out->key, part, err);
    if (rc != 0)
        return rc;
    snprintf(out->value, sizeof out->value, "%s", cut + 1);
    char what[SM_TREAT_KEY_MAX + 16];
    snprintf(what, sizeof what, "%s%s", out->key, out->kind == SM_TREAT_QDISC ? "'s qdisc" : "");
    return check_value(out->value, part, what, err);
}

int sm_treatment_parse(const char *text, sm_treatment *out, sm_error *err)
{
    if (text == NULL)
        return sm_error_set(err, SM_EINVAL, "treatment: no text");
    size_t len = strnlen(text, SM_TREATMENT_MAX + 1);
    if (len > SM_TREATMENT_MAX)
        return sm_error_set(err, SM_EINVAL, "treatment: longer than %d bytes", SM_TREATMENT_MAX);
    out->n = 0;
    const char *at = text;
    while (*at) {
        if (out->n == SM_TREATMENT_PARTS_MAX)
            return sm_error_set(err, SM_EINVAL, "treatment: more than %d parts",
                                SM_TREATMENT_PARTS_MAX);
        const char *end = strchr(at, ';');
        size_t n = end ? (size_t)(end - at) : strlen(at);
        size_t part = out->n + 1;
        if (n == 0 || at[0] == ' ')
            return sm_error_set(err, SM_EINVAL,
                                "treatment: part %zu is empty or starts with a blank (parts are "
                                "joined by \"; \")",
                                part);
        int rc = parse_part(at, n, part, &out->v[out->n], err);
        if (rc != 0)
            return rc;
        for (size_t i = 0; i < out->n; i++) {
            const sm_treat_part *a = &out->v[i], *b = &out->v[out->n];
            if (a->kind == b->kind && strcmp(a->key, b->key) == 0)
                return sm_error_set(err, SM_EINVAL, "treatment: part %zu: sets %s %s again", part,
                                    sm_treat_kind_name(b->kind), b->key);
        }
        out->n++;
        if (!end)
            break;
        if (end[1] != ' ' || end[2] == '\0')
            return sm_error_set(err, SM_EINVAL,
                                "treatment: part %zu: a ';' ends a part and \"; \" starts the "
                                "next (a value may not hold ';')",
                                part);
        at = end + 2;
    }
    return 0;
}

void sm_treatment_socket_apply(const sm_treatment *t, sm_params *p)
{
    for (size_t i = 0; i < t->n; i++) {
        const sm_treat_part *s = &t->v[i];
        uint64_t v = 0;
        if (s->kind == SM_TREAT_SOCKET && strcmp(s->key, "congestion") == 0)
            snprintf(p->congestion, sizeof p->congestion, "%s", s->value);
        if (s->kind != SM_TREAT_SOCKET || sm_parse_u64(s->value, &v) != 0)
            continue;
        if (strcmp(s->key, "rcvbuf") == 0)
            p->rcvbuf = (uint32_t)v;
        else if (strcmp(s->key, "sndbuf") == 0)
            p->sndbuf = (uint32_t)v;
        else if (strcmp(s->key, "nodelay") == 0)
            p->nodelay = v != 0;
        else if (strcmp(s->key, "cork") == 0)
            p->cork = v != 0;
        else if (strcmp(s->key, "notsent_lowat") == 0)
            p->notsent_lowat = (uint32_t)v;
    }
}
