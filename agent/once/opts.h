/* Command-line options of sockmatrix-agent, parsed into a plain struct (testable alone). */
#ifndef SM_AGENT_ONCE_OPTS_H
#define SM_AGENT_ONCE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/workloads/workload.h"
#include "proto/err.h"
#include "proto/params.h"
#include "proto/reps.h"

typedef enum sm_format { SM_FMT_TABLE = 0, SM_FMT_JSON, SM_FMT_CSV } sm_format;

#define SM_REPETITIONS_MAX 1000u
#define SM_WARMUP_MAX      100u

typedef struct sm_once_opts {
    bool once, help, version, quiet;
    sm_params base;                             /* the test's parameters but the transport */
    sm_transport_kind transports[SM_TR__COUNT]; /* in the order given */
    size_t n_transports;
    bool nodelay_order[2]; /* tcp variants: TCP_NODELAY off/on, in order */
    size_t n_nodelay;
    sm_http_client clients[SM_HTTP__COUNT]; /* http: the variants are client models, in order */
    size_t n_clients;
    uint32_t repetitions; /* measured rounds; with reps_auto, reps.min to start with */
    /* --repetitions auto: rounds are added until every variant's CI is within reps.ci_rel of
     * its median, or reps.max rounds ran (--max-repetitions, --ci-rel) */
    bool reps_auto;
    sm_reps_rule reps;
    uint32_t warmup;
    sm_format format;
    char preset[32];    /* "" when none */
    sm_fault fault;     /* --test-fault, for the project's own tests */
    int log_level;      /* -1: leave as is */
    char sock_dir[256]; /* "" -> a fresh temporary directory */
    bool pin;           /* --affinity given */
    int client_cpu;     /* --affinity CLIENT,SERVER */
    int server_cpu;
    /* --disturbed include: samples measured while the host was disturbed are summarised too
     * (by default they are counted per variant and left out) */
    bool include_disturbed;
    /* --fingerprint: print this host's fingerprint and exit; --data-addr names the address
     * whose interface it reports as info.data_if */
    bool fingerprint;
    char data_addr[64];
} sm_once_opts;

/* Parses argv. Returns 0, or SM_EINVAL with err->msg one line naming the option, e.g.
 * "--msg-size: 'abc' is not a size (examples: 128, 64K, 1M)" or "unknown option '--foo'".
 * Applies a preset first and the explicit options over it; validates every resulting test
 * (via sm_params_validate) so that a bad combination fails here, before anything runs. */
int sm_opts_parse(int argc, char **argv, sm_once_opts *o, sm_error *err);

/* The --help text. */
const char *sm_opts_usage(void);

/* The params of one variant: base with transport t and (tcp only) nodelay. */
void sm_opts_variant(const sm_once_opts *o, sm_transport_kind t, bool nodelay, sm_params *out);

/* The params of one http variant: base with client model c. */
void sm_opts_http_variant(const sm_once_opts *o, sm_http_client c, sm_params *out);

#endif
