/* The agent's TLS identity: a P-256 key, a self-signed certificate and a server context. */
#include "agent/workloads/tls.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#define CN "sockmatrix-agent"
/* Ten years of days; a leap day more or less does not matter to anyone. */
#define VALID_DAYS 3650
#define PIN_PREFIX "sha256//"

struct sm_tls_id {
    EVP_PKEY *key;
    X509 *cert;
    SSL_CTX *ctx;
    char pin[SM_PIN_MAX + 1];
};

/* Sets err to code naming the failed call and OpenSSL's first queued reason, and empties the
 * thread's error queue so that a later call on this thread does not see a stale reason. */
static int ssl_fail_code(sm_error *err, int code, const char *call)
{
    char why[160] = "no reason given";
    unsigned long e = ERR_peek_error();
    if (e)
        ERR_error_string_n(e, why, sizeof why);
    ERR_clear_error();
    return sm_error_set(err, code, "tls: %s failed: %s", call, why);
}

static int ssl_fail(sm_error *err, const char *call)
{
    return ssl_fail_code(err, SM_ESYS, call);
}

static int pin_of_key(EVP_PKEY *key, char *out, sm_error *err)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    unsigned char *der = NULL;
    int len = i2d_PUBKEY(key, &der);
    if (len <= 0)
        return ssl_fail(err, "i2d_PUBKEY");
    int ok = EVP_Digest(der, (size_t)len, md, &mdlen, EVP_sha256(), NULL);
    OPENSSL_free(der);
    if (!ok)
        return ssl_fail(err, "EVP_Digest");
    /* 32 bytes make 44 base64 characters: with the prefix, 52 of the SM_PIN_MAX. */
    memcpy(out, PIN_PREFIX, sizeof PIN_PREFIX - 1);
    EVP_EncodeBlock((unsigned char *)out + sizeof PIN_PREFIX - 1, md, (int)mdlen);
    return 0;
}

/* A random positive 128-bit serial, as RFC 5280 asks of a CA (at most 20 octets, unique). */
static int set_serial(X509 *cert, sm_error *err)
{
    unsigned char raw[16];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return ssl_fail(err, "RAND_bytes");
    raw[0] &= 0x7f;
    raw[0] |= 0x01; /* never zero, and never shorter than 16 octets once encoded */
    BIGNUM *bn = BN_bin2bn(raw, sizeof raw, NULL);
    if (!bn)
        return ssl_fail(err, "BN_bin2bn");
    ASN1_INTEGER *serial = BN_to_ASN1_INTEGER(bn, NULL);
    BN_free(bn);
    if (!serial)
        return ssl_fail(err, "BN_to_ASN1_INTEGER");
    int ok = X509_set_serialNumber(cert, serial);
    ASN1_INTEGER_free(serial);
    return ok ? 0 : ssl_fail(err, "X509_set_serialNumber");
}

static int make_cert(EVP_PKEY *key, X509 **out, sm_error *err)
{
    int rc;
    X509 *cert = X509_new();
    if (!cert)
        return ssl_fail(err, "X509_new");
    X509_NAME *name = X509_get_subject_name(cert);
    if (!X509_set_version(cert, X509_VERSION_3)) {
        rc = ssl_fail(err, "X509_set_version");
        goto out;
    }
    if ((rc = set_serial(cert, err)))
        goto out;
    /* An hour back, so that a peer whose clock runs a little behind accepts it too. */
    if (!X509_gmtime_adj(X509_getm_notBefore(cert), -3600) ||
        !X509_time_adj_ex(X509_getm_notAfter(cert), VALID_DAYS, 0, NULL)) {
        rc = ssl_fail(err, "X509_gmtime_adj");
        goto out;
    }
    if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)CN, -1, -1,
                                    0) ||
        !X509_set_issuer_name(cert, name)) {
        rc = ssl_fail(err, "X509_NAME_add_entry_by_txt");
        goto out;
    }
    if (!X509_set_pubkey(cert, key)) {
        rc = ssl_fail(err, "X509_set_pubkey");
        goto out;
    }
    if (X509_sign(cert, key, EVP_sha256()) <= 0) {
        rc = ssl_fail(err, "X509_sign");
        goto out;
    }
    rc = 0;
out:
    if (rc)
        X509_free(cert);
    else
        *out = cert;
    return rc;
}

/* The source speaks HTTP/1.1 only: a client that offers h2 first still gets http/1.1, and a
 * client that offers neither goes on without ALPN rather than failing the handshake. */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    static const char want[] = "http/1.1";
    (void)ssl;
    (void)arg;
    for (unsigned int i = 0; i < inlen;) {
        unsigned int n = in[i];
        if (n > inlen - i - 1)
            break;
        if (n == sizeof want - 1 && memcmp(in + i + 1, want, n) == 0) {
            *out = in + i + 1;
            *outlen = (unsigned char)n;
            return SSL_TLSEXT_ERR_OK;
        }
        i += n + 1;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

static int make_ctx(sm_tls_id *id, sm_error *err)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx)
        return ssl_fail(err, "SSL_CTX_new");
    const char *call = NULL;
    if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION))
        call = "SSL_CTX_set_min_proto_version";
    else if (SSL_CTX_use_certificate(ctx, id->cert) != 1)
        call = "SSL_CTX_use_certificate";
    else if (SSL_CTX_use_PrivateKey(ctx, id->key) != 1)
        call = "SSL_CTX_use_PrivateKey";
    else if (SSL_CTX_check_private_key(ctx) != 1)
        call = "SSL_CTX_check_private_key";
    if (call) {
        SSL_CTX_free(ctx);
        return ssl_fail(err, call);
    }
    /* A client that closes without close_notify is an ordinary end of a connection here: the
     * body length is in Content-Length, so a truncation attack has nothing to truncate. */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
    id->ctx = ctx;
    return 0;
}

int sm_tls_id_new(sm_tls_id **out, sm_error *err)
{
    int rc;
    *out = NULL;
    sm_tls_id *id = calloc(1, sizeof *id);
    if (!id)
        return sm_error_set(err, SM_ENOMEM, "tls: out of memory for the identity");
    id->key = EVP_EC_gen("P-256");
    if (!id->key) {
        rc = ssl_fail(err, "EVP_EC_gen P-256");
        goto out;
    }
    if ((rc = make_cert(id->key, &id->cert, err)) || (rc = make_ctx(id, err)) ||
        (rc = pin_of_key(id->key, id->pin, err)))
        goto out;
    rc = 0;
out:
    if (rc)
        sm_tls_id_free(id);
    else
        *out = id;
    return rc;
}

void sm_tls_id_free(sm_tls_id *id)
{
    if (!id)
        return;
    SSL_CTX_free(id->ctx);
    X509_free(id->cert);
    EVP_PKEY_free(id->key);
    free(id);
}

const char *sm_tls_id_pin(const sm_tls_id *id)
{
    return id->pin;
}

SSL_CTX *sm_tls_id_ctx(const sm_tls_id *id)
{
    return id->ctx;
}

int sm_tls_pin_of_pem(const char *pem, size_t len, char *out, sm_error *err)
{
    out[0] = '\0';
    if (len > INT_MAX)
        return sm_error_set(err, SM_EINVAL, "tls: a PEM certificate of %zu bytes is too long", len);
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (!bio)
        return sm_error_set(err, SM_EINVAL, "tls: BIO_new_mem_buf failed");
    X509 *cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    BIO_free(bio);
    if (!cert)
        return ssl_fail_code(err, SM_EINVAL, "PEM_read_bio_X509");
    EVP_PKEY *key = X509_get0_pubkey(cert);
    int rc = key ? pin_of_key(key, out, err) : ssl_fail_code(err, SM_EINVAL, "X509_get0_pubkey");
    X509_free(cert);
    if (rc) {
        out[0] = '\0';
        return sm_error_set(err, SM_EINVAL, "tls: the certificate's key has no pin");
    }
    return 0;
}

int sm_tls_id_write_pem(const sm_tls_id *id, const char *cert_path, sm_error *err)
{
    FILE *f = fopen(cert_path, "w");
    if (!f)
        return sm_error_sys(err, errno, "tls: cannot create %s", cert_path);
    int ok = PEM_write_X509(f, id->cert);
    if (!ok) {
        fclose(f);
        return ssl_fail(err, "PEM_write_X509");
    }
    if (fclose(f) != 0)
        return sm_error_sys(err, errno, "tls: cannot write %s", cert_path);
    return 0;
}
