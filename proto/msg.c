/* Control-plane message bodies (poll, reply, spooled result) to and from JSON. */
#include "proto/msg.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/codec_internal.h"

#define ATTEMPT_MAX 1000000u
#define PORT_MAX    65535u
#define ID_EXTRA    "._-"    /* besides [A-Za-z0-9]: agent-side ids and label keys */
#define VALUE_EXTRA "._:/=-" /* besides [A-Za-z0-9]: label values */

#define BIT(i) (1u << (i))

/* ---- shared pieces ---- */

/* Whether s[0..len) is min..max characters of [A-Za-z0-9] and `extra`. Locale-free on purpose:
 * what is valid must not depend on where the agent runs. */
static bool valid_span(const char *s, size_t len, size_t min, size_t max, const char *extra)
{
    if (len < min || len > max)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        /* strchr would find a NUL byte in the terminator of extra. */
        if (!alnum && (c == '\0' || strchr(extra, c) == NULL))
            return false;
    }
    return true;
}

static bool valid_cmd_id(const char *s)
{
    return valid_span(s, strlen(s), 1, SM_CMD_ID_MAX, ID_EXTRA);
}

static bool nonce_valid(const char *s)
{
    return strlen(s) == SM_NONCE_HEX && strspn(s, "0123456789abcdef") == SM_NONCE_HEX;
}

bool sm_msg_store_id_valid(const char *s)
{
    return s != NULL && strlen(s) == SM_STORE_ID_HEX &&
           strspn(s, "0123456789abcdef") == SM_STORE_ID_HEX;
}

/* An optional "store" field: a valid store id when present. */
static int get_store_id(const cJSON *o, const char *where, char out[SM_STORE_ID_HEX + 1],
                        sm_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, "store");
    if (!cJSON_IsString(item))
        return sm_error_set(err, SM_EPARSE, "%s: store: expected a string", where);
    if (!sm_msg_store_id_valid(item->valuestring))
        return sm_error_set(err, SM_EINVAL, "%s: store: '%.*s' is not %d lowercase hex digits",
                            where, SM_STORE_ID_HEX + 8, item->valuestring, SM_STORE_ID_HEX);
    memcpy(out, item->valuestring, SM_STORE_ID_HEX + 1);
    return 0;
}

/* A nested decoder's failure, re-raised under the path of the message around it. */
static int nested_error(sm_error *err, const char *where, const sm_error *inner)
{
    return sm_error_set(err, inner->code, "%s: %s", where, inner->msg);
}

/* Strict on purpose: a number would already have gone through a double on its way here. */
static int get_u64_string(const cJSON *o, const char *where, const char *field, uint64_t *out,
                          sm_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!cJSON_IsString(item))
        return sm_error_set(err, SM_EPARSE, "%s: %s: expected a decimal string", where, field);
    return sm_json_get_uint(item, where, field, UINT64_MAX, true, out, err);
}

static int get_attempt(const cJSON *o, const char *where, uint32_t *out, sm_error *err)
{
    uint64_t v;
    int rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "attempt"), where, "attempt",
                              ATTEMPT_MAX, false, &v, err);
    if (rc != 0)
        return rc;
    if (v < 1)
        return sm_error_set(err, SM_EINVAL, "%s: attempt: 0 is below the minimum 1", where);
    *out = (uint32_t)v;
    return 0;
}

/* A literal only: a name would make the agent resolve, and connect to, whatever DNS says. */
static int get_addr(const cJSON *o, const char *where, const char *field, char out[SM_ADDR_MAX + 1],
                    sm_error *err)
{
    const char *s = NULL;
    int rc = sm_json_get_string(o, where, field, &s, err);
    if (rc != 0)
        return rc;
    unsigned char bin[sizeof(struct in6_addr)];
    if (strlen(s) > SM_ADDR_MAX ||
        (inet_pton(AF_INET, s, bin) != 1 && inet_pton(AF_INET6, s, bin) != 1))
        return sm_error_set(err, SM_EINVAL, "%s: %s: '%.*s' is not an IPv4 or IPv6 address", where,
                            field, SM_ADDR_MAX, s);
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

/* root is NULL when a builder ran out of memory. */
static char *finish(cJSON *root, const char *what, size_t *len, sm_error *err)
{
    char *text = sm_json_finish(root, true, 0, what, err);
    if (len != NULL)
        *len = text != NULL ? strlen(text) : 0;
    return text;
}

static char *refused(size_t *len)
{
    if (len != NULL)
        *len = 0;
    return NULL;
}

/* ---- labels ---- */

static int check_label(const char *key, size_t key_len, const char *value, size_t value_len,
                       const char *where, sm_error *err)
{
    if (!valid_span(key, key_len, 1, SM_LABEL_KEY_MAX, ID_EXTRA))
        return sm_error_set(err, SM_EINVAL, "%s: key '%.*s' is not 1..%d of [A-Za-z0-9._-]", where,
                            (int)(key_len < 40 ? key_len : 40), key, SM_LABEL_KEY_MAX);
    if (!valid_span(value, value_len, 0, SM_LABEL_VALUE_MAX, VALUE_EXTRA))
        return sm_error_set(err, SM_EINVAL, "%s: value '%.*s' is not 0..%d of [A-Za-z0-9._:/=-]",
                            where, (int)(value_len < 70 ? value_len : 70), value,
                            SM_LABEL_VALUE_MAX);
    return 0;
}

static bool have_label(const sm_label *labels, size_t n, const char *key, size_t key_len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(labels[i].key) == key_len && memcmp(labels[i].key, key, key_len) == 0)
            return true;
    return false;
}

static void set_label(sm_label *l, const char *key, size_t key_len, const char *value,
                      size_t value_len)
{
    memcpy(l->key, key, key_len);
    l->key[key_len] = '\0';
    memcpy(l->value, value, value_len);
    l->value[value_len] = '\0';
}

int sm_labels_parse(const char *text, sm_label *labels, size_t *n, sm_error *err)
{
    if (text == NULL || labels == NULL || n == NULL)
        return sm_error_set(err, SM_EINVAL, "labels: nothing to parse");
    sm_label tmp[SM_LABELS_MAX];
    size_t count = 0;
    const char *pair = text;
    /* An empty option means no labels, not one empty pair. */
    bool more = *text != '\0';
    while (more) {
        size_t len = strcspn(pair, ",");
        char where[96];
        snprintf(where, sizeof where, "labels: '%.*s'", (int)(len < 64 ? len : 64), pair);
        const char *eq = memchr(pair, '=', len);
        if (eq == NULL)
            return sm_error_set(err, SM_EINVAL, "%s: expected key=value", where);
        size_t key_len = (size_t)(eq - pair);
        int rc = check_label(pair, key_len, eq + 1, len - key_len - 1, where, err);
        if (rc != 0)
            return rc;
        if (have_label(tmp, count, pair, key_len))
            return sm_error_set(err, SM_EINVAL, "%s: duplicate key", where);
        if (count == SM_LABELS_MAX)
            return sm_error_set(err, SM_EINVAL, "%s: more than %d labels", where, SM_LABELS_MAX);
        set_label(&tmp[count++], pair, key_len, eq + 1, len - key_len - 1);
        more = pair[len] == ',';
        if (more)
            pair += len + 1;
    }
    memcpy(labels, tmp, count * sizeof tmp[0]);
    *n = count;
    return 0;
}

static cJSON *labels_json(const sm_label *labels, size_t n)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        char key[SM_LABEL_KEY_MAX + 1];
        size_t key_len = strnlen(labels[i].key, SM_LABEL_KEY_MAX);
        memcpy(key, labels[i].key, key_len);
        key[key_len] = '\0';
        ok = sm_json_put_fixed(o, key, labels[i].value, sizeof labels[i].value);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int labels_from_json(const cJSON *o, sm_poll *p, sm_error *err)
{
    static const char where[] = "poll: labels";
    if (!cJSON_IsObject(o))
        return sm_error_set(err, SM_EPARSE, "%s: expected an object", where);
    size_t n = (size_t)cJSON_GetArraySize(o);
    if (n > SM_LABELS_MAX)
        return sm_error_set(err, SM_EINVAL, "%s: %zu labels is above the maximum %d", where, n,
                            SM_LABELS_MAX);
    const cJSON *item;
    cJSON_ArrayForEach(item, o)
    {
        const char *key = item->string;
        if (!cJSON_IsString(item))
            return sm_error_set(err, SM_EPARSE, "%s: %.40s: expected a string", where, key);
        int rc =
            check_label(key, strlen(key), item->valuestring, strlen(item->valuestring), where, err);
        if (rc != 0)
            return rc;
        /* cJSON keeps duplicate keys; which one counts would be an accident of the parser. */
        if (have_label(p->labels, p->n_labels, key, strlen(key)))
            return sm_error_set(err, SM_EPARSE, "%s: duplicate key '%s'", where, key);
        set_label(&p->labels[p->n_labels++], key, strlen(key), item->valuestring,
                  strlen(item->valuestring));
    }
    return 0;
}

/* ---- results ---- */

static const char *const role_names[] = {"both", "server", "client"};
#define N_ROLES (sizeof role_names / sizeof role_names[0])
_Static_assert(N_ROLES == SM_ROLE_CLIENT + 1, "one name per role");

const char *sm_role_name(sm_role r)
{
    return (unsigned)r < N_ROLES ? role_names[r] : "unknown";
}

static cJSON *result_msg_json(const sm_result_msg *m)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put(o, "job", sm_json_u64_str(m->job)) &&
              sm_json_put(o, "attempt", sm_json_u64(m->attempt));
    /* A local job's result keeps the shape it had before pair jobs existed. */
    if (ok && m->role != SM_ROLE_BOTH)
        ok = sm_json_put(o, "role", cJSON_CreateString(sm_role_name(m->role)));
    /* Left out when unknown, so that a result spooled before store ids reads as it did. */
    if (ok && m->store[0] != '\0')
        ok = sm_json_put_fixed(o, "store", m->store, sizeof m->store);
    ok = ok && sm_json_put(o, "result", sm_codec_result_to_cjson(&m->result));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

enum { RK_JOB, RK_ATTEMPT, RK_ROLE, RK_STORE, RK_RESULT, RK__COUNT };
static const char *const result_msg_keys[RK__COUNT] = {"job", "attempt", "role", "store", "result"};

/* "both" is what a missing role means, so it is never written out and not accepted either:
 * one result has one spelling. */
static int get_role(const cJSON *o, const char *where, sm_role *out, sm_error *err)
{
    const char *s = NULL;
    int rc = sm_json_get_string(o, where, "role", &s, err);
    if (rc != 0)
        return rc;
    if (strcmp(s, "server") == 0)
        *out = SM_ROLE_SERVER;
    else if (strcmp(s, "client") == 0)
        *out = SM_ROLE_CLIENT;
    else
        return sm_error_set(err, SM_EINVAL, "%s: role: '%.16s' is not server or client", where, s);
    return 0;
}

/* Fills *out only on success; out->result then owns its histogram. */
static int result_msg_from_json(const cJSON *o, const char *where, sm_result_msg *out,
                                sm_error *err)
{
    uint32_t seen = 0;
    sm_result_msg m = {.role = SM_ROLE_BOTH};
    sm_error inner;
    int rc = sm_json_check_keys(o, where, result_msg_keys, sizeof result_msg_keys[0], RK__COUNT,
                                BIT(RK_JOB) | BIT(RK_ATTEMPT) | BIT(RK_RESULT), &seen, err);
    if (rc == 0)
        rc = get_u64_string(o, where, "job", &m.job, err);
    if (rc == 0)
        rc = get_attempt(o, where, &m.attempt, err);
    if (rc == 0 && (seen & BIT(RK_ROLE)))
        rc = get_role(o, where, &m.role, err);
    if (rc == 0 && (seen & BIT(RK_STORE)))
        rc = get_store_id(o, where, m.store, err);
    if (rc != 0)
        return rc;
    rc = sm_codec_result_from_cjson(cJSON_GetObjectItemCaseSensitive(o, "result"), &m.result,
                                    &inner);
    if (rc != 0)
        return nested_error(err, where, &inner);
    *out = m;
    return 0;
}

char *sm_msg_result_encode(const sm_result_msg *m, size_t *len, sm_error *err)
{
    if (m == NULL) {
        sm_error_set(err, SM_EINVAL, "spooled result: nothing to encode");
        return refused(len);
    }
    if ((unsigned)m->role >= N_ROLES) {
        sm_error_set(err, SM_EINVAL, "spooled result: role: %d is no role", (int)m->role);
        return refused(len);
    }
    if (m->store[0] != '\0' && !sm_msg_store_id_valid(m->store)) {
        sm_error_set(err, SM_EINVAL, "spooled result: store: not a store id");
        return refused(len);
    }
    return finish(result_msg_json(m), "spooled result", len, err);
}

static void result_msg_clear(sm_result_msg *m)
{
    memset(m, 0, sizeof *m);
    sm_result_init(&m->result);
}

int sm_msg_result_decode(const char *json, size_t len, sm_result_msg *out, sm_error *err)
{
    static const char where[] = "spooled result";
    cJSON *root = NULL;
    int rc = sm_json_parse_object(json, len, where, &root, err);
    if (rc == 0)
        rc = result_msg_from_json(root, where, out, err);
    cJSON_Delete(root);
    if (rc != 0)
        result_msg_clear(out);
    return rc;
}

char *sm_msg_result_json(const sm_result *r, sm_error *err)
{
    return sm_codec_result_encode(r, err);
}

char *sm_msg_facts_json(const sm_facts *f, sm_error *err)
{
    return sm_codec_facts_encode(f, err);
}

char *sm_msg_labels_json(const sm_label *labels, size_t n, sm_error *err)
{
    if (n > SM_LABELS_MAX) {
        sm_error_set(err, SM_EINVAL, "labels: more than %d", SM_LABELS_MAX);
        return NULL;
    }
    cJSON *o = labels_json(labels, n);
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text)
        sm_error_set(err, SM_ENOMEM, "labels: out of memory");
    return text;
}

/* ---- ready: listening pair servers ---- */

#define PIN_PREFIX "sha256//"

bool sm_msg_pin_valid(const char *s)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const size_t pre = sizeof PIN_PREFIX - 1;
    /* SHA-256 is 32 bytes: 43 base64 characters and one '=' of padding. */
    if (s == NULL || strncmp(s, PIN_PREFIX, pre) != 0 || strlen(s) != pre + 44)
        return false;
    for (size_t i = pre; i < pre + 43; i++)
        if (s[i] == '\0' || strchr(b64, s[i]) == NULL)
            return false;
    return s[pre + 43] == '=';
}

static int get_pin(const cJSON *o, const char *where, char out[SM_PIN_MAX + 1], sm_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, "pin");
    if (!cJSON_IsString(item))
        return sm_error_set(err, SM_EPARSE, "%s: pin: expected a string", where);
    if (!sm_msg_pin_valid(item->valuestring))
        return sm_error_set(err, SM_EINVAL, "%s: pin: not sha256// and 44 base64 characters",
                            where);
    snprintf(out, SM_PIN_MAX + 1, "%s", item->valuestring);
    return 0;
}

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
        rc = get_u64_string(o, where, "job", &r.job, err);
    if (rc == 0)
        rc = get_attempt(o, where, &r.attempt, err);
    if (rc == 0)
        rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "port"), where, "port", PORT_MAX,
                              false, &port, err);
    if (rc == 0 && (seen & BIT(3)))
        rc = get_pin(o, where, r.pin, err);
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
        ok = sm_json_put(o, "labels", labels_json(p->labels, p->n_labels));
    if (ok && p->have_facts)
        ok = sm_json_put(o, "facts", sm_codec_facts_to_cjson(&p->facts));
    ok = ok && (acks = cJSON_AddArrayToObject(o, "acks")) != NULL;
    for (size_t i = 0; ok && i < p->n_acks; i++)
        ok = sm_json_append(acks, sm_json_fixed(p->acks[i], sizeof p->acks[i]));
    ok = ok && (results = cJSON_AddArrayToObject(o, "results")) != NULL;
    for (size_t i = 0; ok && i < p->n_results; i++)
        ok = sm_json_append(results, result_msg_json(&p->results[i]));
    /* Optional, so that a poll without pair servers keeps its old shape. */
    if (ok && p->n_ready > 0)
        ok = (ready = cJSON_AddArrayToObject(o, "ready")) != NULL;
    for (size_t i = 0; ok && i < p->n_ready; i++)
        ok = sm_json_append(ready, ready_json(&p->ready[i]));
    /* Optional too: a coordinator from before it refuses unknown keys. */
    if (ok && p->quarantined > 0)
        ok = sm_json_put(o, "quarantined", sm_json_u64_str(p->quarantined));
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
        if ((unsigned)p->results[i].role >= N_ROLES)
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
        return refused(len);
    return finish(poll_json(p), "poll", len, err);
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
    PK__COUNT
};
static const char *const poll_keys[PK__COUNT] = {
    "agent",  "boot",  "seq",  "state",   "job",   "attempt",    "data_addr",
    "labels", "facts", "acks", "results", "ready", "quarantined"};

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
    return get_u64_string(o, "poll", "seq", &p->seq, err);
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
    if ((rc = get_u64_string(o, "poll", "job", &p->job, err)) != 0)
        return rc;
    return get_attempt(o, "poll", &p->attempt, err);
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
        if (!valid_cmd_id(item->valuestring))
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
        if ((rc = result_msg_from_json(item, where, &p->results[p->n_results], err)) != 0)
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
        rc = get_addr(o, "poll", "data_addr", p->data_addr, err);
    if (rc == 0 && (seen & BIT(PK_LABELS)))
        rc = labels_from_json(cJSON_GetObjectItemCaseSensitive(o, "labels"), p, err);
    if (rc == 0 && (seen & BIT(PK_FACTS))) {
        sm_error inner;
        rc = sm_codec_facts_from_cjson(cJSON_GetObjectItemCaseSensitive(o, "facts"), &p->facts,
                                       &inner);
        if (rc != 0)
            rc = nested_error(err, "poll", &inner);
        p->have_facts = rc == 0;
    }
    if (rc == 0)
        rc = poll_acks_from_json(o, p, err);
    if (rc == 0)
        rc = poll_results_from_json(o, p, err);
    if (rc == 0 && (seen & BIT(PK_READY)))
        rc = poll_ready_from_json(o, p, err);
    if (rc == 0 && (seen & BIT(PK_QUARANTINED)))
        rc = get_u64_string(o, "poll", "quarantined", &p->quarantined, err);
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

/* ---- reply ---- */

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
    if (ok && r->store[0] != '\0')
        ok = sm_json_put_fixed(o, "store", r->store, sizeof r->store);
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
    if (!nonce_valid(r->poll))
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
        return refused(len);
    return finish(reply_json(r), "reply", len, err);
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
            (rc = get_u64_string(item, where, "job", &r->ack_job[r->n_acks], err)) != 0 ||
            (rc = get_attempt(item, where, &r->ack_attempt[r->n_acks], err)) != 0)
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
    if (!valid_cmd_id(s))
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
    if ((rc = get_u64_string(o, where, "job", &c->job, err)) != 0 ||
        (rc = get_attempt(o, where, &c->attempt, err)) != 0)
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
            return nested_error(err, where, &inner);
    }
    if ((cmd_optional(c->kind) & BIT(CK_ADDR)) && (seen & BIT(CK_ADDR)) &&
        (rc = get_addr(o, where, "addr", c->addr, err)) != 0)
        return rc;
    if (takes & BIT(CK_PORT)) {
        uint64_t port;
        if ((rc = get_addr(o, where, "addr", c->addr, err)) != 0 ||
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
    if (wants_pin && (rc = get_pin(o, where, c->pin, err)) != 0)
        return rc;
    return 0;
}

static const char *const reply_keys[] = {"acks", "commands", "want_facts", "store", "to", "poll"};

static int reply_from_json(const cJSON *o, sm_poll_reply *r, sm_error *err)
{
    uint32_t seen = 0;
    const cJSON *commands, *item;
    const char *s = NULL;
    int rc = sm_json_check_keys(o, "reply", reply_keys, sizeof reply_keys[0], 6,
                                BIT(0) | BIT(1) | BIT(4) | BIT(5), &seen, err);
    if (rc == 0 && (rc = sm_json_get_string(o, "reply", "to", &s, err)) == 0) {
        if (!sm_name_valid(s) || sm_name_reserved(s))
            return sm_error_set(err, SM_EINVAL, "reply: to: '%.*s' is not an agent name",
                                SM_NAME_MAX, s);
        memcpy(r->to, s, strlen(s) + 1);
    }
    if (rc == 0 && (rc = sm_json_get_string(o, "reply", "poll", &s, err)) == 0) {
        if (!nonce_valid(s))
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
    /* Optional: a coordinator from before store ids sends none. */
    if (seen & BIT(3))
        return get_store_id(o, "reply", r->store, err);
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
