/* Collects the host facts that explain a measurement. */
#ifndef SM_AGENT_HOST_FACTS_H
#define SM_AGENT_HOST_FACTS_H

#include "proto/facts.h"

/* Fills *f from uname, /proc and sysctl files; a fact that cannot be read is "unknown" or 0
 * (the boot id and machine id ""), never an error. */
void sm_facts_collect(sm_facts *f);

/* The id sent for machine_id (32 hex digits of /etc/machine-id): HMAC-SHA256 keyed by those 16
 * bytes over sockmatrix's fixed application id, cut to 128 bits and made a version 4 UUID, as
 * systemd's sd_id128_get_machine_app_specific() does; out gets 32 lowercase hex digits. -1 (out
 * "") for anything but 32 hex digits. */
int sm_facts_machine_hash(const char *machine_id, char out[33]);

#endif
