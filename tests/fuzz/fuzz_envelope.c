/* libFuzzer target: the signed envelope, the first thing that reads bytes from the network.
 * Whatever the input, the header scan returns a verdict without crashing or reading past len,
 * and what it accepts is consistent: a valid name, the body inside the text, the final brace
 * right after it. What then verifies (only possible with the fixed test key) goes on to the
 * body decoders. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/envelope.h"
#include "proto/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t key[SM_KEY_LEN] = {1, 2, 3, 4, 5, 6, 7, 8};
    /* An exact-size copy, so ASan sees any read past the end. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    sm_env env;
    sm_error err;
    if (sm_env_scan(text, size, &env, &err) == SM_REJ_NONE) {
        if (!sm_name_valid(env.name) || strlen(env.nonce) != SM_NONCE_HEX ||
            strlen(env.mac) != SM_MAC_HEX || env.body < text || env.body_len == 0 ||
            env.body + env.body_len + 1 != text + size || env.body[env.body_len] != '}')
            abort();
        if (sm_env_verify(key, SM_DIR_TO_COORDINATOR, &env, 1700000000000ull, &err) ==
            SM_REJ_NONE) {
            sm_poll p;
            if (sm_msg_poll_decode(env.body, env.body_len, &p, &err) == 0)
                sm_msg_poll_fini(&p);
        }
    }
    /* The one-call form must agree with the two steps. */
    sm_env_open(key, SM_DIR_TO_AGENT, text, size, 1700000000000ull, &env, &err);
    free(text);
    return 0;
}
