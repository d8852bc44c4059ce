/* Webhook delivery: a queue of signed JSON POSTs and the threads that send them (libcurl), each
 * connection checked against the destination policy. */
#include "coordinator/recurring/webhook.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/log.h"

#define DEFAULT_ATTEMPTS   5u
#define DEFAULT_BACKOFF_MS 1000u
#define DEFAULT_TIMEOUT_MS 5000u
#define WAIT_MAX_MS        3600000u /* doubling stops at an hour between attempts */
#define EVENT_MAX          64
#define ANSWER_MAX         65536 /* bytes of a receiver's answer read before it is cut off */
#define DEST_MAX           300   /* "scheme://host:port" of a URL, with its NUL */
#define REASON_MAX         256

typedef struct delivery {
    struct delivery *next;
    uint64_t id, schedule;
    char *url, *event, *body;
    size_t body_len;
    char dest[DEST_MAX];                 /* what one thread at a time delivers to */
    char secret[SM_WEBHOOK_SECRET_SIZE]; /* "" unsigned */
} delivery;

/* A schedule's last ended delivery, for sm_webhook_last. */
typedef struct last_status {
    uint64_t schedule; /* 0: a free slot */
    int64_t at_ms;
    char text[REASON_MAX + 64];
} last_status;

struct sm_webhook {
    pthread_t threads[SM_WEBHOOK_THREADS];
    size_t n_threads;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* on CLOCK_MONOTONIC: queue changes, a destination freed, stop */
    delivery *head, *tail;
    size_t queued;
    bool stopping;
    uint64_t next_id;
    sm_webhook_stats stats;
    const delivery *busy[SM_WEBHOOK_THREADS]; /* what each thread delivers; NULL idle */
    last_status last[SM_WEBHOOK_STATUS_KEPT]; /* the most recent schedules' outcomes */
    bool signs;
    uint8_t key[SM_KEY_LEN];
    sm_addr_policy allow;
    unsigned attempts, backoff_ms, timeout_ms;
    char instance[17]; /* random per open, so that delivery ids stay unique across restarts */
};

/* One thread's share: its slot in busy and its libcurl handle. */
typedef struct worker {
    sm_webhook *w;
    size_t slot;
} worker;

static void delivery_free(delivery *d)
{
    if (!d)
        return;
    free(d->url);
    free(d->event);
    free(d->body);
    OPENSSL_cleanse(d->secret, sizeof d->secret);
    free(d);
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

/* What an attempt's socket callback saw: the first address the policy refused, and whether
 * any address was allowed (its connection may then have failed for reasons of its own). */
typedef struct checked {
    const sm_addr_policy *allow;
    char refused[REASON_MAX];
    bool allowed;
} checked;

/* libcurl's socket for each address it is about to connect to, after its DNS lookup: the
 * check happens on the very address, so a name that resolves (or rebinds) to a refused one
 * reaches nothing. CURL_SOCKET_BAD makes libcurl try the name's other addresses, if any. */
static curl_socket_t open_checked(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
    checked *c = arg;
    char addr[INET6_ADDRSTRLEN] = "";
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    memcpy(&ss, &a->addr, a->addrlen < sizeof ss ? a->addrlen : sizeof ss);
    if (purpose != CURLSOCKTYPE_IPCXN)
        return CURL_SOCKET_BAD;
    if (a->family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)&ss)->sin_addr, addr, sizeof addr);
    else if (a->family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&ss)->sin6_addr, addr, sizeof addr);
    sm_error why = {0};
    if (!*addr || sm_addr_policy_check(c->allow, addr, &why) != 0) {
        if (!*c->refused)
            snprintf(c->refused, sizeof c->refused, "%s",
                     *addr ? why.msg : "not an IPv4 or IPv6 address");
        return CURL_SOCKET_BAD;
    }
    c->allowed = true;
    return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

typedef enum { SENT, FAILED, REFUSED } outcome;

/* One POST. SENT on a 2xx answer; otherwise what went wrong, in words, in why: REFUSED when
 * the policy refused every address the name gave (an allowed one that failed is FAILED, and
 * retried). */
static outcome attempt(CURL *curl, const sm_webhook *w, const delivery *d,
                       struct curl_slist *headers, char *why, size_t why_cap)
{
    char errbuf[CURL_ERROR_SIZE] = "";
    size_t seen = 0;
    checked chk = {.allow = &w->allow};
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
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_checked);
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, &chk);
    /* http_proxy and friends in the coordinator's environment would move the connection to a
     * proxy, which the address check would then judge instead of the receiver. */
    curl_easy_setopt(curl, CURLOPT_PROXY, "");
    curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    /* the status line came before the answer that was too long: it still counts */
    if ((rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && seen > ANSWER_MAX)) && status >= 200 &&
        status <= 299)
        return SENT;
    if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && status > 0))
        snprintf(why, why_cap, "status %ld", status);
    else if (*chk.refused && !chk.allowed) {
        snprintf(why, why_cap, "%s", chk.refused);
        return REFUSED;
    } else
        snprintf(why, why_cap, "%s", *errbuf ? errbuf : curl_easy_strerror(rc));
    return FAILED;
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

/* The headers of one attempt: signed now, so that the receiver's replay window counts from
 * this attempt, not from the first. */
static struct curl_slist *make_headers(const sm_webhook *w, const delivery *d)
{
    char line[160];
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
    if (*d->secret) {
        char sig[SM_WEBHOOK_SIG_SIZE];
        sm_webhook_sign(d->secret, (int64_t)time(NULL), d->body, d->body_len, sig);
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

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Keeps how d ended as its schedule's last status, in the slot of that schedule or else the
 * least recent one. Called with w->mu held. */
static void note(sm_webhook *w, const delivery *d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(sm_webhook *w, const delivery *d, const char *fmt, ...)
{
    last_status *slot = &w->last[0];
    for (size_t i = 0; i < SM_WEBHOOK_STATUS_KEPT; i++) {
        if (w->last[i].schedule == d->schedule) {
            slot = &w->last[i];
            break;
        }
        if (w->last[i].at_ms < slot->at_ms)
            slot = &w->last[i];
    }
    slot->schedule = d->schedule;
    slot->at_ms = wall_ms();
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(slot->text, sizeof slot->text, fmt, ap);
    va_end(ap);
}

static void headers_failed(sm_webhook *w, const delivery *d)
{
    sm_log(LOG_ERR, "SM-WEBHOOK-FAILED",
           "delivery %" PRIu64 " to %s: its headers or signature could not be made (out of memory)",
           d->id, d->url);
    pthread_mutex_lock(&w->mu);
    w->stats.failed++;
    pthread_mutex_unlock(&w->mu);
}

/* All attempts of one delivery; the stats under w->mu. */
static void deliver(sm_webhook *w, CURL *curl, const delivery *d)
{
    unsigned wait_ms = w->backoff_ms;
    char why[CURL_ERROR_SIZE + REASON_MAX];
    for (unsigned n = 1;; n++) {
        struct curl_slist *headers = make_headers(w, d);
        if (!headers) {
            headers_failed(w, d);
            return;
        }
        const outcome got = attempt(curl, w, d, headers, why, sizeof why);
        curl_slist_free_all(headers);
        pthread_mutex_lock(&w->mu);
        if (got == SENT) {
            w->stats.delivered++;
            note(w, d, "delivered %s as delivery %" PRIu64, d->event, d->id);
            pthread_mutex_unlock(&w->mu);
            return;
        }
        /* The policy gives the same answer next time: waiting would only delay the news. */
        if (got == REFUSED) {
            w->stats.failed++;
            w->stats.refused++;
            note(w, d, "refused %s delivery %" PRIu64 ": %s", d->event, d->id, why);
            pthread_mutex_unlock(&w->mu);
            sm_log(LOG_ERR, "SM-WEBHOOK-REFUSED",
                   "delivery %" PRIu64 " (%s) of schedule %" PRIu64 " to %s: not sent: %s", d->id,
                   d->event, d->schedule, d->url, why);
            return;
        }
        if (n >= w->attempts) {
            w->stats.failed++;
            note(w, d, "failed %s delivery %" PRIu64 " after %u attempts: %s", d->event, d->id, n,
                 why);
            pthread_mutex_unlock(&w->mu);
            sm_log(LOG_ERR, "SM-WEBHOOK-FAILED",
                   "delivery %" PRIu64 " (%s) to %s: gave up after %u attempts, the last: %s",
                   d->id, d->event, d->url, n, why);
            return;
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
            return;
        }
        pthread_mutex_unlock(&w->mu);
        wait_ms = wait_ms > WAIT_MAX_MS / 2 ? WAIT_MAX_MS : wait_ms * 2;
    }
}

/* Whether another thread delivers to d's destination now. Called with w->mu held. */
static bool dest_busy(const sm_webhook *w, const delivery *d)
{
    for (size_t i = 0; i < SM_WEBHOOK_THREADS; i++)
        if (w->busy[i] && strcmp(w->busy[i]->dest, d->dest) == 0)
            return true;
    return false;
}

/* Unlinks and returns the oldest queued delivery to a destination nobody delivers to; NULL
 * when there is none. Called with w->mu held. */
static delivery *take(sm_webhook *w)
{
    delivery *prev = NULL;
    for (delivery *d = w->head; d; prev = d, d = d->next) {
        if (dest_busy(w, d))
            continue;
        if (prev)
            prev->next = d->next;
        else
            w->head = d->next;
        if (w->tail == d)
            w->tail = prev;
        d->next = NULL;
        w->queued--;
        return d;
    }
    return NULL;
}

static void *run(void *arg)
{
    worker *me = arg;
    sm_webhook *w = me->w;
    /* one handle for the thread's life: connections to a receiver are reused between posts */
    CURL *curl = curl_easy_init();
    pthread_mutex_lock(&w->mu);
    for (;;) {
        delivery *d = NULL;
        while (!w->stopping && !(d = take(w)))
            pthread_cond_wait(&w->cv, &w->mu);
        if (!d) /* stopping: close drops what is queued */
            break;
        w->busy[me->slot] = d;
        if (!curl) {
            w->stats.failed++;
            pthread_mutex_unlock(&w->mu);
            sm_log(LOG_ERR, "SM-WEBHOOK-FAILED", "delivery %" PRIu64 " to %s: no libcurl handle",
                   d->id, d->url);
        } else {
            pthread_mutex_unlock(&w->mu);
            deliver(w, curl, d);
        }
        pthread_mutex_lock(&w->mu);
        w->busy[me->slot] = NULL;
        /* another thread may wait for this destination */
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        delivery_free(d);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    curl_easy_cleanup(curl);
    free(me);
    return NULL;
}

/* Stops and joins the threads started so far. */
static void stop_threads(sm_webhook *w)
{
    pthread_mutex_lock(&w->mu);
    w->stopping = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    for (size_t i = 0; i < w->n_threads; i++)
        pthread_join(w->threads[i], NULL);
    w->n_threads = 0;
}

static int start_threads(sm_webhook *w, sm_error *err)
{
    for (size_t i = 0; i < SM_WEBHOOK_THREADS; i++) {
        worker *me = malloc(sizeof *me);
        if (!me)
            return sm_error_set(err, SM_ENOMEM, "webhook: out of memory");
        *me = (worker){.w = w, .slot = i};
        int e = pthread_create(&w->threads[i], NULL, run, me);
        if (e != 0) {
            free(me);
            return sm_error_sys(err, e, "webhook: pthread_create");
        }
        w->n_threads++;
    }
    return 0;
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
    if (cfg->allow)
        w->allow = *cfg->allow;
    else
        sm_webhook_policy_init(&w->allow);
    if (cfg->key) {
        memcpy(w->key, cfg->key, SM_KEY_LEN);
        w->signs = true;
    }
    int rc = SM_ENOMEM;
    unsigned char rnd[8];
    if (RAND_bytes(rnd, sizeof rnd) != 1) {
        sm_error_set(err, rc, "webhook: no random bytes for the delivery ids");
        goto fail_key;
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
        goto fail_key;
    }
    if ((e = pthread_mutex_init(&w->mu, NULL)) != 0) {
        rc = sm_error_sys(err, e, "webhook: pthread_mutex_init");
        goto fail_cond;
    }
    if ((rc = start_threads(w, err)) != 0)
        goto fail_threads;
    *out = w;
    return 0;
fail_threads:
    stop_threads(w);
    pthread_mutex_destroy(&w->mu);
fail_cond:
    pthread_cond_destroy(&w->cv);
fail_key:
    OPENSSL_cleanse(w->key, sizeof w->key);
    free(w);
    curl_global_cleanup();
    return rc;
}

/* "scheme://authority" of url, lower-cased: deliveries with the same go one at a time. */
static void dest_of(const char *url, char out[DEST_MAX])
{
    const char *h = strstr(url, "://");
    size_t n = h ? (size_t)(h - url) + 3 + strcspn(h + 3, "/?#") : strlen(url);
    if (n >= DEST_MAX)
        n = DEST_MAX - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)(url[i] >= 'A' && url[i] <= 'Z' ? url[i] - 'A' + 'a' : url[i]);
    out[n] = '\0';
}

static void refuse_post(sm_webhook *w, const char *url, const char *event, const char *why)
{
    pthread_mutex_lock(&w->mu);
    w->stats.dropped++;
    pthread_mutex_unlock(&w->mu);
    sm_log(LOG_ERR, "SM-WEBHOOK-DROPPED", "a %s delivery to %s refused: %s",
           event_ok(event) ? event : "(bad event)", url ? url : "(none)", why);
}

uint64_t sm_webhook_post(sm_webhook *w, const sm_webhook_dest *to, const char *event,
                         const char *body)
{
    sm_error err = {0};
    const char *url = to ? to->url : NULL;
    if (sm_webhook_url_check(url, &err) != 0 || !event_ok(event) || !body) {
        refuse_post(w, url, event, err.code ? err.msg : "no body or a bad event name");
        return 0;
    }
    delivery *d = calloc(1, sizeof *d);
    if (d) {
        d->url = strdup(url);
        d->event = strdup(event);
        d->body_len = strlen(body);
        d->body = strdup(body);
        d->schedule = to->schedule;
        dest_of(url, d->dest);
        if (w->signs &&
            sm_webhook_secret(w->key, to->schedule, to->generation, d->secret, &err) != 0) {
            delivery_free(d);
            refuse_post(w, url, event, err.msg);
            return 0;
        }
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
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    if (!id) {
        refuse_post(w, url, event, why);
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

bool sm_webhook_last(sm_webhook *w, uint64_t schedule, char *out, size_t cap, int64_t *at_ms)
{
    bool found = false;
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < SM_WEBHOOK_STATUS_KEPT && !found; i++)
        if (schedule && w->last[i].schedule == schedule) {
            snprintf(out, cap, "%s", w->last[i].text);
            *at_ms = w->last[i].at_ms;
            found = true;
        }
    pthread_mutex_unlock(&w->mu);
    return found;
}

void sm_webhook_close(sm_webhook *w)
{
    if (!w)
        return;
    stop_threads(w);
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
    sm_log(LOG_INFO, "SM-WEBHOOK-STOP",
           "deliveries: %" PRIu64 " delivered, %" PRIu64 " retried, %" PRIu64 " failed (%" PRIu64
           " refused by --webhook-allow), %" PRIu64 " dropped",
           w->stats.delivered, w->stats.retried, w->stats.failed, w->stats.refused,
           w->stats.dropped);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    OPENSSL_cleanse(w->key, sizeof w->key);
    free(w);
    curl_global_cleanup();
}
