/* The reports of ended runs (their tables and anomalies, as sent), kept so that each is
 * computed once: the SM_REPORT_CACHE_RUNS runs asked for most recently, 8 reports (format,
 * floor, baseline, ...) per run. Thread-safe: the loop and the report worker share one, each
 * computing over its own store connection; a mutex guards every call. */
#ifndef SM_COORD_REPORT_CACHE_H
#define SM_COORD_REPORT_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* More than a trend's default 200 runs and the grid's 100, so that a trend asked for again
 * finds every run's reports; at most 256 x 8 reports of ended runs stay in memory. */
#define SM_REPORT_CACHE_RUNS 256

/* Invalidations remembered for the reports being computed meanwhile: a report that began
 * more invalidations ago than this is not kept. */
#define SM_REPORT_CACHE_CHANGES 256

typedef struct sm_report_cache sm_report_cache;

/* A cache shared between threads, made before the first use; SM_ENOMEM. deferred: an
 * invalidation counts for the reports computed on other connections only once
 * sm_report_cache_settle says its transaction committed (see there). A cache made on first use
 * by sm_report_cache_put is not deferred: one connection reads what it wrote. */
int sm_report_cache_new(sm_report_cache **c, bool deferred);

/* Frees the cache and every report in it; NULL does nothing. */
void sm_report_cache_free(sm_report_cache *c);

/* The report of run_id under key ("table?QUERY" or "anomalies?QUERY"). Returns 1 with a
 * malloc'd copy of its body in *body (NUL-terminated), its length in *len and its static media
 * type in *ctype; 0 when there is none (c may be NULL); SM_ENOMEM, outputs untouched. A hit
 * makes the run the most recently used. */
int sm_report_cache_get(sm_report_cache *c, uint64_t run_id, const char *key, char **body,
                        size_t *len, const char **ctype);

/* The generation a report about to be computed starts from (0 for a NULL cache): read it
 * before the first read of the store, and hand it to sm_report_cache_put. */
uint64_t sm_report_cache_since(sm_report_cache *c);

/* Keeps a copy of body[0..len] (NUL-terminated) as the report of run_id under key, asked
 * against baseline run base (0: the default one), computed from generation since; *c is made
 * on first use. Not kept when an invalidation since then would have dropped it (its store
 * reads may predate that change) or when it began more than SM_REPORT_CACHE_CHANGES
 * invalidations ago. The least recently used run makes room for a new one, and a run's oldest
 * report for its ninth. Out of memory, the report is simply not kept. ctype must be a static
 * string. */
void sm_report_cache_put(sm_report_cache **c, uint64_t since, uint64_t run_id, const char *key,
                         uint64_t base, const char *body, size_t len, const char *ctype);

/* A run's stored results or state changed: its reports are dropped, and so are the anomalies
 * that took it as their baseline (named, or the default one of a later run). NULL does
 * nothing, and so does run_id 0. */
void sm_report_cache_run_changed(sm_report_cache *c, uint64_t run_id);

/* For a deferred cache: every invalidation so far has committed (the writer's thread calls it
 * between its transactions). The loop invalidates as the control core reports a change, inside
 * the transaction that makes it: a report begun on another connection after that but before
 * the commit reads the old rows, so it must still be checked against that invalidation; after
 * this call, a report that begins sees the new rows. */
void sm_report_cache_settle(sm_report_cache *c);

#endif
