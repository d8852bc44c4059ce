/* Control-plane messages (the bodies inside envelopes): the agent's poll, the coordinator's
 * reply with its commands, and a spooled result. 64-bit ids and counters travel as decimal
 * strings. Decoders reject unknown keys, wrong types and values past their bounds with a reason
 * naming the field (SM_EPARSE / SM_EINVAL), leaving *out empty. */
#ifndef SM_PROTO_MSG_H
#define SM_PROTO_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/envelope.h"
#include "proto/err.h"
#include "proto/facts.h"
#include "proto/fingerprint.h"
#include "proto/params.h"
#include "proto/result.h"

#define SM_POLL_RESULTS_MAX   32 /* results one poll carries, oldest first */
#define SM_POLL_ACKS_MAX      64 /* command ids one poll acknowledges */
#define SM_REPLY_ACKS_MAX     64 /* result ids one reply acknowledges */
#define SM_REPLY_COMMANDS_MAX 16
#define SM_LABELS_MAX         16
#define SM_LABEL_KEY_MAX      32 /* [A-Za-z0-9._-] */
#define SM_LABEL_VALUE_MAX    64 /* [A-Za-z0-9._:/=-] */
#define SM_ADDR_MAX           64 /* an IPv4 or IPv6 literal */
#define SM_BOOT_HEX           32 /* random per agent process start */
#define SM_CMD_ID_MAX         40
#define SM_STORE_ID_HEX       32 /* random per coordinator store: 128 bits, lowercase hex */

/* Whether s is a store id: SM_STORE_ID_HEX lowercase hex digits. */
bool sm_msg_store_id_valid(const char *s);

typedef struct sm_label {
    char key[SM_LABEL_KEY_MAX + 1];
    char value[SM_LABEL_VALUE_MAX + 1];
} sm_label;

/* Which end of a job a result comes from: both (a local job), or one side of a pair job. */
typedef enum sm_role { SM_ROLE_BOTH = 0, SM_ROLE_SERVER, SM_ROLE_CLIENT } sm_role;
const char *sm_role_name(sm_role r); /* "both", "server", "client" */

/* A result the agent measured: job id + attempt identify it (the store's unique key; the two
 * sides of a pair job come from two agents and carry their role). JSON "role" is left out for
 * SM_ROLE_BOTH. "store" is the id of the coordinator's store the job was assigned under: job
 * ids count from 1 in every store, so a result of another store's job 3 must not become this
 * store's job 3. Left out when "" (an agent that did not know it); optional when decoding. */
typedef struct sm_result_msg {
    uint64_t job;
    uint32_t attempt;
    sm_role role;
    char store[SM_STORE_ID_HEX + 1];
    sm_result result; /* owns its histogram */
} sm_result_msg;

/* A pair job's server side is listening: {"job":"12","attempt":1,"port":40123}, plus
 * "pin":"sha256//..." when it serves TLS with a key the client must pin. */
#define SM_POLL_READY_MAX 4
typedef struct sm_ready {
    uint64_t job;
    uint32_t attempt;
    uint16_t port;
    char pin[SM_PIN_MAX + 1]; /* "" when none */
} sm_ready;

/* Whether s is a key pin: "sha256//" and 44 base64 characters ending in '='. */
bool sm_msg_pin_valid(const char *s);

typedef enum sm_agent_state { SM_AGENT_IDLE = 0, SM_AGENT_BUSY } sm_agent_state;

/* The agent's request: heartbeat, status, acks of commands, results not yet acked.
 * {"agent":"h1","boot":"hex","seq":"7","state":"busy","job":"12","attempt":1,
 *  "data_addr":"10.213.0.11","labels":{"rack":"2"},"facts":{...},"acks":["c12.1"],
 *  "results":[{"job":"11","attempt":1,"result":{...}}]}
 * job/attempt only when busy; facts only when have_facts; data_addr, labels optional.
 * "quarantined":"3" (optional, left out when 0): the agent's spool entries out of service,
 * that is, files in its spool's quarantine/ folder at its start plus those it quarantined
 * since (docs/protocol.md, "Spool"): a level, not a delta, so every poll carries it whole. */
typedef struct sm_poll {
    char agent[SM_NAME_MAX + 1];
    char boot[SM_BOOT_HEX + 1];
    uint64_t seq;
    sm_agent_state state;
    uint64_t job;
    uint32_t attempt;
    char data_addr[SM_ADDR_MAX + 1];
    sm_label labels[SM_LABELS_MAX];
    size_t n_labels;
    bool have_facts;
    sm_facts facts;
    char acks[SM_POLL_ACKS_MAX][SM_CMD_ID_MAX + 1];
    size_t n_acks;
    sm_result_msg *results; /* owned, n_results <= SM_POLL_RESULTS_MAX */
    size_t n_results;
    sm_ready ready[SM_POLL_READY_MAX]; /* "ready", optional: listening pair servers */
    size_t n_ready;
    uint64_t quarantined; /* "quarantined", optional */
    /* "fingerprint", optional: the agent's, when it collected one the coordinator has not
     * heard yet (at its start, when asked, when the store changed). A decoded poll owns it
     * (sm_msg_poll_fini frees it); a poll being built points at the builder's. Its encoded
     * text is at most SM_FP_MAX bytes. */
    sm_fingerprint *fingerprint;
    /* "wait_ms", optional (0: left out): how long the agent waits for this poll's answer
     * before it sends another. Saying it also says the agent takes "hold_ms" in a reply. */
    uint32_t wait_ms;
} sm_poll;

typedef enum sm_cmd_kind {
    SM_CMD_ASSIGN = 0, /* run a local job: params */
    SM_CMD_PREPARE,    /* pair job, server side: listen and report the port */
    SM_CMD_START,      /* pair job, client side: connect to addr:port */
    SM_CMD_CANCEL,     /* stop job (if it is the running one) */
} sm_cmd_kind;

/* {"id":"c12.1","type":"assign","job":"12","attempt":1,"params":{...}}
 * {"id":"x12.1","type":"cancel","job":"12","attempt":1}
 * start adds "addr" and "port", and "pin" (the server's key) when params ask for tls; prepare
 * adds "addr", the client's data address, when the client has one. The id is
 * the coordinator's; the agent acks it once acted on. */
typedef struct sm_command {
    char id[SM_CMD_ID_MAX + 1];
    sm_cmd_kind kind;
    uint64_t job;
    uint32_t attempt;
    sm_params params;           /* assign, prepare, start */
    char addr[SM_ADDR_MAX + 1]; /* start: the server's; prepare: the client's ("" none) */
    uint16_t port;
    char pin[SM_PIN_MAX + 1]; /* start with tls: the server's key pin; else "" */
} sm_command;

/* The coordinator's answer: {"to":"h1","poll":"NONCE","acks":[{"job":"11","attempt":1}],
 * "commands":[...],"want_facts":false,"store":"hex"}. "to" is the agent it answers and "poll"
 * the envelope nonce of the poll it answers, both required: the agent drops a reply that is not
 * for its name and its last poll, so a captured reply cannot be replayed to another agent or
 * to a later poll. "store" is the id of the coordinator's store: when it changes, job ids start
 * over. Left out when "" and optional when decoding (a coordinator from before store ids); when
 * present it must be a valid store id. */
typedef struct sm_poll_reply {
    char to[SM_NAME_MAX + 1];
    char poll[SM_NONCE_HEX + 1];
    uint64_t ack_job[SM_REPLY_ACKS_MAX];
    uint32_t ack_attempt[SM_REPLY_ACKS_MAX];
    size_t n_acks;
    sm_command commands[SM_REPLY_COMMANDS_MAX];
    size_t n_commands;
    bool want_facts;
    /* "want_fingerprint", optional (left out when false): collect the fingerprint anew before
     * acting on this reply's commands and send it, as the coordinator does before a run's
     * first job on a host. */
    bool want_fingerprint;
    char store[SM_STORE_ID_HEX + 1];
    /* "hold_ms", optional (0: left out; sent only to a poll that said wait_ms): how long the
     * coordinator now holds a poll with nothing to say. The agent waits that long and more
     * before it sends a poll again; the hold grows with the fleet (docs/protocol.md). */
    uint32_t hold_ms;
} sm_poll_reply;

/* The bounds of wait_ms and hold_ms on the wire. */
#define SM_WAIT_MS_MIN 100u
#define SM_WAIT_MS_MAX 600000u

const char *sm_cmd_kind_name(sm_cmd_kind k); /* "assign", "prepare", "start", "cancel" */

/* Releases the results a decoded or built poll owns; leaves *p empty. */
void sm_msg_poll_fini(sm_poll *p);

char *sm_msg_poll_encode(const sm_poll *p, size_t *len, sm_error *err);
int sm_msg_poll_decode(const char *json, size_t len, sm_poll *out, sm_error *err);

char *sm_msg_reply_encode(const sm_poll_reply *r, size_t *len, sm_error *err);
int sm_msg_reply_decode(const char *json, size_t len, sm_poll_reply *out, sm_error *err);

/* One result as it sits in the spool and travels in a poll:
 * {"job":"11","attempt":1,"store":"hex","result":{...}} */
char *sm_msg_result_encode(const sm_result_msg *m, size_t *len, sm_error *err);
int sm_msg_result_decode(const char *json, size_t len, sm_result_msg *out, sm_error *err);

/* The result's metrics as JSON text (the `result` object alone), for the store. */
char *sm_msg_result_json(const sm_result *r, sm_error *err);
/* Facts as JSON text, for the store. */
char *sm_msg_facts_json(const sm_facts *f, sm_error *err);

/* Labels as a JSON object text {"k":"v",...}, for the store. */
char *sm_msg_labels_json(const sm_label *labels, size_t n, sm_error *err);

/* Parses "k=v,k=v" (the --labels option) into labels; SM_EINVAL naming the bad pair. */
int sm_labels_parse(const char *text, sm_label *labels, size_t *n, sm_error *err);

#endif
