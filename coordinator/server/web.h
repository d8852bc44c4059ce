/* The dashboard's side of the coordinator: its static files, and the hub of live events that
 * browsers follow over the WebSocket /ws (protocol "sm-events"). */
#ifndef SM_COORD_WEB_H
#define SM_COORD_WEB_H

#include <libwebsockets.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/api/api.h"

#define SM_WEB_FILE_MAX (16u << 20)

/* The file for GET path under dir ("/" is /index.html): 200 with a malloc'd *body and its media
 * type, or 404 for a path that is not a plain name under dir (only [A-Za-z0-9._-/], no "..",
 * no hidden names), a symbolic link anywhere below dir, or no such regular file, or 500 when it
 * cannot be read. SM_WEB_NO_OPENAT2 in the environment tests the walk kernels without openat2
 * take. */
int sm_web_file(const char *dir, const char *path, char **body, size_t *len, const char **ctype);

typedef struct sm_ws_hub sm_ws_hub;

/* counters[3] (clients, rejected messages, slow clients cut off) is the hub's to update; the
 * API reads it for /healthz. The hub hears of changes from api->ctl (sm_control_on_change,
 * kept across its rollbacks) until it is freed, which must come before the control is closed.
 * NULL when out of memory or the store cannot be read. */
sm_ws_hub *sm_ws_hub_new(sm_api_ctx *api, sm_store *st, uint64_t *counters);
void sm_ws_hub_free(sm_ws_hub *h);

/* The hub's sm_change_fn (ctx: the hub): notes what changed, to be told at the next tick. */
void sm_ws_hub_change(void *ctx, const sm_change *ch);

/* The lws callback of the "sm-events" protocol; the protocol's `user` must be the hub. */
int sm_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                   size_t len);
size_t sm_ws_session_size(void);

/* From the event loop's timer: tells the browsers what changed since the last tick, each
 * object once, as the HTTP API shows it: "agent"; per run (newest first) its jobs' news while
 * it runs ("job"), the run itself ("run"), and when it ended its "anomaly" messages. With no
 * browser connected, only keeps up which runs are running. */
void sm_ws_tick(sm_ws_hub *h);

/* Has an ended run's anomalies built off the loop by fn (as sm_schedules_env's anomalies: 1
 * with them, 0 while they are being built), and told at the first tick after they came. NULL:
 * built on the loop at the tick that found the run ended. */
void sm_ws_hub_set_anomalies(sm_ws_hub *h,
                             int (*fn)(void *ctx, uint64_t run, uint64_t baseline, int *status,
                                       char **json),
                             void *ctx);

/* For tests: fn (NULL: none) hears every message the hub broadcasts, as a browser would; while
 * it is set the hub tells as if a browser were connected. */
void sm_ws_hub_tap(sm_ws_hub *h, void (*fn)(void *arg, const char *text), void *arg);

#endif
