/* sockmatrix-agent's fleet mode: a control thread long-polls the coordinator, one worker
 * thread runs one job at a time, and every result goes through the spool. */
#ifndef SM_AGENT_FLEET_DAEMON_H
#define SM_AGENT_FLEET_DAEMON_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/addrpolicy.h"
#include "proto/envelope.h"
#include "proto/err.h"
#include "proto/msg.h"

#define SM_ALLOW_HTTP_MAX 16

typedef struct sm_daemon_cfg {
    const char *coordinator; /* tcp://HOST:PORT */
    uint8_t key[SM_KEY_LEN];
    char name[SM_NAME_MAX + 1];
    sm_label labels[SM_LABELS_MAX];
    size_t n_labels;
    char data_addr[SM_ADDR_MAX + 1];
    const char *spool_dir;
    /* Unix sockets of local jobs; NULL: a private folder sm_daemon_run makes under $TMPDIR
     * (or /tmp) with mkdtemp, mode 0700, and removes at exit when empty. */
    const char *sock_dir;
    uint32_t reply_wait_ms; /* a poll with no answer in this long is sent again (new nonce) */
    /* --allow-http: the url prefixes an http job may fetch from (the built-in source of a
     * peer is always allowed: the coordinator took its address from a registered agent). */
    char allow_http[SM_ALLOW_HTTP_MAX][SM_URL_MAX + 1];
    size_t n_allow_http;
    /* --affinity: pin every job's client and server threads to these CPUs. */
    bool pin;
    int client_cpu, server_cpu;
    /* --data-addr-allow: the server addresses a pair job's client may connect to. */
    sm_addr_policy data_addr_allow;
    /* --allow-experiment: the host settings a job's treatment may change (SM_ALLOW_*). */
    unsigned allow_experiment;
} sm_daemon_cfg;

/* Whether url is under one of the prefixes: it starts with one, and a prefix that does not end
 * in '/' is followed by '/', '?', '#' or the end of the url, so "http://lab1" allows neither
 * "http://lab10/" nor "http://lab1.example.com/" nor another port. */
bool sm_daemon_url_allowed(const sm_daemon_cfg *cfg, const char *url);

/* Runs until *stop is set (then cancels a running job, spools its result and returns 0), or
 * returns an SM_E code when it cannot start (spool, socket). wake_fd, when >= 0, is written
 * to by the signal handler so that a blocked wait ends at once. */
int sm_daemon_run(const sm_daemon_cfg *cfg, volatile sig_atomic_t *stop, int *wake_fd,
                  sm_error *err);

#endif
