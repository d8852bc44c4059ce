/* Which IP addresses a connection may go to: the data address policy shared by the
 * coordinator (what an agent may announce as its data_addr) and the agent (where a pair job's
 * client may connect), and the coordinator's webhook destination policy (--webhook-allow). */
#ifndef SM_PROTO_ADDRPOLICY_H
#define SM_PROTO_ADDRPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"

#define SM_ADDR_POLICY_NETS_MAX 16

/* Classes of address refused unless allowed (bits of sm_addr_policy.allow). */
enum {
    SM_ADDR_LOOPBACK = 1u << 0,   /* 127.0.0.0/8, ::1 */
    SM_ADDR_LINK_LOCAL = 1u << 1, /* 169.254.0.0/16, fe80::/10 */
    SM_ADDR_MULTICAST = 1u << 2,  /* 224.0.0.0/4, 255.255.255.255, ff00::/8 */
    SM_ADDR_ANY = 1u << 3,        /* every class */
    /* 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7: allowed unless in
     * sm_addr_policy.refuse */
    SM_ADDR_PRIVATE = 1u << 4,
};

typedef struct sm_addr_net {
    int family; /* AF_INET or AF_INET6 */
    uint8_t addr[16];
    unsigned prefix;
} sm_addr_net;

/* Public unicast addresses are always allowed; private ones unless refuse holds
 * SM_ADDR_PRIVATE. The unspecified addresses (0.0.0.0/8, ::) are always refused: they name no
 * remote host. The rest is refused unless its class is in allow or it lies in one of nets. A
 * zeroed struct is the default data address policy. */
typedef struct sm_addr_policy {
    uint32_t allow;
    uint32_t refuse;    /* SM_ADDR_PRIVATE: private addresses refused unless allowed too */
    const char *option; /* the option errors name; NULL: "--data-addr-allow" */
    sm_addr_net nets[SM_ADDR_POLICY_NETS_MAX];
    size_t n_nets;
} sm_addr_policy;

/* Adds the comma-separated items of list to *p: "loopback", "link-local", "multicast",
 * "private", "any", or a CIDR ("127.0.0.0/8", "fe80::/10"; an address alone is a /32 or /128).
 * SM_EINVAL with err naming the bad item; *p is unchanged then. */
int sm_addr_policy_parse(sm_addr_policy *p, const char *list, sm_error *err);

/* 0 when addr (an IPv4 or IPv6 literal) is allowed; else SM_EINVAL with err saying which class
 * it is in and how to allow it ("127.0.0.1 is a loopback address, outside the data address
 * policy (--data-addr-allow loopback allows it)"; with p->option set: "127.0.0.1 is a loopback
 * address, which --webhook-allow refuses unless told (--webhook-allow loopback allows it)"). */
int sm_addr_policy_check(const sm_addr_policy *p, const char *addr, sm_error *err);

#endif
