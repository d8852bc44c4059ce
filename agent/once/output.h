/* Prints a --once report as a comparison table, CSV (RFC 4180) or JSON. */
#ifndef SM_AGENT_ONCE_OUTPUT_H
#define SM_AGENT_ONCE_OUTPUT_H

#include <stdio.h>

#include "agent/once/opts.h"
#include "proto/report.h"

/* One row per variant: medians with 95% CIs, n, CPU per side, then the paired ratios and
 * every failure with its reason. */
void sm_output_table(FILE *f, const sm_report *rep, const sm_once_opts *o);

/* One row per sample (warm-up rows flagged), CRLF line ends, one header row whose metric
 * columns are the metric names, which carry their units (throughput_MBps, rtt_p50_us). */
void sm_output_csv(FILE *f, const sm_report *rep);

/* The JSON document of sm_codec_report_encode. Returns 0 or an SM_E code with err set. */
int sm_output_json(FILE *f, const sm_report *rep, sm_error *err);

#endif
