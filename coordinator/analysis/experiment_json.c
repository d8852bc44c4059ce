/* An experiment's JSON: the plan (written, and read back as the run stores it) and an
 * estimate. */
#include "coordinator/analysis/experiment.h"

#include "coordinator/analysis/internal.h"

#include "proto/json.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "experiment plan"

/* The suspect's string fields, in the JSON's order, with where each lives. */
typedef struct text_field {
    const char *name;
    size_t offset, cap;
} text_field;

#define TEXT_FIELD(f)                                                                              \
    {                                                                                              \
#f, offsetof(sm_xp_suspect, f), sizeof(((sm_xp_suspect *)0)->f)                            \
    }

static const text_field texts[] = {
    TEXT_FIELD(item),        TEXT_FIELD(label),     TEXT_FIELD(host_value),
    TEXT_FIELD(fleet_value), TEXT_FIELD(treatment), TEXT_FIELD(why_untested),
};
#define N_TEXTS (sizeof texts / sizeof texts[0])

/* The reverse's, after relevance; a plan stored before reverses has none of them. */
static const text_field reverse_texts[] = {
    TEXT_FIELD(reverse_host),
    TEXT_FIELD(reverse),
    TEXT_FIELD(why_no_reverse),
};
#define N_REVERSE (sizeof reverse_texts / sizeof reverse_texts[0])

/* Every key of a suspect's object: the texts, relevance, then the reverse's texts. */
static const char *const keys[] = {"item",      "label",         "host_value", "fleet_value",
                                   "treatment", "why_untested",  "relevance",  "reverse_host",
                                   "reverse",   "why_no_reverse"};
#define N_KEYS     (sizeof keys / sizeof keys[0])
#define N_REQUIRED (N_TEXTS + 1)

static cJSON *suspect_cjson(const sm_xp_suspect *s)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    for (size_t i = 0; ok && i < N_TEXTS; i++)
        ok = sm_json_put_str(o, texts[i].name, (const char *)s + texts[i].offset);
    ok = ok && sm_json_put_u64(o, "relevance", s->relevance > 0 ? (uint64_t)s->relevance : 0);
    for (size_t i = 0; ok && i < N_REVERSE; i++)
        ok = sm_json_put_str(o, reverse_texts[i].name, (const char *)s + reverse_texts[i].offset);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *sm_xp_plan_json(const sm_xp_plan *p)
{
    cJSON *arr = cJSON_CreateArray();
    bool ok = arr != NULL;
    for (size_t i = 0; ok && i < p->n; i++)
        ok = sm_json_append(arr, suspect_cjson(&p->v[i]));
    return sm_json_finish(arr, ok, 0, WHAT, NULL);
}

/* Suspect i of a stored plan, checked as the plan maker makes it. */
static int suspect_of(const cJSON *o, size_t i, sm_xp_suspect *s, sm_error *err)
{
    char what[48], why[160];
    snprintf(what, sizeof what, WHAT "[%zu]", i);
    uint32_t seen = 0;
    int rc = sm_json_check_keys(o, what, keys, sizeof keys[0], N_KEYS, (1u << N_REQUIRED) - 1,
                                &seen, err);
    if (rc != 0)
        sm_error_field(err, "[%zu]", i);
    for (size_t f = 0; rc == 0 && f < N_TEXTS + N_REVERSE; f++) {
        const text_field *tf = f < N_TEXTS ? &texts[f] : &reverse_texts[f - N_TEXTS];
        if (f >= N_TEXTS && !(seen & 1u << (N_REQUIRED + f - N_TEXTS)))
            continue; /* memset: "" */
        const char *v = NULL;
        rc = sm_json_get_string(o, what, tf->name, &v, err);
        if (rc == 0 && strlen(v) >= tf->cap)
            rc = sm_error_set(err, SM_EINVAL, "%s: %s: %zu bytes, more than the %zu it takes", what,
                              tf->name, strlen(v), tf->cap - 1);
        if (rc == 0)
            memcpy((char *)s + tf->offset, v, strlen(v) + 1);
        if (rc != 0)
            sm_error_field(err, "[%zu].%s", i, tf->name);
    }
    uint64_t rel = 0;
    if (rc == 0) {
        rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(o, "relevance"), what, "relevance",
                              INT_MAX, false, &rel, err);
        if (rc != 0)
            sm_error_field(err, "[%zu].relevance", i);
        s->relevance = (int)rel;
    }
    if (rc != 0)
        return rc;
    if (s->item[0] != '\0' && !sm_fp_key_valid(s->item)) {
        sm_error_field(err, "[%zu].item", i);
        return sm_error_set(err, SM_EINVAL, "%s: item: not a fingerprint item's name", what);
    }
    if ((s->treatment[0] == '\0') == (s->why_untested[0] == '\0')) {
        sm_error_field(err, "[%zu].treatment", i);
        return sm_error_set(err, SM_EINVAL,
                            "%s: exactly one of treatment and why_untested is given", what);
    }
    if (s->treatment[0] != '\0' && !sm_xp_treatment_check(s->treatment, why, sizeof why)) {
        sm_error_field(err, "[%zu].treatment", i);
        return sm_error_set(err, SM_EINVAL, "%s: treatment: %s", what, why);
    }
    if (s->reverse[0] != '\0' && (s->reverse_host[0] == '\0' || s->treatment[0] == '\0')) {
        sm_error_field(err, "[%zu].reverse", i);
        return sm_error_set(err, SM_EINVAL, "%s: reverse: only with its host and a treatment",
                            what);
    }
    if (s->reverse[0] != '\0' && !sm_xp_treatment_check(s->reverse, why, sizeof why)) {
        sm_error_field(err, "[%zu].reverse", i);
        return sm_error_set(err, SM_EINVAL, "%s: reverse: %s", what, why);
    }
    return 0;
}

int sm_xp_plan_from_json(const char *json, sm_xp_plan *out, sm_error *err)
{
    if (json == NULL || out == NULL)
        return sm_error_set(err, SM_EINVAL, WHAT ": no JSON text");
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(json, &end, true);
    if (root == NULL) {
        size_t at = end != NULL && end >= json ? (size_t)(end - json) : 0;
        return sm_error_set(err, SM_EPARSE, WHAT ": invalid JSON at byte %zu", at);
    }
    int rc = 0;
    int n = cJSON_IsArray(root) ? cJSON_GetArraySize(root) : -1;
    if (n < 0)
        rc = sm_error_set(err, SM_EPARSE, WHAT ": expected a JSON array");
    else if ((size_t)n > SM_XP_SUSPECTS_MAX)
        rc =
            sm_error_set(err, SM_EINVAL, WHAT ": %d suspects, more than %d", n, SM_XP_SUSPECTS_MAX);
    sm_xp_plan p = {NULL, 0, 0};
    if (rc == 0 && (p.v = calloc(n > 0 ? (size_t)n : 1, sizeof *p.v)) == NULL)
        rc = sm_error_set(err, SM_ENOMEM, WHAT ": out of memory");
    const cJSON *o = rc == 0 ? root->child : NULL;
    for (; rc == 0 && o != NULL; o = o->next) {
        rc = suspect_of(o, p.n, &p.v[p.n], err);
        p.tested += rc == 0 && p.v[p.n].treatment[0] != '\0';
        p.n++;
    }
    cJSON_Delete(root);
    if (rc != 0) {
        sm_xp_plan_fini(&p);
        return rc;
    }
    *out = p;
    return 0;
}

char *sm_xp_estimate_json(const sm_xp_estimate *e)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put_str(o, "verdict", sm_xp_verdict_name(e->verdict)) &&
              sm_json_put_double(o, "share", e->share) && sm_json_put_double(o, "lo", e->lo) &&
              sm_json_put_double(o, "hi", e->hi) &&
              sm_json_put_double(o, "ctrl_median", e->ctrl_median) &&
              sm_json_put_double(o, "treat_median", e->treat_median) &&
              sm_json_put_double(o, "fleet_median", e->fleet_median) &&
              sm_json_put_u64(o, "n_ctrl", e->n_ctrl) &&
              sm_json_put_u64(o, "n_treat", e->n_treat) &&
              sm_json_put_u64(o, "n_fleet", e->n_fleet) &&
              sm_json_put_fixed(o, "why", e->why, sizeof e->why);
    return sm_json_finish(o, ok, 0, "experiment estimate", NULL);
}
