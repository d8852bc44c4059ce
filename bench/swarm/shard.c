/* sm-swarm: a shard process, up to SHARD_MAX simulated agents on one nn_poll loop. */
#include "bench/swarm/swarm.h"
#include "testkit/draw.h"

typedef struct pend {
    uint64_t job;
    uint32_t attempt;
} pend;

typedef struct agent {
    sm_session *ses; /* its nonce is the last poll's: the reply must name it */
    char name[SM_NAME_MAX + 1];
    char boot[SM_BOOT_HEX + 1];
    /* Its own key, derived from the fleet key as the coordinator does (a bench tool may hold
     * the fleet key; a real agent holds only its own). */
    uint8_t key[SM_KEY_LEN];
    uint64_t seq;
    bool send_facts;
    bool registered;
    bool awaiting;  /* a poll is out and unanswered */
    int64_t due_ns; /* send a poll at this time: first one, resend, or retry after EAGAIN */
    /* How long a poll waits for its answer: the coordinator's hold (--hold-ms, or what its
     * replies said) + RESEND_SLACK_MS, as the daemon's does. */
    long wait_ms;
    char acks[SM_POLL_ACKS_MAX][SM_CMD_ID_MAX + 1];
    size_t n_acks;
    pend pending[PENDING_MAX];
    size_t n_pending;
} agent;

typedef struct shard {
    int index;
    const opts *o;
    const uint8_t *key;
    shared *sh;
    agent *agents;
    size_t n;
    struct nn_pollfd *pfd;
    sm_facts facts;
    sm_poll poll;
    sm_result_msg results[SM_POLL_RESULTS_MAX];
    sm_hist *rtt; /* --rr: the histogram every fake result carries (read only); owned */
    uint64_t bad_logged;
} shard;

/* Plausible facts: what a small lab host would report. */
static void fake_facts(sm_facts *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->kernel, sizeof f->kernel, "6.1.0-swarm");
    snprintf(f->cpu_model, sizeof f->cpu_model, "Simulated CPU @ 2.40GHz");
    f->cores = 4;
    f->mem_bytes = 8ull << 30;
    snprintf(f->congestion, sizeof f->congestion, "cubic");
    f->lo_mtu = 65536;
    f->loadavg[0] = 0.12;
    f->loadavg[1] = 0.08;
    f->loadavg[2] = 0.05;
    f->tcp_autocorking = 1;
}

/* The result of a stream job of one 1-byte message, as the agent would report it; with rtt,
 * of an rr job of 20,000 round trips with that histogram (which r only points to). */
static void fake_result(sm_result *r, sm_hist *rtt)
{
    sm_result_init(r);
    r->ok = true;
    if (!rtt) {
        sm_result_set(r, SM_M_BYTES, 1);
        sm_result_set(r, SM_M_SECONDS, 0.0001);
        sm_result_set(r, SM_M_THROUGHPUT, 1 / 0.0001 / 1e6);
        return;
    }
    const double p50_ns = (double)sm_hist_percentile(rtt, 50);
    sm_result_set(r, SM_M_BYTES, 2.0 * (double)sm_hist_count(rtt));
    sm_result_set(r, SM_M_SECONDS, (double)sm_hist_count(rtt) * p50_ns / 1e9);
    sm_result_set(r, SM_M_RT_PER_S, 1e9 / p50_ns);
    sm_result_set(r, SM_M_RTT_P50_US, p50_ns / 1e3);
    sm_result_set(r, SM_M_RTT_P99_US, (double)sm_hist_percentile(rtt, 99) / 1e3);
    sm_result_set(r, SM_M_RTT_MAX_US, (double)sm_hist_max(rtt) / 1e3);
    r->hist = rtt;
}

/* 20,000 loopback round trips as bench/hist_decode.c draws them: log-normal around a median of
 * 18-26 us (sigma 0.04), one in two hundred in a tail out to about 5 ms; about 461 non-empty
 * buckets. NULL when out of memory. */
static sm_hist *fake_rtt(int index)
{
    sm_hist *h = sm_hist_new_sparse(512);
    uint64_t seed = 0x9e3779b97f4a7c15ull + (uint64_t)index;
    const double median = draw_rtt_median_ns(&seed);
    for (int k = 0; h && k < 20000; k++) {
        if (sm_hist_record(h, draw_rtt_ns(&seed, median)) != 0) {
            sm_hist_free(h);
            return NULL;
        }
    }
    return h;
}

/* An rr result is some 5 KB of JSON: 16 of them keep a poll well inside SM_MSG_MAX. */
#define RR_RESULTS_PER_POLL 16

static int random_hex(char *out, size_t n_hex)
{
    uint8_t raw[64];
    size_t n = n_hex / 2;
    if (n > sizeof raw || RAND_bytes(raw, (int)n) != 1)
        return SM_ESYS;
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

static int send_poll(shard *s, agent *a, int64_t now_ns)
{
    sm_poll *p = &s->poll;
    sm_error err = {0};
    memset(p, 0, sizeof *p);
    snprintf(p->agent, sizeof p->agent, "%s", a->name);
    snprintf(p->boot, sizeof p->boot, "%s", a->boot);
    p->seq = a->seq++;
    p->wait_ms = (uint32_t)a->wait_ms;
    p->state = SM_AGENT_IDLE;
    if (a->send_facts) {
        p->have_facts = true;
        p->facts = s->facts;
        snprintf(p->facts.hostname, sizeof p->facts.hostname, "%s", a->name);
    }
    memcpy(p->acks, a->acks, a->n_acks * sizeof a->acks[0]);
    p->n_acks = a->n_acks;
    const size_t most = s->rtt ? RR_RESULTS_PER_POLL : SM_POLL_RESULTS_MAX;
    size_t nr = a->n_pending < most ? a->n_pending : most;
    for (size_t i = 0; i < nr; i++) {
        s->results[i].job = a->pending[i].job;
        s->results[i].attempt = a->pending[i].attempt;
        fake_result(&s->results[i].result, s->rtt);
    }
    p->results = s->results; /* ours, not the poll's: no sm_msg_poll_fini */
    p->n_results = nr;
    size_t blen;
    char *body = sm_msg_poll_encode(p, &blen, &err);
    if (!body) {
        say("shard %d: %s: cannot build a poll: %s", s->index, a->name, err.msg);
        return SM_EINVAL;
    }
    /* A REQ socket drops the outstanding request when a new one is sent: a resend supersedes
     * the lost poll, as the daemon's does. */
    int rc = sm_session_send(a->ses, body, blen, (uint64_t)sm_wall_ms(), NN_DONTWAIT, &err);
    free(body);
    if (rc) {
        if (rc != SM_ETIMEDOUT) {
            say("shard %d: %s: %s%s", s->index, a->name,
                rc == SM_ESYS ? "" : "cannot build a poll: ", err.msg);
            return rc;
        }
        atomic_fetch_add(&s->sh->send_again, 1);
        a->due_ns = now_ns + SCAN_MS * NS_PER_MS;
        return 0;
    }
    if (a->awaiting)
        atomic_fetch_add(&s->sh->resends, 1);
    a->awaiting = true;
    a->due_ns = now_ns + a->wait_ms * NS_PER_MS;
    return 0;
}

static void ack(agent *a, const char *id)
{
    for (size_t i = 0; i < a->n_acks; i++)
        if (strcmp(a->acks[i], id) == 0)
            return;
    if (a->n_acks < SM_POLL_ACKS_MAX)
        snprintf(a->acks[a->n_acks++], sizeof a->acks[0], "%s", id);
}

static void take_assign(shard *s, agent *a, const sm_command *c, int64_t now_ns)
{
    if (a->n_pending == PENDING_MAX)
        return; /* no ack: the coordinator sends it again */
    if (job_arrived(s->sh, c->job, now_ns)) {
        atomic_fetch_add(&s->sh->assigns, 1);
        a->pending[a->n_pending++] = (pend){c->job, c->attempt};
        atomic_fetch_add(&s->sh->pending, 1);
    }
    /* A resent assign (its ack was lost) is only acked again: its result is pending or stored. */
    ack(a, c->id);
}

/* Handles the reply waiting on a's socket and sends the next poll. */
static int take_reply(shard *s, agent *a)
{
    sm_error err = {0};
    sm_env env;
    sm_reject why;
    int rc = sm_session_recv(a->ses, NN_DONTWAIT, (uint64_t)sm_wall_ms(), &env, &why, &err);
    const int64_t now_ns = sm_mono_ns();
    if (rc) {
        if (rc == SM_ETIMEDOUT)
            return 0;
        say("shard %d: %s: %s", s->index, a->name, err.msg);
        return rc;
    }
    sm_poll_reply r;
    if (why == SM_REJ_NONE && sm_msg_reply_decode(env.body, env.body_len, &r, &err) != 0)
        why = SM_REJ_BODY;
    if (why == SM_REJ_NONE &&
        (strcmp(r.to, a->name) != 0 || strcmp(r.poll, sm_session_nonce(a->ses)) != 0)) {
        why = SM_REJ_MISDIRECTED;
        snprintf(err.msg, sizeof err.msg, "a reply for %s's poll %.8s...", r.to, r.poll);
    }
    sm_session_release(a->ses);
    a->awaiting = false;
    if (why != SM_REJ_NONE) {
        atomic_fetch_add(&s->sh->bad_replies, 1);
        if (s->bad_logged++ < 5)
            say("shard %d: %s: reply refused (%s): %s", s->index, a->name, sm_reject_name(why),
                err.msg);
        return send_poll(s, a, now_ns);
    }
    atomic_fetch_add(&s->sh->replies, 1);
    if (!a->registered) {
        a->registered = true;
        atomic_fetch_add(&s->sh->registered, 1);
    }
    a->n_acks = 0; /* they rode on the poll this reply answers */
    if (r.hold_ms) {
        a->wait_ms = (long)r.hold_ms + RESEND_SLACK_MS;
        uint64_t told = atomic_load(&s->sh->hold_told_ms);
        while (r.hold_ms > told &&
               !atomic_compare_exchange_weak(&s->sh->hold_told_ms, &told, (uint64_t)r.hold_ms))
            ;
    }
    a->send_facts = r.want_facts;
    for (size_t i = 0; i < r.n_acks; i++)
        for (size_t k = 0; k < a->n_pending; k++)
            if (a->pending[k].job == r.ack_job[i] && a->pending[k].attempt == r.ack_attempt[i]) {
                memmove(&a->pending[k], &a->pending[k + 1],
                        (a->n_pending - k - 1) * sizeof a->pending[0]);
                a->n_pending--;
                atomic_fetch_add(&s->sh->acked, 1);
                atomic_fetch_sub(&s->sh->pending, 1);
                break;
            }
    for (size_t i = 0; i < r.n_commands; i++) {
        if (r.commands[i].kind == SM_CMD_ASSIGN)
            take_assign(s, a, &r.commands[i], now_ns);
        else
            ack(a, r.commands[i].id); /* cancel: nothing runs; prepare/start: not simulated */
    }
    return send_poll(s, a, now_ns);
}

static int open_agent(shard *s, agent *a, size_t global_index)
{
    snprintf(a->name, sizeof a->name, "swarm-%05zu", global_index);
    sm_error err = {0};
    if (sm_key_derive(s->key, a->name, a->key, &err) != 0) {
        say("shard %d: %s", s->index, err.msg);
        return SM_ESYS;
    }
    if (random_hex(a->boot, SM_BOOT_HEX) != 0) {
        say("shard %d: RAND_bytes failed", s->index);
        return SM_ESYS;
    }
    a->send_facts = true;
    a->wait_ms = s->o->hold_ms + RESEND_SLACK_MS;
    const sm_session_opts o = {
        .url = s->o->bus_url,
        /* nanomsg's own resend would repeat the nonce, which the coordinator drops as a
         * replay: the agent resends by itself, as the daemon does. */
        .resend_ivl_ms = 3600 * 1000,
        .reconnect_ivl_ms = 100,
        .reconnect_ivl_max_ms = 5000,
        .max_msg = 1024 * 1024,
    };
    if (sm_session_open(&a->ses, &o, a->key, a->name, &err) != 0) {
        say("shard %d: %s: %s", s->index, a->name, err.msg);
        return SM_ESYS;
    }
    return 0;
}

static int shard_loop(shard *s, pid_t parent)
{
    int64_t next_scan = 0;
    while (!atomic_load(&s->sh->stop)) {
        const int64_t now = sm_mono_ns();
        if (now >= next_scan) {
            for (size_t i = 0; i < s->n; i++) {
                agent *a = &s->agents[i];
                if (now >= a->due_ns) {
                    int rc = send_poll(s, a, now);
                    if (rc)
                        return rc;
                }
            }
            next_scan = now + SCAN_MS * NS_PER_MS;
            if (getppid() != parent) {
                say("shard %d: the parent process is gone", s->index);
                return SM_ESYS;
            }
        }
        int n = nn_poll(s->pfd, (int)s->n, SCAN_MS);
        if (n < 0) {
            if (nn_errno() == EINTR)
                continue;
            say("shard %d: nn_poll: %s", s->index, nn_strerror(nn_errno()));
            return SM_ESYS;
        }
        for (size_t i = 0; i < s->n && n > 0; i++) {
            if (!(s->pfd[i].revents & NN_POLLIN))
                continue;
            n--;
            int rc = take_reply(s, &s->agents[i]);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* Runs agents [first, first + n) until sh->stop; returns the process's exit status. */
int shard_main(int index, const opts *o, const uint8_t *key, shared *sh, size_t first, size_t n,
               pid_t parent)
{
    shard s;
    memset(&s, 0, sizeof s);
    s.index = index;
    s.o = o;
    s.key = key;
    s.sh = sh;
    fake_facts(&s.facts);
    s.agents = calloc(n, sizeof *s.agents);
    s.pfd = calloc(n, sizeof *s.pfd);
    s.rtt = o->rr ? fake_rtt(index) : NULL;
    int rc = 0;
    if (!s.agents || !s.pfd || (o->rr && !s.rtt)) {
        say("shard %d: out of memory", index);
        rc = SM_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n && !rc; i++) {
        rc = open_agent(&s, &s.agents[i], first + i);
        s.pfd[i] =
            (struct nn_pollfd){.fd = sm_session_socket(s.agents[i].ses), .events = NN_POLLIN};
        s.n = i + 1;
    }
    if (!rc)
        rc = shard_loop(&s, parent);
out:
    /* sm_session_close leaves the REQ sockets to the shard's exit, which comes next: nanomsg
     * 1.1.5's nn_close frees twice a late reply the socket dropped (see agent/session/session.h), and
     * a shard under load gets late replies. */
    for (size_t i = 0; i < s.n; i++)
        sm_session_close(s.agents[i].ses);
    free(s.agents);
    free(s.pfd);
    sm_hist_free(s.rtt);
    return rc ? 1 : 0;
}
