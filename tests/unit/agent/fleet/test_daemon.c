/* Unit tests of the agent's poll loop (sm_daemon_run on its own thread) against a REP socket
 * in the test on ipc:// in a temporary folder: the signed poll, the acks a reply carries, and
 * the replies the agent must drop. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/fleet/daemon.h"
#include "agent/spool/spool.h"
#include "proto/envelope.h"
#include "proto/msg.h"

#define SPOOLED_JOB 7u
/* Long enough that no poll is resent for want of an answer while a test looks at it: every
 * poll after the first comes from a reply the agent took or dropped. */
#define REPLY_WAIT_MS 20000u

typedef struct fixture {
    char dir[64];
    char url[128];
    char spool[96];
    sm_daemon_cfg cfg;
    int rep;
    pthread_t thread;
    volatile sig_atomic_t stop;
    int wake_fd;
    int rc;
    sm_error err;
} fixture;

static uint64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void *daemon_main(void *arg)
{
    fixture *f = arg;
    f->rc = sm_daemon_run(&f->cfg, &f->stop, &f->wake_fd, &f->err);
    return NULL;
}

/* Spools one finished result for job SPOOLED_JOB, as the worker would have before a restart. */
static void spool_one(const char *dir)
{
    sm_spool *sp = NULL;
    sm_error err = {0};
    assert_int_equal(sm_spool_open(&sp, dir, &err), 0);
    sm_result_msg m = {.job = SPOOLED_JOB, .attempt = 1, .role = SM_ROLE_BOTH};
    sm_result_init(&m.result);
    m.result.ok = true;
    size_t len;
    char *json = sm_msg_result_encode(&m, &len, &err);
    assert_non_null(json);
    assert_int_equal(sm_spool_put(sp, SPOOLED_JOB, 1, json, len, &err), 0);
    free(json);
    sm_result_fini(&m.result);
    sm_spool_close(sp);
}

static size_t spool_count(const char *dir)
{
    sm_spool *sp = NULL;
    sm_error err = {0};
    assert_int_equal(sm_spool_open(&sp, dir, &err), 0);
    size_t n = sm_spool_count(sp);
    sm_spool_close(sp);
    return n;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sm-daemon-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->url, sizeof f->url, "ipc://%s/bus", f->dir);
    snprintf(f->spool, sizeof f->spool, "%s/spool", f->dir);
    spool_one(f->spool);
    f->rep = nn_socket(AF_SP, NN_REP);
    assert_true(f->rep >= 0);
    int ms = 10000;
    assert_true(nn_setsockopt(f->rep, NN_SOL_SOCKET, NN_RCVTIMEO, &ms, sizeof ms) >= 0);
    assert_true(nn_setsockopt(f->rep, NN_SOL_SOCKET, NN_SNDTIMEO, &ms, sizeof ms) >= 0);
    assert_true(nn_bind(f->rep, f->url) >= 0);
    f->cfg.coordinator = f->url;
    for (size_t i = 0; i < SM_KEY_LEN; i++)
        f->cfg.key[i] = (uint8_t)(i * 7 + 1);
    snprintf(f->cfg.name, sizeof f->cfg.name, "h1");
    f->cfg.spool_dir = f->spool;
    f->cfg.sock_dir = f->dir;
    f->cfg.reply_wait_ms = REPLY_WAIT_MS;
    f->wake_fd = -1;
    assert_int_equal(pthread_create(&f->thread, NULL, daemon_main, f), 0);
    *state = f;
    return 0;
}

/* Stops the agent as its signal handler would, and checks it ended cleanly. */
static void stop_daemon(fixture *f)
{
    f->stop = 1;
    uint64_t one = 1;
    if (f->wake_fd >= 0)
        assert_int_equal(write(f->wake_fd, &one, sizeof one), (ssize_t)sizeof one);
    assert_int_equal(pthread_join(f->thread, NULL), 0);
    if (f->rc != 0)
        fail_msg("sm_daemon_run: %d %s", f->rc, f->err.msg);
}

static int teardown(void **state)
{
    fixture *f = *state;
    nn_close(f->rep);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* The next poll: received (bounded by the socket's 10 s), its envelope opened under the agent's
 * key, its body decoded into *p, its nonce into nonce. */
static void next_poll(fixture *f, sm_poll *p, char nonce[SM_NONCE_HEX + 1])
{
    char *buf = NULL;
    int len = nn_recv(f->rep, &buf, NN_MSG, 0);
    if (len < 0)
        fail_msg("no poll: %s", nn_strerror(nn_errno()));
    sm_env env;
    sm_error err = {0};
    sm_reject why =
        sm_env_open(f->cfg.key, SM_DIR_TO_COORDINATOR, buf, (size_t)len, wall_ms(), &env, &err);
    if (why != SM_REJ_NONE)
        fail_msg("the poll does not open: %s", err.msg);
    assert_string_equal(env.name, "h1");
    /* Signed with the agent's key, not merely well formed. */
    uint8_t other[SM_KEY_LEN];
    memcpy(other, f->cfg.key, sizeof other);
    other[0] ^= 1;
    sm_env env2;
    assert_int_equal(
        sm_env_open(other, SM_DIR_TO_COORDINATOR, buf, (size_t)len, wall_ms(), &env2, &err),
        SM_REJ_MAC);
    if (sm_msg_poll_decode(env.body, env.body_len, p, &err) != 0)
        fail_msg("the poll does not decode: %s", err.msg);
    memcpy(nonce, env.nonce, SM_NONCE_HEX + 1);
    nn_freemsg(buf);
}

/* Answers the outstanding poll with r, sealed as the coordinator under the agent's key. */
static void send_reply(fixture *f, const sm_poll_reply *r)
{
    sm_error err = {0};
    size_t len, elen;
    char *body = sm_msg_reply_encode(r, &len, &err);
    assert_non_null(body);
    char *env = sm_env_seal(f->cfg.key, SM_DIR_TO_AGENT, SM_COORDINATOR, wall_ms(), body, len,
                            &elen, NULL, &err);
    assert_non_null(env);
    assert_int_equal(nn_send(f->rep, env, elen, 0), (int)elen);
    free(body);
    free(env);
}

static void ack_reply(sm_poll_reply *r, const char *to, const char *poll)
{
    memset(r, 0, sizeof *r);
    snprintf(r->to, sizeof r->to, "%s", to);
    snprintf(r->poll, sizeof r->poll, "%s", poll);
    r->ack_job[0] = SPOOLED_JOB;
    r->ack_attempt[0] = 1;
    r->n_acks = 1;
}

static void
test_daemon_polls_signed_with_its_spooled_result_and_an_ack_empties_the_spool(void **state)
{
    fixture *f = *state;
    sm_poll p;
    char nonce[SM_NONCE_HEX + 1];
    next_poll(f, &p, nonce);
    assert_string_equal(p.agent, "h1");
    assert_int_equal(p.state, SM_AGENT_IDLE);
    assert_true(p.have_facts); /* the first poll of a process says what the host is */
    assert_int_equal(p.n_results, 1);
    assert_int_equal(p.results[0].job, SPOOLED_JOB);
    assert_int_equal(p.results[0].attempt, 1);
    assert_true(p.results[0].result.ok);
    const uint64_t seq = p.seq;
    sm_msg_poll_fini(&p);

    sm_poll_reply r;
    ack_reply(&r, "h1", nonce);
    r.want_facts = false;
    send_reply(f, &r);

    next_poll(f, &p, nonce);
    assert_int_equal(p.seq, seq + 1);
    assert_int_equal(p.n_results, 0); /* acked: not sent again */
    assert_false(p.have_facts);       /* the reply wanted none */
    sm_msg_poll_fini(&p);
    stop_daemon(f);
    assert_int_equal(spool_count(f->spool), 0);
}

static void test_daemon_drops_a_reply_for_another_agent_or_an_earlier_poll(void **state)
{
    fixture *f = *state;
    sm_poll p;
    char first[SM_NONCE_HEX + 1], nonce[SM_NONCE_HEX + 1];
    next_poll(f, &p, first);
    sm_msg_poll_fini(&p);

    /* Signed by the coordinator, answering this very poll, but for h2: its ack is not taken. */
    sm_poll_reply r;
    ack_reply(&r, "h2", first);
    send_reply(f, &r);
    next_poll(f, &p, nonce);
    assert_string_not_equal(nonce, first);
    assert_int_equal(p.n_results, 1);
    assert_int_equal(p.results[0].job, SPOOLED_JOB);
    assert_true(p.have_facts); /* nothing of the dropped reply was taken, want_facts neither */
    sm_msg_poll_fini(&p);

    /* For h1, but naming the earlier poll, not the one it answers: dropped too. */
    ack_reply(&r, "h1", first);
    send_reply(f, &r);
    char third[SM_NONCE_HEX + 1];
    next_poll(f, &p, third);
    assert_int_equal(p.n_results, 1);
    assert_true(p.have_facts);
    sm_msg_poll_fini(&p);

    /* The same ack, addressed right, is taken. */
    ack_reply(&r, "h1", third);
    send_reply(f, &r);
    next_poll(f, &p, nonce);
    assert_int_equal(p.n_results, 0);
    assert_false(p.have_facts);
    sm_msg_poll_fini(&p);
    stop_daemon(f);
    assert_int_equal(spool_count(f->spool), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_daemon_polls_signed_with_its_spooled_result_and_an_ack_empties_the_spool, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_daemon_drops_a_reply_for_another_agent_or_an_earlier_poll, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
