/* Which hosts of a run share one machine, from the identity their agents report in their facts
 * (boot id, machine id). Jobs of such hosts measure each other when they run side by side: a
 * lab of network namespaces on one machine is one set of CPUs. */
#ifndef SM_COORD_SHARING_H
#define SM_COORD_SHARING_H

#include <stddef.h>

#include "proto/err.h"

typedef struct sm_sharing_host {
    const char *name;
    const char *boot_id;    /* the kernel's boot id; "" or NULL when its agent did not say */
    const char *machine_id; /* /etc/machine-id; "" or NULL when unknown */
} sm_sharing_host;

/* Two hosts share a machine when they report the same boot id, or, when either lacks a boot
 * id, the same machine id. (A machine id alone is weaker: cloned images share it, so two hosts
 * whose boot ids differ are two machines whatever their machine ids say.)
 *
 * Sets *sharing to the number of hosts that share a machine with another host of the list (0:
 * every host is a machine of its own, or nothing is known) and writes into note (len bytes,
 * len > 0) one clause per shared machine, in the order of the hosts:
 *   "h1, h2, h3 share one machine (boot id 4af93bb9)"
 * clauses joined by "; ", and cut to fit with "..." (a long list of names ends "and N more").
 * note is "" when *sharing is 0. Returns 0, or SM_ENOMEM (nothing written). */
int sm_sharing_find(const sm_sharing_host *hosts, size_t n, size_t *sharing, char *note, size_t len,
                    sm_error *err);

#endif
