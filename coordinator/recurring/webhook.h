/* Webhook notifications: a JSON body POSTed to a URL, signed with the schedule's own secret,
 * retried, sent only to the addresses the destination policy allows.
 *
 * Deliveries run on a small pool of threads of their own (libcurl, blocking), so the
 * coordinator's loop never waits on a receiver, and a slow receiver delays only the
 * deliveries to itself: a thread takes the oldest queued delivery whose destination (scheme,
 * host and port) no other thread is busy with, so each destination gets its deliveries in
 * order, one at a time. Each delivery carries
 *   Content-Type: application/json
 *   X-Sockmatrix-Event: EVENT            (e.g. "flag", "regression", "ping")
 *   X-Sockmatrix-Delivery: HEX-ID        (the same on every attempt of one delivery; HEX is
 *                                        random per sm_webhook_open, so ids stay unique across
 *                                        restarts; ID is what sm_webhook_post returned)
 *   X-Sockmatrix-Signature: t=T,v1=HEX   (sm_webhook_sign with the schedule's secret, T the
 *                                        attempt's unix time; absent when cfg.key is NULL)
 * Every address libcurl is about to connect to (after DNS, for each attempt) is checked
 * against the policy, and proxies from the environment are ignored: a name that resolves to a
 * refused address, now or after a rebinding, reaches nothing. Such a delivery is not retried:
 * it fails at once (SM-WEBHOOK-REFUSED, counted failed and refused) with the address and the
 * option that would allow it. A 2xx answer ends a delivery; anything else (another status, a
 * refused connection, a timeout) is retried after cfg.backoff_ms, doubled at each attempt, up
 * to cfg.attempts in all. Queued deliveries live in memory only: those still queued when the
 * coordinator stops are logged (SM-WEBHOOK-DROPPED) and lost. */
#ifndef SM_COORD_WEBHOOK_H
#define SM_COORD_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/recurring/secret.h"
#include "coordinator/schema/webhook_url.h"
#include "proto/addrpolicy.h"
#include "proto/err.h"

#define SM_WEBHOOK_QUEUE_MAX 256 /* deliveries waiting at most; more are refused */
#define SM_WEBHOOK_THREADS   4   /* destinations served at once */

typedef struct sm_webhook sm_webhook;

typedef struct sm_webhook_cfg {
    /* The fleet key each schedule's secret derives from (sm_webhook_secret), copied; NULL:
     * deliveries go unsigned (tests only: the coordinator always has one). */
    const uint8_t *key;
    const sm_addr_policy *allow; /* destinations, copied; NULL: sm_webhook_policy_init's */
    unsigned attempts;           /* attempts per delivery in all, >= 1 (default 5) */
    unsigned backoff_ms;         /* wait before the second attempt, doubled after (default 1000) */
    unsigned timeout_ms;         /* per attempt, connect and answer (default 5000) */
} sm_webhook_cfg;

/* Where a delivery goes and whose secret signs it. */
typedef struct sm_webhook_dest {
    const char *url;
    uint64_t schedule;   /* the schedule's id */
    uint32_t generation; /* its webhook generation (>= 1): a rotation adds one */
} sm_webhook_dest;

/* Starts the delivery threads. Zeroed fields of cfg (or a NULL cfg) take the defaults. */
int sm_webhook_open(sm_webhook **out, const sm_webhook_cfg *cfg, sm_error *err);

/* Queues one delivery (url, event and body are copied; the secret is derived now). event is 1
 * to 63 characters of [A-Za-z0-9._-]; to->url must pass sm_webhook_url_check; body is a
 * NUL-terminated JSON text. Returns its id (> 0), or 0 when one of those is wrong, the queue
 * is full or memory runs out (logged as SM-WEBHOOK-DROPPED and counted dropped). Never blocks
 * on the network. Thread-safe, but not concurrently with sm_webhook_close. */
uint64_t sm_webhook_post(sm_webhook *w, const sm_webhook_dest *to, const char *event,
                         const char *body);

typedef struct sm_webhook_stats {
    /* retried: attempts that failed and were tried again; failed: gave up (after all attempts,
     * or at once when refused); refused: of those failed, refused by the destination policy;
     * dropped: refused by sm_webhook_post, or cut off by sm_webhook_close */
    uint64_t delivered, retried, failed, refused, dropped;
} sm_webhook_stats;
void sm_webhook_get_stats(sm_webhook *w, sm_webhook_stats *out);

/* The outcome of the last delivery of schedule's webhook that ended since sm_webhook_open
 * ("delivered ping as delivery 3", "refused: 127.0.0.1 is a loopback address, ...", "failed
 * after 5 attempts: status 500") into out (cap bytes, cut to fit), and when it ended (wall ms)
 * into *at_ms. false when none is known: none ended yet, or the schedule was among the least
 * recent of more than SM_WEBHOOK_STATUS_KEPT. Thread-safe. */
#define SM_WEBHOOK_STATUS_KEPT 256
bool sm_webhook_last(sm_webhook *w, uint64_t schedule, char *out, size_t cap, int64_t *at_ms);

/* Stops the threads: the attempts under way finish (bounded by timeout_ms), waits between
 * attempts are cut short, and what is still queued is dropped and logged. NULL is a no-op. */
void sm_webhook_close(sm_webhook *w);

#endif
