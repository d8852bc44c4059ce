/* sm-swarm: a swarm of simulated agents against one coordinator, and what they cost it.
 *
 *   sm-swarm --coordinator tcp://127.0.0.1:PORT --http http://127.0.0.1:PORT --key-file K
 *            --agents N --coord-pid PID [--jobs-per-agent J] [--idle-s S] [--latency-jobs L]
 *            [--hold-ms H]
 *
 * Every simulated agent is what the real daemon is on the wire: its own REQ socket, signed
 * polls, facts on the first poll, results resent until acked, commands acked in the next poll.
 * It runs no workload: an assign is answered at once with a fake ok result, so the coordinator
 * is the only thing measured. Phases (progress on stderr): register, idle CPU, throughput,
 * dispatch latency, peak RSS. The summary is one JSON object on stdout, units in the keys.
 *
 * libnanomsg 1.1.5 allows 512 sockets per process (NN_MAX_SOCKETS, fixed when it is built),
 * so the agents are spread over shard processes of at most SHARD_MAX sockets each. Each shard
 * drives its sockets from one thread with nn_poll; the parent process only talks HTTP. They
 * share counters and the arrival time of every job through one MAP_SHARED mapping. */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/session.h"
#include "proto/clock.h"
#include "proto/envelope.h"
#include "proto/msg.h"
#include "proto/result.h"

#define SHARD_MAX       500 /* sockets per process, under libnanomsg's 512 */
#define PENDING_MAX     64  /* results an agent holds until acked */
#define PHASE_TIMEOUT_S 300
#define POST_BATCH      1000
#define RESEND_SLACK_MS 5000 /* a poll unanswered for hold + this is sent again */
#define SCAN_MS         50   /* how often a shard looks for polls to (re)send */
#define NS_PER_MS       1000000LL
#define NS_PER_S        1000000000LL

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the shared counters must be lock-free");

typedef struct opts {
    const char *bus_url;
    const char *http_url;
    const char *key_file;
    long agents;
    long jobs_per_agent;
    long idle_s;
    long latency_jobs;
    long hold_ms;
    pid_t coord_pid;
} opts;

/* ---- what the shards and the parent share ---- */

/* The first arrival of one job at its agent; job 0 marks a free slot. */
typedef struct slot {
    _Atomic uint64_t job;
    _Atomic int64_t recv_ns; /* CLOCK_MONOTONIC; 0 until written */
} slot;

typedef struct shared {
    atomic_int stop;
    _Atomic uint64_t registered; /* agents that had at least one valid reply */
    _Atomic uint64_t replies;
    _Atomic uint64_t bad_replies; /* failed sm_env_open, not from "coordinator", undecodable,
                                   * or not for this agent's last poll */
    _Atomic uint64_t assigns;     /* first arrivals of an assign */
    _Atomic uint64_t resends;     /* polls sent again after hold + RESEND_SLACK_MS */
    _Atomic uint64_t send_again;  /* nn_send said EAGAIN; tried again SCAN_MS later */
    _Atomic uint64_t acked;       /* results the coordinator acked */
    _Atomic int64_t pending;      /* results made and not yet acked */
    _Atomic uint64_t table_full;  /* arrivals the job table had no room for */
    size_t cap;                   /* slots, a power of two */
    slot slots[];
} shared;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * NS_PER_MS};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sm-swarm: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static size_t slot_of(uint64_t job, size_t cap)
{
    job ^= job >> 33; /* murmur3's finaliser: sequential ids spread over the table */
    job *= 0xff51afd7ed558ccdull;
    job ^= job >> 33;
    return (size_t)job & (cap - 1);
}

/* Records the arrival of job; true the first time, false for a resent assign. */
static bool job_arrived(shared *sh, uint64_t job, int64_t now_ns)
{
    for (size_t i = slot_of(job, sh->cap), n = 0; n < sh->cap; i = (i + 1) & (sh->cap - 1), n++) {
        uint64_t cur = atomic_load(&sh->slots[i].job);
        if (cur == 0) {
            if (atomic_compare_exchange_strong(&sh->slots[i].job, &cur, job)) {
                atomic_store(&sh->slots[i].recv_ns, now_ns);
                return true;
            }
        }
        if (cur == job)
            return false;
    }
    atomic_fetch_add(&sh->table_full, 1);
    return true;
}

/* When job arrived, or 0 when it has not (yet). */
static int64_t job_arrival(shared *sh, uint64_t job)
{
    for (size_t i = slot_of(job, sh->cap), n = 0; n < sh->cap; i = (i + 1) & (sh->cap - 1), n++) {
        uint64_t cur = atomic_load(&sh->slots[i].job);
        if (cur == job)
            return atomic_load(&sh->slots[i].recv_ns);
        if (cur == 0)
            return 0;
    }
    return 0;
}

/* ---- a shard: up to SHARD_MAX agents on one nn_poll loop ---- */

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

/* The result of a stream job of one 1-byte message, as the agent would report it. */
static void fake_result(sm_result *r)
{
    sm_result_init(r);
    r->ok = true;
    sm_result_set(r, SM_M_BYTES, 1);
    sm_result_set(r, SM_M_SECONDS, 0.0001);
    sm_result_set(r, SM_M_THROUGHPUT, 1 / 0.0001 / 1e6);
}

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
    p->state = SM_AGENT_IDLE;
    if (a->send_facts) {
        p->have_facts = true;
        p->facts = s->facts;
        snprintf(p->facts.hostname, sizeof p->facts.hostname, "%s", a->name);
    }
    memcpy(p->acks, a->acks, a->n_acks * sizeof a->acks[0]);
    p->n_acks = a->n_acks;
    size_t nr = a->n_pending < SM_POLL_RESULTS_MAX ? a->n_pending : SM_POLL_RESULTS_MAX;
    for (size_t i = 0; i < nr; i++) {
        s->results[i].job = a->pending[i].job;
        s->results[i].attempt = a->pending[i].attempt;
        fake_result(&s->results[i].result);
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
    a->due_ns = now_ns + (s->o->hold_ms + RESEND_SLACK_MS) * NS_PER_MS;
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
static int shard_main(int index, const opts *o, const uint8_t *key, shared *sh, size_t first,
                      size_t n, pid_t parent)
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
    int rc = 0;
    if (!s.agents || !s.pfd) {
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
     * 1.1.5's nn_close frees twice a late reply the socket dropped (see agent/session.h), and
     * a shard under load gets late replies. */
    for (size_t i = 0; i < s.n; i++)
        sm_session_close(s.agents[i].ses);
    free(s.agents);
    free(s.pfd);
    return rc ? 1 : 0;
}

/* ---- the parent: HTTP, /proc, phases ---- */

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static int buf_add(buf *b, const char *data, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return SM_ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

__attribute__((format(printf, 2, 3))) static int buf_printf(buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return SM_EINVAL;
    return buf_add(b, tmp, (size_t)n);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    return buf_add(arg, data, size * nmemb) == 0 ? size * nmemb : 0;
}

typedef struct ctx {
    const opts *o;
    shared *sh;
    CURL *curl;
    struct curl_slist *headers;
    buf resp;
    pid_t *shards;
    size_t n_shards;
    volatile sig_atomic_t *stop;
} ctx;

/* GET (body NULL) or POST path; the response body is left in c->resp. */
static int http(ctx *c, const char *path, const buf *body, long want_status)
{
    char url[512];
    snprintf(url, sizeof url, "%s%s", c->o->http_url, path);
    c->resp.len = 0;
    curl_easy_setopt(c->curl, CURLOPT_URL, url);
    if (body) {
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body->p);
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
    } else {
        curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
    }
    CURLcode rc = curl_easy_perform(c->curl);
    if (rc != CURLE_OK) {
        say("%s %s: %s", body ? "POST" : "GET", url, curl_easy_strerror(rc));
        return SM_ESYS;
    }
    long status = 0;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status != want_status) {
        say("%s %s: status %ld: %.300s", body ? "POST" : "GET", url, status,
            c->resp.p ? c->resp.p : "");
        return SM_EPROTO;
    }
    return 0;
}

/* The number after "key": in a JSON text we trust (the coordinator's own /healthz). */
static int json_number(const char *json, const char *key, uint64_t *out)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = json ? strstr(json, pat) : NULL;
    if (!p)
        return SM_EPARSE;
    char *end;
    double v = strtod(p + strlen(pat), &end);
    if (end == p + strlen(pat) || v < 0)
        return SM_EPARSE;
    *out = (uint64_t)v;
    return 0;
}

typedef struct health {
    uint64_t agents_online, results, polls, dispatched, duplicate, orphan, rejected;
} health;

static int get_health(ctx *c, health *h)
{
    int rc = http(c, "/healthz", NULL, 200);
    if (rc)
        return rc;
    const char *j = c->resp.p;
    if (json_number(j, "agents_online", &h->agents_online) ||
        json_number(j, "results", &h->results) || json_number(j, "polls", &h->polls) ||
        json_number(j, "jobs_dispatched", &h->dispatched) ||
        json_number(j, "results_duplicate", &h->duplicate) ||
        json_number(j, "results_orphan", &h->orphan) || json_number(j, "total", &h->rejected)) {
        say("/healthz: unexpected answer: %.300s", j ? j : "");
        return SM_EPARSE;
    }
    return 0;
}

/* The ids of {"jobs":["12","13"]}, which must be exactly n. */
static int job_ids(const char *json, uint64_t *ids, size_t n)
{
    const char *p = json ? strstr(json, "\"jobs\":[") : NULL;
    if (!p)
        return SM_EPARSE;
    p += strlen("\"jobs\":[");
    for (size_t i = 0; i < n; i++) {
        if (*p != '"')
            return SM_EPARSE;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p + 1, &end, 10);
        if (errno || end == p + 1 || *end != '"' || v == 0)
            return SM_EPARSE;
        ids[i] = v;
        p = end + 1;
        if (*p != (i + 1 < n ? ',' : ']'))
            return SM_EPARSE;
        p++;
    }
    return 0;
}

static int add_job(buf *b, size_t index, bool first)
{
    return buf_printf(b,
                      "%s{\"host\":\"swarm-%05zu\",\"params\":{\"workload\":\"stream\","
                      "\"transport\":\"tcp\",\"count\":1,\"msg_size\":1}}",
                      first ? "" : ",", index);
}

/* user + system CPU ticks of a process. */
static int cpu_ticks(pid_t pid, uint64_t *ticks)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) {
        say("%s: %s", path, strerror(errno));
        return SM_ESYS;
    }
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    /* The command name may hold spaces and parentheses: the fields start after the last ')'. */
    const char *p = strrchr(text, ')');
    unsigned long long ut, st;
    if (!p ||
        sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) {
        say("%s: unexpected format", path);
        return SM_EPARSE;
    }
    *ticks = ut + st;
    return 0;
}

static int swarm_ticks(ctx *c, uint64_t *ticks)
{
    uint64_t t, sum = 0;
    int rc = cpu_ticks(getpid(), &t);
    sum += t;
    for (size_t i = 0; i < c->n_shards && !rc; i++) {
        rc = cpu_ticks(c->shards[i], &t);
        sum += t;
    }
    *ticks = sum;
    return rc;
}

static double pct_of_core(uint64_t ticks, int64_t ns)
{
    return (double)ticks / (double)sysconf(_SC_CLK_TCK) / ((double)ns / NS_PER_S) * 100.0;
}

/* A line of /proc/PID/status in kB (VmHWM, VmRSS) as MB (10^6 bytes). */
static int status_mb(pid_t pid, const char *field, double *mb)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) {
        say("%s: %s", path, strerror(errno));
        return SM_ESYS;
    }
    size_t flen = strlen(field);
    int rc = SM_EPARSE;
    unsigned long long kb;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, flen) == 0 && line[flen] == ':' &&
            sscanf(line + flen + 1, "%llu", &kb) == 1) {
            *mb = (double)kb * 1024.0 / 1e6;
            rc = 0;
            break;
        }
    fclose(f);
    if (rc)
        say("%s: no %s line", path, field);
    return rc;
}

/* Fails when a shard died or we were asked to stop. */
static int still_running(ctx *c)
{
    if (*c->stop) {
        say("interrupted");
        return SM_ECANCELED;
    }
    for (size_t i = 0; i < c->n_shards; i++) {
        int status;
        pid_t p = waitpid(c->shards[i], &status, WNOHANG);
        if (p == c->shards[i]) {
            say("shard %zu exited early (status %d)", i,
                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
            c->shards[i] = -1;
            return SM_ECLOSED;
        }
    }
    if (kill(c->o->coord_pid, 0) != 0) {
        say("the coordinator (pid %d) is gone", (int)c->o->coord_pid);
        return SM_ECLOSED;
    }
    return 0;
}

static double secs(int64_t ns)
{
    return (double)ns / NS_PER_S;
}

typedef struct summary {
    double register_s;
    double idle_s, idle_cpu, idle_polls_per_s, idle_rss;
    uint64_t tp_jobs;
    double tp_s, submit_per_s, results_per_s, dispatch_per_s, tp_coord_cpu, tp_swarm_cpu;
    size_t lat_n, lat_missing;
    double p50, p90, p99, max;
    double peak_rss, rss;
    health end;
} summary;

/* Registered means online in the coordinator's view: an agent's first poll registers it, but
 * its answer is held (there is nothing to say), so the swarm hears back only hold_ms later. */
static int phase_register(ctx *c, int64_t t0, summary *s)
{
    const uint64_t n = (uint64_t)c->o->agents;
    int64_t next_say = t0 + 2 * NS_PER_S;
    for (;;) {
        health h;
        int rc = still_running(c);
        if (rc || (rc = get_health(c, &h)))
            return rc;
        const int64_t now = sm_mono_ns();
        if (h.agents_online >= n) {
            s->register_s = secs(now - t0);
            say("register: %" PRIu64 " agents online after %.2f s", n, s->register_s);
            return 0;
        }
        if (now - t0 > PHASE_TIMEOUT_S * NS_PER_S) {
            say("register: only %" PRIu64 " of %" PRIu64 " agents online after %d s",
                h.agents_online, n, PHASE_TIMEOUT_S);
            return SM_ETIMEDOUT;
        }
        if (now >= next_say) {
            say("register: %" PRIu64 " of %" PRIu64 " agents online (%" PRIu64
                " messages rejected)",
                h.agents_online, n, h.rejected);
            next_say = now + 2 * NS_PER_S;
        }
        sleep_ms(100);
    }
}

static int phase_idle(ctx *c, summary *s)
{
    say("idle: %ld s of long polls", c->o->idle_s);
    health h0, h1;
    uint64_t t0, t1;
    int rc;
    if ((rc = get_health(c, &h0)) || (rc = cpu_ticks(c->o->coord_pid, &t0)))
        return rc;
    const int64_t start = sm_mono_ns(), end = start + c->o->idle_s * NS_PER_S;
    while (sm_mono_ns() < end) {
        if ((rc = still_running(c)))
            return rc;
        sleep_ms(100);
    }
    if ((rc = cpu_ticks(c->o->coord_pid, &t1)))
        return rc;
    const int64_t ns = sm_mono_ns() - start;
    if ((rc = get_health(c, &h1)) || (rc = status_mb(c->o->coord_pid, "VmRSS", &s->idle_rss)))
        return rc;
    s->idle_s = secs(ns);
    s->idle_cpu = pct_of_core(t1 - t0, ns);
    s->idle_polls_per_s = (double)(h1.polls - h0.polls) / secs(ns);
    say("idle: coordinator at %.2f%% of a core, %.0f polls/s, RSS %.1f MB", s->idle_cpu,
        s->idle_polls_per_s, s->idle_rss);
    return 0;
}

/* Every batch of at most POST_BATCH jobs, round-robin over the agents so all start at once. */
static int post_throughput_jobs(ctx *c, uint64_t total)
{
    buf body = {0};
    uint64_t *ids = calloc(POST_BATCH, sizeof *ids);
    int rc = ids ? 0 : SM_ENOMEM;
    for (uint64_t done = 0; done < total && !rc;) {
        size_t n = total - done < POST_BATCH ? (size_t)(total - done) : POST_BATCH;
        body.len = 0;
        rc = buf_add(&body, "[", 1);
        for (size_t i = 0; i < n && !rc; i++)
            rc = add_job(&body, (size_t)((done + i) % (uint64_t)c->o->agents), i == 0);
        if (!rc)
            rc = buf_add(&body, "]", 1);
        if (!rc)
            rc = http(c, "/api/jobs", &body, 201);
        if (!rc && job_ids(c->resp.p, ids, n) != 0) {
            say("POST /api/jobs: expected %zu job ids: %.300s", n, c->resp.p);
            rc = SM_EPARSE;
        }
        if (!rc)
            rc = still_running(c);
        done += n;
    }
    free(body.p);
    free(ids);
    return rc;
}

static int phase_throughput(ctx *c, summary *s)
{
    const uint64_t total = (uint64_t)c->o->agents * (uint64_t)c->o->jobs_per_agent;
    say("throughput: %" PRIu64 " jobs (%ld per agent) in POSTs of %d", total, c->o->jobs_per_agent,
        POST_BATCH);
    health h0, h;
    uint64_t ct0, ct1, st0, st1;
    int rc;
    if ((rc = get_health(c, &h0)) || (rc = cpu_ticks(c->o->coord_pid, &ct0)) ||
        (rc = swarm_ticks(c, &st0)))
        return rc;
    const uint64_t assigns0 = atomic_load(&c->sh->assigns);
    const int64_t t0 = sm_mono_ns();
    if ((rc = post_throughput_jobs(c, total)))
        return rc;
    const int64_t posted = sm_mono_ns();
    say("throughput: all %" PRIu64 " jobs queued after %.2f s", total, secs(posted - t0));
    int64_t next_say = posted + 2 * NS_PER_S;
    for (;;) {
        if ((rc = still_running(c)) || (rc = get_health(c, &h)))
            return rc;
        const int64_t now = sm_mono_ns();
        if (h.results - h0.results >= total)
            break;
        if (now - t0 > PHASE_TIMEOUT_S * NS_PER_S) {
            say("throughput: only %" PRIu64 " of %" PRIu64 " results stored in %d s",
                h.results - h0.results, total, PHASE_TIMEOUT_S);
            return SM_ETIMEDOUT;
        }
        if (now >= next_say) {
            say("throughput: %" PRIu64 " of %" PRIu64 " results stored", h.results - h0.results,
                total);
            next_say = now + 2 * NS_PER_S;
        }
        sleep_ms(100);
    }
    const int64_t ns = sm_mono_ns() - t0;
    const uint64_t assigns = atomic_load(&c->sh->assigns) - assigns0;
    if ((rc = cpu_ticks(c->o->coord_pid, &ct1)) || (rc = swarm_ticks(c, &st1)))
        return rc;
    s->tp_jobs = total;
    s->tp_s = secs(ns);
    s->submit_per_s = (double)total / secs(posted - t0);
    s->results_per_s = (double)total / secs(ns);
    s->dispatch_per_s = (double)assigns / secs(ns);
    s->tp_coord_cpu = pct_of_core(ct1 - ct0, ns);
    s->tp_swarm_cpu = pct_of_core(st1 - st0, ns);
    say("throughput: %" PRIu64 " results in %.2f s: %.0f results/s, %.0f jobs dispatched/s, "
        "coordinator at %.0f%% of a core",
        total, s->tp_s, s->results_per_s, s->dispatch_per_s, s->tp_coord_cpu);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least q of the sample at or below it. */
static double quantile(const double *sorted, size_t n, double q)
{
    size_t rank = (size_t)ceil(q * (double)n);
    return sorted[(rank ? rank : 1) - 1];
}

static int wait_quiet(ctx *c)
{
    /* Every result acked, then a little time for the last polls to reach the coordinator and be
     * held there: the latency phase starts against idle, held agents. */
    const int64_t deadline = sm_mono_ns() + PHASE_TIMEOUT_S * NS_PER_S;
    while (atomic_load(&c->sh->pending) > 0) {
        int rc = still_running(c);
        if (rc)
            return rc;
        if (sm_mono_ns() > deadline) {
            say("latency: %" PRId64 " results still unacked after %d s",
                atomic_load(&c->sh->pending), PHASE_TIMEOUT_S);
            return SM_ETIMEDOUT;
        }
        sleep_ms(20);
    }
    sleep_ms(500);
    return 0;
}

static int phase_latency(ctx *c, summary *s)
{
    const size_t n = (size_t)c->o->latency_jobs;
    say("latency: %zu single-job POSTs to random agents, 10 ms apart", n);
    int rc = wait_quiet(c);
    if (rc)
        return rc;
    uint64_t *ids = calloc(n, sizeof *ids);
    int64_t *sent = calloc(n, sizeof *sent);
    double *lat = calloc(n, sizeof *lat);
    buf body = {0};
    if (!ids || !sent || !lat) {
        rc = SM_ENOMEM;
        goto out;
    }
    unsigned short rng[3] = {0x5357, 0x4152, 0x4d21}; /* fixed: the same agents every run */
    const int64_t start = sm_mono_ns();
    for (size_t i = 0; i < n && !rc; i++) {
        const int64_t at = start + (int64_t)i * 10 * NS_PER_MS, now = sm_mono_ns();
        if (at > now)
            sleep_ms((long)((at - now + NS_PER_MS - 1) / NS_PER_MS));
        body.len = 0;
        rc = buf_add(&body, "[", 1);
        if (!rc)
            rc = add_job(&body, (size_t)(nrand48(rng) % (long)c->o->agents), true);
        if (!rc)
            rc = buf_add(&body, "]", 1);
        sent[i] = sm_mono_ns();
        if (!rc)
            rc = http(c, "/api/jobs", &body, 201);
        if (!rc && job_ids(c->resp.p, &ids[i], 1) != 0) {
            say("POST /api/jobs: expected one job id: %.300s", c->resp.p);
            rc = SM_EPARSE;
        }
        if (!rc && i % 100 == 99)
            rc = still_running(c);
    }
    if (rc)
        goto out;
    /* The stragglers: every assign should be there within a poll's hold. */
    const int64_t deadline = sm_mono_ns() + (c->o->hold_ms + RESEND_SLACK_MS) * NS_PER_MS * 2;
    size_t missing;
    do {
        missing = 0;
        for (size_t i = 0; i < n; i++)
            missing += job_arrival(c->sh, ids[i]) == 0;
        if (missing)
            sleep_ms(50);
    } while (missing && sm_mono_ns() < deadline);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const int64_t at = job_arrival(c->sh, ids[i]);
        if (at)
            lat[k++] = (double)(at - sent[i]) / NS_PER_MS;
    }
    s->lat_n = k;
    s->lat_missing = n - k;
    if (!k) {
        say("latency: no assign arrived");
        rc = SM_ETIMEDOUT;
        goto out;
    }
    qsort(lat, k, sizeof *lat, cmp_double);
    s->p50 = quantile(lat, k, 0.50);
    s->p90 = quantile(lat, k, 0.90);
    s->p99 = quantile(lat, k, 0.99);
    s->max = lat[k - 1];
    say("latency: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (%zu of %zu arrived)", s->p50,
        s->p90, s->p99, s->max, k, n);
out:
    free(ids);
    free(sent);
    free(lat);
    free(body.p);
    return rc;
}

/* The summary: one JSON object, units in the keys, counters as integers. */
static void print_summary(const ctx *c, const summary *s)
{
    shared *sh = c->sh;
    const struct {
        const char *key;
        double v;
        int decimals;
    } f[] = {
        {"agents", (double)c->o->agents, 0},
        {"shards", (double)c->n_shards, 0},
        {"hold_ms", (double)c->o->hold_ms, 0},
        {"jobs_per_agent", (double)c->o->jobs_per_agent, 0},
        {"register_s", s->register_s, 3},
        {"idle_s", s->idle_s, 2},
        {"idle_cpu_pct_of_core", s->idle_cpu, 3},
        {"idle_polls_per_s", s->idle_polls_per_s, 1},
        {"idle_rss_MB", s->idle_rss, 2},
        {"throughput_jobs", (double)s->tp_jobs, 0},
        {"throughput_s", s->tp_s, 3},
        {"submit_jobs_per_s", s->submit_per_s, 1},
        {"results_per_s", s->results_per_s, 1},
        {"dispatch_jobs_per_s", s->dispatch_per_s, 1},
        {"throughput_coord_cpu_pct_of_core", s->tp_coord_cpu, 1},
        {"throughput_swarm_cpu_pct_of_core", s->tp_swarm_cpu, 1},
        {"latency_jobs", (double)(s->lat_n + s->lat_missing), 0},
        {"latency_missing", (double)s->lat_missing, 0},
        {"dispatch_p50_ms", s->p50, 3},
        {"dispatch_p90_ms", s->p90, 3},
        {"dispatch_p99_ms", s->p99, 3},
        {"dispatch_max_ms", s->max, 3},
        {"peak_rss_MB", s->peak_rss, 2},
        {"rss_MB", s->rss, 2},
        {"swarm_agents_answered", (double)atomic_load(&sh->registered), 0},
        {"swarm_replies", (double)atomic_load(&sh->replies), 0},
        {"swarm_bad_replies", (double)atomic_load(&sh->bad_replies), 0},
        {"swarm_resends", (double)atomic_load(&sh->resends), 0},
        {"swarm_send_eagain", (double)atomic_load(&sh->send_again), 0},
        {"swarm_results_acked", (double)atomic_load(&sh->acked), 0},
        {"coord_polls", (double)s->end.polls, 0},
        {"coord_results_duplicate", (double)s->end.duplicate, 0},
        {"coord_results_orphan", (double)s->end.orphan, 0},
        {"coord_rejected_total", (double)s->end.rejected, 0},
    };
    putchar('{');
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        printf("%s\"%s\":%.*f", i ? "," : "", f[i].key, f[i].decimals, f[i].v);
    puts("}");
}

static int run_phases(ctx *c, int64_t t0, summary *s)
{
    int rc;
    if ((rc = phase_register(c, t0, s)) || (rc = phase_idle(c, s)) ||
        (rc = phase_throughput(c, s)) || (rc = phase_latency(c, s)))
        return rc;
    if ((rc = status_mb(c->o->coord_pid, "VmHWM", &s->peak_rss)) ||
        (rc = status_mb(c->o->coord_pid, "VmRSS", &s->rss)) || (rc = get_health(c, &s->end)))
        return rc;
    say("peak RSS of the coordinator: %.1f MB (now %.1f MB)", s->peak_rss, s->rss);
    if (atomic_load(&c->sh->table_full))
        say("warning: %" PRIu64 " arrivals did not fit the job table",
            atomic_load(&c->sh->table_full));
    return 0;
}

/* Stops the shards and reaps them; a shard that does not leave in 10 s is killed. */
static int stop_shards(ctx *c)
{
    int bad = 0;
    atomic_store(&c->sh->stop, 1);
    const int64_t deadline = sm_mono_ns() + 10 * NS_PER_S;
    for (size_t i = 0; i < c->n_shards; i++) {
        if (c->shards[i] <= 0)
            continue;
        int status;
        pid_t p;
        while ((p = waitpid(c->shards[i], &status, WNOHANG)) == 0 && sm_mono_ns() < deadline)
            sleep_ms(20);
        if (p == 0) {
            say("shard %zu did not stop: killing it", i);
            kill(c->shards[i], SIGKILL);
            waitpid(c->shards[i], &status, 0);
            bad = 1;
        } else if (p < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            bad = 1;
        }
    }
    return bad;
}

/* ---- main ---- */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static const char usage[] =
    "Usage: sm-swarm --coordinator tcp://ADDR:PORT --http http://ADDR:PORT --key-file PATH\n"
    "                --agents N --coord-pid PID [--jobs-per-agent J] [--idle-s S]\n"
    "                [--latency-jobs L] [--hold-ms H]\n"
    "\n"
    "Simulates N agents (swarm-00000 ...) against a running coordinator with a fresh store and\n"
    "measures it: time to register, idle CPU, results stored per second, dispatch latency and\n"
    "peak RSS. Progress on stderr, one JSON summary on stdout.\n"
    "\n"
    "  --jobs-per-agent J  jobs per agent in the throughput phase (default 20)\n"
    "  --idle-s S          length of the idle phase (default 10)\n"
    "  --latency-jobs L    single-job POSTs of the latency phase (default 500)\n"
    "  --hold-ms H         the coordinator's --hold-ms (default 5000): a poll unanswered for\n"
    "                      H + 5000 ms is sent again\n";

static int parse_long(const char *name, const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!*text || *end || errno || v < min || v > max) {
        say("%s: '%s' is not a number from %ld to %ld", name, text, min, max);
        return SM_EINVAL;
    }
    *out = v;
    return 0;
}

static int parse_opts(int argc, char **argv, opts *o)
{
    static const struct option longopts[] = {
        {"coordinator", required_argument, NULL, 'c'},
        {"http", required_argument, NULL, 'H'},
        {"key-file", required_argument, NULL, 'k'},
        {"agents", required_argument, NULL, 'n'},
        {"coord-pid", required_argument, NULL, 'p'},
        {"jobs-per-agent", required_argument, NULL, 'j'},
        {"idle-s", required_argument, NULL, 'i'},
        {"latency-jobs", required_argument, NULL, 'l'},
        {"hold-ms", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (opts){.jobs_per_agent = 20, .idle_s = 10, .latency_jobs = 500, .hold_ms = 5000};
    long pid = 0;
    int c, rc = 0;
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            o->bus_url = optarg;
            break;
        case 'H':
            o->http_url = optarg;
            break;
        case 'k':
            o->key_file = optarg;
            break;
        case 'n':
            rc = parse_long("--agents", optarg, 1, 99999, &o->agents);
            break;
        case 'p':
            rc = parse_long("--coord-pid", optarg, 1, INT32_MAX, &pid);
            o->coord_pid = (pid_t)pid;
            break;
        case 'j':
            rc = parse_long("--jobs-per-agent", optarg, 1, 100000, &o->jobs_per_agent);
            break;
        case 'i':
            rc = parse_long("--idle-s", optarg, 1, 3600, &o->idle_s);
            break;
        case 'l':
            rc = parse_long("--latency-jobs", optarg, 1, 100000, &o->latency_jobs);
            break;
        case 'o':
            rc = parse_long("--hold-ms", optarg, 100, 60000, &o->hold_ms);
            break;
        case 'h':
            fputs(usage, stdout);
            return 1;
        case ':':
            say("option '%s' needs a value", argv[optind - 1]);
            return SM_EINVAL;
        default:
            say("unknown option '%s' (see --help)", argv[optind - 1]);
            return SM_EINVAL;
        }
    }
    if (rc)
        return rc;
    if (optind < argc) {
        say("unexpected argument '%s' (see --help)", argv[optind]);
        return SM_EINVAL;
    }
    if (!o->bus_url || !o->http_url || !o->key_file || !o->agents || !o->coord_pid) {
        say("--coordinator, --http, --key-file, --agents and --coord-pid are required "
            "(see --help)");
        return SM_EINVAL;
    }
    return 0;
}

/* Enough descriptors for a shard: per socket two eventfds and its TCP connection. */
static int raise_nofile(void)
{
    const rlim_t need = SHARD_MAX * 4 + 256;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        say("getrlimit: %s", strerror(errno));
        return SM_ESYS;
    }
    if (rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        say("RLIMIT_NOFILE: need %llu descriptors, the hard limit is %llu (ulimit -Hn)",
            (unsigned long long)need, (unsigned long long)rl.rlim_max);
        return SM_ESYS;
    }
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        say("setrlimit: %s", strerror(errno));
        return SM_ESYS;
    }
    return 0;
}

static shared *shared_new(const opts *o, size_t *bytes)
{
    const uint64_t jobs =
        (uint64_t)o->agents * (uint64_t)o->jobs_per_agent + (uint64_t)o->latency_jobs;
    size_t cap = 1024;
    while (cap < 2 * jobs) /* at most half full: short probes */
        cap *= 2;
    *bytes = sizeof(shared) + cap * sizeof(slot);
    shared *sh = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        say("mmap %zu bytes: %s", *bytes, strerror(errno));
        return NULL;
    }
    sh->cap = cap; /* the rest is zero: every slot free, every counter 0 */
    return sh;
}

/* Forks the shards: agents split evenly, none over SHARD_MAX. */
static int start_shards(ctx *c, const uint8_t *key)
{
    const size_t n = (size_t)c->o->agents;
    const size_t k = (n + SHARD_MAX - 1) / SHARD_MAX;
    const pid_t parent = getpid();
    c->shards = calloc(k, sizeof *c->shards);
    if (!c->shards)
        return SM_ENOMEM;
    fflush(NULL); /* nothing buffered is written twice */
    for (size_t i = 0; i < k; i++) {
        size_t first = n * i / k, count = n * (i + 1) / k - first;
        pid_t pid = fork();
        if (pid < 0) {
            say("fork: %s", strerror(errno));
            return SM_ESYS;
        }
        if (pid == 0) {
            /* The parent owns Ctrl-C and the shutdown; a shard ends with its parent. */
            signal(SIGINT, SIG_IGN);
            signal(SIGTERM, SIG_DFL);
            if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
                _exit(1);
            _exit(shard_main((int)i, c->o, key, c->sh, first, count, parent));
        }
        c->shards[i] = pid;
        c->n_shards = i + 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc > 0 ? 0 : 2;
    uint8_t key[SM_KEY_LEN];
    sm_error err = {0};
    if (sm_key_load(o.key_file, key, &err) != 0) {
        say("%s", err.msg);
        return 2;
    }
    if (raise_nofile() != 0)
        return 1;
    size_t map_bytes;
    shared *sh = shared_new(&o, &map_bytes);
    if (!sh)
        return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    ctx c = {.o = &o, .sh = sh, .stop = &stop_flag};
    summary s;
    memset(&s, 0, sizeof s);
    const int64_t t0 = sm_mono_ns();
    say("%ld agents against %s (coordinator pid %d)", o.agents, o.bus_url, (int)o.coord_pid);
    rc = start_shards(&c, key);
    /* libcurl after the fork: the shards never touch it. */
    if (!rc && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        say("curl_global_init failed");
        rc = SM_ESYS;
    }
    if (!rc && !(c.curl = curl_easy_init())) {
        say("curl_easy_init failed");
        rc = SM_ENOMEM;
    }
    if (!rc) {
        /* "Expect:" off: curl would wait for a 100 Continue before each large POST. */
        struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
        c.headers = h ? curl_slist_append(h, "Expect:") : NULL;
        if (!c.headers) {
            curl_slist_free_all(h);
            rc = SM_ENOMEM;
        }
    }
    if (!rc) {
        curl_easy_setopt(c.curl, CURLOPT_HTTPHEADER, c.headers);
        curl_easy_setopt(c.curl, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c.curl, CURLOPT_WRITEDATA, &c.resp);
        curl_easy_setopt(c.curl, CURLOPT_TIMEOUT, 60L);
        curl_easy_setopt(c.curl, CURLOPT_NOSIGNAL, 1L);
        rc = run_phases(&c, t0, &s);
    }
    if (stop_shards(&c) && !rc) {
        say("a shard failed");
        rc = SM_ESYS;
    }
    if (!rc)
        print_summary(&c, &s);
    curl_slist_free_all(c.headers);
    if (c.curl) {
        curl_easy_cleanup(c.curl);
        curl_global_cleanup();
    }
    free(c.resp.p);
    free(c.shards);
    munmap(sh, map_bytes);
    return rc ? 1 : 0;
}
