/* Unit tests of the control core's runs: the order of their jobs, retries, cancel, parallel false,
 * pair jobs, and a random fleet that never double-books. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coordinator/control/control.h"
#include "coordinator/model/spec.h"
#include "coordinator/store/store.h"
#include "tests/unit/coordinator/control/control_fixture.h"

#define HOLD 1000

static int setup(void **state)
{
    return control_fixture_setup(state, HOLD);
}

static int teardown(void **state)
{
    return control_fixture_teardown(state);
}

static void test_control_run_jobs_of_a_host_alternate_variants_and_the_run_ends_done(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = control_fixture_start_run(f, 2, true, &p1, &p2);
    uint32_t cells[4];
    for (int i = 0; i < 4; i++) {
        uint64_t job = control_fixture_take_and_finish(f, &p1, true, "");
        sm_job_row row;
        sm_error err = {0};
        assert_int_equal(sm_store_job_get(f->st, job, &row, &err), 0);
        cells[i] = row.cell;
        sm_job_row_fini(&row);
    }
    /* A B A B on h1. */
    assert_int_not_equal(cells[0], cells[1]);
    assert_int_equal(cells[0], cells[2]);
    assert_int_equal(cells[1], cells[3]);
    sm_run_row r = control_fixture_run_row(f, id);
    assert_int_equal(r.state, SM_RUN_RUNNING); /* h2's four are still queued */
    sm_run_row_fini(&r);
    for (int i = 0; i < 4; i++)
        control_fixture_take_and_finish(f, &p2, true, "");
    r = control_fixture_run_row(f, id);
    assert_int_equal(r.state, SM_RUN_DONE);
    assert_int_equal(r.done, 8);
    assert_int_equal(r.failed, 0);
    sm_run_row_fini(&r);
}

static void
test_control_a_failed_run_job_is_retried_once_at_the_end_then_fails_for_good(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = control_fixture_start_run(f, 1, true, &p1, &p2);
    uint64_t first =
        control_fixture_take_and_finish(f, &p1, false, "server: time limit of 100 ms reached");
    uint64_t second = control_fixture_take_and_finish(f, &p1, true, "");
    assert_int_not_equal(first, second); /* the retry went to the back of the queue */
    sm_poll_reply r;
    bool now;
    control_fixture_poll(f, &p1, &r, &now);
    assert_int_equal(r.commands[0].job, first);
    assert_int_equal(r.commands[0].attempt, 2);
    sm_result_msg m = {.job = first, .attempt = 2};
    sm_result_init(&m.result);
    m.result.ok = false;
    snprintf(m.result.reason, sizeof m.result.reason, "server: time limit again");
    p1.results = &m;
    p1.n_results = 1;
    control_fixture_poll(f, &p1, &r, &now);
    p1.results = NULL;
    p1.n_results = 0;
    char reason[256];
    assert_int_equal(control_fixture_job_state(f, first, reason, sizeof reason), SM_JOB_FAILED);
    assert_non_null(strstr(reason, "again"));
    control_fixture_poll(f, &p1, &r, &now);
    assert_int_equal(r.n_commands, 0); /* no third attempt */
    control_fixture_take_and_finish(f, &p2, true, "");
    control_fixture_take_and_finish(f, &p2, true, "");
    sm_run_row row = control_fixture_run_row(f, id);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_int_equal(row.done, 3);
    assert_int_equal(row.failed, 1);
    assert_non_null(strstr(row.reason, "1 of 4"));
    sm_run_row_fini(&row);
}

static void test_control_cancel_fails_queued_jobs_and_cancels_the_running_one(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = control_fixture_start_run(f, 3, true, &p1, &p2);
    sm_poll_reply r;
    bool now;
    control_fixture_poll(f, &p1, &r, &now); /* h1 takes its first job */
    uint64_t running = r.commands[0].job;
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_run_cancel(f->c, id, f->now, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    sm_run_row row = control_fixture_run_row(f, id);
    assert_int_equal(row.state, SM_RUN_CANCELLED);
    assert_int_equal(row.failed, 12);
    sm_run_row_fini(&row);
    char reason[256];
    assert_int_equal(control_fixture_job_state(f, running, reason, sizeof reason), SM_JOB_FAILED);
    assert_non_null(strstr(reason, "cancelled"));
    control_fixture_poll(f, &p1, &r, &now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].kind, SM_CMD_CANCEL);
    assert_int_equal(r.commands[0].job, running);
    control_fixture_poll(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 0); /* nothing left to run */
    assert_int_equal(sm_control_run_cancel(f->c, id, f->now, &err), SM_EINVAL);
}

static void test_control_parallel_false_holds_other_hosts_until_the_running_job_ends(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    control_fixture_start_run(f, 2, false, &p1, &p2);
    sm_poll_reply r;
    bool now;
    control_fixture_poll(f, &p1, &r, &now);
    assert_int_equal(r.n_commands, 1);
    uint64_t job = r.commands[0].job;
    control_fixture_poll(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 0); /* h1 runs: h2 waits */
    /* h1's result opens the gate to the run's next job in its order: h1's other variant. */
    sm_result_msg m = {.job = job, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    p1.results = &m;
    p1.n_results = 1;
    control_fixture_poll(f, &p1, &r, &now);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.n_commands, 1);
    m.job = r.commands[0].job;
    control_fixture_poll(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 0); /* still one at a time */
    /* Repetition 0 of h1 is done: h1 asks first, but h2's repetition 0 comes before h1's
     * repetition 1, so the hosts take turns and a passing disturbance cannot fall on one
     * host's whole cell. */
    control_fixture_poll(f, &p1, &r, &now);
    p1.results = NULL;
    p1.n_results = 0;
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.n_commands, 0);
    /* h2's held poll is answered now, not at the end of its hold. */
    char names[8][SM_NAME_MAX + 1];
    size_t n = sm_control_take_news(f->c, names, 8);
    bool told = false;
    for (size_t i = 0; i < n; i++)
        told |= strcmp(names[i], "h2") == 0;
    assert_true(told);
    control_fixture_poll(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].kind, SM_CMD_ASSIGN);
}

/* ---- property: the real dispatch never double-books a host and always finishes ---- */

typedef struct sim_agent {
    sm_poll p;
    uint64_t job; /* the job it holds, 0 when none */
    uint32_t attempt;
    sm_role role;
    int steps_left; /* steps until its side is done; -1 while a client waits for start */
    bool ready_sent;
    char acks[4][SM_CMD_ID_MAX + 1];
    size_t n_acks;
    bool have_result;
    sm_result_msg result;
} sim_agent;

static uint64_t prng(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void sim_take(sim_agent *s, const sm_command *cmd, uint64_t *rng)
{
    if (cmd->kind == SM_CMD_CANCEL)
        return;
    if (s->job && (s->job != cmd->job || s->attempt != cmd->attempt))
        fail_msg("%s got job %llu while it holds job %llu: a host in two jobs", s->p.agent,
                 (unsigned long long)cmd->job, (unsigned long long)s->job);
    if (cmd->kind == SM_CMD_START && cmd->port == 0)
        fail_msg("%s was told to start before its server was ready", s->p.agent);
    if (s->n_acks < 4)
        snprintf(s->acks[s->n_acks++], sizeof s->acks[0], "%s", cmd->id);
    if (s->job)
        return; /* a resend of what it already holds */
    s->job = cmd->job;
    s->attempt = cmd->attempt;
    s->role = cmd->kind == SM_CMD_ASSIGN    ? SM_ROLE_BOTH
              : cmd->kind == SM_CMD_PREPARE ? SM_ROLE_SERVER
                                            : SM_ROLE_CLIENT;
    s->steps_left = 1 + (int)(prng(rng) % 4);
    s->ready_sent = false;
}

/* One poll of one simulated agent, and what it does with the reply. */
static void sim_poll(fixture *f, sim_agent *s, uint64_t *rng)
{
    sm_poll *p = &s->p;
    p->n_acks = s->n_acks;
    memcpy(p->acks, s->acks, sizeof s->acks);
    p->n_ready = 0;
    p->n_results = 0;
    p->results = NULL;
    p->state = s->job ? SM_AGENT_BUSY : SM_AGENT_IDLE;
    p->job = s->job;
    p->attempt = s->attempt;
    if (s->job && s->role == SM_ROLE_SERVER && !s->ready_sent) {
        p->ready[0] = (sm_ready){s->job, s->attempt, 40000, ""};
        p->n_ready = 1;
        s->ready_sent = true;
    }
    if (s->have_result) {
        p->results = &s->result;
        p->n_results = 1;
    }
    sm_poll_reply r;
    bool now;
    control_fixture_poll(f, p, &r, &now);
    s->n_acks = 0;
    if (s->have_result && r.n_acks)
        s->have_result = false;
    for (size_t i = 0; i < r.n_commands; i++)
        sim_take(s, &r.commands[i], rng);
    /* Time passes for a job in progress; a finished side becomes a result to deliver. A
     * server cannot finish before it has said it listens (its client could not connect). */
    if (s->job && (s->role != SM_ROLE_SERVER || s->ready_sent) && --s->steps_left <= 0 &&
        !s->have_result) {
        s->result = (sm_result_msg){.job = s->job, .attempt = s->attempt, .role = s->role};
        sm_result_init(&s->result.result);
        s->result.result.ok = true;
        sm_result_set(&s->result.result, SM_M_BYTES, 1000);
        sm_result_set(&s->result.result, SM_M_SECONDS, 0.01);
        s->have_result = true;
        s->job = 0;
    }
}

static void test_control_dispatch_never_double_books_and_every_run_ends(void **state)
{
    fixture *f0 = *state;
    uint64_t rng = 0x2545f4914f6cdd1dull;
    for (int round = 0; round < 40; round++) {
        /* A fresh store and control for every case. */
        sm_control_close(f0->c);
        sm_store_close(f0->st);
        char db[128];
        snprintf(db, sizeof db, "%s/p%d.db", f0->dir, round);
        sm_error err = {0};
        assert_int_equal(sm_store_open(&f0->st, db, &err), 0);
        sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
        assert_int_equal(sm_control_open(&f0->c, f0->st, &cfg, f0->now, &err), 0);

        const size_t n = 2 + prng(&rng) % 4;
        sim_agent sims[6];
        memset(sims, 0, sizeof sims);
        for (size_t i = 0; i < n; i++) {
            char name[8], boot[33];
            snprintf(name, sizeof name, "h%zu", i + 1);
            snprintf(boot, sizeof boot, "%032zx", i + 1);
            control_fixture_base_poll(&sims[i].p, name, boot);
            snprintf(sims[i].p.data_addr, sizeof sims[i].p.data_addr, "10.0.0.%zu", i + 1);
            sm_poll_reply r;
            bool now;
            control_fixture_poll(f0, &sims[i].p, &r, &now);
            sims[i].p.have_facts = false;
        }
        const bool local = prng(&rng) % 2, pair = !local || prng(&rng) % 2;
        const bool parallel = prng(&rng) % 2;
        char json[1024];
        int len = snprintf(json, sizeof json,
                           "{\"name\":\"p\",\"hosts\":\"all\",\"pairs\":\"%s\","
                           "\"repetitions\":%u,\"warmup\":%u,\"parallel\":%s,\"tests\":[",
                           prng(&rng) % 2 ? "mesh" : "ring", (unsigned)(1 + prng(&rng) % 3),
                           (unsigned)(prng(&rng) % 2), parallel ? "true" : "false");
        if (local)
            len += snprintf(json + len, sizeof json - (size_t)len,
                            "{\"workload\":\"stream\",\"scope\":\"local\","
                            "\"transport\":[\"tcp\",\"unix\"],\"count\":10}%s",
                            pair ? "," : "");
        if (pair)
            len += snprintf(json + len, sizeof json - (size_t)len,
                            "{\"workload\":\"rr\",\"scope\":\"pair\","
                            "\"transport\":\"tcp\",\"count\":10}");
        snprintf(json + len, sizeof json - (size_t)len, "]}");
        sm_spec spec;
        if (sm_spec_decode(json, strlen(json), &spec, &err) != 0)
            fail_msg("spec %s: %s", json, err.msg);
        uint64_t id = 0;
        assert_int_equal(sm_store_begin(f0->st, &err), 0);
        if (sm_control_run_start(f0->c, json, &spec, f0->now, &id, &err))
            fail_msg("run %s: %s", json, err.msg);
        assert_int_equal(sm_store_commit(f0->st, &err), 0);
        sm_spec_fini(&spec);

        int step = 0;
        for (; step < 20000; step++) {
            sim_poll(f0, &sims[prng(&rng) % n], &rng);
            if (step % 50 == 0) {
                sm_run_row row;
                assert_int_equal(sm_store_run_get(f0->st, id, &row, &err), 0);
                const bool ended = row.state != SM_RUN_RUNNING;
                if (ended && row.state != SM_RUN_DONE)
                    fail_msg("case %d (%s) ended %s: %s", round, json, sm_run_state_name(row.state),
                             row.reason);
                sm_run_row_fini(&row);
                if (ended)
                    break;
            }
        }
        if (step == 20000) {
            sm_job_row *jobs = NULL;
            size_t nj = 0;
            char where[512] = "";
            size_t used = 0;
            assert_int_equal(sm_store_run_jobs(f0->st, id, &jobs, &nj, &err), 0);
            for (size_t i = 0; i < nj && used < sizeof where - 64; i++)
                if (jobs[i].state != SM_JOB_DONE)
                    used += (size_t)snprintf(where + used, sizeof where - used, " %llu:%s->%s:%s",
                                             (unsigned long long)jobs[i].id, jobs[i].host,
                                             jobs[i].peer, sm_job_state_name(jobs[i].state));
            sm_store_jobs_free(jobs, nj);
            fail_msg("case %d (%s) did not finish in 20000 polls; stuck:%s", round, json, where);
        }
        for (size_t i = 0; i < n; i++)
            if (sims[i].have_result)
                sm_result_fini(&sims[i].result.result);
    }
}

/* ---- a coordinator restart during a pair job ---- */

/* Registers h1 and h2 (with data addresses) idle and starts a pair run of stream tcp, one
 * repetition on the mesh of the two: two pair jobs, one at a time since both need both. */
static uint64_t start_pair_run(fixture *f, sm_poll *p1, sm_poll *p2)
{
    sm_poll_reply r;
    bool now;
    control_fixture_base_poll(p1, "h1", "11111111111111111111111111111111");
    control_fixture_base_poll(p2, "h2", "22222222222222222222222222222222");
    snprintf(p1->data_addr, sizeof p1->data_addr, "10.0.0.1");
    snprintf(p2->data_addr, sizeof p2->data_addr, "10.0.0.2");
    control_fixture_poll(f, p1, &r, &now);
    control_fixture_poll(f, p2, &r, &now);
    p1->have_facts = p2->have_facts = false;
    const char *json = "{\"name\":\"e2r\",\"hosts\":[\"h1\",\"h2\"],\"pairs\":\"mesh\","
                       "\"repetitions\":1,\"warmup\":0,\"tests\":[{\"workload\":\"stream\","
                       "\"scope\":\"pair\",\"transport\":\"tcp\",\"duration_ms\":2000}]}";
    return control_fixture_start(f, json);
}

/* Both idle agents poll until one is told to prepare, the server says it listens, and the
 * client is told to start; both ack and report busy. *server is the index of the server. */
static void pair_handshake(fixture *f, sm_poll *ps[2], uint64_t *job, uint32_t *attempt,
                           int *server)
{
    sm_poll_reply r;
    bool now;
    *server = -1;
    for (int round = 0; round < 3 && *server < 0; round++)
        for (int i = 0; i < 2 && *server < 0; i++) {
            ps[i]->state = SM_AGENT_IDLE;
            ps[i]->n_acks = 0;
            ps[i]->n_ready = 0;
            control_fixture_poll(f, ps[i], &r, &now);
            for (size_t k = 0; k < r.n_commands; k++)
                if (r.commands[k].kind == SM_CMD_PREPARE) {
                    /* The server learns its client's address: it accepts that one alone. */
                    assert_string_equal(r.commands[k].addr, ps[1 - i]->data_addr);
                    *server = i;
                    *job = r.commands[k].job;
                    *attempt = r.commands[k].attempt;
                    snprintf(ps[i]->acks[0], sizeof ps[i]->acks[0], "%s", r.commands[k].id);
                }
        }
    if (*server < 0)
        fail_msg("no side was told to prepare");
    sm_poll *s = ps[*server], *cl = ps[1 - *server];
    s->n_acks = 1;
    s->state = SM_AGENT_BUSY;
    s->job = *job;
    s->attempt = *attempt;
    s->ready[0] = (sm_ready){*job, *attempt, 40000, ""};
    s->n_ready = 1;
    control_fixture_poll(f, s, &r, &now);
    s->n_acks = 0;
    s->n_ready = 0;
    cl->state = SM_AGENT_IDLE;
    control_fixture_poll(f, cl, &r, &now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].kind, SM_CMD_START);
    assert_int_equal(r.commands[0].job, *job);
    assert_int_equal(r.commands[0].attempt, *attempt);
    snprintf(cl->acks[0], sizeof cl->acks[0], "%s", r.commands[0].id);
    cl->n_acks = 1;
    cl->state = SM_AGENT_BUSY;
    cl->job = *job;
    cl->attempt = *attempt;
    control_fixture_poll(f, cl, &r, &now);
    cl->n_acks = 0;
    assert_int_equal(control_fixture_job_state(f, *job, NULL, 0), SM_JOB_RUNNING);
}

/* One side's result arrives with an idle poll; it is acked. */
static void deliver_side(fixture *f, sm_poll *p, uint64_t job, uint32_t attempt, sm_role role)
{
    sm_poll_reply r;
    bool now;
    sm_result_msg m = {.job = job, .attempt = attempt, .role = role};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_BYTES, 1000);
    sm_result_set(&m.result, SM_M_SECONDS, 0.01);
    p->state = SM_AGENT_IDLE;
    p->job = 0;
    p->attempt = 0;
    p->results = &m;
    p->n_results = 1;
    control_fixture_poll(f, p, &r, &now);
    p->results = NULL;
    p->n_results = 0;
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.ack_job[0], job);
    assert_int_equal(r.ack_attempt[0], attempt);
}

static void test_control_a_pair_job_in_flight_at_a_restart_runs_again_as_a_new_attempt(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    sm_poll *ps[2] = {&p1, &p2};
    uint64_t run = start_pair_run(f, &p1, &p2);
    uint64_t job;
    uint32_t attempt;
    int server;
    pair_handshake(f, ps, &job, &attempt, &server);
    assert_int_equal(attempt, 1);

    /* The coordinator restarts while both sides run the job. */
    sm_control_close(f->c);
    sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
    sm_error err = {0};
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
    sm_poll_reply r;
    bool now;
    control_fixture_poll(f, &p1, &r, &now); /* both still busy with attempt 1 */
    control_fixture_poll(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 0);

    /* Both sides deliver attempt 1: its handshake was lost with the old process, so the job
     * runs again; it must not be freed while it still sits in the two queues. */
    deliver_side(f, ps[server], job, 1, SM_ROLE_SERVER);
    deliver_side(f, ps[1 - server], job, 1, SM_ROLE_CLIENT);
    assert_int_equal(control_fixture_results(f), 0);

    /* It runs again as attempt 2, whose sides are not mistaken for attempt 1's. */
    uint64_t again;
    uint32_t attempt2;
    pair_handshake(f, ps, &again, &attempt2, &server);
    assert_int_equal(again, job);
    assert_int_equal(attempt2, 2);
    deliver_side(f, ps[server], job, 2, SM_ROLE_SERVER);
    deliver_side(f, ps[1 - server], job, 2, SM_ROLE_CLIENT);
    assert_int_equal(control_fixture_job_state(f, job, NULL, 0), SM_JOB_DONE);
    assert_int_equal(control_fixture_results(f), 1);
    char *json = NULL;
    assert_int_equal(sm_store_result_get(f->st, job, 2, &json, &err), 0);
    assert_non_null(json);
    free(json);
    assert_int_equal(sm_store_result_get(f->st, job, 1, &json, &err), 0);
    assert_null(json);

    /* The run goes on with its other job and ends done. */
    uint64_t next;
    uint32_t attempt3;
    pair_handshake(f, ps, &next, &attempt3, &server);
    assert_int_not_equal(next, job);
    assert_int_equal(attempt3, 1);
    deliver_side(f, ps[server], next, 1, SM_ROLE_SERVER);
    deliver_side(f, ps[1 - server], next, 1, SM_ROLE_CLIENT);
    assert_int_equal(control_fixture_results(f), 2);
    sm_run_row row = control_fixture_run_row(f, run);
    assert_int_equal(row.state, SM_RUN_DONE);
    assert_int_equal(row.done, 2);
    assert_int_equal(row.failed, 0);
    sm_run_row_fini(&row);
}

static void test_control_a_pair_side_from_another_host_is_acked_but_never_stored(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2, p3;
    sm_poll *ps[2] = {&p1, &p2};
    start_pair_run(f, &p1, &p2);
    uint64_t job;
    uint32_t attempt;
    int server;
    pair_handshake(f, ps, &job, &attempt, &server);
    sm_poll_reply r;
    bool now;
    control_fixture_base_poll(&p3, "h3", "33333333333333333333333333333333");
    control_fixture_poll(f, &p3, &r, &now);
    p3.have_facts = false;
    /* h3 holds the fleet key but ran neither side: each is acked, so that it stops sending
     * them, and neither is stored nor ends the job. */
    deliver_side(f, &p3, job, attempt, SM_ROLE_SERVER);
    deliver_side(f, &p3, job, attempt, SM_ROLE_CLIENT);
    sm_control_stats st;
    sm_control_get_stats(f->c, &st);
    assert_int_equal(st.results_wrong_host, 2);
    char *json = NULL;
    sm_error err = {0};
    assert_int_equal(sm_store_side_get(f->st, job, attempt, "server", &json, &err), 0);
    assert_null(json);
    assert_int_equal(sm_store_side_get(f->st, job, attempt, "client", &json, &err), 0);
    assert_null(json);
    assert_int_equal(control_fixture_job_state(f, job, NULL, 0), SM_JOB_RUNNING);
    /* Its own hosts complete it. */
    deliver_side(f, ps[server], job, attempt, SM_ROLE_SERVER);
    deliver_side(f, ps[1 - server], job, attempt, SM_ROLE_CLIENT);
    assert_int_equal(control_fixture_job_state(f, job, NULL, 0), SM_JOB_DONE);
    assert_int_equal(control_fixture_results(f), 1);
    sm_control_get_stats(f->c, &st);
    assert_int_equal(st.results_wrong_host, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_control_run_jobs_of_a_host_alternate_variants_and_the_run_ends_done, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_failed_run_job_is_retried_once_at_the_end_then_fails_for_good, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_cancel_fails_queued_jobs_and_cancels_the_running_one, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_parallel_false_holds_other_hosts_until_the_running_job_ends, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_pair_job_in_flight_at_a_restart_runs_again_as_a_new_attempt, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_pair_side_from_another_host_is_acked_but_never_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_dispatch_never_double_books_and_every_run_ends,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
