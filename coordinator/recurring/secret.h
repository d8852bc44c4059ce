/* A schedule's webhook secret and the signature made with it. The secret is derived, never
 * stored: HKDF-SHA256 of the coordinator's fleet key with the schedule's id and its webhook
 * generation in the info, so the store holds only the generation, and rotating a secret is
 * generation + 1 (docs/webhooks.md, docs/security.md). */
#ifndef SM_COORD_WEBHOOK_SECRET_H
#define SM_COORD_WEBHOOK_SECRET_H

#include <stddef.h>
#include <stdint.h>

#include "proto/envelope.h"
#include "proto/err.h"

#define SM_WEBHOOK_SECRET_PREFIX "whsec_"
/* "whsec_" and 64 lower-case hex digits, with the NUL */
#define SM_WEBHOOK_SECRET_SIZE 71
/* "t=" up to 20 digits ",v1=" 64 hex digits, with the NUL */
#define SM_WEBHOOK_SIG_SIZE 96

/* Schedule `schedule`'s secret at `generation` (>= 1) under fleet key `key`, into out. 0, or
 * SM_ESYS when OpenSSL fails (out is "" then). */
int sm_webhook_secret(const uint8_t key[SM_KEY_LEN], uint64_t schedule, uint32_t generation,
                      char out[SM_WEBHOOK_SECRET_SIZE], sm_error *err);

/* The X-Sockmatrix-Signature value for body sent at unix time t: "t=T,v1=HEX", HEX the
 * HMAC-SHA256 of "T.BODY" keyed with the secret's text (as a receiver holds it, "whsec_"
 * included). out is "" if OpenSSL fails, and a delivery is then not sent. */
void sm_webhook_sign(const char *secret, int64_t t, const char *body, size_t len,
                     char out[SM_WEBHOOK_SIG_SIZE]);

#endif
