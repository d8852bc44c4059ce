/* Job parameters: defaults, validation against the limits of params.h, names and size parsing. */
#include "proto/params.h"

#include <inttypes.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_READ_SIZE   (128u << 10)
#define HTTP_DEFAULT_BODY   (16u << 20)
#define HTTP_DEFAULT_REPEAT 5u
/* A duration job may overrun its duration by the final drain and the exchange of results. */
#define DURATION_SLACK_MS     30000u
#define DURATION_MIN_SLACK_MS 1000u

static const char *const workload_names[] = {"stream", "rr", "connect", "http"};
static const char *const http_client_names[] = {"thread", "pool", "multi"};
static const char *const transport_names[] = {"tcp", "unix"};
static const char *const framing_names[] = {"raw", "lines"};
static const char *const scope_names[] = {"local", "pair"};

#define N_FRAMINGS ((unsigned)(sizeof framing_names / sizeof framing_names[0]))
#define N_SCOPES   ((unsigned)(sizeof scope_names / sizeof scope_names[0]))

void sm_params_init(sm_params *p, sm_workload_kind workload)
{
    memset(p, 0, sizeof *p);
    p->workload = workload;
    p->transport = SM_TR_TCP;
    p->scope = SM_SCOPE_LOCAL;
    p->framing = SM_FRAMING_RAW;
    switch (workload) {
    case SM_WL_STREAM:
        p->msg_size = 128u << 10;
        p->count = 2048;
        break;
    case SM_WL_RR:
        p->req_size = 1;
        p->resp_size = 1;
        p->count = 10000;
        break;
    case SM_WL_CONNECT:
        p->count = 1000;
        break;
    case SM_WL_HTTP:
        p->client = SM_HTTP_THREAD;
        p->connections = 1;
        p->repeat = HTTP_DEFAULT_REPEAT;
        break;
    default:
        break;
    }
}

static int check_range(sm_error *err, const char *field, uint64_t v, uint64_t min, uint64_t max)
{
    if (v < min)
        return sm_error_set(err, SM_EINVAL, "%s: %" PRIu64 " is below the minimum %" PRIu64, field,
                            v, min);
    if (v > max)
        return sm_error_set(err, SM_EINVAL, "%s: %" PRIu64 " is above the maximum %" PRIu64, field,
                            v, max);
    return 0;
}

/* Optional fields: 0 keeps the default, anything else must be in range. */
static int check_optional(sm_error *err, const char *field, uint64_t v, uint64_t min, uint64_t max)
{
    return v == 0 ? 0 : check_range(err, field, v, min, max);
}

static int check_enums(const sm_params *p, sm_error *err)
{
    int rc;
    /* Cast to unsigned so that a negative value stored in an enum fails the same test. */
    if ((rc = check_range(err, "workload", (unsigned)p->workload, 0, SM_WL__COUNT - 1)) != 0)
        return rc;
    if ((rc = check_range(err, "transport", (unsigned)p->transport, 0, SM_TR__COUNT - 1)) != 0)
        return rc;
    if ((rc = check_range(err, "scope", (unsigned)p->scope, 0, N_SCOPES - 1)) != 0)
        return rc;
    if ((rc = check_range(err, "client", (unsigned)p->client, 0, SM_HTTP__COUNT - 1)) != 0)
        return rc;
    return check_range(err, "framing", (unsigned)p->framing, 0, N_FRAMINGS - 1);
}

/* A field set for a workload or transport that ignores it is rejected rather than dropped, so
 * that a user's option never silently has no effect (and the codec can omit such fields). */
static int check_applies(const sm_params *p, sm_error *err)
{
    static const char not_stream[] = "%s: applies to workload stream only";
    static const char not_rr[] = "%s: applies to workload rr only";
    static const char not_http[] = "%s: applies to workload http only";
    if (p->workload != SM_WL_HTTP) {
        if (p->client != SM_HTTP_THREAD)
            return sm_error_set(err, SM_EINVAL, not_http, "client");
        if (p->connections != 0)
            return sm_error_set(err, SM_EINVAL, not_http, "connections");
        if (p->repeat != 0)
            return sm_error_set(err, SM_EINVAL, not_http, "repeat");
        if (p->buffer_size != 0)
            return sm_error_set(err, SM_EINVAL, not_http, "buffer_size");
        if (p->fresh_connect)
            return sm_error_set(err, SM_EINVAL, not_http, "fresh_connect");
        if (p->http2)
            return sm_error_set(err, SM_EINVAL, not_http, "http2");
        if (p->tls)
            return sm_error_set(err, SM_EINVAL, not_http, "tls");
        if (p->verify)
            return sm_error_set(err, SM_EINVAL, not_http, "verify");
        if (p->url[0])
            return sm_error_set(err, SM_EINVAL, not_http, "url");
    } else {
        /* libcurl sets TCP_NODELAY itself and sizes its own buffers through buffer_size. */
        static const char curl_owns[] = "%s: does not apply to workload http";
        if (p->nodelay)
            return sm_error_set(err, SM_EINVAL, curl_owns, "nodelay");
        if (p->sndbuf)
            return sm_error_set(err, SM_EINVAL, curl_owns, "sndbuf");
        if (p->rcvbuf)
            return sm_error_set(err, SM_EINVAL, curl_owns, "rcvbuf");
        if (p->count)
            return sm_error_set(err, SM_EINVAL, "count: workload http takes repeat");
        if (p->duration_ms)
            return sm_error_set(err, SM_EINVAL, "duration_ms: workload http takes repeat");
    }
    if (p->workload != SM_WL_STREAM) {
        if (p->framing != SM_FRAMING_RAW)
            return sm_error_set(err, SM_EINVAL, not_stream, "framing");
        if (p->msg_size != 0)
            return sm_error_set(err, SM_EINVAL, not_stream, "msg_size");
        if (p->bytes != 0 && p->workload != SM_WL_HTTP)
            return sm_error_set(err, SM_EINVAL, "%s: applies to workloads stream and http only",
                                "bytes");
        if (p->cork)
            return sm_error_set(err, SM_EINVAL, not_stream, "cork");
        if (p->read_size != 0)
            return sm_error_set(err, SM_EINVAL, not_stream, "read_size");
    }
    if (p->workload != SM_WL_RR) {
        if (p->req_size != 0)
            return sm_error_set(err, SM_EINVAL, not_rr, "req_size");
        if (p->resp_size != 0)
            return sm_error_set(err, SM_EINVAL, not_rr, "resp_size");
    }
    if (p->transport != SM_TR_TCP) {
        if (p->nodelay)
            return sm_error_set(err, SM_EINVAL, "nodelay: applies to transport tcp only");
        if (p->cork)
            return sm_error_set(err, SM_EINVAL, "cork: applies to transport tcp only");
    }
    return 0;
}

/* http: the body, its source and the shape of the job. */
static int check_http(const sm_params *p, sm_error *err)
{
    int rc;
    if (p->transport != SM_TR_TCP)
        return sm_error_set(err, SM_EINVAL, "transport: workload http runs over tcp only");
    if ((rc = check_range(err, "connections", p->connections, 1, SM_HTTP_CONNECTIONS_MAX)) != 0)
        return rc;
    if ((rc = check_range(err, "repeat", p->repeat, 1, SM_HTTP_REPEAT_MAX)) != 0)
        return rc;
    if ((rc = check_optional(err, "buffer_size", p->buffer_size, SM_HTTP_BUFFER_MIN,
                             SM_HTTP_BUFFER_MAX)) != 0)
        return rc;
    if (memchr(p->url, '\0', sizeof p->url) == NULL)
        return sm_error_set(err, SM_EINVAL, "url: longer than %u bytes", SM_URL_MAX);
    if (p->url[0] == '\0') {
        /* The built-in source's bodies are always verified; the option is for a url. */
        if (p->verify)
            return sm_error_set(err, SM_EINVAL,
                                "verify: applies to a url (the built-in source "
                                "is always verified)");
        return check_optional(err, "bytes", p->bytes, 1, SM_HTTP_SIZE_MAX);
    }
    if (strncmp(p->url, "http://", 7) != 0 && strncmp(p->url, "https://", 8) != 0)
        return sm_error_set(err, SM_EINVAL, "url: must start with http:// or https://");
    for (const char *c = p->url; *c; c++)
        if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
            return sm_error_set(err, SM_EINVAL,
                                "url: byte %d is a space, control or non-ASCII character",
                                (int)(c - p->url));
    if (p->scope != SM_SCOPE_LOCAL)
        return sm_error_set(err, SM_EINVAL,
                            "url: scope pair fetches from the server host's built-in source");
    /* The key of another server is unknown: https to a url is verified by the system's CA
     * store, and `tls` means the built-in source's pinned key only. */
    if (p->tls)
        return sm_error_set(err, SM_EINVAL, "tls: applies to the built-in source; use https://");
    return check_optional(err, "bytes", p->bytes, 1, SM_HTTP_SIZE_MAX);
}

static int check_amount(const sm_params *p, sm_error *err)
{
    if (p->workload == SM_WL_HTTP)
        return check_http(p, err);
    int n = (p->count != 0) + (p->bytes != 0) + (p->duration_ms != 0);
    if (n != 1)
        return sm_error_set(err, SM_EINVAL, "%s: set exactly one",
                            p->workload == SM_WL_STREAM ? "count, bytes, duration_ms"
                                                        : "count, duration_ms");
    /* The receiver times the whole protocol between the two markers, so it must know N. */
    if (p->framing == SM_FRAMING_LINES && p->count == 0)
        return sm_error_set(err, SM_EINVAL, "%s: framing lines takes count only",
                            p->bytes ? "bytes" : "duration_ms");
    int rc;
    uint64_t count_max = p->workload == SM_WL_CONNECT ? SM_CONNECT_COUNT_MAX : SM_COUNT_MAX;
    if ((rc = check_optional(err, "count", p->count, 1, count_max)) != 0)
        return rc;
    if ((rc = check_optional(err, "bytes", p->bytes, 1, SM_BYTES_MAX)) != 0)
        return rc;
    return check_optional(err, "duration_ms", p->duration_ms, 1, SM_DURATION_MS_MAX);
}

static int check_sizes(const sm_params *p, sm_error *err)
{
    int rc;
    if (p->workload == SM_WL_STREAM) {
        uint64_t max = p->framing == SM_FRAMING_LINES ? SM_LINE_SIZE_MAX : SM_MSG_SIZE_MAX;
        if ((rc = check_range(err, "msg_size", p->msg_size, 1, max)) != 0)
            return rc;
    }
    if (p->workload == SM_WL_RR) {
        if ((rc = check_range(err, "req_size", p->req_size, 1, SM_MSG_SIZE_MAX)) != 0)
            return rc;
        if ((rc = check_range(err, "resp_size", p->resp_size, 1, SM_MSG_SIZE_MAX)) != 0)
            return rc;
    }
    if ((rc = check_optional(err, "sndbuf", p->sndbuf, SM_SOCKBUF_MIN, SM_SOCKBUF_MAX)) != 0)
        return rc;
    if ((rc = check_optional(err, "rcvbuf", p->rcvbuf, SM_SOCKBUF_MIN, SM_SOCKBUF_MAX)) != 0)
        return rc;
    return check_optional(err, "read_size", p->read_size, 1, SM_READ_SIZE_MAX);
}

static int check_time_limit(const sm_params *p, sm_error *err)
{
    if (p->time_limit_ms == 0)
        return 0;
    int rc = check_range(err, "time_limit_ms", p->time_limit_ms, SM_TIME_LIMIT_MS_MIN,
                         SM_TIME_LIMIT_MS_MAX);
    if (rc != 0)
        return rc;
    if (p->duration_ms != 0 && p->time_limit_ms < p->duration_ms + DURATION_MIN_SLACK_MS)
        return sm_error_set(
            err, SM_EINVAL,
            "time_limit_ms: %" PRIu32 " is below the minimum %" PRIu32 " (duration_ms + %u)",
            p->time_limit_ms, p->duration_ms + DURATION_MIN_SLACK_MS, DURATION_MIN_SLACK_MS);
    return 0;
}

/* The text must parse, and the job it makes of these params (its socket settings over theirs)
 * must be a valid job: a socket option that does not apply is refused as the field would be. */
static int check_treatment(const sm_params *p, sm_error *err)
{
    if (memchr(p->treatment, '\0', sizeof p->treatment) == NULL)
        return sm_error_set(err, SM_EINVAL, "treatment: longer than %d bytes", SM_TREATMENT_MAX);
    if (p->treatment[0] == '\0')
        return 0;
    sm_treatment t;
    int rc = sm_treatment_parse(p->treatment, &t, err);
    if (rc != 0)
        return rc;
    /* The agent changes its own host only, and a pair job's other end is another host. */
    if (p->scope != SM_SCOPE_LOCAL)
        return sm_error_set(err, SM_EINVAL, "treatment: only local tests take a treatment");
    sm_params job = *p;
    job.treatment[0] = '\0';
    sm_treatment_socket_apply(&t, &job);
    sm_error why;
    if ((rc = sm_params_validate(&job, &why)) != 0)
        return sm_error_set(err, rc, "treatment: %s", why.msg);
    return 0;
}

int sm_params_validate(sm_params *p, sm_error *err)
{
    int rc;
    if ((rc = check_enums(p, err)) != 0 || (rc = check_applies(p, err)) != 0 ||
        (rc = check_amount(p, err)) != 0 || (rc = check_sizes(p, err)) != 0)
        return rc;
    /* TCP_CORK holds partial frames back while TCP_NODELAY pushes them: together they measure
     * neither. */
    if (p->cork && p->nodelay)
        return sm_error_set(err, SM_EINVAL, "cork, nodelay: set at most one");
    /* A Unix socket cannot reach another host. */
    if (p->scope == SM_SCOPE_PAIR && p->transport != SM_TR_TCP)
        return sm_error_set(err, SM_EINVAL, "transport: scope pair runs over tcp only");
    if ((rc = check_time_limit(p, err)) != 0 || (rc = check_treatment(p, err)) != 0)
        return rc;
    /* The built-in source serves a body of some size; a url's body is what it is. */
    if (p->workload == SM_WL_HTTP && p->url[0] == '\0' && p->bytes == 0)
        p->bytes = HTTP_DEFAULT_BODY;
    if (p->time_limit_ms == 0)
        p->time_limit_ms =
            p->duration_ms ? p->duration_ms + DURATION_SLACK_MS : SM_TIME_LIMIT_MS_DEFAULT;
    return 0;
}

uint32_t sm_params_read_size(const sm_params *p)
{
    if (p->read_size != 0)
        return p->read_size;
    return p->msg_size > DEFAULT_READ_SIZE ? p->msg_size : DEFAULT_READ_SIZE;
}

/* Only a stream job promises payload, so the other workloads get 0 like a duration job. */
uint64_t sm_params_stream_total(const sm_params *p)
{
    if (p->workload != SM_WL_STREAM || p->duration_ms != 0)
        return 0;
    if (p->framing == SM_FRAMING_LINES)
        return p->count * ((uint64_t)p->msg_size + 2) + strlen(SM_LINES_START) +
               strlen(SM_LINES_END);
    return p->bytes != 0 ? p->bytes : p->count * p->msg_size;
}

static const char *name_of(unsigned v, const char *const *names, unsigned n)
{
    return v < n ? names[v] : "unknown";
}

static int lookup(const char *name, const char *const *names, unsigned n, unsigned *out)
{
    if (name == NULL)
        return SM_EINVAL;
    for (unsigned i = 0; i < n; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    return SM_EINVAL;
}

const char *sm_workload_name(sm_workload_kind w)
{
    return name_of((unsigned)w, workload_names, SM_WL__COUNT);
}

const char *sm_transport_name(sm_transport_kind t)
{
    return name_of((unsigned)t, transport_names, SM_TR__COUNT);
}

const char *sm_framing_name(sm_framing f)
{
    return name_of((unsigned)f, framing_names, N_FRAMINGS);
}

const char *sm_scope_name(sm_scope s)
{
    return name_of((unsigned)s, scope_names, N_SCOPES);
}

const char *sm_http_client_name(sm_http_client c)
{
    return name_of((unsigned)c, http_client_names, SM_HTTP__COUNT);
}

int sm_http_client_parse(const char *name, sm_http_client *out)
{
    unsigned i;
    int rc = lookup(name, http_client_names, SM_HTTP__COUNT, &i);
    if (rc == 0)
        *out = (sm_http_client)i;
    return rc;
}

int sm_workload_parse(const char *name, sm_workload_kind *out)
{
    unsigned i;
    int rc = lookup(name, workload_names, SM_WL__COUNT, &i);
    if (rc == 0)
        *out = (sm_workload_kind)i;
    return rc;
}

int sm_transport_parse(const char *name, sm_transport_kind *out)
{
    unsigned i;
    int rc = lookup(name, transport_names, SM_TR__COUNT, &i);
    if (rc == 0)
        *out = (sm_transport_kind)i;
    return rc;
}

int sm_framing_parse(const char *name, sm_framing *out)
{
    unsigned i;
    int rc = lookup(name, framing_names, N_FRAMINGS, &i);
    if (rc == 0)
        *out = (sm_framing)i;
    return rc;
}

int sm_scope_parse(const char *name, sm_scope *out)
{
    unsigned i;
    int rc = lookup(name, scope_names, N_SCOPES, &i);
    if (rc == 0)
        *out = (sm_scope)i;
    return rc;
}

/* Reads one or more decimal digits; *end is the first byte after them. No sign, no space. */
static int parse_digits(const char *s, uint64_t *out, const char **end)
{
    uint64_t v = 0;
    const char *c = s;
    for (; *c >= '0' && *c <= '9'; c++) {
        unsigned d = (unsigned)(*c - '0');
        if (v > (UINT64_MAX - d) / 10)
            return SM_EINVAL;
        v = v * 10 + d;
    }
    if (c == s)
        return SM_EINVAL;
    *out = v;
    *end = c;
    return 0;
}

int sm_parse_u64(const char *s, uint64_t *out)
{
    uint64_t v;
    const char *end;
    if (s == NULL || parse_digits(s, &v, &end) != 0 || *end != '\0')
        return SM_EINVAL;
    *out = v;
    return 0;
}

int sm_parse_size(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t mult;
    } suffixes[] = {
        {"", 1},
        {"k", 1ull << 10},
        {"kib", 1ull << 10},
        {"m", 1ull << 20},
        {"mib", 1ull << 20},
        {"g", 1ull << 30},
        {"gib", 1ull << 30},
    };
    uint64_t v;
    const char *end;
    if (s == NULL || parse_digits(s, &v, &end) != 0)
        return SM_EINVAL;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        if (strcasecmp(end, suffixes[i].suffix) != 0)
            continue;
        if (v > UINT64_MAX / suffixes[i].mult)
            return SM_EINVAL;
        *out = v * suffixes[i].mult;
        return 0;
    }
    return SM_EINVAL;
}
