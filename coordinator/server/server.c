/* The coordinator's single event loop: bus, HTTP and timers on one libwebsockets context. */
#include "coordinator/server/internal.h"

#include <inttypes.h>
#include <libwebsockets.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coordinator/api/api.h"
#include "coordinator/reports/cache.h"
#include "coordinator/schema/apijson.h"
#include "coordinator/server/bus.h"
#include "coordinator/control/control.h"
#include "coordinator/server/guard.h"
#include "coordinator/server/http.h"
#include "coordinator/server/keys.h"
#include "coordinator/recurring/schedules.h"
#include "coordinator/store/store.h"
#include "coordinator/server/web.h"
#include "coordinator/recurring/webhook.h"
#include "proto/clock.h"
#include "proto/log.h"
#include "proto/map.h"
#include "proto/msg.h"

#define TICK_US (250 * LWS_US_PER_MS)

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
    if (s->cfg->have_prev_key && sm_map_get(s->on_prev_key, name) != NULL)
        return sm_key_derive(s->cfg->prev_key, name, key, err);
    return sm_keys_get(s->keys, name, key, err);
}

/* Seals reply r to agent `to`, answering its poll `nonce`: the envelope (malloc'd, *elen
 * bytes), or NULL with err set. The reply names both, under that agent's own key: a copy
 * replayed to another agent or to a later poll is dropped there. */
static char *seal_reply(server *s, sm_poll_reply *r, const char *to, const char *nonce,
                        size_t *elen, sm_error *err)
{
    size_t len = 0;
    uint8_t key[SM_KEY_LEN];
    snprintf(r->to, sizeof r->to, "%s", to);
    snprintf(r->poll, sizeof r->poll, "%s", nonce);
    char *body = NULL, *env = NULL;
    if (agent_key(s, to, key, err) == 0 && (body = sm_msg_reply_encode(r, &len, err)) != NULL)
        env = sm_env_seal(key, SM_DIR_TO_AGENT, SM_COORDINATOR, (uint64_t)sm_wall_ms(), body, len,
                          elen, NULL, err);
    OPENSSL_cleanse(key, sizeof key);
    free(body);
    return env;
}

/* Sends envelope env (sealed for agent `to`; NULL when sealing failed, with err saying why)
 * on m, which is consumed either way; env is freed. */
static void send_sealed(server *s, sm_bus_msg *m, char *env, size_t elen, const char *to,
                        sm_error *err)
{
    if (!env || sm_bus_reply(s->bus, m, env, elen, err) != 0) {
        sm_log(LOG_WARNING, "SM-REPLY-FAIL", "cannot answer a poll of %s: %s", to, err->msg);
        if (!env)
            sm_bus_msg_fini(m);
    }
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
    if (sm_keys_get(s->keys, env->name, key, err) != 0)
        return SM_REJ_FIELD;
    sm_reject why = sm_env_verify(key, SM_DIR_TO_COORDINATOR, env, now, err);
    if (why == SM_REJ_NONE)
        sm_keys_keep(s->keys, env->name, key);
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

/* One pass over the bus: what it took, and whether its store transaction is open or failed. */
typedef struct pass {
    size_t n_out, taken;
    bool in_tx, failed;
    sm_error err;
} pass;

/* A message whose header or MAC failed: counted, and logged at most once a minute per claimed
 * name (the fleet key's misuse told as such), then dropped unanswered. */
static void refuse_unverified(server *s, sm_bus_msg *m, sm_reject why, const sm_env *env,
                              bool fleet_key, uint64_t now, const sm_error *err)
{
    /* The claimed name, when the header got that far: unverified, but it is only used to
     * rate-limit the log line. */
    const char *claimed = env->name[0] ? env->name : NULL;
    char detail[SM_ERR_MSG_MAX + 96];
    /* Before the MAC, a name is only what the message claims: the log says so. */
    if (claimed && why != SM_REJ_SKEW && why != SM_REJ_DEPTH)
        snprintf(detail, sizeof detail, "claimed \"%s\", unverified: %s", claimed, err->msg);
    else
        snprintf(detail, sizeof detail, "%s", err->msg);
    if (sm_rejects_note(s->rejects, why, claimed, now, detail) && fleet_key)
        sm_log(LOG_ERR, "SM-KEY-FLEET",
               "agent %s signs with the fleet key: make its own key with "
               "`sockmatrix-coordinator keygen --agent %s --key-file FLEET_KEY OUT` and "
               "give it that; its messages are refused until then",
               env->name, env->name);
    sm_bus_note_reject(s->bus, m);
    sm_bus_msg_fini(m);
}

/* Checks message m as far as a poll the control may take: header and MAC (before anything
 * parses the body: a message without the key costs one HMAC), replay, body, sender, admission.
 * Returns true with *env and *poll filled (the caller finishes poll); false when m was dropped
 * (and consumed). */
static bool admit(server *s, sm_bus_msg *m, uint64_t now, sm_env *env, sm_poll *poll, sm_error *err)
{
    bool fleet_key = false;
    sm_reject why = sm_env_scan(m->body, m->len, env, err);
    if (why == SM_REJ_NONE)
        why = verify_poll(s, env, now, &fleet_key, err);
    if (why != SM_REJ_NONE) {
        refuse_unverified(s, m, why, env, fleet_key, now, err);
        return false;
    }
    if ((why = sm_replay_check(s->replay, env->name, env->nonce, now)) != SM_REJ_NONE) {
        reject(s, m, why, env->name, "nonce already seen");
        return false;
    }
    if (sm_msg_poll_decode(env->body, env->body_len, poll, err) != 0) {
        reject(s, m, SM_REJ_BODY, env->name, err->msg);
        return false;
    }
    if (strcmp(poll->agent, env->name) != 0) {
        sm_msg_poll_fini(poll);
        reject(s, m, SM_REJ_FIELD, env->name, "the poll names another agent than its sender");
        return false;
    }
    if (!sm_control_admit(s->api.ctl, poll, (int64_t)now)) {
        /* Refused registration: dropped unanswered, logged and counted by the control. */
        sm_msg_poll_fini(poll);
        sm_bus_msg_fini(m);
        return false;
    }
    return true;
}

/* Takes h, just taken out of s->held, out of the holds' deadlines too. */
static void held_unlink(server *s, held *h)
{
    sm_deadlines_remove(&s->held_due, &h->due);
}

/* Holds poll m of agent until there is something to say or the agent's hold runs out; m is
 * consumed. */
static void hold(server *s, sm_bus_msg *m, const char *agent, const char *nonce)
{
    held *h = calloc(1, sizeof *h);
    int64_t hold_ms = (int64_t)sm_control_agent_hold_ms(s->api.ctl, agent);
    /* A fleet held longer than --hold-ms registered and polled in waves (after a start, after
     * a burst of jobs), and would expire in the same waves, each a burst of answers on the
     * loop: up to a tenth is taken off each such hold at random, which spreads them. */
    if (hold_ms > (int64_t)s->cfg->hold_ms)
        hold_ms -= (int64_t)(sm_hash_mix64(++s->holds) % (uint64_t)(hold_ms / 10));
    const int64_t due = sm_mono_ms() + hold_ms;
    if (h && sm_deadlines_set(&s->held_due, &h->due, due) == 0) {
        if (sm_map_put(s->held, agent, h) == 0) {
            h->msg = *m;
            memcpy(h->nonce, nonce, sizeof h->nonce);
            snprintf(h->agent, sizeof h->agent, "%s", agent);
            return;
        }
        sm_deadlines_remove(&s->held_due, &h->due);
    }
    free(h);
    sm_bus_msg_fini(m);
}

/* Hands an admitted poll to the control inside the pass's transaction (opened by the first):
 * its reply is queued for after the commit, or the poll is held. m is consumed. */
static void take_poll(server *s, pass *p, sm_bus_msg *m, const sm_env *env, const sm_poll *poll,
                      uint64_t now)
{
    if (!p->failed && !p->in_tx) {
        if (sm_store_begin(s->st, &p->err) != 0)
            p->failed = true;
        else
            p->in_tx = true;
    }
    pending *o = &s->out[p->n_out];
    bool now_reply = false;
    if (!p->failed &&
        sm_control_poll(s->api.ctl, poll, (int64_t)now, s->pass_reply, &now_reply, &p->err) != 0)
        p->failed = true;
    memcpy(o->name, env->name, sizeof env->name);
    /* Sealed now, sent after the commit (see answer_news for why not kept as a struct). */
    o->env = NULL;
    sm_error serr = {0};
    if (!p->failed && now_reply &&
        !(o->env = seal_reply(s, s->pass_reply, env->name, env->nonce, &o->len, &serr)))
        sm_log(LOG_WARNING, "SM-REPLY-FAIL", "cannot answer a poll of %s: %s", env->name, serr.msg);
    /* A newer poll supersedes the held one: the agent's REQ socket has moved on. */
    held *old = sm_map_del(s->held, poll->agent);
    if (old) {
        held_unlink(s, old);
        held_free(old);
    }
    if (p->failed)
        sm_bus_msg_fini(m);
    else if (now_reply)
        s->out[p->n_out++].msg = *m;
    else
        hold(s, m, poll->agent, env->nonce);
}

/* Ends the pass: commits, then sends the queued replies; on a failure sends none. */
static void finish_pass(server *s, pass *p)
{
    if (p->in_tx && !p->failed && sm_store_commit(s->st, &p->err) != 0)
        p->failed = true;
    if (p->failed) {
        /* Nothing is acked: the agents send the same results again with their next poll, and
         * what the batch changed in memory goes back to what the store holds. */
        sm_log(LOG_ERR, "SM-STORE-FAIL", "store failed, %zu replies withheld: %s", p->n_out,
               p->err.msg);
        if (p->in_tx)
            sm_control_rollback(&s->api.ctl, sm_wall_ms(), NULL);
        for (size_t i = 0; i < p->n_out; i++) {
            sm_bus_msg_fini(&s->out[i].msg);
            free(s->out[i].env);
        }
        return;
    }
    for (size_t i = 0; i < p->n_out; i++) {
        pending *o = &s->out[i];
        if (o->env)
            send_sealed(s, &o->msg, o->env, o->len, o->name, &p->err);
        else
            sm_bus_msg_fini(&o->msg); /* it could not be sealed: logged */
    }
    answer_news(s);
    /* More may be waiting than one batch took: come back through the loop. */
    if (p->n_out == SM_BUS_PASS_REPLIES || p->taken >= SM_BUS_PASS_BYTES)
        lws_cancel_service(s->ctx);
}

/* Drains every waiting request in one store transaction; replies go out only after the commit,
 * so an ack never precedes the durable copy of what it acknowledges. */
void sm_server_drain_bus(server *s)
{
    /* Bytes taken per pass, refused messages included: a flood of messages that fail their MAC
     * makes no replies, and without this bound one pass would take them for as long as they came
     * while HTTP waited (250 KiB forgeries kept /api/agents waiting 13 s). 1 MiB is a few ms of
     * HMAC; the bus's fd stays readable, so the loop comes back after serving the others. */
    pass p = {0};
    sm_bus_msg m;
    int got = 0;
    while (p.n_out < SM_BUS_PASS_REPLIES && p.taken < SM_BUS_PASS_BYTES &&
           (got = sm_bus_recv(s->bus, &m, &p.err)) == 1) {
        p.taken += m.len;
        const uint64_t now = (uint64_t)sm_wall_ms();
        sm_env env;
        sm_poll poll;
        if (!admit(s, &m, now, &env, &poll, &p.err))
            continue;
        take_poll(s, &p, &m, &env, &poll, now);
        sm_msg_poll_fini(&poll);
    }
    if (got < 0)
        sm_log(LOG_ERR, "SM-BUS-RECV", "%s", p.err.msg);
    sm_rejects_add(s->rejects, SM_REJ_THROTTLED, sm_bus_take_dropped(s->bus));
    finish_pass(s, &p);
}

/* The held poll of `name` is answered with envelope env, which is freed; NULL (it could not be
 * sealed, which was logged) drops the poll unanswered, as send_sealed does. */
static void send_held(server *s, const char *name, char *env, size_t elen)
{
    held *h = sm_map_del(s->held, name);
    if (!h) {
        free(env);
        return;
    }
    held_unlink(s, h);
    sm_error err = {0};
    if (env)
        send_sealed(s, &h->msg, env, elen, name, &err);
    else
        sm_bus_msg_fini(&h->msg);
    free(h);
}

/* Held polls of hosts with new work (jobs queued, a run's gate opened, a retry) are answered
 * now, all in one transaction: a request for a thousand hosts costs one commit, not a
 * thousand. Each reply is sealed as it is made, into the few hundred bytes it takes, and sent
 * after the commit: holding the batch's replies as structs until then took 14 KB a host, 14 MB
 * of RSS that stayed once a POST for 1,000 hosts had touched it. */
static void answer_news(server *s)
{
    char(*names)[SM_NAME_MAX + 1] = s->news_names;
    sm_error err = {0};
    size_t n;
    do {
        n = sm_control_take_news(s->api.ctl, names, SM_NEWS_BATCH);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (sm_map_get(s->held, names[i]))
                memmove(names[k++], names[i], sizeof names[0]);
        if (!k)
            continue;
        if (sm_store_begin(s->st, &err) != 0)
            return;
        const int64_t now = sm_wall_ms();
        for (size_t i = 0; i < k; i++) {
            s->news[i] = sm_control_news(s->api.ctl, names[i], now, s->news_reply, &err);
            const held *h = s->news[i] ? sm_map_get(s->held, names[i]) : NULL;
            s->news_env[i] = NULL;
            sm_error serr = {0};
            if (h && !(s->news_env[i] = seal_reply(s, s->news_reply, names[i], h->nonce,
                                                   &s->news_len[i], &serr)))
                sm_log(LOG_WARNING, "SM-REPLY-FAIL", "cannot answer a poll of %s: %s", names[i],
                       serr.msg);
        }
        if (sm_store_commit(s->st, &err) != 0) {
            sm_log(LOG_ERR, "SM-STORE-FAIL", "cannot dispatch queued jobs: %s", err.msg);
            sm_control_rollback(&s->api.ctl, now, NULL);
            for (size_t i = 0; i < k; i++)
                free(s->news_env[i]);
            return; /* the jobs stay queued; the agents' next polls take them */
        }
        for (size_t i = 0; i < k; i++)
            if (s->news[i])
                send_held(s, names[i], s->news_env[i], s->news_len[i]);
    } while (n == SM_NEWS_BATCH);
}

int sm_server_scratch_new(server *s)
{
    s->out = calloc(SM_BUS_PASS_REPLIES, sizeof *s->out);
    s->news_names = calloc(SM_NEWS_BATCH, sizeof *s->news_names);
    s->news_reply = calloc(1, sizeof *s->news_reply);
    s->pass_reply = calloc(1, sizeof *s->pass_reply);
    s->news_env = calloc(SM_NEWS_BATCH, sizeof *s->news_env);
    s->news_len = calloc(SM_NEWS_BATCH, sizeof *s->news_len);
    s->news = calloc(SM_NEWS_BATCH, sizeof *s->news);
    if (s->out && s->pass_reply && s->news_names && s->news_reply && s->news_env && s->news_len &&
        s->news)
        return 0;
    sm_server_scratch_free(s);
    return SM_ENOMEM;
}

void sm_server_scratch_free(server *s)
{
    free(s->out);
    free(s->news_names);
    free(s->news_reply);
    free(s->pass_reply);
    free(s->news_env);
    free(s->news_len);
    free(s->news);
    s->out = NULL;
    s->news_names = NULL;
    s->news_reply = NULL;
    s->pass_reply = NULL;
    s->news_env = NULL;
    s->news_len = NULL;
    s->news = NULL;
}

static uint64_t notify(void *hooks, const sm_webhook_dest *to, const char *event, const char *body)
{
    return sm_webhook_post(hooks, to, event, body);
}

static bool hook_status(void *hooks, uint64_t schedule, char *out, size_t cap, int64_t *at_ms)
{
    return sm_webhook_last(hooks, schedule, out, cap, at_ms);
}

static void jobs_queued(void *arg, const char *const *hosts, size_t n)
{
    (void)hosts;
    (void)n;
    answer_news(arg);
}

/* Answers the n held polls of `names`, whose hold ran out, in one transaction: each answer
 * (often empty) sealed as it is made, as answer_news does, and sent after the commit. n is at
 * most SM_NEWS_BATCH: the news scratch is free between two calls of answer_news. */
static void expire_held(server *s, const char (*names)[SM_NAME_MAX + 1], size_t n, int64_t now)
{
    sm_error err = {0};
    if (sm_store_begin(s->st, &err) != 0)
        return;
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        s->news_env[i] = NULL;
    for (size_t i = 0; i < n && ok; i++) {
        ok = sm_control_expire(s->api.ctl, names[i], now, s->news_reply, &err) == 0;
        const held *h = ok ? sm_map_get(s->held, names[i]) : NULL;
        sm_error serr = {0};
        if (h && !(s->news_env[i] =
                       seal_reply(s, s->news_reply, names[i], h->nonce, &s->news_len[i], &serr)))
            sm_log(LOG_WARNING, "SM-REPLY-FAIL", "cannot answer a poll of %s: %s", names[i],
                   serr.msg);
    }
    if (ok && sm_store_commit(s->st, &err) == 0) {
        for (size_t i = 0; i < n; i++)
            send_held(s, names[i], s->news_env[i], s->news_len[i]);
        return;
    }
    sm_control_rollback(&s->api.ctl, now, NULL);
    for (size_t i = 0; i < n; i++) {
        free(s->news_env[i]);
        /* Still held: it runs out again at the next tick. */
        held *h = sm_map_get(s->held, names[i]);
        if (h && !sm_deadline_queued(&h->due))
            (void)sm_deadlines_set(&s->held_due, &h->due, h->due.at);
    }
}

static void on_tick(lws_sorted_usec_list_t *sul)
{
    server *s = lws_container_of(sul, server, tick);
    const int64_t now = sm_wall_ms();
    sm_error err = {0};
    /* Between transactions: what was invalidated has committed (cache.h). */
    sm_report_cache_settle(s->api.reports.cache);
    if (sm_store_begin(s->st, &err) == 0) {
        if (sm_control_tick(s->api.ctl, now, &err) != 0 || sm_store_commit(s->st, &err) != 0) {
            sm_log(LOG_ERR, "SM-TICK-FAIL", "%s", err.msg);
            sm_control_rollback(&s->api.ctl, now, NULL);
        }
    }
    /* The judgements' anomalies from the worker when there is one: never built on the loop. */
    const sm_schedules_env env = {
        s->st, &s->api.ctl, &s->api.reports, jobs_queued,
        s,     notify,      s->hooks,        s->worker ? sm_server_ask_anomalies : NULL,
        s};
    sm_schedules_tick(&env, now);
    sm_api_experiments_follow(&s->api);
    /* Expired holds are answered with whatever there is (often nothing). */
    char names[SM_EXPIRE_BATCH][SM_NAME_MAX + 1];
    size_t n = 0;
    const int64_t mono = sm_mono_ms();
    sm_deadline *d;
    while (n < SM_EXPIRE_BATCH && (d = sm_deadlines_pop_due(&s->held_due, mono)) != NULL) {
        const held *h = (const held *)(const void *)((const char *)d - offsetof(held, due));
        snprintf(names[n++], sizeof names[0], "%s", h->agent);
    }
    if (n)
        expire_held(s, (const char(*)[SM_NAME_MAX + 1]) names, n, now);
    answer_news(s);
    /* Browsers hear of changes every other tick: quick enough to watch, cheap enough to leave
     * open. */
    if (++s->ticks % 2 == 0)
        sm_ws_tick(s->hub);
    if (*s->stop)
        lws_cancel_service(s->ctx);
    else
        lws_sul_schedule(s->ctx, 0, &s->tick, on_tick, n == SM_EXPIRE_BATCH ? 1 : TICK_US);
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

/* The protocols this server speaks; the events one carries its hub as the user pointer, so
 * each server fills its own copy (server.protocols). */
static const struct lws_protocols protocols_template[] = {
    {"http", sm_http_callback, 0, 0, 0, NULL, 0},
    {"sm-bus", callback_bus, 0, 0, 0, NULL, 0},
    {"sm-events", sm_ws_callback, 0, 4096, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};
_Static_assert(sizeof protocols_template == sizeof((server *)0)->protocols,
               "server.protocols holds the template");

static void lws_to_sm_log(int level, const char *line)
{
    sm_log(level == LLL_ERR ? LOG_ERR : LOG_WARNING, "SM-LWS", "%.*s", (int)strcspn(line, "\n"),
           line);
}

/* Opens the store, the control core, the loop's tables, the events hub and the bus, each into
 * s; on failure server_close undoes what was made. */
static int server_open(server *s, sm_error *err)
{
    const sm_server_cfg *cfg = s->cfg;
    const int64_t t0 = sm_wall_ms();
    int rc;
    if ((rc = sm_store_open(&s->st, cfg->db_path, err)))
        return rc;
    sm_control_cfg ccfg = {.hold_ms = cfg->hold_ms,
                           .poll_rate = cfg->poll_rate,
                           .job_grace_ms = 30000,
                           .lost_grace_ms = cfg->lost_grace_ms,
                           .clock_ms = mono_ms,
                           .max_agents = cfg->max_agents,
                           .data_addr = cfg->data_addr};
    if ((rc = sm_control_open(&s->api.ctl, s->st, &ccfg, t0, err)))
        return rc;
    s->replay = sm_replay_new(2ull * SM_SKEW_MS);
    s->rejects = sm_rejects_new();
    s->held = sm_map_new();
    sm_deadlines_init(&s->held_due);
    s->on_prev_key = sm_map_new();
    s->keys = sm_keys_new(cfg->key, cfg->max_agents ? cfg->max_agents : SM_AGENTS_MAX_DEFAULT);
    s->started_ms = sm_mono_ms();
    if (!s->replay || !s->rejects || !s->held || !s->on_prev_key || !s->keys ||
        sm_server_scratch_new(s) != 0)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    s->api = (sm_api_ctx){.st = s->st,
                          .ctl = s->api.ctl,
                          .rejects = s->rejects,
                          .token = cfg->token,
                          .read_tokens = cfg->read_tokens,
                          .n_read_tokens = cfg->n_read_tokens,
                          .jobs_queued = jobs_queued,
                          .arg = s,
                          .ws_counters = s->ws_counters,
                          .http_counters = s->http,
                          .reports = {.st = s->st},
                          .webhook_key = cfg->key,
                          .webhook_allow = &cfg->webhook_allow,
                          .webhook_post = notify,
                          .webhook_status = hook_status};
    s->api.reports.memory_limit = (uint64_t)cfg->report_memory_mb * 1000000;
    /* One cache for the loop's reports and the worker's (start_worker). */
    if (sm_report_cache_new(&s->api.reports.cache, true) != 0 || !(s->tickets = sm_map_new()))
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    /* Each schedule's webhook is signed with a secret of its own, derived from the fleet key:
     * a receiver never holds the token (docs/security.md). */
    const sm_webhook_cfg hcfg = {.key = cfg->key, .allow = &cfg->webhook_allow};
    if ((rc = sm_webhook_open(&s->hooks, &hcfg, err)))
        return rc;
    s->api.webhook_ctx = s->hooks;
    if (!(s->hub = sm_ws_hub_new(&s->api, s->st, s->ws_counters)))
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    memcpy(s->protocols, protocols_template, sizeof s->protocols);
    s->protocols[0].per_session_data_size = sm_http_session_size();
    s->protocols[2].per_session_data_size = sm_ws_session_size();
    s->protocols[2].user = s->hub;
    return sm_bus_open(&s->bus, cfg->listen_url, err);
}

/* The libwebsockets context, listening for HTTP, with s as its user. */
static int listen_http(server *s, sm_error *err)
{
    const sm_server_cfg *cfg = s->cfg;
    lws_set_log_level(LLL_ERR | LLL_WARN, lws_to_sm_log);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = cfg->http_port;
    info.iface = cfg->http_addr;
    info.protocols = s->protocols;
    info.user = s;
    info.options = LWS_SERVER_OPTION_DISABLE_IPV6 * (strchr(cfg->http_addr, ':') == NULL);
    /* A client silent this long (in its head, its body or between requests) is dropped. */
    info.timeout_secs = SM_HTTP_IDLE_SECS;
    info.timeout_secs_ah_idle = SM_HTTP_IDLE_SECS;
    if (cfg->tls_cert) {
        /* libwebsockets' own TLS on the default vhost: the port then speaks TLS only, so the
         * token and /ws's sm-token subprotocol never cross the network in clear. */
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.ssl_cert_filepath = cfg->tls_cert;
        info.ssl_private_key_filepath = cfg->tls_key;
        /* HTTP/1.1 only: over HTTP/2 the Host, Origin and token checks would need the
         * pseudo-headers, and one connection's streams would share the per-connection caps. */
        info.alpn = "http/1.1";
    }
    s->loopback = sm_guard_is_loopback(cfg->http_addr);
    s->api.off_loopback = !s->loopback;
    s->guard = (sm_guard){cfg->http_addr, s->loopback, sm_guard_is_wildcard(cfg->http_addr),
                          cfg->http_hosts, cfg->n_http_hosts};
    s->ctx = lws_create_context(&info);
    if (!s->ctx && cfg->tls_cert)
        return sm_error_set(err, SM_ESYS,
                            "cannot listen for HTTPS on %s:%d: is --tls-cert %s a PEM certificate "
                            "and --tls-key %s its key? (SM-LWS in the log says more)",
                            cfg->http_addr, cfg->http_port, cfg->tls_cert, cfg->tls_key);
    if (!s->ctx)
        return sm_error_set(err, SM_ESYS, "cannot listen for HTTP on %s:%d", cfg->http_addr,
                            cfg->http_port);
    return 0;
}

/* Called on the worker's thread: brings the loop to EVENT_WAIT_CANCELLED (thread-safe). */
static void wake_loop(void *arg)
{
    server *s = arg;
    lws_cancel_service(s->ctx);
}

/* The report worker over its own read-only connection, once the loop it wakes exists; without
 * it (the reader did not open) the routes are built on the loop as before. One
 * thread: the coordinator's machines have two cores or so, and the loop needs one; the cache
 * makes a second request for the same reports cheap, so a pool would mostly compute the same
 * tables twice. */
static void start_worker(server *s)
{
    const sm_api_worker_cfg wcfg = {.db_path = s->cfg->db_path,
                                    .cache = s->api.reports.cache,
                                    .memory_limit = s->api.reports.memory_limit,
                                    .wake = wake_loop,
                                    .wake_arg = s};
    sm_error err = {0};
    if (sm_api_worker_start(&s->worker, &wcfg, &err) == 0)
        sm_ws_hub_set_anomalies(s->hub, sm_server_ask_anomalies, s);
    else
        /* e.g. a database in memory, which a second connection cannot see */
        sm_log(LOG_WARNING, "SM-WORKER-OFF", "reports are built on the loop: %s", err.msg);
}

/* Logs where the coordinator listens (the HTTP port as bound) and tells the ready fd. */
static void announce(const server *s, int http_port)
{
    const sm_server_cfg *cfg = s->cfg;
    sm_log(LOG_NOTICE, "SM-LISTEN", "agents: %s, %s: %s:%d, store: %s, dashboard: %s",
           cfg->listen_url, cfg->tls_cert ? "HTTPS (TLS, wss:// for /ws)" : "HTTP (plain)",
           cfg->http_addr, http_port, cfg->db_path, cfg->web_dir ? cfg->web_dir : "(none)");
    if (cfg->ready_fd >= 0) {
        dprintf(cfg->ready_fd, "ready bus=%s http=%s:%d\n", cfg->listen_url, cfg->http_addr,
                http_port);
        close(cfg->ready_fd);
    }
}

/* Puts the bus's descriptor on the loop, then announces the coordinator ready. */
static int adopt_bus(server *s, sm_error *err)
{
    struct lws_vhost *vh = lws_get_vhost_by_name(s->ctx, "default");
    int bus_fd = sm_bus_fd(s->bus, err);
    if (bus_fd < 0)
        return SM_ESYS;
    lws_sock_file_fd_type fd = {.filefd = bus_fd};
    if (!vh || !lws_adopt_descriptor_vhost(vh, LWS_ADOPT_RAW_FILE_DESC, fd, "sm-bus", NULL))
        return sm_error_set(err, SM_ESYS, "cannot add the bus to the event loop");
    announce(s, lws_get_vhost_listen_port(vh));
    return 0;
}

/* Undoes server_open and listen_http, whatever part of them was done. */
static void server_close(server *s)
{
    /* First, while the loop it wakes is still there; the connections that close with the
     * context then forget their tickets with no worker to tell. */
    sm_api_worker_stop(s->worker);
    s->worker = NULL;
    sm_server_asks_free(s);
    if (s->ctx)
        lws_context_destroy(s->ctx);
    sm_map_free(s->tickets, NULL);
    /* The heap first: it marks each held poll's deadline as out of it, before they go. */
    sm_deadlines_fini(&s->held_due);
    sm_map_free(s->held, held_free);
    sm_map_free(s->on_prev_key, NULL);
    sm_keys_free(s->keys);
    sm_ws_hub_free(s->hub);
    sm_webhook_close(s->hooks);
    sm_api_cache_free(&s->api);
    sm_bus_close(s->bus);
    sm_rejects_free(s->rejects);
    sm_replay_free(s->replay);
    sm_control_close(s->api.ctl);
    sm_store_close(s->st);
    sm_server_scratch_free(s);
}

int sm_server_run(const sm_server_cfg *cfg, volatile sig_atomic_t *stop, sm_error *err)
{
    server s;
    memset(&s, 0, sizeof s);
    s.cfg = cfg;
    s.stop = stop;
    int rc = server_open(&s, err);
    if (!rc)
        rc = listen_http(&s, err);
    if (!rc)
        start_worker(&s);
    if (!rc)
        rc = adopt_bus(&s, err);
    if (!rc) {
        lws_sul_schedule(s.ctx, 0, &s.tick, on_tick, TICK_US);
        while (!*stop && lws_service(s.ctx, 0) >= 0)
            ;
        sm_log(LOG_NOTICE, "SM-STOP", "stopping");
    }
    server_close(&s);
    return rc;
}
