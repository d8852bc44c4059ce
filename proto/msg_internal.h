/* What the parts of the control-plane messages share (msg.c, msg_result.c, msg_poll.c,
 * msg_reply.c): field readers, id checks and the labels' and spooled results' cJSON forms.
 * Not for callers outside proto/msg*.c; they use proto/msg.h. */
#ifndef SM_PROTO_MSG_INTERNAL_H
#define SM_PROTO_MSG_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"
#include "proto/msg.h"

#define PORT_MAX 65535u
#define BIT(i)   (1u << (i))

/* Roles a result message may carry: both, server and client. */
#define SM_MSG_N_ROLES (SM_ROLE_CLIENT + 1)

/* Whether s is a command id (1..SM_CMD_ID_MAX of [A-Za-z0-9._-]) / a poll nonce
 * (SM_NONCE_HEX lowercase hex digits). */
bool sm_msg_cmd_id_valid(const char *s);
bool sm_msg_nonce_valid(const char *s);

/* Field readers of object o: each writes its out-parameter only on success and otherwise
 * returns SM_EPARSE / SM_EINVAL with a reason "WHERE: FIELD: ...". */
/* "store": a store id (sm_msg_store_id_valid). */
int sm_msg_get_store_id(const cJSON *o, const char *where, char out[SM_STORE_ID_HEX + 1],
                        sm_error *err);
/* A 64-bit id or counter, which must be a decimal string. */
int sm_msg_get_u64_string(const cJSON *o, const char *where, const char *field, uint64_t *out,
                          sm_error *err);
/* wait_ms or hold_ms: SM_WAIT_MS_MIN..SM_WAIT_MS_MAX, a number. */
int sm_msg_get_wait(const cJSON *o, const char *where, const char *field, uint32_t *out,
                    sm_error *err);
/* "attempt": 1..1000000. */
int sm_msg_get_attempt(const cJSON *o, const char *where, uint32_t *out, sm_error *err);
/* An IPv4 or IPv6 literal of at most SM_ADDR_MAX characters. */
int sm_msg_get_addr(const cJSON *o, const char *where, const char *field, char out[SM_ADDR_MAX + 1],
                    sm_error *err);
/* "pin": sm_msg_pin_valid. */
int sm_msg_get_pin(const cJSON *o, const char *where, char out[SM_PIN_MAX + 1], sm_error *err);

/* A nested decoder's failure (inner), re-raised in err under `where`; returns its code. */
int sm_msg_nested_error(sm_error *err, const char *where, const sm_error *inner);

/* Prints root (NULL when a builder ran out of memory) as the message text, deleting it, and
 * sets *len (when not NULL) to its length or 0; sm_msg_refused sets *len to 0 and returns
 * NULL, for an encoder that refuses its input. */
char *sm_msg_finish(cJSON *root, const char *what, size_t *len, sm_error *err);
char *sm_msg_refused(size_t *len);

/* Labels as a JSON object (NULL when out of memory), and the poll's "labels" object o read into
 * p->labels (p->n_labels counts them). */
cJSON *sm_msg_labels_to_cjson(const sm_label *labels, size_t n);
int sm_msg_labels_from_cjson(const cJSON *o, sm_poll *p, sm_error *err);

/* A spooled result as a JSON object (NULL when out of memory), and read back from o with
 * reasons under `where`: *out is filled only on success and then owns its histogram. */
cJSON *sm_msg_result_to_cjson(const sm_result_msg *m);
int sm_msg_result_from_cjson(const cJSON *o, const char *where, sm_result_msg *out, sm_error *err);

#endif
