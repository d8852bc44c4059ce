/* The agents' own keys, kept once derived: each poll needs its sender's key twice (to verify
 * it, to seal its answer), and HKDF-SHA256 through OpenSSL's EVP_KDF fetch costs some 4 us of
 * CPU each time: 14 % of an idle coordinator at 10,000 agents before they were kept. */
#include "coordinator/server/keys.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "proto/map.h"

typedef struct kept {
    uint8_t key[SM_KEY_LEN];
} kept;

struct sm_keys {
    uint8_t fleet[SM_KEY_LEN];
    sm_map *names; /* name -> kept */
    size_t max;
    uint64_t derived;
};

sm_keys *sm_keys_new(const uint8_t fleet[SM_KEY_LEN], size_t max)
{
    sm_keys *k = calloc(1, sizeof *k);
    if (!k || !(k->names = sm_map_new())) {
        free(k);
        return NULL;
    }
    memcpy(k->fleet, fleet, SM_KEY_LEN);
    k->max = max;
    return k;
}

static void wipe(void *p)
{
    OPENSSL_cleanse(p, sizeof(kept));
    free(p);
}

void sm_keys_free(sm_keys *k)
{
    if (!k)
        return;
    sm_map_free(k->names, wipe);
    OPENSSL_cleanse(k->fleet, sizeof k->fleet);
    free(k);
}

int sm_keys_get(sm_keys *k, const char *name, uint8_t out[SM_KEY_LEN], sm_error *err)
{
    const kept *e = sm_map_get(k->names, name);
    if (e) {
        memcpy(out, e->key, SM_KEY_LEN);
        return 0;
    }
    k->derived++;
    return sm_key_derive(k->fleet, name, out, err);
}

void sm_keys_keep(sm_keys *k, const char *name, const uint8_t key[SM_KEY_LEN])
{
    if (sm_map_get(k->names, name) || sm_map_size(k->names) >= k->max)
        return;
    kept *e = malloc(sizeof *e);
    if (!e)
        return; /* derived again next time */
    memcpy(e->key, key, SM_KEY_LEN);
    if (sm_map_put(k->names, name, e) != 0)
        wipe(e);
}

uint64_t sm_keys_derived(const sm_keys *k)
{
    return k->derived;
}

size_t sm_keys_kept(const sm_keys *k)
{
    return sm_map_size(k->names);
}
