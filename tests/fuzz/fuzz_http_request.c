/* libFuzzer target: the built-in http source's request head parser, which reads what any peer
 * that reaches a pair job's port sends. Whatever the input, it finds the head's end within the
 * bytes given and answers with one of its statuses; a 200 always carries a size in range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/workloads/http_request.h"
#include "proto/params.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* At most what the source buffers, in an exact-size copy so ASan sees a read past it. */
    if (size > SM_HTTP_HEAD_MAX)
        size = SM_HTTP_HEAD_MAX;
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    size_t off = 0;
    /* Pipelined heads, one after the other, as the source serves them. */
    for (size_t len; off < size && (len = sm_http_head_end(buf + off, size - off)) > 0;
         off += len) {
        if (len > size - off)
            abort();
        sm_http_request rq = {0};
        const char *why = NULL;
        int status = sm_http_parse_head(buf + off, len, &rq, &why);
        if (status == 200 && (rq.size == 0 || rq.size > SM_HTTP_SIZE_MAX))
            abort();
        if (status != 200 && (why == NULL || (status != 400 && status != 404 && status != 405)))
            abort();
        if (sm_http_reason_phrase(status) == NULL)
            abort();
    }
    free(buf);
    return 0;
}
