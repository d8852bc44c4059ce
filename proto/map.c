/* The hash map: string or uint64 keys, seeded hashes, chains that stay short by doubling. */
#include "proto/map.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "proto/err.h"

typedef enum key_kind { KEY_ANY = 0, KEY_STR, KEY_ID } key_kind;

typedef struct entry {
    struct entry *next;
    void *val;
    uint64_t hash;
    uint64_t id; /* KEY_ID */
    char key[];  /* KEY_STR: a NUL-terminated copy */
} entry;

struct sm_map {
    entry **slots;
    size_t nslots; /* a power of two */
    size_t size;
    uint64_t seed;
    key_kind kind;
};

static uint64_t random_seed(const void *salt)
{
    uint64_t seed = 0;
    /* Only spreads entries over slots: a failed getrandom costs predictability, not safety. */
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed)
        seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)salt;
    return seed;
}

/* FNV-1a from a per-map seed. */
static uint64_t hash_str(uint64_t seed, const char *s)
{
    uint64_t h = seed ^ 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

uint64_t sm_hash_mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

/* The finaliser over the seeded id: every bit of the id reaches the slot. */
static uint64_t hash_id(uint64_t seed, uint64_t id)
{
    return sm_hash_mix64(id ^ seed);
}

static void use_kind(sm_map *m, key_kind kind)
{
    assert(m->kind == KEY_ANY || m->kind == kind);
    m->kind = kind;
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
    m->seed = random_seed(m);
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

size_t sm_map_size(const sm_map *m)
{
    return m->size;
}

/* The link that points at the entry with this key, or at the NULL that ends its chain. */
static entry **find(const sm_map *m, uint64_t h, const char *key, uint64_t id)
{
    entry **p = &m->slots[h & (m->nslots - 1)];
    for (; *p; p = &(*p)->next)
        if ((*p)->hash == h && (key ? strcmp((*p)->key, key) == 0 : (*p)->id == id))
            break;
    return p;
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
            entry **s = &slots[e->hash & (n - 1)];
            e->next = *s;
            *s = e;
        }
    }
    free(m->slots);
    m->slots = slots;
    m->nslots = n;
}

static int put(sm_map *m, uint64_t h, const char *key, uint64_t id, void *val)
{
    entry **p = find(m, h, key, id);
    if (*p) {
        (*p)->val = val;
        return 0;
    }
    size_t len = key ? strlen(key) + 1 : 0;
    entry *e = malloc(sizeof *e + len);
    if (!e)
        return SM_ENOMEM;
    if (key)
        memcpy(e->key, key, len);
    e->id = id;
    e->hash = h;
    e->val = val;
    e->next = NULL;
    *p = e;
    if (++m->size > m->nslots)
        grow(m);
    return 0;
}

static void *del(sm_map *m, uint64_t h, const char *key, uint64_t id)
{
    entry **p = find(m, h, key, id);
    entry *e = *p;
    if (!e)
        return NULL;
    *p = e->next;
    void *val = e->val;
    free(e);
    m->size--;
    return val;
}

/* The cursor is slot << 16 | position in the slot's chain (chains stay far shorter than 2^16
 * because the table doubles when it holds more entries than slots). */
static const entry *next(const sm_map *m, size_t *cursor)
{
    for (size_t slot = *cursor >> 16, pos = *cursor & 0xffff; slot < m->nslots; slot++, pos = 0) {
        const entry *e = m->slots[slot];
        for (size_t k = 0; e && k < pos; k++)
            e = e->next;
        if (e) {
            *cursor = (slot << 16) | (pos + 1);
            return e;
        }
    }
    return NULL;
}

void *sm_map_get(const sm_map *m, const char *key)
{
    assert(m->kind != KEY_ID);
    entry *e = *find(m, hash_str(m->seed, key), key, 0);
    return e ? e->val : NULL;
}

int sm_map_put(sm_map *m, const char *key, void *val)
{
    use_kind(m, KEY_STR);
    return put(m, hash_str(m->seed, key), key, 0, val);
}

void *sm_map_del(sm_map *m, const char *key)
{
    assert(m->kind != KEY_ID);
    return del(m, hash_str(m->seed, key), key, 0);
}

int sm_map_next(const sm_map *m, size_t *cursor, const char **key, void **val)
{
    assert(m->kind != KEY_ID);
    const entry *e = next(m, cursor);
    if (!e)
        return 0;
    *key = e->key;
    *val = e->val;
    return 1;
}

void *sm_map_get_id(const sm_map *m, uint64_t id)
{
    assert(m->kind != KEY_STR);
    entry *e = *find(m, hash_id(m->seed, id), NULL, id);
    return e ? e->val : NULL;
}

int sm_map_put_id(sm_map *m, uint64_t id, void *val)
{
    use_kind(m, KEY_ID);
    return put(m, hash_id(m->seed, id), NULL, id, val);
}

void *sm_map_del_id(sm_map *m, uint64_t id)
{
    assert(m->kind != KEY_STR);
    return del(m, hash_id(m->seed, id), NULL, id);
}

int sm_map_next_id(const sm_map *m, size_t *cursor, uint64_t *id, void **val)
{
    assert(m->kind != KEY_STR);
    const entry *e = next(m, cursor);
    if (!e)
        return 0;
    *id = e->id;
    *val = e->val;
    return 1;
}
