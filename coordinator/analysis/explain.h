/* What may explain a run's anomalies: for a fleet anomaly, a slow host or a slow link, how its
 * host (a link: both hosts) differs from the run's other hosts' fingerprints; for a regression,
 * what changed on its host between the baseline run and this one. Pure computation on decoded
 * fingerprints (coordinator/analysis/fpdiff.h); the API loads them from the store. */
#ifndef SM_COORD_EXPLAIN_H
#define SM_COORD_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/fpdiff.h"
#include "proto/err.h"

#define SM_EXPLAIN_JSON_MAX 8 /* differences in an anomaly's JSON */
#define SM_EXPLAIN_TEXT_MAX 3 /* lines of an anomaly's explanation in text and footnotes */
#define SM_EXPLAIN_HOST_MAX 8 /* entries of one host's footnote */

/* One anomaly's explanation: up to two hosts (a slow link's client and server, a pair row's
 * regression), each with its list. */
typedef struct sm_explained {
    char host[2][66]; /* "" when unused */
    sm_fp_diffs d[2]; /* differences from the fleet, or changes (changes true) */
    bool changes;
} sm_explained;

typedef struct sm_explanation {
    sm_explained *v; /* owned; one per anomaly, in the anomalies' order */
    size_t n;
} sm_explanation;

void sm_explanation_fini(sm_explanation *e);

/* What anomaly a measured, as seen on host (whose fingerprint fp may be NULL): the transport
 * from the column's label ("stream tcp+nodelay ..." tcp, "tcp/unix ..." tcp, "http ..." http;
 * "" when the label names none), the interface "lo" for a test between local sockets, else
 * (a slow host, a slow link, a pair row) the host's data interface (item info.data_if; ""
 * unknown) with link set. transport and iface point into a's label, fp or static text. */
void sm_explain_context(const sm_anomaly *a, const sm_fingerprint *fp, sm_fp_context *ctx,
                        char *transport, size_t cap);

/* Explains each anomaly of an: run[0..n_run) are the run's hosts and fingerprints (as of the
 * run), base[0..n_base) the baseline run's (for regressions; may be empty). An anomaly without
 * a fingerprint to compare gets empty lists. Each list keeps the first SM_EXPLAIN_JSON_MAX.
 * 0 or SM_ENOMEM; *out is sm_explanation_fini'd by the caller either way. */
int sm_explain_anomalies(const sm_anomalies *an, const sm_fp_host *run, size_t n_run,
                         const sm_fp_host *base, size_t n_base, sm_explanation *out, sm_error *err);

/* Whether anomaly i has anything to show. */
bool sm_explain_any(const sm_explanation *e, size_t i);

/* sm_anomalies_json (analysis.h) with each anomaly's explanation from e added to its object:
 * "differences" (fpdiff's objects, each with its "host") or, for a regression, "changes", at
 * most SM_EXPLAIN_JSON_MAX, in rank order; nothing where there is nothing to show. e NULL or
 * empty: sm_anomalies_json. v, when not NULL, adds the run's verdict (verdict.h): "verdict",
 * "summary", "cells" and "inconclusive", the cells that were not judged with why. malloc'd
 * text (the caller frees it), or NULL when out of memory. */
struct sm_run_verdict;
char *sm_explain_anomalies_json(uint64_t run_id, const char *run_name, uint64_t baseline_id,
                                const sm_analysis_opts *o, const sm_anomalies *a,
                                const sm_explanation *e, const struct sm_run_verdict *v);

/* Anomaly i's top SM_EXPLAIN_TEXT_MAX lines (sm_fp_diff_text), each as indent, the line and
 * "\n", appended to buf at *at (cut at cap). */
void sm_explain_lines(const sm_explanation *e, size_t i, const char *indent, char *buf, size_t cap,
                      size_t *at);

/* Everything e says of one host on one line: the distinct lines among the top
 * SM_EXPLAIN_TEXT_MAX of each anomaly's list for host (a slow link has one for each of its
 * hosts), in the anomalies' order, at most SM_EXPLAIN_HOST_MAX, joined by "; ", the host named
 * before the first: "h2: lo qdisc tbf ... (fleet: noqueue, 2 of 2 hosts); net.ipv4.tcp_autocorking
 * 0 (fleet: 1, 2 of 2 hosts)". "" when none (and only then: a host with a list says something).
 * Writes at most cap bytes; returns the length it wanted, as snprintf. */
size_t sm_explain_host_note(const sm_explanation *e, const char *host, char *buf, size_t cap);

/* The anomalies for people (their text form): each as "  <kind> <sm_anomaly_text>\n", the kind
 * padded to 10; the anomalies of one host (a->host, so a pair row and a fleet move are hosts of
 * their own) together, hosts in the order of their first anomaly, each host's in theirs. After
 * a host's last, indented by 13 spaces, the lines of its anomalies' explanations (each one's
 * top SM_EXPLAIN_TEXT_MAX, as sm_explain_lines) that no line above has shown: a host's
 * differences come once, however many flags it has, and a host in several pair rows is
 * explained under the first. e NULL or empty: the anomalies alone. Appends to buf at *at (cut
 * at cap; *at ends at most cap). 0, or SM_ENOMEM with nothing appended. */
int sm_explain_text(const sm_anomalies *an, const sm_explanation *e, char *buf, size_t cap,
                    size_t *at);

#endif
