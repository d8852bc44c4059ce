/* The one name of a test, wherever it is shown (a table's columns, anomalies, jobs, cells,
 * /metrics). Named sm_export_* as it was when it lived in export.c; export.h includes this. */
#ifndef SM_COORD_LABEL_H
#define SM_COORD_LABEL_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/params.h"

/* What a label names: a test's own column, the ratio of its variant against unix (for http,
 * of its client model's user CPU against the thread model's), or a pair against loopback. */
typedef enum sm_export_label_kind {
    SM_LABEL_TEST = 0,
    SM_LABEL_RATIO,
    SM_LABEL_LOOPBACK,
} sm_export_label_kind;

/* The one name of a test, wherever it is shown: the table's columns (CSV, Markdown, JSON,
 * the dashboard), the anomalies, the job resource, the run's cells (GET /api/runs/ID and
 * `sockmatrix show`), /metrics. Full (brief false):
 *   SM_LABEL_TEST      "stream tcp+nodelay lines 128 B x 8192", "rr unix 1 B/1 B 1000 ms",
 *                      "connect tcp x 500", "http pool+tls 16 MiB x11 4 conns"
 *   SM_LABEL_RATIO     "tcp/unix stream 128 KiB x 256", "user CPU pool/thread, http 16 MiB x11"
 *   SM_LABEL_LOOPBACK  "pair/loopback stream tcp 128 KiB x 256"
 * A treated test (an experiment's arm) ends in " treated <its treatment text>", its brief form
 * in " treated".
 * Sizes in the binary suffixes the options accept (128 B, 64 KiB, 1 MiB); the scope is not
 * in the name (a pair table's rows say "client->server"). Brief (the column headers' short
 * form; the full label goes beside it on hover or in a legend): workload, transport and
 * sizes only: "stream tcp 128 KiB", "tcp/unix rr 1 B/1 B", "user CPU pool/thread http 16 MiB",
 * "pair/loopback stream tcp 128 KiB". Writes at most cap bytes, NUL-terminated, cut when
 * longer. */
void sm_export_label(const sm_params *p, sm_export_label_kind kind, bool brief, char *buf,
                     size_t cap);

#endif
