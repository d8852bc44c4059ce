/* The coordinator's event loop: one libwebsockets context owns the nanomsg bus (adopted as a
 * raw descriptor), the HTTP listener and the timers. */
#ifndef SM_COORD_SERVER_H
#define SM_COORD_SERVER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "proto/addrpolicy.h"
#include "proto/envelope.h"
#include "proto/err.h"

typedef struct sm_server_cfg {
    const char *listen_url; /* tcp://ADDR:PORT for the agents */
    const char *http_addr;  /* IPv4/IPv6 literal */
    int http_port;
    const char *db_path;
    uint8_t key[SM_KEY_LEN]; /* the fleet key: each agent's own key is derived from it */
    /* The fleet key before a rotation, accepted from agents not yet given their new key until
     * prev_grace_ms after the start; have_prev_key says whether there is one. */
    bool have_prev_key;
    uint8_t prev_key[SM_KEY_LEN];
    uint64_t prev_grace_ms;
    const char *token; /* NULL when the HTTP listener is loopback and no token was given; on a
                        * listener off loopback it guards reading the API and /ws too. The
                        * operate token: it may do everything */
    const char *const *read_tokens; /* tokens that read the API, /ws and /metrics, never change
                                     * state (routes.h, sm_tokens); only with token */
    size_t n_read_tokens;
    uint32_t hold_ms;
    uint32_t poll_rate;            /* sm_control_cfg.poll_rate */
    uint32_t lost_grace_ms;        /* a lost host's queued run jobs wait this long for it */
    int ready_fd;                  /* -1: none */
    const char *web_dir;           /* the dashboard's files, served at /; NULL: none */
    uint32_t max_agents;           /* registrations beyond this are refused (0: the default) */
    sm_addr_policy data_addr;      /* what agents may announce as their data_addr */
    sm_addr_policy webhook_allow;  /* where webhooks may go (sm_webhook_policy_init's default) */
    const char *const *http_hosts; /* more names the HTTP listener answers to (Host) */
    size_t n_http_hosts;
    unsigned http_max_conns;   /* open HTTP and WebSocket connections at most */
    uint32_t report_memory_mb; /* what building one report may hold (0: the default) */
    /* PEM files: with both, the HTTP listener serves HTTPS and wss:// only (no plain HTTP on
     * its port); NULL: plain HTTP. main.c has checked the key's mode. */
    const char *tls_cert, *tls_key;
} sm_server_cfg;

/* Runs until *stop becomes non-zero (a signal handler sets it). Returns 0 after a clean stop,
 * or an SM_E code with err set when it could not start. */
int sm_server_run(const sm_server_cfg *cfg, volatile sig_atomic_t *stop, sm_error *err);

#endif
