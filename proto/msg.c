/* Control-plane messages: the pieces the poll, the reply and the spooled result share (ids,
 * addresses, attempts, pins, store ids) and the agent's labels. */
#include "proto/msg.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/codec_internal.h"
#include "proto/msg_internal.h"

#define ATTEMPT_MAX 1000000u
#define ID_EXTRA    "._-"    /* besides [A-Za-z0-9]: agent-side ids and label keys */
#define VALUE_EXTRA "._:/=-" /* besides [A-Za-z0-9]: label values */

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

bool sm_msg_cmd_id_valid(const char *s)
{
    return valid_span(s, strlen(s), 1, SM_CMD_ID_MAX, ID_EXTRA);
}

bool sm_msg_nonce_valid(const char *s)
{
    return strlen(s) == SM_NONCE_HEX && strspn(s, "0123456789abcdef") == SM_NONCE_HEX;
}

bool sm_msg_store_id_valid(const char *s)
{
    return s != NULL && strlen(s) == SM_STORE_ID_HEX &&
           strspn(s, "0123456789abcdef") == SM_STORE_ID_HEX;
}

/* An optional "store" field: a valid store id when present. */
int sm_msg_get_store_id(const cJSON *o, const char *where, char out[SM_STORE_ID_HEX + 1],
                        sm_error *err)
{
    const char *s = NULL;
    int rc = sm_json_get_string(o, where, "store", &s, err);
    if (rc != 0)
        return rc;
    if (!sm_msg_store_id_valid(s))
        return sm_error_set(err, SM_EINVAL, "%s: store: '%.*s' is not %d lowercase hex digits",
                            where, SM_STORE_ID_HEX + 8, s, SM_STORE_ID_HEX);
    memcpy(out, s, SM_STORE_ID_HEX + 1);
    return 0;
}

/* A nested decoder's failure, re-raised under the path of the message around it. */
int sm_msg_nested_error(sm_error *err, const char *where, const sm_error *inner)
{
    return sm_error_set(err, inner->code, "%s: %s", where, inner->msg);
}

/* Strict on purpose: a number would already have gone through a double on its way here. */
int sm_msg_get_u64_string(const cJSON *o, const char *where, const char *field, uint64_t *out,
                          sm_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!cJSON_IsString(item))
        return sm_error_set(err, SM_EPARSE, "%s: %s: expected a decimal string", where, field);
    return sm_json_get_uint(item, where, field, UINT64_MAX, true, out, err);
}

int sm_msg_get_wait(const cJSON *o, const char *where, const char *field, uint32_t *out,
                    sm_error *err)
{
    uint64_t v;
    int rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, field), where, field,
                              SM_WAIT_MS_MAX, false, &v, err);
    if (rc != 0)
        return rc;
    if (v < SM_WAIT_MS_MIN)
        return sm_error_set(err, SM_EINVAL, "%s: %s: %" PRIu64 " is below the minimum %u", where,
                            field, v, SM_WAIT_MS_MIN);
    *out = (uint32_t)v;
    return 0;
}

int sm_msg_get_attempt(const cJSON *o, const char *where, uint32_t *out, sm_error *err)
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
int sm_msg_get_addr(const cJSON *o, const char *where, const char *field, char out[SM_ADDR_MAX + 1],
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
char *sm_msg_finish(cJSON *root, const char *what, size_t *len, sm_error *err)
{
    char *text = sm_json_finish(root, true, 0, what, err);
    if (len != NULL)
        *len = text != NULL ? strlen(text) : 0;
    return text;
}

char *sm_msg_refused(size_t *len)
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

cJSON *sm_msg_labels_to_cjson(const sm_label *labels, size_t n)
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

int sm_msg_labels_from_cjson(const cJSON *o, sm_poll *p, sm_error *err)
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

char *sm_msg_labels_json(const sm_label *labels, size_t n, sm_error *err)
{
    if (n > SM_LABELS_MAX) {
        sm_error_set(err, SM_EINVAL, "labels: more than %d", SM_LABELS_MAX);
        return NULL;
    }
    cJSON *o = sm_msg_labels_to_cjson(labels, n);
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text)
        sm_error_set(err, SM_ENOMEM, "labels: out of memory");
    return text;
}

/* ---- pins of TLS sources ---- */

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

int sm_msg_get_pin(const cJSON *o, const char *where, char out[SM_PIN_MAX + 1], sm_error *err)
{
    const char *s = NULL;
    int rc = sm_json_get_string(o, where, "pin", &s, err);
    if (rc != 0)
        return rc;
    if (!sm_msg_pin_valid(s))
        return sm_error_set(err, SM_EINVAL, "%s: pin: not sha256// and 44 base64 characters",
                            where);
    snprintf(out, SM_PIN_MAX + 1, "%s", s);
    return 0;
}
