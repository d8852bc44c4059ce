/* The CLI's commands, one function each: they print results on stdout and one line per error
 * on stderr, and return the exit status (0 ok, 1 a failure of the coordinator, of the run, or
 * of a file). */
#ifndef SM_CLI_CMD_H
#define SM_CLI_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "coordinator/cli/cli.h"
#include "coordinator/cli/http.h"

/* cmd_list.c: the fleet and the latest runs, as grids. */
int sm_cli_cmd_agents(sm_http *h, const sm_cli_opts *o);
int sm_cli_cmd_runs(sm_http *h, const sm_cli_opts *o);

/* cmd_presets.c: the presets with their job count on every registered host and a time
 * estimate from the newest finished run of the same tests, whatever its name. */
int sm_cli_cmd_presets(sm_http *h, const sm_cli_opts *o);

/* cmd_show.c: one run's state and cells; cancelling one. */
int sm_cli_cmd_show(sm_http *h, const sm_cli_opts *o);
int sm_cli_cmd_cancel(sm_http *h, uint64_t id);
/* POST /api/runs/ID/again: prints the new run's id (what it is on stderr). */
int sm_cli_cmd_again(sm_http *h, uint64_t id);

/* cmd_jobs.c: under sockmatrix show's progress, the run's created and finished times (UTC,
 * ISO 8601) and duration, each failed job with its host and reason, and the run's flags
 * (the anomalies' one-line texts). 0, or 1 when the coordinator could not say. */
struct sm_apiview_run;
/* The flags part of sockmatrix show from the anomalies' text (GET /api/runs/ID/anomalies,
 * the text sockmatrix anomalies prints): "verdict: ...", then "flags:" with each flag line
 * and the lines of its why under it as anomalies prints them, then "not judged:" with its
 * cells; "flags: none" when there is none. */
void sm_cli_print_flags(const char *text, size_t len, FILE *f);
int sm_cli_show_details(sm_http *h, const struct sm_apiview_run *run);
/* sockmatrix jobs RUN: every job of the run (--host, --state filter), a grid or the API's
 * jobs as one JSON array. */
int sm_cli_cmd_jobs(sm_http *h, const sm_cli_opts *o);

/* cmd_export.c: a run's comparison table and its anomalies. */
int sm_cli_cmd_export(sm_http *h, const sm_cli_opts *o);
/* The format export writes: --format when given; else for -o FILE by its name (.md Markdown,
 * .json JSON, else CSV), for stdout Markdown on a terminal (stdout_tty) and CSV when piped.
 * table is the Markdown table. */
sm_cli_format sm_cli_export_format(const sm_cli_opts *o, bool stdout_tty);
int sm_cli_cmd_anomalies(sm_http *h, const sm_cli_opts *o);

/* cmd_hosts.c: the side by side of hosts' fingerprints, and one host's fingerprint. */
int sm_cli_cmd_hosts_diff(sm_http *h, const sm_cli_opts *o);
int sm_cli_cmd_hosts_fingerprint(sm_http *h, const sm_cli_opts *o);

/* cmd_compare.c: run A against run B, as a grid, CSV or the coordinator's JSON. */
int sm_cli_cmd_compare(sm_http *h, const sm_cli_opts *o);

/* cmd_trends.c: one host's cell of one test across the ended runs, as a grid, CSV or the
 * coordinator's JSON. */
int sm_cli_cmd_trends(sm_http *h, const sm_cli_opts *o);

/* cmd_tests.c: sockmatrix tests [RUN], the tests with their ids (t1, t2, ...) and labels. */
int sm_cli_cmd_tests(sm_http *h, const sm_cli_opts *o);

/* cmd_run.c: start a run, and with --wait follow it to its table and anomalies. */
int sm_cli_cmd_run(sm_http *h, const sm_cli_opts *o);
/* Polls run id until it ends, its progress on stderr; 0 with *out its last state, or 1 once
 * reported (the coordinator failed, or timeout_s passed). */
int sm_cli_wait_run(sm_http *h, uint64_t id, uint32_t timeout_s, struct sm_apiview_run *out);

/* cmd_explain.c: sockmatrix explain RUN [--host H] [--test T]: plans an experiment on the
 * run's anomaly, follows it, and prints which suspect it proved the cause; explain of an
 * experiment's own run prints its answer. */
int sm_cli_cmd_explain(sm_http *h, const sm_cli_opts *o);

/* cmd_schedules.c: the recurring runs (sockmatrix schedules), and schedule add, pause, resume
 * and delete. */
int sm_cli_cmd_schedules(sm_http *h, const sm_cli_opts *o);
int sm_cli_cmd_schedule(sm_http *h, const sm_cli_opts *o);
/* Their command line, for opts.c: option k (0 --name, 1 --every, 2 --cron, 3 --webhook) with
 * its value, checked here as the coordinator will; the words after "schedule" (add, or pause,
 * resume, delete and an id; *sub the first, as given); and the checks of the whole line. Each
 * returns 0 or SM_EINVAL with a one-line message. */
int sm_cli_schedule_option(sm_cli_opts *o, int k, const char *v, sm_error *err);
int sm_cli_schedule_positional(sm_cli_opts *o, const char **sub, const char *arg, sm_error *err);
int sm_cli_schedule_check(const sm_cli_opts *o, const char *sub, sm_error *err);

#endif
