/* Run specs: decoding and validation, expansion of each test's lists into variants, presets. */
#include "coordinator/model/spec.h"
#include "proto/codec.h"
#include "proto/json.h"
#include "proto/msg.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_REPS   5
#define DEFAULT_WARMUP 1
#define AXIS_MAX       16 /* values in one list of a test */
/* Keys of one test. params has fewer fields, so more keys mean an unknown or repeated one; the
 * bound keeps the per-variant work small whatever a client sends. */
#define TEST_KEYS_MAX 32

/* Where errors go: the reason in err->msg, the path of the field in err->field. */
typedef struct ctx {
    sm_error *err;
} ctx;

static void set_field(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_field(ctx *c, const char *fmt, ...)
{
    if (c->err == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err->field, sizeof c->err->field, fmt, ap);
    va_end(ap);
}

/* The name between the first two single quotes of a check_keys reason ("unknown field 'x'"). */
static bool quoted_name(const char *reason, char *out, size_t cap)
{
    const char *open = strchr(reason, '\'');
    const char *close = open != NULL ? strchr(open + 1, '\'') : NULL;
    if (close == NULL || (size_t)(close - open - 1) >= cap)
        return false;
    memcpy(out, open + 1, (size_t)(close - open - 1));
    out[close - open - 1] = '\0';
    return true;
}

/* check_keys, with the offending key (or what) as the field path prefixed by `prefix`. */
static int check_keys(const cJSON *o, const char *what, const char *prefix,
                      const char *const *names, size_t n, uint32_t required, uint32_t *seen, ctx *c)
{
    int rc = sm_json_check_keys(o, what, names, sizeof names[0], n, required, seen, c->err);
    if (rc != 0) {
        char key[SM_ERR_MSG_MAX];
        if (quoted_name(c->err->msg, key, sizeof key))
            set_field(c, "%s%s", prefix, key);
        else
            set_field(c, "%s", what);
    }
    return rc;
}

/* An integer in [min, max]. The bounds are checked first so that -1 reads as below the minimum. */
static int get_range(const cJSON *item, const char *field, uint32_t min, uint32_t max,
                     uint32_t *out, ctx *c)
{
    set_field(c, "%s", field);
    if (!cJSON_IsNumber(item))
        return sm_error_set(c->err, SM_EPARSE, "%s: expected an integer", field);
    double d = item->valuedouble;
    if (d < min)
        return sm_error_set(c->err, SM_EINVAL, "%s: %g is below the minimum %" PRIu32, field, d,
                            min);
    if (d > max)
        return sm_error_set(c->err, SM_EINVAL, "%s: %g is above the maximum %" PRIu32, field, d,
                            max);
    if (d != (double)(uint32_t)d)
        return sm_error_set(c->err, SM_EPARSE, "%s: %g is not an integer", field, d);
    *out = (uint32_t)d;
    return 0;
}

/* A fraction strictly between 0 and 1. */
static int get_fraction(const cJSON *item, const char *field, double *out, ctx *c)
{
    set_field(c, "%s", field);
    if (!cJSON_IsNumber(item))
        return sm_error_set(c->err, SM_EPARSE, "%s: expected a number", field);
    double d = item->valuedouble;
    if (!(d > 0 && d < 1))
        return sm_error_set(c->err, SM_EINVAL,
                            "%s: %g is not between 0 and 1 (exclusive; 0.05 is +-5%%)", field, d);
    *out = d;
    return 0;
}

/* "repetitions": an integer (fixed), "auto", or {"min","max","ci_rel"} (adaptive). */
static int reps_from_json(const cJSON *item, sm_spec *s, ctx *c)
{
    set_field(c, "repetitions");
    if (cJSON_IsNumber(item))
        return get_range(item, "repetitions", 1, SM_SPEC_REPS_MAX, &s->repetitions, c);
    sm_reps_rule r = {SM_REPS_AUTO_MIN, SM_REPS_AUTO_MAX, SM_REPS_AUTO_CI_REL, 0};
    if (cJSON_IsString(item)) {
        if (strcmp(item->valuestring, "auto") != 0)
            return sm_error_set(c->err, SM_EPARSE,
                                "repetitions: unknown value '%.64s' (a number, \"auto\" or "
                                "{\"min\":5,\"max\":30,\"ci_rel\":0.05})",
                                item->valuestring);
    } else if (cJSON_IsObject(item)) {
        enum { R_MIN, R_MAX, R_CI_REL };
        static const char *const keys[] = {"min", "max", "ci_rel"};
        uint32_t seen = 0;
        int rc = check_keys(item, "repetitions", "repetitions.", keys, 3, 0, &seen, c);
        if (rc == 0 && (seen & 1u << R_MIN))
            rc = get_range(cJSON_GetObjectItemCaseSensitive(item, "min"), "repetitions.min", 1,
                           SM_SPEC_REPS_MAX, &r.min, c);
        if (rc == 0 && (seen & 1u << R_MAX))
            rc = get_range(cJSON_GetObjectItemCaseSensitive(item, "max"), "repetitions.max", 1,
                           SM_SPEC_REPS_MAX, &r.max, c);
        if (rc == 0 && (seen & 1u << R_CI_REL))
            rc = get_fraction(cJSON_GetObjectItemCaseSensitive(item, "ci_rel"),
                              "repetitions.ci_rel", &r.ci_rel, c);
        if (rc != 0)
            return rc;
        /* A default gives way to the bound that was given: {"min": 40} means up to 40 or
         * more, {"max": 3} at most 3. Two given bounds in the wrong order are an error. */
        if (!(seen & 1u << R_MAX) && r.max < r.min)
            r.max = r.min;
        if (!(seen & 1u << R_MIN) && r.min > r.max)
            r.min = r.max;
        if (r.max < r.min) {
            set_field(c, "repetitions.max");
            return sm_error_set(c->err, SM_EINVAL,
                                "repetitions.max: %" PRIu32 " is below repetitions.min %" PRIu32,
                                r.max, r.min);
        }
    } else {
        return sm_error_set(c->err, SM_EPARSE,
                            "repetitions: expected a number, \"auto\" or "
                            "{\"min\":5,\"max\":30,\"ci_rel\":0.05}");
    }
    s->adaptive = true;
    s->reps = r;
    s->repetitions = r.min;
    return 0;
}

/* An agent name; field is its path, for the field buffer and the reason. */
static int get_name(const cJSON *item, const char *field, char out[SM_NAME_LEN], ctx *c)
{
    set_field(c, "%s", field);
    if (!cJSON_IsString(item))
        return sm_error_set(c->err, SM_EPARSE, "%s: expected an agent name", field);
    if (!sm_name_valid(item->valuestring))
        return sm_error_set(c->err, SM_EINVAL,
                            "%s: '%.64s' is not an agent name (1..%d of [A-Za-z0-9._-])", field,
                            item->valuestring, SM_NAME_MAX);
    strcpy(out, item->valuestring);
    return 0;
}

static int name_from_json(const cJSON *item, sm_spec *s, ctx *c)
{
    set_field(c, "name");
    if (!cJSON_IsString(item))
        return sm_error_set(c->err, SM_EPARSE, "name: expected a string");
    const char *v = item->valuestring;
    size_t n = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
    if (n == 0 || v[n] != '\0' || n > SM_SPEC_NAME_MAX)
        return sm_error_set(c->err, SM_EINVAL, "name: '%.70s' is not 1..%d of [A-Za-z0-9._-]", v,
                            SM_SPEC_NAME_MAX);
    memcpy(s->name, v, n + 1);
    return 0;
}

static int host_list_from_json(const cJSON *list, sm_spec *s, ctx *c)
{
    int n = cJSON_GetArraySize(list);
    set_field(c, "hosts");
    if (n == 0)
        return sm_error_set(c->err, SM_EINVAL, "hosts: an empty list selects no host");
    if ((size_t)n > SM_SPEC_HOSTS_MAX)
        return sm_error_set(c->err, SM_EINVAL, "hosts: %d names is above the maximum %d", n,
                            SM_SPEC_HOSTS_MAX);
    s->host_names = calloc((size_t)n, sizeof s->host_names[0]);
    if (s->host_names == NULL)
        return sm_error_set(c->err, SM_ENOMEM, "hosts: out of memory");
    const cJSON *item;
    size_t i = 0;
    cJSON_ArrayForEach(item, list)
    {
        char field[32];
        snprintf(field, sizeof field, "hosts[%zu]", i);
        int rc = get_name(item, field, s->host_names[i], c);
        if (rc != 0)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->host_names[j], s->host_names[i]) == 0)
                return sm_error_set(c->err, SM_EINVAL, "%s: '%s' is also hosts[%zu]", field,
                                    s->host_names[i], j);
        s->n_host_names = ++i;
    }
    s->hosts = SM_HOSTS_LIST;
    return 0;
}

static int label_from_json(const cJSON *o, sm_spec *s, ctx *c)
{
    static const char *const keys[] = {"label"};
    uint32_t seen;
    int rc = check_keys(o, "hosts", "hosts.", keys, 1, 1u, &seen, c);
    if (rc != 0)
        return rc;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, "label");
    set_field(c, "hosts.label");
    if (!cJSON_IsString(item))
        return sm_error_set(c->err, SM_EPARSE, "hosts.label: expected \"key=value\"");
    /* The agents' own --labels parser, so that a spec selects exactly what agents can carry. */
    sm_label labels[SM_LABELS_MAX];
    size_t n = 0;
    sm_error lerr;
    if (sm_labels_parse(item->valuestring, labels, &n, &lerr) != 0)
        return sm_error_set(c->err, lerr.code, "hosts.label: %s", lerr.msg);
    if (n != 1)
        return sm_error_set(c->err, SM_EINVAL, "hosts.label: '%.70s' is not one key=value",
                            item->valuestring);
    memcpy(s->label_key, labels[0].key, sizeof labels[0].key);
    memcpy(s->label_value, labels[0].value, sizeof labels[0].value);
    s->hosts = SM_HOSTS_LABEL;
    return 0;
}

static int hosts_from_json(const cJSON *item, sm_spec *s, ctx *c)
{
    set_field(c, "hosts");
    if (cJSON_IsString(item)) {
        if (strcmp(item->valuestring, "all") != 0)
            return sm_error_set(c->err, SM_EINVAL,
                                "hosts: unknown value '%.64s' (\"all\", a list of names or "
                                "{\"label\":\"key=value\"})",
                                item->valuestring);
        s->hosts = SM_HOSTS_ALL;
        return 0;
    }
    if (cJSON_IsArray(item))
        return host_list_from_json(item, s, c);
    if (cJSON_IsObject(item))
        return label_from_json(item, s, c);
    return sm_error_set(c->err, SM_EPARSE,
                        "hosts: expected \"all\", a list of names or {\"label\":\"key=value\"}");
}

static int pair_from_json(const cJSON *item, size_t i, char pair[2][SM_NAME_LEN], ctx *c)
{
    set_field(c, "pairs[%zu]", i);
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2)
        return sm_error_set(c->err, SM_EPARSE, "pairs[%zu]: expected [client, server]", i);
    for (int k = 0; k < 2; k++) {
        char field[40];
        snprintf(field, sizeof field, "pairs[%zu][%d]", i, k);
        int rc = get_name(cJSON_GetArrayItem(item, k), field, pair[k], c);
        if (rc != 0)
            return rc;
    }
    set_field(c, "pairs[%zu]", i);
    if (strcmp(pair[0], pair[1]) == 0)
        return sm_error_set(c->err, SM_EINVAL, "pairs[%zu]: '%s' cannot be client and server", i,
                            pair[0]);
    return 0;
}

static int pair_list_from_json(const cJSON *list, sm_spec *s, ctx *c)
{
    int n = cJSON_GetArraySize(list);
    set_field(c, "pairs");
    if (n == 0)
        return sm_error_set(c->err, SM_EINVAL, "pairs: an empty list has no pair");
    if ((size_t)n > SM_SPEC_HOSTS_MAX)
        return sm_error_set(c->err, SM_EINVAL, "pairs: %d pairs is above the maximum %d", n,
                            SM_SPEC_HOSTS_MAX);
    s->pair_list = calloc((size_t)n, sizeof s->pair_list[0]);
    if (s->pair_list == NULL)
        return sm_error_set(c->err, SM_ENOMEM, "pairs: out of memory");
    const cJSON *item;
    size_t i = 0;
    cJSON_ArrayForEach(item, list)
    {
        int rc = pair_from_json(item, i, s->pair_list[i], c);
        if (rc != 0)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (memcmp(s->pair_list[j], s->pair_list[i], sizeof s->pair_list[i]) == 0)
                return sm_error_set(c->err, SM_EINVAL, "pairs[%zu]: same as pairs[%zu]", i, j);
        s->n_pairs = ++i;
    }
    s->pairs = SM_PAIRS_LIST;
    return 0;
}

static int pairs_from_json(const cJSON *item, sm_spec *s, ctx *c)
{
    set_field(c, "pairs");
    if (cJSON_IsString(item)) {
        if (strcmp(item->valuestring, "mesh") == 0)
            s->pairs = SM_PAIRS_MESH;
        else if (strcmp(item->valuestring, "ring") == 0)
            s->pairs = SM_PAIRS_RING;
        else
            return sm_error_set(c->err, SM_EINVAL,
                                "pairs: unknown value '%.64s' (\"mesh\", \"ring\", "
                                "{\"star\":\"host\"} or a list of [client, server])",
                                item->valuestring);
        return 0;
    }
    if (cJSON_IsArray(item))
        return pair_list_from_json(item, s, c);
    if (cJSON_IsObject(item)) {
        static const char *const keys[] = {"star"};
        uint32_t seen;
        int rc = check_keys(item, "pairs", "pairs.", keys, 1, 1u, &seen, c);
        if (rc == 0)
            rc = get_name(cJSON_GetObjectItemCaseSensitive(item, "star"), "pairs.star", s->star, c);
        if (rc == 0)
            s->pairs = SM_PAIRS_STAR;
        return rc;
    }
    return sm_error_set(c->err, SM_EPARSE,
                        "pairs: expected \"mesh\", \"ring\", {\"star\":\"host\"} or a list of "
                        "[client, server]");
}

/* With a list of hosts the pairs can be checked now rather than when the run is planned. */
static int pairs_within_hosts(const sm_spec *s, ctx *c)
{
    if (s->hosts != SM_HOSTS_LIST)
        return 0;
    const char *name = NULL;
    char field[40] = "";
    bool found = true;
    if (s->pairs == SM_PAIRS_STAR) {
        name = s->star;
        snprintf(field, sizeof field, "pairs.star");
        found = false;
        for (size_t j = 0; !found && j < s->n_host_names; j++)
            found = strcmp(s->host_names[j], name) == 0;
    }
    for (size_t i = 0; found && s->pairs == SM_PAIRS_LIST && i < s->n_pairs; i++) {
        for (int k = 0; found && k < 2; k++) {
            name = s->pair_list[i][k];
            snprintf(field, sizeof field, "pairs[%zu][%d]", i, k);
            found = false;
            for (size_t j = 0; !found && j < s->n_host_names; j++)
                found = strcmp(s->host_names[j], name) == 0;
        }
    }
    if (found)
        return 0;
    set_field(c, "%s", field);
    return sm_error_set(c->err, SM_EINVAL, "%s: '%s' is not in hosts", field, name);
}

/* ---- tests and their variants ---- */

/* One key of a test: a single value (n = 1, list NULL) or a list of n values. */
typedef struct axis {
    const cJSON *key;
    const cJSON *list;
    size_t n;
} axis;

static int axes_from_json(const cJSON *t, size_t ti, axis *axes, size_t *n_axes, ctx *c)
{
    set_field(c, "tests[%zu]", ti);
    if (!cJSON_IsObject(t))
        return sm_error_set(c->err, SM_EPARSE, "tests[%zu]: expected an object of params fields",
                            ti);
    size_t n = 0;
    uint64_t variants = 1;
    bool exact = true;
    const cJSON *item;
    cJSON_ArrayForEach(item, t)
    {
        if (n == TEST_KEYS_MAX)
            return sm_error_set(c->err, SM_EPARSE, "tests[%zu]: more than %d fields", ti,
                                TEST_KEYS_MAX);
        /* The README's "a test with scope pair runs between hosts: pairs ..." reads as if pairs
         * were the test's; say where it goes rather than that it is unknown. */
        /* A test's own hosts are no params field (test_hosts_from_json). */
        if (strcmp(item->string, "hosts") == 0)
            continue;
        if (strcmp(item->string, "pairs") == 0) {
            set_field(c, "tests[%zu].pairs", ti);
            return sm_error_set(c->err, SM_EINVAL,
                                "tests[%zu]: pairs: goes in the spec, next to \"tests\" and "
                                "\"hosts\", not inside a test",
                                ti);
        }
        axis *a = &axes[n++];
        a->key = item;
        a->list = cJSON_IsArray(item) ? item : NULL;
        a->n = a->list != NULL ? (size_t)cJSON_GetArraySize(item) : 1;
        if (a->list == NULL)
            continue;
        set_field(c, "tests[%zu].%s", ti, item->string);
        /* A variant of another workload would be another test, with fields of its own. */
        if (strcmp(item->string, "workload") == 0)
            return sm_error_set(c->err, SM_EPARSE,
                                "tests[%zu]: workload: must be one value, not a list", ti);
        if (a->n == 0 || a->n > AXIS_MAX)
            return sm_error_set(c->err, SM_EINVAL,
                                "tests[%zu]: %.40s: a list of %zu values, expected 1..%d", ti,
                                item->string, a->n, AXIS_MAX);
        /* Stops multiplying past the bound: 16 axes of 16 values would overflow 64 bits. */
        if (variants <= SM_SPEC_VARIANTS_MAX)
            variants *= a->n;
        else if (a->n > 1)
            exact = false;
    }
    set_field(c, "tests[%zu]", ti);
    if (variants > SM_SPEC_VARIANTS_MAX)
        return sm_error_set(c->err, SM_EINVAL,
                            "tests[%zu]: its lists give %s%" PRIu64
                            " variants, above the maximum %d",
                            ti, exact ? "" : "more than ", variants, SM_SPEC_VARIANTS_MAX);
    *n_axes = n;
    return 0;
}

/* The value indexes of combination `combo`: the last axis varies fastest, so variants come in
 * field order, then value order. */
static void combo_indexes(const axis *axes, size_t n, size_t combo, size_t *idx)
{
    for (size_t i = n; i-- > 0;) {
        idx[i] = combo % axes[i].n;
        combo /= axes[i].n;
    }
}

/* Whether key is a list axis of the test. */
static bool crosses(const axis *axes, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (axes[i].list != NULL && strcmp(axes[i].key->string, key) == 0)
            return true;
    return false;
}

/* The params object of one combination, normalised; NULL when out of memory. */
static cJSON *combo_object(const axis *axes, size_t n, const size_t *idx)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        const cJSON *v = axes[i].list ? cJSON_GetArrayItem(axes[i].list, (int)idx[i]) : axes[i].key;
        ok = sm_json_put(o, axes[i].key->string, cJSON_Duplicate(v, true));
    }
    /* TCP-only options cannot apply to a Unix socket; forcing them off lets a test cross
     * transport with nodelay and keep the meaningful variants (the duplicates are dropped). */
    const cJSON *tr = ok ? cJSON_GetObjectItemCaseSensitive(o, "transport") : NULL;
    if (cJSON_IsString(tr) && strcmp(tr->valuestring, "unix") == 0) {
        static const char *const tcp_only[] = {"nodelay", "cork"};
        for (size_t k = 0; ok && k < 2; k++) {
            if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, tcp_only[k])))
                continue;
            cJSON *off = cJSON_CreateFalse();
            ok = off != NULL && cJSON_ReplaceItemInObjectCaseSensitive(o, tcp_only[k], off);
            if (!ok)
                cJSON_Delete(off);
        }
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Rewrites a params reason as "tests[i]: ..." and points the field path at the key it names,
 * and at the value in that key's list when the value is what was wrong. */
static int test_error(const axis *axes, size_t n, const size_t *idx, size_t ti,
                      const sm_error *perr, ctx *c)
{
    static const char prefix[] = "params: ";
    static const char *const key_reasons[] = {"unknown field '", "duplicate field '",
                                              "missing field '"};
    const char *msg = perr->msg;
    if (strncmp(msg, prefix, sizeof prefix - 1) == 0)
        msg += sizeof prefix - 1;
    char key[SM_ERR_MSG_MAX] = "";
    bool key_error = false;
    for (size_t k = 0; k < sizeof key_reasons / sizeof key_reasons[0]; k++)
        if (strncmp(msg, key_reasons[k], strlen(key_reasons[k])) == 0)
            key_error = quoted_name(msg, key, sizeof key);
    if (!key_error) {
        /* Validation reasons start with the field ("msg_size: 0 is below ..."); a reason about
         * several fields ("cork, nodelay: ...") names no key of the test and stays general. */
        size_t len = strcspn(msg, ":");
        if (msg[len] == ':' && len < sizeof key) {
            memcpy(key, msg, len);
            key[len] = '\0';
        }
    }
    set_field(c, "tests[%zu]", ti);
    if (key_error)
        set_field(c, "tests[%zu].%s", ti, key);
    for (size_t i = 0; !key_error && key[0] != '\0' && i < n; i++) {
        if (strcmp(axes[i].key->string, key) != 0)
            continue;
        if (axes[i].list != NULL)
            set_field(c, "tests[%zu].%s[%zu]", ti, key, idx[i]);
        else
            set_field(c, "tests[%zu].%s", ti, key);
        break;
    }
    return sm_error_set(c->err, perr->code, "tests[%zu]: %s", ti, msg);
}

/* A test's "hosts": some of the spec's listed hosts, on which alone its local cells are made. */
static int test_hosts_from_json(const cJSON *list, size_t ti, const sm_spec *s, sm_spec_test *out,
                                ctx *c)
{
    set_field(c, "tests[%zu].hosts", ti);
    if (s->hosts != SM_HOSTS_LIST)
        return sm_error_set(c->err, SM_EINVAL,
                            "tests[%zu].hosts: needs the spec's hosts as a list of names", ti);
    if (!cJSON_IsArray(list))
        return sm_error_set(c->err, SM_EPARSE, "tests[%zu].hosts: expected a list of names", ti);
    const int n = cJSON_GetArraySize(list);
    if (n == 0 || (size_t)n > s->n_host_names)
        return sm_error_set(c->err, SM_EINVAL, "tests[%zu].hosts: %d names, expected 1..%zu", ti, n,
                            s->n_host_names);
    out->hosts = calloc((size_t)n, sizeof out->hosts[0]);
    if (out->hosts == NULL)
        return sm_error_set(c->err, SM_ENOMEM, "tests[%zu].hosts: out of memory", ti);
    const cJSON *item;
    cJSON_ArrayForEach(item, list)
    {
        const size_t i = out->n_hosts;
        char field[48];
        snprintf(field, sizeof field, "tests[%zu].hosts[%zu]", ti, i);
        int rc = get_name(item, field, out->hosts[i], c);
        if (rc != 0)
            return rc;
        bool listed = false;
        for (size_t j = 0; !listed && j < s->n_host_names; j++)
            listed = strcmp(s->host_names[j], out->hosts[i]) == 0;
        set_field(c, "%s", field);
        if (!listed)
            return sm_error_set(c->err, SM_EINVAL, "%s: '%s' is not in hosts", field,
                                out->hosts[i]);
        for (size_t j = 0; j < i; j++)
            if (strcmp(out->hosts[j], out->hosts[i]) == 0)
                return sm_error_set(c->err, SM_EINVAL, "%s: '%s' is also tests[%zu].hosts[%zu]",
                                    field, out->hosts[i], ti, j);
        out->n_hosts++;
    }
    return 0;
}

static int test_from_json(const cJSON *t, size_t ti, const sm_spec *s, sm_spec_test *out, ctx *c)
{
    axis axes[TEST_KEYS_MAX];
    size_t n = 0;
    int rc = axes_from_json(t, ti, axes, &n, c);
    if (rc != 0)
        return rc;
    size_t combos = 1;
    for (size_t i = 0; i < n; i++)
        combos *= axes[i].n;
    for (size_t combo = 0; combo < combos; combo++) {
        size_t idx[TEST_KEYS_MAX];
        combo_indexes(axes, n, combo, idx);
        cJSON *o = combo_object(axes, n, idx);
        if (o == NULL) {
            set_field(c, "tests[%zu]", ti);
            return sm_error_set(c->err, SM_ENOMEM, "tests[%zu]: out of memory", ti);
        }
        /* Pair jobs run over TCP only. A test that crosses scope with transport means the
         * meaningful combinations, as with nodelay on a Unix socket; a test that asks for
         * pair over unix outright is told so by the params check. */
        if (crosses(axes, n, "scope") || crosses(axes, n, "transport")) {
            const cJSON *sc = cJSON_GetObjectItemCaseSensitive(o, "scope");
            const cJSON *tr = cJSON_GetObjectItemCaseSensitive(o, "transport");
            if (cJSON_IsString(sc) && strcmp(sc->valuestring, "pair") == 0 && cJSON_IsString(tr) &&
                strcmp(tr->valuestring, "unix") == 0) {
                cJSON_Delete(o);
                continue;
            }
        }
        /* Slots start zeroed and the decoder starts from sm_params_init's memset, so padding
         * is zero and memcmp compares the fields alone. */
        sm_params *slot = &out->variants[out->n_variants];
        sm_error perr = {0};
        /* Through the codec's own decoder, as any other params document: the same checks and
         * the same messages. */
        char *text = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        rc = text ? sm_codec_params_decode(text, strlen(text), slot, &perr)
                  : sm_error_set(&perr, SM_ENOMEM, "out of memory");
        free(text);
        if (rc != 0)
            return test_error(axes, n, idx, ti, &perr, c);
        bool dup = false;
        for (size_t j = 0; !dup && j < out->n_variants; j++)
            dup = memcmp(&out->variants[j], slot, sizeof *slot) == 0;
        if (dup)
            memset(slot, 0, sizeof *slot);
        else
            out->n_variants++;
    }
    if (out->n_variants == 0) {
        set_field(c, "tests[%zu]", ti);
        return sm_error_set(c->err, SM_EINVAL,
                            "tests[%zu]: no variant left (scope pair runs over tcp only)", ti);
    }
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(t, "hosts");
    if (hosts == NULL)
        return 0;
    for (size_t v = 0; v < out->n_variants; v++) {
        if (out->variants[v].scope == SM_SCOPE_PAIR) {
            set_field(c, "tests[%zu].hosts", ti);
            return sm_error_set(c->err, SM_EINVAL,
                                "tests[%zu].hosts: for a local test only (a pair test runs on "
                                "the spec's pairs)",
                                ti);
        }
    }
    return test_hosts_from_json(hosts, ti, s, out, c);
}

static int tests_from_json(const cJSON *list, sm_spec *s, ctx *c)
{
    set_field(c, "tests");
    if (!cJSON_IsArray(list))
        return sm_error_set(c->err, SM_EPARSE, "tests: expected a list of tests");
    int n = cJSON_GetArraySize(list);
    if (n == 0 || n > SM_SPEC_TESTS_MAX)
        return sm_error_set(c->err, SM_EINVAL, "tests: %d tests, expected 1..%d", n,
                            SM_SPEC_TESTS_MAX);
    s->tests = calloc((size_t)n, sizeof s->tests[0]);
    if (s->tests == NULL)
        return sm_error_set(c->err, SM_ENOMEM, "tests: out of memory");
    const cJSON *t;
    cJSON_ArrayForEach(t, list)
    {
        int rc = test_from_json(t, s->n_tests, s, &s->tests[s->n_tests], c);
        if (rc != 0) {
            free(s->tests[s->n_tests].hosts); /* the failed test's: not counted */
            return rc;
        }
        s->n_tests++;
    }
    return 0;
}

/* ---- the spec ---- */

enum { F_NAME, F_HOSTS, F_PAIRS, F_REPS, F_REMEASURE, F_WARMUP, F_PARALLEL, F_TESTS, F__COUNT };
static const char *const spec_keys[F__COUNT] = {
    "name", "hosts", "pairs", "repetitions", "remeasure", "warmup", "parallel", "tests",
};

static const cJSON *member(const cJSON *o, int f)
{
    return cJSON_GetObjectItemCaseSensitive(o, spec_keys[f]);
}

static int spec_from_json(const cJSON *root, sm_spec *s, ctx *c)
{
    uint32_t seen = 0;
    int rc =
        check_keys(root, "spec", "", spec_keys, F__COUNT, 1u << F_NAME | 1u << F_TESTS, &seen, c);
    if (rc == 0)
        rc = name_from_json(member(root, F_NAME), s, c);
    if (rc == 0 && (seen & 1u << F_HOSTS))
        rc = hosts_from_json(member(root, F_HOSTS), s, c);
    if (rc == 0 && (seen & 1u << F_PAIRS))
        rc = pairs_from_json(member(root, F_PAIRS), s, c);
    if (rc == 0 && (seen & 1u << F_PAIRS))
        rc = pairs_within_hosts(s, c);
    if (rc == 0 && (seen & 1u << F_REPS))
        rc = reps_from_json(member(root, F_REPS), s, c);
    /* As many again as asked: a cell whose every sample was disturbed can be measured once
     * more in full. */
    s->remeasure = s->adaptive ? s->reps.max : s->repetitions;
    s->remeasure_given = (seen & 1u << F_REMEASURE) != 0;
    if (rc == 0 && s->remeasure_given)
        rc = get_range(member(root, F_REMEASURE), "remeasure", 0, SM_SPEC_REPS_MAX, &s->remeasure,
                       c);
    if (rc == 0 && (seen & 1u << F_WARMUP))
        rc = get_range(member(root, F_WARMUP), "warmup", 0, SM_SPEC_WARMUP_MAX, &s->warmup, c);
    if (rc == 0 && (seen & 1u << F_PARALLEL)) {
        const cJSON *p = member(root, F_PARALLEL);
        set_field(c, "parallel");
        if (!cJSON_IsBool(p))
            rc = sm_error_set(c->err, SM_EPARSE, "parallel: expected true or false");
        else {
            s->parallel = cJSON_IsTrue(p);
            s->parallel_given = true;
        }
    }
    if (rc == 0)
        rc = tests_from_json(member(root, F_TESTS), s, c);
    for (size_t i = 0; rc == 0 && !(seen & 1u << F_PAIRS) && i < s->n_tests; i++) {
        for (size_t v = 0; v < s->tests[i].n_variants; v++) {
            if (s->tests[i].variants[v].scope != SM_SCOPE_PAIR)
                continue;
            set_field(c, "pairs");
            return sm_error_set(c->err, SM_EINVAL, "pairs: required, tests[%zu] has scope pair", i);
        }
    }
    if (rc == 0)
        set_field(c, "%s", "");
    return rc;
}

int sm_spec_decode(const char *json, size_t len, sm_spec *out, sm_error *err)
{
    ctx c = {err};
    set_field(&c, "%s", "");
    if (out == NULL)
        return sm_error_set(err, SM_EINVAL, "spec: nowhere to decode into");
    memset(out, 0, sizeof *out);
    cJSON *root = NULL;
    int rc = sm_json_parse_object(json, len, "spec", &root, err);
    if (rc != 0)
        return rc;
    sm_spec s;
    memset(&s, 0, sizeof s);
    s.hosts = SM_HOSTS_ALL;
    s.pairs = SM_PAIRS_MESH;
    s.repetitions = DEFAULT_REPS;
    s.warmup = DEFAULT_WARMUP;
    s.parallel = true;
    rc = spec_from_json(root, &s, &c);
    cJSON_Delete(root);
    if (rc != 0) {
        sm_spec_fini(&s);
        return rc;
    }
    *out = s;
    return 0;
}

void sm_spec_fini(sm_spec *s)
{
    if (s == NULL)
        return;
    free(s->host_names);
    free(s->pair_list);
    for (size_t i = 0; s->tests && i < s->n_tests; i++)
        free(s->tests[i].hosts);
    free(s->tests);
    memset(s, 0, sizeof *s);
}

sm_reps_rule sm_spec_rule(const sm_spec *s)
{
    sm_reps_rule r = s->reps;
    if (!s->adaptive)
        r = (sm_reps_rule){s->repetitions, s->repetitions, 0, 0};
    r.remeasure = s->remeasure;
    return r;
}

bool sm_spec_adds_rounds(const sm_spec *s)
{
    return s->adaptive || s->remeasure > 0;
}

bool sm_spec_has_scope(const sm_spec *s, sm_scope scope)
{
    for (size_t i = 0; s != NULL && i < s->n_tests; i++)
        for (size_t v = 0; v < s->tests[i].n_variants; v++)
            if (s->tests[i].variants[v].scope == scope)
                return true;
    return false;
}
