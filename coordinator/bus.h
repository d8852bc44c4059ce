/* The coordinator's end of the control plane: one raw nanomsg REP socket. Raw mode keeps each
 * request's routing header, so a poll can be held and answered later, out of order. */
#ifndef SM_COORD_BUS_H
#define SM_COORD_BUS_H

#include <stddef.h>

#include "proto/err.h"

/* Messages larger than this are cut off by nanomsg itself (the connection is dropped, so they
 * cannot be counted); those between SM_MSG_MAX and this are counted as "size" rejections. */
#define SM_BUS_RCVMAX (1024 * 1024)

typedef struct sm_bus sm_bus;

/* A received request: its body and routing header, both owned until sm_bus_reply or
 * sm_bus_msg_fini. */
typedef struct sm_bus_msg {
    char *body;
    size_t len;
    void *hdr; /* nanomsg control data (the backtrace of the request) */
} sm_bus_msg;

/* Binds AF_SP_RAW/NN_REP at url ("tcp://0.0.0.0:7100"). */
int sm_bus_open(sm_bus **b, const char *url, sm_error *err);
void sm_bus_close(sm_bus *b);
/* A pollable descriptor that is readable while requests wait (a dup of NN_RCVFD: the event
 * loop owns and closes it). */
int sm_bus_fd(sm_bus *b, sm_error *err);
/* Takes one waiting request without blocking: 1 got one, 0 none waiting, < 0 error. */
int sm_bus_recv(sm_bus *b, sm_bus_msg *m, sm_error *err);
/* Answers the request m with data[0..len); releases m whether or not sending worked. */
int sm_bus_reply(sm_bus *b, sm_bus_msg *m, const char *data, size_t len, sm_error *err);
/* Releases a request without answering (a superseded or rejected poll). */
void sm_bus_msg_fini(sm_bus_msg *m);

#endif
