/* Webhook notifications: a JSON body POSTed to a URL, signed with the dashboard token, retried.
 *
 * Deliveries run on a thread of their own (libcurl, blocking), so the coordinator's loop never
 * waits on a receiver. Each delivery carries
 *   Content-Type: application/json
 *   X-Sockmatrix-Event: EVENT            (e.g. "flag", "regression")
 *   X-Sockmatrix-Delivery: HEX-ID        (the same on every attempt of one delivery; HEX is
 *                                        random per sm_webhook_open, so ids stay unique across
 *                                        restarts; ID is what sm_webhook_post returned)
 *   X-Sockmatrix-Signature: sha256=HEX   (HMAC-SHA256 of the body, keyed with the token; absent
 *                                        when the coordinator has no dashboard token)
 * A 2xx answer ends a delivery; anything else (another status, a refused connection, a timeout)
 * is retried after cfg.backoff_ms, doubled at each attempt, up to cfg.attempts in all. Queued
 * deliveries live in memory only: those still queued when the coordinator stops are logged
 * (SM-WEBHOOK-DROPPED) and lost. */
#ifndef SM_COORD_WEBHOOK_H
#define SM_COORD_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/schema/webhook_url.h"
#include "proto/err.h"

#define SM_WEBHOOK_QUEUE_MAX 256 /* deliveries waiting at most; more are refused */

typedef struct sm_webhook sm_webhook;

typedef struct sm_webhook_cfg {
    const char *token;   /* HMAC key: the dashboard token; NULL or "" signs nothing */
    unsigned attempts;   /* attempts per delivery in all, >= 1 (default 5) */
    unsigned backoff_ms; /* wait before the second attempt, doubled after (default 1000) */
    unsigned timeout_ms; /* per attempt, connect and answer (default 5000) */
} sm_webhook_cfg;

/* Starts the delivery thread. Zeroed fields of cfg (or a NULL cfg) take the defaults; the token
 * is copied. */
int sm_webhook_open(sm_webhook **out, const sm_webhook_cfg *cfg, sm_error *err);

/* Queues one delivery (url, event and body are copied). event is 1 to 63 characters of
 * [A-Za-z0-9._-]; url must pass sm_webhook_url_check; body is a NUL-terminated JSON text.
 * Returns its id (> 0), or 0 when one of those is wrong, the queue is full or memory runs out
 * (logged as SM-WEBHOOK-DROPPED and counted dropped). Never blocks on the network. Thread-safe,
 * but not concurrently with sm_webhook_close. */
uint64_t sm_webhook_post(sm_webhook *w, const char *url, const char *event, const char *body);

typedef struct sm_webhook_stats {
    /* retried: attempts that failed and were tried again; failed: gave up after all attempts;
     * dropped: refused by sm_webhook_post, or cut off by sm_webhook_close */
    uint64_t delivered, retried, failed, dropped;
} sm_webhook_stats;
void sm_webhook_get_stats(sm_webhook *w, sm_webhook_stats *out);

/* The signature header's value for body under token ("sha256=" and 64 lower-case hex digits),
 * into out (at least 72 bytes); NULL token is the empty key. out is "" if OpenSSL fails, and a
 * delivery is then not sent. */
void sm_webhook_sign(const char *token, const char *body, size_t len, char out[72]);

/* Stops the thread: the attempt under way finishes (bounded by timeout_ms), waits between
 * attempts are cut short, and what is still queued is dropped and logged. NULL is a no-op. */
void sm_webhook_close(sm_webhook *w);

#endif
