/* The replay window: a 64-bit seeded hash of each (name, nonce) pair, remembered for window_ms
 * in a set (open addressing) and in a ring in arrival order that expiry walks from the oldest
 * end. */
#include "proto/envelope.h"
#include "proto/map.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* A coordinator remembers every poll of the last two minutes: at 10,000 agents and 5,000 polls
 * a second that is 600,000 pairs. Kept as strings in the generic map with a list node each,
 * a pair took about 185 bytes (two allocations and a map entry); as a hash in a slot of the
 * set (8 bytes, the set a quarter to half full) and one of the ring (16 bytes, the ring half
 * to wholly full), it takes 32 to 64 bytes as the two double. Two pairs that hash
 * alike are taken for one: the second is refused as a replay, as it would be if it were one.
 * That fails closed, and only for messages that passed their MAC: with random 16-byte nonces
 * and a per-window seed, a check's odds of a false refusal are n / 2^64 with n pairs
 * remembered (5 x 10^-14 for a million), and the agent sends its poll again. */
#define MIN_SLOTS 64

typedef struct seen {
    uint64_t hash;
    uint64_t t_ms;
} seen;

struct sm_replay {
    uint64_t window_ms;
    uint64_t seed;
    uint64_t *set; /* hashes; 0 is an empty slot */
    size_t nset;   /* a power of two */
    seen *ring;    /* arrival order: ring[head] is the oldest of n */
    size_t nring, head, n;
};

/* FNV-1a over the name, a separator no name holds, and the nonce, from the seed, finished by
 * MurmurHash3's finaliser. Never 0, the empty slot. */
static uint64_t pair_hash(uint64_t seed, const char *name, const char *nonce)
{
    uint64_t h = seed ^ 0xcbf29ce484222325ull;
    for (const char *s = name; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    h = (h ^ 0xffu) * 0x100000001b3ull;
    for (const char *s = nonce; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    h = sm_hash_mix64(h);
    return h ? h : 1;
}

static size_t slot_of(const sm_replay *r, uint64_t h)
{
    return (size_t)h & (r->nset - 1);
}

/* The slot holding h, or the empty slot where it would go. */
static size_t probe(const sm_replay *r, uint64_t h)
{
    size_t i = slot_of(r, h);
    while (r->set[i] != 0 && r->set[i] != h)
        i = (i + 1) & (r->nset - 1);
    return i;
}

/* Linear probing's deletion by backward shift: later entries of the run move up, so no
 * tombstone is left and probes stay as short as the load makes them. */
static void set_del(sm_replay *r, uint64_t h)
{
    size_t i = probe(r, h);
    if (r->set[i] == 0)
        return;
    size_t j = i;
    for (;;) {
        r->set[i] = 0;
        for (;;) {
            j = (j + 1) & (r->nset - 1);
            if (r->set[j] == 0)
                return;
            const size_t home = slot_of(r, r->set[j]);
            /* set[j] may fill the hole at i unless its home lies cyclically in (i, j]. */
            if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
                break;
        }
        r->set[i] = r->set[j];
        i = j;
    }
}

static int set_grow(sm_replay *r)
{
    const size_t n = r->nset * 2;
    uint64_t *set = calloc(n, sizeof *set), *old = r->set;
    if (!set)
        return SM_ENOMEM;
    const size_t nold = r->nset;
    r->set = set;
    r->nset = n;
    for (size_t i = 0; i < nold; i++)
        if (old[i])
            r->set[probe(r, old[i])] = old[i];
    free(old);
    return 0;
}

static int ring_grow(sm_replay *r)
{
    const size_t n = r->nring * 2;
    seen *ring = malloc(n * sizeof *ring);
    if (!ring)
        return SM_ENOMEM;
    for (size_t i = 0; i < r->n; i++)
        ring[i] = r->ring[(r->head + i) % r->nring];
    free(r->ring);
    r->ring = ring;
    r->nring = n;
    r->head = 0;
    return 0;
}

sm_replay *sm_replay_new(uint64_t window_ms)
{
    sm_replay *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->window_ms = window_ms;
    r->nset = r->nring = MIN_SLOTS;
    r->set = calloc(r->nset, sizeof *r->set);
    r->ring = malloc(r->nring * sizeof *r->ring);
    /* The seed only spreads pairs: without getrandom the window stays correct. */
    if (getrandom(&r->seed, sizeof r->seed, GRND_NONBLOCK) != (ssize_t)sizeof r->seed)
        r->seed = sm_hash_mix64((uint64_t)(uintptr_t)r);
    if (!r->set || !r->ring) {
        sm_replay_free(r);
        return NULL;
    }
    return r;
}

void sm_replay_free(sm_replay *r)
{
    if (r == NULL)
        return;
    free(r->set);
    free(r->ring);
    free(r);
}

size_t sm_replay_size(const sm_replay *r)
{
    return r ? r->n : 0;
}

size_t sm_replay_bytes(const sm_replay *r)
{
    return r ? sizeof *r + r->nset * sizeof *r->set + r->nring * sizeof *r->ring : 0;
}

/* Drops entries strictly older than the window. Strictly: a nonce first seen at N with ts
 * T >= N - skew is kept through N + 2 x skew >= T + skew, the last instant T still passes the
 * skew check, so with window 2 x SM_SKEW_MS nothing is forgotten while it could be replayed. */
static void expire(sm_replay *r, uint64_t now_ms)
{
    while (r->n) {
        const seen *e = &r->ring[r->head];
        if (!(now_ms > e->t_ms && now_ms - e->t_ms > r->window_ms))
            return;
        set_del(r, e->hash);
        r->head = (r->head + 1) % r->nring;
        r->n--;
    }
}

sm_reject sm_replay_check(sm_replay *r, const char *name, const char *nonce, uint64_t now_ms)
{
    expire(r, now_ms);
    const uint64_t h = pair_hash(r->seed, name, nonce);
    if (r->set[probe(r, h)] == h)
        return SM_REJ_REPLAY;
    /* Fail closed: a message we cannot remember could be replayed later. */
    if ((2 * (r->n + 1) > r->nset && set_grow(r) != 0) || (r->n == r->nring && ring_grow(r) != 0))
        return SM_REJ_REPLAY;
    r->set[probe(r, h)] = h;
    /* If the clock stepped back, this stamp is older than the ones ahead of it in the ring;
     * expiry stops at the first live entry, so it is kept longer, never forgotten early. */
    r->ring[(r->head + r->n) % r->nring] = (seen){h, now_ms};
    r->n++;
    return SM_REJ_NONE;
}
