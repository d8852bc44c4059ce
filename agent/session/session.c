/* The REQ client of the coordinator's bus (see session.h). */
#include "agent/session/session.h"

#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <stdlib.h>
#include <string.h>

struct sm_session {
    int sock;
    const uint8_t *key;
    const char *name;
    sm_replay *replay;
    char nonce[SM_NONCE_HEX + 1];
    void *reply; /* nanomsg's buffer of the last reply */
};

/* Sets an int option unless it is 0 (nanomsg's default stays). */
static int set_opt(int sock, int level, int opt, int val)
{
    return val == 0 ? 0 : nn_setsockopt(sock, level, opt, &val, sizeof val);
}

int sm_session_open(sm_session **out, const sm_session_opts *o, const uint8_t key[SM_KEY_LEN],
                    const char *name, sm_error *err)
{
    sm_session *s = calloc(1, sizeof *s);
    if (!s)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    s->key = key;
    s->name = name;
    s->replay = o->replay;
    s->sock = nn_socket(AF_SP, NN_REQ);
    if (s->sock < 0) {
        sm_error_set(err, SM_ESYS, "nn_socket: %s", nn_strerror(nn_errno()));
        free(s);
        return SM_ESYS;
    }
    if (set_opt(s->sock, NN_REQ, NN_REQ_RESEND_IVL, o->resend_ivl_ms) < 0 ||
        set_opt(s->sock, NN_SOL_SOCKET, NN_RECONNECT_IVL, o->reconnect_ivl_ms) < 0 ||
        set_opt(s->sock, NN_SOL_SOCKET, NN_RECONNECT_IVL_MAX, o->reconnect_ivl_max_ms) < 0 ||
        set_opt(s->sock, NN_SOL_SOCKET, NN_SNDTIMEO, o->send_timeout_ms) < 0 ||
        set_opt(s->sock, NN_SOL_SOCKET, NN_RCVTIMEO, o->recv_timeout_ms) < 0 ||
        set_opt(s->sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, o->max_msg) < 0 ||
        nn_connect(s->sock, o->url) < 0) {
        sm_error_set(err, SM_ESYS, "cannot set up the connection to %s: %s", o->url,
                     nn_strerror(nn_errno()));
        /* Safe here, unlike in sm_session_close: nothing was sent, so no reply can come late. */
        nn_close(s->sock);
        free(s);
        return SM_ESYS;
    }
    *out = s;
    return 0;
}

int sm_session_socket(const sm_session *s)
{
    return s ? s->sock : -1;
}

int sm_session_recv_fd(const sm_session *s)
{
    int fd = -1;
    size_t sz = sizeof fd;
    if (nn_getsockopt(s->sock, NN_SOL_SOCKET, NN_RCVFD, &fd, &sz) < 0)
        return -1;
    return fd;
}

const char *sm_session_nonce(const sm_session *s)
{
    return s->nonce;
}

int sm_session_send(sm_session *s, const char *body, size_t len, uint64_t now_ms, int flags,
                    sm_error *err)
{
    size_t elen;
    char *env = sm_env_seal(s->key, SM_DIR_TO_COORDINATOR, s->name, now_ms, body, len, &elen,
                            s->nonce, err);
    if (!env)
        return err->code ? err->code : SM_ENOMEM;
    int n = nn_send(s->sock, env, elen, flags);
    int e = nn_errno();
    free(env);
    if (n >= 0)
        return 0;
    if (e == EAGAIN || e == ETIMEDOUT)
        return sm_error_set(err, SM_ETIMEDOUT, "nn_send: %s", nn_strerror(e));
    return sm_error_set(err, SM_ESYS, "nn_send: %s", nn_strerror(e));
}

int sm_session_recv(sm_session *s, int flags, uint64_t now_ms, sm_env *env, sm_reject *why,
                    sm_error *err)
{
    sm_session_release(s);
    char *buf = NULL;
    int len = nn_recv(s->sock, &buf, NN_MSG, flags);
    if (len < 0) {
        int e = nn_errno();
        if (e == EAGAIN || e == ETIMEDOUT)
            return sm_error_set(err, SM_ETIMEDOUT, "nn_recv: %s", nn_strerror(e));
        return sm_error_set(err, SM_ESYS, "nn_recv: %s", nn_strerror(e));
    }
    s->reply = buf;
    memset(env, 0, sizeof *env);
    sm_reject r = sm_env_open(s->key, SM_DIR_TO_AGENT, buf, (size_t)len, now_ms, env, err);
    if (r == SM_REJ_NONE && strcmp(env->name, SM_COORDINATOR) != 0) {
        r = SM_REJ_FIELD;
        sm_error_set(err, SM_EPARSE, "a reply from '%s', not the coordinator", env->name);
    }
    if (r == SM_REJ_NONE && s->replay)
        r = sm_replay_check(s->replay, env->name, env->nonce, now_ms);
    *why = r;
    return 0;
}

void sm_session_release(sm_session *s)
{
    if (s->reply) {
        nn_freemsg(s->reply);
        s->reply = NULL;
    }
}

void sm_session_close(sm_session *s)
{
    if (!s)
        return;
    sm_session_release(s);
    free(s); /* the socket is not nn_closed: see session.h */
}
