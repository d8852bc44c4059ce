/* Host facts: what explains a number (the 2010 post listed CPU and memory for this reason). */
#ifndef SM_PROTO_FACTS_H
#define SM_PROTO_FACTS_H

#include <stdint.h>

/* Longest boot id or machine id kept: a UUID is 36 characters, a machine id 32. */
#define SM_FACTS_ID_MAX 64

typedef struct sm_facts {
    char hostname[256];
    char kernel[128];         /* uname -r */
    char cpu_model[128];      /* /proc/cpuinfo "model name", or "unknown" */
    uint32_t cores;           /* online CPUs */
    uint64_t mem_bytes;       /* MemTotal */
    char congestion[32];      /* net.ipv4.tcp_congestion_control */
    uint32_t lo_mtu;          /* MTU of the loopback interface */
    double loadavg[3];        /* 1, 5, 15 minutes, sampled before the jobs */
    uint32_t tcp_autocorking; /* net.ipv4.tcp_autocorking (2 = unknown) */
    /* Which machine this is, so that agents on one machine (network namespaces, containers)
     * are known to share its CPUs: the kernel's boot id (/proc/sys/kernel/random/boot_id, new
     * at every boot) and the machine id (/etc/machine-id). "" when unknown; neither is the
     * agent's own "boot", which is new at every start of the agent. */
    char boot_id[SM_FACTS_ID_MAX + 1];
    char machine_id[SM_FACTS_ID_MAX + 1];
} sm_facts;

#endif
