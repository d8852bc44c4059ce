/* Unit tests of pair jobs: sm_runner_serve and sm_runner_connect on two threads over loopback
 * tcp, each side's own metrics, and sm_result_merge_pair joining them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent/net/socket.h"
#include "agent/runner/runner.h"
#include "proto/result.h"
#include "tests/unit/testutil.h"

/* The server side on its own thread, and what it reported. */
typedef struct server_run {
    const sm_params *p;
    sm_runner_opts opts;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready_calls;
    uint16_t port;
    bool done; /* sm_runner_serve returned */
    int rc;
    sm_error err;
    sm_result out;
} server_run;

static void on_ready(void *arg, uint16_t port)
{
    server_run *s = arg;
    pthread_mutex_lock(&s->mu);
    s->ready_calls++;
    s->port = port;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void *server_main(void *arg)
{
    server_run *s = arg;
    int rc = sm_runner_serve(s->p, "127.0.0.1", &s->opts, on_ready, s, &s->out, &s->err);
    /* A serve that could not start never calls on_ready: release the waiting test. */
    pthread_mutex_lock(&s->mu);
    s->rc = rc;
    s->done = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void server_start_with(server_run *s, const sm_params *p, const sm_runner_opts *o)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    s->opts = *o;
    sm_result_init(&s->out);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    assert_int_equal(pthread_create(&s->thread, NULL, server_main, s), 0);
}

static void server_start(server_run *s, const sm_params *p)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    sm_result_init(&s->out);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    assert_int_equal(pthread_create(&s->thread, NULL, server_main, s), 0);
}

/* The port the server listens on; 0 when it returned without listening. */
static uint16_t server_port(server_run *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->ready_calls == 0 && !s->done)
        pthread_cond_wait(&s->cv, &s->mu);
    uint16_t port = s->port;
    pthread_mutex_unlock(&s->mu);
    return port;
}

static void server_join(server_run *s)
{
    pthread_join(s->thread, NULL);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

/* Runs both sides of p; each must reach a verdict (rc 0) and succeed. */
static void run_pair(const sm_params *p, sm_result *server, sm_result *client)
{
    static server_run s;
    sm_runner_opts co = {0};
    sm_error err = {0};
    server_start(&s, p);
    uint16_t port = server_port(&s);
    assert_int_not_equal(port, 0);
    sm_result_init(client);
    int rc = sm_runner_connect(p, "127.0.0.1", port, &co, client, &err);
    server_join(&s);
    if (rc != 0 || s.rc != 0)
        fail_msg("connect rc %d (%s), serve rc %d (%s)", rc, err.msg, s.rc, s.err.msg);
    assert_int_equal(s.ready_calls, 1);
    if (!client->ok || !s.out.ok)
        fail_msg("client: %s / server: %s", client->ok ? "ok" : client->reason,
                 s.out.ok ? "ok" : s.out.reason);
    *server = s.out;
}

static sm_params pair_params(sm_workload_kind w)
{
    sm_params p;
    sm_params_init(&p, w);
    p.scope = SM_SCOPE_PAIR;
    return p;
}

static void validate(sm_params *p)
{
    sm_error err;
    if (sm_params_validate(p, &err) != 0)
        fail_msg("%s", err.msg);
}

static void assert_has(const sm_result *r, sm_metric m)
{
    if (!sm_result_has(r, m))
        fail_msg("metric %s missing", sm_metric_name(m));
}

static void assert_lacks(const sm_result *r, sm_metric m)
{
    if (sm_result_has(r, m))
        fail_msg("metric %s present", sm_metric_name(m));
}

static void assert_both_cpus(const sm_result *r)
{
    assert_has(r, SM_M_TX_USER_S);
    assert_has(r, SM_M_TX_SYS_S);
    assert_has(r, SM_M_RX_USER_S);
    assert_has(r, SM_M_RX_SYS_S);
    assert_true(r->tx_cpu >= 0);
    assert_true(r->rx_cpu >= 0);
}

static void merge_ok(const sm_params *p, const sm_result *server, const sm_result *client,
                     sm_result *out)
{
    assert_int_equal(sm_result_merge_pair(p, server, client, out), 0);
    if (!out->ok)
        fail_msg("merge failed: %s", out->reason);
}

/* ---- who may connect ---- */

/* A connection to 127.0.0.1:port from src (all of 127/8 is loopback on Linux): what it reads
 * first, 0 when the server closed it, -1 on a reset or after 5 s of nothing. */
static ssize_t stranger_reads(const char *src, uint16_t port, char *b)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    assert_int_equal(inet_pton(AF_INET, src, &a.sin_addr), 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    struct sockaddr_in d = {.sin_family = AF_INET, .sin_port = htons(port)};
    assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &d.sin_addr), 1);
    assert_int_equal(connect(fd, (struct sockaddr *)&d, sizeof d), 0);
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t n = recv(fd, b, 1, 0);
    close(fd);
    return n < 0 ? -1 : n;
}

static void test_pair_server_closes_a_stranger_and_serves_the_jobs_client(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_STREAM);
    p.msg_size = 4096;
    p.count = 64;
    validate(&p);
    static server_run s;
    sm_runner_opts so = {.client_addr = "127.0.0.5"};
    server_start_with(&s, &p, &so);
    uint16_t port = server_port(&s);
    assert_int_not_equal(port, 0);
    /* Another host reaching the port: closed at once, never taken for the job's client. */
    char b;
    ssize_t n = stranger_reads("127.0.0.3", port, &b);
    if (n != 0)
        fail_msg("the stranger's connection was not closed: read %zd", n);
    /* The job's client, from its data address, is served as ever. */
    sm_runner_opts co = {.source_addr = "127.0.0.5"};
    sm_result client;
    sm_error err = {0};
    sm_result_init(&client);
    int rc = sm_runner_connect(&p, "127.0.0.1", port, &co, &client, &err);
    server_join(&s);
    if (rc != 0 || s.rc != 0)
        fail_msg("connect rc %d (%s), serve rc %d (%s)", rc, err.msg, s.rc, s.err.msg);
    if (!client.ok || !s.out.ok)
        fail_msg("client: %s / server: %s", client.ok ? "ok" : client.reason,
                 s.out.ok ? "ok" : s.out.reason);
    assert_double_near(sm_result_get(&s.out, SM_M_BYTES), 64 * 4096, 0);
    sm_result_fini(&client);
    sm_result_fini(&s.out);
}

/* ---- stream ---- */

static void test_pair_stream_raw_merges_the_receivers_bytes_and_both_cpus(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_STREAM);
    p.msg_size = 4096;
    p.count = 64;
    validate(&p);
    sm_result server, client, m;
    run_pair(&p, &server, &client);

    /* Each side reports only what it knows. */
    assert_double_near(sm_result_get(&server, SM_M_BYTES), 64 * 4096, 0);
    assert_double_near(sm_result_get(&client, SM_M_BYTES), 64 * 4096, 0);
    assert_has(&server, SM_M_THROUGHPUT);
    assert_has(&server, SM_M_RX_USER_S);
    assert_lacks(&server, SM_M_TX_USER_S);
    assert_has(&client, SM_M_TX_SYS_S);
    assert_lacks(&client, SM_M_RX_SYS_S);
    assert_lacks(&client, SM_M_SECONDS);
    assert_has(&client, SM_M_TCP_RTT_US);
    assert_true(server.rcvbuf_eff > 0);
    assert_true(client.sndbuf_eff > 0);

    merge_ok(&p, &server, &client, &m);
    assert_double_near(sm_result_get(&m, SM_M_BYTES), 64 * 4096, 0);
    assert_true(sm_result_get(&m, SM_M_SECONDS) > 0);
    assert_true(sm_result_get(&m, SM_M_THROUGHPUT) > 0);
    assert_both_cpus(&m);
    assert_has(&m, SM_M_CPU_S_PER_GB);
    assert_has(&m, SM_M_TCP_RETRANS);
    assert_has(&m, SM_M_TCP_RTT_US);
    assert_null(m.hist);
    assert_int_equal(m.sndbuf_eff, client.sndbuf_eff);
    assert_int_equal(m.rcvbuf_eff, server.rcvbuf_eff);
    sm_result_fini(&m);
    sm_result_fini(&server);
    sm_result_fini(&client);
}

static void test_pair_stream_lines_counts_markers_on_both_sides(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_STREAM);
    p.framing = SM_FRAMING_LINES;
    /* More than one read (128 KiB): the receiver's clock starts inside the first one. */
    p.msg_size = 1000;
    p.count = 500;
    validate(&p);
    sm_result server, client, m;
    run_pair(&p, &server, &client);
    double total = (double)sm_params_stream_total(&p);
    assert_double_near(sm_result_get(&client, SM_M_BYTES), total, 0);
    merge_ok(&p, &server, &client, &m);
    assert_double_near(sm_result_get(&m, SM_M_BYTES), total, 0);
    assert_true(sm_result_get(&m, SM_M_MSGS_PER_S) > 0);
    assert_both_cpus(&m);
    sm_result_fini(&m);
    sm_result_fini(&server);
    sm_result_fini(&client);
}

static void test_pair_stream_sides_disagreeing_on_bytes_fail_the_merge(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_STREAM);
    p.msg_size = 1000;
    p.count = 10;
    validate(&p);
    sm_result server, client, m;
    run_pair(&p, &server, &client);
    sm_result_set(&client, SM_M_BYTES, 9000);
    assert_int_equal(sm_result_merge_pair(&p, &server, &client, &m), 0);
    assert_false(m.ok);
    assert_string_equal(m.reason, "the sender wrote 9000 bytes, the receiver got 10000");
    assert_int_equal(m.have, 0);
    assert_null(m.hist);
    sm_result_fini(&server);
    sm_result_fini(&client);
}

/* ---- rr ---- */

static void test_pair_rr_merges_the_clients_latencies_and_histogram(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_RR);
    p.req_size = 16;
    p.resp_size = 32;
    p.count = 200;
    validate(&p);
    sm_result server, client, m;
    run_pair(&p, &server, &client);
    assert_double_near(sm_result_get(&server, SM_M_BYTES), 200 * 48, 0);
    assert_null(server.hist);
    assert_non_null(client.hist);
    assert_int_equal(sm_hist_count(client.hist), 200);

    merge_ok(&p, &server, &client, &m);
    assert_double_near(sm_result_get(&m, SM_M_BYTES), 200 * 48, 0);
    assert_true(sm_result_get(&m, SM_M_RT_PER_S) > 0);
    double p50 = sm_result_get(&m, SM_M_RTT_P50_US), p90 = sm_result_get(&m, SM_M_RTT_P90_US),
           p99 = sm_result_get(&m, SM_M_RTT_P99_US), p999 = sm_result_get(&m, SM_M_RTT_P999_US),
           max = sm_result_get(&m, SM_M_RTT_MAX_US);
    assert_true(p50 > 0 && p50 <= p90 && p90 <= p99 && p99 <= p999 && p999 <= max);
    /* A copy: the merged result owns its histogram, the client keeps its own. */
    assert_non_null(m.hist);
    assert_ptr_not_equal(m.hist, client.hist);
    assert_int_equal(sm_hist_count(m.hist), 200);
    /* The coordinator keeps merged results: sparse, with the client's answers. */
    assert_true(sm_hist_is_sparse(m.hist));
    assert_false(sm_hist_is_sparse(client.hist));
    assert_true(sm_hist_bytes(m.hist) < sm_hist_bytes(client.hist) / 10);
    assert_int_equal(sm_hist_percentile(m.hist, 99), sm_hist_percentile(client.hist, 99));
    assert_both_cpus(&m);
    assert_has(&m, SM_M_TCP_RTT_US);
    assert_lacks(&m, SM_M_CPU_S_PER_GB);
    sm_result_fini(&m);

    /* A server that answered fewer round trips than the client counted fails the merge. */
    sm_result_set(&server, SM_M_BYTES, 199 * 48);
    assert_int_equal(sm_result_merge_pair(&p, &server, &client, &m), 0);
    assert_false(m.ok);
    assert_string_equal(m.reason, "the client completed 200 round trips, the server answered 199");
    assert_null(m.hist);
    sm_result_fini(&server);
    sm_result_fini(&client);
}

/* ---- connect ---- */

static void test_pair_connect_server_stops_after_count(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_CONNECT);
    p.count = 20;
    validate(&p);
    sm_result server, client, m;
    run_pair(&p, &server, &client);
    assert_has(&server, SM_M_RX_USER_S);
    assert_lacks(&server, SM_M_CONNECTS_PER_S);
    merge_ok(&p, &server, &client, &m);
    assert_true(sm_result_get(&m, SM_M_CONNECTS_PER_S) > 0);
    assert_true(sm_result_get(&m, SM_M_CONNECT_P50_US) > 0);
    assert_non_null(m.hist);
    assert_int_equal(sm_hist_count(m.hist), 20);
    assert_both_cpus(&m);
    sm_result_fini(&m);
    sm_result_fini(&server);
    sm_result_fini(&client);
}

/* With a duration the server cannot count: it ends ok at duration + 5 s after the first
 * connection, or at its time limit when that comes first (here: 2 s). */
static void test_pair_connect_for_a_duration_ends_the_server_ok(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_CONNECT);
    p.count = 0;
    p.duration_ms = 100;
    p.time_limit_ms = 2000;
    validate(&p);
    sm_result server, client, m;
    uint64_t t0 = sm_now_ns();
    run_pair(&p, &server, &client);
    uint64_t ms = (sm_now_ns() - t0) / 1000000u;
    assert_true(ms >= 1900 && ms < 4000);
    merge_ok(&p, &server, &client, &m);
    assert_true(sm_hist_count(m.hist) > 0);
    assert_true(sm_result_get(&m, SM_M_CONNECTS_PER_S) > 0);
    sm_result_fini(&m);
    sm_result_fini(&server);
    sm_result_fini(&client);
}

/* ---- failures ---- */

/* A port nobody listens on: bound, read back, closed. */
static uint16_t closed_port(void)
{
    sm_sockopts o = {0};
    sm_error err;
    int fd = -1;
    uint16_t port = 0;
    assert_int_equal(sm_net_tcp_listen("127.0.0.1", 0, &o, &fd, &port, &err), 0);
    sm_net_close(&fd);
    return port;
}

static void test_pair_failed_client_fails_the_merge_naming_the_client(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_RR);
    validate(&p);
    sm_runner_opts o = {0};
    sm_error err = {0};
    sm_result client, server, m;
    sm_result_init(&client);
    assert_int_equal(sm_runner_connect(&p, "127.0.0.1", closed_port(), &o, &client, &err), 0);
    assert_false(client.ok);
    assert_non_null(strstr(client.reason, "refused"));
    assert_null(client.hist);

    sm_result_init(&server);
    server.ok = true;
    sm_result_set(&server, SM_M_RX_USER_S, 0.1);
    assert_int_equal(sm_result_merge_pair(&p, &server, &client, &m), 0);
    assert_false(m.ok);
    assert_true(strncmp(m.reason, "client: ", 8) == 0);
    assert_non_null(strstr(m.reason, client.reason));
    assert_int_equal(m.have, 0);

    /* And the other way round. */
    assert_int_equal(sm_result_merge_pair(&p, &client, &server, &m), 0);
    assert_false(m.ok);
    assert_true(strncmp(m.reason, "server: ", 8) == 0);
    sm_result_fini(&client);
}

/* A server whose client never comes fails at its time limit; with a failed client too, the
 * merge names both, the client first. */
static void test_pair_server_without_client_times_out(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_STREAM);
    p.time_limit_ms = 200;
    validate(&p);
    static server_run s;
    server_start(&s, &p);
    assert_int_not_equal(server_port(&s), 0);
    server_join(&s);
    assert_int_equal(s.rc, 0);
    assert_false(s.out.ok);
    assert_string_equal(s.out.reason,
                        "time limit of 200 ms reached while waiting for a connection");

    sm_result client, m;
    sm_result_init(&client);
    snprintf(client.reason, sizeof client.reason, "connect 10.0.0.2:4000: refused");
    assert_int_equal(sm_result_merge_pair(&p, &s.out, &client, &m), 0);
    assert_false(m.ok);
    assert_string_equal(m.reason, "client: connect 10.0.0.2:4000: refused; server: time limit of "
                                  "200 ms reached while waiting for a connection");
    sm_result_fini(&s.out);
}

static void count_ready(void *arg, uint16_t port)
{
    (void)port;
    ++*(int *)arg;
}

/* A cancel from the coordinator reaches a server still waiting for its client. */
static void test_pair_abort_stops_a_waiting_server(void **state)
{
    (void)state;
    sm_params p = pair_params(SM_WL_RR);
    validate(&p);
    atomic_int abort_flag = 1;
    sm_runner_opts o = {.abort = &abort_flag};
    sm_result out;
    sm_error err = {0};
    sm_result_init(&out);
    int calls = 0;
    assert_int_equal(sm_runner_serve(&p, "127.0.0.1", &o, count_ready, &calls, &out, &err), 0);
    assert_int_equal(calls, 1);
    assert_false(out.ok);
    assert_string_equal(out.reason,
                        "cancelled while waiting for a connection: the job was stopped");
    sm_result_fini(&out);
}

static void test_pair_sides_refuse_local_scope_unix_and_no_address(void **state)
{
    (void)state;
    sm_runner_opts o = {0};
    sm_error err = {0};
    sm_result out;
    sm_result_init(&out);
    sm_params p;
    sm_params_init(&p, SM_WL_RR);
    validate(&p);
    int calls = 0;
    assert_int_equal(sm_runner_serve(&p, "127.0.0.1", &o, count_ready, &calls, &out, &err),
                     SM_EINVAL);
    assert_string_equal(
        err.msg, "one side of a job runs with scope pair over tcp, not scope local over tcp");
    assert_int_equal(sm_runner_connect(&p, "127.0.0.1", 4000, &o, &out, &err), SM_EINVAL);
    p.transport = SM_TR_UNIX;
    p.scope = SM_SCOPE_PAIR;
    assert_int_equal(sm_runner_serve(&p, "127.0.0.1", &o, count_ready, &calls, &out, &err),
                     SM_EINVAL);
    p.transport = SM_TR_TCP;
    assert_int_equal(sm_runner_connect(&p, "127.0.0.1", 0, &o, &out, &err), SM_EINVAL);
    assert_int_equal(sm_runner_connect(&p, NULL, 4000, &o, &out, &err), SM_EINVAL);
    assert_int_not_equal(sm_runner_serve(&p, "10.0.0.256", &o, count_ready, &calls, &out, &err), 0);
    assert_int_equal(calls, 0);
    assert_false(out.ok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pair_server_closes_a_stranger_and_serves_the_jobs_client),
        cmocka_unit_test(test_pair_stream_raw_merges_the_receivers_bytes_and_both_cpus),
        cmocka_unit_test(test_pair_stream_lines_counts_markers_on_both_sides),
        cmocka_unit_test(test_pair_stream_sides_disagreeing_on_bytes_fail_the_merge),
        cmocka_unit_test(test_pair_rr_merges_the_clients_latencies_and_histogram),
        cmocka_unit_test(test_pair_connect_server_stops_after_count),
        cmocka_unit_test(test_pair_connect_for_a_duration_ends_the_server_ok),
        cmocka_unit_test(test_pair_failed_client_fails_the_merge_naming_the_client),
        cmocka_unit_test(test_pair_server_without_client_times_out),
        cmocka_unit_test(test_pair_abort_stops_a_waiting_server),
        cmocka_unit_test(test_pair_sides_refuse_local_scope_unix_and_no_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
