/* What the HTTP listener decides from a request's head, before any body is read: the route's
 * methods and body cap, whether the Host names this listener, whether the Origin is its own,
 * whether a POST is JSON, and whether the token is needed. Pure functions, no I/O. */
#ifndef SM_COORD_GUARD_H
#define SM_COORD_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#define SM_TOKEN_MAX      255          /* characters of a dashboard token */
#define SM_SPEC_BODY_MAX  (256u << 10) /* a run spec, or a list of jobs */
#define SM_SMALL_BODY_MAX (4u << 10)   /* any other POST (cancel) */

/* Who may name the listener in Host. */
typedef struct sm_guard {
    const char *addr;         /* the listen address: an IPv4/IPv6 literal */
    bool loopback;            /* addr is 127/8 or ::1: "localhost" names it too */
    bool wildcard;            /* 0.0.0.0 or ::: any IP literal names it */
    const char *const *names; /* more names (--http-host), any port */
    size_t n_names;
} sm_guard;

/* Whether addr (an IP literal) is a loopback address; the wildcard addresses are not. */
bool sm_guard_is_loopback(const char *addr);
bool sm_guard_is_wildcard(const char *addr);

/* The route of a request: which methods it answers ("GET", "POST", "GET, POST" or "GET, DELETE", as
 * the Allow header lists them), how large a body it reads, and whether it is the API (its GETs are
 * guarded by the token on a public listener) or a dashboard file (public). */
typedef struct sm_route {
    const char *allow;
    size_t body_max; /* 0: no body is read */
    bool api;
} sm_route;

/* The route for path; false for a path no route serves (404). with_web: dashboard files are
 * served at every path outside /api/ and /healthz. */
bool sm_guard_route(const char *path, bool with_web, sm_route *out);

/* Whether method (as sent, "GET", "POST", ...) is one the route answers. */
bool sm_guard_method_ok(const sm_route *r, const char *method);

/* Whether the Host header value (name or literal, with or without ":port") names this
 * listener. NULL or empty: false. The port is not compared: a tunnel or a proxy forwards to
 * another port, and a rebinding page differs by name, not by port. */
bool sm_guard_host_ok(const sm_guard *g, const char *host);

/* Whether Origin is the listener's own: "http://" or "https://" then exactly the Host header
 * (already found acceptable). "null" and every other origin: false. */
bool sm_guard_origin_ok(const char *origin, const char *host);

/* Whether a Content-Type value is application/json (parameters such as charset allowed). */
bool sm_guard_is_json(const char *ctype);

/* The token from a WebSocket's Sec-WebSocket-Protocol list: the entry "sm-token.<t>" with t
 * percent-decoded into out (cap bytes). Returns 1 when found, 0 when absent, -1 when it is
 * over SM_TOKEN_MAX or malformed. */
int sm_guard_ws_token(const char *protocols, char *out, size_t cap);

#endif
