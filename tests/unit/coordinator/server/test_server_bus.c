/* Unit tests of the coordinator loop's pass over the bus (sm_server_drain_bus): a real bus on
 * ipc:// in a temporary folder, real REQ sockets as agents, a real store and control. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coordinator/server/internal.h"
#include "proto/msg.h"

#define FLOOD      15 /* messages of FLOOD_SIZE: more bytes than one pass takes */
#define FLOOD_SIZE (100u * 1024u)
/* Messages one pass may take: it stops at the first that brings it to SM_BUS_PASS_BYTES. */
#define PASS_MAX ((SM_BUS_PASS_BYTES + FLOOD_SIZE - 1) / FLOOD_SIZE)

typedef struct fixture {
    char dir[64];
    char url[128];
    char db[96];
    sm_server_cfg cfg;
    server s;
    int req[FLOOD];
} fixture;

static uint64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sm-server-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->url, sizeof f->url, "ipc://%s/bus", f->dir);
    snprintf(f->db, sizeof f->db, "%s/c.db", f->dir);
    for (size_t i = 0; i < SM_KEY_LEN; i++)
        f->cfg.key[i] = (uint8_t)(i * 5 + 3);
    f->cfg.hold_ms = 1000;
    server *s = &f->s;
    s->cfg = &f->cfg;
    sm_error err = {0};
    assert_int_equal(sm_store_open(&s->st, f->db, &err), 0);
    sm_control_cfg ccfg = {.hold_ms = 1000, .job_grace_ms = 1000};
    assert_int_equal(sm_control_open(&s->api.ctl, s->st, &ccfg, (int64_t)wall_ms(), &err), 0);
    s->replay = sm_replay_new(2ull * SM_SKEW_MS);
    s->rejects = sm_rejects_new();
    s->held = sm_map_new();
    s->on_prev_key = sm_map_new();
    s->keys = sm_keys_new(f->cfg.key, 64);
    assert_non_null(s->keys);
    assert_non_null(s->replay);
    assert_non_null(s->rejects);
    assert_non_null(s->held);
    assert_non_null(s->on_prev_key);
    assert_int_equal(sm_server_scratch_new(s), 0);
    s->api.st = s->api.reports.st = s->st;
    s->api.rejects = s->rejects;
    s->started_ms = mono_ms();
    assert_int_equal(sm_bus_open(&s->bus, f->url, &err), 0);
    /* A pass that stops at a bound wakes the loop through its context. */
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = CONTEXT_PORT_NO_LISTEN;
    lws_set_log_level(0, NULL);
    s->ctx = lws_create_context(&info);
    assert_non_null(s->ctx);
    for (size_t i = 0; i < FLOOD; i++) {
        f->req[i] = nn_socket(AF_SP, NN_REQ);
        assert_true(f->req[i] >= 0);
        int ms = 5000;
        assert_true(nn_setsockopt(f->req[i], NN_SOL_SOCKET, NN_SNDTIMEO, &ms, sizeof ms) >= 0);
        assert_true(nn_connect(f->req[i], f->url) >= 0);
    }
    *state = f;
    return 0;
}

static void held_free(void *p)
{
    held *h = p;
    sm_bus_msg_fini(&h->msg);
    free(h);
}

static int teardown(void **state)
{
    fixture *f = *state;
    server *s = &f->s;
    for (size_t i = 0; i < FLOOD; i++)
        nn_close(f->req[i]);
    lws_context_destroy(s->ctx);
    sm_map_free(s->held, held_free);
    sm_map_free(s->on_prev_key, NULL);
    sm_keys_free(s->keys);
    sm_bus_close(s->bus);
    sm_rejects_free(s->rejects);
    sm_replay_free(s->replay);
    sm_control_close(s->api.ctl);
    sm_store_close(s->st);
    sm_server_scratch_free(s);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* Waits (bounded) until the bus has a request waiting. */
static void wait_readable(fixture *f)
{
    sm_error err = {0};
    int fd = sm_bus_fd(f->s.bus, &err);
    assert_true(fd >= 0);
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, 5000), 1);
    close(fd);
}

/* Passes over the bus until `total` messages were refused (bounded by 10 s); returns the most
 * one pass refused. */
static uint64_t drain_until_refused(fixture *f, uint64_t total)
{
    uint64_t most = 0, before = sm_rejects_total(f->s.rejects);
    const int64_t until = mono_ms() + 10000;
    while (sm_rejects_total(f->s.rejects) < total) {
        if (mono_ms() > until)
            fail_msg("%" PRIu64 " of %" PRIu64 " messages refused after 10 s",
                     sm_rejects_total(f->s.rejects), total);
        wait_readable(f);
        sm_server_drain_bus(&f->s);
        const uint64_t now = sm_rejects_total(f->s.rejects);
        if (now - before > most)
            most = now - before;
        before = now;
    }
    return most;
}

static void test_server_one_bus_pass_takes_at_most_its_bytes(void **state)
{
    fixture *f = *state;
    char *junk = malloc(FLOOD_SIZE);
    assert_non_null(junk);
    memset(junk, 'x', FLOOD_SIZE);
    for (size_t i = 0; i < FLOOD; i++)
        assert_int_equal(nn_send(f->req[i], junk, FLOOD_SIZE, 0), (int)FLOOD_SIZE);
    free(junk);
    const uint64_t most = drain_until_refused(f, FLOOD);
    if (most > PASS_MAX)
        fail_msg("one pass took %" PRIu64 " messages of %u bytes, more than %u", most, FLOOD_SIZE,
                 (unsigned)PASS_MAX);
    assert_int_equal(sm_rejects_total(f->s.rejects), FLOOD);
    assert_null(sm_map_get(f->s.held, "h1"));
}

/* Sends a poll from agent `name` sealed under `key` on REQ socket i. */
static void send_poll(fixture *f, size_t i, const uint8_t key[SM_KEY_LEN], const char *name)
{
    sm_poll p;
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "%s", name);
    snprintf(p.boot, sizeof p.boot, "0123456789abcdef0123456789abcdef");
    sm_error err = {0};
    size_t len, elen;
    char *body = sm_msg_poll_encode(&p, &len, &err);
    assert_non_null(body);
    char *env =
        sm_env_seal(key, SM_DIR_TO_COORDINATOR, name, wall_ms(), body, len, &elen, NULL, &err);
    assert_non_null(env);
    assert_int_equal(nn_send(f->req[i], env, elen, 0), (int)elen);
    free(body);
    free(env);
}

static void test_server_bus_pass_drops_and_counts_what_fails_its_checks(void **state)
{
    fixture *f = *state;
    uint8_t own[SM_KEY_LEN], wrong[SM_KEY_LEN];
    sm_error err = {0};
    assert_int_equal(sm_key_derive(f->cfg.key, "h1", own, &err), 0);
    memcpy(wrong, own, sizeof wrong);
    wrong[3] ^= 0x10;
    static const char junk[] = "not an envelope";
    assert_int_equal(nn_send(f->req[0], junk, sizeof junk - 1, 0), (int)(sizeof junk - 1));
    send_poll(f, 1, wrong, "h1");
    drain_until_refused(f, 2);
    assert_int_equal(sm_rejects_count(f->s.rejects, SM_REJ_MAC), 1);
    assert_int_equal(sm_rejects_total(f->s.rejects), 2);
    /* Neither was answered, nor registered h1. */
    char *buf = NULL;
    assert_true(nn_recv(f->req[0], &buf, NN_MSG, NN_DONTWAIT) < 0);
    assert_true(nn_recv(f->req[1], &buf, NN_MSG, NN_DONTWAIT) < 0);
    sm_agent_status st;
    int64_t seen;
    assert_false(sm_control_agent_live(f->s.api.ctl, "h1", &st, &seen));
    /* The same poll under h1's own key registers h1. */
    send_poll(f, 2, own, "h1");
    const int64_t until = mono_ms() + 10000;
    while (!sm_control_agent_live(f->s.api.ctl, "h1", &st, &seen)) {
        if (mono_ms() > until)
            fail_msg("h1's poll was not taken in 10 s");
        wait_readable(f);
        sm_server_drain_bus(&f->s);
    }
    assert_int_equal(sm_rejects_total(f->s.rejects), 2);
}

/* Passes over the bus until the control has taken `total` polls in all (bounded by 10 s). */
static void drain_until_polls(fixture *f, uint64_t total)
{
    const int64_t until = mono_ms() + 10000;
    sm_control_stats st;
    for (sm_control_get_stats(f->s.api.ctl, &st); st.polls < total;
         sm_control_get_stats(f->s.api.ctl, &st)) {
        if (mono_ms() > until)
            fail_msg("%" PRIu64 " of %" PRIu64 " polls taken after 10 s", st.polls, total);
        wait_readable(f);
        sm_server_drain_bus(&f->s);
    }
}

/* Each poll needs its sender's key to verify it and to seal its answer: derived once, on the
 * agent's first poll, and kept from then on; a name that failed its MAC is never kept. */
static void test_server_derives_an_agents_key_once_over_its_polls(void **state)
{
    fixture *f = *state;
    uint8_t own[SM_KEY_LEN], wrong[SM_KEY_LEN];
    sm_error err = {0};
    assert_int_equal(sm_key_derive(f->cfg.key, "h1", own, &err), 0);
    send_poll(f, 0, own, "h1");
    drain_until_polls(f, 1);
    send_poll(f, 1, own, "h1");
    send_poll(f, 2, own, "h1");
    drain_until_polls(f, 3);
    assert_int_equal(sm_keys_derived(f->s.keys), 1);
    assert_int_equal(sm_keys_kept(f->s.keys), 1);
    /* The first poll was answered at once (facts wanted), under h1's own key. */
    char *buf = NULL;
    const int n = nn_recv(f->req[0], &buf, NN_MSG, 0);
    assert_true(n > 0);
    sm_env env;
    assert_int_equal(sm_env_open(own, SM_DIR_TO_AGENT, buf, (size_t)n, wall_ms(), &env, &err),
                     SM_REJ_NONE);
    nn_freemsg(buf);
    assert_int_equal(sm_key_derive(f->cfg.key, "h2", wrong, &err), 0);
    wrong[0] ^= 1;
    send_poll(f, 3, wrong, "h2");
    drain_until_refused(f, 1);
    assert_int_equal(sm_keys_derived(f->s.keys), 2);
    assert_int_equal(sm_keys_kept(f->s.keys), 1);
}

static long wal_size(const fixture *f)
{
    char path[128];
    snprintf(path, sizeof path, "%s-wal", f->db);
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Idle polls of a registered agent change nothing durable: their passes write nothing to the
 * store, so their commits cost no fdatasync (an idle fleet's polls are most of its traffic). */
static void test_server_passes_of_idle_polls_write_nothing_to_the_store(void **state)
{
    fixture *f = *state;
    uint8_t own[SM_KEY_LEN];
    sm_error err = {0};
    assert_int_equal(sm_key_derive(f->cfg.key, "h1", own, &err), 0);
    send_poll(f, 0, own, "h1");
    drain_until_polls(f, 1);
    const long before = wal_size(f);
    assert_true(before > 0); /* registering h1 wrote its row */
    for (size_t i = 1; i < 4; i++) {
        send_poll(f, i, own, "h1");
        drain_until_polls(f, 1 + i);
    }
    assert_int_equal(wal_size(f), before);
}

/* A kept key is the derived one; past its bound, keys are derived each time and not kept. */
static void test_keys_give_the_derived_key_and_keep_at_most_their_bound(void **state)
{
    (void)state;
    uint8_t fleet[SM_KEY_LEN], want[SM_KEY_LEN], got[SM_KEY_LEN];
    memset(fleet, 7, sizeof fleet);
    sm_error err = {0};
    sm_keys *k = sm_keys_new(fleet, 2);
    assert_non_null(k);
    const char *names[] = {"a1", "a2", "a3"};
    for (size_t round = 0; round < 2; round++) {
        for (size_t i = 0; i < 3; i++) {
            assert_int_equal(sm_keys_get(k, names[i], got, &err), 0);
            assert_int_equal(sm_key_derive(fleet, names[i], want, &err), 0);
            assert_memory_equal(got, want, SM_KEY_LEN);
            sm_keys_keep(k, names[i], got);
        }
    }
    /* a1 and a2 were derived once; a3, beyond the bound, twice. */
    assert_int_equal(sm_keys_derived(k), 4);
    assert_int_equal(sm_keys_kept(k), 2);
    assert_int_equal(sm_keys_get(k, SM_COORDINATOR, got, &err), SM_EINVAL);
    sm_keys_free(k);
    sm_keys_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_server_one_bus_pass_takes_at_most_its_bytes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_server_bus_pass_drops_and_counts_what_fails_its_checks,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_derives_an_agents_key_once_over_its_polls,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_passes_of_idle_polls_write_nothing_to_the_store,
                                        setup, teardown),
        cmocka_unit_test(test_keys_give_the_derived_key_and_keep_at_most_their_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
