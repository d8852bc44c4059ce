/* The coordinator's HTTP side: every request's checks (site, method, type, token, size), the
 * refusals counted and logged, the body read, and the answer written in chunks. */
#include "coordinator/server/http.h"

#include <inttypes.h>
#include <libwebsockets.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/analysis/promtext.h"
#include "coordinator/api/api.h"
#include "coordinator/api/routes.h"
#include "coordinator/api/worker.h"
#include "coordinator/reports/cache.h"
#include "coordinator/schema/apijson.h"
#include "coordinator/server/guard.h"
#include "coordinator/server/internal.h"
#include "coordinator/server/web.h"
#include "proto/clock.h"
#include "proto/log.h"

#define HTTP_CHUNK 16384

/* Every answer's headers: the dashboard loads its own scripts, styles and WebSocket only, is
 * never framed, and names nobody in a Referer. */
#define CSP                                                                                        \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "connect-src 'self' ws: wss:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/* A body that has not all come this long after its head is a slow client holding memory. */
#define BODY_DEADLINE_MS 10000

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
    char allow[SM_ROUTE_ALLOW_MAX]; /* the path's methods, for a 405 */
    bool close_after; /* a body was left unread: the connection cannot carry another */
    bool handled;     /* answered: later body callbacks (lws sends one even for an empty body) are
                       * ignored rather than answered twice */
    bool off_loop;    /* the route is built by the report worker */
    const char *warm; /* the route's report to have the worker build first (routes.h) */
    bool warming;     /* that report is being built: the handler runs when it comes */
    bool deferred;    /* the worker's answer came: its head goes at the next writeable */
    uint64_t ticket;  /* the worker's request, until its answer comes; 0: none */
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

/* A custom header's value into out (cap bytes); "" when absent, NULL when longer than out.
 * name is lower case with its colon, as lws keeps the headers it does not know. */
static const char *custom_header(struct lws *wsi, const char *name, char *out, size_t cap)
{
    const int nlen = (int)strlen(name), n = lws_hdr_custom_length(wsi, name, nlen);
    out[0] = '\0';
    if (n <= 0)
        return out;
    if ((size_t)n >= cap || lws_hdr_custom_copy(wsi, out, (int)cap, name, nlen) < 0)
        return NULL;
    return out;
}

/* A request for data (the API, /metrics, /healthz, /ws) from another site's page is refused
 * whatever its method: a GET there may have this coordinator compute heavy reports. The
 * dashboard's files stay reachable by a link from anywhere; they hold no data. Returns 0, or
 * the status with its message in *msg. */
static int check_fetch(server *s, struct lws *wsi, const char **msg)
{
    char host[256], origin[300], site[32];
    const char *h = header(wsi, WSI_TOKEN_HOST, host, sizeof host),
               *o = header(wsi, WSI_TOKEN_ORIGIN, origin, sizeof origin),
               *f = custom_header(wsi, "sec-fetch-site:", site, sizeof site);
    if (h && o && f && sm_guard_fetch_ok(o, f, h))
        return 0;
    http_refused(s, HR_ORIGIN, "a read from another site (Origin '%.100s', Sec-Fetch-Site '%.20s')",
                 o ? o : "?", f ? f : "?");
    *msg = "the request comes from another site's page: this coordinator answers its own "
           "dashboard and clients that are not browsers";
    return 403;
}

/* The coordinator's tokens, for the one check of routes.h. */
static sm_tokens tokens_of(const server *s)
{
    return (sm_tokens){s->cfg->token, s->cfg->read_tokens, s->cfg->n_read_tokens};
}

/* The path of the report p's route has the worker build first: p's path with its last
 * segment replaced by p->warm ("/api/runs/7/again" -> "/api/runs/7/anomalies"); false when it
 * does not fit. */
static bool warm_path(const http_pss *p, char *out, size_t cap)
{
    const char *slash = strrchr(p->path, '/');
    const int n =
        slash ? snprintf(out, cap, "%.*s/%s", (int)(slash - p->path), p->path, p->warm) : -1;
    return n > 0 && (size_t)n < cap;
}

/* Hands the request to the report worker: 0 when queued (take_answers sends its answer), else
 * the answer sent now (/metrics with fresh cells; 503 when the worker's queue is full). With
 * p->warm the worker builds that report first, and the handler runs when it is in. */
static int to_worker(server *s, struct lws *wsi, http_pss *p)
{
    uint64_t ticket = 0;
    /* No transaction is open between callbacks: every invalidation so far has committed. */
    sm_report_cache_settle(s->api.reports.cache);
    p->ctype = "application/json";
    if (strcmp(p->path, "/metrics") == 0) {
        /* Its counters and gauges from the control core now; its cells by the worker. */
        p->status = sm_api_worker_metrics(s->worker, sm_api_metrics_loop_text(&s->api), &ticket,
                                          &p->resp, &p->resp_len);
        if (p->status == 200)
            p->ctype = SM_PROM_CTYPE;
    } else if (p->warm) {
        char path[sizeof p->path];
        if (!(p->warming = warm_path(p, path, sizeof path))) {
            /* Cannot be (the route matched a path shorter than the buffer): built on the loop. */
            p->status =
                sm_api_handle(&s->api, p->method, p->path, p->query, p->auth[0] ? p->auth : NULL,
                              p->body ? p->body : "", p->len, &p->resp, &p->resp_len, &p->ctype);
            return respond(wsi, p);
        }
        p->status = sm_api_worker_submit(s->worker, path, NULL, &ticket, &p->resp, &p->resp_len);
    } else {
        p->status = sm_api_worker_submit(s->worker, p->path, p->query[0] ? p->query : NULL, &ticket,
                                         &p->resp, &p->resp_len);
    }
    if (!p->status && sm_map_put_id(s->tickets, ticket, wsi) != 0) {
        sm_api_worker_forget(s->worker, ticket);
        p->status = 500;
        p->resp = sm_api_error("out of memory", NULL);
        p->resp_len = p->resp ? strlen(p->resp) : 0;
    }
    if (p->status)
        return respond(wsi, p);
    p->ticket = ticket;
    /* Whatever lws had pending (an idle timeout would cut a long report), this one: a client
     * is not kept waiting forever behind a queue of reports. */
    lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, SM_HTTP_REPORT_SECS);
    return 0;
}

/* The connection goes: its request's answer, if still to come, is dropped. */
static void forget(server *s, http_pss *p)
{
    if (!s || !p || !p->ticket)
        return;
    sm_map_del_id(s->tickets, p->ticket);
    sm_api_worker_forget(s->worker, p->ticket);
    p->ticket = 0;
}

/* The last guard, for a connection that went without CLOSED_HTTP: its user data may be gone
 * already (an upgraded one's is), so its ticket is found by its wsi. */
static void forget_wsi(server *s, struct lws *wsi)
{
    if (!s || !s->tickets || !sm_map_size(s->tickets))
        return;
    size_t cursor = 0;
    uint64_t id, found = 0;
    void *val;
    while (!found && sm_map_next_id(s->tickets, &cursor, &id, &val))
        if (val == wsi)
            found = id;
    if (found) {
        sm_map_del_id(s->tickets, found);
        sm_api_worker_forget(s->worker, found);
    }
}

/* The worker's finished answers, each to its connection when that is still open. */
static void take_answers(server *s)
{
    sm_api_answer a;
    size_t n = 0;
    while (s->worker && sm_api_worker_take(s->worker, &a)) {
        struct lws *wsi = sm_map_del_id(s->tickets, a.ticket);
        http_pss *p = wsi ? lws_wsi_user(wsi) : NULL;
        if (!p || p->ticket != a.ticket) {
            if (!wsi)
                sm_server_ask_answer(s, &a);
            sm_api_answer_fini(&a);
            continue;
        }
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
        p->ticket = 0;
        if (p->warming) {
            /* The report the handler reads is in the cache now (or failed, as the handler will
             * say): the handler runs on the loop, its answer sent as a worker's is. */
            p->warming = false;
            sm_api_answer_fini(&a);
            p->ctype = "application/json";
            p->status =
                sm_api_handle(&s->api, p->method, p->path, p->query, p->auth[0] ? p->auth : NULL,
                              p->body ? p->body : "", p->len, &p->resp, &p->resp_len, &p->ctype);
        } else {
            p->status = a.status;
            p->resp = a.resp;
            p->resp_len = a.len;
            p->ctype = a.ctype;
        }
        p->deferred = true;
        lws_callback_on_writable(wsi);
        /* A bound on one pass; the rest at the next, which the cancel brings at once. */
        if (++n == 4 * SM_API_WORKER_QUEUE_MAX) {
            lws_cancel_service(s->ctx);
            break;
        }
    }
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
    if (strncmp(p->path, "/api/", 5) != 0 && strcmp(p->path, "/healthz") != 0 &&
        strcmp(p->path, "/metrics") != 0) {
        /* Everything else a browser asks for is the dashboard's. */
        p->status = sm_web_file(s->cfg->web_dir, p->path, &p->resp, &p->resp_len, &p->ctype);
        if (p->status != 200) {
            p->resp =
                sm_api_error(p->status == 404 ? "no such file" : "cannot read the file", NULL);
            p->resp_len = p->resp ? strlen(p->resp) : 0;
            p->ctype = "application/json";
        }
    } else if ((p->off_loop || p->warm || strcmp(p->path, "/metrics") == 0) && s->worker) {
        return to_worker(s, wsi, p);
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
    /* A DELETE changes state as a POST does: same site and token checks, no body. */
    const bool writes = post || strcmp(p->method, "DELETE") == 0;
    char num[32];
    const char *cl = header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, num, sizeof num);
    const unsigned long long clen = cl && *cl ? strtoull(cl, NULL, 10) : 0;
    const bool body_follows =
        clen > 0 || lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0;
    p->close_after = body_follows;

    const char *msg;
    int status = check_site(s, wsi, writes, &msg);
    if (status)
        return refuse(wsi, p, status, msg, status == 421 ? "Host" : "Origin");
    const sm_route *route = NULL;
    switch (sm_routes_find(p->path, p->method, s->cfg->web_dir != NULL, &route, p->allow,
                           sizeof p->allow)) {
    case 404:
        return refuse(wsi, p, 404,
                      strncmp(p->path, "/api", 4) == 0 ? "no such endpoint" : "no such file", NULL);
    case 405: {
        http_refused(s, HR_METHOD, "method %s", p->method);
        char why[64];
        snprintf(why, sizeof why, "%s: use %s", p->method, p->allow);
        return refuse(wsi, p, 405, why, NULL);
    }
    default:
        break;
    }
    if (post) {
        char ctype[128];
        if (!sm_guard_is_json(header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, ctype, sizeof ctype))) {
            http_refused(s, HR_TYPE, "a POST of %s", "another type than JSON");
            return refuse(wsi, p, 415, "a POST body must be Content-Type: application/json",
                          "Content-Type");
        }
    }
    if (route->scope != SM_ROUTE_PUBLIC && (status = check_fetch(s, wsi, &msg)) != 0)
        return refuse(wsi, p, status, msg, "Origin");
    const char *auth = header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, p->auth, sizeof p->auth);
    /* The route's scope says who may call it (routes.h); auth is NULL when too long to read. */
    const sm_tokens tokens = tokens_of(s);
    if ((status = sm_api_access(&tokens, route->scope, s->loopback, auth)) != 0) {
        http_refused(s, HR_TOKEN, "%s",
                     status == 403 ? "a read-only token on a call that changes state"
                                   : "no or a wrong dashboard token");
        return refuse(wsi, p, status,
                      status == 403 ? SM_API_READ_ONLY
                      : auth        ? SM_API_NEED_TOKEN
                                    : "the token is longer than 255 characters",
                      "Authorization");
    }
    if (!auth)
        p->auth[0] = '\0';
    p->off_loop = route->off_loop;
    p->warm = route->warm;
    if (!cl || clen > route->body_max || (body_follows && route->body_max == 0)) {
        char why[96];
        if (route->body_max == 0)
            snprintf(why, sizeof why, "a %s of this path takes no body", p->method);
        else
            snprintf(why, sizeof why, "the request body is over %zu KiB", route->body_max >> 10);
        http_refused(s, HR_SIZE, "%s", why);
        return refuse(wsi, p, 413, why, NULL);
    }
    if (body_follows) {
        /* Content-Length within the cap, or a chunked body, capped as it comes. */
        p->body_max = route->body_max;
        p->body_since = sm_mono_ms();
        return 0;
    }
    p->close_after = false;
    return handle(wsi, p);
}

/* Whether the upgrade's subprotocol list (comma-separated, RFC 6455 4.1) names sm-events. */
static bool asks_events(struct lws *wsi)
{
    char protos[512];
    const char *list = header(wsi, WSI_TOKEN_PROTOCOL, protos, sizeof protos);
    static const char want[] = "sm-events";
    bool found = false;
    for (const char *p = list; p && *p && !found;) {
        p += strspn(p, " \t,");
        size_t n = strcspn(p, " \t,");
        found = n == sizeof want - 1 && memcmp(p, want, n) == 0;
        p += n;
    }
    OPENSSL_cleanse(protos, sizeof protos); /* the list may carry the token */
    return found;
}

/* A WebSocket upgrade passes the same checks as a request, its token in the subprotocol list
 * ("sm-token.<token>", percent-encoded) since a browser cannot set headers on one. Answers a
 * refusal itself; returns as the HTTP_CONFIRM_UPGRADE callback does. */
static int on_upgrade(struct lws *wsi)
{
    server *s = lws_context_user(lws_get_context(wsi));
    const char *msg = NULL;
    int status = check_site(s, wsi, true, &msg);
    if (!status)
        status = check_fetch(s, wsi, &msg);
    /* /ws tells what GET /api/runs and /api/agents tell: a read, open to a read token. */
    const sm_tokens tokens = tokens_of(s);
    if (!status && sm_api_access(&tokens, SM_ROUTE_READ, s->loopback, NULL)) {
        char protos[512], tok[SM_TOKEN_MAX + 1];
        const char *list = header(wsi, WSI_TOKEN_PROTOCOL, protos, sizeof protos);
        int got = list ? sm_guard_ws_token(list, tok, sizeof tok) : -1;
        char auth[SM_TOKEN_MAX + 8];
        snprintf(auth, sizeof auth, "Bearer %s", got == 1 ? tok : "");
        if (got != 1 || sm_api_access(&tokens, SM_ROUTE_READ, s->loopback, auth)) {
            http_refused(s, HR_TOKEN, "%s", "a WebSocket without the dashboard token");
            msg = got < 0 ? "the token is longer than 255 characters or malformed"
                          : "/ws needs the dashboard token (subprotocol sm-token.TOKEN)";
            status = 401;
        }
        OPENSSL_cleanse(tok, sizeof tok);
        OPENSSL_cleanse(auth, sizeof auth);
        OPENSSL_cleanse(protos, sizeof protos);
    }
    if (!status && !asks_events(wsi)) {
        /* Upgraded, a client without sm-events would only wait: tell it what to ask for. It
         * counts with the refused content types: what it asked to speak is not spoken here. */
        http_refused(s, HR_TYPE, "%s", "a WebSocket without the sm-events subprotocol");
        msg = "/ws speaks only the sm-events subprotocol: send Sec-WebSocket-Protocol: sm-events";
        status = 400;
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

/* A connection just accepted (HTTP, perhaps later a WebSocket): counted until its wsi goes,
 * and refused past the cap rather than left to take memory. Returns as an lws callback does. */
static int on_accept(server *s, struct lws *wsi)
{
    if (s && !lws_get_opaque_user_data(wsi) && lws_get_socket_fd(wsi) >= 0) {
        if (s->http[0] >= s->cfg->http_max_conns) {
            http_refused(s, HR_FULL, "%s", "too many connections");
            return -1;
        }
        lws_set_opaque_user_data(wsi, &s->http[0]);
        s->http[0]++;
    }
    return 0;
}

static void on_destroy(server *s, struct lws *wsi)
{
    if (s && lws_get_opaque_user_data(wsi) == &s->http[0]) {
        lws_set_opaque_user_data(wsi, NULL);
        s->http[0]--;
    }
}

/* A piece of the request body: kept, within the route's cap and the body's deadline. */
static int on_body(server *s, struct lws *wsi, http_pss *p, const void *in, size_t len)
{
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
}

/* Writes the next chunk of the answer; after the last, ends the transaction. */
static int on_writeable(struct lws *wsi, http_pss *p)
{
    if (p->deferred) {
        p->deferred = false;
        return respond(wsi, p);
    }
    if (!p->resp)
        return -1;
    uint8_t buf[LWS_PRE + HTTP_CHUNK];
    size_t n = p->resp_len - p->sent < HTTP_CHUNK ? p->resp_len - p->sent : HTTP_CHUNK;
    const bool last = p->sent + n == p->resp_len;
    memcpy(buf + LWS_PRE, p->resp + p->sent, n);
    if (lws_write(wsi, buf + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)n)
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

int sm_http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                     size_t len)
{
    http_pss *p = user;
    server *s = lws_context_user(lws_get_context(wsi));
    switch (reason) {
    case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
        return on_accept(s, wsi);
    case LWS_CALLBACK_WSI_DESTROY:
        forget_wsi(s, wsi);
        on_destroy(s, wsi);
        return 0;
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        if (s)
            take_answers(s);
        return 0;
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
        return on_upgrade(wsi);
    case LWS_CALLBACK_HTTP:
        return on_head(wsi, p, in);
    case LWS_CALLBACK_HTTP_BODY:
        return on_body(s, wsi, p, in, len);
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        if (p->handled)
            return 0;
        p->close_after = false;
        return handle(wsi, p);
    case LWS_CALLBACK_HTTP_WRITEABLE:
        return on_writeable(wsi, p);
    case LWS_CALLBACK_CLOSED_HTTP:
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
        forget(s, p);
        if (p)
            pss_fini(p);
        return 0;
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

size_t sm_http_session_size(void)
{
    return sizeof(http_pss);
}
