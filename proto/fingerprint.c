/* A host's network fingerprint: the item list, its hash and its JSON codec. */
#include "proto/fingerprint.h"

#include "proto/json.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sm_fp_init(sm_fingerprint *fp)
{
    memset(fp, 0, sizeof *fp);
    fp->version = SM_FP_VERSION;
}

void sm_fp_fini(sm_fingerprint *fp)
{
    for (size_t i = 0; i < fp->n; i++) {
        free(fp->items[i].key);
        free(fp->items[i].value);
    }
    free(fp->items);
    sm_fp_init(fp);
}

bool sm_fp_key_valid(const char *key)
{
    size_t n = 0;
    for (const char *c = key; *c; c++, n++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("._:/@+-", *c) != NULL))
            return false;
    return n >= 1 && n <= SM_FP_KEY_MAX;
}

static const struct {
    int num;
    const char *name;
} errno_names[] = {
    {EPERM, "EPERM"},
    {ENOENT, "ENOENT"},
    {EIO, "EIO"},
    {ENXIO, "ENXIO"},
    {E2BIG, "E2BIG"},
    {EBADF, "EBADF"},
    {EAGAIN, "EAGAIN"},
    {ENOMEM, "ENOMEM"},
    {EACCES, "EACCES"},
    {EFAULT, "EFAULT"},
    {EBUSY, "EBUSY"},
    {ENODEV, "ENODEV"},
    {ENOTDIR, "ENOTDIR"},
    {EISDIR, "EISDIR"},
    {EINVAL, "EINVAL"},
    {ENOTTY, "ENOTTY"},
    {ENOSPC, "ENOSPC"},
    {EROFS, "EROFS"},
    {ERANGE, "ERANGE"},
    {ENOSYS, "ENOSYS"},
    {ENODATA, "ENODATA"},
    {EOPNOTSUPP, "EOPNOTSUPP"},
    {EPROTO, "EPROTO"},
    {ETIMEDOUT, "ETIMEDOUT"},
    {EAFNOSUPPORT, "EAFNOSUPPORT"},
    {EPROTONOSUPPORT, "EPROTONOSUPPORT"},
    {ENOBUFS, "ENOBUFS"},
    {EMSGSIZE, "EMSGSIZE"},
    {ENAMETOOLONG, "ENAMETOOLONG"},
    {ELOOP, "ELOOP"},
};

const char *sm_fp_errno_name(int errnum)
{
    for (size_t i = 0; i < sizeof errno_names / sizeof errno_names[0]; i++)
        if (errno_names[i].num == errnum)
            return errno_names[i].name;
    return NULL;
}

/* Copies value with whitespace runs as one space, trimmed, cut at SM_FP_VALUE_MAX. */
static char *normalise(const char *value)
{
    size_t n = strlen(value);
    char *out = malloc((n < SM_FP_VALUE_MAX ? n : SM_FP_VALUE_MAX) + 1);
    if (out == NULL)
        return NULL;
    size_t at = 0;
    bool space = false;
    for (const char *c = value; *c; c++) {
        if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r' || *c == '\v' || *c == '\f') {
            space = at > 0;
            continue;
        }
        if (space) {
            if (at + 1 >= SM_FP_VALUE_MAX)
                break;
            out[at++] = ' ';
            space = false;
        }
        if (at >= SM_FP_VALUE_MAX)
            break;
        out[at++] = *c;
    }
    if (at >= SM_FP_VALUE_MAX && value[at] != '\0') /* cut: say so */
        memcpy(out + SM_FP_VALUE_MAX - 3, "...", 3);
    out[at] = '\0';
    return out;
}

/* A new item named key at the end (no check for another of that name). */
static sm_fp_item *append(sm_fingerprint *fp, const char *key, sm_error *err)
{
    if (fp->n >= SM_FP_ITEMS_MAX) {
        sm_error_set(err, SM_EINVAL, "fingerprint: more than %u items", SM_FP_ITEMS_MAX);
        return NULL;
    }
    if (fp->n == fp->cap) {
        size_t cap = fp->cap ? 2 * fp->cap : 64;
        sm_fp_item *v = realloc(fp->items, cap * sizeof *v);
        if (v == NULL) {
            sm_error_set(err, SM_ENOMEM, "fingerprint: out of memory");
            return NULL;
        }
        fp->items = v;
        fp->cap = cap;
    }
    sm_fp_item *it = &fp->items[fp->n];
    memset(it, 0, sizeof *it);
    it->key = strdup(key);
    if (it->key == NULL) {
        sm_error_set(err, SM_ENOMEM, "fingerprint: out of memory");
        return NULL;
    }
    fp->n++;
    return it;
}

static sm_fp_item *find_or_add(sm_fingerprint *fp, const char *key, sm_error *err)
{
    if (!sm_fp_key_valid(key)) {
        sm_error_set(err, SM_EINVAL, "fingerprint: invalid item name '%.64s'", key);
        return NULL;
    }
    for (size_t i = 0; i < fp->n; i++)
        if (strcmp(fp->items[i].key, key) == 0) {
            free(fp->items[i].value);
            fp->items[i].value = NULL;
            fp->items[i].unreadable[0] = '\0';
            return &fp->items[i];
        }
    return append(fp, key, err);
}

int sm_fp_set(sm_fingerprint *fp, const char *key, const char *value, sm_error *err)
{
    sm_fp_item *it = find_or_add(fp, key, err);
    if (it == NULL)
        return err && err->code ? err->code : SM_EINVAL;
    it->value = normalise(value ? value : "");
    if (it->value == NULL)
        return sm_error_set(err, SM_ENOMEM, "fingerprint: out of memory");
    return 0;
}

int sm_fp_setf(sm_fingerprint *fp, const char *key, sm_error *err, const char *fmt, ...)
{
    char buf[SM_FP_VALUE_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return sm_fp_set(fp, key, buf, err);
}

int sm_fp_set_unreadable(sm_fingerprint *fp, const char *key, int errnum, sm_error *err)
{
    sm_fp_item *it = find_or_add(fp, key, err);
    if (it == NULL)
        return err && err->code ? err->code : SM_EINVAL;
    const char *name = sm_fp_errno_name(errnum);
    if (name != NULL)
        snprintf(it->unreadable, sizeof it->unreadable, "%s", name);
    else
        snprintf(it->unreadable, sizeof it->unreadable, "E%d", errnum);
    return 0;
}

size_t sm_fp_remove_prefix(sm_fingerprint *fp, const char *prefix)
{
    size_t plen = strlen(prefix), kept = 0, removed = 0;
    for (size_t i = 0; i < fp->n; i++) {
        if (strncmp(fp->items[i].key, prefix, plen) == 0) {
            free(fp->items[i].key);
            free(fp->items[i].value);
            removed++;
        } else {
            fp->items[kept++] = fp->items[i];
        }
    }
    fp->n = kept;
    return removed;
}

static int item_cmp(const void *a, const void *b)
{
    return strcmp(((const sm_fp_item *)a)->key, ((const sm_fp_item *)b)->key);
}

void sm_fp_sort(sm_fingerprint *fp)
{
    if (fp->n > 1)
        qsort(fp->items, fp->n, sizeof fp->items[0], item_cmp);
}

const sm_fp_item *sm_fp_get(const sm_fingerprint *fp, const char *key)
{
    sm_fp_item probe = {.key = (char *)key};
    if (fp->n == 0)
        return NULL;
    return bsearch(&probe, fp->items, fp->n, sizeof fp->items[0], item_cmp);
}

const char *sm_fp_item_text(const sm_fp_item *it, char *buf, size_t len)
{
    if (it == NULL)
        return "(absent)";
    if (it->value != NULL)
        return it->value;
    snprintf(buf, len, "unreadable (%s)", it->unreadable);
    return buf;
}

void sm_fp_hash(const sm_fingerprint *fp, char out[SM_FP_HASH_HEX + 1])
{
    /* Over the items in name order whatever order they were set in: each as name NUL, then
     * "=" value or "!" reason, then NUL, so no two item lists hash the same text. */
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    if (ok) {
        sm_fp_item *sorted = malloc((fp->n ? fp->n : 1) * sizeof *sorted);
        ok = sorted != NULL;
        if (ok) {
            memcpy(sorted, fp->items, fp->n * sizeof *sorted);
            qsort(sorted, fp->n, sizeof *sorted, item_cmp);
            for (size_t i = 0; ok && i < fp->n; i++) {
                const sm_fp_item *it = &sorted[i];
                const char *v = it->value ? it->value : it->unreadable;
                ok = EVP_DigestUpdate(ctx, it->key, strlen(it->key) + 1) == 1 &&
                     EVP_DigestUpdate(ctx, it->value ? "=" : "!", 1) == 1 &&
                     EVP_DigestUpdate(ctx, v, strlen(v) + 1) == 1;
            }
            free(sorted);
        }
        ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen >= SM_FP_HASH_HEX / 2;
    }
    EVP_MD_CTX_free(ctx);
    if (!ok) {
        memset(out, '0', SM_FP_HASH_HEX);
        out[SM_FP_HASH_HEX] = '\0';
        return;
    }
    for (size_t i = 0; i < SM_FP_HASH_HEX / 2; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

cJSON *sm_fp_to_cjson(const sm_fingerprint *fp)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *items = NULL;
    bool ok = o != NULL && sm_json_put_u64(o, "version", fp->version) &&
              sm_json_put_u64_str(o, "collected_ms", fp->collected_ms) &&
              sm_json_put_u64(o, "collect_us", fp->collect_us) &&
              (items = cJSON_AddObjectToObject(o, "items")) != NULL;
    for (size_t i = 0; ok && i < fp->n; i++) {
        const sm_fp_item *it = &fp->items[i];
        if (it->value != NULL) {
            ok = sm_json_put_str(items, it->key, it->value);
        } else {
            cJSON *u = cJSON_CreateObject();
            /* sm_json_put takes u, also when it fails */
            ok = u != NULL && sm_json_put_str(u, "unreadable", it->unreadable) &&
                 sm_json_put(items, it->key, u);
        }
    }
    if (ok && fp->omitted_ifaces > 0) {
        cJSON *om = cJSON_AddObjectToObject(o, "omitted");
        ok = om != NULL && sm_json_put_u64_str(om, "interfaces", fp->omitted_ifaces) &&
             sm_json_put_str(om, "reason", fp->omitted_reason);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *sm_fp_text(const sm_fingerprint *fp, bool pretty, sm_error *err)
{
    return sm_json_finish(sm_fp_to_cjson(fp), true, pretty, "fingerprint", err);
}

char *sm_fp_encode(sm_fingerprint *fp, size_t *len, sm_error *err)
{
    sm_fp_sort(fp);
    char *text = sm_fp_text(fp, false, err);
    if (text == NULL)
        return NULL;
    size_t n = strlen(text);
    if (n > SM_FP_MAX) {
        free(text);
        sm_error_set(err, SM_EINVAL, "fingerprint: %zu bytes is above the maximum %u", n,
                     SM_FP_MAX);
        return NULL;
    }
    if (len)
        *len = n;
    return text;
}

static const char *const fp_keys[] = {"version", "collected_ms", "collect_us", "items", "omitted"};
enum { FK_VERSION, FK_COLLECTED, FK_COLLECT_US, FK_ITEMS, FK_OMITTED, FK__COUNT };

static int decode_item(const cJSON *v, sm_fingerprint *out, sm_error *err)
{
    const char *key = v->string;
    if (!sm_fp_key_valid(key))
        return sm_error_set(err, SM_EINVAL, "fingerprint: invalid item name '%.64s'", key);
    if (cJSON_IsString(v)) {
        if (strlen(v->valuestring) > SM_FP_VALUE_MAX)
            return sm_error_set(err, SM_EINVAL, "fingerprint: %s: value above %u bytes", key,
                                SM_FP_VALUE_MAX);
        sm_fp_item *it = append(out, key, err);
        if (it == NULL)
            return err && err->code ? err->code : SM_EINVAL;
        /* Kept as sent: the agent normalised it, and the hash is of what was sent. */
        it->value = strdup(v->valuestring);
        return it->value ? 0 : sm_error_set(err, SM_ENOMEM, "fingerprint: out of memory");
    }
    const cJSON *u = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "unreadable") : NULL;
    if (!cJSON_IsString(u) || cJSON_GetArraySize(v) != 1)
        return sm_error_set(err, SM_EPARSE,
                            "fingerprint: %s: expected a string or {\"unreadable\":\"ERRNO\"}",
                            key);
    size_t n = strlen(u->valuestring);
    if (n == 0 || n > SM_FP_ERRNO_MAX)
        return sm_error_set(err, SM_EINVAL, "fingerprint: %s: bad unreadable reason", key);
    for (const char *c = u->valuestring; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return sm_error_set(err, SM_EINVAL, "fingerprint: %s: bad unreadable reason", key);
    sm_fp_item *it = append(out, key, err);
    if (it == NULL)
        return err && err->code ? err->code : SM_EINVAL;
    memcpy(it->unreadable, u->valuestring, n + 1);
    return 0;
}

static int decode_omitted(const cJSON *om, sm_fingerprint *out, sm_error *err)
{
    static const char *const keys[] = {"interfaces", "reason"};
    uint32_t seen;
    int rc = sm_json_check_keys(om, "fingerprint.omitted", keys, sizeof keys[0], 2, 3u, &seen, err);
    uint64_t n = 0;
    const char *reason = NULL;
    if (rc == 0)
        rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(om, "interfaces"),
                              "fingerprint.omitted", "interfaces", UINT32_MAX, true, &n, err);
    if (rc == 0)
        rc = sm_json_get_string(om, "fingerprint.omitted", "reason", &reason, err);
    if (rc == 0 && strlen(reason) > SM_FP_REASON_MAX)
        rc = sm_error_set(err, SM_EINVAL, "fingerprint.omitted: reason above %u bytes",
                          SM_FP_REASON_MAX);
    if (rc == 0) {
        out->omitted_ifaces = (uint32_t)n;
        snprintf(out->omitted_reason, sizeof out->omitted_reason, "%s", reason);
    }
    return rc;
}

int sm_fp_from_cjson(const cJSON *o, sm_fingerprint *out, sm_error *err)
{
    sm_fp_fini(out);
    uint32_t seen = 0;
    uint64_t v = 0;
    int rc = sm_json_check_keys(o, "fingerprint", fp_keys, sizeof fp_keys[0], FK__COUNT,
                                (1u << FK_OMITTED) - 1, &seen, err);
    if (rc == 0)
        rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "version"), "fingerprint",
                              "version", UINT32_MAX, false, &v, err);
    if (rc == 0 && v != SM_FP_VERSION)
        rc = sm_error_set(err, SM_EINVAL, "fingerprint: version %llu is not %d",
                          (unsigned long long)v, SM_FP_VERSION);
    if (rc == 0)
        rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "collected_ms"), "fingerprint",
                              "collected_ms", UINT64_MAX, true, &out->collected_ms, err);
    if (rc == 0)
        rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "collect_us"), "fingerprint",
                              "collect_us", UINT64_MAX, true, &out->collect_us, err);
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(o, "items");
    if (rc == 0 && !cJSON_IsObject(items))
        rc = sm_error_set(err, SM_EPARSE, "fingerprint: items: expected an object");
    if (rc == 0 && cJSON_GetArraySize(items) > (int)SM_FP_ITEMS_MAX)
        rc = sm_error_set(err, SM_EINVAL, "fingerprint: more than %u items", SM_FP_ITEMS_MAX);
    const cJSON *it;
    if (rc == 0)
        cJSON_ArrayForEach(it, items)
        {
            if ((rc = decode_item(it, out, err)) != 0)
                break;
        }
    if (rc == 0) {
        /* cJSON keeps a name given twice: which value won would be an accident. */
        sm_fp_sort(out);
        for (size_t i = 1; rc == 0 && i < out->n; i++)
            if (strcmp(out->items[i - 1].key, out->items[i].key) == 0)
                rc =
                    sm_error_set(err, SM_EPARSE, "fingerprint: item '%s' twice", out->items[i].key);
    }
    if (rc == 0 && (seen & (1u << FK_OMITTED)))
        rc = decode_omitted(cJSON_GetObjectItemCaseSensitive(o, "omitted"), out, err);
    if (rc != 0) {
        sm_fp_fini(out);
        return rc;
    }
    out->version = (uint32_t)v;
    return 0;
}

int sm_fp_decode(const char *json, size_t len, sm_fingerprint *out, sm_error *err)
{
    if (len > SM_FP_MAX) {
        sm_fp_fini(out);
        return sm_error_set(err, SM_EINVAL, "fingerprint: %zu bytes is above the maximum %u", len,
                            SM_FP_MAX);
    }
    cJSON *o = NULL;
    int rc = sm_json_parse_object(json, len, "fingerprint", &o, err);
    if (rc == 0)
        rc = sm_fp_from_cjson(o, out, err);
    else
        sm_fp_fini(out);
    cJSON_Delete(o);
    return rc;
}
