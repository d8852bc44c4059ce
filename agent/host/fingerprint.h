/* Collects this host's fingerprint (proto/fingerprint.h): kernel, sysctls of the agent's
 * network namespace, interfaces with their qdiscs and offloads, CPUs, limits, versions. */
#ifndef SM_AGENT_HOST_FINGERPRINT_H
#define SM_AGENT_HOST_FINGERPRINT_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"
#include "proto/fingerprint.h"

/* Fills *fp (initialised by the caller) with this host's items; data_addr ("" none) names the
 * interface carrying it as info.data_if. Never fails for an item it cannot read: that item is
 * {"unreadable":"ERRNO"}. Sets collected_ms (wall) and collect_us (CLOCK_MONOTONIC). Bounds
 * the encoded document to SM_FP_MAX (and SM_FP_ITEMS_MAX) by leaving out whole interfaces (lo
 * and the data interface are kept; then up before down, then by name), setting omitted_ifaces
 * and omitted_reason. SM_ENOMEM only; *fp then holds what was collected so far. Reads the
 * namespaces of the calling thread; not for two threads on one fp. */
int sm_fp_collect(sm_fingerprint *fp, const char *data_addr, sm_error *err);

/* One interface's items ("if.<name>.*"), collected apart so that the interface is kept or left
 * out whole. */
typedef struct sm_fp_iface {
    char name[IF_NAMESIZE];
    bool up;
    sm_fingerprint items; /* owned */
} sm_fp_iface;

/* Copies the items of ifs into fp, whole interfaces in this order: lo and keep_if ("" or NULL:
 * none) always, then the interfaces that are up, then those down, each group by name; the
 * first that would take the encoded document past SM_FP_MAX or fp past SM_FP_ITEMS_MAX, and
 * all after it, are left out and counted in fp->omitted_ifaces with fp->omitted_reason.
 * Reorders ifs; leaves their items with the caller. SM_ENOMEM only. */
int sm_fp_add_ifaces(sm_fingerprint *fp, sm_fp_iface *ifs, size_t n, const char *keep_if,
                     sm_error *err);

/* The root qdisc of interface ifname in the calling thread's network namespace, into out, as
 * the fingerprint's if.<ifname>.qdisc item reads it ("noqueue", "tbf rate 100Mbit burst 131062b
 * limit 756072b"; "noop" for a device that is down and lists none): the one description both
 * the fingerprint and the agent's treatments (agent/experiment/) go by. 0, SM_EINVAL when there
 * is no such interface, SM_ESYS (err names the step and errno) when netlink fails. */
int sm_fp_root_qdisc(const char *ifname, char *out, size_t len, sm_error *err);

/* The offloads the fingerprint reads as if.<iface>.offload.<name>, in its order, with the
 * ethtool commands that get and set each (ETHTOOL_GGSO, ETHTOOL_SGSO...): the one table both
 * the fingerprint and the agent's offload treatments go by. */
typedef struct sm_fp_offload {
    const char *name; /* "gso", "gro", "tso", "tx_csum", "rx_csum", "sg" */
    uint32_t get, set;
} sm_fp_offload;
extern const sm_fp_offload sm_fp_offloads[];
extern const size_t sm_fp_n_offloads;

/* One ethtool ioctl (SIOCETHTOOL) on interface name over socket fd, data the command's
 * struct; in the namespace of the socket. 0 or its errno (EBADF for fd < 0). */
int sm_fp_ethtool(int fd, const char *name, void *data);

/* The text tc would print for a rate of bits_per_s ("57Mbit", "57.3Mbit", "800bit") and a size
 * of bytes ("4000b", "64Kb", "2Mb"), into buf. */
const char *sm_fp_rate_text(unsigned long long bits_per_s, char *buf, size_t len);
const char *sm_fp_size_text(unsigned long long bytes, char *buf, size_t len);

#endif
