/* libFuzzer target: the signed envelope, the first thing that reads bytes from the network.
 * Whatever the input, sm_env_open returns a verdict without crashing or reading past len;
 * what it accepts (only possible with the fixed test key) goes on to the body decoders. */
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
    if (sm_env_open(key, text, size, 1700000000000ull, &env, &err) == SM_REJ_NONE) {
        sm_poll p;
        if (sm_msg_poll_decode(env.body, env.body_len, &p, &err) == 0)
            sm_msg_poll_fini(&p);
    }
    free(text);
    return 0;
}
