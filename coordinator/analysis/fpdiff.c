/* What makes a host different: fingerprints against the fleet's majority, ranked. */
#include "coordinator/analysis/fpdiff.h"

#include "coordinator/analysis/internal.h"

#include "proto/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOT_FOUND "(no fingerprint)"

/* ---- relevance ---- */

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Whether rest (what follows "if.<iface>.") starts with an interface item's own name. */
static bool iface_item(const char *rest)
{
    static const char *const names[] = {"qdisc", "class",  "offload", "mtu",  "txqueuelen",
                                        "speed", "driver", "state",   "addr", "operstate"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(rest, names[i], n) == 0 && (rest[n] == '\0' || rest[n] == '.'))
            return true;
    }
    return false;
}

/* The part of an interface item after "if.<iface>." when item belongs to iface ("" or NULL:
 * any interface), else NULL. The interface's name ends at the first dot followed by an
 * interface item's name (a VLAN's "eth0.100" has a dot of its own), else at the first dot. */
static const char *iface_rest(const char *item, const char *iface)
{
    if (!starts(item, "if."))
        return NULL;
    const char *name = item + 3, *first = strchr(name, '.'), *end = NULL;
    for (const char *dot = first; dot != NULL && end == NULL; dot = strchr(dot + 1, '.'))
        if (dot > name && iface_item(dot + 1))
            end = dot;
    if (end == NULL)
        end = first;
    if (end == NULL || end == name)
        return NULL;
    if (iface != NULL && iface[0] != '\0' &&
        ((size_t)(end - name) != strlen(iface) || strncmp(name, iface, strlen(iface)) != 0))
        return NULL;
    return end + 1;
}

/* Whether item is a sysctl of the transport ("" unknown: of every transport). http runs over
 * TCP: its sysctls are TCP's. */
static bool transport_sysctl(const char *item, const char *transport)
{
    bool tcp = starts(item, "sysctl.net.ipv4.tcp_"), udp = starts(item, "sysctl.net.ipv4.udp_"),
         unx = starts(item, "sysctl.net.unix.");
    if (transport == NULL || transport[0] == '\0')
        return tcp || udp || unx;
    if (strcmp(transport, "tcp") == 0 || strcmp(transport, "http") == 0)
        return tcp;
    if (strcmp(transport, "udp") == 0)
        return udp;
    if (strcmp(transport, "unix") == 0)
        return unx;
    return false;
}

/* The tiers of fpdiff.h's ranking. */
static int relevance(const char *item, const sm_fp_context *ctx)
{
    static const sm_fp_context none = {"", "", false};
    if (ctx == NULL)
        ctx = &none;
    const char *rest = iface_rest(item, ctx->iface);
    if (rest != NULL) {
        if (starts(rest, "qdisc") || starts(rest, "class."))
            return 100;
        if (starts(rest, "offload."))
            return ctx->link ? 96 : 80;
        if (strcmp(rest, "mtu") == 0 || strcmp(rest, "txqueuelen") == 0 ||
            strcmp(rest, "speed") == 0 || strcmp(rest, "driver") == 0)
            return ctx->link ? 94 : 70;
        return ctx->link ? 92 : 65;
    }
    if (transport_sysctl(item, ctx->transport))
        return 90;
    if (starts(item, "sysctl.net.core."))
        return 50;
    static const char *const host[] = {"cpu.", "kernel.", "virt.", "clock.", "cgroup.", "mem."};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (starts(item, host[i]))
            return 40;
    if (starts(item, "lib.") || starts(item, "agent."))
        return 20;
    if (starts(item, "if."))
        return 10;
    return 30; /* other sysctls and items this ranking does not name */
}

/* ---- values ---- */

/* Two items (either may be NULL: absent) hold the same value: the same string, or both
 * unreadable for the same reason, or both absent. */
static bool same_value(const sm_fp_item *a, const sm_fp_item *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    if ((a->value == NULL) != (b->value == NULL))
        return false;
    return a->value ? strcmp(a->value, b->value) == 0 : strcmp(a->unreadable, b->unreadable) == 0;
}

static char *item_text_dup(const sm_fp_item *it)
{
    char buf[SM_FP_ERRNO_MAX + 32];
    return strdup(sm_fp_item_text(it, buf, sizeof buf));
}

/* ---- item names of several fingerprints ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sorted, distinct names of every item but info.* in fps[0..n) (NULL entries skipped);
 * the names are borrowed from the fingerprints. */
static int union_keys(const sm_fingerprint *const *fps, size_t n, const char ***keys, size_t *nk,
                      sm_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += fps[i] ? fps[i]->n : 0;
    const char **v = malloc((total ? total : 1) * sizeof *v);
    if (v == NULL)
        return sm_error_set(err, SM_ENOMEM, "fingerprint diff: out of memory");
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; fps[i] && j < fps[i]->n; j++)
            if (!starts(fps[i]->items[j].key, "info."))
                v[at++] = fps[i]->items[j].key;
    qsort(v, at, sizeof *v, cmp_str);
    size_t out = 0;
    for (size_t i = 0; i < at; i++)
        if (out == 0 || strcmp(v[out - 1], v[i]) != 0)
            v[out++] = v[i];
    *keys = v;
    *nk = out;
    return 0;
}

/* ---- the list of differences ---- */

void sm_fp_diffs_fini(sm_fp_diffs *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].host_value);
        free(d->v[i].fleet_value);
    }
    free(d->v);
    memset(d, 0, sizeof *d);
}

/* Appends a difference; host and fleet are texts copied (fleet may be NULL). */
static int push(sm_fp_diffs *d, const char *item, const sm_fp_item *host, const sm_fp_item *fleet,
                bool no_fleet, uint32_t with, uint32_t of, int rel, sm_error *err)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        sm_fp_diff *v = realloc(d->v, cap * sizeof *v);
        if (v == NULL)
            return sm_error_set(err, SM_ENOMEM, "fingerprint diff: out of memory");
        d->v = v;
        d->cap = cap;
    }
    sm_fp_diff *x = &d->v[d->n];
    memset(x, 0, sizeof *x);
    snprintf(x->item, sizeof x->item, "%s", item);
    x->host_value = item_text_dup(host);
    x->fleet_value = no_fleet ? NULL : item_text_dup(fleet);
    if (x->host_value == NULL || (!no_fleet && x->fleet_value == NULL)) {
        free(x->host_value);
        free(x->fleet_value);
        return sm_error_set(err, SM_ENOMEM, "fingerprint diff: out of memory");
    }
    x->hosts_with_fleet_value = with;
    x->fleet_hosts = of;
    x->relevance = rel;
    d->n++;
    return 0;
}

/* Majority differences first (a NULL fleet_value is "no majority"), then by relevance, then by
 * item name. */
static int diff_cmp(const void *pa, const void *pb)
{
    const sm_fp_diff *a = pa, *b = pb;
    bool ma = a->fleet_value != NULL || a->fleet_hosts == 0,
         mb = b->fleet_value != NULL || b->fleet_hosts == 0;
    if (ma != mb)
        return ma ? -1 : 1;
    if (a->relevance != b->relevance)
        return a->relevance > b->relevance ? -1 : 1;
    return strcmp(a->item, b->item);
}

/* Sorts and keeps the first max (0: all). */
static void finish(sm_fp_diffs *d, size_t max)
{
    if (d->n > 1)
        qsort(d->v, d->n, sizeof d->v[0], diff_cmp);
    while (max > 0 && d->n > max) {
        d->n--;
        free(d->v[d->n].host_value);
        free(d->v[d->n].fleet_value);
    }
}

int sm_fp_differences(const sm_fp_host *hosts, size_t n, const char *flagged,
                      const sm_fp_context *ctx, size_t max, sm_fp_diffs *out, sm_error *err)
{
    memset(out, 0, sizeof *out);
    const sm_fingerprint *me = NULL;
    const sm_fingerprint **fps = malloc((n + 1) * sizeof *fps);
    if (fps == NULL)
        return sm_error_set(err, SM_ENOMEM, "fingerprint diff: out of memory");
    size_t others = 0;
    for (size_t i = 0; i < n; i++) {
        if (hosts[i].fp == NULL)
            continue;
        if (me == NULL && strcmp(hosts[i].host, flagged) == 0)
            me = hosts[i].fp;
        else
            fps[1 + others++] = hosts[i].fp;
    }
    if (me == NULL || others == 0) { /* nothing to compare */
        free(fps);
        return 0;
    }
    fps[0] = me;
    const char **keys = NULL;
    size_t nk = 0;
    const sm_fp_item **vals = malloc(others * sizeof *vals);
    int rc = vals ? union_keys(fps, others + 1, &keys, &nk, err)
                  : sm_error_set(err, SM_ENOMEM, "fingerprint diff: out of memory");
    for (size_t k = 0; rc == 0 && k < nk; k++) {
        const sm_fp_item *mine = sm_fp_get(me, keys[k]);
        for (size_t j = 0; j < others; j++)
            vals[j] = sm_fp_get(fps[1 + j], keys[k]);
        /* The value most of the others hold (the first found of the most held), and whether
         * any of them holds mine. */
        size_t best = 0, best_count = 0, mine_count = 0;
        for (size_t j = 0; j < others; j++) {
            size_t c = 0;
            for (size_t l = 0; l < others; l++)
                c += same_value(vals[j], vals[l]);
            if (c > best_count) {
                best = j;
                best_count = c;
            }
            mine_count += same_value(mine, vals[j]);
        }
        int rel = relevance(keys[k], ctx);
        if (2 * best_count > others) {
            if (!same_value(mine, vals[best]))
                rc = push(out, keys[k], mine, vals[best], false, (uint32_t)best_count,
                          (uint32_t)others, rel, err);
        } else if (mine_count == 0) {
            rc = push(out, keys[k], mine, NULL, true, 0, (uint32_t)others, rel, err);
        }
    }
    free(keys);
    free(vals);
    free(fps);
    if (rc != 0) {
        sm_fp_diffs_fini(out);
        return rc;
    }
    finish(out, max);
    return 0;
}

int sm_fp_changes(const sm_fingerprint *before, const sm_fingerprint *after,
                  const sm_fp_context *ctx, size_t max, sm_fp_diffs *out, sm_error *err)
{
    memset(out, 0, sizeof *out);
    if (before == NULL || after == NULL)
        return 0;
    const sm_fingerprint *fps[2] = {before, after};
    const char **keys = NULL;
    size_t nk = 0;
    int rc = union_keys(fps, 2, &keys, &nk, err);
    for (size_t k = 0; rc == 0 && k < nk; k++) {
        const sm_fp_item *b = sm_fp_get(before, keys[k]), *a = sm_fp_get(after, keys[k]);
        if (!same_value(a, b))
            rc = push(out, keys[k], a, b, false, 0, 0, relevance(keys[k], ctx), err);
    }
    free(keys);
    if (rc != 0) {
        sm_fp_diffs_fini(out);
        return rc;
    }
    finish(out, max);
    return 0;
}

/* ---- for people ---- */

const char *sm_fp_item_label(const char *item, char *buf, size_t len)
{
    if (starts(item, "sysctl."))
        return item + 7;
    const char *rest = iface_rest(item, NULL);
    if (rest == NULL)
        return item;
    snprintf(buf, len, "%.*s %s", (int)(rest - 1 - (item + 3)), item + 3, rest);
    return buf;
}

int sm_fp_diff_text(const char *host, const sm_fp_diff *d, char *buf, size_t len)
{
    char lb[SM_FP_KEY_MAX + 2], prefix[160] = "";
    const char *label = sm_fp_item_label(d->item, lb, sizeof lb);
    if (host != NULL && host[0] != '\0')
        snprintf(prefix, sizeof prefix, "%.140s: ", host);
    if (d->fleet_hosts == 0)
        return snprintf(buf, len, "%s%s now %s (was %s)", prefix, label, d->host_value,
                        d->fleet_value ? d->fleet_value : "(absent)");
    const char *hosts = d->fleet_hosts == 1 ? "host" : "hosts";
    if (d->fleet_value == NULL)
        return snprintf(buf, len, "%s%s %s (fleet: no majority of %u %s)", prefix, label,
                        d->host_value, d->fleet_hosts, hosts);
    return snprintf(buf, len, "%s%s %s (fleet: %s, %u of %u %s)", prefix, label, d->host_value,
                    d->fleet_value, d->hosts_with_fleet_value, d->fleet_hosts, hosts);
}

/* A difference's fields after its item and label: the host's value against the fleet's. */
static bool put_difference(cJSON *o, const sm_fp_diff *x)
{
    return sm_json_put_str(o, "host_value", x->host_value) &&
           (x->fleet_value ? sm_json_put_str(o, "fleet_value", x->fleet_value)
                           : cJSON_AddNullToObject(o, "fleet_value") != NULL) &&
           sm_json_put_u64(o, "hosts_with_fleet_value", x->hosts_with_fleet_value) &&
           sm_json_put_u64(o, "fleet_hosts", x->fleet_hosts);
}

/* A change's fields after its item and label: fleet_value holds the value before. */
static bool put_change(cJSON *o, const sm_fp_diff *x)
{
    return sm_json_put_str(o, "before", x->fleet_value ? x->fleet_value : "(absent)") &&
           sm_json_put_str(o, "after", x->host_value);
}

cJSON *sm_fp_diff_to_cjson(const sm_fp_diff *x, bool change)
{
    char lb[SM_FP_KEY_MAX + 2];
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL && sm_json_put_str(o, "item", x->item) &&
              sm_json_put_str(o, "label", sm_fp_item_label(x->item, lb, sizeof lb)) &&
              (change ? put_change(o, x) : put_difference(o, x));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The list's objects in an array, or NULL when out of memory. */
static cJSON *diffs_array(const sm_fp_diffs *d, bool change)
{
    cJSON *arr = cJSON_CreateArray();
    bool ok = arr != NULL;
    for (size_t i = 0; ok && i < d->n; i++)
        ok = sm_json_append(arr, sm_fp_diff_to_cjson(&d->v[i], change));
    if (!ok) {
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

char *sm_fp_diffs_json(const sm_fp_diffs *d)
{
    return sm_json_finish(diffs_array(d, false), true, 0, "fingerprint differences", NULL);
}

char *sm_fp_changes_json(const sm_fp_diffs *d)
{
    return sm_json_finish(diffs_array(d, true), true, 0, "fingerprint changes", NULL);
}

/* ---- side by side ---- */

void sm_fp_table_fini(sm_fp_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        for (size_t h = 0; h < t->n_hosts; h++)
            free(t->rows[i].values[h]);
        free(t->rows[i].values);
    }
    free(t->rows);
    memset(t, 0, sizeof *t);
}

static int add_row(sm_fp_table *t, const char *item, const sm_fp_host *hosts, size_t n,
                   sm_error *err)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        sm_fp_side_row *v = realloc(t->rows, cap * sizeof *v);
        if (v == NULL)
            return sm_error_set(err, SM_ENOMEM, "fingerprint diff: out of memory");
        t->rows = v;
        t->cap = cap;
    }
    sm_fp_side_row *r = &t->rows[t->n];
    snprintf(r->item, sizeof r->item, "%s", item);
    r->values = calloc(n ? n : 1, sizeof *r->values);
    bool ok = r->values != NULL;
    for (size_t h = 0; ok && h < n; h++) {
        r->values[h] =
            hosts[h].fp ? item_text_dup(sm_fp_get(hosts[h].fp, item)) : strdup(NOT_FOUND);
        ok = r->values[h] != NULL;
    }
    if (!ok) {
        for (size_t h = 0; r->values && h < n; h++)
            free(r->values[h]);
        free(r->values);
        return sm_error_set(err, SM_ENOMEM, "fingerprint diff: out of memory");
    }
    t->n++;
    return 0;
}

int sm_fp_side_by_side(const sm_fp_host *hosts, size_t n, sm_fp_table *out, sm_error *err)
{
    memset(out, 0, sizeof *out);
    out->n_hosts = n;
    const sm_fingerprint **fps = malloc((n ? n : 1) * sizeof *fps);
    if (fps == NULL)
        return sm_error_set(err, SM_ENOMEM, "fingerprint diff: out of memory");
    for (size_t i = 0; i < n; i++)
        fps[i] = hosts[i].fp;
    const char **keys = NULL;
    size_t nk = 0;
    int rc = union_keys(fps, n, &keys, &nk, err);
    for (size_t k = 0; rc == 0 && k < nk; k++) {
        /* Hosts without a fingerprint show as such and take no part in the agreement. */
        const sm_fp_item *first = NULL;
        bool seen = false, differ = false;
        for (size_t i = 0; i < n && !differ; i++) {
            if (fps[i] == NULL)
                continue;
            const sm_fp_item *it = sm_fp_get(fps[i], keys[k]);
            if (!seen) {
                first = it;
                seen = true;
            } else {
                differ = !same_value(first, it);
            }
        }
        if (differ)
            rc = add_row(out, keys[k], hosts, n, err);
        else
            out->same++;
    }
    free(keys);
    free(fps);
    if (rc != 0)
        sm_fp_table_fini(out);
    return rc;
}
