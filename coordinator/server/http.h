/* The coordinator's HTTP protocol on its libwebsockets context: the checks every request and
 * every WebSocket upgrade pass, then the API or the dashboard's files. The context's user
 * pointer is the server (internal.h); the loop's thread only. */
#ifndef SM_COORD_HTTP_H
#define SM_COORD_HTTP_H

#include <libwebsockets.h>
#include <stddef.h>

/* Seconds lws lets a connection sit silent (head, body or keep-alive) before it drops it. */
#define SM_HTTP_IDLE_SECS 10
/* Seconds a request built by the report worker may wait for its answer (its queue and the
 * report); then its connection is closed. */
#define SM_HTTP_REPORT_SECS 120

/* The "http" protocol's callback; returns as an lws callback does. Refusals are counted in the
 * server's http[] and logged at most once a minute per kind. */
int sm_http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                     size_t len);
/* Per-session bytes the protocol needs (its per_session_data_size). */
size_t sm_http_session_size(void);

#endif
