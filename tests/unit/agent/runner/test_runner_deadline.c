/* Unit tests of the time limit at a job's end: a job of few, slow calls (none of which blocks
 * long enough for the I/O tick, and too few for the every-SM_IO_CHECK_EVERY look at the clock)
 * that finishes past its limit is a limited failure, not a sample. The slowness comes from a
 * relay between the two sides of a pair job that holds every chunk for a while, so the job
 * ends past its limit on a machine of any speed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/runner/runner.h"
#include "agent/workloads/workload.h"
#include "proto/result.h"
#include "tests/unit/testutil.h"

/* ---- a relay that holds each chunk delay_ms before passing it on ---- */

typedef struct relay {
    int lfd;
    uint16_t port;     /* where it listens */
    uint16_t upstream; /* where it connects for each connection it accepts */
    unsigned delay_ms;
    size_t chunk;
    atomic_int stop;
    unsigned conns; /* connections relayed */
    pthread_t thread;
} relay;

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int connect_to(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Passes bytes both ways until both sides closed their writing end (or one failed). */
static void pump(relay *r, int a, int b)
{
    static char buf[1 << 20];
    int fds[2] = {a, b};
    bool open[2] = {true, true};
    while ((open[0] || open[1]) && !atomic_load(&r->stop)) {
        struct pollfd pf[2] = {{.fd = open[0] ? a : -1, .events = POLLIN},
                               {.fd = open[1] ? b : -1, .events = POLLIN}};
        if (poll(pf, 2, 50) < 0)
            return;
        for (int i = 0; i < 2; i++) {
            if (!open[i] || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            size_t want = r->chunk < sizeof buf ? r->chunk : sizeof buf;
            ssize_t n = recv(fds[i], buf, want, 0);
            if (n <= 0) {
                if (n < 0)
                    return;
                open[i] = false;
                shutdown(fds[1 - i], SHUT_WR);
                continue;
            }
            usleep(r->delay_ms * 1000u);
            if (write_all(fds[1 - i], buf, (size_t)n))
                return;
        }
    }
}

static void *relay_main(void *arg)
{
    relay *r = arg;
    while (!atomic_load(&r->stop)) {
        struct pollfd pf = {.fd = r->lfd, .events = POLLIN};
        if (poll(&pf, 1, 50) <= 0)
            continue;
        int a = accept(r->lfd, NULL, NULL);
        if (a < 0)
            continue;
        int b = connect_to(r->upstream);
        if (b >= 0) {
            pump(r, a, b);
            r->conns++;
            close(b);
        }
        close(a);
    }
    return NULL;
}

static void relay_start(relay *r, uint16_t upstream, unsigned delay_ms, size_t chunk)
{
    memset(r, 0, sizeof *r);
    r->upstream = upstream;
    r->delay_ms = delay_ms;
    r->chunk = chunk;
    r->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(r->lfd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    assert_int_equal(bind(r->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(r->lfd, 16), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(r->lfd, (struct sockaddr *)&a, &len), 0);
    r->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&r->thread, NULL, relay_main, r), 0);
}

static void relay_stop(relay *r)
{
    atomic_store(&r->stop, 1);
    pthread_join(r->thread, NULL);
    close(r->lfd);
}

/* ---- the server side of a pair job on a thread of its own ---- */

typedef struct server_run {
    const sm_params *p;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint16_t port;
    bool done;
    int rc;
    sm_error err;
    sm_result out;
} server_run;

static void on_ready(void *arg, uint16_t port)
{
    server_run *s = arg;
    pthread_mutex_lock(&s->mu);
    s->port = port;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void *server_main(void *arg)
{
    server_run *s = arg;
    sm_runner_opts o = {0};
    int rc = sm_runner_serve(s->p, "127.0.0.1", &o, on_ready, s, &s->out, &s->err);
    pthread_mutex_lock(&s->mu);
    s->rc = rc;
    s->done = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Runs p as a pair job, the client reaching the server through a relay holding each chunk
 * delay_ms; *m is the merged result. */
static void run_relayed(const sm_params *p, unsigned delay_ms, size_t chunk, sm_result *m)
{
    static server_run s;
    memset(&s, 0, sizeof s);
    s.p = p;
    sm_result_init(&s.out);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    assert_int_equal(pthread_create(&s.thread, NULL, server_main, &s), 0);
    pthread_mutex_lock(&s.mu);
    while (s.port == 0 && !s.done)
        pthread_cond_wait(&s.cv, &s.mu);
    uint16_t port = s.port;
    pthread_mutex_unlock(&s.mu);
    assert_int_not_equal(port, 0);

    relay r;
    relay_start(&r, port, delay_ms, chunk);
    sm_runner_opts co = {0};
    sm_error err = {0};
    sm_result client;
    sm_result_init(&client);
    int rc = sm_runner_connect(p, "127.0.0.1", r.port, &co, &client, &err);
    pthread_join(s.thread, NULL);
    relay_stop(&r);
    if (rc != 0 || s.rc != 0)
        fail_msg("connect rc %d (%s), serve rc %d (%s)", rc, err.msg, s.rc, s.err.msg);
    sm_result_init(m);
    assert_int_equal(sm_result_merge_pair(p, &s.out, &client, m), 0);
    sm_result_fini(&s.out);
    sm_result_fini(&client);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.cv);
}

static sm_params pair_params(sm_workload_kind w)
{
    sm_params p;
    sm_params_init(&p, w);
    p.scope = SM_SCOPE_PAIR;
    p.time_limit_ms = SM_TIME_LIMIT_MS_MIN;
    return p;
}

static void validate(sm_params *p)
{
    sm_error err;
    if (sm_params_validate(p, &err) != 0)
        fail_msg("%s", err.msg);
}

/* The merged result is a failure on the time limit, as the tables count one ("limited"). */
static void assert_limited(const sm_result *m)
{
    if (m->ok)
        fail_msg("the job was stored as ok, though it ended past its %u ms limit",
                 SM_TIME_LIMIT_MS_MIN);
    if (!strstr(m->reason, "time limit of 100 ms reached"))
        fail_msg("not a time-limit failure: %s", m->reason);
}

/* rr: 5 round trips, each held 2 x 40 ms by the relay: the client's 10 calls each block less
 * than the 100 ms tick, and the job ends about 400 ms into a 100 ms limit. (On a loaded
 * machine a call may block past the tick and fail there instead: a time-limit failure too.) */
static void test_rr_ending_past_its_limit_is_limited(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_RR);
    p.count = 5;
    validate(&p);
    sm_result m;
    run_relayed(&p, 40, 1 << 16, &m);
    assert_limited(&m);
    assert_non_null(strstr(m.reason, "client: "));
    sm_result_fini(&m);
}

/* The same job through a relay that holds nothing ends in time: the relay is not the failure. */
static void test_rr_ending_in_time_is_a_sample(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_RR);
    p.count = 5;
    p.time_limit_ms = 5000;
    validate(&p);
    sm_result m;
    run_relayed(&p, 40, 1 << 16, &m);
    if (!m.ok)
        fail_msg("%s", m.reason);
    assert_true(sm_result_get(&m, SM_M_SECONDS) > 0.3);
    sm_result_fini(&m);
}

/* stream: 1 MiB passed on in 256 KiB chunks held 40 ms each; the receiver times the job. */
static void test_stream_ending_past_its_limit_is_limited(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_STREAM);
    p.msg_size = 65536;
    p.count = 16;
    validate(&p);
    sm_result m;
    run_relayed(&p, 40, 256u << 10, &m);
    assert_limited(&m);
    sm_result_fini(&m);
}

/* connect: 3 connections, each echo held 2 x 40 ms. */
static void test_connect_ending_past_its_limit_is_limited(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_CONNECT);
    p.count = 3;
    validate(&p);
    sm_result m;
    run_relayed(&p, 40, 1 << 16, &m);
    assert_limited(&m);
    sm_result_fini(&m);
}

/* The check itself, as every workload's side (http's client too) meets it after returning 0. */
static void test_check_end_fails_only_a_measured_part_past_the_deadline(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_HTTP);
    p.time_limit_ms = 339;
    sm_job job = {.p = &p, .deadline_ns = 10000000000ull};
    sm_side s = {.job = &job};

    s.t1_ns = 0; /* a side that does not time the job */
    assert_int_equal(sm_io_check_end(&s), 0);
    s.t1_ns = job.deadline_ns; /* at the limit, not past it */
    assert_int_equal(sm_io_check_end(&s), 0);
    assert_int_equal(atomic_load(&job.cancel), 0);

    s.t1_ns = job.deadline_ns - 339000000ull + 820000000ull;
    assert_int_equal(sm_io_check_end(&s), SM_ETIMEDOUT);
    assert_string_equal(s.err.msg, "time limit of 339 ms reached: the measured part ended "
                                   "820.0 ms after the job started");
    /* Like any failing side, it stops the other one. */
    assert_int_equal(atomic_load(&job.cancel), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_end_fails_only_a_measured_part_past_the_deadline),
        cmocka_unit_test(test_rr_ending_past_its_limit_is_limited),
        cmocka_unit_test(test_rr_ending_in_time_is_a_sample),
        cmocka_unit_test(test_stream_ending_past_its_limit_is_limited),
        cmocka_unit_test(test_connect_ending_past_its_limit_is_limited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
