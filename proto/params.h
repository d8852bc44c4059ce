/* Job parameters: what one job of a workload does on the wire, its defaults and its limits. */
#ifndef SM_PROTO_PARAMS_H
#define SM_PROTO_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/err.h"

typedef enum sm_workload_kind {
    SM_WL_STREAM = 0, /* one-way bulk, client writes, server receives and verifies */
    SM_WL_RR,         /* request/response round trips */
    SM_WL_CONNECT,    /* connection set-up rate */
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
} sm_params;

/* Fills *p with the defaults of a workload: stream 128 KiB x 2048 (256 MiB), rr 1-byte
 * request and response x 10000, connect x 1000; transport tcp, scope local, framing raw. */
void sm_params_init(sm_params *p, sm_workload_kind workload);

/* Checks every field against its bound and the combination of fields (exactly one of
 * count/bytes/duration_ms; framing=lines only for stream; duration below the time limit).
 * Returns 0 or SM_EINVAL with err->msg naming the field and the bound, e.g.
 * "msg_size: 0 is below the minimum 1". Fills a derived time_limit_ms when it is 0. */
int sm_params_validate(sm_params *p, sm_error *err);

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
/* Name -> value; return 0 or SM_EINVAL when the name is unknown. */
int sm_workload_parse(const char *name, sm_workload_kind *out);
int sm_transport_parse(const char *name, sm_transport_kind *out);
int sm_framing_parse(const char *name, sm_framing *out);
int sm_scope_parse(const char *name, sm_scope *out);

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
