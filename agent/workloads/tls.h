/* The agent's TLS identity for the built-in HTTP source: a key and a self-signed certificate
 * made in memory at start, and the pin of its key that clients accept and nothing else. */
#ifndef SM_AGENT_WORKLOADS_TLS_H
#define SM_AGENT_WORKLOADS_TLS_H

#include <openssl/ssl.h>

#include "proto/err.h"
#include "proto/params.h" /* SM_PIN_MAX */

typedef struct sm_tls_id sm_tls_id;

/* Makes a new P-256 key and a self-signed certificate (CN "sockmatrix-agent", valid from an
 * hour ago for ten years, no file written) and a server SSL_CTX with them (TLS 1.2 or later,
 * ALPN "http/1.1"). Returns 0 or SM_ENOMEM / SM_ESYS with err naming the OpenSSL call. */
int sm_tls_id_new(sm_tls_id **out, sm_error *err);
void sm_tls_id_free(sm_tls_id *id);

/* "sha256//" + base64 of the SHA-256 of the DER SubjectPublicKeyInfo: the form
 * CURLOPT_PINNEDPUBLICKEY takes. At most SM_PIN_MAX bytes; owned by id. */
const char *sm_tls_id_pin(const sm_tls_id *id);

/* The server context; owned by id, shared by every connection (SSL_new is thread-safe). */
SSL_CTX *sm_tls_id_ctx(const sm_tls_id *id);

/* The pin of a PEM certificate's key (the first certificate in pem), for tests that meet a
 * certificate from elsewhere. Returns 0 or SM_EINVAL (out then ""). out has SM_PIN_MAX + 1
 * bytes. */
int sm_tls_pin_of_pem(const char *pem, size_t len, char *out, sm_error *err);

/* Writes the certificate (never the key) as PEM to cert_path, replacing the file, for tests
 * that hand it to a client. Returns 0 or SM_ESYS. */
int sm_tls_id_write_pem(const sm_tls_id *id, const char *cert_path, sm_error *err);

#endif
