/* What the CLI's commands print: error lines, answer bodies, files written whole. */
#ifndef SM_CLI_OUTPUT_H
#define SM_CLI_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "coordinator/cli/apiview.h"
#include "proto/err.h"

/* One line on stderr: "sockmatrix: " and the formatted message. */
void sm_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* body[0..len) on stdout, ending in a newline for the terminal's sake; 0, or 1 once the
 * failure to write is reported. */
int sm_cli_print_body(const char *body, size_t len);

/* An API answer printed as it is (--format json), then freed; as sm_cli_print_body. */
struct sm_http_resp;
int sm_cli_print_answer(struct sm_http_resp *r);

/* Writes data to path through a temporary file in the same folder and rename(), so that a
 * reader never sees half a table and a failure leaves the old file as it was. The file
 * follows the umask. Errors: SM_ESYS, SM_ENOMEM, with err->msg naming the file. */
int sm_cli_write_atomic(const char *path, const char *data, size_t len, sm_error *err);

/* How the run's jobs go, when there is something to say: one at a time and why, or the
 * warning that they run side by side on hosts that share one machine. Each line starts
 * with prefix (may be NULL). */
void sm_cli_print_parallel(FILE *f, const char *prefix, const sm_apiview_run *run);

/* v with 4 significant digits, as the dashboard shows figures: "19960", "0.0567"; an
 * exponent only below 0.001 or from 10^9 ("1.235e+09"); "-" for NaN or infinity. */
void sm_cli_num4(double v, char *buf, size_t cap);

/* The REASON column of sockmatrix jobs for j, one of GET /api/runs/ID/jobs's "jobs": a failed
 * job's "reason"; for a job whose result says its host was disturbed, "disturbed: WHY" (the
 * agent's result.host.disturbed_reason, a pair job's from either side); else "". */
void sm_cli_job_reason(const sm_apiview_job *j, char *buf, size_t cap);

/* v to the last digit (%.17g), nothing for NaN or infinity, then sep; on stdout. */
void sm_cli_csv_num(double v, const char *sep);

#endif
