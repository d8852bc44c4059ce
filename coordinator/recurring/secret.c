/* Webhook secrets (HKDF-SHA256 of the fleet key) and signatures (HMAC-SHA256 of "t.body"). */
#include "coordinator/recurring/secret.h"

#include <inttypes.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <stdio.h>
#include <string.h>

#define INFO_LABEL "sockmatrix webhook v1"
#define SALT       "sockmatrix webhook secret"

static void hex(const unsigned char *raw, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[raw[i] >> 4];
        out[2 * i + 1] = digits[raw[i] & 15];
    }
    out[2 * n] = '\0';
}

int sm_webhook_secret(const uint8_t key[SM_KEY_LEN], uint64_t schedule, uint32_t generation,
                      char out[SM_WEBHOOK_SECRET_SIZE], sm_error *err)
{
    /* The label keeps these keys apart from the agents' (whose info is a name) and the ids
     * in fixed-width big-endian form keep (1, 23) and (12, 3) apart. */
    unsigned char info[sizeof INFO_LABEL - 1 + 12];
    memcpy(info, INFO_LABEL, sizeof INFO_LABEL - 1);
    for (int i = 0; i < 8; i++)
        info[sizeof INFO_LABEL - 1 + i] = (unsigned char)(schedule >> (56 - 8 * i));
    for (int i = 0; i < 4; i++)
        info[sizeof INFO_LABEL - 1 + 8 + i] = (unsigned char)(generation >> (24 - 8 * i));
    char digest[] = "SHA256", salt[] = SALT;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, SM_KEY_LEN),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt, strlen(salt)),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, sizeof info),
        OSSL_PARAM_construct_end(),
    };
    unsigned char raw[32];
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    const int ok = ctx != NULL && EVP_KDF_derive(ctx, raw, sizeof raw, params) == 1;
    EVP_KDF_CTX_free(ctx);
    EVP_KDF_free(kdf);
    out[0] = '\0';
    if (!ok)
        return sm_error_set(err, SM_ESYS,
                            "the webhook secret of schedule %" PRIu64
                            " could not be made (OpenSSL's HKDF failed)",
                            schedule);
    memcpy(out, SM_WEBHOOK_SECRET_PREFIX, sizeof SM_WEBHOOK_SECRET_PREFIX - 1);
    hex(raw, sizeof raw, out + sizeof SM_WEBHOOK_SECRET_PREFIX - 1);
    OPENSSL_cleanse(raw, sizeof raw);
    return 0;
}

void sm_webhook_sign(const char *secret, int64_t t, const char *body, size_t len,
                     char out[SM_WEBHOOK_SIG_SIZE])
{
    unsigned char raw[EVP_MAX_MD_SIZE];
    size_t raw_len = 0;
    char digest[] = "SHA256", stamp[24];
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end(),
    };
    const char *key = secret ? secret : "";
    const int n = snprintf(stamp, sizeof stamp, "%" PRId64 ".", t);
    out[0] = '\0';
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
    /* key is never NULL: EVP_MAC_init would take NULL as "the previous key" */
    if (ctx && EVP_MAC_init(ctx, (const unsigned char *)key, strlen(key), params) &&
        EVP_MAC_update(ctx, (const unsigned char *)stamp, (size_t)n) &&
        EVP_MAC_update(ctx, (const unsigned char *)body, len) &&
        EVP_MAC_final(ctx, raw, &raw_len, sizeof raw) && raw_len == 32) {
        const int head = snprintf(out, SM_WEBHOOK_SIG_SIZE, "t=%" PRId64 ",v1=", t);
        hex(raw, raw_len, out + head);
    }
    OPENSSL_cleanse(raw, sizeof raw);
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
}
