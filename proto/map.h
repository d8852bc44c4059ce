/* A hash map (separate chaining, grows by doubling) keyed either by strings or by uint64 ids.
 * A map holds one kind of key: the first put decides, and mixing the two kinds is a bug
 * (asserted). String keys are copied; values are the caller's. The hash is seeded per map from
 * getrandom, so bucket placement (and the iteration order) cannot be predicted from outside:
 * some maps are fed by the network. */
#ifndef SM_PROTO_MAP_H
#define SM_PROTO_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct sm_map sm_map;

sm_map *sm_map_new(void);
/* Frees the map; free_val (may be NULL) is called on every value. NULL map is ignored. */
void sm_map_free(sm_map *m, void (*free_val)(void *));
size_t sm_map_size(const sm_map *m);

/* String keys. */
void *sm_map_get(const sm_map *m, const char *key);
/* Inserts or replaces; returns 0, or SM_ENOMEM. */
int sm_map_put(sm_map *m, const char *key, void *val);
/* Removes the key and returns its value (NULL when absent). */
void *sm_map_del(sm_map *m, const char *key);
/* Iterates: *cursor = 0 first; returns 1 with *key and *val set while there are entries, 0 at
 * the end. Do not insert or delete while iterating. */
int sm_map_next(const sm_map *m, size_t *cursor, const char **key, void **val);

/* uint64 keys: the same, by id. */
void *sm_map_get_id(const sm_map *m, uint64_t id);
int sm_map_put_id(sm_map *m, uint64_t id, void *val); /* 0, or SM_ENOMEM */
void *sm_map_del_id(sm_map *m, uint64_t id);
int sm_map_next_id(const sm_map *m, size_t *cursor, uint64_t *id, void **val);

/* MurmurHash3's 64-bit finaliser: every bit of h reaches every bit of the result. */
uint64_t sm_hash_mix64(uint64_t h);

#endif
