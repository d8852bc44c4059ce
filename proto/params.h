/* Job parameters: what one job of a workload does on the wire, its defaults and its limits. */
#ifndef SM_PROTO_PARAMS_H
#define SM_PROTO_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/err.h"
#include "proto/treatment.h"

typedef enum sm_workload_kind {
    SM_WL_STREAM = 0, /* one-way bulk, client writes, server receives and verifies */
    SM_WL_RR,         /* request/response round trips */
    SM_WL_CONNECT,    /* connection set-up rate */
    SM_WL_HTTP,       /* HTTP GETs with libcurl, one of three client models */
    SM_WL__COUNT
} sm_workload_kind;

typedef enum sm_transport_kind {
    SM_TR_TCP = 0,
    SM_TR_UNIX, /* AF_UNIX stream socket */
    SM_TR__COUNT
} sm_transport_kind;

typedef enum sm_framing {
    SM_FRAMING_RAW = 0, /* messages of msg_size bytes back to back */
    SM_FRAMING_LINES,   /* the 2010 protocol: profile_start, lines + CRLF, profile_end */
} sm_framing;

/* How the http workload drives libcurl (DESIGN section 4). */
typedef enum sm_http_client {
    SM_HTTP_THREAD = 0, /* an easy handle performed on a new thread for each transfer */
    SM_HTTP_POOL,       /* easy handles performed on threads that live for the whole job */
    SM_HTTP_MULTI,      /* the multi interface, all transfers in one event-loop thread */
    SM_HTTP__COUNT
} sm_http_client;

typedef enum sm_scope {
    SM_SCOPE_LOCAL = 0, /* both ends on one host */
    SM_SCOPE_PAIR,      /* client and server on two hosts */
} sm_scope;

/* Limits, checked by sm_params_validate. Sizes are bytes, times milliseconds. */
#define SM_MSG_SIZE_MAX          (16u << 20) /* one write or message */
#define SM_LINE_SIZE_MAX         65536u      /* framing=lines: one line, without CRLF */
#define SM_COUNT_MAX             1000000000ull
#define SM_CONNECT_COUNT_MAX     100000ull
#define SM_BYTES_MAX             (64ull << 30)
#define SM_DURATION_MS_MAX       600000u /* 10 minutes */
#define SM_SOCKBUF_MIN           4096u
#define SM_SOCKBUF_MAX           (256u << 20)
#define SM_READ_SIZE_MAX         (16u << 20)
#define SM_TIME_LIMIT_MS_MIN     100u
#define SM_TIME_LIMIT_MS_MAX     3600000u /* 1 hour */
#define SM_TIME_LIMIT_MS_DEFAULT 60000u
/* http */
#define SM_URL_MAX              512u /* bytes of a url, without the NUL */
#define SM_HTTP_CONNECTIONS_MAX 64u
#define SM_HTTP_REPEAT_MAX      10000u
#define SM_HTTP_BUFFER_MIN      1024u       /* CURLOPT_BUFFERSIZE bounds */
#define SM_HTTP_BUFFER_MAX      (10u << 20) /* CURL_MAX_READ_SIZE */
#define SM_PIN_MAX              64u         /* "sha256//" + base64 of a SHA-256: a pinned TLS key */
#define SM_HTTP_SIZE_MAX        (16ull << 30) /* one body */

/* One job's parameters. Zero means "not set" for the optional fields (sndbuf, rcvbuf, ...);
 * exactly one of count, bytes, duration_ms is set once validated (bytes: stream only). */
typedef struct sm_params {
    sm_workload_kind workload;
    sm_transport_kind transport;
    sm_scope scope;
    sm_framing framing;     /* stream only */
    uint32_t msg_size;      /* stream: bytes per write (framing=lines: per line, without CRLF) */
    uint64_t count;         /* messages (stream), round trips (rr), connections (connect) */
    uint64_t bytes;         /* stream: total payload instead of count */
    uint32_t duration_ms;   /* run for this long instead of a count */
    uint32_t req_size;      /* rr: request bytes */
    uint32_t resp_size;     /* rr: response bytes */
    bool nodelay;           /* TCP_NODELAY on both ends */
    bool cork;              /* TCP_CORK on the sender (stream) */
    uint32_t sndbuf;        /* SO_SNDBUF, 0 = kernel default */
    uint32_t rcvbuf;        /* SO_RCVBUF, 0 = kernel default */
    uint32_t read_size;     /* receiver's read() size, 0 = default (see sm_params_read_size) */
    uint32_t time_limit_ms; /* the job fails with a timeout past this; 0 = derived default */
    /* http: `repeat` rounds of `connections` simultaneous GETs; `bytes` is the size of every
     * body (from the built-in source: what it serves; with a url: what each body must have,
     * 0 = any). The first round is reported apart from the others. */
    sm_http_client client;
    uint32_t connections;
    uint32_t repeat;
    uint32_t buffer_size; /* CURLOPT_BUFFERSIZE, 0 = libcurl's default */
    bool fresh_connect;   /* a new connection for every transfer instead of keep-alive */
    bool http2;           /* ask for HTTP/2 (ALPN over TLS); HTTP/1.1 when the server lacks it */
    bool tls;             /* https to the built-in source, its key pinned */
    bool verify; /* url: every body is the pattern (sockmatrix-agent --write-pattern) and is
                  * checked byte for byte; the built-in source's bodies always are */
    char url[SM_URL_MAX + 1]; /* "" = the built-in source; else http(s):// on the allowlist */
    /* "" = none; else settings given for this job alone (proto/treatment.h): the agent sets
     * them before the job and, for the host's, puts them back after it. Local tests only. */
    char treatment[SM_TREATMENT_MAX + 1];
    /* Set from the treatment's socket parts alone (sm_treatment_socket_apply), never from the
     * job's JSON: TCP_CONGESTION of both ends ("" the kernel's), TCP_NOTSENT_LOWAT (0 the
     * kernel's). */
    char congestion[SM_TREAT_CONGESTION_MAX + 1];
    uint32_t notsent_lowat;
} sm_params;

/* Fills *p with the defaults of a workload: stream 128 KiB x 2048 (256 MiB), rr 1-byte
 * request and response x 10000, connect x 1000, http 5 rounds of one 16 MiB GET (client
 * thread, keep-alive, verified); transport tcp, scope local, framing raw. */
void sm_params_init(sm_params *p, sm_workload_kind workload);

/* Checks every field against its bound and the combination of fields (exactly one of
 * count/bytes/duration_ms; framing=lines only for stream; duration below the time limit; a
 * treatment that parses, on a local test, whose socket settings are valid for the job).
 * Returns 0 or SM_EINVAL with err->msg naming the field and the bound, e.g.
 * "msg_size: 0 is below the minimum 1". Fills a derived time_limit_ms when it is 0. */
int sm_params_validate(sm_params *p, sm_error *err);

/* Whether an http job checks every body byte against the pattern. */
static inline bool sm_params_http_verifies(const sm_params *p)
{
    return p->url[0] == '\0' || p->verify;
}

/* The receiver's read size when read_size is 0: 128 KiB, or msg_size when larger. */
uint32_t sm_params_read_size(const sm_params *p);

/* Total payload bytes a stream job promises (count x msg_size, or bytes; for framing=lines
 * count x (msg_size + 2) plus the two markers); 0 when it runs for a duration. */
uint64_t sm_params_stream_total(const sm_params *p);

/* Names as they appear in options, JSON and tables. */
const char *sm_workload_name(sm_workload_kind w);
const char *sm_transport_name(sm_transport_kind t);
const char *sm_framing_name(sm_framing f);
const char *sm_scope_name(sm_scope s);
const char *sm_http_client_name(sm_http_client c);
/* Name -> value; return 0 or SM_EINVAL when the name is unknown. */
int sm_workload_parse(const char *name, sm_workload_kind *out);
int sm_transport_parse(const char *name, sm_transport_kind *out);
int sm_framing_parse(const char *name, sm_framing *out);
int sm_scope_parse(const char *name, sm_scope *out);
int sm_http_client_parse(const char *name, sm_http_client *out);

/* Parses a byte size with an optional binary suffix: "128", "64K", "1M", "2G" (also "KiB",
 * "MiB", "GiB", case-insensitive). Rejects empty strings, signs, junk and overflow.
 * Returns 0 or SM_EINVAL. */
int sm_parse_size(const char *s, uint64_t *out);

/* Parses a plain unsigned decimal without suffix. Returns 0 or SM_EINVAL. */
int sm_parse_u64(const char *s, uint64_t *out);

/* The markers of framing=lines, CRLF included. */
#define SM_LINES_START "profile_start\r\n"
#define SM_LINES_END   "profile_end\r\n"

#endif
