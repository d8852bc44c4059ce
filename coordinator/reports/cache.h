/* The reports of ended runs (their tables and anomalies, as sent), kept so that each is
 * computed once: the SM_REPORT_CACHE_RUNS runs asked for most recently, 8 reports (format,
 * floor, baseline, ...) per run. Single-threaded, as the API that uses it. */
#ifndef SM_COORD_REPORT_CACHE_H
#define SM_COORD_REPORT_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* More than a trend's default 200 runs and the grid's 100, so that a trend asked for again
 * finds every run's reports; at most 256 x 8 reports of ended runs stay in memory. */
#define SM_REPORT_CACHE_RUNS 256

typedef struct sm_report_cache sm_report_cache;

/* Frees the cache and every report in it; NULL does nothing. */
void sm_report_cache_free(sm_report_cache *c);

/* The report of run_id under key ("table?QUERY" or "anomalies?QUERY"). Returns 1 with a
 * malloc'd copy of its body in *body (NUL-terminated), its length in *len and its static media
 * type in *ctype; 0 when there is none (c may be NULL); SM_ENOMEM, outputs untouched. A hit
 * makes the run the most recently used. */
int sm_report_cache_get(sm_report_cache *c, uint64_t run_id, const char *key, char **body,
                        size_t *len, const char **ctype);

/* Keeps a copy of body[0..len] (NUL-terminated) as the report of run_id under key, asked
 * against baseline run base (0: the default one); *c is made on first use. The least recently
 * used run makes room for a new one, and a run's oldest report for its ninth. Out of memory,
 * the report is simply not kept. ctype must be a static string. */
void sm_report_cache_put(sm_report_cache **c, uint64_t run_id, const char *key, uint64_t base,
                         const char *body, size_t len, const char *ctype);

/* A run's stored results or state changed: its reports are dropped, and so are the anomalies
 * that took it as their baseline (named, or the default one of a later run). NULL does
 * nothing, and so does run_id 0. */
void sm_report_cache_run_changed(sm_report_cache *c, uint64_t run_id);

#endif
