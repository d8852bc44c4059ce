/* The coordinator's single event loop: bus, HTTP and timers on one libwebsockets context. */
#include "coordinator/server.h"

#include <libwebsockets.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coordinator/api.h"
#include "coordinator/bus.h"
#include "coordinator/control.h"
#include "coordinator/map.h"
#include "coordinator/store.h"
#include "coordinator/web.h"
#include "proto/api.h"
#include "proto/log.h"
#include "proto/msg.h"

#define TICK_US       (250 * LWS_US_PER_MS)
#define HTTP_BODY_MAX (8u * 1024 * 1024)
#define HTTP_CHUNK    16384

/* A poll held open until there is something to say or hold_ms passed. */
typedef struct held {
    sm_bus_msg msg;
    int64_t since_ms;             /* monotonic */
    char nonce[SM_NONCE_HEX + 1]; /* of the poll: its answer names it */
} held;

typedef struct server {
    const sm_server_cfg *cfg;
    struct lws_context *ctx;
    sm_bus *bus;
    sm_store *st;
    sm_replay *replay;
    sm_rejects *rejects;
    sm_map *held; /* agent name -> held */
    /* Agents whose last message verified only under the previous fleet key (name -> a marker):
     * their replies are sealed with it too. Only names that proved that key get in. */
    sm_map *on_prev_key;
    int64_t started_ms; /* monotonic: the previous key's grace runs from here */
    sm_api_ctx api;     /* its ctl is the control state, which a rollback replaces */
    sm_ws_hub *hub;
    uint64_t ws_counters[3];
    unsigned ticks;
    lws_sorted_usec_list_t tick;
    volatile sig_atomic_t *stop;
} server;

/* Wall-clock milliseconds: envelopes carry Unix time, so skew is checked against it. */
static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Monotonic milliseconds: how long things take, which a step of the wall clock must not
 * change (held polls, silences, time limits). */
static int64_t mono_ms(void *arg)
{
    (void)arg;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
        env = sm_env_seal(key, SM_DIR_TO_AGENT, SM_COORDINATOR, (uint64_t)now_ms(), body, len,
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
    if (s->cfg->have_prev_key &&
        (uint64_t)(mono_ms(NULL) - s->started_ms) < s->cfg->prev_grace_ms &&
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
    sm_rejects_note(s->rejects, why, peer, (uint64_t)now_ms(), detail);
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
static void drain_bus(server *s)
{
    enum { BATCH = 256 };
    static pending out[BATCH];
    size_t n_out = 0;
    sm_error err = {0};
    bool in_tx = false, failed = false;
    sm_bus_msg m;
    int got;
    while (n_out < BATCH && (got = sm_bus_recv(s->bus, &m, &err)) == 1) {
        const uint64_t now = (uint64_t)now_ms();
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
                h->since_ms = mono_ms(NULL);
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
            sm_control_rollback(&s->api.ctl, now_ms(), NULL);
        for (size_t i = 0; i < n_out; i++)
            sm_bus_msg_fini(&out[i].msg);
        return;
    }
    for (size_t i = 0; i < n_out; i++)
        send_reply(s, &out[i].msg, &out[i].reply, out[i].name, out[i].nonce);
    answer_news(s);
    /* More may be waiting than one batch took: come back through the loop. */
    if (n_out == BATCH)
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
        const int64_t now = now_ms();
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
    const int64_t now = now_ms();
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
        if (mono_ms(NULL) - ((held *)val)->since_ms >= (int64_t)s->cfg->hold_ms)
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

typedef struct http_pss {
    char path[256];
    char query[512];
    const char *ctype;
    char method[8];
    char auth[256];
    char *body;
    size_t len, cap;
    int too_big;
    char *resp;
    size_t resp_len, sent;
    int status;
    bool handled; /* answered: later body callbacks (lws sends one even for an empty body) are
                   * ignored rather than answered twice */
} http_pss;

static int respond(struct lws *wsi, http_pss *p)
{
    uint8_t buf[LWS_PRE + 1024], *start = buf + LWS_PRE, *q = start, *end = buf + sizeof buf - 1;
    if (lws_add_http_common_headers(wsi, (unsigned)p->status,
                                    p->ctype ? p->ctype : "application/json", p->resp_len, &q,
                                    end) ||
        lws_finalize_write_http_header(wsi, start, &q, end))
        return 1;
    lws_callback_on_writable(wsi);
    return 0;
}

static int handle(struct lws *wsi, http_pss *p)
{
    server *s = lws_context_user(lws_get_context(wsi));
    if (p->handled)
        return 0;
    p->handled = true;
    if (p->too_big) {
        p->resp = sm_api_error("the request body is over 8 MiB", NULL);
        p->resp_len = p->resp ? strlen(p->resp) : 0;
        p->status = 413;
    } else if (strcmp(p->method, "GET") == 0 && s->cfg->web_dir &&
               strncmp(p->path, "/api/", 5) != 0 && strcmp(p->path, "/healthz") != 0) {
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
    switch (reason) {
    case LWS_CALLBACK_HTTP: {
        memset(p, 0, sizeof *p);
        snprintf(p->path, sizeof p->path, "%s", (const char *)in);
        const bool post = lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0;
        snprintf(p->method, sizeof p->method, "%s", post ? "POST" : "GET");
        /* The query's fragments ("format=csv", ...) joined back with '&'. */
        for (int i = 0; i < 16; i++) {
            char frag[128];
            int n = lws_hdr_copy_fragment(wsi, frag, sizeof frag, WSI_TOKEN_HTTP_URI_ARGS, i);
            if (n <= 0)
                break;
            size_t used = strlen(p->query);
            snprintf(p->query + used, sizeof p->query - used, "%s%s", used ? "&" : "", frag);
        }
        if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) > 0)
            lws_hdr_copy(wsi, p->auth, sizeof p->auth, WSI_TOKEN_HTTP_AUTHORIZATION);
        if (post && lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0) {
            char cl[32];
            lws_hdr_copy(wsi, cl, sizeof cl, WSI_TOKEN_HTTP_CONTENT_LENGTH);
            if (strtoull(cl, NULL, 10) > 0)
                return 0; /* the body follows */
        }
        return handle(wsi, p);
    }
    case LWS_CALLBACK_HTTP_BODY:
        if (p->handled || !in || len == 0)
            return 0;
        if (p->too_big || p->len + len > HTTP_BODY_MAX) {
            p->too_big = 1;
            return 0;
        }
        if (p->len + len > p->cap) {
            size_t cap = p->cap ? p->cap : 4096;
            while (cap < p->len + len)
                cap *= 2;
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
        pss_fini(p);
        if (lws_http_transaction_completed(wsi))
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
        drain_bus(s);
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
    const int64_t t0 = now_ms();
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
    s.started_ms = mono_ms(NULL);
    if (!s.replay || !s.rejects || !s.held || !s.on_prev_key) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        goto out;
    }
    s.api = (sm_api_ctx){s.st, s.api.ctl, s.rejects, cfg->token, jobs_queued, &s, s.ws_counters};
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
    sm_bus_close(s.bus);
    sm_rejects_free(s.rejects);
    sm_replay_free(s.replay);
    sm_control_close(s.api.ctl);
    sm_store_close(s.st);
    return rc;
}
