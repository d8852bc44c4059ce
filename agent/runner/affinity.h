/* CPU placement of a job's two ends: the --affinity option both front ends (--once and the
 * fleet daemon) take. */
#ifndef SM_AGENT_RUNNER_AFFINITY_H
#define SM_AGENT_RUNNER_AFFINITY_H

#include "proto/err.h"

/* --affinity C,S: the CPUs of a job's client and server threads, both ones this process may run
 * on. Returns 0 or SM_EINVAL naming the option, e.g. "--affinity: CPU 7 is not one this process
 * may run on (it may use 2 CPUs)". */
int sm_affinity_parse(const char *val, int *client_cpu, int *server_cpu, sm_error *err);

#endif
