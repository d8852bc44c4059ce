/* Unit tests of the webhook delivery threads against real HTTP receivers on 127.0.0.1: signing
 * with the schedule's secret, retries, the destination policy, destinations side by side. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "coordinator/recurring/webhook.h"
#include "proto/log.h"

#define REQ_MAX  8
#define HEAD_MAX 4096
#define BODY_MAX 4096

typedef struct request {
    char head[HEAD_MAX + 1];
    char body[BODY_MAX + 1];
    size_t body_len;
    double at_ms; /* CLOCK_MONOTONIC when the request was read */
} request;

/* An HTTP/1.1 receiver: one request per connection, answered with the next scripted status
 * (the last one repeats). */
typedef struct receiver {
    int fd;
    unsigned port;
    pthread_t thread;
    pthread_mutex_t mu;
    int statuses[4];
    size_t nstatus;
    request req[REQ_MAX];
    size_t n;     /* requests recorded */
    size_t all;   /* requests seen, recorded or not */
    int delay_ms; /* how long it thinks before it answers */
    atomic_bool stop;
} receiver;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool read_request(int c, request *r)
{
    size_t len = 0;
    char *end = NULL;
    while (!end) {
        if (len == HEAD_MAX)
            return false;
        ssize_t got = recv(c, r->head + len, HEAD_MAX - len, 0);
        if (got <= 0)
            return false;
        len += (size_t)got;
        r->head[len] = '\0';
        end = strstr(r->head, "\r\n\r\n");
    }
    size_t head_len = (size_t)(end - r->head) + 4;
    size_t want = 0;
    for (char *p = r->head; (p = strstr(p, "\r\n")) && p < end; p += 2)
        if (strncasecmp(p + 2, "Content-Length:", 15) == 0)
            want = strtoul(p + 17, NULL, 10);
    if (want > BODY_MAX)
        return false;
    r->body_len = len - head_len;
    memcpy(r->body, r->head + head_len, r->body_len);
    r->head[head_len] = '\0';
    while (r->body_len < want) {
        ssize_t got = recv(c, r->body + r->body_len, want - r->body_len, 0);
        if (got <= 0)
            return false;
        r->body_len += (size_t)got;
    }
    r->body[r->body_len] = '\0';
    return true;
}

static void *serve(void *arg)
{
    receiver *rv = arg;
    while (!atomic_load(&rv->stop)) {
        struct pollfd pfd = {.fd = rv->fd, .events = POLLIN};
        if (poll(&pfd, 1, 20) <= 0)
            continue;
        int c = accept(rv->fd, NULL, NULL);
        if (c < 0)
            continue;
        struct timeval tv = {.tv_sec = 5};
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        request r;
        if (read_request(c, &r)) {
            r.at_ms = now_ms();
            if (rv->delay_ms)
                usleep((useconds_t)rv->delay_ms * 1000);
            pthread_mutex_lock(&rv->mu);
            size_t i = rv->all < rv->nstatus ? rv->all : rv->nstatus - 1;
            int status = rv->statuses[i];
            if (rv->n < REQ_MAX)
                rv->req[rv->n++] = r;
            rv->all++;
            pthread_mutex_unlock(&rv->mu);
            char answer[160];
            int n = snprintf(answer, sizeof answer,
                             "HTTP/1.1 %d Scripted\r\nContent-Length: 2\r\n"
                             "Connection: close\r\n\r\nok",
                             status);
            ssize_t sent = send(c, answer, (size_t)n, MSG_NOSIGNAL);
            (void)sent;
        }
        close(c);
    }
    return NULL;
}

static int listen_loopback(unsigned *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static receiver *receiver_start(const int *statuses, size_t n)
{
    receiver *rv = calloc(1, sizeof *rv);
    assert_non_null(rv);
    assert_true(n >= 1 && n <= 4);
    memcpy(rv->statuses, statuses, n * sizeof *statuses);
    rv->nstatus = n;
    rv->fd = listen_loopback(&rv->port);
    assert_int_equal(listen(rv->fd, 16), 0);
    pthread_mutex_init(&rv->mu, NULL);
    assert_int_equal(pthread_create(&rv->thread, NULL, serve, rv), 0);
    return rv;
}

static void receiver_stop(receiver *rv)
{
    atomic_store(&rv->stop, true);
    pthread_join(rv->thread, NULL);
    close(rv->fd);
    pthread_mutex_destroy(&rv->mu);
    free(rv);
}

static size_t receiver_count(receiver *rv)
{
    pthread_mutex_lock(&rv->mu);
    size_t n = rv->all;
    pthread_mutex_unlock(&rv->mu);
    return n;
}

/* The value of header name in a request head ("" when absent), into out. */
static const char *header(const request *r, const char *name, char *out, size_t cap)
{
    out[0] = '\0';
    size_t nl = strlen(name);
    for (const char *p = r->head; (p = strstr(p, "\r\n")); p += 2) {
        if (strncasecmp(p + 2, name, nl) == 0 && p[2 + nl] == ':') {
            const char *v = p + 3 + nl;
            while (*v == ' ')
                v++;
            size_t len = strcspn(v, "\r");
            if (len >= cap)
                len = cap - 1;
            memcpy(out, v, len);
            out[len] = '\0';
            break;
        }
    }
    return out;
}

/* Polls the stats until done says so, for at most 20 s (a slow, loaded machine). */
typedef bool (*stats_pred)(const sm_webhook_stats *);
static sm_webhook_stats wait_stats(sm_webhook *w, stats_pred done)
{
    sm_webhook_stats s;
    const double until = now_ms() + 20000;
    for (;;) {
        sm_webhook_get_stats(w, &s);
        if (done(&s))
            return s;
        if (now_ms() > until)
            fail_msg("stats still delivered %" PRIu64 " retried %" PRIu64 " failed %" PRIu64
                     " dropped %" PRIu64,
                     s.delivered, s.retried, s.failed, s.dropped);
        usleep(5000);
    }
}

static bool one_delivered(const sm_webhook_stats *s)
{
    return s->delivered >= 1;
}
static bool one_failed(const sm_webhook_stats *s)
{
    return s->failed >= 1;
}
static bool one_retried(const sm_webhook_stats *s)
{
    return s->retried >= 1;
}

static void url_of(char *url, size_t cap, unsigned port)
{
    snprintf(url, cap, "http://127.0.0.1:%u/hook", port);
}

static const uint8_t KEY[SM_KEY_LEN] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                        16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30};

/* Deliveries signed with KEY's secrets (or unsigned: key NULL), to loopback allowed. */
static sm_webhook *open_hook(const uint8_t *key, unsigned attempts, unsigned backoff_ms)
{
    sm_webhook *w = NULL;
    sm_error err = {0};
    sm_addr_policy allow;
    sm_webhook_policy_init(&allow);
    assert_int_equal(sm_addr_policy_parse(&allow, "loopback", &err), 0);
    const sm_webhook_cfg cfg = {.key = key,
                                .allow = &allow,
                                .attempts = attempts,
                                .backoff_ms = backoff_ms,
                                .timeout_ms = 5000};
    assert_int_equal(sm_webhook_open(&w, &cfg, &err), 0);
    assert_non_null(w);
    return w;
}

/* A delivery of schedule 7 at generation 1. */
static uint64_t post(sm_webhook *w, const char *url, const char *event, const char *body)
{
    const sm_webhook_dest to = {url, 7, 1};
    return sm_webhook_post(w, &to, event, body);
}

static void test_webhook_posts_the_body_once_signed_with_the_schedules_secret(void **state)
{
    (void)state;
    const int ok[] = {200};
    receiver *rv = receiver_start(ok, 1);
    char url[64];
    url_of(url, sizeof url, rv->port);
    const char *body = "{\"run\":7,\"host\":\"h2\",\"flag\":\"slow\"}";
    sm_webhook *w = open_hook(KEY, 3, 50);
    const int64_t before = (int64_t)time(NULL);
    uint64_t id = post(w, url, "flag", body);
    assert_true(id > 0);
    sm_webhook_stats s = wait_stats(w, one_delivered);
    assert_int_equal(s.delivered, 1);
    assert_int_equal(s.retried, 0);
    assert_int_equal(s.failed, 0);
    assert_int_equal(s.dropped, 0);
    sm_webhook_close(w);

    assert_int_equal(receiver_count(rv), 1);
    const request *r = &rv->req[0];
    assert_memory_equal(r->head, "POST /hook HTTP/1.1\r\n", 21);
    assert_int_equal(r->body_len, strlen(body));
    assert_string_equal(r->body, body);
    char v[128];
    assert_string_equal(header(r, "Content-Type", v, sizeof v), "application/json");
    assert_string_equal(header(r, "X-Sockmatrix-Event", v, sizeof v), "flag");
    char tail[32];
    snprintf(tail, sizeof tail, "-%" PRIu64, id);
    header(r, "X-Sockmatrix-Delivery", v, sizeof v);
    assert_true(strlen(v) > strlen(tail));
    assert_string_equal(v + strlen(v) - strlen(tail), tail);

    /* the receiver's side of the check: only the schedule's secret, OpenSSL's one-shot HMAC
     * over "t.body" */
    char secret[SM_WEBHOOK_SECRET_SIZE];
    sm_error err = {0};
    assert_int_equal(sm_webhook_secret(KEY, 7, 1, secret, &err), 0);
    header(r, "X-Sockmatrix-Signature", v, sizeof v);
    long long t = 0;
    int at = 0;
    assert_int_equal(sscanf(v, "t=%lld,v1=%n", &t, &at), 1);
    assert_true(at > 0);
    assert_true(t >= before && t <= (long long)time(NULL));
    char signed_text[BODY_MAX + 32];
    int n = snprintf(signed_text, sizeof signed_text, "%lld.%s", t, body);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned mac_len = 0;
    assert_non_null(HMAC(EVP_sha256(), secret, (int)strlen(secret),
                         (const unsigned char *)signed_text, (size_t)n, mac, &mac_len));
    assert_int_equal(mac_len, 32);
    char want[80] = "";
    for (unsigned i = 0; i < mac_len; i++)
        snprintf(want + 2 * i, 3, "%02x", mac[i]);
    assert_string_equal(v + at, want);
    receiver_stop(rv);
}

static void test_webhook_without_a_key_sends_no_signature(void **state)
{
    (void)state;
    const int ok[] = {204};
    receiver *rv = receiver_start(ok, 1);
    char url[64];
    url_of(url, sizeof url, rv->port);
    sm_webhook *w = open_hook(NULL, 3, 50);
    assert_true(post(w, url, "regression", "{}") > 0);
    wait_stats(w, one_delivered);
    sm_webhook_close(w);
    assert_int_equal(receiver_count(rv), 1);
    char v[128];
    assert_string_equal(header(&rv->req[0], "X-Sockmatrix-Signature", v, sizeof v), "");
    assert_string_equal(header(&rv->req[0], "X-Sockmatrix-Event", v, sizeof v), "regression");
    assert_string_equal(rv->req[0].body, "{}");
    receiver_stop(rv);
}

static void test_webhook_retries_with_growing_waits_until_a_2xx(void **state)
{
    (void)state;
    const int script[] = {500, 500, 200};
    receiver *rv = receiver_start(script, 3);
    char url[64];
    url_of(url, sizeof url, rv->port);
    sm_webhook *w = open_hook(KEY, 5, 50);
    assert_true(post(w, url, "flag", "{\"n\":1}") > 0);
    sm_webhook_stats s = wait_stats(w, one_delivered);
    assert_int_equal(s.delivered, 1);
    assert_int_equal(s.retried, 2);
    assert_int_equal(s.failed, 0);
    sm_webhook_close(w);

    assert_int_equal(receiver_count(rv), 3);
    char first[128], v[128];
    header(&rv->req[0], "X-Sockmatrix-Delivery", first, sizeof first);
    assert_true(first[0] != '\0');
    for (size_t i = 1; i < 3; i++) {
        assert_string_equal(header(&rv->req[i], "X-Sockmatrix-Delivery", v, sizeof v), first);
        assert_string_equal(rv->req[i].body, "{\"n\":1}");
    }
    /* Each attempt waits at least its wait, 50 ms then 100: the second gap's lower bound, twice
     * the first wait, is the growth. A loaded machine delays any attempt, so the gaps have no
     * upper bound but a sanity one, and the first may be longer than the second. */
    const double gap1 = rv->req[1].at_ms - rv->req[0].at_ms;
    const double gap2 = rv->req[2].at_ms - rv->req[1].at_ms;
    if (!(gap1 >= 45 && gap2 >= 95 && gap1 < 10000 && gap2 < 10000))
        fail_msg("gaps %.1f ms then %.1f ms; want >= 50 then >= 100", gap1, gap2);
    receiver_stop(rv);
}

static void test_webhook_gives_up_after_its_attempts(void **state)
{
    (void)state;
    const int bad[] = {500};
    receiver *rv = receiver_start(bad, 1);
    char url[64];
    url_of(url, sizeof url, rv->port);
    sm_webhook *w = open_hook(KEY, 3, 50);
    assert_true(post(w, url, "flag", "{}") > 0);
    sm_webhook_stats s = wait_stats(w, one_failed);
    assert_int_equal(s.failed, 1);
    assert_int_equal(s.retried, 2);
    assert_int_equal(s.delivered, 0);
    /* a fourth attempt would come 200 ms after the third: give it the time to show */
    usleep(400000);
    assert_int_equal(receiver_count(rv), 3);
    sm_webhook_close(w);
    receiver_stop(rv);
}

static void test_webhook_retries_a_refused_connection_then_fails(void **state)
{
    (void)state;
    unsigned port;
    close(listen_loopback(&port)); /* a port nobody listens on */
    char url[64];
    url_of(url, sizeof url, port);
    sm_webhook *w = open_hook(KEY, 2, 50);
    assert_true(post(w, url, "flag", "{}") > 0);
    sm_webhook_stats s = wait_stats(w, one_failed);
    assert_int_equal(s.failed, 1);
    assert_int_equal(s.retried, 1);
    assert_int_equal(s.delivered, 0);
    sm_webhook_close(w);
}

static void test_webhook_close_cuts_the_wait_short_and_drops(void **state)
{
    (void)state;
    const int bad[] = {503};
    receiver *rv = receiver_start(bad, 1);
    char url[64];
    url_of(url, sizeof url, rv->port);
    sm_webhook *w = open_hook(KEY, 3, 60000);
    uint64_t id = post(w, url, "flag", "{}");
    assert_true(id > 0);
    wait_stats(w, one_retried);

    /* the drop is said in the log: catch stderr while closing */
    FILE *log = tmpfile();
    assert_non_null(log);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(log), STDERR_FILENO) >= 0);
    const double t0 = now_ms();
    sm_webhook_close(w);
    const double took = now_ms() - t0;
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    if (took >= 5000)
        fail_msg("close took %.0f ms while waiting out a 60 s backoff", took);

    char text[4096];
    rewind(log);
    size_t n = fread(text, 1, sizeof text - 1, log);
    text[n] = '\0';
    fclose(log);
    char want[64];
    snprintf(want, sizeof want, "SM-WEBHOOK-DROPPED delivery %" PRIu64 " (flag)", id);
    if (!strstr(text, want))
        fail_msg("no \"%s\" in the log: %s", want, text);
    assert_int_equal(receiver_count(rv), 1);
    receiver_stop(rv);
}

static void test_webhook_refuses_a_post_when_the_queue_is_full(void **state)
{
    (void)state;
    unsigned port;
    close(listen_loopback(&port));
    char url[64];
    url_of(url, sizeof url, port);
    const int level = sm_log_level;
    sm_log_level = LOG_CRIT; /* 257 drops would fill the test's output */
    sm_webhook *w = open_hook(NULL, 2, 60000);
    uint64_t first = post(w, url, "flag", "{}");
    assert_true(first > 0);
    /* the first one waits between its attempts: the queue is empty again */
    wait_stats(w, one_retried);
    uint64_t last = first;
    for (int i = 0; i < SM_WEBHOOK_QUEUE_MAX; i++) {
        uint64_t id = post(w, url, "flag", "{}");
        assert_true(id > last);
        last = id;
    }
    assert_int_equal(post(w, url, "flag", "{}"), 0);
    sm_webhook_stats s;
    sm_webhook_get_stats(w, &s);
    assert_int_equal(s.dropped, 1);
    assert_int_equal(s.delivered, 0);
    const double t0 = now_ms();
    sm_webhook_close(w);
    sm_log_level = level;
    assert_true(now_ms() - t0 < 5000);
}

static void test_webhook_refuses_what_it_cannot_send(void **state)
{
    (void)state;
    const int level = sm_log_level;
    sm_log_level = LOG_CRIT;
    sm_webhook *w = open_hook(KEY, 1, 50);
    assert_int_equal(sm_webhook_post(w, NULL, "flag", "{}"), 0);
    assert_int_equal(post(w, "ftp://127.0.0.1/x", "flag", "{}"), 0);
    assert_int_equal(post(w, "http://u:p@127.0.0.1/x", "flag", "{}"), 0);
    assert_int_equal(post(w, "", "flag", "{}"), 0);
    /* the event goes into a header line */
    assert_int_equal(post(w, "http://127.0.0.1/x", "flag\r\nX-Evil: 1", "{}"), 0);
    assert_int_equal(post(w, "http://127.0.0.1/x", "", "{}"), 0);
    assert_int_equal(post(w, "http://127.0.0.1/x", "flag", NULL), 0);
    sm_webhook_stats s;
    sm_webhook_get_stats(w, &s);
    assert_int_equal(s.dropped, 7);
    sm_webhook_close(w);
    sm_webhook_close(NULL);
    sm_log_level = level;
    sm_error err = {0};
    assert_int_equal(sm_webhook_url_check("https://hooks.lab.example/sockmatrix", &err), 0);
    assert_int_equal(sm_webhook_url_check("gopher://x/", &err), SM_EINVAL);
}

/* stderr, caught while fn(arg) runs, into text. */
static void catch_log(void (*fn)(void *), void *arg, char *text, size_t cap)
{
    FILE *log = tmpfile();
    assert_non_null(log);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(log), STDERR_FILENO) >= 0);
    fn(arg);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(log);
    size_t n = fread(text, 1, cap - 1, log);
    text[n] = '\0';
    fclose(log);
}

static bool one_done(const sm_webhook_stats *s)
{
    return s->delivered + s->failed >= 1;
}

static bool two_failed(const sm_webhook_stats *s)
{
    return s->failed >= 2;
}

static void refuse_two(void *arg)
{
    receiver *rv = arg;
    sm_webhook *w = NULL;
    sm_error err = {0};
    /* the default policy; many attempts, so that a retry would show */
    const sm_webhook_cfg cfg = {.key = KEY, .attempts = 5, .backoff_ms = 50};
    assert_int_equal(sm_webhook_open(&w, &cfg, &err), 0);
    char url[64];
    url_of(url, sizeof url, rv->port);
    assert_true(post(w, url, "flag", "{}") > 0);
    /* a name is checked on the address it resolves to */
    snprintf(url, sizeof url, "http://localhost:%u/hook", rv->port);
    assert_true(post(w, url, "flag", "{}") > 0);
    sm_webhook_stats s = wait_stats(w, two_failed);
    assert_int_equal(s.failed, 2);
    assert_int_equal(s.refused, 2);
    assert_int_equal(s.retried, 0);
    assert_int_equal(s.delivered, 0);
    /* the schedule's status says why, with the option */
    char text[400];
    int64_t at = 0;
    assert_true(sm_webhook_last(w, 7, text, sizeof text, &at));
    assert_non_null(strstr(text, "refused flag delivery "));
    assert_non_null(strstr(text, "127.0.0.1 is a loopback address"));
    assert_non_null(strstr(text, "(--webhook-allow loopback allows it)"));
    assert_true(at > 1700000000000);
    assert_false(sm_webhook_last(w, 8, text, sizeof text, &at));
    sm_webhook_close(w);
}

static void test_webhook_default_policy_refuses_loopback_at_connect_without_retry(void **state)
{
    (void)state;
    const int ok[] = {200};
    receiver *rv = receiver_start(ok, 1);
    char text[8192];
    catch_log(refuse_two, rv, text, sizeof text);
    assert_int_equal(receiver_count(rv), 0);
    char want[128];
    snprintf(want, sizeof want, "to http://127.0.0.1:%u/hook: not sent: 127.0.0.1 is a loopback",
             rv->port);
    if (!strstr(text, want))
        fail_msg("no \"%s\" in the log: %s", want, text);
    snprintf(want, sizeof want, "to http://localhost:%u/hook: not sent: ", rv->port);
    if (!strstr(text, want) || !strstr(text, "SM-WEBHOOK-REFUSED"))
        fail_msg("no \"%s\" in the log: %s", want, text);
    if (!strstr(text, "(--webhook-allow loopback allows it)"))
        fail_msg("the option is not named: %s", text);
    receiver_stop(rv);
}

static bool one_sent_of_two(const sm_webhook_stats *s)
{
    return s->delivered >= 1;
}

/* A receiver that takes 3 s to answer holds up its own deliveries, not another's. */
static void test_webhook_a_slow_receiver_does_not_delay_another(void **state)
{
    (void)state;
    const int ok[] = {200};
    receiver *slow = receiver_start(ok, 1), *fast = receiver_start(ok, 1);
    slow->delay_ms = 3000;
    char su[64], fu[64];
    url_of(su, sizeof su, slow->port);
    url_of(fu, sizeof fu, fast->port);
    sm_webhook *w = open_hook(KEY, 1, 50);
    const double t0 = now_ms();
    assert_true(post(w, su, "flag", "{\"n\":1}") > 0);
    assert_true(post(w, su, "flag", "{\"n\":2}") > 0);
    assert_true(post(w, fu, "flag", "{\"n\":3}") > 0);
    wait_stats(w, one_sent_of_two);
    const double took = now_ms() - t0;
    assert_int_equal(receiver_count(fast), 1);
    if (took >= 2000)
        fail_msg("the fast receiver's delivery took %.0f ms behind the slow one", took);
    /* the slow one's second waits for its first (one at a time, in order), and is still
     * queued when close comes, 3 s before it could be sent */
    sm_webhook_close(w);
    assert_int_equal(receiver_count(slow), 1);
    assert_string_equal(slow->req[0].body, "{\"n\":1}");
    receiver_stop(slow);
    receiver_stop(fast);
}

/* http_proxy in the coordinator's environment moves nothing: the delivery goes straight. */
static void test_webhook_ignores_proxies_from_the_environment(void **state)
{
    (void)state;
    const int ok[] = {200};
    receiver *proxy = receiver_start(ok, 1), *target = receiver_start(ok, 1);
    char pu[64], tu[64];
    snprintf(pu, sizeof pu, "http://127.0.0.1:%u", proxy->port);
    url_of(tu, sizeof tu, target->port);
    assert_int_equal(setenv("http_proxy", pu, 1), 0);
    assert_int_equal(setenv("HTTP_PROXY", pu, 1), 0);
    assert_int_equal(setenv("all_proxy", pu, 1), 0);
    sm_webhook *w = open_hook(KEY, 1, 50);
    assert_true(post(w, tu, "flag", "{}") > 0);
    sm_webhook_stats s = wait_stats(w, one_done);
    char text[400];
    int64_t at = 0;
    assert_true(sm_webhook_last(w, 7, text, sizeof text, &at));
    assert_string_equal(text, "delivered flag as delivery 1");
    sm_webhook_close(w);
    unsetenv("http_proxy");
    unsetenv("HTTP_PROXY");
    unsetenv("all_proxy");
    assert_int_equal(s.delivered, 1);
    assert_int_equal(receiver_count(target), 1);
    assert_int_equal(receiver_count(proxy), 0);
    receiver_stop(proxy);
    receiver_stop(target);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_webhook_posts_the_body_once_signed_with_the_schedules_secret),
        cmocka_unit_test(test_webhook_without_a_key_sends_no_signature),
        cmocka_unit_test(test_webhook_retries_with_growing_waits_until_a_2xx),
        cmocka_unit_test(test_webhook_gives_up_after_its_attempts),
        cmocka_unit_test(test_webhook_retries_a_refused_connection_then_fails),
        cmocka_unit_test(test_webhook_close_cuts_the_wait_short_and_drops),
        cmocka_unit_test(test_webhook_refuses_a_post_when_the_queue_is_full),
        cmocka_unit_test(test_webhook_refuses_what_it_cannot_send),
        cmocka_unit_test(test_webhook_default_policy_refuses_loopback_at_connect_without_retry),
        cmocka_unit_test(test_webhook_a_slow_receiver_does_not_delay_another),
        cmocka_unit_test(test_webhook_ignores_proxies_from_the_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
