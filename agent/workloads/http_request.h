/* What the built-in http source reads from a client: the request head, parsed without
 * allocating, from bytes a peer sent (so every length is checked before it is used). */
#ifndef SM_AGENT_WORKLOADS_HTTP_REQUEST_H
#define SM_AGENT_WORKLOADS_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SM_HTTP_HEAD_MAX 8192u /* a request head, request line to the empty line */

typedef struct sm_http_request {
    uint64_t size; /* N of /bytes/N, 1..SM_HTTP_SIZE_MAX */
    bool close;    /* Connection: close, or HTTP/1.0 without keep-alive */
    bool http10;
} sm_http_request;

/* The length of the request head at the start of buf[0..len) through its empty line, or 0 when
 * the head is not complete yet. */
size_t sm_http_head_end(const char *buf, size_t len);

/* Parses a complete head buf[0..len) (len from sm_http_head_end). Returns 200 with *rq filled,
 * or the status to answer with (400 malformed or with a body, 405 not GET, 404 another path or
 * a size out of range) and *why, a static phrase for the log and the answer's body. */
int sm_http_parse_head(const char *buf, size_t len, sm_http_request *rq, const char **why);

/* "Bad Request", "Not Found", "Method Not Allowed", "Request Header Fields Too Large". */
const char *sm_http_reason_phrase(int status);

#endif
