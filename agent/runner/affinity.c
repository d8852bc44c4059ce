/* The --affinity option: two CPUs this process may run on. */
#include "agent/runner/affinity.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "proto/params.h"

int sm_affinity_parse(const char *val, int *client_cpu, int *server_cpu, sm_error *err)
{
    static const char want[] = "two CPU numbers, client,server (e.g. 0,1)";
    char buf[64], *comma;
    uint64_t c, s;
    snprintf(buf, sizeof buf, "%s", val);
    if (!(comma = strchr(buf, ',')))
        return sm_error_set(err, SM_EINVAL, "--affinity: '%s' is not %s", val, want);
    *comma = '\0';
    if (sm_parse_u64(buf, &c) || sm_parse_u64(comma + 1, &s))
        return sm_error_set(err, SM_EINVAL, "--affinity: '%s' is not %s", val, want);
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return sm_error_set(err, SM_EINVAL, "--affinity: cannot read this process's CPUs");
    const uint64_t cpus[2] = {c, s};
    for (int i = 0; i < 2; i++)
        if (cpus[i] >= CPU_SETSIZE || !CPU_ISSET((int)cpus[i], &allowed))
            return sm_error_set(err, SM_EINVAL,
                                "--affinity: CPU %llu is not one this process may run on "
                                "(it may use %d CPUs)",
                                (unsigned long long)cpus[i], CPU_COUNT(&allowed));
    *client_cpu = (int)c;
    *server_cpu = (int)s;
    return 0;
}
