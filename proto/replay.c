/* The replay window: (name, nonce) pairs remembered for window_ms, in a proto/map keyed by both
 * and a list in arrival order that expiry walks from the oldest end. */
#include "proto/envelope.h"
#include "proto/map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rp_entry {
    struct rp_entry *newer; /* next in insertion order */
    uint64_t t_ms;
    char key[]; /* the map's key: see make_key */
} rp_entry;

struct sm_replay {
    uint64_t window_ms;
    sm_map *seen; /* key -> rp_entry */
    rp_entry *oldest, *newest;
};

sm_replay *sm_replay_new(uint64_t window_ms)
{
    sm_map *seen = sm_map_new();
    sm_replay *r = seen ? calloc(1, sizeof *r) : NULL;
    if (r == NULL) {
        sm_map_free(seen, NULL);
        return NULL;
    }
    r->seen = seen;
    r->window_ms = window_ms;
    return r;
}

void sm_replay_free(sm_replay *r)
{
    if (r == NULL)
        return;
    for (rp_entry *e = r->oldest, *next; e != NULL; e = next) {
        next = e->newer;
        free(e);
    }
    sm_map_free(r->seen, NULL);
    free(r);
}

size_t sm_replay_size(const sm_replay *r)
{
    return r ? sm_map_size(r->seen) : 0;
}

/* Drops entries strictly older than the window. Strictly: a nonce first seen at N with ts
 * T >= N - skew is kept through N + 2 x skew >= T + skew, the last instant T still passes the
 * skew check, so with window 2 x SM_SKEW_MS nothing is forgotten while it could be replayed. */
static void expire(sm_replay *r, uint64_t now_ms)
{
    while (r->oldest != NULL && now_ms > r->oldest->t_ms &&
           now_ms - r->oldest->t_ms > r->window_ms) {
        rp_entry *e = r->oldest;
        r->oldest = e->newer;
        if (r->oldest == NULL)
            r->newest = NULL;
        sm_map_del(r->seen, e->key);
        free(e);
    }
}

/* "<length of name>:" name nonce: the length makes every (name, nonce) pair its own key,
 * whatever bytes the two hold. NULL when out of memory. */
static char *make_key(const char *name, const char *nonce, size_t *len)
{
    size_t name_len = strlen(name), n = 24 + name_len + strlen(nonce);
    char *key = malloc(n);
    if (key != NULL)
        *len = (size_t)snprintf(key, n, "%zu:%s%s", name_len, name, nonce);
    return key;
}

sm_reject sm_replay_check(sm_replay *r, const char *name, const char *nonce, uint64_t now_ms)
{
    expire(r, now_ms);
    size_t len = 0;
    char *key = make_key(name, nonce, &len);
    /* Fail closed: a message we cannot remember could be replayed later. */
    if (key == NULL)
        return SM_REJ_REPLAY;
    if (sm_map_get(r->seen, key) != NULL) {
        free(key);
        return SM_REJ_REPLAY;
    }
    rp_entry *e = malloc(sizeof *e + len + 1);
    if (e != NULL)
        memcpy(e->key, key, len + 1);
    free(key);
    if (e == NULL || sm_map_put(r->seen, e->key, e) != 0) {
        free(e);
        return SM_REJ_REPLAY;
    }
    /* If the clock stepped back, this stamp is older than the ones ahead of it in the FIFO;
     * expiry stops at the first live entry, so it is kept longer, never forgotten early. */
    e->t_ms = now_ms;
    e->newer = NULL;
    if (r->newest)
        r->newest->newer = e;
    else
        r->oldest = e;
    r->newest = e;
    return SM_REJ_NONE;
}
