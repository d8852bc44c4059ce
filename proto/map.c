/* String-keyed hash map (the coordinator's in-memory fleet and jobs). */
#include "proto/map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"

typedef struct entry {
    struct entry *next;
    void *val;
    char key[]; /* NUL-terminated copy */
} entry;

struct sm_map {
    entry **slots;
    size_t nslots; /* a power of two */
    size_t size;
};

/* FNV-1a: keys are short names and decimal ids; no adversary picks them but the operator. */
static size_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return (size_t)h;
}

sm_map *sm_map_new(void)
{
    sm_map *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->nslots = 64;
    m->slots = calloc(m->nslots, sizeof *m->slots);
    if (!m->slots) {
        free(m);
        return NULL;
    }
    return m;
}

void sm_map_free(sm_map *m, void (*free_val)(void *))
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nslots; i++) {
        for (entry *e = m->slots[i], *n; e; e = n) {
            n = e->next;
            if (free_val)
                free_val(e->val);
            free(e);
        }
    }
    free(m->slots);
    free(m);
}

static entry **find(const sm_map *m, const char *key)
{
    entry **p = &m->slots[hash(key) & (m->nslots - 1)];
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next;
    return p;
}

void *sm_map_get(const sm_map *m, const char *key)
{
    entry *e = *find(m, key);
    return e ? e->val : NULL;
}

static void grow(sm_map *m)
{
    size_t n = m->nslots * 2;
    entry **slots = calloc(n, sizeof *slots);
    if (!slots)
        return; /* stays correct, only slower */
    for (size_t i = 0; i < m->nslots; i++) {
        for (entry *e = m->slots[i], *next; e; e = next) {
            next = e->next;
            entry **s = &slots[hash(e->key) & (n - 1)];
            e->next = *s;
            *s = e;
        }
    }
    free(m->slots);
    m->slots = slots;
    m->nslots = n;
}

int sm_map_put(sm_map *m, const char *key, void *val)
{
    entry **p = find(m, key);
    if (*p) {
        (*p)->val = val;
        return 0;
    }
    size_t len = strlen(key);
    entry *e = malloc(sizeof *e + len + 1);
    if (!e)
        return SM_ENOMEM;
    memcpy(e->key, key, len + 1);
    e->val = val;
    e->next = NULL;
    *p = e;
    if (++m->size > m->nslots)
        grow(m);
    return 0;
}

void *sm_map_del(sm_map *m, const char *key)
{
    entry **p = find(m, key);
    entry *e = *p;
    if (!e)
        return NULL;
    *p = e->next;
    void *val = e->val;
    free(e);
    m->size--;
    return val;
}

size_t sm_map_size(const sm_map *m)
{
    return m->size;
}

int sm_map_next(const sm_map *m, size_t *cursor, const char **key, void **val)
{
    /* The cursor is slot << 16 | position in the slot's chain (chains stay far shorter than
     * 2^16 because the table doubles when it holds more entries than slots). */
    for (size_t slot = *cursor >> 16, pos = *cursor & 0xffff; slot < m->nslots; slot++, pos = 0) {
        entry *e = m->slots[slot];
        for (size_t k = 0; e && k < pos; k++)
            e = e->next;
        if (e) {
            *cursor = (slot << 16) | (pos + 1);
            *key = e->key;
            *val = e->val;
            return 1;
        }
    }
    return 0;
}
