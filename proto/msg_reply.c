/* Control-plane messages: the coordinator's reply to a poll, with its acks and commands. */
#include "proto/msg.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "proto/codec_internal.h"
#include "proto/msg_internal.h"

static const char *const cmd_names[] = {"assign", "prepare", "start", "cancel"};
#define N_CMD_KINDS (sizeof cmd_names / sizeof cmd_names[0])
_Static_assert(N_CMD_KINDS == SM_CMD_CANCEL + 1, "one name per command kind");

const char *sm_cmd_kind_name(sm_cmd_kind k)
{
    return (unsigned)k < N_CMD_KINDS ? cmd_names[k] : "unknown";
}

static cJSON *command_json(const sm_command *c)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put_fixed(o, "id", c->id, sizeof c->id) &&
              sm_json_put(o, "type", cJSON_CreateString(sm_cmd_kind_name(c->kind))) &&
              sm_json_put(o, "job", sm_json_u64_str(c->job)) &&
              sm_json_put(o, "attempt", sm_json_u64(c->attempt));
    if (ok && c->kind != SM_CMD_CANCEL)
        ok = sm_json_put(o, "params", sm_codec_params_to_cjson(&c->params));
    if (ok && c->kind == SM_CMD_PREPARE && c->addr[0] != '\0')
        ok = sm_json_put_fixed(o, "addr", c->addr, sizeof c->addr);
    if (ok && c->kind == SM_CMD_START)
        ok = sm_json_put_fixed(o, "addr", c->addr, sizeof c->addr) &&
             sm_json_put(o, "port", sm_json_u64(c->port));
    if (ok && c->kind == SM_CMD_START && c->pin[0] != '\0')
        ok = sm_json_put_fixed(o, "pin", c->pin, sizeof c->pin);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *reply_json(const sm_poll_reply *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *acks = NULL, *commands = NULL;
    bool ok = o != NULL && sm_json_put_fixed(o, "to", r->to, sizeof r->to) &&
              sm_json_put_fixed(o, "poll", r->poll, sizeof r->poll) &&
              (acks = cJSON_AddArrayToObject(o, "acks")) != NULL;
    for (size_t i = 0; ok && i < r->n_acks; i++) {
        cJSON *ack = cJSON_CreateObject();
        ok = sm_json_append(acks, ack) && sm_json_put(ack, "job", sm_json_u64_str(r->ack_job[i])) &&
             sm_json_put(ack, "attempt", sm_json_u64(r->ack_attempt[i]));
    }
    ok = ok && (commands = cJSON_AddArrayToObject(o, "commands")) != NULL;
    for (size_t i = 0; ok && i < r->n_commands; i++)
        ok = sm_json_append(commands, command_json(&r->commands[i]));
    ok = ok && cJSON_AddBoolToObject(o, "want_facts", r->want_facts) != NULL;
    /* Left out when false, so that a reply of a coordinator that never asks keeps its shape. */
    if (ok && r->want_fingerprint)
        ok = sm_json_put_bool(o, "want_fingerprint", true);
    if (ok && r->store[0] != '\0')
        ok = sm_json_put_fixed(o, "store", r->store, sizeof r->store);
    /* Only to an agent that said wait_ms: one from before it refuses unknown keys. */
    if (ok && r->hold_ms > 0)
        ok = sm_json_put(o, "hold_ms", sm_json_u64(r->hold_ms));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* As poll_encodable: only what cannot be written. */
static int reply_encodable(const sm_poll_reply *r, sm_error *err)
{
    if (r == NULL)
        return sm_error_set(err, SM_EINVAL, "reply: nothing to encode");
    if (!sm_name_valid(r->to) || sm_name_reserved(r->to))
        return sm_error_set(err, SM_EINVAL, "reply: to: not an agent name");
    if (!sm_msg_nonce_valid(r->poll))
        return sm_error_set(err, SM_EINVAL, "reply: poll: not %d lowercase hex digits",
                            SM_NONCE_HEX);
    if (r->n_acks > SM_REPLY_ACKS_MAX)
        return sm_error_set(err, SM_EINVAL, "reply: acks: %zu is above the maximum %d", r->n_acks,
                            SM_REPLY_ACKS_MAX);
    if (r->n_commands > SM_REPLY_COMMANDS_MAX)
        return sm_error_set(err, SM_EINVAL, "reply: commands: %zu is above the maximum %d",
                            r->n_commands, SM_REPLY_COMMANDS_MAX);
    for (size_t i = 0; i < r->n_commands; i++)
        if ((unsigned)r->commands[i].kind >= N_CMD_KINDS)
            return sm_error_set(err, SM_EINVAL, "reply: commands[%zu]: type: %d is no command", i,
                                (int)r->commands[i].kind);
    if (r->store[0] != '\0' && !sm_msg_store_id_valid(r->store))
        return sm_error_set(err, SM_EINVAL, "reply: store: not a store id");
    return 0;
}

char *sm_msg_reply_encode(const sm_poll_reply *r, size_t *len, sm_error *err)
{
    if (reply_encodable(r, err) != 0)
        return sm_msg_refused(len);
    return sm_msg_finish(reply_json(r), "reply", len, err);
}

static const char *const ack_keys[] = {"job", "attempt"};

static int reply_acks_from_json(const cJSON *o, sm_poll_reply *r, sm_error *err)
{
    const cJSON *acks, *item;
    int rc = sm_json_get_array(o, "reply", "acks", SM_REPLY_ACKS_MAX, &acks, err);
    if (rc != 0)
        return rc;
    cJSON_ArrayForEach(item, acks)
    {
        char where[32];
        uint32_t seen;
        snprintf(where, sizeof where, "reply: acks[%zu]", r->n_acks);
        if ((rc = sm_json_check_keys(item, where, ack_keys, sizeof ack_keys[0], 2, BIT(0) | BIT(1),
                                     &seen, err)) != 0 ||
            (rc = sm_msg_get_u64_string(item, where, "job", &r->ack_job[r->n_acks], err)) != 0 ||
            (rc = sm_msg_get_attempt(item, where, &r->ack_attempt[r->n_acks], err)) != 0)
            return rc;
        r->n_acks++;
    }
    return 0;
}

enum { CK_ID, CK_TYPE, CK_JOB, CK_ATTEMPT, CK_PARAMS, CK_ADDR, CK_PORT, CK_PIN, CK__COUNT };
static const char *const cmd_keys[CK__COUNT] = {"id",     "type", "job",  "attempt",
                                                "params", "addr", "port", "pin"};

/* Which of params, addr and port a kind takes: each one it takes is required, the others are
 * refused, so a command never carries a field its receiver would silently ignore. */
static uint32_t cmd_fields(sm_cmd_kind k)
{
    switch (k) {
    case SM_CMD_ASSIGN:
    case SM_CMD_PREPARE:
        return BIT(CK_PARAMS);
    case SM_CMD_START:
        return BIT(CK_PARAMS) | BIT(CK_ADDR) | BIT(CK_PORT);
    case SM_CMD_CANCEL:
        return 0;
    }
    return 0;
}

/* Fields a kind may carry or leave out: prepare names its client's address when the client
 * announced one (the server then accepts that address alone). */
static uint32_t cmd_optional(sm_cmd_kind k)
{
    return k == SM_CMD_PREPARE ? BIT(CK_ADDR) : 0;
}

static int command_from_json(const cJSON *o, const char *where, sm_command *c, sm_error *err)
{
    uint32_t seen = 0;
    const char *s = NULL;
    int rc =
        sm_json_check_keys(o, where, cmd_keys, sizeof cmd_keys[0], CK__COUNT,
                           BIT(CK_ID) | BIT(CK_TYPE) | BIT(CK_JOB) | BIT(CK_ATTEMPT), &seen, err);
    if (rc == 0)
        rc = sm_json_get_string(o, where, "id", &s, err);
    if (rc != 0)
        return rc;
    if (!sm_msg_cmd_id_valid(s))
        return sm_error_set(err, SM_EINVAL, "%s: id: '%.*s' is not 1..%d of [A-Za-z0-9._-]", where,
                            SM_CMD_ID_MAX, s, SM_CMD_ID_MAX);
    memcpy(c->id, s, strlen(s) + 1);
    if ((rc = sm_json_get_string(o, where, "type", &s, err)) != 0)
        return rc;
    size_t k = 0;
    while (k < N_CMD_KINDS && strcmp(s, cmd_names[k]) != 0)
        k++;
    if (k == N_CMD_KINDS)
        return sm_error_set(err, SM_EINVAL, "%s: type: unknown value '%.16s'", where, s);
    c->kind = (sm_cmd_kind)k;
    if ((rc = sm_msg_get_u64_string(o, where, "job", &c->job, err)) != 0 ||
        (rc = sm_msg_get_attempt(o, where, &c->attempt, err)) != 0)
        return rc;
    uint32_t takes = cmd_fields(c->kind);
    for (int f = CK_PARAMS; f <= CK_PORT; f++) {
        if ((takes & BIT(f)) && !(seen & BIT(f)))
            return sm_error_set(err, SM_EPARSE, "%s: missing field '%s' (required by %s)", where,
                                cmd_keys[f], cmd_names[k]);
        if (!(takes & BIT(f)) && !(cmd_optional(c->kind) & BIT(f)) && (seen & BIT(f)))
            return sm_error_set(err, SM_EPARSE, "%s: %s: not allowed in %s", where, cmd_keys[f],
                                cmd_names[k]);
    }
    if (takes & BIT(CK_PARAMS)) {
        sm_error inner;
        if ((rc = sm_codec_params_from_cjson(cJSON_GetObjectItemCaseSensitive(o, "params"),
                                             &c->params, &inner)) != 0)
            return sm_msg_nested_error(err, where, &inner);
    }
    if ((cmd_optional(c->kind) & BIT(CK_ADDR)) && (seen & BIT(CK_ADDR)) &&
        (rc = sm_msg_get_addr(o, where, "addr", c->addr, err)) != 0)
        return rc;
    if (takes & BIT(CK_PORT)) {
        uint64_t port;
        if ((rc = sm_msg_get_addr(o, where, "addr", c->addr, err)) != 0 ||
            (rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "port"), where, "port",
                                   PORT_MAX, false, &port, err)) != 0)
            return rc;
        if (port == 0)
            return sm_error_set(err, SM_EINVAL, "%s: port: 0 is below the minimum 1", where);
        c->port = (uint16_t)port;
    }
    /* A client of a TLS source accepts its pinned key and nothing else, so a start without
     * one could only fail; a pin anywhere else would be ignored. */
    bool wants_pin = c->kind == SM_CMD_START && c->params.workload == SM_WL_HTTP && c->params.tls;
    if (wants_pin && !(seen & BIT(CK_PIN)))
        return sm_error_set(err, SM_EPARSE, "%s: missing field 'pin' (required by tls)", where);
    if (!wants_pin && (seen & BIT(CK_PIN)))
        return sm_error_set(err, SM_EPARSE, "%s: pin: not allowed without tls", where);
    if (wants_pin && (rc = sm_msg_get_pin(o, where, c->pin, err)) != 0)
        return rc;
    return 0;
}

static const char *const reply_keys[] = {"acks", "commands", "want_facts",       "store",
                                         "to",   "poll",     "want_fingerprint", "hold_ms"};

static int reply_from_json(const cJSON *o, sm_poll_reply *r, sm_error *err)
{
    uint32_t seen = 0;
    const cJSON *commands, *item;
    const char *s = NULL;
    int rc = sm_json_check_keys(o, "reply", reply_keys, sizeof reply_keys[0], 8,
                                BIT(0) | BIT(1) | BIT(4) | BIT(5), &seen, err);
    if (rc == 0 && (rc = sm_json_get_string(o, "reply", "to", &s, err)) == 0) {
        if (!sm_name_valid(s) || sm_name_reserved(s))
            return sm_error_set(err, SM_EINVAL, "reply: to: '%.*s' is not an agent name",
                                SM_NAME_MAX, s);
        memcpy(r->to, s, strlen(s) + 1);
    }
    if (rc == 0 && (rc = sm_json_get_string(o, "reply", "poll", &s, err)) == 0) {
        if (!sm_msg_nonce_valid(s))
            return sm_error_set(err, SM_EINVAL, "reply: poll: not %d lowercase hex digits",
                                SM_NONCE_HEX);
        memcpy(r->poll, s, SM_NONCE_HEX + 1);
    }
    if (rc == 0)
        rc = reply_acks_from_json(o, r, err);
    if (rc == 0)
        rc = sm_json_get_array(o, "reply", "commands", SM_REPLY_COMMANDS_MAX, &commands, err);
    if (rc != 0)
        return rc;
    cJSON_ArrayForEach(item, commands)
    {
        char where[32];
        snprintf(where, sizeof where, "reply: commands[%zu]", r->n_commands);
        if ((rc = command_from_json(item, where, &r->commands[r->n_commands], err)) != 0)
            return rc;
        r->n_commands++;
    }
    if (seen & BIT(2)) {
        item = cJSON_GetObjectItemCaseSensitive(o, "want_facts");
        if (!cJSON_IsBool(item))
            return sm_error_set(err, SM_EPARSE, "reply: want_facts: expected true or false");
        r->want_facts = cJSON_IsTrue(item);
    }
    if (seen & BIT(6)) {
        item = cJSON_GetObjectItemCaseSensitive(o, "want_fingerprint");
        if (!cJSON_IsBool(item))
            return sm_error_set(err, SM_EPARSE, "reply: want_fingerprint: expected true or false");
        r->want_fingerprint = cJSON_IsTrue(item);
    }
    if ((seen & BIT(7)) && (rc = sm_msg_get_wait(o, "reply", "hold_ms", &r->hold_ms, err)) != 0)
        return rc;
    /* Optional: a coordinator from before store ids sends none. */
    if (seen & BIT(3))
        return sm_msg_get_store_id(o, "reply", r->store, err);
    return 0;
}

int sm_msg_reply_decode(const char *json, size_t len, sm_poll_reply *out, sm_error *err)
{
    sm_poll_reply r;
    memset(&r, 0, sizeof r);
    cJSON *root = NULL;
    int rc = sm_json_parse_object(json, len, "reply", &root, err);
    if (rc == 0)
        rc = reply_from_json(root, &r, err);
    cJSON_Delete(root);
    if (rc != 0) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    *out = r;
    return 0;
}
