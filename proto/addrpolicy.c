/* The address policies: classify an IP literal, match it against allowed classes and nets. */
#include "proto/addrpolicy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* An IPv4 or IPv6 literal into family and 16 bytes (IPv4 in the first four). An IPv4-mapped
 * IPv6 address (::ffff:127.0.0.1) is taken as the IPv4 address it maps: a socket connecting to
 * it reaches that address. */
static bool literal(const char *s, int *family, uint8_t out[16])
{
    memset(out, 0, 16);
    if (inet_pton(AF_INET, s, out) == 1) {
        *family = AF_INET;
        return true;
    }
    if (inet_pton(AF_INET6, s, out) != 1)
        return false;
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(out, mapped, sizeof mapped) == 0) {
        memmove(out, out + 12, 4);
        memset(out + 4, 0, 12);
        *family = AF_INET;
        return true;
    }
    *family = AF_INET6;
    return true;
}

static bool in_net(const uint8_t *a, const uint8_t *net, unsigned prefix)
{
    unsigned full = prefix / 8, rest = prefix % 8;
    if (memcmp(a, net, full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xffu << (8 - rest));
    return (a[full] & mask) == (net[full] & mask);
}

enum { CLASS_UNICAST = 0, CLASS_UNSPECIFIED = -1 };

/* The class bit addr falls in, CLASS_UNICAST, or CLASS_UNSPECIFIED. */
static int classify(int family, const uint8_t *a)
{
    if (family == AF_INET) {
        if (a[0] == 0)
            return CLASS_UNSPECIFIED;
        if (a[0] == 127)
            return SM_ADDR_LOOPBACK;
        if (a[0] == 169 && a[1] == 254)
            return SM_ADDR_LINK_LOCAL;
        if ((a[0] & 0xf0) == 224 || (a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255))
            return SM_ADDR_MULTICAST;
        /* RFC 1918, and RFC 6598's shared space that carrier NATs and some clouds use inside */
        if (a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) || (a[0] == 192 && a[1] == 168) ||
            (a[0] == 100 && (a[1] & 0xc0) == 64))
            return SM_ADDR_PRIVATE;
        return CLASS_UNICAST;
    }
    static const uint8_t zero[16], one[16] = {[15] = 1};
    if (memcmp(a, zero, 16) == 0)
        return CLASS_UNSPECIFIED;
    if (memcmp(a, one, 16) == 0)
        return SM_ADDR_LOOPBACK;
    if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
        return SM_ADDR_LINK_LOCAL;
    if (a[0] == 0xff)
        return SM_ADDR_MULTICAST;
    if ((a[0] & 0xfe) == 0xfc) /* unique local, RFC 4193 */
        return SM_ADDR_PRIVATE;
    return CLASS_UNICAST;
}

static const struct {
    const char *name;
    uint32_t bit;
} class_names[] = {
    {"loopback", SM_ADDR_LOOPBACK},
    {"link-local", SM_ADDR_LINK_LOCAL},
    {"multicast", SM_ADDR_MULTICAST},
    {"private", SM_ADDR_PRIVATE},
    {"any", SM_ADDR_ANY},
};

static const char *option_of(const sm_addr_policy *p)
{
    return p->option ? p->option : "--data-addr-allow";
}

static int parse_item(sm_addr_policy *p, const char *item, sm_error *err)
{
    for (size_t i = 0; i < sizeof class_names / sizeof class_names[0]; i++)
        if (strcmp(item, class_names[i].name) == 0) {
            p->allow |= class_names[i].bit;
            return 0;
        }
    char addr[64];
    const char *slash = strchr(item, '/');
    size_t n = slash ? (size_t)(slash - item) : strlen(item);
    sm_addr_net net = {0};
    if (n >= sizeof addr)
        goto bad;
    memcpy(addr, item, n);
    addr[n] = '\0';
    if (!literal(addr, &net.family, net.addr))
        goto bad;
    const unsigned max = net.family == AF_INET ? 32 : 128;
    net.prefix = max;
    if (slash) {
        char *end;
        unsigned long v = strtoul(slash + 1, &end, 10);
        if (!slash[1] || *end || slash[1] == '-' || slash[1] == '+' || v > max)
            goto bad;
        net.prefix = (unsigned)v;
    }
    if (p->n_nets == SM_ADDR_POLICY_NETS_MAX)
        return sm_error_set(err, SM_EINVAL, "%s: more than %d networks", option_of(p),
                            SM_ADDR_POLICY_NETS_MAX);
    p->nets[p->n_nets++] = net;
    return 0;
bad:
    return sm_error_set(err, SM_EINVAL,
                        "%s: '%.80s' is not loopback, link-local, multicast, private, any "
                        "or an address/prefix such as 127.0.0.0/8",
                        option_of(p), item);
}

int sm_addr_policy_parse(sm_addr_policy *p, const char *list, sm_error *err)
{
    sm_addr_policy next = *p;
    const char *s = list;
    for (;;) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        char item[96];
        if (n == 0 || n >= sizeof item)
            return sm_error_set(err, SM_EINVAL, "%s: '%.80s' has an empty or over-long item",
                                option_of(p), list);
        memcpy(item, s, n);
        item[n] = '\0';
        int rc = parse_item(&next, item, err);
        if (rc)
            return rc;
        if (!comma)
            break;
        s = comma + 1;
    }
    *p = next;
    return 0;
}

int sm_addr_policy_check(const sm_addr_policy *p, const char *addr, sm_error *err)
{
    int family;
    uint8_t a[16];
    if (!literal(addr, &family, a))
        return sm_error_set(err, SM_EINVAL, "'%.64s' is not an IPv4 or IPv6 address", addr);
    int cls = classify(family, a);
    if (cls == CLASS_UNSPECIFIED)
        return sm_error_set(err, SM_EINVAL,
                            "%s is an unspecified address, which names no host to connect to",
                            addr);
    if (cls == CLASS_UNICAST || (cls == SM_ADDR_PRIVATE && !(p->refuse & SM_ADDR_PRIVATE)) ||
        (p->allow & ((uint32_t)cls | SM_ADDR_ANY)))
        return 0;
    for (size_t i = 0; i < p->n_nets; i++)
        if (p->nets[i].family == family && in_net(a, p->nets[i].addr, p->nets[i].prefix))
            return 0;
    const char *name = "";
    for (size_t i = 0; i < sizeof class_names / sizeof class_names[0]; i++)
        if (class_names[i].bit == (uint32_t)cls)
            name = class_names[i].name;
    if (p->option)
        return sm_error_set(err, SM_EINVAL,
                            "%s is a %s address, which %s refuses unless told (%s %s allows it)",
                            addr, name, p->option, p->option, name);
    return sm_error_set(err, SM_EINVAL,
                        "%s is a %s address, outside the data address policy "
                        "(--data-addr-allow %s allows it)",
                        addr, name, name);
}
