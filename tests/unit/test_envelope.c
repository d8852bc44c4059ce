/* Unit tests of proto/envelope: sealing, every rejection reason, replay window, rejection log
 * rate, and the key file. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "proto/envelope.h"
#include "proto/log.h"

#define T0 1700000000000ull /* a fixed "now" in unix ms */

static const uint8_t KEY[SM_KEY_LEN] = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

#define assert_contains(text, part) check_contains((text), (part), __FILE__, __LINE__)

static void check_contains(const char *text, const char *part, const char *file, int line)
{
    if (strstr(text, part) == NULL) {
        print_error("\"%s\"\nlacks \"%s\"\n", text, part);
        _fail(file, line);
    }
}

/* Seals body from name at ts; the caller frees. */
static char *seal(const char *name, uint64_t ts, const char *body, size_t *len)
{
    sm_error err;
    char *env =
        sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, name, ts, body, strlen(body), len, NULL, &err);
    if (env == NULL)
        fail_msg("seal failed: %s", err.msg);
    return env;
}

/* Opens a copy of exactly len bytes with no NUL after it, so the sanitizer catches any read
 * past the end. *err receives the reason. */
static sm_reject open_copy(const uint8_t *key, const char *text, size_t len, uint64_t now,
                           sm_env *out, sm_error *err)
{
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, text, len);
    sm_reject r = sm_env_open(key, SM_DIR_TO_COORDINATOR, copy, len, now, out, err);
    if (out && r == SM_REJ_NONE)
        out->body = NULL; /* it pointed into copy */
    free(copy);
    return r;
}

#define assert_open(text, now, want) check_open((text), (now), (want), __FILE__, __LINE__)

static void check_open(const char *text, uint64_t now, sm_reject want, const char *file, int line)
{
    sm_error err;
    sm_error_clear(&err);
    sm_reject got = open_copy(KEY, text, strlen(text), now, NULL, &err);
    if (got != want) {
        print_error("%s\nopened as %s (%s), want %s\n", text, sm_reject_name(got), err.msg,
                    sm_reject_name(want));
        _fail(file, line);
    }
    if (want != SM_REJ_NONE && err.msg[0] == '\0') {
        print_error("rejection %s has no reason\n", sm_reject_name(got));
        _fail(file, line);
    }
}

/* Replaces the first occurrence of `from` (which must occur) with `to`; the caller frees. */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    size_t head = (size_t)(at - text), flen = strlen(from), tlen = strlen(to);
    size_t rest = strlen(at + flen);
    char *out = malloc(head + tlen + rest + 1);
    assert_non_null(out);
    memcpy(out, text, head);
    memcpy(out + head, to, tlen);
    memcpy(out + head + tlen, at + flen, rest + 1);
    return out;
}

/* The value of a "key":"..." string field in a sealed envelope, copied into out. */
static void field(const char *env, const char *key, char *out, size_t cap)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(env, pat);
    assert_non_null(p);
    p += strlen(pat);
    const char *q = strchr(p, '"');
    assert_non_null(q);
    assert_true((size_t)(q - p) < cap);
    memcpy(out, p, (size_t)(q - p));
    out[q - p] = '\0';
}

/* An envelope with the given header values and a correct MAC, built independently of the
 * sealer so that the header checks can be fed syntax the sealer would never write. */
static char *forge(const char *v, const char *agent, const char *ts, const char *nonce,
                   const char *body)
{
    char input[1024];
    int n = snprintf(input, sizeof input, "sockmatrix/2\nagent->coordinator\n%s\n%s\n%s\n%s", agent,
                     ts, nonce, body);
    assert_true(n > 0 && (size_t)n < sizeof input);
    uint8_t mac[32];
    unsigned mac_len = 0;
    assert_non_null(
        HMAC(EVP_sha256(), KEY, SM_KEY_LEN, (const uint8_t *)input, (size_t)n, mac, &mac_len));
    assert_int_equal(mac_len, 32);
    char mac_hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(mac_hex + 2 * i, 3, "%02x", mac[i]);
    char *out = malloc(2048);
    assert_non_null(out);
    snprintf(out, 2048,
             "{\"v\":%s,\"agent\":\"%s\",\"ts\":%s,\"nonce\":\"%s\",\"mac\":\"%s\",\"body\":%s}", v,
             agent, ts, nonce, mac_hex, body);
    return out;
}

#define NONCE "0123456789abcdef0123456789abcdef"

static void test_env_seal_then_open_returns_the_same_body_bytes(void **state)
{
    (void)state;
    const char *body = "{\"seq\":\"7\",\"acks\":[\"c1\",\"c2\"],\"s\":\"caf\\u00e9 \\\"q\\\"\"}";
    size_t len = 0;
    char *env = seal("agent-01.rack_2", T0, body, &len);
    assert_int_equal(len, strlen(env));

    sm_env e;
    sm_error err;
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_COORDINATOR, env, len, T0, &e, &err), SM_REJ_NONE);
    assert_string_equal(e.name, "agent-01.rack_2");
    assert_int_equal(e.ts_ms, T0);
    assert_int_equal(strlen(e.nonce), SM_NONCE_HEX);
    assert_int_equal(e.body_len, strlen(body));
    assert_memory_equal(e.body, body, strlen(body));
    assert_ptr_equal(e.body + e.body_len + 1, env + len); /* body points into the text */

    assert_int_equal(open_copy(KEY, env, len, T0, &e, &err), SM_REJ_NONE);
    free(env);
}

static void test_env_seal_writes_the_documented_bytes_and_mac(void **state)
{
    (void)state;
    size_t len = 0;
    char *env = seal("h1", T0, "[1,2]", &len);
    char nonce[64], mac[128];
    field(env, "nonce", nonce, sizeof nonce);
    field(env, "mac", mac, sizeof mac);
    assert_int_equal(strlen(nonce), 32);
    assert_int_equal(strspn(nonce, "0123456789abcdef"), 32);
    assert_int_equal(strlen(mac), 64);

    char ts[24];
    snprintf(ts, sizeof ts, "%" PRIu64, (uint64_t)T0);
    char *want = forge("2", "h1", ts, nonce, "[1,2]");
    assert_string_equal(env, want);
    free(want);
    free(env);
}

static void test_env_seal_draws_a_fresh_nonce_each_time(void **state)
{
    (void)state;
    char *a = seal("h1", T0, "{}", NULL), *b = seal("h1", T0, "{}", NULL);
    char na[64], nb[64];
    field(a, "nonce", na, sizeof na);
    field(b, "nonce", nb, sizeof nb);
    assert_string_not_equal(na, nb);
    free(a);
    free(b);
}

static void test_env_seal_refuses_bad_name_bad_body_and_oversize(void **state)
{
    (void)state;
    sm_error err;
    size_t len = 77;
    assert_null(sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "bad name", T0, "{}", 2, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_int_equal(len, 77);
    assert_null(sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "", T0, "{}", 2, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_null(sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, " {}", 3, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_null(sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, "", 0, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_null(
        sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", (1ull << 53) + 1, "{}", 2, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);

    /* A string body sized so the envelope is exactly SM_MSG_MAX, then one byte more. */
    char *probe = seal("h1", T0, "\"\"", &len);
    size_t overhead = len - 2;
    free(probe);
    size_t body_len = SM_MSG_MAX - overhead;
    char *body = malloc(body_len + 2);
    assert_non_null(body);
    memset(body, 'x', body_len + 1);
    body[0] = '"';
    body[body_len - 1] = '"';
    char *env = sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, body, body_len, &len, NULL, &err);
    assert_non_null(env);
    assert_int_equal(len, SM_MSG_MAX);
    free(env);
    body[body_len] = '"';
    body[body_len - 1] = 'x';
    assert_null(
        sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, body, body_len + 1, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_contains(err.msg, "limit");
    free(body);
}

static void test_env_valid_header_changes_fail_the_mac(void **state)
{
    (void)state;
    char *env = seal("h1", T0, "{\"seq\":\"7\"}", NULL);
    char ts[24], nonce[64], mac[128];
    snprintf(ts, sizeof ts, "\"ts\":%" PRIu64, (uint64_t)T0);
    field(env, "nonce", nonce, sizeof nonce);
    field(env, "mac", mac, sizeof mac);
    assert_open(env, T0, SM_REJ_NONE);

    char *t = replace(env, "\"agent\":\"h1\"", "\"agent\":\"h2\"");
    assert_open(t, T0, SM_REJ_MAC);
    free(t);

    char ts2[24];
    snprintf(ts2, sizeof ts2, "\"ts\":%" PRIu64, (uint64_t)T0 + 1);
    t = replace(env, ts, ts2);
    assert_open(t, T0, SM_REJ_MAC);
    free(t);

    char nonce2[64];
    strcpy(nonce2, nonce);
    nonce2[5] = nonce2[5] == 'a' ? 'b' : 'a';
    t = replace(env, nonce, nonce2);
    assert_open(t, T0, SM_REJ_MAC);
    free(t);

    char mac2[128];
    strcpy(mac2, mac);
    mac2[63] = mac2[63] == '0' ? '1' : '0';
    t = replace(env, mac, mac2);
    assert_open(t, T0, SM_REJ_MAC);
    free(t);

    t = replace(env, "\"7\"", "\"8\"");
    assert_open(t, T0, SM_REJ_MAC);
    free(t);
    free(env);
}

static void test_env_malformed_header_fields_are_field_errors(void **state)
{
    (void)state;
    static const struct {
        const char *agent, *ts, *nonce;
    } cases[] = {
        {"h 1", "1700000000000", NONCE},
        {"", "1700000000000", NONCE},
        {"h1/x", "1700000000000", NONCE},
        {"h1", "-1", NONCE},
        {"h1", "1700000000000.5", NONCE},
        {"h1", "9007199254740994", NONCE},
        {"h1", "\"1700000000000\"", NONCE},
        {"h1", "1700000000000", "0123456789ABCDEF0123456789abcdef"},
        {"h1", "1700000000000", "0123456789abcdef0123456789abcde"},
        {"h1", "1700000000000", "0123456789abcdef0123456789abcdeg"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = forge("2", cases[i].agent, cases[i].ts, cases[i].nonce, "{}");
        assert_open(t, T0, SM_REJ_FIELD);
        free(t);
    }
    char *ok = forge("2", "h1", "1700000000000", NONCE, "{}");
    assert_open(ok, T0, SM_REJ_NONE);

    char mac[128];
    field(ok, "mac", mac, sizeof mac);
    char upper[128];
    strcpy(upper, mac);
    for (char *p = upper; *p; p++)
        if (*p >= 'a' && *p <= 'f')
            *p = (char)(*p - 'a' + 'A');
    if (strcmp(upper, mac) != 0) {
        char *t = replace(ok, mac, upper);
        assert_open(t, T0, SM_REJ_FIELD);
        free(t);
    }
    char shortmac[128];
    snprintf(shortmac, sizeof shortmac, "%.63s", mac);
    char *t = replace(ok, mac, shortmac);
    assert_open(t, T0, SM_REJ_FIELD);
    free(t);
    /* A missing member breaks the fixed layout before any field is read. */
    t = replace(ok, ",\"body\":{}", "");
    assert_open(t, T0, SM_REJ_JSON);
    free(t);
    t = replace(ok, "\"agent\":\"h1\",", "");
    assert_open(t, T0, SM_REJ_JSON);
    free(t);
    free(ok);

    /* The reason quotes only a short, printable excerpt of a hostile name. */
    char *hostile = forge("2", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\u0007\\n",
                          "1700000000000", NONCE, "{}");
    sm_error err;
    assert_int_equal(open_copy(KEY, hostile, strlen(hostile), T0, NULL, &err), SM_REJ_FIELD);
    assert_null(strstr(err.msg, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
    for (const char *p = err.msg; *p; p++)
        assert_true(*p >= 0x20 && *p < 0x7f);
    free(hostile);
}

static void test_env_wrong_key_fails_the_mac(void **state)
{
    (void)state;
    size_t len;
    char *env = seal("h1", T0, "{}", &len);
    uint8_t other[SM_KEY_LEN];
    memcpy(other, KEY, sizeof other);
    other[31] ^= 1;
    sm_error err;
    sm_env e;
    memset(&e, 0x5a, sizeof e);
    assert_int_equal(open_copy(other, env, len, T0, &e, &err), SM_REJ_MAC);
    assert_int_equal(err.code, SM_EVERIFY);
    assert_contains(err.msg, "MAC");
    assert_int_equal((unsigned char)e.name[0], 0x5a); /* *out untouched on rejection */
    free(env);
}

static void test_env_skew_beyond_a_minute_is_rejected_both_ways(void **state)
{
    (void)state;
    char *env = seal("h1", T0, "{}", NULL);
    assert_open(env, T0 + SM_SKEW_MS, SM_REJ_NONE);
    assert_open(env, T0 - SM_SKEW_MS, SM_REJ_NONE);
    assert_open(env, T0 + SM_SKEW_MS + 1, SM_REJ_SKEW);
    assert_open(env, T0 - SM_SKEW_MS - 1, SM_REJ_SKEW);
    free(env);
    char *old = seal("h1", 5, "{}", NULL);
    assert_open(old, T0, SM_REJ_SKEW);
    free(old);
}

static void test_env_over_256_kib_is_rejected_before_parsing(void **state)
{
    (void)state;
    size_t len = (size_t)SM_MSG_MAX + 1;
    char *big = malloc(len);
    assert_non_null(big);
    memset(big, '[', len);
    sm_error err;
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_COORDINATOR, big, len, T0, NULL, &err),
                     SM_REJ_SIZE);
    assert_int_equal(err.code, SM_EINVAL);
    free(big);
}

/* A body of `depth` nested arrays around a 1. */
static char *nested(size_t depth)
{
    char *b = malloc(2 * depth + 2);
    assert_non_null(b);
    memset(b, '[', depth);
    b[depth] = '1';
    memset(b + depth + 1, ']', depth);
    b[2 * depth + 1] = '\0';
    return b;
}

static void test_env_body_nested_17_deep_is_rejected_16_accepted(void **state)
{
    (void)state;
    char *b16 = nested(16), *b17 = nested(17);
    char *ok = seal("h1", T0, b16, NULL), *deep = seal("h1", T0, b17, NULL);
    assert_open(ok, T0, SM_REJ_NONE);
    assert_open(deep, T0, SM_REJ_DEPTH);
    free(ok);
    free(deep);

    char *obj = malloc(8 * 17 + 2);
    assert_non_null(obj);
    obj[0] = '\0';
    for (int i = 0; i < 17; i++)
        strcat(obj, "{\"a\":");
    strcat(obj, "1");
    for (int i = 0; i < 17; i++)
        strcat(obj, "}");
    deep = seal("h1", T0, obj, NULL);
    assert_open(deep, T0, SM_REJ_DEPTH);
    free(deep);
    free(obj);
    free(b16);
    free(b17);
}

static void test_env_100000_open_brackets_are_rejected_without_recursion(void **state)
{
    (void)state;
    size_t len = 100000;
    char *text = malloc(len + 1);
    assert_non_null(text);
    memset(text, '[', len);
    text[len] = '\0';
    sm_error err;
    /* Unsigned: refused by the header scan, no parser involved. */
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_COORDINATOR, text, len, T0, NULL, &err),
                     SM_REJ_JSON);
    /* Signed: refused by the depth scan after the MAC, before any decoder could recurse. */
    char *env = seal("h1", T0, text, NULL);
    assert_open(env, T0, SM_REJ_DEPTH);
    free(env);
    free(text);
}

static void test_env_brackets_inside_strings_do_not_count_as_depth(void **state)
{
    (void)state;
    /* An escaped backslash must end the escape (else the closing quote looks escaped and the
     * brackets of "t" fall outside a string); an escaped quote must not end the string. */
    const char *body = "{\"s\":\"\\\\\",\"t\":\"[[[[[[[[[[[[[[[[[[[[\","
                       "\"u\":\"\\\"{{{{{{{{{{{{{{{{{{{{\"}";
    char *env = seal("h1", T0, body, NULL);
    assert_open(env, T0, SM_REJ_NONE);
    free(env);
}

static void test_env_other_version_is_rejected(void **state)
{
    (void)state;
    /* A version 1 envelope (an agent not yet upgraded) is told apart from garbage. */
    char *v1 = forge("1", "h1", "1700000000000", NONCE, "{}");
    sm_error err;
    assert_int_equal(open_copy(KEY, v1, strlen(v1), T0, NULL, &err), SM_REJ_VERSION);
    assert_contains(err.msg, "version 1 is not 2");
    char *v3 = forge("3", "h1", "1700000000000", NONCE, "{}");
    assert_open(v3, T0, SM_REJ_VERSION);
    char *v02 = forge("02", "h1", "1700000000000", NONCE, "{}");
    assert_open(v02, T0, SM_REJ_VERSION);
    char *v1000 = forge("2000", "h1", "1700000000000", NONCE, "{}");
    assert_open(v1000, T0, SM_REJ_VERSION);
    char *vs = forge("\"2\"", "h1", "1700000000000", NONCE, "{}");
    assert_open(vs, T0, SM_REJ_VERSION);
    free(v1);
    free(v3);
    free(v02);
    free(v1000);
    free(vs);
}

static void test_env_anything_but_the_exact_layout_is_a_json_error(void **state)
{
    (void)state;
    char *env = seal("h1", T0, "{\"a\":1}", NULL);
    static const struct {
        const char *from, *to;
    } edits[] = {
        {",\"agent\"", ", \"agent\""},      /* space between members */
        {"{\"v\"", " {\"v\""},              /* leading space */
        {"\"body\":{", "\"body\": {"},      /* space before the body */
        {"1}}", "1} }"},                    /* space after the body */
        {"1}}", "1}} "},                    /* trailing space */
        {"1}}", "1}}x"},                    /* trailing garbage */
        {"{\"v\":2,", "{\"v\":2.0,"},       /* same number, other spelling */
        {"{\"v\":2,", "{\"v\":2,\"x\":0,"}, /* unknown key */
        {"{\"v\":2,", "{\"v\":2,\"v\":2,"}, /* duplicate key */
        {"{\"v\":2,", "{\"v\" :2,"},        /* space in a member */
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *t = replace(env, edits[i].from, edits[i].to);
        assert_open(t, T0, SM_REJ_JSON);
        free(t);
    }
    /* Members in another order: parse and fields are fine, the layout is not. */
    char nonce[64], mac[128], reordered[1024];
    field(env, "nonce", nonce, sizeof nonce);
    field(env, "mac", mac, sizeof mac);
    snprintf(reordered, sizeof reordered,
             "{\"agent\":\"h1\",\"v\":2,\"ts\":%" PRIu64
             ",\"nonce\":\"%s\",\"mac\":\"%s\",\"body\":{\"a\":1}}",
             (uint64_t)T0, nonce, mac);
    assert_open(reordered, T0, SM_REJ_JSON);

    /* Bytes added after the body or cut from it are body bytes to the MAC: it fails. */
    static const struct {
        const char *from, *to;
    } altered[] = {
        {"\"body\":{\"a\":1}", "\"body\":{\"a\":1},\"extra\":true"},
        {"1}}", "1}"},
    };
    for (size_t i = 0; i < sizeof altered / sizeof altered[0]; i++) {
        char *t = replace(env, altered[i].from, altered[i].to);
        assert_open(t, T0, SM_REJ_MAC);
        free(t);
    }
    /* An escaped spelling of the name is not a name: refused before any MAC work. */
    char *t = replace(env, "\"agent\":\"h1\"", "\"agent\":\"\\u0068\\u0031\"");
    assert_open(t, T0, SM_REJ_FIELD);
    free(t);

    assert_open("[1,2]", T0, SM_REJ_JSON);
    assert_open("not json", T0, SM_REJ_JSON);
    assert_open("", T0, SM_REJ_JSON);
    free(env);
}

static void test_env_sealed_for_one_direction_never_opens_in_the_other(void **state)
{
    (void)state;
    sm_error err;
    size_t len;
    sm_env e;
    char *up = sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, "{}", 2, &len, NULL, &err);
    assert_non_null(up);
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_COORDINATOR, up, len, T0, &e, &err), SM_REJ_NONE);
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_AGENT, up, len, T0, &e, &err), SM_REJ_MAC);
    char *down = sm_env_seal(KEY, SM_DIR_TO_AGENT, "coordinator", T0, "{}", 2, &len, NULL, &err);
    assert_non_null(down);
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_AGENT, down, len, T0, &e, &err), SM_REJ_NONE);
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_COORDINATOR, down, len, T0, &e, &err), SM_REJ_MAC);
    free(up);
    free(down);
}

static void test_env_seal_hands_back_the_nonce_it_wrote(void **state)
{
    (void)state;
    sm_error err;
    size_t len;
    char nonce[SM_NONCE_HEX + 1], in_text[64];
    char *env = sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, "{}", 2, &len, nonce, &err);
    assert_non_null(env);
    field(env, "nonce", in_text, sizeof in_text);
    assert_string_equal(nonce, in_text);
    free(env);
}

static void test_env_scan_reads_the_header_without_the_key(void **state)
{
    (void)state;
    size_t len;
    char *env = seal("h7", T0, "{\"a\":[1]}", &len);
    sm_env e;
    sm_error err;
    assert_int_equal(sm_env_scan(env, len, &e, &err), SM_REJ_NONE);
    assert_string_equal(e.name, "h7");
    assert_int_equal(e.ts_ms, T0);
    assert_int_equal(strlen(e.mac), SM_MAC_HEX);
    assert_int_equal(e.body_len, 9);
    assert_memory_equal(e.body, "{\"a\":[1]}", 9);
    /* A body that is not JSON passes the scan and the MAC: only the decoder, after the MAC,
     * parses it. */
    free(env);
    env = seal("h7", T0, "{x", &len);
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_COORDINATOR, env, len, T0, &e, &err), SM_REJ_NONE);
    assert_int_equal(e.body_len, 2);
    free(env);
    /* The claimed name is kept when a later field is bad, for the log line. */
    char *bad = forge("2", "h9", "1700000000000", "nothex", "{}");
    assert_int_equal(sm_env_scan(bad, strlen(bad), &e, &err), SM_REJ_FIELD);
    assert_string_equal(e.name, "h9");
    free(bad);
}

static void test_env_header_fields_one_past_their_bounds_are_refused(void **state)
{
    (void)state;
    char n65[70];
    memset(n65, 'a', 65);
    n65[65] = '\0';
    char *t = forge("2", n65, "1700000000000", NONCE, "{}");
    assert_open(t, T0, SM_REJ_FIELD);
    free(t);
    n65[64] = '\0';
    t = forge("2", n65, "1700000000000", NONCE, "{}");
    assert_open(t, T0, SM_REJ_NONE); /* 64 characters: the longest name */
    free(t);
    t = forge("2", "h1", "9007199254740992", NONCE, "{}"); /* 2^53: the largest allowed */
    assert_open(t, T0, SM_REJ_SKEW);
    free(t);
    t = forge("2", "h1", "01700000000000", NONCE, "{}"); /* leading zero: another spelling */
    assert_open(t, T0, SM_REJ_FIELD);
    free(t);
    t = forge("2", "h1", "1700000000000", NONCE "0", "{}");
    assert_open(t, T0, SM_REJ_FIELD);
    free(t);
}

static void test_key_derive_matches_hkdf_sha256_computed_by_openssl_kdf(void **state)
{
    (void)state;
    /* Expected values from the OpenSSL command line, independent of this code:
     * openssl kdf -keylen 32 -kdfopt digest:SHA256 -kdfopt hexkey:000102...1f
     *   -kdfopt salt:"sockmatrix/2 agent key" -kdfopt info:h1 HKDF */
    static const uint8_t h1[SM_KEY_LEN] = {
        0xDA, 0xC8, 0xEC, 0x4F, 0x75, 0x7E, 0x83, 0x06, 0xE2, 0xBE, 0x2B,
        0xF0, 0xF3, 0x87, 0x7F, 0x3B, 0x4C, 0x15, 0x10, 0x96, 0xEE, 0x7E,
        0x95, 0x87, 0x69, 0x5F, 0x77, 0x14, 0x36, 0xC6, 0x7F, 0xA7,
    };
    static const uint8_t h2[SM_KEY_LEN] = {
        0x1B, 0x98, 0xE6, 0xA3, 0x1E, 0xE6, 0x01, 0x40, 0xCB, 0x47, 0xBF,
        0x9A, 0xFE, 0x31, 0x8C, 0xA6, 0xE4, 0x29, 0x21, 0x52, 0x55, 0xC6,
        0x26, 0x3A, 0x47, 0x62, 0xC1, 0xFB, 0x69, 0x1C, 0x18, 0x76,
    };
    uint8_t out[SM_KEY_LEN];
    sm_error err;
    assert_int_equal(sm_key_derive(KEY, "h1", out, &err), 0);
    assert_memory_equal(out, h1, SM_KEY_LEN);
    assert_int_equal(sm_key_derive(KEY, "h2", out, &err), 0);
    assert_memory_equal(out, h2, SM_KEY_LEN);
    /* One agent's key does not open another's messages, nor does the fleet key. */
    uint8_t k1[SM_KEY_LEN];
    assert_int_equal(sm_key_derive(KEY, "h1", k1, &err), 0);
    size_t len;
    char *env = sm_env_seal(k1, SM_DIR_TO_COORDINATOR, "h1", T0, "{}", 2, &len, NULL, &err);
    assert_non_null(env);
    assert_int_equal(open_copy(k1, env, len, T0, NULL, &err), SM_REJ_NONE);
    assert_int_equal(open_copy(out, env, len, T0, NULL, &err), SM_REJ_MAC);
    assert_int_equal(open_copy(KEY, env, len, T0, NULL, &err), SM_REJ_MAC);
    free(env);
}

static void test_key_derive_refuses_reserved_and_invalid_names(void **state)
{
    (void)state;
    uint8_t out[SM_KEY_LEN];
    sm_error err;
    assert_int_equal(sm_key_derive(KEY, "coordinator", out, &err), SM_EINVAL);
    assert_contains(err.msg, "coordinator");
    assert_int_equal(sm_key_derive(KEY, "bad name", out, &err), SM_EINVAL);
    assert_int_equal(sm_key_derive(KEY, "", out, &err), SM_EINVAL);
    assert_true(sm_name_reserved("coordinator"));
    assert_false(sm_name_reserved("coordinator2"));
    assert_false(sm_name_reserved("h1"));
}

static void test_key_write_round_trips_through_key_load(void **state)
{
    (void)state;
    char dir[] = "/tmp/sm-keywrite-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/k", dir);
    uint8_t k1[SM_KEY_LEN], back[SM_KEY_LEN];
    sm_error err;
    assert_int_equal(sm_key_derive(KEY, "h1", k1, &err), 0);
    assert_int_equal(sm_key_write(path, k1, &err), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(sm_key_load(path, back, &err), 0);
    assert_memory_equal(back, k1, SM_KEY_LEN);
    assert_int_equal(sm_key_write(path, KEY, &err), SM_EINVAL); /* never overwrites */
    assert_int_equal(sm_key_load(path, back, &err), 0);
    assert_memory_equal(back, k1, SM_KEY_LEN);
    unlink(path);
    rmdir(dir);
}

static void test_replay_same_nonce_twice_is_rejected_until_the_window_passes(void **state)
{
    (void)state;
    sm_replay *r = sm_replay_new(2 * SM_SKEW_MS);
    assert_non_null(r);
    assert_int_equal(sm_replay_check(r, "h1", NONCE, T0), SM_REJ_NONE);
    assert_int_equal(sm_replay_check(r, "h1", NONCE, T0 + 1), SM_REJ_REPLAY);
    assert_int_equal(sm_replay_check(r, "h2", NONCE, T0 + 1), SM_REJ_NONE); /* other sender */
    assert_int_equal(sm_replay_size(r), 2);
    assert_int_equal(sm_replay_check(r, "h1", NONCE, T0 + 2 * SM_SKEW_MS), SM_REJ_REPLAY);
    assert_int_equal(sm_replay_check(r, "h1", NONCE, T0 + 2 * SM_SKEW_MS + 1), SM_REJ_NONE);
    /* The h2 entry (T0 + 1) is still inside; the old h1 entry was dropped and re-added. */
    assert_int_equal(sm_replay_size(r), 2);
    assert_int_equal(sm_replay_check(r, "h3", NONCE, T0 + 10 * SM_SKEW_MS), SM_REJ_NONE);
    assert_int_equal(sm_replay_size(r), 1);
    sm_replay_free(r);
    sm_replay_free(NULL);
}

static void test_replay_stays_bounded_by_the_window_under_steady_traffic(void **state)
{
    (void)state;
    sm_replay *r = sm_replay_new(1000);
    assert_non_null(r);
    char nonce[40];
    /* 10 accepted messages per ms for 5 s: only the last window's worth stays. */
    for (uint64_t i = 0; i < 50000; i++) {
        snprintf(nonce, sizeof nonce, "%032" PRIx64, i);
        assert_int_equal(sm_replay_check(r, "h1", nonce, T0 + i / 10), SM_REJ_NONE);
    }
    assert_true(sm_replay_size(r) <= 10010);
    assert_true(sm_replay_size(r) >= 10000);
    snprintf(nonce, sizeof nonce, "%032" PRIx64, (uint64_t)49999);
    assert_int_equal(sm_replay_check(r, "h1", nonce, T0 + 5000), SM_REJ_REPLAY);
    snprintf(nonce, sizeof nonce, "%032" PRIx64, (uint64_t)1);
    assert_int_equal(sm_replay_check(r, "h1", nonce, T0 + 5000), SM_REJ_NONE);
    sm_replay_free(r);
}

/* Expiry takes pairs out of the set as others go in: every pair still in the window must stay
 * findable (a deletion that broke a probe run would let its replay through), and each takes
 * at most 64 bytes however the tables grew. */
static void test_replay_keeps_every_pair_of_the_window_in_64_bytes_each(void **state)
{
    (void)state;
    sm_replay *r = sm_replay_new(1000);
    assert_non_null(r);
    char name[16], nonce[40];
    for (uint64_t i = 0; i < 100000; i++) {
        snprintf(name, sizeof name, "agent-%05" PRIu64, i % 997);
        snprintf(nonce, sizeof nonce, "%032" PRIx64, (uint64_t)(i * 0x9e3779b97f4a7c15ull));
        assert_int_equal(sm_replay_check(r, name, nonce, T0 + i / 20), SM_REJ_NONE);
    }
    const size_t kept = sm_replay_size(r);
    assert_true(kept >= 20000 && kept <= 20020);
    assert_true(sm_replay_bytes(r) <= 64 * kept);
    /* The last 20,000 (T0 + 4000 .. T0 + 4999) are all within the window at T0 + 4999. */
    for (uint64_t i = 80000; i < 100000; i++) {
        snprintf(name, sizeof name, "agent-%05" PRIu64, i % 997);
        snprintf(nonce, sizeof nonce, "%032" PRIx64, (uint64_t)(i * 0x9e3779b97f4a7c15ull));
        assert_int_equal(sm_replay_check(r, name, nonce, T0 + 4999), SM_REJ_REPLAY);
    }
    assert_int_equal(sm_replay_size(r), kept);
    sm_replay_free(r);
}

static void test_replay_clock_stepping_back_does_not_forget_early(void **state)
{
    (void)state;
    sm_replay *r = sm_replay_new(1000);
    assert_non_null(r);
    assert_int_equal(sm_replay_check(r, "h1", "a", T0), SM_REJ_NONE);
    assert_int_equal(sm_replay_check(r, "h1", "b", T0 - 5000), SM_REJ_NONE);
    assert_int_equal(sm_replay_check(r, "h1", "b", T0 + 999), SM_REJ_REPLAY);
    assert_int_equal(sm_replay_check(r, "h1", "a", T0 + 1000), SM_REJ_REPLAY);
    sm_replay_free(r);
}

/* Runs sm_rejects_note with stderr captured into buf. */
static int note_captured(sm_rejects *r, sm_reject why, const char *peer, uint64_t now, char *buf,
                         size_t cap)
{
    char dir[] = "/tmp/sm_env_logXXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/stderr", dir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    int level = sm_log_level;
    sm_log_level = LOG_WARNING;
    int logged = sm_rejects_note(r, why, peer, now, "MAC does not match");
    sm_log_level = level;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, buf, cap - 1, 0);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    unlink(path);
    rmdir(dir);
    return logged;
}

static void test_rejects_log_once_per_peer_per_minute_and_count_all(void **state)
{
    (void)state;
    sm_rejects *r = sm_rejects_new();
    assert_non_null(r);
    int level = sm_log_level;
    sm_log_level = LOG_ERR; /* only the captured calls below write their line */
    char line[1024];

    assert_int_equal(note_captured(r, SM_REJ_MAC, "10.0.0.1", T0, line, sizeof line), 1);
    assert_contains(line, "SM-REJECT");
    assert_contains(line, "10.0.0.1");
    assert_contains(line, "mac");
    assert_int_equal(note_captured(r, SM_REJ_MAC, "10.0.0.1", T0 + 1, line, sizeof line), 0);
    assert_string_equal(line, "");
    assert_int_equal(sm_rejects_note(r, SM_REJ_SKEW, "10.0.0.1", T0 + 59999, NULL), 0);
    /* Another peer is not held back by the first. */
    assert_int_equal(sm_rejects_note(r, SM_REJ_MAC, "10.0.0.2", T0 + 2, NULL), 1);
    assert_int_equal(sm_rejects_note(r, SM_REJ_MAC, "10.0.0.2", T0 + 3, NULL), 0);
    assert_int_equal(note_captured(r, SM_REJ_MAC, "10.0.0.1", T0 + 60000, line, sizeof line), 1);
    assert_contains(line, "2 more");
    assert_int_equal(note_captured(r, SM_REJ_MAC, "10.0.0.1", T0 + 60001, line, sizeof line), 0);

    assert_int_equal(sm_rejects_note(r, SM_REJ_JSON, NULL, T0, NULL), 1);
    assert_int_equal(sm_rejects_note(r, SM_REJ_JSON, NULL, T0, NULL), 0);

    assert_int_equal(sm_rejects_count(r, SM_REJ_MAC), 6);
    assert_int_equal(sm_rejects_count(r, SM_REJ_SKEW), 1);
    assert_int_equal(sm_rejects_count(r, SM_REJ_JSON), 2);
    assert_int_equal(sm_rejects_count(r, SM_REJ_REPLAY), 0);
    assert_int_equal(sm_rejects_total(r), 9);
    sm_log_level = level;
    sm_rejects_free(r);
    sm_rejects_free(NULL);
}

static void test_rejects_add_counts_in_bulk_and_ignores_bad_reasons(void **state)
{
    (void)state;
    sm_rejects *r = sm_rejects_new();
    assert_non_null(r);
    sm_rejects_add(r, SM_REJ_THROTTLED, 184);
    sm_rejects_add(r, SM_REJ_THROTTLED, 0);
    sm_rejects_add(r, SM_REJ__COUNT, 5);
    assert_int_equal(sm_rejects_count(r, SM_REJ_THROTTLED), 184);
    assert_int_equal(sm_rejects_total(r), 184);
    sm_rejects_add(NULL, SM_REJ_MAC, 1); /* no handle: nothing to count */
    sm_rejects_free(r);
}

static void test_rejects_peer_map_evicts_the_oldest_beyond_4096(void **state)
{
    (void)state;
    sm_rejects *r = sm_rejects_new();
    assert_non_null(r);
    int level = sm_log_level;
    sm_log_level = LOG_ERR; /* 4098 lines of noise otherwise */
    char peer[32];
    for (int i = 0; i <= 4096; i++) {
        snprintf(peer, sizeof peer, "p%d", i);
        assert_int_equal(sm_rejects_note(r, SM_REJ_MAC, peer, T0 + (uint64_t)i, NULL), 1);
    }
    /* p0 was evicted to make room for p4096, so it logs again within its minute; p1 does not. */
    assert_int_equal(sm_rejects_note(r, SM_REJ_MAC, "p1", T0 + 5000, NULL), 0);
    assert_int_equal(sm_rejects_note(r, SM_REJ_MAC, "p0", T0 + 5000, NULL), 1);
    assert_int_equal(sm_rejects_total(r), 4099);
    sm_log_level = level;
    sm_rejects_free(r);
}

static void test_reject_names_are_the_documented_words(void **state)
{
    (void)state;
    static const char *const want[] = {"none",    "size",  "depth",       "json",
                                       "version", "field", "mac",         "skew",
                                       "replay",  "body",  "misdirected", "throttled"};
    assert_int_equal(SM_REJ__COUNT, sizeof want / sizeof want[0]);
    for (int i = 0; i < SM_REJ__COUNT; i++)
        assert_string_equal(sm_reject_name((sm_reject)i), want[i]);
    assert_string_equal(sm_reject_name(SM_REJ__COUNT), "unknown");
}

static void test_name_valid_accepts_only_1_to_64_safe_characters(void **state)
{
    (void)state;
    char n64[66];
    memset(n64, 'a', 65);
    n64[64] = '\0';
    assert_true(sm_name_valid(n64));
    n64[64] = 'a';
    n64[65] = '\0';
    assert_false(sm_name_valid(n64));
    assert_true(sm_name_valid("a"));
    assert_true(sm_name_valid("coordinator"));
    assert_true(sm_name_valid("Node-01.rack_2"));
    assert_true(sm_name_valid("..."));
    assert_false(sm_name_valid(""));
    assert_false(sm_name_valid(NULL));
    assert_false(sm_name_valid("a b"));
    assert_false(sm_name_valid("a/b"));
    assert_false(sm_name_valid("a:b"));
    assert_false(sm_name_valid("a\"b"));
    assert_false(sm_name_valid("a\nb"));
    assert_false(sm_name_valid("caf\xc3\xa9"));
}

/* A fresh temporary folder for key files; removed with its contents by rm_dir. */
static void make_dir(char *dir)
{
    strcpy(dir, "/tmp/sm_env_keyXXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void rm_dir(const char *dir, const char *file)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    unlink(path);
    rmdir(dir);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

#define KEY_TEXT "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F"

static void test_key_load_reads_64_hex_digits_with_optional_newline(void **state)
{
    (void)state;
    char dir[32], path[64];
    make_dir(dir);
    snprintf(path, sizeof path, "%s/key", dir);
    uint8_t key[SM_KEY_LEN];
    sm_error err;
    write_file(path, KEY_TEXT "\n", 0600);
    assert_int_equal(sm_key_load(path, key, &err), SM_OK);
    assert_memory_equal(key, KEY, SM_KEY_LEN);
    write_file(path, KEY_TEXT, 0400);
    memset(key, 0, sizeof key);
    assert_int_equal(sm_key_load(path, key, &err), SM_OK);
    assert_memory_equal(key, KEY, SM_KEY_LEN);

    static const char *const bad[] = {
        (KEY_TEXT "\n\n"),
        (KEY_TEXT "0"),
        (KEY_TEXT " "),
        ("0" KEY_TEXT),
        "",
        "0g0102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(path, bad[i], 0600);
        assert_int_equal(sm_key_load(path, key, &err), SM_EPARSE);
        assert_contains(err.msg, "64 hex digits");
    }
    rm_dir(dir, "key");
    assert_int_equal(sm_key_load(path, key, &err), SM_ESYS);
}

static void test_key_load_refuses_a_file_group_or_others_can_read(void **state)
{
    (void)state;
    char dir[32], path[64];
    make_dir(dir);
    snprintf(path, sizeof path, "%s/key", dir);
    write_file(path, KEY_TEXT "\n", 0644);
    uint8_t key[SM_KEY_LEN];
    memset(key, 0xee, sizeof key);
    sm_error err;
    assert_int_equal(sm_key_load(path, key, &err), SM_EINVAL);
    assert_contains(err.msg, "readable by group or others");
    assert_contains(err.msg, "0644");
    assert_contains(err.msg, "chmod 600");
    assert_int_equal(key[0], 0xee);
    write_file(path, KEY_TEXT "\n", 0620);
    assert_int_equal(sm_key_load(path, key, &err), SM_EINVAL);
    assert_contains(err.msg, "0620");
    write_file(path, KEY_TEXT "\n", 0604);
    assert_int_equal(sm_key_load(path, key, &err), SM_EINVAL);
    assert_contains(err.msg, "0604");
    write_file(path, KEY_TEXT "\n", 0602);
    assert_int_equal(sm_key_load(path, key, &err), SM_EINVAL);
    assert_contains(err.msg, "writable by group or others");
    assert_int_equal(key[0], 0xee);
    rm_dir(dir, "key");
}

static void test_key_generate_writes_mode_0600_and_never_overwrites(void **state)
{
    (void)state;
    char dir[32], path[64];
    make_dir(dir);
    snprintf(path, sizeof path, "%s/key", dir);
    mode_t old = umask(0);
    sm_error err;
    int rc = sm_key_generate(path, &err);
    umask(old);
    assert_int_equal(rc, SM_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_size, 65);

    uint8_t k1[SM_KEY_LEN], k2[SM_KEY_LEN];
    assert_int_equal(sm_key_load(path, k1, &err), SM_OK);
    assert_int_equal(sm_key_generate(path, &err), SM_EINVAL);
    assert_contains(err.msg, "exists; refusing to overwrite a key");
    assert_int_equal(sm_key_load(path, k2, &err), SM_OK);
    assert_memory_equal(k1, k2, SM_KEY_LEN);

    char path2[64];
    snprintf(path2, sizeof path2, "%s/key2", dir);
    assert_int_equal(sm_key_generate(path2, &err), SM_OK);
    assert_int_equal(sm_key_load(path2, k2, &err), SM_OK);
    assert_memory_not_equal(k1, k2, SM_KEY_LEN);
    unlink(path2);
    rm_dir(dir, "key");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_seal_then_open_returns_the_same_body_bytes),
        cmocka_unit_test(test_env_seal_writes_the_documented_bytes_and_mac),
        cmocka_unit_test(test_env_seal_draws_a_fresh_nonce_each_time),
        cmocka_unit_test(test_env_seal_refuses_bad_name_bad_body_and_oversize),
        cmocka_unit_test(test_env_valid_header_changes_fail_the_mac),
        cmocka_unit_test(test_env_malformed_header_fields_are_field_errors),
        cmocka_unit_test(test_env_wrong_key_fails_the_mac),
        cmocka_unit_test(test_env_skew_beyond_a_minute_is_rejected_both_ways),
        cmocka_unit_test(test_env_over_256_kib_is_rejected_before_parsing),
        cmocka_unit_test(test_env_body_nested_17_deep_is_rejected_16_accepted),
        cmocka_unit_test(test_env_100000_open_brackets_are_rejected_without_recursion),
        cmocka_unit_test(test_env_brackets_inside_strings_do_not_count_as_depth),
        cmocka_unit_test(test_env_other_version_is_rejected),
        cmocka_unit_test(test_env_anything_but_the_exact_layout_is_a_json_error),
        cmocka_unit_test(test_env_sealed_for_one_direction_never_opens_in_the_other),
        cmocka_unit_test(test_env_seal_hands_back_the_nonce_it_wrote),
        cmocka_unit_test(test_env_scan_reads_the_header_without_the_key),
        cmocka_unit_test(test_env_header_fields_one_past_their_bounds_are_refused),
        cmocka_unit_test(test_key_derive_matches_hkdf_sha256_computed_by_openssl_kdf),
        cmocka_unit_test(test_key_derive_refuses_reserved_and_invalid_names),
        cmocka_unit_test(test_key_write_round_trips_through_key_load),
        cmocka_unit_test(test_replay_same_nonce_twice_is_rejected_until_the_window_passes),
        cmocka_unit_test(test_replay_stays_bounded_by_the_window_under_steady_traffic),
        cmocka_unit_test(test_replay_clock_stepping_back_does_not_forget_early),
        cmocka_unit_test(test_replay_keeps_every_pair_of_the_window_in_64_bytes_each),
        cmocka_unit_test(test_rejects_log_once_per_peer_per_minute_and_count_all),
        cmocka_unit_test(test_rejects_peer_map_evicts_the_oldest_beyond_4096),
        cmocka_unit_test(test_rejects_add_counts_in_bulk_and_ignores_bad_reasons),
        cmocka_unit_test(test_reject_names_are_the_documented_words),
        cmocka_unit_test(test_name_valid_accepts_only_1_to_64_safe_characters),
        cmocka_unit_test(test_key_load_reads_64_hex_digits_with_optional_newline),
        cmocka_unit_test(test_key_load_refuses_a_file_group_or_others_can_read),
        cmocka_unit_test(test_key_generate_writes_mode_0600_and_never_overwrites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
