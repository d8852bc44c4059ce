/* What the agent's fleet mode shares between its control thread (daemon.c) and its worker
 * thread (worker.c): the daemon's state. Private to those two files. */
#ifndef SM_AGENT_FLEET_INTERNAL_H
#define SM_AGENT_FLEET_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/experiment/treat.h"
#include "agent/fleet/daemon.h"
#include "agent/session/session.h"
#include "agent/spool/spool.h"
#include "agent/workloads/tls.h"
#include "proto/envelope.h"
#include "proto/facts.h"
#include "proto/fingerprint.h"
#include "proto/msg.h"

/* Job ids this process has already taken from the coordinator's current store, so a resent
 * assign is acked, not run twice. */
#define SEEN_MAX 256
/* Bytes of spooled results one poll carries: the rest of SM_MSG_MAX is ample for what else a
 * poll holds (facts, labels, acks, ready: a few KiB; a fingerprint, at most SM_FP_MAX, takes its
 * size off the results of the poll it rides on) and the envelope's header. A result alone
 * larger than this could never be sent. */
#define POLL_RESULTS_BYTES (SM_MSG_MAX - 64u * 1024u)

typedef struct worker {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool has_job; /* a job waits or runs */
    bool running;
    bool quit;
    uint64_t job;
    uint32_t attempt;
    sm_role role; /* both: a local job; server: prepare; client: start */
    sm_params params;
    char addr[SM_ADDR_MAX + 1]; /* start: the server's address and port */
    uint16_t port;
    char pin[SM_PIN_MAX + 1];        /* start with tls: the server's key */
    char store[SM_STORE_ID_HEX + 1]; /* the store the job was assigned under; "" unknown */
    /* A pair server listens on ready_port: every poll says so until its result is spooled. */
    bool ready;
    uint16_t ready_port;
    atomic_int abort;
    pthread_t thread;
} worker;

/* What a poll waits beyond the hold the coordinator said (sm_poll_reply.hold_ms). */
#define SM_AGENT_WAIT_SLACK_MS 5000u

typedef struct agentd {
    const sm_daemon_cfg *cfg;
    volatile sig_atomic_t *stop;
    sm_spool *spool;
    /* Where jobs make their Unix sockets: cfg->sock_dir, or the private folder made at start
     * (own_sock_dir), removed at exit. */
    const char *sock_dir;
    char own_sock_dir[256];
    sm_session *ses; /* its nonce is the last poll's: the only reply taken is one that names it */
    int rcvfd;
    int wakefd;
    char boot[SM_BOOT_HEX + 1];
    uint64_t seq;
    /* How long a poll waits for its answer: cfg->reply_wait_ms, or longer when the
     * coordinator said it holds polls longer (hold_ms, in a large fleet). */
    uint32_t wait_ms;
    bool send_facts;
    sm_facts facts;
    /* The fingerprint, collected at start, when a reply asks and when the store changes; sent
     * in every poll while send_fp until a reply answers a poll that carried it. */
    sm_fingerprint fp;
    size_t fp_len; /* its encoded size */
    bool send_fp;
    bool fp_in_poll; /* the last poll carried it */
    char acks[SM_POLL_ACKS_MAX][SM_CMD_ID_MAX + 1];
    size_t n_acks;
    uint64_t seen_job[SEEN_MAX];
    uint32_t seen_attempt[SEEN_MAX];
    size_t n_seen;
    /* The coordinator's store as its last reply named it; "" until one did. Job ids belong to
     * a store: when it changes, seen_* is cleared. Control thread only. */
    char store[SM_STORE_ID_HEX + 1];
    sm_replay *replay;
    sm_rejects *rejects;
    sm_tls_id *tls; /* the built-in source's identity; NULL when it could not be made */
    worker w;
    /* The job's treatment (--allow-experiment, its journal in the spool folder): the worker's. */
    sm_treat_ctx treat;
    /* A job whose result the spool refused: a failure saying so, sent in every poll (not
     * durable) until acked. Under w.mu. */
    bool has_unspooled;
    sm_result_msg unspooled;
} agentd;

/* Wakes the control thread out of its wait for a reply (a result is ready, shutdown). */
void daemon_wake(agentd *d);
/* The worker thread: runs one job at a time, spools its result. arg is the agentd. */
void *daemon_worker_main(void *arg);

#endif
