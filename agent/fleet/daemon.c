/* The agent's fleet mode: long polls over a REQ socket, a worker thread, the spool. */
#include "agent/fleet/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <openssl/rand.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "agent/host/facts.h"
#include "agent/host/fingerprint.h"
#include "agent/runner/runner.h"
#include "agent/session/session.h"
#include "proto/clock.h"
#include "agent/spool/spool.h"
#include "agent/workloads/tls.h"
#include "agent/workloads/http.h"
#include "proto/log.h"

/* ---- commands ---- */

static bool seen(agentd *d, uint64_t job, uint32_t attempt)
{
    for (size_t i = 0; i < d->n_seen; i++)
        if (d->seen_job[i] == job && d->seen_attempt[i] == attempt)
            return true;
    char *data = NULL;
    size_t len;
    sm_error err;
    if (sm_spool_get(d->spool, job, attempt, &data, &len, &err) == 0) {
        free(data);
        return true;
    }
    return false;
}

static void remember(agentd *d, uint64_t job, uint32_t attempt)
{
    size_t i = d->n_seen < SEEN_MAX ? d->n_seen++ : (size_t)(job % SEEN_MAX);
    d->seen_job[i] = job;
    d->seen_attempt[i] = attempt;
}

static void ack(agentd *d, const char *id)
{
    for (size_t i = 0; i < d->n_acks; i++)
        if (strcmp(d->acks[i], id) == 0)
            return;
    if (d->n_acks < SM_POLL_ACKS_MAX)
        snprintf(d->acks[d->n_acks++], sizeof d->acks[0], "%s", id);
}

/* assign, prepare and start: a job for the worker, in the given role. */
static void take_job(agentd *d, const sm_command *c, sm_role role)
{
    worker *w = &d->w;
    pthread_mutex_lock(&w->mu);
    if (seen(d, c->job, c->attempt)) {
        ack(d, c->id); /* already taken: the earlier ack was lost */
    } else if (!w->has_job) {
        w->has_job = true;
        w->job = c->job;
        w->attempt = c->attempt;
        w->role = role;
        w->params = c->params;
        memcpy(w->addr, c->addr, sizeof w->addr);
        w->port = c->port;
        memcpy(w->pin, c->pin, sizeof w->pin);
        memcpy(w->store, d->store, sizeof w->store);
        w->ready = false;
        remember(d, c->job, c->attempt);
        pthread_cond_signal(&w->cv);
        ack(d, c->id);
    }
    /* Busy with another job: no ack, so the coordinator sends it again later. */
    pthread_mutex_unlock(&w->mu);
}

static void take_command(agentd *d, const sm_command *c)
{
    worker *w = &d->w;
    switch (c->kind) {
    case SM_CMD_ASSIGN:
        take_job(d, c, SM_ROLE_BOTH);
        break;
    case SM_CMD_PREPARE:
        take_job(d, c, SM_ROLE_SERVER);
        break;
    case SM_CMD_START:
        take_job(d, c, SM_ROLE_CLIENT);
        break;
    case SM_CMD_CANCEL:
        pthread_mutex_lock(&w->mu);
        if (w->has_job && w->job == c->job && w->attempt == c->attempt)
            atomic_store(&w->abort, 1);
        pthread_mutex_unlock(&w->mu);
        ack(d, c->id);
        break;
    }
}

/* ---- the coordinator's store ---- */

/* A spooled result of a job that another store assigned: the coordinator would refuse it (its
 * job id may name another job now), and keeping it would also make that id look taken. It is
 * moved aside, never deleted: the measurement is the user's. Returns whether it was. */
static bool set_aside_if_foreign(agentd *d, const sm_result_msg *m)
{
    if (!m->store[0] || !d->store[0] || strcmp(m->store, d->store) == 0)
        return false;
    sm_error err = {0};
    if (sm_spool_set_aside(d->spool, m->job, m->attempt, m->store, &err) != 0) {
        /* Still in the spool: sent again, refused again, moved at the next try. */
        sm_log(LOG_ERR, "SM-SPOOL-ASIDE", "result %" PRIu64 ".%u of store %s: %s", m->job,
               m->attempt, m->store, err.msg);
        return false;
    }
    sm_log(LOG_WARNING, "SM-SPOOL-ASIDE",
           "result %" PRIu64 ".%u was measured for store %s, not the coordinator's store %s: "
           "kept in %s/%s/%s, not sent",
           m->job, m->attempt, m->store, d->store, d->cfg->spool_dir, SM_SPOOL_ASIDE_DIR, m->store);
    return true;
}

/* Every spooled result of another store than the current one goes aside, before the reply's
 * commands are taken: a job id it holds must not look taken in the new store. */
static void set_aside_foreign(agentd *d)
{
    size_t n = sm_spool_count(d->spool);
    if (n == 0)
        return;
    uint64_t *jobs = malloc(n * sizeof *jobs);
    uint32_t *attempts = malloc(n * sizeof *attempts);
    if (jobs && attempts)
        n = sm_spool_list(d->spool, jobs, attempts, n);
    else
        n = 0; /* build_poll still moves them, a batch at a time */
    for (size_t i = 0; i < n; i++) {
        char *data = NULL;
        size_t len;
        sm_error e = {0};
        sm_result_msg m;
        if (sm_spool_get(d->spool, jobs[i], attempts[i], &data, &len, &e) != 0)
            continue;
        if (sm_msg_result_decode(data, len, &m, &e) == 0) {
            set_aside_if_foreign(d, &m);
            sm_result_fini(&m.result);
        }
        free(data);
    }
    free(jobs);
    free(attempts);
}

/* The reply names the coordinator's store. Another one than before (a store deleted or
 * replaced, or rolled back by a cut WAL) counts job ids from 1 again: the ids this agent took
 * from the old one mean nothing there, and treating the new job 1 as a resend of the old job 1
 * would ack it without running it. */
/* Collects the fingerprint anew and queues it for the next polls. What cannot be read is in it
 * as such; only memory can fail, and then the old one stays. */
static void collect_fp(agentd *d)
{
    sm_fingerprint fp;
    sm_fp_init(&fp);
    sm_error err = {0};
    size_t len = 0;
    char *text = NULL;
    if (sm_fp_collect(&fp, d->cfg->data_addr, &err) == 0 &&
        sm_fp_set(&fp, "info.allow_experiment", sm_treat_allow_text(d->cfg->allow_experiment),
                  &err) == 0)
        text = sm_fp_encode(&fp, &len, &err);
    if (text == NULL) {
        sm_log(LOG_ERR, "SM-FP-FAIL", "fingerprint not collected: %s", err.msg);
        sm_fp_fini(&fp);
        return;
    }
    free(text);
    sm_fp_fini(&d->fp);
    d->fp = fp;
    d->fp_len = len;
    d->send_fp = true;
}

static void take_store_id(agentd *d, const char *store)
{
    if (!store[0] || strcmp(store, d->store) == 0)
        return; /* a coordinator from before store ids says nothing */
    const bool changed = d->store[0] != '\0';
    if (changed)
        sm_log(LOG_WARNING, "SM-STORE-CHANGED",
               "the coordinator's store changed (%s -> %s): job ids start over", d->store, store);
    snprintf(d->store, sizeof d->store, "%s", store);
    /* A new store knows nothing of this host's settings. */
    if (changed)
        d->send_fp = true;
    worker *w = &d->w;
    pthread_mutex_lock(&w->mu);
    /* The first id this process hears (it started, or its coordinator gained store ids) says
     * nothing of the ids it took before: a coordinator upgraded in place keeps its store. */
    if (changed)
        d->n_seen = 0;
    /* The failure that stands in for a result the spool refused belongs to its store too. */
    if (d->has_unspooled && d->unspooled.store[0] && strcmp(d->unspooled.store, store) != 0)
        d->has_unspooled = false;
    /* A job of the old store still running could only be set aside: the new store's jobs
     * should not wait for it. */
    if (w->has_job && w->store[0] && strcmp(w->store, store) != 0)
        atomic_store(&w->abort, 1);
    pthread_mutex_unlock(&w->mu);
    set_aside_foreign(d);
}

/* ---- the poll ---- */

/* Reads one spooled result for the poll into *m (1), or says why it cannot be sent: 0 for
 * now (a shortage, or the entry went meanwhile), -1 for ever (written into why). */
static int read_spooled(agentd *d, uint64_t job, uint32_t attempt, size_t *size, sm_result_msg *m,
                        char *why, size_t why_len)
{
    char *data = NULL;
    size_t len = 0;
    sm_error e = {0};
    int rc = sm_spool_get(d->spool, job, attempt, &data, &len, &e);
    if (rc == SM_EPARSE)
        snprintf(why, why_len, "%s", e.msg);
    if (rc != 0)
        return rc == SM_EPARSE ? -1 : 0;
    int got = -1;
    if (len > POLL_RESULTS_BYTES)
        snprintf(why, why_len, "%zu bytes, more than the %u a poll carries", len,
                 POLL_RESULTS_BYTES);
    else if (sm_msg_result_decode(data, len, m, &e) != 0)
        snprintf(why, why_len, "not a result: %s", e.msg);
    else
        got = 1;
    free(data);
    *size = len;
    return got;
}

/* The oldest spooled results, as many as a poll carries by count and by size, into results[];
 * returns how many. An entry that can never be sent is quarantined (moved aside, logged once,
 * counted) on the way, so it holds back nothing behind it. */
static size_t take_spooled(agentd *d, sm_result_msg results[SM_POLL_RESULTS_MAX], size_t budget)
{
    /* The whole index, not a window of SM_POLL_RESULTS_MAX: a window full of entries that
     * turn out bad would carry nothing this time. Normally a handful of keys. */
    size_t n = sm_spool_count(d->spool);
    if (n == 0)
        return 0;
    uint64_t *jobs = malloc(n * sizeof *jobs);
    uint32_t *attempts = malloc(n * sizeof *attempts);
    if (!jobs || !attempts)
        n = 0; /* the next poll tries again */
    else
        n = sm_spool_list(d->spool, jobs, attempts, n);
    size_t nr = 0, bytes = 0;
    for (size_t i = 0; i < n && nr < SM_POLL_RESULTS_MAX; i++) {
        char why[SM_ERR_MSG_MAX + 64] = "";
        size_t size = 0;
        int got = read_spooled(d, jobs[i], attempts[i], &size, &results[nr], why, sizeof why);
        if (got < 0) {
            sm_error e = {0};
            sm_spool_quarantine(d->spool, jobs[i], attempts[i], why, &e); /* logs once */
            continue;
        }
        if (got == 0)
            continue;
        if (set_aside_if_foreign(d, &results[nr])) {
            sm_result_fini(&results[nr].result);
            continue;
        }
        /* Age order: one that does not fit now goes first in a later poll, once the results
         * ahead of it are acked. */
        if (bytes + size > budget) {
            sm_result_fini(&results[nr].result);
            break;
        }
        bytes += size;
        nr++;
    }
    free(jobs);
    free(attempts);
    return nr;
}

static char *build_poll(agentd *d, size_t *len, sm_error *err)
{
    sm_poll p;
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "%s", d->cfg->name);
    snprintf(p.boot, sizeof p.boot, "%s", d->boot);
    p.seq = d->seq++;
    p.wait_ms = d->wait_ms;
    pthread_mutex_lock(&d->w.mu);
    if (d->w.has_job) {
        p.state = SM_AGENT_BUSY;
        p.job = d->w.job;
        p.attempt = d->w.attempt;
    }
    if (d->w.ready) {
        p.ready[0] = (sm_ready){d->w.job, d->w.attempt, d->w.ready_port, ""};
        /* The client will accept this key and no other. */
        if (d->w.params.workload == SM_WL_HTTP && d->w.params.tls && d->tls)
            snprintf(p.ready[0].pin, sizeof p.ready[0].pin, "%s", sm_tls_id_pin(d->tls));
        p.n_ready = 1;
    }
    pthread_mutex_unlock(&d->w.mu);
    snprintf(p.data_addr, sizeof p.data_addr, "%s", d->cfg->data_addr);
    memcpy(p.labels, d->cfg->labels, sizeof p.labels);
    p.n_labels = d->cfg->n_labels;
    if (d->send_facts) {
        p.have_facts = true;
        p.facts = d->facts;
    }
    memcpy(p.acks, d->acks, sizeof p.acks);
    p.n_acks = d->n_acks;
    d->fp_in_poll = d->send_fp;
    if (d->send_fp)
        p.fingerprint = &d->fp;

    sm_result_msg results[SM_POLL_RESULTS_MAX];
    size_t nr = take_spooled(d, results, POLL_RESULTS_BYTES - (d->send_fp ? d->fp_len : 0));
    const size_t n_spooled = nr;
    pthread_mutex_lock(&d->w.mu);
    if (d->has_unspooled && nr < SM_POLL_RESULTS_MAX)
        results[nr++] = d->unspooled; /* no histogram: the copy owns nothing to free */
    pthread_mutex_unlock(&d->w.mu);
    p.results = results;
    p.n_results = nr;
    p.quarantined = sm_spool_quarantined(d->spool);
    char *text = sm_msg_poll_encode(&p, len, err);
    for (size_t i = 0; i < n_spooled; i++)
        sm_result_fini(&results[i].result);
    return text;
}

static int send_poll(agentd *d, sm_error *err)
{
    size_t len;
    char *body = build_poll(d, &len, err);
    if (!body)
        return err->code ? err->code : SM_ENOMEM;
    /* A REQ socket cancels the outstanding request when a new one is sent: that is how a poll
     * supersedes its predecessor. */
    int rc = sm_session_send(d->ses, body, len, (uint64_t)sm_wall_ms(), 0, err);
    free(body);
    return rc;
}

/* Handles one reply the session took and opened (why, err: its verdict at now); returns 0 when
 * it was valid. */
static int take_reply(agentd *d, const sm_env *env, sm_reject why, sm_error *err, uint64_t now)
{
    sm_poll_reply r;
    if (why == SM_REJ_NONE && sm_msg_reply_decode(env->body, env->body_len, &r, err) != 0)
        why = SM_REJ_BODY;
    /* Signed by the coordinator, but maybe for another agent or an earlier poll: replayed by
     * whoever sits between us, it would run a job that is not ours. */
    if (why == SM_REJ_NONE && strcmp(r.to, d->cfg->name) != 0) {
        why = SM_REJ_MISDIRECTED;
        snprintf(err->msg, sizeof err->msg, "a reply for agent '%s', not for %s", r.to,
                 d->cfg->name);
    } else if (why == SM_REJ_NONE && strcmp(r.poll, sm_session_nonce(d->ses)) != 0) {
        why = SM_REJ_MISDIRECTED;
        snprintf(err->msg, sizeof err->msg, "a reply to poll %.8s..., not to the last poll %.8s...",
                 r.poll, sm_session_nonce(d->ses));
    }
    if (why != SM_REJ_NONE) {
        sm_rejects_note(d->rejects, why, SM_COORDINATOR, now, err->msg);
        return SM_EPROTO;
    }
    take_store_id(d, r.store);
    if (r.hold_ms) {
        const uint32_t wait = r.hold_ms + SM_AGENT_WAIT_SLACK_MS;
        d->wait_ms = wait > d->cfg->reply_wait_ms ? wait : d->cfg->reply_wait_ms;
    }
    /* The acks rode on the poll this reply answers: the coordinator has them. */
    d->n_acks = 0;
    d->send_facts = r.want_facts;
    if (d->fp_in_poll)
        d->send_fp = false;
    /* Before the commands: the fingerprint describes the host the job is about to run on. */
    if (r.want_fingerprint)
        collect_fp(d);
    for (size_t i = 0; i < r.n_acks; i++) {
        pthread_mutex_lock(&d->w.mu);
        if (d->has_unspooled && d->unspooled.job == r.ack_job[i] &&
            d->unspooled.attempt == r.ack_attempt[i])
            d->has_unspooled = false;
        pthread_mutex_unlock(&d->w.mu);
        /* Logged once per result: the spool stops listing it, so it is not acked again. */
        if (sm_spool_remove(d->spool, r.ack_job[i], r.ack_attempt[i], err) != 0)
            sm_log(LOG_ERR, "SM-SPOOL-UNLINK",
                   "acked result %" PRIu64 ".%u stays on disk and is not sent again: %s",
                   r.ack_job[i], r.ack_attempt[i], err->msg);
    }
    for (size_t i = 0; i < r.n_commands; i++)
        take_command(d, &r.commands[i]);
    return 0;
}

/* Waits for the reply, a wake-up (result ready, shutdown) or the time limit. */
static void wait_reply(agentd *d)
{
    struct pollfd pfd[2] = {{.fd = d->rcvfd, .events = POLLIN},
                            {.fd = d->wakefd, .events = POLLIN}};
    int n;
    do
        n = poll(pfd, 2, (int)d->wait_ms);
    while (n < 0 && errno == EINTR && !*d->stop);
    if (n <= 0)
        return; /* no answer: the next poll goes out with a new nonce */
    if (pfd[1].revents & POLLIN) {
        uint64_t v;
        ssize_t r = read(d->wakefd, &v, sizeof v);
        (void)r;
    }
    if (pfd[0].revents & POLLIN) {
        sm_error err = {0};
        sm_env env;
        sm_reject why;
        const uint64_t now = (uint64_t)sm_wall_ms();
        if (sm_session_recv(d->ses, NN_DONTWAIT, now, &env, &why, &err) == 0)
            take_reply(d, &env, why, &err, now);
        sm_session_release(d->ses);
    }
}

static int open_socket(agentd *d, sm_error *err)
{
    const sm_session_opts o = {
        .url = d->cfg->coordinator,
        /* The agent resends by itself with a fresh nonce; nanomsg's own resend would repeat
         * the old nonce, which the coordinator drops as a replay. */
        .resend_ivl_ms = 3600 * 1000,
        .reconnect_ivl_ms = 100,
        .reconnect_ivl_max_ms = 5000,
        .send_timeout_ms = 1000,
        /* A reply is an envelope: nanomsg need not hold more of one before it is refused. */
        .max_msg = SM_MSG_MAX,
        .replay = d->replay,
    };
    int rc = sm_session_open(&d->ses, &o, d->cfg->key, d->cfg->name, err);
    if (rc == 0 && (d->rcvfd = sm_session_recv_fd(d->ses)) < 0)
        rc = sm_error_set(err, SM_ESYS, "cannot set up the connection to %s: %s",
                          d->cfg->coordinator, nn_strerror(nn_errno()));
    return rc;
}

/* Without --sock-dir, jobs make their sockets in a folder of this process alone: fixed names
 * in a shared /tmp could be taken first (a link, a socket of someone else's) by any local user.
 * mkdtemp makes it 0700, under a name nobody can guess, and fails rather than reuse one. */
static int make_sock_dir(agentd *d, sm_error *err)
{
    if (d->cfg->sock_dir) {
        d->sock_dir = d->cfg->sock_dir;
        return 0;
    }
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    int n = snprintf(d->own_sock_dir, sizeof d->own_sock_dir, "%s/sockmatrix-agent-XXXXXX", base);
    if (n < 0 || (size_t)n >= sizeof d->own_sock_dir)
        return sm_error_set(err, SM_EINVAL, "TMPDIR '%.100s' is too long for Unix sockets", base);
    if (!mkdtemp(d->own_sock_dir))
        return sm_error_sys(err, errno, "cannot make a folder for Unix sockets in %s", base);
    d->sock_dir = d->own_sock_dir;
    return 0;
}

/* Removes the folder make_sock_dir made, if it is empty: a socket a killed job left there is
 * not this function's to delete, and keeping the folder says where it is. */
static void remove_sock_dir(agentd *d)
{
    if (d->own_sock_dir[0] && rmdir(d->own_sock_dir) != 0)
        sm_log(LOG_WARNING, "SM-SOCKDIR-KEPT", "%s is kept: %s", d->own_sock_dir, strerror(errno));
}

/* The boot id, the facts, the sockets' folder and the spool: what the agent refuses to start
 * without. On failure nothing is left to undo. */
static int start(agentd *d, sm_error *err)
{
    int rc;
    uint8_t boot[SM_BOOT_HEX / 2];
    d->wait_ms = d->cfg->reply_wait_ms;
    if (RAND_bytes(boot, sizeof boot) != 1)
        return sm_error_set(err, SM_ESYS, "no random bytes for the boot id");
    for (size_t i = 0; i < sizeof boot; i++)
        snprintf(d->boot + 2 * i, 3, "%02x", boot[i]);
    sm_facts_collect(&d->facts);
    sm_fp_init(&d->fp);
    /* A treatment a kill left in place is undone before the host is described or measured. */
    d->treat = (sm_treat_ctx){.dir = d->cfg->spool_dir, .allow = d->cfg->allow_experiment};
    sm_error te = {0};
    if (sm_treat_recover(&d->treat, &te) != 0)
        sm_log(LOG_ERR, "SM-TREAT-UNDO-FAILED", "at start: %s", te.msg);
    collect_fp(d);
    if ((rc = sm_http_global_init(err)))
        return rc;
    if ((rc = make_sock_dir(d, err)))
        return rc;
    /* An agent whose spool cannot take a result would measure and then drop every result while
     * looking healthy to the coordinator: it refuses to start instead, saying why. */
    rc = sm_spool_open(&d->spool, d->cfg->spool_dir, err);
    const bool opened = rc == 0;
    if (opened)
        rc = sm_spool_probe(d->spool, err);
    if (rc) {
        if (opened || rc == SM_ESYS)
            sm_log(LOG_ERR, "SM-SPOOL-UNWRITABLE", "%s", err->msg);
        sm_spool_close(d->spool);
        d->spool = NULL;
        remove_sock_dir(d);
    }
    return rc;
}

/* The TLS identity, the wake-up eventfd, the replay window, the socket and the worker
 * thread. On failure close_all undoes what was made. */
static int connect_and_start_worker(agentd *d, int *wake_fd, sm_error *err)
{
    int rc;
    /* Without an identity the agent still runs every other job; tls jobs then fail saying so. */
    sm_error te = {0};
    if (sm_tls_id_new(&d->tls, &te) != 0)
        sm_log(LOG_WARNING, "SM-TLS-ID", "no TLS identity for the built-in source: %s", te.msg);
    d->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    d->replay = sm_replay_new(2ull * SM_SKEW_MS);
    d->rejects = sm_rejects_new();
    if (d->wakefd < 0 || !d->replay || !d->rejects)
        return sm_error_set(err, SM_ENOMEM, "cannot set up the agent");
    *wake_fd = d->wakefd;
    if ((rc = open_socket(d, err)))
        return rc;
    pthread_mutex_init(&d->w.mu, NULL);
    pthread_cond_init(&d->w.cv, NULL);
    if ((rc = pthread_create(&d->w.thread, NULL, daemon_worker_main, d)))
        return sm_error_set(err, SM_ESYS, "cannot start the worker: %s", strerror(rc));
    return 0;
}

/* Logs the start, polls until *stop is set, then stops the worker. */
static void run(agentd *d)
{
    const sm_daemon_cfg *cfg = d->cfg;
    sm_log(LOG_NOTICE, "SM-AGENT-START",
           "agent %s (boot %s) polling %s, %zu results in the spool, Unix sockets in %s", cfg->name,
           d->boot, cfg->coordinator, sm_spool_count(d->spool), d->sock_dir);
    /* The coordinator checks an announced data address against its own policy and, if it is
     * outside, drops the polls unanswered: its reply cannot say why, so this line does. */
    sm_error pe;
    if (cfg->data_addr[0] && sm_addr_policy_check(&cfg->data_addr_allow, cfg->data_addr, &pe))
        sm_log(LOG_WARNING, "SM-DATA-ADDR-POLICY",
               "--data-addr %s: a coordinator with the default policy refuses this agent "
               "(its polls go unanswered) unless it allows it with --data-addr-allow",
               pe.msg);
    while (!*d->stop) {
        sm_error e = {0};
        if (send_poll(d, &e) != 0) {
            sm_log(LOG_WARNING, "SM-POLL-FAIL", "%s", e.msg);
            struct pollfd pfd = {.fd = d->wakefd, .events = POLLIN};
            poll(&pfd, 1, 1000); /* not connected yet: nanomsg reconnects with backoff */
            continue;
        }
        wait_reply(d);
    }
    sm_log(LOG_NOTICE, "SM-AGENT-STOP", "stopping; %zu results stay in the spool",
           sm_spool_count(d->spool));
    pthread_mutex_lock(&d->w.mu);
    d->w.quit = true;
    if (d->w.has_job)
        atomic_store(&d->w.abort, 1);
    pthread_cond_signal(&d->w.cv);
    pthread_mutex_unlock(&d->w.mu);
    pthread_join(d->w.thread, NULL);
}

/* Undoes start and connect_and_start_worker, whatever part of them was done. */
static void close_all(agentd *d)
{
    /* The REQ socket is not nn_closed but left to the process's exit (see session.h): a late
     * reply would otherwise abort the agent on its way out (test_conversation.LateReplyTest). */
    sm_session_close(d->ses);
    if (d->wakefd >= 0)
        close(d->wakefd);
    sm_replay_free(d->replay);
    sm_rejects_free(d->rejects);
    sm_spool_close(d->spool);
    sm_tls_id_free(d->tls);
    remove_sock_dir(d);
}

int sm_daemon_run(const sm_daemon_cfg *cfg, volatile sig_atomic_t *stop, int *wake_fd,
                  sm_error *err)
{
    /* On the heap: large arrays, and each call its own (the unit tests run it on threads). */
    agentd *d = calloc(1, sizeof *d);
    if (!d)
        return sm_error_set(err, SM_ENOMEM, "cannot set up the agent");
    d->cfg = cfg;
    d->stop = stop;
    d->send_facts = true;
    int rc = start(d, err);
    if (rc) { /* start undid its own work */
        sm_fp_fini(&d->fp);
        free(d);
        return rc;
    }
    if (!(rc = connect_and_start_worker(d, wake_fd, err)))
        run(d);
    *wake_fd = -1;
    close_all(d);
    sm_fp_fini(&d->fp);
    free(d);
    return rc;
}
