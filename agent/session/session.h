/* One REQ client of the coordinator's bus: what the agent's daemon, the swarm benchmark and the
 * rogue test tool share. It opens a nanomsg REQ socket with their options, seals and sends a
 * request, receives and opens the reply (MAC, the coordinator as sender, the replay window),
 * and closes without nn_close (see sm_session_close).
 *
 *   sm_session *s;
 *   sm_session_open(&s, &(sm_session_opts){.url = url, .max_msg = SM_MSG_MAX}, key, name, err);
 *   sm_session_send(s, body, len, now_ms, 0, err);
 *   if (sm_session_recv(s, 0, now_ms, &env, &why, err) == 0 && why == SM_REJ_NONE) { env.body }
 *   sm_session_release(s);
 *   sm_session_close(s);
 *
 * A session is used by one thread at a time. */
#ifndef SM_AGENT_SESSION_SESSION_H
#define SM_AGENT_SESSION_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "proto/envelope.h"

/* Socket options (a 0 leaves nanomsg's default) and the replay window. */
typedef struct sm_session_opts {
    const char *url;          /* the coordinator's bus, for nn_connect */
    int max_msg;              /* NN_RCVMAXSIZE: the largest reply taken, bytes */
    int send_timeout_ms;      /* NN_SNDTIMEO */
    int recv_timeout_ms;      /* NN_RCVTIMEO */
    int resend_ivl_ms;        /* NN_REQ_RESEND_IVL */
    int reconnect_ivl_ms;     /* NN_RECONNECT_IVL */
    int reconnect_ivl_max_ms; /* NN_RECONNECT_IVL_MAX */
    sm_replay *replay;        /* the caller's; NULL: replies are not checked for replay */
} sm_session_opts;

typedef struct sm_session sm_session;

/* Opens the REQ socket with o's options and connects it; key and name (the caller's: they must
 * outlive the session) seal the requests and open the replies. Returns 0 with *out set, or
 * SM_ENOMEM, or SM_ESYS with err saying why ("nn_socket: ...", "cannot set up the connection
 * to URL: ..."); *out is left alone on failure. */
int sm_session_open(sm_session **out, const sm_session_opts *o, const uint8_t key[SM_KEY_LEN],
                    const char *name, sm_error *err);

/* The nanomsg socket, for nn_poll and for a tool that sends bytes of its own; -1 for NULL. */
int sm_session_socket(const sm_session *s);

/* The socket's receive descriptor (NN_RCVFD), for poll(2); -1 with nn_errno() set on error. */
int sm_session_recv_fd(const sm_session *s);

/* The nonce of the last request sent ("" before one): a reply must name it. */
const char *sm_session_nonce(const sm_session *s);

/* Seals body[0..len) from the session's name for the coordinator, stamped now_ms (the wall
 * clock, unix ms), keeps its nonce and sends it (flags: 0 or NN_DONTWAIT). A REQ socket cancels
 * the outstanding request when a new one is sent. Returns 0; SM_ETIMEDOUT when nanomsg would
 * block (NN_DONTWAIT, or past NN_SNDTIMEO); SM_ESYS ("nn_send: ...") or the sealing error. */
int sm_session_send(sm_session *s, const char *body, size_t len, uint64_t now_ms, int flags,
                    sm_error *err);

/* Takes a reply (flags: 0 or NN_DONTWAIT) and opens it at now_ms: envelope and MAC for this
 * agent, the coordinator as sender (SM_REJ_FIELD otherwise), then the replay window when there
 * is one. Returns 0 when a reply came, with *why its verdict (SM_REJ_NONE: *env is set and
 * env->body points into the reply, which the session owns until sm_session_release or the next
 * recv; else err says why); SM_ETIMEDOUT when none was waiting (NN_DONTWAIT, or past
 * NN_RCVTIMEO); SM_ESYS ("nn_recv: ...") on other errors. */
int sm_session_recv(sm_session *s, int flags, uint64_t now_ms, sm_env *env, sm_reject *why,
                    sm_error *err);

/* Frees the last reply taken (nothing when there is none). */
void sm_session_release(sm_session *s);

/* Frees the session and its last reply but leaves the socket open, WITHOUT nn_close: nanomsg
 * 1.1.5's REQ socket frees a reply it drops as the answer to a cancelled request (one that
 * came after the caller gave up on it) but keeps the pointer, and nn_close frees it again,
 * aborting the process (test_conversation.LateReplyTest). The socket stays in nanomsg's table
 * until the process exits, so nothing leaks out of reach; close sessions only on the way out.
 * NULL does nothing. */
void sm_session_close(sm_session *s);

#endif
