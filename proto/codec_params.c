/* JSON codec of params: one table of fields drives the encoder and the decoder. */
#include "proto/codec.h"
#include "proto/codec_internal.h"
#include "proto/json.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum field_kind {
    K_WORKLOAD,
    K_TRANSPORT,
    K_SCOPE,
    K_FRAMING,
    K_CLIENT,
    K_U32,
    K_U64,
    K_BOOL,
    K_URL,
    K_TREATMENT
};

#define WL(w)  (1u << (w))
#define WL_ALL ((1u << SM_WL__COUNT) - 1)
/* The workloads that open their sockets themselves; libcurl owns http's. */
#define WL_SOCK (WL(SM_WL_STREAM) | WL(SM_WL_RR) | WL(SM_WL_CONNECT))
enum {
    PF_TCP = 1,     /* applies to transport tcp only */
    PF_IF_SET = 2,  /* written only when non-zero: the one amount the job uses */
    PF_IF_TEXT = 4, /* written only when non-empty; no amount */
};

/* Order here is the order of the encoded keys. `name` must stay the first member (check_keys). */
static const struct pfield {
    const char *name;
    enum field_kind kind;
    size_t off;
    unsigned wl;
    unsigned flags;
} pfields[] = {
    {"workload", K_WORKLOAD, offsetof(sm_params, workload), WL_ALL, 0},
    {"transport", K_TRANSPORT, offsetof(sm_params, transport), WL_ALL, 0},
    {"scope", K_SCOPE, offsetof(sm_params, scope), WL_ALL, 0},
    {"framing", K_FRAMING, offsetof(sm_params, framing), WL(SM_WL_STREAM), 0},
    {"msg_size", K_U32, offsetof(sm_params, msg_size), WL(SM_WL_STREAM), 0},
    {"req_size", K_U32, offsetof(sm_params, req_size), WL(SM_WL_RR), 0},
    {"resp_size", K_U32, offsetof(sm_params, resp_size), WL(SM_WL_RR), 0},
    {"count", K_U64, offsetof(sm_params, count), WL_SOCK, PF_IF_SET},
    {"bytes", K_U64, offsetof(sm_params, bytes), WL(SM_WL_STREAM) | WL(SM_WL_HTTP), PF_IF_SET},
    {"duration_ms", K_U32, offsetof(sm_params, duration_ms), WL_SOCK, PF_IF_SET},
    {"nodelay", K_BOOL, offsetof(sm_params, nodelay), WL_SOCK, PF_TCP},
    {"cork", K_BOOL, offsetof(sm_params, cork), WL(SM_WL_STREAM), PF_TCP},
    {"sndbuf", K_U32, offsetof(sm_params, sndbuf), WL_SOCK, 0},
    {"rcvbuf", K_U32, offsetof(sm_params, rcvbuf), WL_SOCK, 0},
    {"read_size", K_U32, offsetof(sm_params, read_size), WL(SM_WL_STREAM), 0},
    {"time_limit_ms", K_U32, offsetof(sm_params, time_limit_ms), WL_ALL, 0},
    {"client", K_CLIENT, offsetof(sm_params, client), WL(SM_WL_HTTP), 0},
    {"connections", K_U32, offsetof(sm_params, connections), WL(SM_WL_HTTP), 0},
    {"repeat", K_U32, offsetof(sm_params, repeat), WL(SM_WL_HTTP), 0},
    {"buffer_size", K_U32, offsetof(sm_params, buffer_size), WL(SM_WL_HTTP), 0},
    {"fresh_connect", K_BOOL, offsetof(sm_params, fresh_connect), WL(SM_WL_HTTP), 0},
    {"http2", K_BOOL, offsetof(sm_params, http2), WL(SM_WL_HTTP), 0},
    {"tls", K_BOOL, offsetof(sm_params, tls), WL(SM_WL_HTTP), 0},
    {"verify", K_BOOL, offsetof(sm_params, verify), WL(SM_WL_HTTP), 0},
    {"url", K_URL, offsetof(sm_params, url), WL(SM_WL_HTTP), PF_IF_SET},
    {"treatment", K_TREATMENT, offsetof(sm_params, treatment), WL_ALL, PF_IF_TEXT},
};
#define N_PFIELDS (sizeof pfields / sizeof pfields[0])
_Static_assert(N_PFIELDS <= 32, "check_keys keeps one bit per field");

static uint64_t param_value(const sm_params *p, const struct pfield *f)
{
    const char *at = (const char *)p + f->off;
    switch (f->kind) {
    case K_WORKLOAD:
        return (unsigned)p->workload;
    case K_TRANSPORT:
        return (unsigned)p->transport;
    case K_SCOPE:
        return (unsigned)p->scope;
    case K_FRAMING:
        return (unsigned)p->framing;
    case K_CLIENT:
        return (unsigned)p->client;
    case K_URL:
        return p->url[0] != '\0';
    case K_TREATMENT:
        return p->treatment[0] != '\0';
    case K_U32:
        return *(const uint32_t *)(const void *)at;
    case K_U64:
        return *(const uint64_t *)(const void *)at;
    case K_BOOL:
        return *(const bool *)(const void *)at;
    }
    return 0;
}

/* A field that does not apply is still written when it is set, so that encoding never turns
 * invalid params into valid ones; the decoder's validation then names it. */
static bool put_param(cJSON *o, const sm_params *p, const struct pfield *f)
{
    uint64_t v = param_value(p, f);
    bool applies = (unsigned)p->workload < SM_WL__COUNT && (f->wl & WL(p->workload)) &&
                   (!(f->flags & PF_TCP) || p->transport == SM_TR_TCP) &&
                   (!(f->flags & (PF_IF_SET | PF_IF_TEXT)) || v != 0);
    if (!applies && v == 0)
        return true;
    switch (f->kind) {
    case K_WORKLOAD:
        return sm_json_put_str(o, f->name, sm_workload_name(p->workload));
    case K_TRANSPORT:
        return sm_json_put_str(o, f->name, sm_transport_name(p->transport));
    case K_SCOPE:
        return sm_json_put_str(o, f->name, sm_scope_name(p->scope));
    case K_FRAMING:
        return sm_json_put_str(o, f->name, sm_framing_name(p->framing));
    case K_CLIENT:
        return sm_json_put_str(o, f->name, sm_http_client_name(p->client));
    case K_URL:
        /* Bounded: a url without its NUL (invalid params) must not be read past the array. */
        return sm_json_put_str(o, f->name, memchr(p->url, '\0', sizeof p->url) ? p->url : "");
    case K_TREATMENT:
        return sm_json_put_str(o, f->name,
                               memchr(p->treatment, '\0', sizeof p->treatment) ? p->treatment : "");
    case K_U32:
    case K_U64:
        return sm_json_put_u64(o, f->name, v);
    case K_BOOL:
        return sm_json_put_bool(o, f->name, v != 0);
    }
    return true;
}

cJSON *sm_codec_params_to_cjson(const sm_params *p)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    for (size_t i = 0; ok && i < N_PFIELDS; i++)
        ok = put_param(o, p, &pfields[i]);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *sm_codec_params_encode(const sm_params *p, sm_error *err)
{
    if (p == NULL) {
        sm_error_set(err, SM_EINVAL, "params: nothing to encode");
        return NULL;
    }
    return sm_json_finish(sm_codec_params_to_cjson(p), true, 0, "params", err);
}

static int param_from_json(const cJSON *item, const struct pfield *f, sm_params *p, sm_error *err)
{
    void *at = (char *)p + f->off;
    const char *name = NULL;
    uint64_t v;
    int rc = 0;
    switch (f->kind) {
    case K_WORKLOAD:
    case K_TRANSPORT:
    case K_SCOPE:
    case K_FRAMING:
    case K_CLIENT:
        if (!cJSON_IsString(item))
            return sm_error_set(err, SM_EPARSE, "params: %s: expected a string", f->name);
        name = item->valuestring;
        if (f->kind == K_WORKLOAD)
            rc = sm_workload_parse(name, &p->workload);
        else if (f->kind == K_TRANSPORT)
            rc = sm_transport_parse(name, &p->transport);
        else if (f->kind == K_SCOPE)
            rc = sm_scope_parse(name, &p->scope);
        else if (f->kind == K_CLIENT)
            rc = sm_http_client_parse(name, &p->client);
        else
            rc = sm_framing_parse(name, &p->framing);
        if (rc != 0)
            return sm_error_set(err, SM_EINVAL, "params: %s: unknown value '%s'", f->name, name);
        return 0;
    case K_U32:
        if ((rc = sm_json_get_uint(item, "params", f->name, UINT32_MAX, false, &v, err)) == 0)
            *(uint32_t *)at = (uint32_t)v;
        return rc;
    case K_U64:
        if ((rc = sm_json_get_uint(item, "params", f->name, UINT64_MAX, true, &v, err)) == 0)
            *(uint64_t *)at = v;
        return rc;
    case K_BOOL:
        if (!cJSON_IsBool(item))
            return sm_error_set(err, SM_EPARSE, "params: %s: expected true or false", f->name);
        *(bool *)at = cJSON_IsTrue(item);
        return 0;
    case K_URL:
        if (!cJSON_IsString(item))
            return sm_error_set(err, SM_EPARSE, "params: %s: expected a string", f->name);
        if (strlen(item->valuestring) > SM_URL_MAX)
            return sm_error_set(err, SM_EINVAL, "params: %s: longer than %u bytes", f->name,
                                SM_URL_MAX);
        snprintf(p->url, sizeof p->url, "%s", item->valuestring);
        return 0;
    case K_TREATMENT:
        if (!cJSON_IsString(item))
            return sm_error_set(err, SM_EPARSE, "params: %s: expected a string", f->name);
        if (strlen(item->valuestring) > SM_TREATMENT_MAX)
            return sm_error_set(err, SM_EINVAL, "params: %s: longer than %d bytes", f->name,
                                SM_TREATMENT_MAX);
        snprintf(p->treatment, sizeof p->treatment, "%s", item->valuestring);
        return 0;
    }
    return 0;
}

static int params_from_json(const cJSON *o, sm_params *p, sm_error *err)
{
    uint32_t seen = 0;
    int rc =
        sm_json_check_keys(o, "params", pfields, sizeof pfields[0], N_PFIELDS, 1u << 0, &seen, err);
    if (rc != 0)
        return rc;
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(o, "workload");
    sm_params tmp;
    if ((rc = param_from_json(wl, &pfields[0], &tmp, err)) != 0)
        return rc;
    sm_params_init(p, tmp.workload);
    /* The defaults carry a count; a user who names any amount means that one alone. */
    uint32_t amounts = 0;
    for (size_t i = 0; i < N_PFIELDS; i++)
        if (pfields[i].flags & PF_IF_SET)
            amounts |= 1u << i;
    if (seen & amounts) {
        p->count = 0;
        p->bytes = 0;
        p->duration_ms = 0;
    }
    for (size_t i = 1; i < N_PFIELDS; i++) {
        if (!(seen & (1u << i)))
            continue;
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, pfields[i].name);
        if ((rc = param_from_json(item, &pfields[i], p, err)) != 0)
            return rc;
    }
    sm_error verr;
    if ((rc = sm_params_validate(p, &verr)) != 0)
        return sm_error_set(err, rc, "params: %s", verr.msg);
    return 0;
}

int sm_codec_params_from_cjson(const cJSON *o, sm_params *out, sm_error *err)
{
    sm_params p;
    int rc = params_from_json(o, &p, err);
    if (rc == 0)
        *out = p;
    else
        memset(out, 0, sizeof *out);
    return rc;
}

int sm_codec_params_decode(const char *json, size_t len, sm_params *out, sm_error *err)
{
    cJSON *root = NULL;
    int rc = sm_json_parse_object(json, len, "params", &root, err);
    if (rc == 0)
        rc = sm_codec_params_from_cjson(root, out, err);
    else
        memset(out, 0, sizeof *out);
    cJSON_Delete(root);
    return rc;
}
