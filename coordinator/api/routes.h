/* The coordinator's one route table: each HTTP route's path pattern, method, body cap, token
 * scope and handler, read by the listener's head checks and by the API's dispatcher alike. */
#ifndef SM_COORD_ROUTES_H
#define SM_COORD_ROUTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/api/api.h"
#include "proto/envelope.h"

#define SM_SPEC_BODY_MAX   (256u << 10) /* a run spec, a schedule, or a list of jobs */
#define SM_SMALL_BODY_MAX  (4u << 10)   /* any other POST (cancel, pause, resume) */
#define SM_ROUTE_ALLOW_MAX 32           /* the longest Allow list, "GET, POST" and its NUL */

/* Who may call a route. */
typedef enum sm_route_scope {
    SM_ROUTE_PUBLIC, /* anyone: the dashboard's files, which hold no data */
    SM_ROUTE_READ,   /* a read or operate token on a listener off loopback (when the coordinator
                      * has tokens) */
    SM_ROUTE_WRITE,  /* the operate token whenever the coordinator has one: it changes state */
} sm_route_scope;

/* What the caller's token lets it do, whatever the route. */
typedef enum sm_caller {
    SM_CALLER_NONE,    /* no token, or one the coordinator does not know */
    SM_CALLER_READ,    /* a read token: reads anywhere, never changes state */
    SM_CALLER_OPERATE, /* the operate token, or anyone when the coordinator has no token */
} sm_caller;

/* The coordinator's HTTP tokens. read is only meaningful with operate (the coordinator's
 * options refuse read tokens without an operate one). */
typedef struct sm_tokens {
    const char *operate;     /* NULL: none, everyone operates (a loopback listener only) */
    const char *const *read; /* n_read read-only tokens */
    size_t n_read;
} sm_tokens;

/* A request as its handler sees it: the path's parameters already parsed and bounded. */
typedef struct sm_route_req {
    const char *query; /* "format=csv&x=y", may be NULL */
    const char *body;
    size_t len;
    uint64_t id;                /* {id} */
    uint64_t cell;              /* {cell}, at most UINT32_MAX */
    sm_caller caller;           /* what the request's token lets it do (webhook URLs: operate) */
    char name[SM_NAME_MAX + 2]; /* {name}: at most SM_NAME_MAX + 1 characters, not checked */
} sm_route_req;

/* A handler answers as sm_api_handle does: the HTTP status, a malloc'd body in *resp, its
 * media type in *ctype (set to application/json before the call). */
typedef int (*sm_route_fn)(sm_api_ctx *a, const sm_route_req *r, char **resp, size_t *len,
                           const char **ctype);

/* One route, one method, as nng's nng_http_handler carries path, method and body limit. The
 * pattern's segments are literal or a parameter: {id} (a decimal id; "what id: expected a
 * number" with field "id" otherwise), {name} (an agent name, up to SM_NAME_MAX + 1 characters;
 * field "name"), {cell} (a cell number, never empty; field "cell"). {id} and {name} match an
 * empty segment too, so that it gets a 400 naming the field rather than a 404. */
typedef struct sm_route {
    const char *pattern; /* "/api/runs/{id}/table" */
    const char *method;  /* "GET", "POST", "DELETE" */
    size_t body_max;     /* 0: no body is read */
    sm_route_scope scope;
    sm_route_fn handler; /* NULL for the dashboard's files: the server serves them */
    const char *what;    /* {id}'s noun in its 400 ("run"); NULL without an {id} */
    /* Built by the report worker (worker.h), off the loop: a GET whose handler reads the store
     * and the reports alone (never the control core) and may take long (hundreds of runs). */
    bool off_loop;
    /* A report of the same {id} that the handler reads (".../anomalies" for ".../again"), to be
     * built first by the report worker: the handler, on the loop, then finds it in the shared
     * cache (an ended run's reports are kept). NULL: none. */
    const char *warm;
} sm_route;

/* The table, in the order the Allow header lists a path's methods. */
extern const sm_route sm_routes[];
extern const size_t sm_routes_n;

/* The route of a request, for the head checks and the dispatcher. with_web: every path outside
 * /api/ (and /api), /healthz and /metrics is a dashboard file, a public GET. Returns 0 with
 * *out set; 404 when no route has the path; 405 when routes have it, not with method. allow
 * (cap bytes, SM_ROUTE_ALLOW_MAX is enough) gets every method the path answers, ", " between
 * them, on 0 and 405 ("" on 404). */
int sm_routes_find(const char *path, const char *method, bool with_web, const sm_route **out,
                   char *allow, size_t cap);

/* The caller a request with the Authorization header value authorization (NULL when absent
 * or too long to read) is on a coordinator with tokens t. Every token is compared, each in
 * constant time (sm_api_token_ok), so timing says neither which nor how much matched. */
sm_caller sm_api_caller(const sm_tokens *t, const char *authorization);

/* The one token check of the HTTP side: whether that request may call a route of scope behind
 * a listener on loopback or not. 0: yes; 401: it needs a token it did not give (or a wrong
 * one); 403: it gave a read token and the route changes state. With authorization NULL it
 * says whether the route is open without a token. */
int sm_api_access(const sm_tokens *t, sm_route_scope scope, bool loopback,
                  const char *authorization);

/* The messages of those refusals, field "Authorization". */
#define SM_API_NEED_TOKEN "this call needs the dashboard token (Authorization: Bearer ...)"
#define SM_API_READ_ONLY  "this call needs an operate token; the token given is read-only"

#endif
