/* The coordinator's single event loop: bus, HTTP and timers on one libwebsockets context. */
#include "coordinator/server_internal.h"

#include <inttypes.h>
#include <libwebsockets.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coordinator/api.h"
#include "coordinator/apijson.h"
#include "coordinator/bus.h"
#include "coordinator/control.h"
#include "coordinator/guard.h"
#include "proto/map.h"
#include "coordinator/store.h"
#include "coordinator/web.h"
#include "proto/clock.h"
#include "proto/log.h"
#include "proto/msg.h"

#define TICK_US    (250 * LWS_US_PER_MS)
#define HTTP_CHUNK 16384

/* Wall-clock milliseconds (sm_wall_ms) stamp envelopes, which carry Unix time, so skew is
 * checked against it. Monotonic milliseconds time how long things take, which a step of the
 * wall clock must not change (held polls, silences, time limits); this is the control core's
 * clock. */
static int64_t mono_ms(void *arg)
{
    (void)arg;
    return sm_mono_ms();
}

static void held_free(void *p)
{
    held *h = p;
    sm_bus_msg_fini(&h->msg);
    free(h);
}

static char on_prev_marker; /* the value stored in on_prev_key: only its presence matters */

/* The key agent `name` signs with: its own, derived from the fleet key, or from the previous
 * fleet key while it has not been given its new one. */
static int agent_key(const server *s, const char *name, uint8_t key[SM_KEY_LEN], sm_error *err)
{
    const bool prev = s->cfg->have_prev_key && sm_map_get(s->on_prev_key, name) != NULL;
    return sm_key_derive(prev ? s->cfg->prev_key : s->cfg->key, name, key, err);
}

/* Seals reply r to agent `to`, answering its poll `nonce`, and sends it on m (which is consumed
 * either way). The reply names both, under that agent's own key: a copy replayed to another
 * agent or to a later poll is dropped there. */
static void send_reply(server *s, sm_bus_msg *m, sm_poll_reply *r, const char *to,
                       const char *nonce)
{
    sm_error err = {0};
    size_t len = 0, elen = 0;
    uint8_t key[SM_KEY_LEN];
    snprintf(r->to, sizeof r->to, "%s", to);
    snprintf(r->poll, sizeof r->poll, "%s", nonce);
    char *body = NULL, *env = NULL;
    if (agent_key(s, to, key, &err) == 0 && (body = sm_msg_reply_encode(r, &len, &err)) != NULL)
        env = sm_env_seal(key, SM_DIR_TO_AGENT, SM_COORDINATOR, (uint64_t)sm_wall_ms(), body, len,
                          &elen, NULL, &err);
    OPENSSL_cleanse(key, sizeof key);
    if (!env || sm_bus_reply(s->bus, m, env, elen, &err) != 0) {
        sm_log(LOG_WARNING, "SM-REPLY-FAIL", "cannot answer a poll of %s: %s", to, err.msg);
        if (!env)
            sm_bus_msg_fini(m);
    }
    free(body);
    free(env);
}

/* Verifies a scanned poll under the key its claimed sender should hold. A MAC that fails under
 * the agent's own key is tried under the previous fleet key (a rotation in progress) and under
 * the fleet key itself (an agent given the fleet key: told to the operator, still refused). */
static sm_reject verify_poll(server *s, const sm_env *env, uint64_t now, bool *fleet_key,
                             sm_error *err)
{
    *fleet_key = false;
    if (sm_name_reserved(env->name)) {
        sm_error_set(err, SM_EVERIFY, "'%s' is reserved and cannot be an agent's name", env->name);
        return SM_REJ_FIELD;
    }
    uint8_t key[SM_KEY_LEN];
    if (sm_key_derive(s->cfg->key, env->name, key, err) != 0)
        return SM_REJ_FIELD;
    sm_reject why = sm_env_verify(key, SM_DIR_TO_COORDINATOR, env, now, err);
    OPENSSL_cleanse(key, sizeof key);
    if (why != SM_REJ_MAC) {
        if (why == SM_REJ_NONE)
            sm_map_del(s->on_prev_key, env->name); /* it has its new key now */
        return why;
    }
    sm_error other = {0};
    if (s->cfg->have_prev_key && (uint64_t)(sm_mono_ms() - s->started_ms) < s->cfg->prev_grace_ms &&
        sm_key_derive(s->cfg->prev_key, env->name, key, &other) == 0) {
        sm_reject again = sm_env_verify(key, SM_DIR_TO_COORDINATOR, env, now, &other);
        OPENSSL_cleanse(key, sizeof key);
        if (again != SM_REJ_MAC) {
            if (again == SM_REJ_NONE && sm_map_get(s->on_prev_key, env->name) == NULL &&
                sm_map_put(s->on_prev_key, env->name, &on_prev_marker) == 0)
                sm_log(LOG_WARNING, "SM-KEY-PREVIOUS",
                       "agent %s signed with the previous key: give it its new key "
                       "(sockmatrix-coordinator keygen --agent %s) before the grace period ends",
                       env->name, env->name);
            if (again != SM_REJ_NONE)
                sm_error_set(err, other.code, "%s", other.msg);
            return again;
        }
    }
    if (sm_env_verify(s->cfg->key, SM_DIR_TO_COORDINATOR, env, now, &other) != SM_REJ_MAC &&
        (*fleet_key = true))
        sm_error_set(err, SM_EVERIFY,
                     "signed with the fleet key itself, not agent %s's own key: give the agent "
                     "its own key (sockmatrix-coordinator keygen --agent %s --key-file FLEET_KEY "
                     "OUT) and keep the fleet key on the coordinator",
                     env->name, env->name);
    return SM_REJ_MAC;
}

/* A rejected message: counted, logged at most once a minute per peer, dropped unanswered. */
static void reject(server *s, sm_bus_msg *m, sm_reject why, const char *peer, const char *detail)
{
    sm_rejects_note(s->rejects, why, peer, (uint64_t)sm_wall_ms(), detail);
    sm_bus_note_reject(s->bus, m);
    sm_bus_msg_fini(m);
}

static void answer_news(server *s);

typedef struct pending {
    sm_bus_msg msg;
    sm_poll_reply reply;
    char name[SM_NAME_MAX + 1];
    char nonce[SM_NONCE_HEX + 1];
} pending;

/* Drains every waiting request in one store transaction; replies go out only after the commit,
 * so an ack never precedes the durable copy of what it acknowledges. */
void sm_server_drain_bus(server *s)
{
    enum { BATCH = SM_BUS_PASS_REPLIES };
    /* Bytes taken per pass, refused messages included: a flood of messages that fail their MAC
     * makes no replies, and without this bound one pass would take them for as long as they came
     * while HTTP waited (250 KiB forgeries kept /api/agents waiting 13 s). 1 MiB is a few ms of
     * HMAC; the bus's fd stays readable, so the loop comes back after serving the others. */
    const size_t pass_bytes = SM_BUS_PASS_BYTES;
    static pending out[BATCH];
    size_t n_out = 0, taken = 0;
    sm_error err = {0};
    bool in_tx = false, failed = false;
    sm_bus_msg m;
    int got;
    while (n_out < BATCH && taken < pass_bytes && (got = sm_bus_recv(s->bus, &m, &err)) == 1) {
        taken += m.len;
        const uint64_t now = (uint64_t)sm_wall_ms();
        sm_env env;
        bool fleet_key = false;
        /* The header is read by hand and the MAC checked before anything parses the body: a
         * message without the key costs one HMAC. */
        sm_reject why = sm_env_scan(m.body, m.len, &env, &err);
        if (why == SM_REJ_NONE)
            why = verify_poll(s, &env, now, &fleet_key, &err);
        if (why != SM_REJ_NONE) {
            /* The claimed name, when the header got that far: unverified, but it is only used
             * to rate-limit the log line. */
            const char *claimed = env.name[0] ? env.name : NULL;
            char detail[SM_ERR_MSG_MAX + 96];
            /* Before the MAC, a name is only what the message claims: the log says so. */
            if (claimed && why != SM_REJ_SKEW && why != SM_REJ_DEPTH)
                snprintf(detail, sizeof detail, "claimed \"%s\", unverified: %s", claimed, err.msg);
            else
                snprintf(detail, sizeof detail, "%s", err.msg);
            if (sm_rejects_note(s->rejects, why, claimed, now, detail) && fleet_key)
                sm_log(LOG_ERR, "SM-KEY-FLEET",
                       "agent %s signs with the fleet key: make its own key with "
                       "`sockmatrix-coordinator keygen --agent %s --key-file FLEET_KEY OUT` and "
                       "give it that; its messages are refused until then",
                       env.name, env.name);
            sm_bus_note_reject(s->bus, &m);
            sm_bus_msg_fini(&m);
            continue;
        }
        if ((why = sm_replay_check(s->replay, env.name, env.nonce, now)) != SM_REJ_NONE) {
            reject(s, &m, why, env.name, "nonce already seen");
            continue;
        }
        sm_poll poll;
        if (sm_msg_poll_decode(env.body, env.body_len, &poll, &err) != 0) {
            reject(s, &m, SM_REJ_BODY, env.name, err.msg);
            continue;
        }
        if (strcmp(poll.agent, env.name) != 0) {
            sm_msg_poll_fini(&poll);
            reject(s, &m, SM_REJ_FIELD, env.name, "the poll names another agent than its sender");
            continue;
        }
        if (!sm_control_admit(s->api.ctl, &poll, (int64_t)now)) {
            /* Refused registration: dropped unanswered, logged and counted by the control. */
            sm_msg_poll_fini(&poll);
            sm_bus_msg_fini(&m);
            continue;
        }
        if (!failed && !in_tx) {
            if (sm_store_begin(s->st, &err) != 0)
                failed = true;
            else
                in_tx = true;
        }
        bool now_reply = false;
        if (!failed && sm_control_poll(s->api.ctl, &poll, (int64_t)now, &out[n_out].reply,
                                       &now_reply, &err) != 0)
            failed = true;
        memcpy(out[n_out].name, env.name, sizeof env.name);
        memcpy(out[n_out].nonce, env.nonce, sizeof env.nonce);
        /* A newer poll supersedes the held one: the agent's REQ socket has moved on. */
        held *old = sm_map_del(s->held, poll.agent);
        if (old)
            held_free(old);
        if (failed) {
            sm_bus_msg_fini(&m);
        } else if (now_reply) {
            out[n_out++].msg = m;
        } else {
            held *h = malloc(sizeof *h);
            if (h && sm_map_put(s->held, poll.agent, h) == 0) {
                h->msg = m;
                h->since_ms = sm_mono_ms();
                memcpy(h->nonce, env.nonce, sizeof h->nonce);
            } else {
                free(h);
                sm_bus_msg_fini(&m);
            }
        }
        sm_msg_poll_fini(&poll);
    }
    if (got < 0)
        sm_log(LOG_ERR, "SM-BUS-RECV", "%s", err.msg);
    sm_rejects_add(s->rejects, SM_REJ_THROTTLED, sm_bus_take_dropped(s->bus));
    if (in_tx && !failed && sm_store_commit(s->st, &err) != 0)
        failed = true;
    if (failed) {
        /* Nothing is acked: the agents send the same results again with their next poll, and
         * what the batch changed in memory goes back to what the store holds. */
        sm_log(LOG_ERR, "SM-STORE-FAIL", "store failed, %zu replies withheld: %s", n_out, err.msg);
        if (in_tx)
            sm_control_rollback(&s->api.ctl, sm_wall_ms(), NULL);
        for (size_t i = 0; i < n_out; i++)
            sm_bus_msg_fini(&out[i].msg);
        return;
    }
    for (size_t i = 0; i < n_out; i++)
        send_reply(s, &out[i].msg, &out[i].reply, out[i].name, out[i].nonce);
    answer_news(s);
    /* More may be waiting than one batch took: come back through the loop. */
    if (n_out == BATCH || taken >= pass_bytes)
        lws_cancel_service(s->ctx);
}

/* Answers a held poll now with reply r. */
static void answer_held(server *s, const char *name, sm_poll_reply *r)
{
    held *h = sm_map_del(s->held, name);
    if (!h)
        return;
    send_reply(s, &h->msg, r, name, h->nonce);
    free(h);
}

/* Held polls of hosts with new work (jobs queued, a run's gate opened, a retry) are answered
 * now, all in one transaction: a request for a thousand hosts costs one commit, not a
 * thousand. */
static void answer_news(server *s)
{
    enum { MAX = 1024 };
    static char names[MAX][SM_NAME_MAX + 1];
    static sm_poll_reply replies[MAX];
    static bool news[MAX];
    sm_error err = {0};
    size_t n;
    do {
        n = sm_control_take_news(s->api.ctl, names, MAX);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (sm_map_get(s->held, names[i]))
                memmove(names[k++], names[i], sizeof names[0]);
        if (!k)
            continue;
        if (sm_store_begin(s->st, &err) != 0)
            return;
        const int64_t now = sm_wall_ms();
        for (size_t i = 0; i < k; i++)
            news[i] = sm_control_news(s->api.ctl, names[i], now, &replies[i], &err);
        if (sm_store_commit(s->st, &err) != 0) {
            sm_log(LOG_ERR, "SM-STORE-FAIL", "cannot dispatch queued jobs: %s", err.msg);
            sm_control_rollback(&s->api.ctl, now, NULL);
            return; /* the jobs stay queued; the agents' next polls take them */
        }
        for (size_t i = 0; i < k; i++)
            if (news[i])
                answer_held(s, names[i], &replies[i]);
    } while (n == MAX);
}

static void jobs_queued(void *arg, const char *const *hosts, size_t n)
{
    (void)hosts;
    (void)n;
    answer_news(arg);
}

static void on_tick(lws_sorted_usec_list_t *sul)
{
    server *s = lws_container_of(sul, server, tick);
    const int64_t now = sm_wall_ms();
    sm_error err = {0};
    if (sm_store_begin(s->st, &err) == 0) {
        if (sm_control_tick(s->api.ctl, now, &err) != 0 || sm_store_commit(s->st, &err) != 0) {
            sm_log(LOG_ERR, "SM-TICK-FAIL", "%s", err.msg);
            sm_control_rollback(&s->api.ctl, now, NULL);
        }
    }
    /* Expired holds are answered with whatever there is (often nothing). */
    char names[64][SM_NAME_MAX + 1];
    size_t n = 0, cur = 0;
    const char *key;
    void *val;
    while (n < 64 && sm_map_next(s->held, &cur, &key, &val))
        if (sm_mono_ms() - ((held *)val)->since_ms >= (int64_t)s->cfg->hold_ms)
            snprintf(names[n++], sizeof names[0], "%s", key);
    if (n && sm_store_begin(s->st, &err) == 0) {
        sm_poll_reply replies[64];
        bool ok = true;
        for (size_t i = 0; i < n && ok; i++)
            ok = sm_control_expire(s->api.ctl, names[i], now, &replies[i], &err) == 0;
        if (ok && sm_store_commit(s->st, &err) == 0) {
            for (size_t i = 0; i < n; i++)
                answer_held(s, names[i], &replies[i]);
        } else {
            sm_control_rollback(&s->api.ctl, now, NULL);
        }
    }
    answer_news(s);
    /* Browsers hear of changes every other tick: quick enough to watch, cheap enough to leave
     * open. */
    if (++s->ticks % 2 == 0)
        sm_ws_tick(s->hub);
    if (*s->stop)
        lws_cancel_service(s->ctx);
    else
        lws_sul_schedule(s->ctx, 0, &s->tick, on_tick, n == 64 ? 1 : TICK_US);
}

/* ---- HTTP ---- */

/* Every answer's headers: the dashboard loads its own scripts, styles and WebSocket only, is
 * never framed, and names nobody in a Referer. */
#define CSP                                                                                        \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "connect-src 'self' ws: wss:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/* A body that has not all come this long after its head is a slow client holding memory. */
#define BODY_DEADLINE_MS 10000
/* Seconds lws lets a connection sit silent (head, body or keep-alive) before it drops it. */
#define IDLE_SECS 10

typedef struct http_pss {
    char path[256];
    char query[512];
    const char *ctype;
    char method[8];
    char auth[SM_TOKEN_MAX + 8];
    char *body;
    size_t len, cap;
    size_t body_max;    /* the route's cap */
    int64_t body_since; /* monotonic ms of the head, for BODY_DEADLINE_MS */
    char *resp;
    size_t resp_len, sent;
    int status;
    const char *allow; /* for a 405 */
    bool close_after;  /* a body was left unread: the connection cannot carry another */
    bool handled;      /* answered: later body callbacks (lws sends one even for an empty body) are
                        * ignored rather than answered twice */
} http_pss;

static bool add_header(struct lws *wsi, const char *name, const char *value, uint8_t **q,
                       uint8_t *end)
{
    return lws_add_http_header_by_name(wsi, (const unsigned char *)name,
                                       (const unsigned char *)value, (int)strlen(value), q,
                                       end) == 0;
}

static int add_security_headers(struct lws *wsi, const char *allow, uint8_t **q, uint8_t *end)
{
    bool ok = add_header(wsi, "content-security-policy:", CSP, q, end) &&
              add_header(wsi, "x-content-type-options:", "nosniff", q, end) &&
              add_header(wsi, "x-frame-options:", "DENY", q, end) &&
              add_header(wsi, "referrer-policy:", "no-referrer", q, end) &&
              add_header(wsi, "cache-control:", "no-store", q, end);
    if (ok && allow)
        ok = add_header(wsi, "allow:", allow, q, end);
    return ok ? 0 : 1;
}

static int respond(struct lws *wsi, http_pss *p)
{
    uint8_t buf[LWS_PRE + 2048], *start = buf + LWS_PRE, *q = start, *end = buf + sizeof buf - 1;
    if (lws_add_http_common_headers(wsi, (unsigned)p->status,
                                    p->ctype ? p->ctype : "application/json", p->resp_len, &q,
                                    end) ||
        add_security_headers(wsi, p->status == 405 ? p->allow : NULL, &q, end) ||
        lws_finalize_write_http_header(wsi, start, &q, end))
        return 1;
    lws_callback_on_writable(wsi);
    return 0;
}

__attribute__((format(printf, 3, 4))) static void http_refused(server *s, int kind, const char *fmt,
                                                               ...)
{
    static const char *const ids[HR_N] = {"SM-HTTP-HOST",  "SM-HTTP-ORIGIN", "SM-HTTP-TYPE",
                                          "SM-HTTP-TOKEN", "SM-HTTP-METHOD", "SM-HTTP-SIZE",
                                          "SM-HTTP-SLOW",  "SM-HTTP-FULL"};
    s->http[1 + kind]++;
    const int64_t now = sm_mono_ms();
    if (s->http_logged[kind] && now - s->http_logged[kind] < 60000)
        return;
    s->http_logged[kind] = now;
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    sm_log(LOG_WARNING, ids[kind], "refused an HTTP request: %s (%" PRIu64 " so far)", what,
           s->http[1 + kind]);
}

/* Answers the request now with an error, the body (if any) left unread. */
static int refuse(struct lws *wsi, http_pss *p, int status, const char *msg, const char *field)
{
    p->handled = true;
    p->status = status;
    p->resp = sm_api_error(msg, field);
    p->resp_len = p->resp ? strlen(p->resp) : 0;
    p->ctype = "application/json";
    return respond(wsi, p);
}

static const char *method_name(int m)
{
    static const char *const names[] = {"GET",   "POST",   "OPTIONS", "PUT",
                                        "PATCH", "DELETE", "CONNECT", "HEAD"};
    return m >= 0 && m < (int)(sizeof names / sizeof names[0]) ? names[m] : "?";
}

/* A header's value into out (cap bytes); "" when absent, NULL when longer than out. */
static const char *header(struct lws *wsi, enum lws_token_indexes h, char *out, size_t cap)
{
    int n = lws_hdr_total_length(wsi, h);
    out[0] = '\0';
    if (n <= 0)
        return out;
    if ((size_t)n >= cap || lws_hdr_copy(wsi, out, (int)cap, h) < 0)
        return NULL;
    return out;
}

/* The checks every request and every WebSocket upgrade passes first: Host, then Origin when
 * the browser sent one (always on POST and on /ws). Returns 0, or the status to answer with its
 * message in *msg. */
static int check_site(server *s, struct lws *wsi, bool need_origin_ok, const char **msg)
{
    char host[256], origin[300];
    const char *h = header(wsi, WSI_TOKEN_HOST, host, sizeof host);
    if (!h || !sm_guard_host_ok(&s->guard, h)) {
        http_refused(s, HR_HOST, "Host '%.100s' does not name this coordinator", h ? h : "?");
        *msg = "the Host header does not name this coordinator (add its name with --http-host)";
        return 421;
    }
    const char *o = header(wsi, WSI_TOKEN_ORIGIN, origin, sizeof origin);
    if (need_origin_ok && (!o || (*o && !sm_guard_origin_ok(o, h)))) {
        http_refused(s, HR_ORIGIN, "Origin '%.100s' is another site", o ? o : "?");
        *msg = "the Origin is another site than this coordinator's";
        return 403;
    }
    return 0;
}

/* Whether the request's Authorization carries the token; *msg says why not. */
static bool token_ok(server *s, const char *auth, const char **msg)
{
    if (!auth) {
        *msg = "the token is longer than 255 characters";
        return false;
    }
    *msg = "this call needs the dashboard token (Authorization: Bearer ...)";
    return sm_api_token_ok(s->cfg->token, auth);
}

static int handle(struct lws *wsi, http_pss *p)
{
    server *s = lws_context_user(lws_get_context(wsi));
    if (p->handled)
        return 0;
    p->handled = true;
    /* The query's fragments ("format=csv", ...) joined back with '&'. */
    for (int i = 0; i < 16; i++) {
        char frag[128];
        int n = lws_hdr_copy_fragment(wsi, frag, sizeof frag, WSI_TOKEN_HTTP_URI_ARGS, i);
        if (n <= 0)
            break;
        size_t used = strlen(p->query);
        snprintf(p->query + used, sizeof p->query - used, "%s%s", used ? "&" : "", frag);
    }
    if (strncmp(p->path, "/api/", 5) != 0 && strcmp(p->path, "/healthz") != 0) {
        /* Everything else a browser asks for is the dashboard's. */
        p->status = sm_web_file(s->cfg->web_dir, p->path, &p->resp, &p->resp_len, &p->ctype);
        if (p->status != 200) {
            p->resp =
                sm_api_error(p->status == 404 ? "no such file" : "cannot read the file", NULL);
            p->resp_len = p->resp ? strlen(p->resp) : 0;
            p->ctype = "application/json";
        }
    } else {
        p->status =
            sm_api_handle(&s->api, p->method, p->path, p->query, p->auth[0] ? p->auth : NULL,
                          p->body ? p->body : "", p->len, &p->resp, &p->resp_len, &p->ctype);
    }
    return respond(wsi, p);
}

/* The request head: route, method, site, media type, token and size are all decided here,
 * before a byte of the body is read. Returns as an lws callback does. */
static int on_head(struct lws *wsi, http_pss *p, const char *uri)
{
    server *s = lws_context_user(lws_get_context(wsi));
    memset(p, 0, sizeof *p);
    snprintf(p->path, sizeof p->path, "%s", uri);
    char *muri;
    int mlen;
    snprintf(p->method, sizeof p->method, "%s",
             method_name(lws_http_get_uri_and_method(wsi, &muri, &mlen)));
    const bool post = strcmp(p->method, "POST") == 0;
    char num[32];
    const char *cl = header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, num, sizeof num);
    const unsigned long long clen = cl && *cl ? strtoull(cl, NULL, 10) : 0;
    const bool body_follows =
        clen > 0 || lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0;
    p->close_after = body_follows;

    const char *msg;
    int status = check_site(s, wsi, post, &msg);
    if (status)
        return refuse(wsi, p, status, msg, status == 421 ? "Host" : "Origin");
    sm_route route;
    if (!sm_guard_route(p->path, s->cfg->web_dir != NULL, &route))
        return refuse(wsi, p, 404,
                      strncmp(p->path, "/api", 4) == 0 ? "no such endpoint" : "no such file", NULL);
    if (!sm_guard_method_ok(&route, p->method)) {
        http_refused(s, HR_METHOD, "method %s", p->method);
        char why[64];
        snprintf(why, sizeof why, "%s: use %s", p->method, route.allow);
        p->allow = route.allow;
        return refuse(wsi, p, 405, why, NULL);
    }
    if (post) {
        char ctype[128];
        if (!sm_guard_is_json(header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, ctype, sizeof ctype))) {
            http_refused(s, HR_TYPE, "a POST of %s", "another type than JSON");
            return refuse(wsi, p, 415, "a POST body must be Content-Type: application/json",
                          "Content-Type");
        }
    }
    const char *auth = header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, p->auth, sizeof p->auth);
    /* The token guards every state change, and on a listener off loopback every read of the
     * API too; the dashboard's files hold no data and stay public. */
    const bool need_token = s->cfg->token && route.api && (post || !s->loopback);
    if (need_token && !token_ok(s, auth, &msg)) {
        http_refused(s, HR_TOKEN, "%s", "no or a wrong dashboard token");
        return refuse(wsi, p, 401, msg, "Authorization");
    }
    if (!auth)
        p->auth[0] = '\0';
    if (!cl || clen > route.body_max || (body_follows && route.body_max == 0)) {
        char why[96];
        if (route.body_max == 0)
            snprintf(why, sizeof why, "a %s of this path takes no body", p->method);
        else
            snprintf(why, sizeof why, "the request body is over %zu KiB", route.body_max >> 10);
        http_refused(s, HR_SIZE, "%s", why);
        return refuse(wsi, p, 413, why, NULL);
    }
    if (body_follows) {
        /* Content-Length within the cap, or a chunked body, capped as it comes. */
        p->body_max = route.body_max;
        p->body_since = sm_mono_ms();
        return 0;
    }
    p->close_after = false;
    return handle(wsi, p);
}

/* A WebSocket upgrade passes the same checks as a request, its token in the subprotocol list
 * ("sm-token.<token>", percent-encoded) since a browser cannot set headers on one. Answers a
 * refusal itself; returns as the HTTP_CONFIRM_UPGRADE callback does. */
static int on_upgrade(struct lws *wsi)
{
    server *s = lws_context_user(lws_get_context(wsi));
    const char *msg = NULL;
    int status = check_site(s, wsi, true, &msg);
    if (!status && s->cfg->token && !s->loopback) {
        char protos[512], tok[SM_TOKEN_MAX + 1];
        const char *list = header(wsi, WSI_TOKEN_PROTOCOL, protos, sizeof protos);
        int got = list ? sm_guard_ws_token(list, tok, sizeof tok) : -1;
        char auth[SM_TOKEN_MAX + 8];
        snprintf(auth, sizeof auth, "Bearer %s", got == 1 ? tok : "");
        if (got != 1 || !sm_api_token_ok(s->cfg->token, auth)) {
            http_refused(s, HR_TOKEN, "%s", "a WebSocket without the dashboard token");
            msg = got < 0 ? "the token is longer than 255 characters or malformed"
                          : "/ws needs the dashboard token (subprotocol sm-token.TOKEN)";
            status = 401;
        }
        OPENSSL_cleanse(tok, sizeof tok);
        OPENSSL_cleanse(auth, sizeof auth);
    }
    if (!status)
        return 0;
    char *json = sm_api_error(msg, NULL);
    size_t n = json ? strlen(json) : 0;
    uint8_t buf[LWS_PRE + 2048], *start = buf + LWS_PRE, *q = start, *end = buf + sizeof buf - 1;
    int rc = 1;
    if (json && n < 512 &&
        !lws_add_http_common_headers(wsi, (unsigned)status, "application/json", n, &q, end) &&
        !add_security_headers(wsi, NULL, &q, end) &&
        !lws_finalize_write_http_header(wsi, start, &q, end)) {
        memcpy(buf + LWS_PRE, json, n);
        lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_HTTP_FINAL);
    } else {
        rc = -1;
    }
    free(json);
    return rc;
}

static void pss_fini(http_pss *p)
{
    free(p->body);
    free(p->resp);
    p->body = NULL;
    p->resp = NULL;
}

static int callback_http(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                         size_t len)
{
    http_pss *p = user;
    server *s = lws_context_user(lws_get_context(wsi));
    switch (reason) {
    case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
        /* A connection just accepted (HTTP, perhaps later a WebSocket): counted until its wsi
         * goes, and refused past the cap rather than left to take memory. */
        if (s && !lws_get_opaque_user_data(wsi) && lws_get_socket_fd(wsi) >= 0) {
            if (s->http[0] >= s->cfg->http_max_conns) {
                http_refused(s, HR_FULL, "%s", "too many connections");
                return -1;
            }
            lws_set_opaque_user_data(wsi, &s->http[0]);
            s->http[0]++;
        }
        return 0;
    case LWS_CALLBACK_WSI_DESTROY:
        if (s && lws_get_opaque_user_data(wsi) == &s->http[0]) {
            lws_set_opaque_user_data(wsi, NULL);
            s->http[0]--;
        }
        return 0;
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
        return on_upgrade(wsi);
    case LWS_CALLBACK_HTTP:
        return on_head(wsi, p, in);
    case LWS_CALLBACK_HTTP_BODY:
        if (p->handled || !in || len == 0)
            return 0;
        if (sm_mono_ms() - p->body_since > BODY_DEADLINE_MS) {
            http_refused(s, HR_SLOW, "%s", "a body still coming 10 s after its head");
            return -1;
        }
        if (p->len + len > p->body_max) {
            char why[96];
            snprintf(why, sizeof why, "the request body is over %zu KiB", p->body_max >> 10);
            http_refused(s, HR_SIZE, "%s", why);
            pss_fini(p);
            p->len = p->cap = 0;
            return refuse(wsi, p, 413, why, NULL);
        }
        if (p->len + len > p->cap) {
            size_t cap = p->cap ? p->cap : 4096;
            while (cap < p->len + len)
                cap *= 2;
            if (cap > p->body_max)
                cap = p->body_max;
            char *b = realloc(p->body, cap + 1);
            if (!b)
                return 1;
            p->body = b;
            p->cap = cap;
        }
        memcpy(p->body + p->len, in, len);
        p->len += len;
        p->body[p->len] = '\0';
        return 0;
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        if (p->handled)
            return 0;
        p->close_after = false;
        return handle(wsi, p);
    case LWS_CALLBACK_HTTP_WRITEABLE: {
        if (!p->resp)
            return -1;
        uint8_t buf[LWS_PRE + HTTP_CHUNK];
        size_t n = p->resp_len - p->sent < HTTP_CHUNK ? p->resp_len - p->sent : HTTP_CHUNK;
        const bool last = p->sent + n == p->resp_len;
        memcpy(buf + LWS_PRE, p->resp + p->sent, n);
        if (lws_write(wsi, buf + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) !=
            (int)n)
            return 1;
        p->sent += n;
        if (!last) {
            lws_callback_on_writable(wsi);
            return 0;
        }
        const bool close_after = p->close_after;
        pss_fini(p);
        if (close_after || lws_http_transaction_completed(wsi))
            return -1;
        return 0;
    }
    case LWS_CALLBACK_CLOSED_HTTP:
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
        if (p)
            pss_fini(p);
        return 0;
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

/* ---- the bus, adopted as a raw file descriptor ---- */

static int callback_bus(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                        size_t len)
{
    (void)user;
    (void)in;
    (void)len;
    server *s = lws_context_user(lws_get_context(wsi));
    switch (reason) {
    case LWS_CALLBACK_RAW_RX_FILE:
        sm_server_drain_bus(s);
        return 0;
    case LWS_CALLBACK_RAW_CLOSE_FILE:
        return 0;
    default:
        return 0;
    }
}

/* Not const: the events protocol carries the hub as its user pointer. */
static struct lws_protocols protocols[] = {
    {"http", callback_http, sizeof(http_pss), 0, 0, NULL, 0},
    {"sm-bus", callback_bus, 0, 0, 0, NULL, 0},
    {"sm-events", sm_ws_callback, 0, 4096, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void lws_to_sm_log(int level, const char *line)
{
    sm_log(level == LLL_ERR ? LOG_ERR : LOG_WARNING, "SM-LWS", "%.*s", (int)strcspn(line, "\n"),
           line);
}

int sm_server_run(const sm_server_cfg *cfg, volatile sig_atomic_t *stop, sm_error *err)
{
    server s;
    memset(&s, 0, sizeof s);
    s.cfg = cfg;
    s.stop = stop;
    int rc = 0;
    const int64_t t0 = sm_wall_ms();
    if ((rc = sm_store_open(&s.st, cfg->db_path, err)))
        goto out;
    sm_control_cfg ccfg = {.hold_ms = cfg->hold_ms,
                           .job_grace_ms = 30000,
                           .lost_grace_ms = cfg->lost_grace_ms,
                           .clock_ms = mono_ms,
                           .max_agents = cfg->max_agents,
                           .data_addr = cfg->data_addr};
    if ((rc = sm_control_open(&s.api.ctl, s.st, &ccfg, t0, err)))
        goto out;
    s.replay = sm_replay_new(2ull * SM_SKEW_MS);
    s.rejects = sm_rejects_new();
    s.held = sm_map_new();
    s.on_prev_key = sm_map_new();
    s.started_ms = sm_mono_ms();
    if (!s.replay || !s.rejects || !s.held || !s.on_prev_key) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        goto out;
    }
    s.api = (sm_api_ctx){s.st, s.api.ctl,     s.rejects, cfg->token, jobs_queued,
                         &s,   s.ws_counters, s.http,    NULL};
    if (!(s.hub = sm_ws_hub_new(&s.api, s.st, s.ws_counters))) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        goto out;
    }
    protocols[2].per_session_data_size = sm_ws_session_size();
    protocols[2].user = s.hub;
    if ((rc = sm_bus_open(&s.bus, cfg->listen_url, err)))
        goto out;

    lws_set_log_level(LLL_ERR | LLL_WARN, lws_to_sm_log);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = cfg->http_port;
    info.iface = cfg->http_addr;
    info.protocols = protocols;
    info.user = &s;
    info.options = LWS_SERVER_OPTION_DISABLE_IPV6 * (strchr(cfg->http_addr, ':') == NULL);
    /* A client silent this long (in its head, its body or between requests) is dropped. */
    info.timeout_secs = IDLE_SECS;
    info.timeout_secs_ah_idle = IDLE_SECS;
    s.loopback = sm_guard_is_loopback(cfg->http_addr);
    s.guard = (sm_guard){cfg->http_addr, s.loopback, sm_guard_is_wildcard(cfg->http_addr),
                         cfg->http_hosts, cfg->n_http_hosts};
    s.ctx = lws_create_context(&info);
    if (!s.ctx) {
        rc = sm_error_set(err, SM_ESYS, "cannot listen for HTTP on %s:%d", cfg->http_addr,
                          cfg->http_port);
        goto out;
    }
    struct lws_vhost *vh = lws_get_vhost_by_name(s.ctx, "default");
    int bus_fd = sm_bus_fd(s.bus, err);
    if (bus_fd < 0) {
        rc = SM_ESYS;
        goto out;
    }
    lws_sock_file_fd_type fd = {.filefd = bus_fd};
    if (!vh || !lws_adopt_descriptor_vhost(vh, LWS_ADOPT_RAW_FILE_DESC, fd, "sm-bus", NULL)) {
        rc = sm_error_set(err, SM_ESYS, "cannot add the bus to the event loop");
        goto out;
    }
    const int http_port = lws_get_vhost_listen_port(vh);
    sm_log(LOG_NOTICE, "SM-LISTEN", "agents: %s, HTTP: %s:%d, store: %s, dashboard: %s",
           cfg->listen_url, cfg->http_addr, http_port, cfg->db_path,
           cfg->web_dir ? cfg->web_dir : "(none)");
    if (cfg->ready_fd >= 0) {
        dprintf(cfg->ready_fd, "ready bus=%s http=%s:%d\n", cfg->listen_url, cfg->http_addr,
                http_port);
        close(cfg->ready_fd);
    }
    lws_sul_schedule(s.ctx, 0, &s.tick, on_tick, TICK_US);
    while (!*stop && lws_service(s.ctx, 0) >= 0)
        ;
    sm_log(LOG_NOTICE, "SM-STOP", "stopping");
out:
    if (s.ctx)
        lws_context_destroy(s.ctx);
    sm_map_free(s.held, held_free);
    sm_map_free(s.on_prev_key, NULL);
    sm_ws_hub_free(s.hub);
    sm_api_cache_free(&s.api);
    sm_bus_close(s.bus);
    sm_rejects_free(s.rejects);
    sm_replay_free(s.replay);
    sm_control_close(s.api.ctl);
    sm_store_close(s.st);
    return rc;
}
