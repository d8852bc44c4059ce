/* A small blocking HTTP client (libcurl) for the coordinator's API. */
#ifndef SM_CLI_HTTP_H
#define SM_CLI_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/err.h"

#define SM_HTTP_TIMEOUT_S 30          /* one whole request, connect to last byte */
#define SM_HTTP_BODY_MAX  (64u << 20) /* a larger answer is refused, not truncated */

typedef struct sm_http sm_http;

/* An answer: the status and the body (NUL-terminated for convenience; len excludes the NUL).
 * The body is owned by the response; sm_http_resp_fini frees it. */
typedef struct sm_http_resp {
    long status;
    char *body;
    size_t len;
} sm_http_resp;

/* A client for base_url ("http://host:port" or "https://host:port", trailing slashes
 * ignored). token (may be NULL) is sent as "Authorization: Bearer TOKEN" with every request.
 * An https:// coordinator's certificate is verified, name included, against cacert (PEM, a
 * lab CA or the coordinator's self-signed certificate) or, when cacert is NULL, the system's
 * CAs; a refused one fails the request with SM_ESYS, its message saying so and naming
 * --cacert. The strings are copied.
 * curl_global_init is the caller's (main.c). */
int sm_http_open(sm_http **out, const char *base_url, const char *token, const char *cacert,
                 sm_error *err);

/* Whether url is http:// to a host that is not loopback (localhost, 127.0.0.0/8, ::1): there
 * a token would cross the network in clear. */
bool sm_http_url_in_clear(const char *url);
void sm_http_close(sm_http *h);

/* The base URL, as given to sm_http_open without its trailing slashes. */
const char *sm_http_url(const sm_http *h);

/* GET / POST base_url + path (path starts with '/'). Any HTTP status is a success here: the
 * caller reads r->status. Errors: SM_ESYS when the coordinator could not be reached or the
 * transfer broke (err->msg is curl's reason alone, for "cannot reach ...: REASON"),
 * SM_EPROTO for an answer over SM_HTTP_BODY_MAX, SM_ENOMEM. *r is set only on success. The
 * POST body is sent as application/json. */
int sm_http_get(sm_http *h, const char *path, sm_http_resp *r, sm_error *err);
int sm_http_post(sm_http *h, const char *path, const char *body, size_t len, sm_http_resp *r,
                 sm_error *err);

/* DELETE base_url + path, with no body; as sm_http_get. */
int sm_http_delete(sm_http *h, const char *path, sm_http_resp *r, sm_error *err);
void sm_http_resp_fini(sm_http_resp *r);

#endif
