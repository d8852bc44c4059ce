/* What proto/envelope's unit tests share: see envelope_fixture.h. */
#include "tests/unit/proto/envelope_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

const uint8_t KEY[SM_KEY_LEN] = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

void envelope_fixture_check_contains(const char *text, const char *part, const char *file, int line)
{
    if (strstr(text, part) == NULL) {
        print_error("\"%s\"\nlacks \"%s\"\n", text, part);
        _fail(file, line);
    }
}

char *envelope_fixture_seal(const char *name, uint64_t ts, const char *body, size_t *len)
{
    sm_error err;
    char *env =
        sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, name, ts, body, strlen(body), len, NULL, &err);
    if (env == NULL)
        fail_msg("seal failed: %s", err.msg);
    return env;
}

sm_reject envelope_fixture_open_copy(const uint8_t *key, const char *text, size_t len, uint64_t now,
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

void envelope_fixture_field(const char *env, const char *key, char *out, size_t cap)
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

char *envelope_fixture_forge(const char *v, const char *agent, const char *ts, const char *nonce,
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
