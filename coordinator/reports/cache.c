/* The reports of ended runs, kept by run id: a small LRU of runs, a few reports each. */
#include "coordinator/reports/cache.h"

#include "proto/err.h"

#include <pthread.h>
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
    pthread_mutex_t mu;
    bool deferred;
    uint64_t clock;
    uint64_t gen;     /* invalidations so far */
    uint64_t settled; /* of them, those whose transaction committed (all when not deferred) */
    uint64_t changed[SM_REPORT_CACHE_CHANGES]; /* invalidation g's run at g % CHANGES */
    cache_run runs[CACHE_RUNS];
};

int sm_report_cache_new(sm_report_cache **pc, bool deferred)
{
    sm_report_cache *c = calloc(1, sizeof *c);
    if (!c)
        return SM_ENOMEM;
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return SM_ENOMEM;
    }
    c->deferred = deferred;
    *pc = c;
    return 0;
}

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
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* Whether a change of run changed drops the report of run under key against baseline base:
 * the run's own, and the anomalies against it as their baseline, named or (for a later run)
 * the default. */
static bool drops(uint64_t changed, uint64_t run, const char *key, uint64_t base)
{
    if (run == changed)
        return true;
    const bool anomalies = strncmp(key, "anomalies?", 10) == 0;
    return anomalies && (base == changed || (base == 0 && run > changed));
}

void sm_report_cache_run_changed(sm_report_cache *c, uint64_t run_id)
{
    if (!c || run_id == 0)
        return;
    pthread_mutex_lock(&c->mu);
    c->changed[++c->gen % SM_REPORT_CACHE_CHANGES] = run_id;
    if (!c->deferred)
        c->settled = c->gen;
    for (size_t i = 0; i < CACHE_RUNS; i++) {
        cache_run *r = &c->runs[i];
        if (r->run == run_id) {
            cache_run_clear(r);
            continue;
        }
        for (size_t k = 0; k < r->n;) {
            cached *v = &r->v[k];
            if (drops(run_id, r->run, v->key, v->base)) {
                free(v->key);
                free(v->body);
                r->v[k] = r->v[--r->n];
            } else {
                k++;
            }
        }
    }
    pthread_mutex_unlock(&c->mu);
}

void sm_report_cache_settle(sm_report_cache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->settled = c->gen;
    pthread_mutex_unlock(&c->mu);
}

uint64_t sm_report_cache_since(sm_report_cache *c)
{
    if (!c)
        return 0;
    pthread_mutex_lock(&c->mu);
    const uint64_t since = c->settled;
    pthread_mutex_unlock(&c->mu);
    return since;
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
    if (!c)
        return 0;
    pthread_mutex_lock(&c->mu);
    const cached *hit = cache_find(c, run_id, key);
    char *copy = hit ? malloc(hit->len + 1) : NULL;
    if (copy) {
        memcpy(copy, hit->body, hit->len + 1);
        *body = copy;
        *len = hit->len;
        *ctype = hit->ctype;
    }
    pthread_mutex_unlock(&c->mu);
    return !hit ? 0 : copy ? 1 : SM_ENOMEM;
}

/* Whether an invalidation after generation since drops the report (c locked). */
static bool stale(const sm_report_cache *c, uint64_t since, uint64_t run_id, const char *key,
                  uint64_t base)
{
    if (c->gen - since > SM_REPORT_CACHE_CHANGES)
        return true;
    for (uint64_t g = since + 1; g <= c->gen; g++)
        if (drops(c->changed[g % SM_REPORT_CACHE_CHANGES], run_id, key, base))
            return true;
    return false;
}

static void put_locked(sm_report_cache *c, uint64_t run_id, const char *key, uint64_t base,
                       const char *body, size_t len, const char *ctype);

void sm_report_cache_put(sm_report_cache **pc, uint64_t since, uint64_t run_id, const char *key,
                         uint64_t base, const char *body, size_t len, const char *ctype)
{
    if (!*pc && sm_report_cache_new(pc, false) != 0)
        return;
    sm_report_cache *c = *pc;
    pthread_mutex_lock(&c->mu);
    if (!stale(c, since, run_id, key, base))
        put_locked(c, run_id, key, base, body, len, ctype);
    pthread_mutex_unlock(&c->mu);
}

static void put_locked(sm_report_cache *c, uint64_t run_id, const char *key, uint64_t base,
                       const char *body, size_t len, const char *ctype)
{
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
