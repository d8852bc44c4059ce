/* libFuzzer target: the bodies of control messages (poll, reply, spooled result), as the
 * coordinator and the agent decode them after the envelope accepted them. A decoder either
 * fills its output or reports an error; on success the output must encode again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    sm_error err;
    size_t len;
    sm_poll p;
    if (sm_msg_poll_decode(text, size, &p, &err) == 0) {
        free(sm_msg_poll_encode(&p, &len, &err));
        sm_msg_poll_fini(&p);
    }
    sm_poll_reply r;
    if (sm_msg_reply_decode(text, size, &r, &err) == 0)
        free(sm_msg_reply_encode(&r, &len, &err));
    sm_result_msg m;
    if (sm_msg_result_decode(text, size, &m, &err) == 0) {
        free(sm_msg_result_encode(&m, &len, &err));
        sm_result_fini(&m.result);
    }
    free(text);
    return 0;
}
