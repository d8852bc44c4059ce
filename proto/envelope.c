/* The signed envelope: sealing, the ordered checks of an incoming message, replay window,
 * rejection accounting, key files and the agents' derived keys. */
#include "proto/envelope.h"
#include "proto/log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#define MAC_LEN     32
#define MAC_HEX     SM_MAC_HEX
#define NONCE_BYTES (SM_NONCE_HEX / 2)
#define KEY_HEX     (2 * SM_KEY_LEN)
#define MAC_CONTEXT "sockmatrix/2\n"

/* The opener rebuilds ts in decimal and requires the text to match, so a number that a double
 * rounded (2^53 + 1 reads as 2^53) fails the layout check; 2^53 itself is therefore safe. */
#define TS_MAX (1ull << 53)

_Static_assert(MAC_HEX == 2 * MAC_LEN, "SM_MAC_HEX is the hex of an HMAC-SHA256");

/* {"v":2,"agent":"<64>","ts":<16>,"nonce":"<32>","mac":"<64>","body": is under 220 bytes. */
#define PREFIX_MAX 256

/* Attacker-chosen text quoted in a reason is cut to this and limited to printable ASCII. */
#define EXCERPT_MAX 24

#define REJECT_LOG_INTERVAL_MS 60000u
#define PEERS_MAX              4096
#define PEER_BUCKETS           8192 /* a power of two, twice PEERS_MAX: chains stay short */
#define PEER_NAME_MAX          63

static const char *const reject_names[SM_REJ__COUNT] = {
    "none", "size", "depth",  "json", "version",     "field",
    "mac",  "skew", "replay", "body", "misdirected", "throttled",
};

const char *sm_reject_name(sm_reject r)
{
    if ((int)r < 0 || r >= SM_REJ__COUNT)
        return "unknown";
    return reject_names[r];
}

static bool name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

int sm_name_valid(const char *name)
{
    if (name == NULL)
        return 0;
    size_t i = 0;
    for (; name[i] != '\0'; i++)
        if (i >= SM_NAME_MAX || !name_char((unsigned char)name[i]))
            return 0;
    return i > 0;
}

int sm_name_reserved(const char *name)
{
    return name != NULL && strcmp(name, SM_COORDINATOR) == 0;
}

static const char *dir_tag(sm_dir dir)
{
    return dir == SM_DIR_TO_AGENT ? "coordinator->agent" : "agent->coordinator";
}

static bool json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

/* Any case on input (a key file may have been written by hand); -1 when not a hex digit. */
static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A short, printable copy of untrusted text for a reason or a log line. */
static void excerpt(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src[i] != '\0' && i + 1 < cap; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ? (char)c : '?';
    }
    dst[i] = '\0';
    if (src[i] != '\0' && cap >= 4)
        memcpy(dst + cap - 4, "...", 4);
}

/* HMAC-SHA256 over MAC_CONTEXT DIR "\n" NAME "\n" TS "\n" NONCE "\n" BODY, as lowercase hex.
 * Streamed through EVP_MAC so the body is never copied. */
static bool compute_mac(const uint8_t key[SM_KEY_LEN], sm_dir dir, const char *name,
                        const char *ts_dec, const char *nonce, const char *body, size_t body_len,
                        char out_hex[MAC_HEX + 1])
{
    bool ok = false;
    uint8_t raw[MAC_LEN];
    size_t raw_len = 0;
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end(),
    };
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
    if (ctx == NULL || !EVP_MAC_init(ctx, key, SM_KEY_LEN, params))
        goto out;
    const struct {
        const void *p;
        size_t n;
    } parts[] = {
        {MAC_CONTEXT, strlen(MAC_CONTEXT)},
        {dir_tag(dir), strlen(dir_tag(dir))},
        {"\n", 1},
        {name, strlen(name)},
        {"\n", 1},
        {ts_dec, strlen(ts_dec)},
        {"\n", 1},
        {nonce, strlen(nonce)},
        {"\n", 1},
        {body, body_len},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (!EVP_MAC_update(ctx, parts[i].p, parts[i].n))
            goto out;
    if (!EVP_MAC_final(ctx, raw, &raw_len, sizeof raw) || raw_len != MAC_LEN)
        goto out;
    hex_encode(raw, MAC_LEN, out_hex);
    ok = true;
out:
    OPENSSL_cleanse(raw, sizeof raw);
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
    return ok;
}

static int build_prefix(char out[PREFIX_MAX], const char *name, const char *ts_dec,
                        const char *nonce, const char *mac_hex)
{
    return snprintf(
        out, PREFIX_MAX,
        "{\"v\":%d,\"agent\":\"%s\",\"ts\":%s,\"nonce\":\"%s\",\"mac\":\"%s\",\"body\":",
        SM_ENV_VERSION, name, ts_dec, nonce, mac_hex);
}

char *sm_env_seal(const uint8_t key[SM_KEY_LEN], sm_dir dir, const char *name, uint64_t ts_ms,
                  const char *body, size_t body_len, size_t *out_len,
                  char nonce_out[SM_NONCE_HEX + 1], sm_error *err)
{
    if (!sm_name_valid(name)) {
        sm_error_set(err, SM_EINVAL, "sender name must be 1..%d characters of [A-Za-z0-9._-]",
                     SM_NAME_MAX);
        return NULL;
    }
    if (ts_ms > TS_MAX) {
        sm_error_set(err, SM_EINVAL, "timestamp %" PRIu64 " is above 2^53", ts_ms);
        return NULL;
    }
    /* The opener takes the body as everything between the header and the final brace and
     * refuses surrounding whitespace, so a body with any would seal into a rejected message. */
    if (body == NULL || body_len == 0 || json_space(body[0]) || json_space(body[body_len - 1])) {
        sm_error_set(err, SM_EINVAL, "body must be a JSON value without surrounding whitespace");
        return NULL;
    }
    if (body_len > SM_MSG_MAX) {
        sm_error_set(err, SM_EINVAL, "body of %zu bytes exceeds the %u-byte message limit",
                     body_len, SM_MSG_MAX);
        return NULL;
    }
    uint8_t raw[NONCE_BYTES];
    char nonce[SM_NONCE_HEX + 1], ts_dec[24], mac_hex[MAC_HEX + 1], prefix[PREFIX_MAX];
    if (RAND_bytes(raw, sizeof raw) != 1) {
        sm_error_set(err, SM_ESYS, "RAND_bytes failed to make a nonce");
        return NULL;
    }
    hex_encode(raw, sizeof raw, nonce);
    snprintf(ts_dec, sizeof ts_dec, "%" PRIu64, ts_ms);
    if (!compute_mac(key, dir, name, ts_dec, nonce, body, body_len, mac_hex)) {
        sm_error_set(err, SM_ENOMEM, "HMAC-SHA256 failed");
        return NULL;
    }
    size_t plen = (size_t)build_prefix(prefix, name, ts_dec, nonce, mac_hex);
    size_t total = plen + body_len + 1;
    if (total > SM_MSG_MAX) {
        sm_error_set(err, SM_EINVAL, "envelope of %zu bytes would exceed the %u-byte limit", total,
                     SM_MSG_MAX);
        return NULL;
    }
    char *out = malloc(total + 1);
    if (out == NULL) {
        sm_error_set(err, SM_ENOMEM, "no memory for a %zu-byte envelope", total);
        return NULL;
    }
    memcpy(out, prefix, plen);
    memcpy(out + plen, body, body_len);
    out[total - 1] = '}';
    out[total] = '\0';
    if (out_len)
        *out_len = total;
    if (nonce_out)
        memcpy(nonce_out, nonce, SM_NONCE_HEX + 1);
    sm_error_clear(err);
    return out;
}

/* Deepest nesting of objects and arrays, counting brackets outside strings only. Stops once
 * past `limit`, so hostile input costs one pass and no recursion. */
static size_t json_depth(const char *text, size_t len, size_t limit)
{
    size_t depth = 0, max = 0;
    bool in_string = false, escaped = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > max) {
                max = depth;
                if (max > limit)
                    return max;
            }
        } else if ((c == '}' || c == ']') && depth > 0) {
            depth--;
        }
    }
    return max;
}

static int reject_code(sm_reject why)
{
    switch (why) {
    case SM_REJ_SIZE:
        return SM_EINVAL;
    case SM_REJ_MAC:
    case SM_REJ_SKEW:
    case SM_REJ_REPLAY:
    case SM_REJ_MISDIRECTED:
        return SM_EVERIFY;
    default:
        return SM_EPARSE;
    }
}

__attribute__((format(printf, 3, 4))) static sm_reject reject(sm_error *err, sm_reject why,
                                                              const char *fmt, ...)
{
    if (err) {
        char reason[SM_ERR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, sizeof reason, fmt, ap);
        va_end(ap);
        sm_error_set(err, reject_code(why), "%s", reason);
    }
    return why;
}

/* The literal text at *p, or false leaving *p alone. */
static bool take(const char **p, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
        return false;
    *p += n;
    return true;
}

/* Reads up to max+1 characters that pass ok() (so that a count above max tells "too long"),
 * copying the first max of them to dst, which has room for max and the NUL. */
static size_t take_run(const char **p, const char *end, size_t max, bool (*ok)(unsigned char),
                       char *dst)
{
    size_t n = 0;
    while (*p < end && n <= max && ok((unsigned char)**p)) {
        if (n < max)
            dst[n] = **p;
        n++;
        (*p)++;
    }
    dst[n < max ? n : max] = '\0';
    return n;
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_lower_hex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f');
}

static bool is_name_char(unsigned char c)
{
    return name_char(c);
}

/* Anything up to the closing quote, for quoting a bad name in the reason. */
static bool not_quote(unsigned char c)
{
    return c != '"';
}

sm_reject sm_env_scan(const char *text, size_t len, sm_env *out, sm_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > SM_MSG_MAX)
        return reject(err, SM_REJ_SIZE, "message of %zu bytes exceeds the %u-byte limit", len,
                      SM_MSG_MAX);
    /* Every field has a fixed place and spelling, so reading them is a bounded walk: one pass
     * over at most PREFIX_MAX bytes, no allocation, no JSON parser. */
    const char *p = text, *end = text + len;
    char buf[24];
    if (!take(&p, end, "{\"v\":"))
        return reject(err, SM_REJ_JSON, "not a sockmatrix envelope (it must begin {\"v\":)");
    size_t n = take_run(&p, end, 3, is_digit, buf);
    if (n == 0)
        return reject(err, SM_REJ_VERSION, "v is missing or not a number");
    if (n > 3 || atoi(buf) != SM_ENV_VERSION || buf[0] == '0')
        return reject(err, SM_REJ_VERSION, "version %.4s is not %d", buf, SM_ENV_VERSION);
    if (!take(&p, end, ",\"agent\":\""))
        return reject(err, SM_REJ_JSON, "envelope is not in the canonical layout (agent)");
    const char *name_at = p;
    n = take_run(&p, end, SM_NAME_MAX, is_name_char, out->name);
    if (n == 0 || n > SM_NAME_MAX || p == end || *p != '"') {
        char raw[EXCERPT_MAX + 1], ex[EXCERPT_MAX];
        p = name_at;
        take_run(&p, end, EXCERPT_MAX, not_quote, raw);
        excerpt(ex, sizeof ex, raw);
        out->name[0] = '\0';
        return reject(err, SM_REJ_FIELD, "agent \"%s\" is not 1..%d characters of [A-Za-z0-9._-]",
                      ex, SM_NAME_MAX);
    }
    if (!take(&p, end, "\",\"ts\":"))
        return reject(err, SM_REJ_JSON, "envelope is not in the canonical layout (ts)");
    /* One spelling per value: no leading zeros, no sign, no fraction, at most 2^53. */
    n = take_run(&p, end, 16, is_digit, buf);
    uint64_t ts = strtoull(buf, NULL, 10);
    if (n == 0 || n > 16 || (n > 1 && buf[0] == '0') || ts > TS_MAX || p == end || *p != ',')
        return reject(err, SM_REJ_FIELD, "ts is not an integer in 0..2^53");
    if (!take(&p, end, ",\"nonce\":\""))
        return reject(err, SM_REJ_JSON, "envelope is not in the canonical layout (nonce)");
    if (take_run(&p, end, SM_NONCE_HEX, is_lower_hex, out->nonce) != SM_NONCE_HEX || p == end ||
        *p != '"') {
        out->nonce[0] = '\0';
        return reject(err, SM_REJ_FIELD, "nonce is not %d lowercase hex digits", SM_NONCE_HEX);
    }
    if (!take(&p, end, "\",\"mac\":\""))
        return reject(err, SM_REJ_JSON, "envelope is not in the canonical layout (mac)");
    if (take_run(&p, end, MAC_HEX, is_lower_hex, out->mac) != MAC_HEX || p == end || *p != '"') {
        out->mac[0] = '\0';
        return reject(err, SM_REJ_FIELD, "mac is not %d lowercase hex digits", MAC_HEX);
    }
    if (!take(&p, end, "\",\"body\":"))
        return reject(err, SM_REJ_JSON, "envelope is not in the canonical layout (body)");
    /* The body is everything between the header and the final brace; the MAC covers exactly
     * those bytes, and the decoder that parses them after the MAC rejects what is not JSON. */
    if (end - p < 2 || end[-1] != '}')
        return reject(err, SM_REJ_JSON, "envelope is not in the canonical layout (no body)");
    out->ts_ms = ts;
    out->body = p;
    out->body_len = (size_t)(end - p) - 1;
    if (json_space(out->body[0]) || json_space(out->body[out->body_len - 1]))
        return reject(err, SM_REJ_JSON, "whitespace around the body breaks the canonical layout");
    sm_error_clear(err);
    return SM_REJ_NONE;
}

sm_reject sm_env_verify(const uint8_t key[SM_KEY_LEN], sm_dir dir, const sm_env *env,
                        uint64_t now_ms, sm_error *err)
{
    char ts_dec[24], want[MAC_HEX + 1];
    snprintf(ts_dec, sizeof ts_dec, "%" PRIu64, env->ts_ms);
    if (!compute_mac(key, dir, env->name, ts_dec, env->nonce, env->body, env->body_len, want))
        return reject(err, SM_REJ_MAC, "HMAC-SHA256 failed");
    if (CRYPTO_memcmp(want, env->mac, MAC_HEX) != 0)
        return reject(err, SM_REJ_MAC, "MAC does not match (wrong key or altered message)");
    const uint64_t ts = env->ts_ms;
    if (ts > now_ms + SM_SKEW_MS || now_ms > ts + SM_SKEW_MS) {
        bool ahead = ts > now_ms;
        return reject(err, SM_REJ_SKEW, "timestamp is %" PRIu64 " ms %s the local clock",
                      ahead ? ts - now_ms : now_ms - ts, ahead ? "ahead of" : "behind");
    }
    /* Checked before any decoder sees the body: cJSON recurses once per level. */
    if (json_depth(env->body, env->body_len, SM_JSON_DEPTH_MAX) > SM_JSON_DEPTH_MAX)
        return reject(err, SM_REJ_DEPTH, "body nests deeper than %d levels", SM_JSON_DEPTH_MAX);
    sm_error_clear(err);
    return SM_REJ_NONE;
}

sm_reject sm_env_open(const uint8_t key[SM_KEY_LEN], sm_dir dir, const char *text, size_t len,
                      uint64_t now_ms, sm_env *out, sm_error *err)
{
    sm_env env;
    sm_reject why = sm_env_scan(text, len, &env, err);
    if (why == SM_REJ_NONE)
        why = sm_env_verify(key, dir, &env, now_ms, err);
    if (out && why == SM_REJ_NONE)
        *out = env;
    return why;
}

/* ---- replay window ---- */

static uint64_t random_seed(void)
{
    uint64_t seed = 0;
    /* Only spreads entries over buckets: a failed RAND_bytes costs speed, not safety. */
    if (RAND_bytes((unsigned char *)&seed, sizeof seed) != 1)
        seed = 0x9e3779b97f4a7c15ull;
    return seed;
}

/* FNV-1a, seeded per table so bucket placement is not predictable from outside. */
static uint64_t hash_bytes(uint64_t h, const char *s, size_t n)
{
    h ^= 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

typedef struct rp_entry {
    struct rp_entry *chain; /* next in the same bucket */
    struct rp_entry *newer; /* next in insertion order */
    uint64_t t_ms;
    uint64_t hash;
    size_t name_len, nonce_len;
    char key[]; /* name '\0' nonce '\0' */
} rp_entry;

struct sm_replay {
    uint64_t window_ms;
    uint64_t seed;
    rp_entry **buckets;
    size_t n_buckets; /* a power of two */
    size_t count;
    rp_entry *oldest, *newest;
};

#define REPLAY_BUCKETS_MIN 64

sm_replay *sm_replay_new(uint64_t window_ms)
{
    sm_replay *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->buckets = calloc(REPLAY_BUCKETS_MIN, sizeof *r->buckets);
    if (r->buckets == NULL) {
        free(r);
        return NULL;
    }
    r->n_buckets = REPLAY_BUCKETS_MIN;
    r->window_ms = window_ms;
    r->seed = random_seed();
    return r;
}

void sm_replay_free(sm_replay *r)
{
    if (r == NULL)
        return;
    for (rp_entry *e = r->oldest, *next; e != NULL; e = next) {
        next = e->newer;
        free(e);
    }
    free(r->buckets);
    free(r);
}

size_t sm_replay_size(const sm_replay *r)
{
    return r ? r->count : 0;
}

static void unlink_bucket(sm_replay *r, rp_entry *e)
{
    rp_entry **pp = &r->buckets[e->hash & (r->n_buckets - 1)];
    while (*pp != e)
        pp = &(*pp)->chain;
    *pp = e->chain;
}

/* Drops entries strictly older than the window. Strictly: a nonce first seen at N with ts
 * T >= N - skew is kept through N + 2 x skew >= T + skew, the last instant T still passes the
 * skew check, so with window 2 x SM_SKEW_MS nothing is forgotten while it could be replayed. */
static void expire(sm_replay *r, uint64_t now_ms)
{
    while (r->oldest != NULL && now_ms > r->oldest->t_ms &&
           now_ms - r->oldest->t_ms > r->window_ms) {
        rp_entry *e = r->oldest;
        r->oldest = e->newer;
        if (r->oldest == NULL)
            r->newest = NULL;
        unlink_bucket(r, e);
        free(e);
        r->count--;
    }
}

/* A failed grow leaves the table as it was: longer chains, still correct. */
static void grow(sm_replay *r)
{
    size_t n = r->n_buckets * 2;
    rp_entry **b = calloc(n, sizeof *b);
    if (b == NULL)
        return;
    for (rp_entry *e = r->oldest; e != NULL; e = e->newer) {
        rp_entry **slot = &b[e->hash & (n - 1)];
        e->chain = *slot;
        *slot = e;
    }
    free(r->buckets);
    r->buckets = b;
    r->n_buckets = n;
}

sm_reject sm_replay_check(sm_replay *r, const char *name, const char *nonce, uint64_t now_ms)
{
    expire(r, now_ms);
    size_t name_len = strlen(name), nonce_len = strlen(nonce);
    uint64_t h = hash_bytes(r->seed, name, name_len + 1);
    h = hash_bytes(h, nonce, nonce_len);
    for (rp_entry *e = r->buckets[h & (r->n_buckets - 1)]; e != NULL; e = e->chain)
        if (e->hash == h && e->name_len == name_len && e->nonce_len == nonce_len &&
            memcmp(e->key, name, name_len) == 0 &&
            memcmp(e->key + name_len + 1, nonce, nonce_len) == 0)
            return SM_REJ_REPLAY;

    rp_entry *e = malloc(sizeof *e + name_len + nonce_len + 2);
    /* Fail closed: a message we cannot remember could be replayed later. */
    if (e == NULL)
        return SM_REJ_REPLAY;
    memcpy(e->key, name, name_len + 1);
    memcpy(e->key + name_len + 1, nonce, nonce_len + 1);
    e->name_len = name_len;
    e->nonce_len = nonce_len;
    e->hash = h;
    /* If the clock stepped back, this stamp is older than the ones ahead of it in the FIFO;
     * expiry stops at the first live entry, so it is kept longer, never forgotten early. */
    e->t_ms = now_ms;
    e->newer = NULL;
    if (r->newest)
        r->newest->newer = e;
    else
        r->oldest = e;
    r->newest = e;
    rp_entry **slot = &r->buckets[h & (r->n_buckets - 1)];
    e->chain = *slot;
    *slot = e;
    if (++r->count > r->n_buckets)
        grow(r);
    return SM_REJ_NONE;
}

/* ---- rejection accounting ---- */

typedef struct peer {
    struct peer *chain;       /* next in the same bucket */
    struct peer *prev, *next; /* by time of last log line, oldest first */
    uint64_t hash;
    uint64_t last_log_ms;
    uint64_t suppressed;
    char name[PEER_NAME_MAX + 1];
} peer;

struct sm_rejects {
    uint64_t counts[SM_REJ__COUNT];
    uint64_t total;
    uint64_t seed;
    size_t n_peers;
    peer *oldest, *newest;
    peer *buckets[PEER_BUCKETS];
};

sm_rejects *sm_rejects_new(void)
{
    sm_rejects *r = calloc(1, sizeof *r);
    if (r)
        r->seed = random_seed();
    return r;
}

void sm_rejects_free(sm_rejects *r)
{
    if (r == NULL)
        return;
    for (peer *p = r->oldest, *next; p != NULL; p = next) {
        next = p->next;
        free(p);
    }
    free(r);
}

uint64_t sm_rejects_count(const sm_rejects *r, sm_reject why)
{
    if (r == NULL || (int)why < 0 || why >= SM_REJ__COUNT)
        return 0;
    return r->counts[why];
}

void sm_rejects_add(sm_rejects *r, sm_reject why, uint64_t n)
{
    if (r == NULL || (int)why < 0 || why >= SM_REJ__COUNT)
        return;
    r->counts[why] += n;
    r->total += n;
}

uint64_t sm_rejects_total(const sm_rejects *r)
{
    return r ? r->total : 0;
}

static void order_remove(sm_rejects *r, peer *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        r->oldest = p->next;
    if (p->next)
        p->next->prev = p->prev;
    else
        r->newest = p->prev;
    p->prev = p->next = NULL;
}

static void order_append(sm_rejects *r, peer *p)
{
    p->prev = r->newest;
    p->next = NULL;
    if (r->newest)
        r->newest->next = p;
    else
        r->oldest = p;
    r->newest = p;
}

static void bucket_remove(sm_rejects *r, peer *p)
{
    peer **pp = &r->buckets[p->hash & (PEER_BUCKETS - 1)];
    while (*pp != p)
        pp = &(*pp)->chain;
    *pp = p->chain;
}

/* Finds or adds the peer; NULL only when out of memory with nothing to evict. The map is
 * bounded because peer names can come from the network: the peer logged longest ago goes
 * first, losing only its suppressed count (the per-reason counters keep every rejection). */
static peer *peer_get(sm_rejects *r, const char *name, bool *fresh)
{
    uint64_t h = hash_bytes(r->seed, name, strlen(name));
    for (peer *p = r->buckets[h & (PEER_BUCKETS - 1)]; p != NULL; p = p->chain)
        if (p->hash == h && strcmp(p->name, name) == 0) {
            *fresh = false;
            return p;
        }
    peer *p = NULL;
    if (r->n_peers < PEERS_MAX)
        p = malloc(sizeof *p);
    if (p == NULL) {
        p = r->oldest;
        if (p == NULL)
            return NULL;
        order_remove(r, p);
        bucket_remove(r, p);
        r->n_peers--;
    }
    memset(p, 0, sizeof *p);
    memcpy(p->name, name, strlen(name) + 1);
    p->hash = h;
    peer **slot = &r->buckets[h & (PEER_BUCKETS - 1)];
    p->chain = *slot;
    *slot = p;
    order_append(r, p);
    r->n_peers++;
    *fresh = true;
    return p;
}

int sm_rejects_note(sm_rejects *r, sm_reject why, const char *peer_name, uint64_t now_ms,
                    const char *detail)
{
    if ((int)why >= 0 && why < SM_REJ__COUNT)
        r->counts[why]++;
    r->total++;

    char name[PEER_NAME_MAX + 1];
    excerpt(name, sizeof name, peer_name ? peer_name : "unknown");
    bool fresh = false;
    peer *p = peer_get(r, name, &fresh);
    uint64_t suppressed = 0;
    if (p != NULL) {
        /* After the clock steps back, restart the interval instead of logging every message. */
        if (p->last_log_ms > now_ms)
            p->last_log_ms = now_ms;
        if (!fresh && now_ms - p->last_log_ms < REJECT_LOG_INTERVAL_MS) {
            p->suppressed++;
            return 0;
        }
        suppressed = p->suppressed;
        p->suppressed = 0;
        p->last_log_ms = now_ms;
        order_remove(r, p);
        order_append(r, p);
    }
    char more[64] = "";
    if (suppressed > 0)
        snprintf(more, sizeof more, " (%" PRIu64 " more from this peer since the last line)",
                 suppressed);
    sm_log(LOG_WARNING, "SM-REJECT", "rejected a message from %s: %s%s%s%s", name,
           sm_reject_name(why), detail ? ": " : "", detail ? detail : "", more);
    return 1;
}

/* ---- fleet key ---- */

static const char *exposure(mode_t mode)
{
    if (mode & 044)
        return "readable";
    if (mode & 022)
        return "writable";
    return "accessible";
}

int sm_key_load(const char *path, uint8_t key[SM_KEY_LEN], sm_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sm_error_sys(err, errno, "cannot open key file %s", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return sm_error_sys(err, e, "cannot stat key file %s", path);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return sm_error_set(err, SM_EINVAL, "key file %s is not a regular file", path);
    }
    if (st.st_mode & 077) {
        close(fd);
        return sm_error_set(err, SM_EINVAL,
                            "key file %s is %s by group or others (mode %04o): chmod 600 %s", path,
                            exposure(st.st_mode), (unsigned)(st.st_mode & 07777), path);
    }
    /* One byte more than a valid file can hold, to tell "too long" from "just right". */
    char buf[KEY_HEX + 2];
    size_t n = 0;
    while (n < sizeof buf) {
        ssize_t got = read(fd, buf + n, sizeof buf - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            OPENSSL_cleanse(buf, sizeof buf);
            return sm_error_sys(err, e, "cannot read key file %s", path);
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    int rc = SM_OK;
    uint8_t tmp[SM_KEY_LEN];
    if (!(n == KEY_HEX || (n == KEY_HEX + 1 && buf[KEY_HEX] == '\n')))
        rc = SM_EPARSE;
    for (size_t i = 0; rc == SM_OK && i < SM_KEY_LEN; i++) {
        int hi = hex_value(buf[2 * i]), lo = hex_value(buf[2 * i + 1]);
        if (hi < 0 || lo < 0)
            rc = SM_EPARSE;
        else
            tmp[i] = (uint8_t)(hi << 4 | lo);
    }
    if (rc == SM_OK) {
        memcpy(key, tmp, SM_KEY_LEN);
        sm_error_clear(err);
    } else {
        sm_error_set(err, rc, "key file %s must hold %d hex digits and an optional newline", path,
                     KEY_HEX);
    }
    OPENSSL_cleanse(buf, sizeof buf);
    OPENSSL_cleanse(tmp, sizeof tmp);
    return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t put = write(fd, p, n);
        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0)
            return -1;
        p += put;
        n -= (size_t)put;
    }
    return 0;
}

int sm_key_generate(const char *path, sm_error *err)
{
    uint8_t raw[SM_KEY_LEN];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return sm_error_set(err, SM_ESYS, "RAND_bytes failed to make a key");
    int rc = sm_key_write(path, raw, err);
    OPENSSL_cleanse(raw, sizeof raw);
    return rc;
}

int sm_key_derive(const uint8_t fleet[SM_KEY_LEN], const char *name, uint8_t out[SM_KEY_LEN],
                  sm_error *err)
{
    if (!sm_name_valid(name) || sm_name_reserved(name))
        return sm_error_set(err, SM_EINVAL,
                            "'%.80s' is not an agent name (1..%d characters of [A-Za-z0-9._-], "
                            "not \"%s\")",
                            name ? name : "", SM_NAME_MAX, SM_COORDINATOR);
    char digest[] = "SHA256", salt[] = SM_KEY_SALT;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)fleet, SM_KEY_LEN),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt, strlen(salt)),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)name, strlen(name)),
        OSSL_PARAM_construct_end(),
    };
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    int ok = ctx != NULL && EVP_KDF_derive(ctx, out, SM_KEY_LEN, params) == 1;
    EVP_KDF_CTX_free(ctx);
    EVP_KDF_free(kdf);
    if (!ok)
        return sm_error_set(err, SM_ESYS, "HKDF-SHA256 failed to derive the key of %s", name);
    sm_error_clear(err);
    return SM_OK;
}

int sm_key_write(const char *path, const uint8_t key[SM_KEY_LEN], sm_error *err)
{
    char text[KEY_HEX + 2];
    hex_encode(key, SM_KEY_LEN, text);
    text[KEY_HEX] = '\n';

    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        OPENSSL_cleanse(text, sizeof text);
        if (e == EEXIST)
            return sm_error_set(err, SM_EINVAL, "%s exists; refusing to overwrite a key", path);
        return sm_error_sys(err, e, "cannot create key file %s", path);
    }
    int rc = SM_OK;
    if (write_all(fd, text, KEY_HEX + 1) != 0)
        rc = sm_error_sys(err, errno, "cannot write key file %s", path);
    else if (fsync(fd) != 0)
        rc = sm_error_sys(err, errno, "cannot fsync key file %s", path);
    if (close(fd) != 0 && rc == SM_OK)
        rc = sm_error_sys(err, errno, "cannot close key file %s", path);
    OPENSSL_cleanse(text, sizeof text);
    /* A half-written key would block the next attempt (O_EXCL) and fail to load: remove it. */
    if (rc != SM_OK)
        unlink(path);
    else
        sm_error_clear(err);
    return rc;
}
