/* What may explain a run's anomalies: fingerprint differences and changes per anomaly, and
 * the anomalies' text with them, each host explained once. */
#include "coordinator/analysis/explain.h"

#include "coordinator/analysis/internal.h"

#include "proto/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sm_explanation_fini(sm_explanation *e)
{
    for (size_t i = 0; i < e->n; i++)
        for (size_t h = 0; h < 2; h++)
            sm_fp_diffs_fini(&e->v[i].d[h]);
    free(e->v);
    memset(e, 0, sizeof *e);
}

static const sm_fingerprint *find(const sm_fp_host *hosts, size_t n, const char *host)
{
    for (size_t i = 0; i < n; i++)
        if (hosts[i].fp != NULL && strcmp(hosts[i].host, host) == 0)
            return hosts[i].fp;
    return NULL;
}

/* The transport a column label names: the first of its first four words' parts (split at
 * '/' and '+') that is one: "tcp/unix stream ..." and "stream tcp+nodelay ..." are tcp,
 * "pair/loopback rr unix ..." unix, "user CPU pool/thread, http ..." http. */
static void label_transport(const char *label, size_t cap, char *out, size_t outcap)
{
    static const char *const names[] = {"tcp", "unix", "udp", "http"};
    size_t len = strnlen(label, cap), at = 0;
    out[0] = '\0';
    for (int word = 0; word < 4 && at < len; word++) {
        size_t end = at;
        while (end < len && label[end] != ' ')
            end++;
        for (size_t p = at; p < end;) {
            size_t q = p;
            while (q < end && label[q] != '/' && label[q] != '+')
                q++;
            for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
                if (q - p == strlen(names[k]) && memcmp(label + p, names[k], q - p) == 0) {
                    snprintf(out, outcap, "%s", names[k]);
                    return;
                }
            p = q + 1;
        }
        at = end + 1;
    }
}

/* Whether the anomaly is of a pair table: its row (host) is "client->server", or it is a slow
 * host, which only pair tables have. */
static bool of_pairs(const sm_anomaly *a)
{
    return a->kind == SM_ANOMALY_SLOW_HOST || a->kind == SM_ANOMALY_SLOW_LINK ||
           memchr(a->host, '>', strnlen(a->host, sizeof a->host)) != NULL;
}

void sm_explain_context(const sm_anomaly *a, const sm_fingerprint *fp, sm_fp_context *ctx,
                        char *transport, size_t cap)
{
    label_transport(a->test, sizeof a->test, transport, cap);
    ctx->transport = transport;
    ctx->link = of_pairs(a);
    ctx->iface = "lo";
    if (ctx->link) {
        const sm_fp_item *it = fp ? sm_fp_get(fp, "info.data_if") : NULL;
        ctx->iface = it && it->value ? it->value : "";
    }
}

/* The anomaly's hosts: a pair's two, else its one; "" for a fleet move (on no host). */
static size_t anomaly_hosts(const sm_anomaly *a, char host[2][66])
{
    char name[sizeof a->host + 1];
    snprintf(name, sizeof name, "%.*s", (int)strnlen(a->host, sizeof a->host), a->host);
    host[0][0] = host[1][0] = '\0';
    if (a->kind == SM_ANOMALY_FLEET_MOVE)
        return 0;
    char *arrow = strstr(name, "->");
    if (a->kind != SM_ANOMALY_SLOW_HOST && arrow != NULL) {
        *arrow = '\0';
        snprintf(host[0], sizeof host[0], "%.65s", name);
        snprintf(host[1], sizeof host[1], "%.65s", arrow + 2);
        return 2;
    }
    snprintf(host[0], sizeof host[0], "%.65s", name);
    return 1;
}

int sm_explain_anomalies(const sm_anomalies *an, const sm_fp_host *run, size_t n_run,
                         const sm_fp_host *base, size_t n_base, sm_explanation *out, sm_error *err)
{
    memset(out, 0, sizeof *out);
    out->v = calloc(an->n ? an->n : 1, sizeof *out->v);
    if (out->v == NULL)
        return sm_error_set(err, SM_ENOMEM, "explain: out of memory");
    out->n = an->n;
    for (size_t i = 0; i < an->n; i++) {
        const sm_anomaly *a = &an->v[i];
        sm_explained *x = &out->v[i];
        size_t nh = anomaly_hosts(a, x->host);
        x->changes = a->kind == SM_ANOMALY_REGRESSION;
        for (size_t h = 0; h < nh; h++) {
            const sm_fingerprint *now = find(run, n_run, x->host[h]);
            sm_fp_context ctx;
            char transport[8];
            sm_explain_context(a, now, &ctx, transport, sizeof transport);
            int rc = x->changes ? sm_fp_changes(find(base, n_base, x->host[h]), now, &ctx,
                                                SM_EXPLAIN_JSON_MAX, &x->d[h], err)
                                : sm_fp_differences(run, n_run, x->host[h], &ctx,
                                                    SM_EXPLAIN_JSON_MAX, &x->d[h], err);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

bool sm_explain_any(const sm_explanation *e, size_t i)
{
    return e != NULL && i < e->n && (e->v[i].d[0].n > 0 || e->v[i].d[1].n > 0);
}

/* One entry of an anomaly's lists, merged in rank order. */
typedef struct entry {
    const char *host;
    const sm_fp_diff *d;
    size_t h;
} entry;

/* fpdiff's order (majority differences, relevance, item), then the first host first. */
static int entry_cmp(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    bool ma = a->d->fleet_value != NULL || a->d->fleet_hosts == 0,
         mb = b->d->fleet_value != NULL || b->d->fleet_hosts == 0;
    if (ma != mb)
        return ma ? -1 : 1;
    if (a->d->relevance != b->d->relevance)
        return a->d->relevance > b->d->relevance ? -1 : 1;
    int c = strcmp(a->d->item, b->d->item);
    return c ? c : (a->h > b->h) - (a->h < b->h);
}

/* The first max entries of anomaly i's lists; returns how many (at most 2 SM_EXPLAIN_JSON_MAX). */
static size_t merged(const sm_explanation *e, size_t i, size_t max,
                     entry out[2 * SM_EXPLAIN_JSON_MAX])
{
    const sm_explained *x = &e->v[i];
    size_t n = 0;
    for (size_t h = 0; h < 2; h++)
        for (size_t k = 0; k < x->d[h].n && k < SM_EXPLAIN_JSON_MAX; k++)
            out[n++] = (entry){x->host[h], &x->d[h].v[k], h};
    qsort(out, n, sizeof *out, entry_cmp);
    return n < max ? n : max;
}

/* The differences (or changes) of anomaly i as a JSON array, or NULL when none (or out of
 * memory). */
static cJSON *explanation_array(const sm_explanation *e, size_t i)
{
    if (!sm_explain_any(e, i))
        return NULL;
    entry v[2 * SM_EXPLAIN_JSON_MAX];
    size_t n = merged(e, i, SM_EXPLAIN_JSON_MAX, v);
    cJSON *arr = cJSON_CreateArray();
    bool ok = arr != NULL;
    for (size_t k = 0; ok && k < n; k++) {
        cJSON *o = sm_fp_diff_to_cjson(v[k].d, e->v[i].changes);
        /* Each names its host: a slow link's list holds both of its hosts. */
        ok = sm_json_append(arr, o) && sm_json_put_str(o, "host", v[k].host);
    }
    if (!ok) {
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

bool sm_explain_json(void *arg, size_t i, cJSON *object)
{
    const sm_explanation *e = arg;
    if (!sm_explain_any(e, i))
        return true;
    cJSON *arr = explanation_array(e, i);
    return arr != NULL && sm_json_put(object, e->v[i].changes ? "changes" : "differences", arr);
}

char *sm_explain_anomalies_json(uint64_t run_id, const char *run_name, uint64_t baseline_id,
                                const sm_analysis_opts *o, const sm_anomalies *a,
                                const sm_explanation *e, const struct sm_run_verdict *v)
{
    /* sm_explain_json only reads its arg; the callback type cannot say so. */
    return sm_anomalies_json_more(run_id, run_name, baseline_id, o, a, v,
                                  e ? sm_explain_json : NULL, (void *)e);
}

void sm_explain_lines(const sm_explanation *e, size_t i, const char *indent, char *buf, size_t cap,
                      size_t *at)
{
    if (!sm_explain_any(e, i))
        return;
    entry v[2 * SM_EXPLAIN_JSON_MAX];
    size_t n = merged(e, i, SM_EXPLAIN_TEXT_MAX, v);
    for (size_t k = 0; k < n && *at < cap; k++) {
        char line[512];
        sm_fp_diff_text(v[k].host, v[k].d, line, sizeof line);
        *at += (size_t)snprintf(buf + *at, cap - *at, "%s%s\n", indent, line);
    }
    if (*at > cap)
        *at = cap;
}

/* ---- a host's explanation once ---- */

/* Under an anomaly's line "  <kind, 10 wide> <text>": its explanation aligned with the text. */
#define INDENT "             "

static bool same_text(const char *a, const char *b)
{
    return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

/* Whether two entries read alike (sm_fp_diff_text): the same host, item and values. */
static bool same_entry(const entry *a, const entry *b)
{
    const sm_fp_diff *x = a->d, *y = b->d;
    return strcmp(a->host, b->host) == 0 && strcmp(x->item, y->item) == 0 &&
           same_text(x->host_value, y->host_value) && same_text(x->fleet_value, y->fleet_value) &&
           x->hosts_with_fleet_value == y->hosts_with_fleet_value &&
           x->fleet_hosts == y->fleet_hosts;
}

static bool seen(const entry *v, size_t n, const entry *x)
{
    for (size_t i = 0; i < n; i++)
        if (same_entry(&v[i], x))
            return true;
    return false;
}

size_t sm_explain_host_note(const sm_explanation *e, const char *host, char *buf, size_t cap)
{
    entry shown[SM_EXPLAIN_HOST_MAX];
    size_t n_shown = 0, at = 0;
    if (cap > 0)
        buf[0] = '\0';
    for (size_t i = 0; e != NULL && i < e->n; i++) {
        const sm_explained *x = &e->v[i];
        for (size_t h = 0; h < 2; h++) {
            size_t n = strcmp(x->host[h], host) == 0 ? x->d[h].n : 0;
            for (size_t k = 0; k < n && k < SM_EXPLAIN_TEXT_MAX; k++) {
                entry y = {x->host[h], &x->d[h].v[k], h};
                if (n_shown == SM_EXPLAIN_HOST_MAX || seen(shown, n_shown, &y))
                    continue;
                char line[512];
                sm_fp_diff_text(n_shown == 0 ? host : NULL, y.d, line, sizeof line);
                at += (size_t)snprintf(at < cap ? buf + at : NULL, at < cap ? cap - at : 0, "%s%s",
                                       n_shown ? "; " : "", line);
                shown[n_shown++] = y;
            }
        }
    }
    return at;
}

static bool same_host(const sm_anomaly *a, const sm_anomaly *b)
{
    return strncmp(a->host, b->host, sizeof a->host) == 0;
}

/* The anomalies' indexes, those of one host together: hosts in the order of their first
 * anomaly, each host's anomalies in theirs. */
static void order_by_host(const sm_anomalies *an, size_t *order, bool *placed)
{
    size_t k = 0;
    for (size_t i = 0; i < an->n; i++) {
        if (placed[i])
            continue;
        for (size_t j = i; j < an->n; j++) {
            if (!placed[j] && same_host(&an->v[i], &an->v[j])) {
                order[k++] = j;
                placed[j] = true;
            }
        }
    }
}

/* Appends the lines of anomaly i's explanation that are not in shown[0..*n_shown) and adds
 * them there. */
static void new_lines(const sm_explanation *e, size_t i, entry *shown, size_t *n_shown, char *buf,
                      size_t cap, size_t *at)
{
    if (!sm_explain_any(e, i))
        return;
    entry v[2 * SM_EXPLAIN_JSON_MAX];
    size_t n = merged(e, i, SM_EXPLAIN_TEXT_MAX, v);
    for (size_t k = 0; k < n && *at < cap; k++) {
        if (seen(shown, *n_shown, &v[k]))
            continue;
        char line[512];
        sm_fp_diff_text(v[k].host, v[k].d, line, sizeof line);
        *at += (size_t)snprintf(buf + *at, cap - *at, "%s%s\n", INDENT, line);
        shown[(*n_shown)++] = v[k];
    }
}

int sm_explain_text(const sm_anomalies *an, const sm_explanation *e, char *buf, size_t cap,
                    size_t *at)
{
    size_t n = an->n, n_shown = 0;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    bool *placed = calloc(n ? n : 1, sizeof *placed);
    /* Each anomaly shows at most SM_EXPLAIN_TEXT_MAX lines. */
    entry *shown = n > SIZE_MAX / SM_EXPLAIN_TEXT_MAX / sizeof(entry)
                       ? NULL
                       : malloc((n ? n : 1) * SM_EXPLAIN_TEXT_MAX * sizeof *shown);
    int rc = order && placed && shown ? 0 : SM_ENOMEM;
    if (rc == 0)
        order_by_host(an, order, placed);
    for (size_t g = 0; rc == 0 && g < n && *at < cap;) {
        size_t end = g;
        while (end < n && same_host(&an->v[order[end]], &an->v[order[g]]))
            end++;
        for (size_t k = g; k < end && *at < cap; k++) {
            const sm_anomaly *a = &an->v[order[k]];
            *at +=
                (size_t)snprintf(buf + *at, cap - *at, "  %-10s ", sm_anomaly_kind_name(a->kind));
            if (*at < cap)
                *at += (size_t)sm_anomaly_text(a, buf + *at, cap - *at);
            if (*at < cap)
                *at += (size_t)snprintf(buf + *at, cap - *at, "\n");
        }
        /* After the host's last flag, what its flags' explanations say that was not said. */
        for (size_t k = g; k < end && *at < cap; k++)
            new_lines(e, order[k], shown, &n_shown, buf, cap, at);
        g = end;
    }
    if (*at > cap)
        *at = cap;
    free(order);
    free(placed);
    free(shown);
    return rc;
}
