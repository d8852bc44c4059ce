/* Webhook delivery: a queue of signed JSON POSTs and the one thread that sends them (libcurl). */
#include "coordinator/recurring/webhook.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/log.h"

#define DEFAULT_ATTEMPTS   5u
#define DEFAULT_BACKOFF_MS 1000u
#define DEFAULT_TIMEOUT_MS 5000u
#define WAIT_MAX_MS        3600000u /* doubling stops at an hour between attempts */
#define EVENT_MAX          64
#define ANSWER_MAX         65536 /* bytes of a receiver's answer read before it is cut off */
#define SIG_LEN            71    /* "sha256=" and 64 hex digits */

typedef struct delivery {
    struct delivery *next;
    uint64_t id;
    char *url, *event, *body;
    size_t body_len;
} delivery;

struct sm_webhook {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* on CLOCK_MONOTONIC: queue changes, stop */
    delivery *head, *tail;
    size_t queued;
    bool stopping;
    uint64_t next_id;
    sm_webhook_stats stats;
    char *token; /* NULL: deliveries go unsigned */
    unsigned attempts, backoff_ms, timeout_ms;
    char instance[17]; /* random per open, so that delivery ids stay unique across restarts */
};

static void delivery_free(delivery *d)
{
    if (!d)
        return;
    free(d->url);
    free(d->event);
    free(d->body);
    free(d);
}

void sm_webhook_sign(const char *token, const char *body, size_t len, char out[72])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char raw[EVP_MAX_MD_SIZE];
    size_t raw_len = 0;
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end(),
    };
    const char *key = token ? token : "";
    out[0] = '\0';
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
    /* key is never NULL: EVP_MAC_init would take NULL as "the previous key" */
    if (ctx && EVP_MAC_init(ctx, (const unsigned char *)key, strlen(key), params) &&
        EVP_MAC_update(ctx, (const unsigned char *)body, len) &&
        EVP_MAC_final(ctx, raw, &raw_len, sizeof raw) && raw_len == 32) {
        memcpy(out, "sha256=", 7);
        for (size_t i = 0; i < raw_len; i++) {
            out[7 + 2 * i] = digits[raw[i] >> 4];
            out[7 + 2 * i + 1] = digits[raw[i] & 15];
        }
        out[SIG_LEN] = '\0';
    }
    OPENSSL_cleanse(raw, sizeof raw);
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
}

/* The event goes into a header line: no CR or LF may smuggle another header in. */
static bool event_ok(const char *event)
{
    size_t n = event ? strlen(event) : 0;
    if (n == 0 || n >= EVENT_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = event[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return false;
    }
    return true;
}

static struct timespec deadline_after(unsigned ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static size_t discard(char *ptr, size_t size, size_t nmemb, void *arg)
{
    (void)ptr;
    size_t *seen = arg;
    size_t n = size * nmemb;
    *seen += n;
    /* A receiver that streams without end is cut off here rather than at timeout_ms. */
    return *seen > ANSWER_MAX ? 0 : n;
}

/* One POST. Returns true on a 2xx answer; otherwise what went wrong, in words, in why. */
static bool attempt(CURL *curl, const sm_webhook *w, const delivery *d, struct curl_slist *headers,
                    char *why, size_t why_cap)
{
    char errbuf[CURL_ERROR_SIZE] = "";
    size_t seen = 0;
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, d->url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    /* libcurl's timeouts would otherwise use SIGALRM, which is the process's, not this thread's */
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)w->timeout_ms);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, d->body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)d->body_len);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "sockmatrix/" SM_VERSION);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &seen);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    /* the status line came before the answer that was too long: it still counts */
    if ((rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && seen > ANSWER_MAX)) && status >= 200 &&
        status <= 299)
        return true;
    if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && status > 0))
        snprintf(why, why_cap, "status %ld", status);
    else
        snprintf(why, why_cap, "%s", *errbuf ? errbuf : curl_easy_strerror(rc));
    return false;
}

/* Waits ms unless close comes first; returns false when it did. Called with w->mu held. */
static bool wait_or_stop(sm_webhook *w, unsigned ms)
{
    struct timespec until = deadline_after(ms);
    while (!w->stopping)
        if (pthread_cond_timedwait(&w->cv, &w->mu, &until) == ETIMEDOUT)
            break;
    return !w->stopping;
}

static struct curl_slist *make_headers(const sm_webhook *w, const delivery *d)
{
    char line[128];
    struct curl_slist *h = NULL, *next;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        snprintf(line, sizeof line, __VA_ARGS__);                                                  \
        if (!(next = curl_slist_append(h, line)))                                                  \
            goto fail;                                                                             \
        h = next;                                                                                  \
    } while (0)
    ADD("Content-Type: application/json");
    ADD("X-Sockmatrix-Event: %s", d->event);
    ADD("X-Sockmatrix-Delivery: %s-%" PRIu64, w->instance, d->id);
    /* curl would wait for "100 Continue" before a large body; receivers seldom send it */
    ADD("Expect:");
    if (w->token) {
        char sig[72];
        sm_webhook_sign(w->token, d->body, d->body_len, sig);
        if (!*sig)
            goto fail;
        ADD("X-Sockmatrix-Signature: %s", sig);
    }
#undef ADD
    return h;
fail:
    curl_slist_free_all(h);
    return NULL;
}

/* All attempts of one delivery; the stats under w->mu. */
static void deliver(sm_webhook *w, CURL *curl, const delivery *d)
{
    struct curl_slist *headers = make_headers(w, d);
    if (!headers) {
        sm_log(LOG_ERR, "SM-WEBHOOK-FAILED",
               "delivery %" PRIu64
               " to %s: its headers or signature could not be made (out of memory)",
               d->id, d->url);
        pthread_mutex_lock(&w->mu);
        w->stats.failed++;
        pthread_mutex_unlock(&w->mu);
        return;
    }
    unsigned wait_ms = w->backoff_ms;
    char why[CURL_ERROR_SIZE + 32];
    for (unsigned n = 1;; n++) {
        bool ok = attempt(curl, w, d, headers, why, sizeof why);
        pthread_mutex_lock(&w->mu);
        if (ok) {
            w->stats.delivered++;
            pthread_mutex_unlock(&w->mu);
            break;
        }
        if (n >= w->attempts) {
            w->stats.failed++;
            pthread_mutex_unlock(&w->mu);
            sm_log(LOG_ERR, "SM-WEBHOOK-FAILED",
                   "delivery %" PRIu64 " (%s) to %s: gave up after %u attempts, the last: %s",
                   d->id, d->event, d->url, n, why);
            break;
        }
        w->stats.retried++;
        sm_log(LOG_WARNING, "SM-WEBHOOK-RETRY",
               "delivery %" PRIu64 " to %s: attempt %u of %u: %s; next in %u ms", d->id, d->url, n,
               w->attempts, why, wait_ms);
        if (!wait_or_stop(w, wait_ms)) {
            w->stats.dropped++;
            pthread_mutex_unlock(&w->mu);
            sm_log(LOG_WARNING, "SM-WEBHOOK-DROPPED",
                   "delivery %" PRIu64 " (%s) to %s: the coordinator stops after %u attempts",
                   d->id, d->event, d->url, n);
            break;
        }
        pthread_mutex_unlock(&w->mu);
        wait_ms = wait_ms > WAIT_MAX_MS / 2 ? WAIT_MAX_MS : wait_ms * 2;
    }
    curl_slist_free_all(headers);
}

static void *run(void *arg)
{
    sm_webhook *w = arg;
    /* one handle for the thread's life: connections to a receiver are reused between posts */
    CURL *curl = curl_easy_init();
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->stopping && !w->head)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->stopping)
            break;
        delivery *d = w->head;
        w->head = d->next;
        if (!w->head)
            w->tail = NULL;
        w->queued--;
        if (!curl) {
            w->stats.failed++;
            pthread_mutex_unlock(&w->mu);
            sm_log(LOG_ERR, "SM-WEBHOOK-FAILED", "delivery %" PRIu64 " to %s: no libcurl handle",
                   d->id, d->url);
        } else {
            pthread_mutex_unlock(&w->mu);
            deliver(w, curl, d);
        }
        delivery_free(d);
        pthread_mutex_lock(&w->mu);
    }
    while (w->head) {
        delivery *d = w->head;
        w->head = d->next;
        w->queued--;
        w->stats.dropped++;
        sm_log(LOG_WARNING, "SM-WEBHOOK-DROPPED",
               "delivery %" PRIu64 " (%s) to %s: still queued when the coordinator stops", d->id,
               d->event, d->url);
        delivery_free(d);
    }
    w->tail = NULL;
    pthread_mutex_unlock(&w->mu);
    curl_easy_cleanup(curl);
    return NULL;
}

static void token_free(char *token)
{
    if (token) {
        OPENSSL_cleanse(token, strlen(token));
        free(token);
    }
}

int sm_webhook_open(sm_webhook **out, const sm_webhook_cfg *cfg, sm_error *err)
{
    const sm_webhook_cfg none = {0};
    if (!cfg)
        cfg = &none;
    /* Reference-counted, and thread-safe in the libcurl Debian ships (7.84 and later). */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return sm_error_set(err, SM_ENOMEM, "webhook: libcurl could not start");
    sm_webhook *w = calloc(1, sizeof *w);
    if (!w) {
        curl_global_cleanup();
        return sm_error_set(err, SM_ENOMEM, "webhook: out of memory");
    }
    w->attempts = cfg->attempts ? cfg->attempts : DEFAULT_ATTEMPTS;
    w->backoff_ms = cfg->backoff_ms ? cfg->backoff_ms : DEFAULT_BACKOFF_MS;
    w->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
    if (w->backoff_ms > WAIT_MAX_MS)
        w->backoff_ms = WAIT_MAX_MS;
    w->next_id = 1;
    int rc = SM_ENOMEM;
    unsigned char rnd[8];
    if (cfg->token && *cfg->token && !(w->token = strdup(cfg->token))) {
        sm_error_set(err, rc, "webhook: out of memory");
        goto fail_token;
    }
    if (RAND_bytes(rnd, sizeof rnd) != 1) {
        sm_error_set(err, rc, "webhook: no random bytes for the delivery ids");
        goto fail_token;
    }
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(w->instance + 2 * i, 3, "%02x", rnd[i]);
    pthread_condattr_t ca;
    int e = pthread_condattr_init(&ca);
    if (e == 0) {
        e = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        if (e == 0)
            e = pthread_cond_init(&w->cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    if (e != 0) {
        rc = sm_error_sys(err, e, "webhook: pthread_cond_init");
        goto fail_token;
    }
    if ((e = pthread_mutex_init(&w->mu, NULL)) != 0) {
        rc = sm_error_sys(err, e, "webhook: pthread_mutex_init");
        goto fail_cond;
    }
    if ((e = pthread_create(&w->thread, NULL, run, w)) != 0) {
        rc = sm_error_sys(err, e, "webhook: pthread_create");
        goto fail_mutex;
    }
    *out = w;
    return 0;
fail_mutex:
    pthread_mutex_destroy(&w->mu);
fail_cond:
    pthread_cond_destroy(&w->cv);
fail_token:
    token_free(w->token);
    free(w);
    curl_global_cleanup();
    return rc;
}

uint64_t sm_webhook_post(sm_webhook *w, const char *url, const char *event, const char *body)
{
    sm_error err = {0};
    if (sm_webhook_url_check(url, &err) != 0 || !event_ok(event) || !body) {
        sm_log(LOG_ERR, "SM-WEBHOOK-DROPPED", "a delivery to %s refused: %s", url ? url : "(none)",
               err.code ? err.msg : "no body or a bad event name");
        pthread_mutex_lock(&w->mu);
        w->stats.dropped++;
        pthread_mutex_unlock(&w->mu);
        return 0;
    }
    delivery *d = calloc(1, sizeof *d);
    if (d) {
        d->url = strdup(url);
        d->event = strdup(event);
        d->body_len = strlen(body);
        d->body = strdup(body);
    }
    uint64_t id = 0;
    const char *why = "out of memory";
    pthread_mutex_lock(&w->mu);
    if (w->stopping)
        why = "the coordinator stops";
    else if (w->queued >= SM_WEBHOOK_QUEUE_MAX)
        why = "the queue is full";
    else if (d && d->url && d->event && d->body) {
        id = d->id = w->next_id++;
        if (w->tail)
            w->tail->next = d;
        else
            w->head = d;
        w->tail = d;
        w->queued++;
        pthread_cond_signal(&w->cv);
    }
    if (!id)
        w->stats.dropped++;
    pthread_mutex_unlock(&w->mu);
    if (!id) {
        sm_log(LOG_ERR, "SM-WEBHOOK-DROPPED", "a %s delivery to %s refused: %s", event, url, why);
        delivery_free(d);
    }
    return id;
}

void sm_webhook_get_stats(sm_webhook *w, sm_webhook_stats *out)
{
    pthread_mutex_lock(&w->mu);
    *out = w->stats;
    pthread_mutex_unlock(&w->mu);
}

void sm_webhook_close(sm_webhook *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stopping = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    sm_log(LOG_INFO, "SM-WEBHOOK-STOP",
           "deliveries: %" PRIu64 " delivered, %" PRIu64 " retried, %" PRIu64 " failed, %" PRIu64
           " dropped",
           w->stats.delivered, w->stats.retried, w->stats.failed, w->stats.dropped);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    token_free(w->token);
    free(w);
    curl_global_cleanup();
}
