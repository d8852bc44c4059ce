/* --once: a local comparison of transports, repetitions interleaved, summarised. */
#ifndef SM_AGENT_ONCE_ONCE_H
#define SM_AGENT_ONCE_ONCE_H

#include <stdio.h>

#include "agent/once/opts.h"
#include "proto/err.h"
#include "proto/report.h"

/* Runs every variant of o (warm-up rounds first, then the measured rounds, each round one job
 * per variant in order: tcp, unix, tcp, unix, ...), fills *rep (summaries and paired ratios
 * included) and writes one progress line per job to `progress` (NULL: none).
 * Returns the number of failed jobs (>= 0), or an SM_E code when the run could not start. */
int sm_once_run(const sm_once_opts *o, sm_report *rep, FILE *progress, sm_error *err);

/* Frees what sm_once_run allocated in *rep. */
void sm_once_report_fini(sm_report *rep);

/* The metrics whose TCP/UDS ratio a workload reports, in table order; *n is set. */
const sm_metric *sm_once_ratio_metrics(sm_workload_kind w, size_t *n);

#endif
