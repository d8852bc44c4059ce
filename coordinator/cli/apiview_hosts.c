/* Views of the hosts' fingerprints: the side by side of several, and one host's. */
#include "coordinator/cli/apiview_internal.h"

#include <stdlib.h>
#include <string.h>

int sm_apiview_fp_diff_decode(const char *json, size_t len, size_t max_hosts,
                              sm_apiview_fp_diff *out, sm_error *err)
{
    memset(out, 0, sizeof *out);
    sm_apiview_fp_diff d;
    memset(&d, 0, sizeof d);
    int rc = av_doc_parse(json, len, "not JSON", &d.doc, err);
    if (rc)
        return rc;
    const cJSON *root = d.doc->root;
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(root, "hosts");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "items");
    const cJSON *same = cJSON_GetObjectItemCaseSensitive(root, "same");
    d.n_hosts = av_count(hosts);
    if (!cJSON_IsArray(hosts) || !cJSON_IsArray(items) || !cJSON_IsNumber(same) || d.n_hosts < 2 ||
        d.n_hosts > max_hosts) {
        rc = sm_error_set(err, SM_EPARSE, "expected hosts, same and items");
        goto fail;
    }
    d.same = same->valuedouble;
    d.n_items = av_count(items);
    if ((rc = av_calloc((void **)&d.hosts, d.n_hosts, sizeof *d.hosts, "hosts", err)) ||
        (rc = av_calloc((void **)&d.items, d.n_items, sizeof *d.items, "items", err)))
        goto fail;
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, hosts)
    {
        if (!cJSON_IsString(e)) {
            rc = sm_error_set(err, SM_EPARSE, "hosts: expected names");
            goto fail;
        }
        d.hosts[i++] = e->valuestring;
    }
    i = 0;
    cJSON_ArrayForEach(e, items)
    {
        sm_apiview_fp_diff_item *x = &d.items[i++];
        const cJSON *values = cJSON_GetObjectItemCaseSensitive(e, "values");
        x->item = av_str(e, "item");
        if (x->item == NULL || !cJSON_IsObject(values)) {
            rc = sm_error_set(err, SM_EPARSE, "items: expected item and values");
            goto fail;
        }
        if ((rc = av_calloc((void **)&x->values, d.n_hosts, sizeof *x->values, "items", err)))
            goto fail;
        for (size_t h = 0; h < d.n_hosts; h++)
            x->values[h] = av_str(values, d.hosts[h]);
    }
    *out = d;
    return 0;
fail:
    sm_apiview_fp_diff_fini(&d);
    return rc;
}

void sm_apiview_fp_diff_fini(sm_apiview_fp_diff *d)
{
    for (size_t i = 0; d->items && i < d->n_items; i++)
        free(d->items[i].values);
    free(d->items);
    free(d->hosts);
    sm_apiview_doc_free(d->doc);
    memset(d, 0, sizeof *d);
}

static void seen_from(const cJSON *o, sm_apiview_fp_seen *out)
{
    const double first = av_num(o, "first_seen_ms"), last = av_num(o, "last_seen_ms");
    out->hash = av_str(o, "hash");
    out->first_seen_ms = first == first ? first : 0; /* NaN: absent */
    out->last_seen_ms = last == last ? last : 0;
}

int sm_apiview_fingerprint_decode(const char *json, size_t len, sm_apiview_fingerprint *out,
                                  sm_error *err)
{
    memset(out, 0, sizeof *out);
    sm_apiview_fingerprint f;
    memset(&f, 0, sizeof f);
    sm_fp_init(&f.fp);
    int rc = av_doc_parse(json, len, "not JSON", &f.doc, err);
    if (rc)
        goto fail;
    const cJSON *root = f.doc->root;
    if ((rc = sm_fp_from_cjson(cJSON_GetObjectItemCaseSensitive(root, "fingerprint"), &f.fp, err)))
        goto fail;
    seen_from(root, &f.latest);
    const cJSON *hist = cJSON_GetObjectItemCaseSensitive(root, "history");
    f.n_history = av_count(hist);
    if ((rc = av_calloc((void **)&f.history, f.n_history, sizeof *f.history, "history", err)))
        goto fail;
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, hist)
    {
        seen_from(e, &f.history[i++]);
    }
    *out = f;
    return 0;
fail:
    sm_apiview_fingerprint_fini(&f);
    return rc;
}

void sm_apiview_fingerprint_fini(sm_apiview_fingerprint *f)
{
    sm_fp_fini(&f->fp);
    free(f->history);
    sm_apiview_doc_free(f->doc);
    memset(f, 0, sizeof *f);
}
