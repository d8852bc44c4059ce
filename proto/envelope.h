/* The signed envelope every control message travels in, its checks, and the keys.
 *
 * Wire form (exactly this layout; the MAC covers the body's exact bytes):
 *   {"v":2,"agent":"NAME","ts":UNIX_MS,"nonce":"32 HEX","mac":"64 HEX","body":BODY}
 * mac = HMAC-SHA256(key, "sockmatrix/2\n" DIR "\n" NAME "\n" UNIX_MS "\n" NONCE "\n" BODY)
 * where DIR is "agent->coordinator" or "coordinator->agent": a message sealed for one direction
 * never opens in the other. NAME is the sender's name: an agent's, or "coordinator" for replies.
 * key is the agent's own key (sm_key_derive of the fleet key and the agent's name) both ways:
 * the coordinator holds the fleet key and derives it from the claimed name; an agent holds only
 * its own.
 * The opener scans this fixed header by hand, bounded, verifies the MAC over it and the body,
 * and only then lets anything parse the body: a message without the key costs one HMAC, never a
 * JSON parse. The text must be the header, the body, then "}", so no byte escapes the MAC.
 *
 * This header is the public face of four files: envelope.c (names, seal, scan, verify, open),
 * keyfile.c (key files and derived keys), replay.c (the replay window) and rejects.c (rejection
 * accounting). */
#ifndef SM_PROTO_ENVELOPE_H
#define SM_PROTO_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"

#define SM_ENV_VERSION    2
#define SM_MSG_MAX        (256u * 1024u) /* whole envelope, bytes */
#define SM_JSON_DEPTH_MAX 16             /* nesting of objects and arrays */
#define SM_SKEW_MS        60000u         /* |ts - now| above this is rejected */
#define SM_KEY_LEN        32
#define SM_NONCE_HEX      32 /* 16 random bytes */
#define SM_NAME_MAX       64 /* agent names: [A-Za-z0-9._-], 1..64 */
#define SM_MAC_HEX        64
#define SM_COORDINATOR    "coordinator" /* the sender name of replies; no agent may take it */

/* Which way a message travels; part of what the MAC covers. */
typedef enum sm_dir { SM_DIR_TO_COORDINATOR = 0, SM_DIR_TO_AGENT } sm_dir;

/* Why a message was rejected; every rejection is counted under one of these. */
typedef enum sm_reject {
    SM_REJ_NONE = 0,
    SM_REJ_SIZE,        /* over SM_MSG_MAX */
    SM_REJ_DEPTH,       /* JSON nested deeper than SM_JSON_DEPTH_MAX (checked before parsing) */
    SM_REJ_JSON,        /* not JSON, or not the envelope layout */
    SM_REJ_VERSION,     /* v is not SM_ENV_VERSION */
    SM_REJ_FIELD,       /* a header field missing or malformed (name, ts, nonce, mac) */
    SM_REJ_MAC,         /* wrong MAC: wrong key or altered bytes */
    SM_REJ_SKEW,        /* ts too far from now */
    SM_REJ_REPLAY,      /* nonce already seen in the window */
    SM_REJ_BODY,        /* signed and fresh, but the body is not a valid message */
    SM_REJ_MISDIRECTED, /* a reply for another agent, or not for the last poll */
    SM_REJ_THROTTLED,   /* dropped unread: its connection sent too many rejected messages */
    SM_REJ__COUNT
} sm_reject;

/* "size", "depth", "json", "version", "field", "mac", "skew", "replay", "body", "misdirected",
 * "throttled" ("none"). */
const char *sm_reject_name(sm_reject r);

/* Whether name is a valid sender name. */
int sm_name_valid(const char *name);
/* Whether name is reserved (SM_COORDINATOR): valid as a sender of replies, never an agent's. */
int sm_name_reserved(const char *name);

/* ---- keyfile.c ---- */

/* Reads a key file: 64 hex digits and an optional newline. Refuses a file that group or others
 * may read or write (mode & 077) with a message saying how to fix it. */
int sm_key_load(const char *path, uint8_t key[SM_KEY_LEN], sm_error *err);
/* Writes a new random key (RAND_bytes) as 64 hex digits + "\n", mode 0600; refuses to
 * overwrite an existing file (O_EXCL). */
int sm_key_generate(const char *path, sm_error *err);
/* Writes key as 64 hex digits + "\n", mode 0600, refusing to overwrite (O_EXCL). */
int sm_key_write(const char *path, const uint8_t key[SM_KEY_LEN], sm_error *err);
/* The agent's own key: HKDF-SHA256 (RFC 5869) with the fleet key as input key material, salt
 * SM_KEY_SALT and the agent's name as info. SM_EINVAL when name is not a valid, unreserved
 * agent name. */
#define SM_KEY_SALT "sockmatrix/2 agent key"
int sm_key_derive(const uint8_t fleet[SM_KEY_LEN], const char *name, uint8_t out[SM_KEY_LEN],
                  sm_error *err);

/* ---- envelope.c ---- */

/* Seals body[0..body_len) (a JSON value) from `name` at ts_ms, travelling dir, with a fresh
 * random nonce (copied to nonce_out when not NULL). Returns a malloc'd NUL-terminated envelope
 * (*out_len its length, NUL excluded), or NULL with err set (SM_EINVAL when name is invalid or
 * the result would exceed SM_MSG_MAX). */
char *sm_env_seal(const uint8_t key[SM_KEY_LEN], sm_dir dir, const char *name, uint64_t ts_ms,
                  const char *body, size_t body_len, size_t *out_len,
                  char nonce_out[SM_NONCE_HEX + 1], sm_error *err);

/* An envelope's header; body points into the text given to sm_env_scan / sm_env_open. */
typedef struct sm_env {
    char name[SM_NAME_MAX + 1];
    uint64_t ts_ms;
    char nonce[SM_NONCE_HEX + 1];
    char mac[SM_MAC_HEX + 1];
    const char *body;
    size_t body_len;
} sm_env;

/* Reads the fixed header by hand, without parsing any JSON: size, layout, version, header
 * fields. Nothing in it is verified yet: the name only says which key to try. Returns
 * SM_REJ_NONE with *out filled, or the reason with err->msg saying what was wrong (out->name
 * is set as soon as it was read, for the log). text need not be NUL-terminated. */
sm_reject sm_env_scan(const char *text, size_t len, sm_env *out, sm_error *err);

/* Checks a scanned envelope, in this order: MAC under key for dir (constant-time), skew against
 * now_ms, then the body's nesting depth (a scan that skips strings). SM_REJ_NONE means the body
 * may be handed to a decoder. */
sm_reject sm_env_verify(const uint8_t key[SM_KEY_LEN], sm_dir dir, const sm_env *env,
                        uint64_t now_ms, sm_error *err);

/* sm_env_scan then sm_env_verify with one key; *out is written only on SM_REJ_NONE. Replay is
 * not checked here (see sm_replay). */
sm_reject sm_env_open(const uint8_t key[SM_KEY_LEN], sm_dir dir, const char *text, size_t len,
                      uint64_t now_ms, sm_env *out, sm_error *err);

/* ---- replay.c ---- */

/* The replay window: (name, nonce) pairs remembered for window_ms (use 2 x SM_SKEW_MS, so a
 * message cannot be replayed after its nonce is forgotten: by then its ts is too old). */
typedef struct sm_replay sm_replay;
sm_replay *sm_replay_new(uint64_t window_ms);
void sm_replay_free(sm_replay *r);
/* SM_REJ_REPLAY if (name, nonce) was seen within the window, else remembers it and returns
 * SM_REJ_NONE. Forgets entries older than the window as it goes (bounded memory: at most one
 * entry per accepted message in the window). */
sm_reject sm_replay_check(sm_replay *r, const char *name, const char *nonce, uint64_t now_ms);
/* The pairs remembered now, and the bytes the window holds for them (its tables: 32 to 64
 * bytes a pair once it has grown past its first 64). */
size_t sm_replay_size(const sm_replay *r);
size_t sm_replay_bytes(const sm_replay *r);

/* ---- rejects.c ---- */

/* Rejection accounting: a counter per reason, and a log line (LOG_WARNING, id SM-REJECT) at
 * most once per peer per minute, saying how many were suppressed since. */
typedef struct sm_rejects sm_rejects;
sm_rejects *sm_rejects_new(void);
void sm_rejects_free(sm_rejects *r);
/* Counts one rejection; logs it unless this peer was logged less than 60 s ago. Returns 1 when
 * it logged, 0 when it only counted. peer may be NULL ("unknown"). */
int sm_rejects_note(sm_rejects *r, sm_reject why, const char *peer, uint64_t now_ms,
                    const char *detail);
/* Counts n rejections without logging (a caller that logs them its own way). */
void sm_rejects_add(sm_rejects *r, sm_reject why, uint64_t n);
uint64_t sm_rejects_count(const sm_rejects *r, sm_reject why);
uint64_t sm_rejects_total(const sm_rejects *r);

#endif
