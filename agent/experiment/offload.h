/* An interface's offload as treatments set it (offload.c): the ethtool ioctl's legacy get and
 * set of one feature (ETHTOOL_GGSO / ETHTOOL_SGSO and their kin), from the fingerprint's own
 * table (sm_fp_offloads), so that "on" and "off" mean what the coordinator compares. In the
 * calling thread's network namespace. */
#ifndef SM_AGENT_EXPERIMENT_OFFLOAD_H
#define SM_AGENT_EXPERIMENT_OFFLOAD_H

#include <stddef.h>

#include "proto/err.h"

/* key "IFACE NAME" (a treatment part's, proto/treatment.h): "on" or "off" into buf (at least
 * 4 bytes). 0, SM_EINVAL for a name the fingerprint does not read, or SM_ESYS naming the
 * interface and the errno. */
int sm_treat_offload_get(const char *key, char *buf, size_t cap, sm_error *err);

/* Sets key's offload to value ("on" or "off"). 0; SM_EINVAL when the kernel says the device
 * cannot change it (EOPNOTSUPP: "lo's driver fixes sg; ..."); SM_ESYS for another errno. The
 * caller reads it back: a device may take a request and keep another value. */
int sm_treat_offload_set(const char *key, const char *value, sm_error *err);

#endif
