/* The coordinator's end of the control plane: one raw nanomsg REP socket. Raw mode keeps each
 * request's routing header, so a poll can be held and answered later, out of order. */
#ifndef SM_COORD_BUS_H
#define SM_COORD_BUS_H

#include <stddef.h>

#include "proto/err.h"

#include <stdint.h>

#include "proto/envelope.h"

/* nanomsg keeps a partial message with no time limit, up to this much per connection, before
 * anything can check it: the message limit itself. A larger message makes nanomsg drop the
 * connection when its length arrives, so it is never buffered (nor counted). */
#define SM_BUS_RCVMAX SM_MSG_MAX

/* A connection (nanomsg pipe) whose messages were rejected SM_BUS_REJECTS_MAX times within
 * SM_BUS_REJECT_WINDOW_MS has its further messages dropped unread, without MAC work, for
 * SM_BUS_THROTTLE_MS. */
#define SM_BUS_REJECTS_MAX      16
#define SM_BUS_REJECT_WINDOW_MS 10000
#define SM_BUS_THROTTLE_MS      60000

typedef struct sm_bus sm_bus;

/* A received request: its body and routing header, both owned until sm_bus_reply or
 * sm_bus_msg_fini. */
typedef struct sm_bus_msg {
    char *body;
    size_t len;
    void *hdr;     /* nanomsg control data (the backtrace of the request) */
    uint32_t pipe; /* the connection it came on (nanomsg's pipe key) */
} sm_bus_msg;

/* Binds AF_SP_RAW/NN_REP at url ("tcp://0.0.0.0:7100"). */
int sm_bus_open(sm_bus **b, const char *url, sm_error *err);
void sm_bus_close(sm_bus *b);
/* A pollable descriptor that is readable while requests wait (a dup of NN_RCVFD: the event
 * loop owns and closes it). */
int sm_bus_fd(sm_bus *b, sm_error *err);
/* Takes one waiting request without blocking: 1 got one, 0 none waiting, < 0 error. Messages
 * from a throttled connection are dropped on the way, unread, and counted (sm_bus_take_dropped).
 */
int sm_bus_recv(sm_bus *b, sm_bus_msg *m, sm_error *err);
/* Notes that m (not yet released) was rejected; its connection is throttled once it has had
 * SM_BUS_REJECTS_MAX rejections within SM_BUS_REJECT_WINDOW_MS (logged once, SM-BUS-THROTTLE).
 * Returns 1 when this rejection started the throttling. */
int sm_bus_note_reject(sm_bus *b, const sm_bus_msg *m);
/* Messages dropped from throttled connections since the last call. */
uint64_t sm_bus_take_dropped(sm_bus *b);
/* Answers the request m with data[0..len); releases m whether or not sending worked. */
int sm_bus_reply(sm_bus *b, sm_bus_msg *m, const char *data, size_t len, sm_error *err);
/* Releases a request without answering (a superseded or rejected poll). */
void sm_bus_msg_fini(sm_bus_msg *m);

#endif
