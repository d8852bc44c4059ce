/* The coordinator loop's state and one pass over the bus, shared by server.c and its unit
 * test alone: everything else goes through server.h. Not thread-safe: the loop's thread only. */
#ifndef SM_COORD_SERVER_INTERNAL_H
#define SM_COORD_SERVER_INTERNAL_H

#include <libwebsockets.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "coordinator/api/api.h"
#include "coordinator/api/worker.h"
#include "coordinator/recurring/webhook.h"
#include "coordinator/server/bus.h"
#include "coordinator/server/guard.h"
#include "coordinator/server/keys.h"
#include "proto/map.h"
#include "coordinator/server/server.h"
#include "coordinator/store/store.h"
#include "coordinator/server/web.h"
#include "coordinator/control/deadlines.h"

/* Bytes one pass over the bus takes at most (plus the message that crosses it), refused
 * messages included; replies one pass makes at most. */
#define SM_BUS_PASS_BYTES   (1u << 20)
#define SM_BUS_PASS_REPLIES 256
/* Expired holds one tick answers at most (about 70 us each): a larger wave waits for the next
 * tick, which comes at once, with whatever else the loop has to do served in between. */
#define SM_EXPIRE_BATCH 32
/* Agents with news one round of answer_news takes at most. */
#define SM_NEWS_BATCH 1024

/* The kinds of refused HTTP request, each counted and logged at most once a minute. */
enum { HR_HOST, HR_ORIGIN, HR_TYPE, HR_TOKEN, HR_METHOD, HR_SIZE, HR_SLOW, HR_FULL, HR_N };

/* A poll held open until there is something to say or its hold (the control's for its agent)
 * passed. */
typedef struct held {
    sm_bus_msg msg;
    sm_deadline due;              /* in server.held_due: monotonic ms its hold runs out */
    char nonce[SM_NONCE_HEX + 1]; /* of the poll: its answer names it */
    char agent[SM_NAME_MAX + 1];
} held;

/* A reply of a pass over the bus, sealed when the control made it and sent after the pass's
 * commit. */
typedef struct pending {
    sm_bus_msg msg;
    char *env; /* the sealed reply (malloc'd), or NULL when it could not be sealed */
    size_t len;
    char name[SM_NAME_MAX + 1];
} pending;

/* A question of the loop's own to the report worker (asks.c): run's anomalies against
 * baseline, for a scheduled run's judgement. run 0: a free slot. */
#define SM_ASKS_MAX 32
typedef struct sm_ask {
    uint64_t run, baseline;
    uint64_t ticket; /* the worker's */
    bool ready;      /* answered: status, and json on 200 */
    int status;
    char *json;
    int64_t ready_ms; /* monotonic */
} sm_ask;

typedef struct server {
    const sm_server_cfg *cfg;
    struct lws_context *ctx;
    sm_bus *bus;
    sm_store *st;
    sm_replay *replay;
    sm_rejects *rejects;
    sm_map *held; /* agent name -> held */
    /* The same held polls by when their hold runs out (holds differ: an agent that never said
     * how long it waits is held hold_ms, the others the fleet's hold), so that the tick looks
     * only at those that ran out. */
    sm_deadlines held_due;
    uint64_t holds; /* polls held so far: the seed of each long hold's jitter */
    /* Agents whose last message verified only under the previous fleet key (name -> a marker):
     * their replies are sealed with it too. Only names that proved that key get in. */
    sm_map *on_prev_key;
    sm_keys *keys;      /* the agents' own keys under the fleet key, kept once they verified */
    int64_t started_ms; /* monotonic: the previous key's grace runs from here */
    sm_api_ctx api;     /* its ctl is the control state, which a rollback replaces */
    /* Builds the off-loop routes' answers (routes.h); each queued request's ticket maps to its
     * connection's wsi until the answer comes or the connection closes. */
    sm_api_worker *worker;
    sm_map *tickets;
    sm_ask asks[SM_ASKS_MAX];
    sm_ws_hub *hub;
    sm_webhook *hooks; /* the schedules' webhook deliveries */
    uint64_t ws_counters[3];
    sm_guard guard;
    bool loopback; /* the HTTP listener's address is loopback: reading needs no token */
    /* http[0]: open HTTP and WebSocket connections; http[1 + HR_x]: requests refused */
    uint64_t http[1 + HR_N];
    int64_t http_logged[HR_N]; /* monotonic ms of each kind's last log line */
    unsigned ticks;
    lws_sorted_usec_list_t tick;
    volatile sig_atomic_t *stop;
    /* Scratch of one pass over the bus and of answer_news, too large for the stack and made
     * once by sm_server_scratch_new: SM_BUS_PASS_REPLIES pending, SM_NEWS_BATCH of the rest. */
    pending *out;
    sm_poll_reply *pass_reply; /* one, reused: the control's answer to a poll, sealed at once */
    char (*news_names)[SM_NAME_MAX + 1];
    sm_poll_reply *news_reply; /* one, reused: each is sealed into news_env as it is made */
    char **news_env;           /* the sealed replies of a batch, sent after its commit */
    size_t *news_len;
    bool *news;
    struct lws_protocols protocols[4]; /* from protocols_template, with this hub */
} server;

/* Allocates s's scratch arrays (out, news_names, news_replies, news); 0 or SM_ENOMEM, with
 * none kept on failure. sm_server_scratch_free frees them (NULL members are fine). */
int sm_server_scratch_new(server *s);
void sm_server_scratch_free(server *s);

/* One pass over the bus: takes waiting requests (at most SM_BUS_PASS_REPLIES answered now, at
 * most about SM_BUS_PASS_BYTES read) in one store transaction; a message that fails its checks
 * is dropped unanswered and counted in s->rejects; a valid poll is answered or held in
 * s->held. When a bound stopped the pass, lws_cancel_service(s->ctx) brings the loop back. */
void sm_server_drain_bus(server *s);

/* schedules.h's anomalies over the worker (ctx: the server): 1 with the answer once it came,
 * 0 while it is built (asked now when it was not). */
int sm_server_ask_anomalies(void *ctx, uint64_t run, uint64_t baseline, int *status, char **json);
/* A worker's answer that no connection waits for: true when it answers a question of the
 * loop's (its body then taken), false otherwise. */
bool sm_server_ask_answer(server *s, sm_api_answer *ans);
/* Frees the answers kept; the worker has stopped. */
void sm_server_asks_free(server *s);

#endif
