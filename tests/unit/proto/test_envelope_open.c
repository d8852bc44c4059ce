/* Unit tests of the envelope's open: every change to the header fails, as does a wrong key, skew,
 * size, depth or layout, and the header scan. */
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
#include "tests/unit/proto/envelope_fixture.h"

#define assert_open(text, now, want) check_open((text), (now), (want), __FILE__, __LINE__)

static void check_open(const char *text, uint64_t now, sm_reject want, const char *file, int line)
{
    sm_error err;
    sm_error_clear(&err);
    sm_reject got = envelope_fixture_open_copy(KEY, text, strlen(text), now, NULL, &err);
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

static void test_env_valid_header_changes_fail_the_mac(void **state)
{
    (void)state;
    char *env = envelope_fixture_seal("h1", T0, "{\"seq\":\"7\"}", NULL);
    char ts[24], nonce[64], mac[128];
    snprintf(ts, sizeof ts, "\"ts\":%" PRIu64, (uint64_t)T0);
    envelope_fixture_field(env, "nonce", nonce, sizeof nonce);
    envelope_fixture_field(env, "mac", mac, sizeof mac);
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
        char *t = envelope_fixture_forge("2", cases[i].agent, cases[i].ts, cases[i].nonce, "{}");
        assert_open(t, T0, SM_REJ_FIELD);
        free(t);
    }
    char *ok = envelope_fixture_forge("2", "h1", "1700000000000", NONCE, "{}");
    assert_open(ok, T0, SM_REJ_NONE);

    char mac[128];
    envelope_fixture_field(ok, "mac", mac, sizeof mac);
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
    char *hostile = envelope_fixture_forge(
        "2", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\u0007\\n", "1700000000000", NONCE, "{}");
    sm_error err;
    assert_int_equal(envelope_fixture_open_copy(KEY, hostile, strlen(hostile), T0, NULL, &err),
                     SM_REJ_FIELD);
    assert_null(strstr(err.msg, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
    for (const char *p = err.msg; *p; p++)
        assert_true(*p >= 0x20 && *p < 0x7f);
    free(hostile);
}

static void test_env_wrong_key_fails_the_mac(void **state)
{
    (void)state;
    size_t len;
    char *env = envelope_fixture_seal("h1", T0, "{}", &len);
    uint8_t other[SM_KEY_LEN];
    memcpy(other, KEY, sizeof other);
    other[31] ^= 1;
    sm_error err;
    sm_env e;
    memset(&e, 0x5a, sizeof e);
    assert_int_equal(envelope_fixture_open_copy(other, env, len, T0, &e, &err), SM_REJ_MAC);
    assert_int_equal(err.code, SM_EVERIFY);
    assert_contains(err.msg, "MAC");
    assert_int_equal((unsigned char)e.name[0], 0x5a); /* *out untouched on rejection */
    free(env);
}

static void test_env_skew_beyond_a_minute_is_rejected_both_ways(void **state)
{
    (void)state;
    char *env = envelope_fixture_seal("h1", T0, "{}", NULL);
    assert_open(env, T0 + SM_SKEW_MS, SM_REJ_NONE);
    assert_open(env, T0 - SM_SKEW_MS, SM_REJ_NONE);
    assert_open(env, T0 + SM_SKEW_MS + 1, SM_REJ_SKEW);
    assert_open(env, T0 - SM_SKEW_MS - 1, SM_REJ_SKEW);
    free(env);
    char *old = envelope_fixture_seal("h1", 5, "{}", NULL);
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
    char *ok = envelope_fixture_seal("h1", T0, b16, NULL),
         *deep = envelope_fixture_seal("h1", T0, b17, NULL);
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
    deep = envelope_fixture_seal("h1", T0, obj, NULL);
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
    char *env = envelope_fixture_seal("h1", T0, text, NULL);
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
    char *env = envelope_fixture_seal("h1", T0, body, NULL);
    assert_open(env, T0, SM_REJ_NONE);
    free(env);
}

static void test_env_other_version_is_rejected(void **state)
{
    (void)state;
    /* A version 1 envelope (an agent not yet upgraded) is told apart from garbage. */
    char *v1 = envelope_fixture_forge("1", "h1", "1700000000000", NONCE, "{}");
    sm_error err;
    assert_int_equal(envelope_fixture_open_copy(KEY, v1, strlen(v1), T0, NULL, &err),
                     SM_REJ_VERSION);
    assert_contains(err.msg, "version 1 is not 2");
    char *v3 = envelope_fixture_forge("3", "h1", "1700000000000", NONCE, "{}");
    assert_open(v3, T0, SM_REJ_VERSION);
    char *v02 = envelope_fixture_forge("02", "h1", "1700000000000", NONCE, "{}");
    assert_open(v02, T0, SM_REJ_VERSION);
    char *v1000 = envelope_fixture_forge("2000", "h1", "1700000000000", NONCE, "{}");
    assert_open(v1000, T0, SM_REJ_VERSION);
    char *vs = envelope_fixture_forge("\"2\"", "h1", "1700000000000", NONCE, "{}");
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
    char *env = envelope_fixture_seal("h1", T0, "{\"a\":1}", NULL);
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
    envelope_fixture_field(env, "nonce", nonce, sizeof nonce);
    envelope_fixture_field(env, "mac", mac, sizeof mac);
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

static void test_env_scan_reads_the_header_without_the_key(void **state)
{
    (void)state;
    size_t len;
    char *env = envelope_fixture_seal("h7", T0, "{\"a\":[1]}", &len);
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
    env = envelope_fixture_seal("h7", T0, "{x", &len);
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_COORDINATOR, env, len, T0, &e, &err), SM_REJ_NONE);
    assert_int_equal(e.body_len, 2);
    free(env);
    /* The claimed name is kept when a later field is bad, for the log line. */
    char *bad = envelope_fixture_forge("2", "h9", "1700000000000", "nothex", "{}");
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
    char *t = envelope_fixture_forge("2", n65, "1700000000000", NONCE, "{}");
    assert_open(t, T0, SM_REJ_FIELD);
    free(t);
    n65[64] = '\0';
    t = envelope_fixture_forge("2", n65, "1700000000000", NONCE, "{}");
    assert_open(t, T0, SM_REJ_NONE); /* 64 characters: the longest name */
    free(t);
    t = envelope_fixture_forge("2", "h1", "9007199254740992", NONCE,
                               "{}"); /* 2^53: the largest allowed */
    assert_open(t, T0, SM_REJ_SKEW);
    free(t);
    t = envelope_fixture_forge("2", "h1", "01700000000000", NONCE,
                               "{}"); /* leading zero: another spelling */
    assert_open(t, T0, SM_REJ_FIELD);
    free(t);
    t = envelope_fixture_forge("2", "h1", "1700000000000", NONCE "0", "{}");
    assert_open(t, T0, SM_REJ_FIELD);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
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
        cmocka_unit_test(test_env_scan_reads_the_header_without_the_key),
        cmocka_unit_test(test_env_header_fields_one_past_their_bounds_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
