/* Unit tests of agent/session: a REQ session against a REP socket in the same process
 * (inproc: no network), which plays the coordinator. */
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/session/session.h"

#define T0 1700000000000ull

static const uint8_t KEY[SM_KEY_LEN] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                        16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30};
static const uint8_t OTHER[SM_KEY_LEN] = {99};

typedef struct fixture {
    int rep;
    sm_session *ses;
    sm_replay *replay;
} fixture;

static int setup(void **state)
{
    static int n;
    char url[64];
    snprintf(url, sizeof url, "inproc://test_session_%d", n++);
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    int ms = 2000;
    f->rep = nn_socket(AF_SP, NN_REP);
    if (f->rep < 0 || nn_setsockopt(f->rep, NN_SOL_SOCKET, NN_RCVTIMEO, &ms, sizeof ms) < 0 ||
        nn_bind(f->rep, url) < 0)
        return -1;
    sm_error err = {0};
    f->replay = sm_replay_new(2 * SM_SKEW_MS);
    if (!f->replay)
        return -1;
    const sm_session_opts o = {.url = url,
                               .max_msg = SM_MSG_MAX,
                               .send_timeout_ms = 2000,
                               .recv_timeout_ms = 2000,
                               .resend_ivl_ms = 3600 * 1000,
                               .replay = f->replay};
    if (sm_session_open(&f->ses, &o, KEY, "h1", &err) != 0) {
        print_error("%s\n", err.msg);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sm_session_close(f->ses);
    sm_replay_free(f->replay);
    nn_close(f->rep);
    free(f);
    return 0;
}

/* The coordinator's side: takes the request, checks it came sealed from h1 with the session's
 * nonce, and answers with body sealed by `from` under key. */
static void answer(fixture *f, const uint8_t key[SM_KEY_LEN], const char *from, const char *body,
                   char **sent, size_t *sent_len)
{
    char *req = NULL;
    int n = nn_recv(f->rep, &req, NN_MSG, 0);
    assert_true(n > 0);
    sm_env env;
    sm_error err = {0};
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_COORDINATOR, req, (size_t)n, T0, &env, &err),
                     SM_REJ_NONE);
    assert_string_equal(env.name, "h1");
    assert_string_equal(env.nonce, sm_session_nonce(f->ses));
    nn_freemsg(req);
    size_t len;
    char *rep = sm_env_seal(key, SM_DIR_TO_AGENT, from, T0, body, strlen(body), &len, NULL, &err);
    assert_non_null(rep);
    assert_int_equal(nn_send(f->rep, rep, len, 0), (int)len);
    if (sent) {
        *sent = rep;
        *sent_len = len;
    } else {
        free(rep);
    }
}

static void send_poll(fixture *f)
{
    sm_error err = {0};
    assert_int_equal(sm_session_send(f->ses, "{\"poll\":1}", 10, T0, 0, &err), 0);
    assert_int_equal(strlen(sm_session_nonce(f->ses)), SM_NONCE_HEX);
}

static void test_a_reply_from_the_coordinator_opens(void **state)
{
    fixture *f = *state;
    send_poll(f);
    answer(f, KEY, SM_COORDINATOR, "{\"ok\":true}", NULL, NULL);
    sm_env env;
    sm_reject why = SM_REJ__COUNT;
    sm_error err = {0};
    assert_int_equal(sm_session_recv(f->ses, 0, T0, &env, &why, &err), 0);
    assert_int_equal(why, SM_REJ_NONE);
    assert_string_equal(env.name, SM_COORDINATOR);
    assert_int_equal(env.body_len, 11);
    assert_memory_equal(env.body, "{\"ok\":true}", 11);
    sm_session_release(f->ses);
}

static void test_each_send_takes_a_fresh_nonce(void **state)
{
    fixture *f = *state;
    send_poll(f);
    char first[SM_NONCE_HEX + 1];
    memcpy(first, sm_session_nonce(f->ses), sizeof first);
    answer(f, KEY, SM_COORDINATOR, "{}", NULL, NULL);
    send_poll(f); /* supersedes the first request; its answer is dropped by the REQ socket */
    assert_string_not_equal(first, sm_session_nonce(f->ses));
    answer(f, KEY, SM_COORDINATOR, "{}", NULL, NULL);
}

static void test_a_replayed_reply_is_refused(void **state)
{
    fixture *f = *state;
    char *bytes;
    size_t len;
    sm_env env;
    sm_reject why;
    sm_error err = {0};
    send_poll(f);
    answer(f, KEY, SM_COORDINATOR, "{}", &bytes, &len);
    assert_int_equal(sm_session_recv(f->ses, 0, T0, &env, &why, &err), 0);
    assert_int_equal(why, SM_REJ_NONE);
    /* The same signed bytes again, as an answer to the next poll. */
    send_poll(f);
    char *req = NULL;
    assert_true(nn_recv(f->rep, &req, NN_MSG, 0) > 0);
    nn_freemsg(req);
    assert_int_equal(nn_send(f->rep, bytes, len, 0), (int)len);
    assert_int_equal(sm_session_recv(f->ses, 0, T0 + 1, &env, &why, &err), 0);
    assert_int_equal(why, SM_REJ_REPLAY);
    assert_int_equal(sm_replay_size(f->replay), 1);
    free(bytes);
}

static void test_a_reply_from_another_sender_or_key_is_refused(void **state)
{
    fixture *f = *state;
    sm_env env;
    sm_reject why;
    sm_error err = {0};
    send_poll(f);
    answer(f, KEY, "h2", "{}", NULL, NULL);
    assert_int_equal(sm_session_recv(f->ses, 0, T0, &env, &why, &err), 0);
    assert_int_equal(why, SM_REJ_FIELD);
    assert_non_null(strstr(err.msg, "not the coordinator"));
    send_poll(f);
    answer(f, OTHER, SM_COORDINATOR, "{}", NULL, NULL);
    assert_int_equal(sm_session_recv(f->ses, 0, T0, &env, &why, &err), 0);
    assert_int_equal(why, SM_REJ_MAC);
}

static void test_nothing_waiting_is_a_timeout(void **state)
{
    fixture *f = *state;
    sm_env env;
    sm_reject why;
    sm_error err = {0};
    send_poll(f);
    assert_int_equal(sm_session_recv(f->ses, NN_DONTWAIT, T0, &env, &why, &err), SM_ETIMEDOUT);
    assert_int_equal(sm_session_recv_fd(f->ses) >= 0, 1);
}

static void test_close_leaves_the_socket_to_the_process(void **state)
{
    fixture *f = *state;
    send_poll(f);
    answer(f, KEY, SM_COORDINATOR, "{}", NULL, NULL);
    sm_env env;
    sm_reject why;
    sm_error err = {0};
    assert_int_equal(sm_session_recv(f->ses, 0, T0, &env, &why, &err), 0);
    const int sock = sm_session_socket(f->ses);
    assert_true(sock >= 0);
    sm_session_close(f->ses);
    f->ses = NULL;
    assert_int_equal(sm_session_socket(NULL), -1);
    /* Not nn_closed: nanomsg still knows the socket (an nn_closed one gives EBADF). */
    int domain = 0;
    size_t sz = sizeof domain;
    assert_int_equal(nn_getsockopt(sock, NN_SOL_SOCKET, NN_DOMAIN, &domain, &sz), 0);
    assert_int_equal(domain, AF_SP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_reply_from_the_coordinator_opens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_send_takes_a_fresh_nonce, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_replayed_reply_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_reply_from_another_sender_or_key_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_nothing_waiting_is_a_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_leaves_the_socket_to_the_process, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
