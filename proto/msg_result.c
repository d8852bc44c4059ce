/* Control-plane messages: a spooled result (job, attempt, role, store and the result). */
#include "proto/msg.h"

#include <stdbool.h>
#include <string.h>

#include "proto/codec_internal.h"
#include "proto/msg_internal.h"

static const char *const role_names[] = {"both", "server", "client"};
_Static_assert(sizeof role_names / sizeof role_names[0] == SM_MSG_N_ROLES, "one name per role");

const char *sm_role_name(sm_role r)
{
    return (unsigned)r < SM_MSG_N_ROLES ? role_names[r] : "unknown";
}

cJSON *sm_msg_result_to_cjson(const sm_result_msg *m)
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
int sm_msg_result_from_cjson(const cJSON *o, const char *where, sm_result_msg *out, sm_error *err)
{
    uint32_t seen = 0;
    sm_result_msg m = {.role = SM_ROLE_BOTH};
    sm_error inner;
    int rc = sm_json_check_keys(o, where, result_msg_keys, sizeof result_msg_keys[0], RK__COUNT,
                                BIT(RK_JOB) | BIT(RK_ATTEMPT) | BIT(RK_RESULT), &seen, err);
    if (rc == 0)
        rc = sm_msg_get_u64_string(o, where, "job", &m.job, err);
    if (rc == 0)
        rc = sm_msg_get_attempt(o, where, &m.attempt, err);
    if (rc == 0 && (seen & BIT(RK_ROLE)))
        rc = get_role(o, where, &m.role, err);
    if (rc == 0 && (seen & BIT(RK_STORE)))
        rc = sm_msg_get_store_id(o, where, m.store, err);
    if (rc != 0)
        return rc;
    rc = sm_codec_result_from_cjson(cJSON_GetObjectItemCaseSensitive(o, "result"), &m.result,
                                    &inner);
    if (rc != 0)
        return sm_msg_nested_error(err, where, &inner);
    *out = m;
    return 0;
}

char *sm_msg_result_encode(const sm_result_msg *m, size_t *len, sm_error *err)
{
    if (m == NULL) {
        sm_error_set(err, SM_EINVAL, "spooled result: nothing to encode");
        return sm_msg_refused(len);
    }
    if ((unsigned)m->role >= SM_MSG_N_ROLES) {
        sm_error_set(err, SM_EINVAL, "spooled result: role: %d is no role", (int)m->role);
        return sm_msg_refused(len);
    }
    if (m->store[0] != '\0' && !sm_msg_store_id_valid(m->store)) {
        sm_error_set(err, SM_EINVAL, "spooled result: store: not a store id");
        return sm_msg_refused(len);
    }
    return sm_msg_finish(sm_msg_result_to_cjson(m), "spooled result", len, err);
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
        rc = sm_msg_result_from_cjson(root, where, out, err);
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
