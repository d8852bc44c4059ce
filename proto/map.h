/* A string-keyed hash map (separate chaining, grows by doubling). Keys are copied; values are
 * the caller's. */
#ifndef SM_PROTO_MAP_H
#define SM_PROTO_MAP_H

#include <stddef.h>

typedef struct sm_map sm_map;

sm_map *sm_map_new(void);
/* Frees the map; free_val (may be NULL) is called on every value. NULL map is ignored. */
void sm_map_free(sm_map *m, void (*free_val)(void *));
void *sm_map_get(const sm_map *m, const char *key);
/* Inserts or replaces; returns 0, or SM_ENOMEM. */
int sm_map_put(sm_map *m, const char *key, void *val);
/* Removes the key and returns its value (NULL when absent). */
void *sm_map_del(sm_map *m, const char *key);
size_t sm_map_size(const sm_map *m);
/* Iterates: *cursor = 0 first; returns 1 with *key and *val set while there are entries, 0 at
 * the end. Do not insert or delete while iterating. */
int sm_map_next(const sm_map *m, size_t *cursor, const char **key, void **val);

#endif
