/* The reports of ended runs, kept by run id: a small LRU of runs, a few reports each. */
#include "coordinator/reports/cache.h"

#include "proto/err.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_RUNS     SM_REPORT_CACHE_RUNS /* the least recently asked for go first */
#define CACHE_VARIANTS 8 /* reports kept per run (format, floor, baseline, ...) */

typedef struct cached {
    char *key; /* "table?QUERY" or "anomalies?QUERY" */
    char *body;
    size_t len;
    const char *ctype;
    uint64_t base; /* the baseline asked for; 0: the default one */
} cached;

typedef struct cache_run {
    uint64_t run; /* 0: a free slot */
    uint64_t used;
    size_t n;
    cached v[CACHE_VARIANTS];
} cache_run;

struct sm_report_cache {
    uint64_t clock;
    cache_run runs[CACHE_RUNS];
};

static void cache_run_clear(cache_run *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].key);
        free(r->v[i].body);
    }
    memset(r, 0, sizeof *r);
}

void sm_report_cache_free(sm_report_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < CACHE_RUNS; i++)
        cache_run_clear(&c->runs[i]);
    free(c);
}

void sm_report_cache_run_changed(sm_report_cache *c, uint64_t run_id)
{
    if (!c || run_id == 0)
        return;
    for (size_t i = 0; i < CACHE_RUNS; i++) {
        cache_run *r = &c->runs[i];
        if (r->run == run_id) {
            cache_run_clear(r);
            continue;
        }
        /* Anomalies against it as their baseline, named or (for a later run) the default. */
        for (size_t k = 0; k < r->n;) {
            cached *v = &r->v[k];
            const bool anomalies = strncmp(v->key, "anomalies?", 10) == 0;
            if (anomalies && (v->base == run_id || (v->base == 0 && r->run > run_id))) {
                free(v->key);
                free(v->body);
                r->v[k] = r->v[--r->n];
            } else {
                k++;
            }
        }
    }
}

static cached *cache_find(sm_report_cache *c, uint64_t run_id, const char *key)
{
    for (size_t i = 0; c && i < CACHE_RUNS; i++) {
        cache_run *r = &c->runs[i];
        if (r->run != run_id)
            continue;
        for (size_t k = 0; k < r->n; k++)
            if (strcmp(r->v[k].key, key) == 0) {
                r->used = ++c->clock;
                return &r->v[k];
            }
    }
    return NULL;
}

int sm_report_cache_get(sm_report_cache *c, uint64_t run_id, const char *key, char **body,
                        size_t *len, const char **ctype)
{
    const cached *hit = cache_find(c, run_id, key);
    if (!hit)
        return 0;
    char *copy = malloc(hit->len + 1);
    if (!copy)
        return SM_ENOMEM;
    memcpy(copy, hit->body, hit->len + 1);
    *body = copy;
    *len = hit->len;
    *ctype = hit->ctype;
    return 1;
}

void sm_report_cache_put(sm_report_cache **pc, uint64_t run_id, const char *key, uint64_t base,
                         const char *body, size_t len, const char *ctype)
{
    if (!*pc && !(*pc = calloc(1, sizeof **pc)))
        return;
    sm_report_cache *c = *pc;
    cache_run *slot = NULL, *oldest = &c->runs[0];
    for (size_t i = 0; i < CACHE_RUNS && !slot; i++) {
        cache_run *r = &c->runs[i];
        if (r->run == run_id)
            slot = r;
        else if (r->run == 0 || (oldest->run != 0 && r->used < oldest->used))
            oldest = r;
    }
    if (!slot) {
        slot = oldest;
        cache_run_clear(slot);
        slot->run = run_id;
    }
    if (slot->n == CACHE_VARIANTS) {
        free(slot->v[0].key);
        free(slot->v[0].body);
        slot->v[0] = slot->v[--slot->n];
    }
    cached v = {strdup(key), malloc(len + 1), len, ctype, base};
    if (!v.key || !v.body) {
        free(v.key);
        free(v.body);
        return;
    }
    memcpy(v.body, body, len + 1);
    slot->v[slot->n++] = v;
    slot->used = ++c->clock;
}
