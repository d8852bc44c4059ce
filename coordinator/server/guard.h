/* What the HTTP listener decides from a request's head, before any body is read, besides its
 * route (coordinator/api/routes.h): whether the Host names this listener, whether the Origin is
 * its own, whether a POST is JSON, and the token a WebSocket carries. Pure functions, no I/O. */
#ifndef SM_COORD_GUARD_H
#define SM_COORD_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#define SM_TOKEN_MAX 255 /* characters of a dashboard token */

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

/* Whether the Host header value (name or literal, with or without ":port") names this
 * listener. NULL or empty: false. The port is not compared: a tunnel or a proxy forwards to
 * another port, and a rebinding page differs by name, not by port. */
bool sm_guard_host_ok(const sm_guard *g, const char *host);

/* Whether Origin is the listener's own: "http://" or "https://" then exactly the Host header
 * (already found acceptable). "null" and every other origin: false. */
bool sm_guard_origin_ok(const char *origin, const char *host);

/* Whether a request that reads (a GET, /ws) may come from where the browser says it comes
 * from: origin and fetch_site are the Origin and Sec-Fetch-Site headers (NULL or "" when
 * absent), host the Host header (already found acceptable). False for a sent Origin that is
 * not the listener's own, for Sec-Fetch-Site "cross-site", and for "same-site" without our
 * own Origin (same-site is another origin: another port of the same machine, say). Clients
 * that send neither header (curl, the CLI, Prometheus) pass. */
bool sm_guard_fetch_ok(const char *origin, const char *fetch_site, const char *host);

/* Whether a Content-Type value is application/json (parameters such as charset allowed). */
bool sm_guard_is_json(const char *ctype);

/* The token from a WebSocket's Sec-WebSocket-Protocol list: the entry "sm-token.<t>" with t
 * percent-decoded into out (cap bytes). Returns 1 when found, 0 when absent, -1 when it is
 * over SM_TOKEN_MAX or malformed. */
int sm_guard_ws_token(const char *protocols, char *out, size_t cap);

#endif
