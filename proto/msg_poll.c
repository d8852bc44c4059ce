/* Control-plane messages: the agent's poll, with its acks, results and ready pair servers. */
#include "proto/msg.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec_internal.h"
#include "proto/msg_internal.h"

/* ---- ready: listening pair servers ---- */

static cJSON *ready_json(const sm_ready *r)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put(o, "job", sm_json_u64_str(r->job)) &&
              sm_json_put(o, "attempt", sm_json_u64(r->attempt)) &&
              sm_json_put(o, "port", sm_json_u64(r->port));
    if (ok && r->pin[0] != '\0')
        ok = sm_json_put_fixed(o, "pin", r->pin, sizeof r->pin);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static const char *const ready_keys[] = {"job", "attempt", "port", "pin"};

static int ready_from_json(const cJSON *o, const char *where, sm_ready *out, sm_error *err)
{
    uint32_t seen;
    uint64_t port;
    sm_ready r;
    memset(&r, 0, sizeof r);
    int rc = sm_json_check_keys(o, where, ready_keys, sizeof ready_keys[0], 4,
                                BIT(0) | BIT(1) | BIT(2), &seen, err);
    if (rc == 0)
        rc = sm_msg_get_u64_string(o, where, "job", &r.job, err);
    if (rc == 0)
        rc = sm_msg_get_attempt(o, where, &r.attempt, err);
    if (rc == 0)
        rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "port"), where, "port", PORT_MAX,
                              false, &port, err);
    if (rc == 0 && (seen & BIT(3)))
        rc = sm_msg_get_pin(o, where, r.pin, err);
    if (rc != 0)
        return rc;
    /* Port 0 is "pick one" to bind(), never a port anyone listens on. */
    if (port == 0)
        return sm_error_set(err, SM_EINVAL, "%s: port: 0 is below the minimum 1", where);
    r.port = (uint16_t)port;
    *out = r;
    return 0;
}

/* ---- poll ---- */

void sm_msg_poll_fini(sm_poll *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; p->results != NULL && i < p->n_results; i++)
        sm_result_fini(&p->results[i].result);
    free(p->results);
    if (p->fingerprint != NULL) {
        sm_fp_fini(p->fingerprint);
        free(p->fingerprint);
    }
    memset(p, 0, sizeof *p);
}

static const char *state_name(sm_agent_state s)
{
    return s == SM_AGENT_BUSY ? "busy" : "idle";
}

static cJSON *poll_json(const sm_poll *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *acks = NULL, *results = NULL, *ready = NULL;
    bool ok = o != NULL && sm_json_put_fixed(o, "agent", p->agent, sizeof p->agent) &&
              sm_json_put_fixed(o, "boot", p->boot, sizeof p->boot) &&
              sm_json_put(o, "seq", sm_json_u64_str(p->seq)) &&
              sm_json_put(o, "state", cJSON_CreateString(state_name(p->state)));
    if (ok && p->state == SM_AGENT_BUSY)
        ok = sm_json_put(o, "job", sm_json_u64_str(p->job)) &&
             sm_json_put(o, "attempt", sm_json_u64(p->attempt));
    if (ok && p->data_addr[0] != '\0')
        ok = sm_json_put_fixed(o, "data_addr", p->data_addr, sizeof p->data_addr);
    if (ok && p->n_labels > 0)
        ok = sm_json_put(o, "labels", sm_msg_labels_to_cjson(p->labels, p->n_labels));
    if (ok && p->have_facts)
        ok = sm_json_put(o, "facts", sm_codec_facts_to_cjson(&p->facts));
    ok = ok && (acks = cJSON_AddArrayToObject(o, "acks")) != NULL;
    for (size_t i = 0; ok && i < p->n_acks; i++)
        ok = sm_json_append(acks, sm_json_fixed(p->acks[i], sizeof p->acks[i]));
    ok = ok && (results = cJSON_AddArrayToObject(o, "results")) != NULL;
    for (size_t i = 0; ok && i < p->n_results; i++)
        ok = sm_json_append(results, sm_msg_result_to_cjson(&p->results[i]));
    /* Optional, so that a poll without pair servers keeps its old shape. */
    if (ok && p->n_ready > 0)
        ok = (ready = cJSON_AddArrayToObject(o, "ready")) != NULL;
    for (size_t i = 0; ok && i < p->n_ready; i++)
        ok = sm_json_append(ready, ready_json(&p->ready[i]));
    /* Optional too: a coordinator from before it refuses unknown keys. */
    if (ok && p->quarantined > 0)
        ok = sm_json_put(o, "quarantined", sm_json_u64_str(p->quarantined));
    if (ok && p->fingerprint != NULL)
        ok = sm_json_put(o, "fingerprint", sm_fp_to_cjson(p->fingerprint));
    if (ok && p->wait_ms > 0)
        ok = sm_json_put(o, "wait_ms", sm_json_u64(p->wait_ms));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Only what the encoder cannot write (counts past the arrays, a state with no name); the rest
 * is the decoder's to judge, so the two never disagree. */
static int poll_encodable(const sm_poll *p, sm_error *err)
{
    if (p == NULL)
        return sm_error_set(err, SM_EINVAL, "poll: nothing to encode");
    if (p->state != SM_AGENT_IDLE && p->state != SM_AGENT_BUSY)
        return sm_error_set(err, SM_EINVAL, "poll: state: %d is not idle or busy", (int)p->state);
    if (p->n_labels > SM_LABELS_MAX)
        return sm_error_set(err, SM_EINVAL, "poll: labels: %zu is above the maximum %d",
                            p->n_labels, SM_LABELS_MAX);
    if (p->n_acks > SM_POLL_ACKS_MAX)
        return sm_error_set(err, SM_EINVAL, "poll: acks: %zu is above the maximum %d", p->n_acks,
                            SM_POLL_ACKS_MAX);
    if (p->n_results > SM_POLL_RESULTS_MAX)
        return sm_error_set(err, SM_EINVAL, "poll: results: %zu is above the maximum %d",
                            p->n_results, SM_POLL_RESULTS_MAX);
    if (p->n_results > 0 && p->results == NULL)
        return sm_error_set(err, SM_EINVAL, "poll: results: %zu counted, none given", p->n_results);
    for (size_t i = 0; i < p->n_results; i++)
        if ((unsigned)p->results[i].role >= SM_MSG_N_ROLES)
            return sm_error_set(err, SM_EINVAL, "poll: results[%zu]: role: %d is no role", i,
                                (int)p->results[i].role);
    if (p->n_ready > SM_POLL_READY_MAX)
        return sm_error_set(err, SM_EINVAL, "poll: ready: %zu is above the maximum %d", p->n_ready,
                            SM_POLL_READY_MAX);
    return 0;
}

char *sm_msg_poll_encode(const sm_poll *p, size_t *len, sm_error *err)
{
    if (poll_encodable(p, err) != 0)
        return sm_msg_refused(len);
    return sm_msg_finish(poll_json(p), "poll", len, err);
}

enum {
    PK_AGENT,
    PK_BOOT,
    PK_SEQ,
    PK_STATE,
    PK_JOB,
    PK_ATTEMPT,
    PK_DATA_ADDR,
    PK_LABELS,
    PK_FACTS,
    PK_ACKS,
    PK_RESULTS,
    PK_READY,
    PK_QUARANTINED,
    PK_FINGERPRINT,
    PK_WAIT_MS,
    PK__COUNT
};
static const char *const poll_keys[PK__COUNT] = {
    "agent", "boot", "seq",     "state", "job",         "attempt",     "data_addr", "labels",
    "facts", "acks", "results", "ready", "quarantined", "fingerprint", "wait_ms"};

static int poll_identity_from_json(const cJSON *o, sm_poll *p, sm_error *err)
{
    const char *s = NULL;
    int rc = sm_json_get_string(o, "poll", "agent", &s, err);
    if (rc != 0)
        return rc;
    if (strlen(s) > SM_NAME_MAX || !sm_name_valid(s))
        return sm_error_set(err, SM_EINVAL, "poll: agent: '%.*s' is not 1..%d of [A-Za-z0-9._-]",
                            SM_NAME_MAX, s, SM_NAME_MAX);
    memcpy(p->agent, s, strlen(s) + 1);
    if ((rc = sm_json_get_string(o, "poll", "boot", &s, err)) != 0)
        return rc;
    if (strlen(s) != SM_BOOT_HEX || strspn(s, "0123456789abcdef") != SM_BOOT_HEX)
        return sm_error_set(err, SM_EINVAL, "poll: boot: '%.*s' is not %d lowercase hex digits",
                            SM_BOOT_HEX + 8, s, SM_BOOT_HEX);
    memcpy(p->boot, s, SM_BOOT_HEX + 1);
    return sm_msg_get_u64_string(o, "poll", "seq", &p->seq, err);
}

/* job and attempt name the running job, so they come with busy and only with it. */
static int poll_state_from_json(const cJSON *o, uint32_t seen, sm_poll *p, sm_error *err)
{
    const char *s = NULL;
    int rc = sm_json_get_string(o, "poll", "state", &s, err);
    if (rc != 0)
        return rc;
    if (strcmp(s, "idle") == 0)
        p->state = SM_AGENT_IDLE;
    else if (strcmp(s, "busy") == 0)
        p->state = SM_AGENT_BUSY;
    else
        return sm_error_set(err, SM_EINVAL, "poll: state: '%.16s' is not idle or busy", s);
    for (int k = PK_JOB; k <= PK_ATTEMPT; k++) {
        bool has = seen & BIT(k);
        if (p->state == SM_AGENT_BUSY && !has)
            return sm_error_set(err, SM_EPARSE, "poll: missing field '%s' (required when busy)",
                                poll_keys[k]);
        if (p->state == SM_AGENT_IDLE && has)
            return sm_error_set(err, SM_EPARSE, "poll: %s: not allowed when idle", poll_keys[k]);
    }
    if (p->state == SM_AGENT_IDLE)
        return 0;
    if ((rc = sm_msg_get_u64_string(o, "poll", "job", &p->job, err)) != 0)
        return rc;
    return sm_msg_get_attempt(o, "poll", &p->attempt, err);
}

static int poll_acks_from_json(const cJSON *o, sm_poll *p, sm_error *err)
{
    const cJSON *acks, *item;
    int rc = sm_json_get_array(o, "poll", "acks", SM_POLL_ACKS_MAX, &acks, err);
    if (rc != 0)
        return rc;
    cJSON_ArrayForEach(item, acks)
    {
        if (!cJSON_IsString(item))
            return sm_error_set(err, SM_EPARSE, "poll: acks: expected command id strings");
        if (!sm_msg_cmd_id_valid(item->valuestring))
            return sm_error_set(err, SM_EINVAL, "poll: acks: '%.*s' is not 1..%d of [A-Za-z0-9._-]",
                                SM_CMD_ID_MAX, item->valuestring, SM_CMD_ID_MAX);
        memcpy(p->acks[p->n_acks++], item->valuestring, strlen(item->valuestring) + 1);
    }
    return 0;
}

/* n_results counts the results built so far, so sm_msg_poll_fini frees exactly those. */
static int poll_results_from_json(const cJSON *o, sm_poll *p, sm_error *err)
{
    const cJSON *results = NULL, *item; /* NULL: gcc -O3 cannot see get_array set it */
    int rc = sm_json_get_array(o, "poll", "results", SM_POLL_RESULTS_MAX, &results, err);
    if (rc != 0)
        return rc;
    size_t n = (size_t)cJSON_GetArraySize(results);
    if (n == 0)
        return 0;
    p->results = calloc(n, sizeof p->results[0]);
    if (p->results == NULL)
        return sm_error_set(err, SM_ENOMEM, "poll: results: out of memory");
    cJSON_ArrayForEach(item, results)
    {
        char where[32];
        snprintf(where, sizeof where, "poll: results[%zu]", p->n_results);
        if ((rc = sm_msg_result_from_cjson(item, where, &p->results[p->n_results], err)) != 0)
            return rc;
        p->n_results++;
    }
    return 0;
}

static int poll_ready_from_json(const cJSON *o, sm_poll *p, sm_error *err)
{
    const cJSON *ready, *item;
    int rc = sm_json_get_array(o, "poll", "ready", SM_POLL_READY_MAX, &ready, err);
    if (rc != 0)
        return rc;
    cJSON_ArrayForEach(item, ready)
    {
        char where[32];
        snprintf(where, sizeof where, "poll: ready[%zu]", p->n_ready);
        if ((rc = ready_from_json(item, where, &p->ready[p->n_ready], err)) != 0)
            return rc;
        p->n_ready++;
    }
    return 0;
}

/* The fingerprint, within SM_FP_MAX as the agent encodes it (measured by printing it again:
 * the envelope's limit alone would let one crowd out the results). */
static int poll_fingerprint_from_json(const cJSON *o, sm_poll *p, sm_error *err)
{
    char *text = cJSON_IsObject(o) ? cJSON_PrintUnformatted(o) : NULL;
    size_t n = text ? strlen(text) : 0;
    free(text);
    if (n > SM_FP_MAX)
        return sm_error_set(err, SM_EINVAL, "poll: fingerprint: %zu bytes is above the maximum %u",
                            n, SM_FP_MAX);
    p->fingerprint = malloc(sizeof *p->fingerprint);
    if (p->fingerprint == NULL)
        return sm_error_set(err, SM_ENOMEM, "poll: out of memory");
    sm_fp_init(p->fingerprint);
    sm_error inner = {0};
    int rc = sm_fp_from_cjson(o, p->fingerprint, &inner);
    if (rc != 0) {
        free(p->fingerprint);
        p->fingerprint = NULL;
        rc = sm_msg_nested_error(err, "poll", &inner);
    }
    return rc;
}

static int poll_from_json(const cJSON *o, sm_poll *p, sm_error *err)
{
    uint32_t seen = 0;
    uint32_t required =
        BIT(PK_AGENT) | BIT(PK_BOOT) | BIT(PK_SEQ) | BIT(PK_STATE) | BIT(PK_ACKS) | BIT(PK_RESULTS);
    int rc = sm_json_check_keys(o, "poll", poll_keys, sizeof poll_keys[0], PK__COUNT, required,
                                &seen, err);
    if (rc == 0)
        rc = poll_identity_from_json(o, p, err);
    if (rc == 0)
        rc = poll_state_from_json(o, seen, p, err);
    if (rc == 0 && (seen & BIT(PK_DATA_ADDR)))
        rc = sm_msg_get_addr(o, "poll", "data_addr", p->data_addr, err);
    if (rc == 0 && (seen & BIT(PK_LABELS)))
        rc = sm_msg_labels_from_cjson(cJSON_GetObjectItemCaseSensitive(o, "labels"), p, err);
    if (rc == 0 && (seen & BIT(PK_FACTS))) {
        sm_error inner;
        rc = sm_codec_facts_from_cjson(cJSON_GetObjectItemCaseSensitive(o, "facts"), &p->facts,
                                       &inner);
        if (rc != 0)
            rc = sm_msg_nested_error(err, "poll", &inner);
        p->have_facts = rc == 0;
    }
    if (rc == 0)
        rc = poll_acks_from_json(o, p, err);
    if (rc == 0)
        rc = poll_results_from_json(o, p, err);
    if (rc == 0 && (seen & BIT(PK_READY)))
        rc = poll_ready_from_json(o, p, err);
    if (rc == 0 && (seen & BIT(PK_QUARANTINED)))
        rc = sm_msg_get_u64_string(o, "poll", "quarantined", &p->quarantined, err);
    if (rc == 0 && (seen & BIT(PK_FINGERPRINT)))
        rc = poll_fingerprint_from_json(cJSON_GetObjectItemCaseSensitive(o, "fingerprint"), p, err);
    if (rc == 0 && (seen & BIT(PK_WAIT_MS)))
        rc = sm_msg_get_wait(o, "poll", "wait_ms", &p->wait_ms, err);
    return rc;
}

int sm_msg_poll_decode(const char *json, size_t len, sm_poll *out, sm_error *err)
{
    sm_poll p;
    memset(&p, 0, sizeof p);
    cJSON *root = NULL;
    int rc = sm_json_parse_object(json, len, "poll", &root, err);
    if (rc == 0)
        rc = poll_from_json(root, &p, err);
    cJSON_Delete(root);
    if (rc != 0) {
        sm_msg_poll_fini(&p);
        memset(out, 0, sizeof *out);
        return rc;
    }
    *out = p;
    return 0;
}
