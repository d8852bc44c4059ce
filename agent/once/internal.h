/* What the two halves of --once's option parsing share: opts.c reads the command line into
 * the fields the user gave, resolve.c turns them into the run's tests. Internal to them. */
#ifndef SM_AGENT_ONCE_INTERNAL_H
#define SM_AGENT_ONCE_INTERNAL_H

#include <stdbool.h>

#include "agent/once/opts.h"
#include "proto/err.h"
#include "proto/params.h"

/* Fields the user set, applied over the workload's defaults (or the preset) at the end. */
typedef struct given {
    bool workload, msg_size, count, bytes, duration, framing, cork, sndbuf, rcvbuf, read_size,
        req_size, resp_size, time_limit, transports, nodelay, repetitions, warmup, clients,
        max_reps, ci_rel, connections, repeat, buffer_size, fresh_connect, http2, tls, verify, url;
    sm_params v;
} given;

/* The options as typed into the run's tests: the preset in o->preset (if any) over o's
 * defaults, the lists and repetitions of cli where the user gave them, the fields of g over
 * both; then the checks of each workload and every variant's validation. Returns 0, or
 * SM_EINVAL with err->msg naming the option (as sm_opts_parse). */
int opts_resolve(sm_once_opts *o, const sm_once_opts *cli, const given *g, sm_error *err);

#endif
