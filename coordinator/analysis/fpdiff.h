/* What makes a host different: its fingerprint against the fleet's majority, item by item,
 * ranked by what can explain the flagged metric; what changed on a host between two runs; and
 * the side by side of any hosts. Pure computation on decoded fingerprints. */
#ifndef SM_COORDINATOR_FPDIFF_H
#define SM_COORDINATOR_FPDIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"
#include "proto/fingerprint.h"

/* One host and its fingerprint (NULL: none known; such a host is not part of the fleet). */
typedef struct sm_fp_host {
    const char *host;
    const sm_fingerprint *fp;
} sm_fp_host;

/* What the flagged metric measured, for the ranking. Relevance, higher first:
 *   100  the interface's qdiscs and classes (if.<iface>.qdisc*, if.<iface>.class.*)
 *    90  the transport's sysctls: tcp (and http, which runs over TCP) sysctl.net.ipv4.tcp_*,
 *        udp sysctl.net.ipv4.udp_*, unix sysctl.net.unix.*; all three when it is unknown
 *    80  the interface's offloads (if.<iface>.offload.*)
 *    70  its mtu, txqueuelen, speed and driver; 65 its other items
 *    50  sysctl.net.core.*
 *    40  cpu.*, kernel.*, virt.*, clock.*, cgroup.*, mem.*
 *    30  other sysctls and items not named here
 *    20  lib.*, agent.*
 *    10  other interfaces' items
 * With link, all of the (data) interface's items come before the transport's sysctls (qdisc
 * 100, offloads 96, mtu... 94, others 92). An unknown iface ("") makes every interface the
 * interface. Ties go by item name. */
typedef struct sm_fp_context {
    const char *transport; /* "tcp", "unix", "udp", "http", "" unknown */
    const char *iface;     /* the interface the test used ("lo" for a local socket test, the data
                            * interface for a pair or link job); "" unknown */
    bool link;             /* a slow link or a pair job: the link's interface comes first */
} sm_fp_context;

typedef struct sm_fp_diff {
    char item[SM_FP_KEY_MAX + 1];
    char *host_value;  /* owned: the item's text (sm_fp_item_text) on the host */
    char *fleet_value; /* owned: the majority's text; NULL when the fleet has no majority */
    uint32_t hosts_with_fleet_value;
    uint32_t fleet_hosts; /* hosts compared against (the others with a fingerprint) */
    int relevance;        /* higher first; the list is sorted by it, then by item */
} sm_fp_diff;

typedef struct sm_fp_diffs {
    sm_fp_diff *v; /* owned */
    size_t n, cap;
} sm_fp_diffs;

void sm_fp_diffs_fini(sm_fp_diffs *d);

/* The flagged host's items that differ from the majority of the other hosts (more than half
 * of them hold one value; an item a host lacks counts as "(absent)"), ranked by relevance to
 * ctx, at most max of them (0: all). Items named info.* are never compared. An item where
 * the other hosts have no majority and the flagged host's value is held by none of them comes
 * after every majority difference, with fleet_value NULL ("no majority"). */
int sm_fp_differences(const sm_fp_host *hosts, size_t n, const char *flagged,
                      const sm_fp_context *ctx, size_t max, sm_fp_diffs *out, sm_error *err);

/* What changed on one host between two fingerprints: host_value is after's text, fleet_value
 * before's, hosts_with_fleet_value and fleet_hosts 0; ranked as sm_fp_differences. */
int sm_fp_changes(const sm_fingerprint *before, const sm_fingerprint *after,
                  const sm_fp_context *ctx, size_t max, sm_fp_diffs *out, sm_error *err);

/* How people read an item: "lo qdisc" for if.lo.qdisc, "net.ipv4.tcp_rmem" for
 * sysctl.net.ipv4.tcp_rmem; others as they are. */
const char *sm_fp_item_label(const char *item, char *buf, size_t len);

/* "h2: lo qdisc tbf rate 400Mbit burst 128Kb (fleet: noqueue, 2 of 2 hosts)", or
 * "(fleet: no majority of 4 hosts)"; for a change (fleet_hosts 0):
 * "h2: lo qdisc now tbf rate 400Mbit ... (was noqueue)". Returns what snprintf returns. */
int sm_fp_diff_text(const char *host, const sm_fp_diff *d, char *buf, size_t len);

/* The lists as JSON text, compact:
 *   [{"item","label","host_value","fleet_value","hosts_with_fleet_value","fleet_hosts"}...],
 * fleet_value null for no majority; changes: [{"item","label","before","after"}...].
 * malloc'd (the caller frees it), or NULL when out of memory. */
char *sm_fp_diffs_json(const sm_fp_diffs *d);
char *sm_fp_changes_json(const sm_fp_diffs *d);

/* Side by side: every item on which the given hosts do not all agree, in item order. */
typedef struct sm_fp_side_row {
    char item[SM_FP_KEY_MAX + 1];
    char **values; /* owned, one text per host, in the hosts' order */
} sm_fp_side_row;

typedef struct sm_fp_table {
    sm_fp_side_row *rows; /* owned */
    size_t n, cap;
    size_t n_hosts;
    size_t same; /* items on which all hosts agree (not in rows) */
} sm_fp_table;

void sm_fp_table_fini(sm_fp_table *t);
int sm_fp_side_by_side(const sm_fp_host *hosts, size_t n, sm_fp_table *out, sm_error *err);

#endif
