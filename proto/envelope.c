/* The signed envelope: sealing and the ordered checks of an incoming message. The replay
 * window is in replay.c, rejection accounting in rejects.c, key files and derived keys in
 * keyfile.c. */
#include "proto/envelope.h"
#include "proto/envelope_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#define MAC_LEN     32
#define MAC_HEX     SM_MAC_HEX
#define NONCE_BYTES (SM_NONCE_HEX / 2)
#define MAC_CONTEXT "sockmatrix/2\n"

/* The opener rebuilds ts in decimal and requires the text to match, so a number that a double
 * rounded (2^53 + 1 reads as 2^53) fails the layout check; 2^53 itself is therefore safe. */
#define TS_MAX (1ull << 53)

_Static_assert(MAC_HEX == 2 * MAC_LEN, "SM_MAC_HEX is the hex of an HMAC-SHA256");

/* {"v":2,"agent":"<64>","ts":<16>,"nonce":"<32>","mac":"<64>","body": is under 220 bytes. */
#define PREFIX_MAX 256

/* Attacker-chosen text quoted in a reason is cut to this and limited to printable ASCII. */
#define EXCERPT_MAX 24

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

void sm_hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

/* A short, printable copy of untrusted text for a reason or a log line. */
void sm_excerpt(char *dst, size_t cap, const char *src)
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
    sm_hex_encode(raw, MAC_LEN, out_hex);
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
    sm_hex_encode(raw, sizeof raw, nonce);
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
        sm_excerpt(ex, sizeof ex, raw);
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
