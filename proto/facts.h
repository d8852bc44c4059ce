/* Host facts: what explains a number (the 2010 post listed CPU and memory for this reason). */
#ifndef SM_PROTO_FACTS_H
#define SM_PROTO_FACTS_H

#include <stdint.h>

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
} sm_facts;

#endif
