/* Runs one job of a workload on this host: both ends, each on its own thread. */
#ifndef SM_AGENT_RUNNER_RUNNER_H
#define SM_AGENT_RUNNER_RUNNER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "agent/workloads/workload.h"
#include "proto/err.h"
#include "proto/params.h"
#include "proto/result.h"

typedef struct sm_runner_opts {
    const char *sock_dir; /* directory for Unix socket files (must exist) */
    const char *tcp_host; /* loopback address for tcp, default "127.0.0.1" */
    sm_fault fault;       /* test-only fault injected into a stream sender */
    bool pin;             /* pin the client and server threads to the CPUs below */
    int client_cpu;
    int server_cpu;
    /* Set by another thread to stop the job (a cancel from the coordinator, a shutdown): the
     * job then fails with a reason that starts with \"cancelled\". NULL: none. */
    atomic_int *abort;
    /* http with tls: the identity the built-in source serves with (local jobs and the server
     * of a pair job; a local job's client pins its key), and, for the client of a pair job,
     * the pin of the server's key that the coordinator passed on. NULL when none. */
    const struct sm_tls_id *tls;
    const char *tls_pin;
    /* Pair jobs over tcp: the server accepts its client from client_addr alone, closing
     * connections from anywhere else; the client connects from source_addr. NULL or "": any. */
    const char *client_addr;
    const char *source_addr;
} sm_runner_opts;

/* Runs one job with validated params p (scope local); an http job with a url runs its client
 * alone. Always fills *out, which the caller
 * initialised with sm_result_init (its old content is released): ok with metrics, or not ok with
 * the reason of the first side that failed. Returns 0 when the job ran to a verdict (even a failed
 * one), or an SM_E code when it could not start (listener, threads, memory) with err set. The
 * calling process survives every peer failure: a stalled or closed peer ends the job, not the
 * caller. */
int sm_runner_run(const sm_params *p, const sm_runner_opts *o, sm_result *out, sm_error *err);

/* ---- one side of a pair job (the other side runs on another host) ---- */

/* Runs the server side of p (scope pair, transport tcp): listens on bind_addr port 0, calls
 * on_ready(arg, port) once listening (from this thread, before accepting), serves one job and
 * fills *out with what the server side measures (see sm_result_merge_pair). The job's time
 * limit covers the wait for the client. Same return contract as sm_runner_run. */
int sm_runner_serve(const sm_params *p, const char *bind_addr, const sm_runner_opts *o,
                    void (*on_ready)(void *arg, uint16_t port), void *arg, sm_result *out,
                    sm_error *err);
/* Runs the client side of p against addr:port and fills *out with what the client measures. */
int sm_runner_connect(const sm_params *p, const char *addr, uint16_t port, const sm_runner_opts *o,
                      sm_result *out, sm_error *err);

#endif
