/* The agents' own keys, derived from the fleet key once per agent and kept. Not thread-safe:
 * the loop's thread only. */
#ifndef SM_COORD_SERVER_KEYS_H
#define SM_COORD_SERVER_KEYS_H
#include <stddef.h>
#include <stdint.h>

#include "proto/envelope.h"

typedef struct sm_keys sm_keys;

/* Keeps at most max keys derived from fleet (copied). NULL when out of memory. */
sm_keys *sm_keys_new(const uint8_t fleet[SM_KEY_LEN], size_t max);
/* Wipes every key kept, then frees k; NULL does nothing. */
void sm_keys_free(sm_keys *k);

/* Agent name's own key into out: the one kept, or derived now (sm_key_derive) and not kept.
 * 0, or the error of sm_key_derive (an invalid or reserved name). */
int sm_keys_get(sm_keys *k, const char *name, uint8_t out[SM_KEY_LEN], sm_error *err);
/* Keeps key as name's, which a message of name just verified under: only names that proved
 * their key are kept, so a flood of forged names costs derivations, never memory. Beyond max
 * names nothing more is kept (and they are derived each time). */
void sm_keys_keep(sm_keys *k, const char *name, const uint8_t key[SM_KEY_LEN]);

/* How many keys were derived since sm_keys_new, and how many are kept. */
uint64_t sm_keys_derived(const sm_keys *k);
size_t sm_keys_kept(const sm_keys *k);
#endif
