/* libFuzzer target: what a browser sends on /ws. Whatever the bytes, the check answers ping or
 * a reason, reads only len bytes, and never takes an oversized message for a ping. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/schema/events.h"
#include "proto/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1); /* exact size: ASan sees a read past it */
    if (!text)
        return 0;
    memcpy(text, data, size);
    sm_error err;
    int rc = sm_event_client_check(text, size, &err);
    if (rc != 1 && rc != SM_EINVAL && rc != SM_EPARSE)
        abort();
    if (rc == 1 && size > SM_EVENT_CLIENT_MAX)
        abort();
    free(text);
    return 0;
}
