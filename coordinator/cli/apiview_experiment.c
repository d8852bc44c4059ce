/* Views of an experiment's plan and answer, and the body that asks for one. */
#include "coordinator/cli/apiview_internal.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int sm_apiview_experiment_decode(const char *json, size_t len, sm_apiview_experiment *out,
                                 sm_error *err)
{
    static const char none[] = "no \"plan\" or \"suspects\" list";
    memset(out, 0, sizeof *out);
    sm_apiview_experiment x;
    memset(&x, 0, sizeof x);
    int rc = av_doc_parse(json, len, none, &x.doc, err);
    if (rc)
        return rc;
    const cJSON *root = x.doc->root;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "suspects");
    if (!cJSON_IsArray(list))
        list = cJSON_GetObjectItemCaseSensitive(root, "plan");
    if (!cJSON_IsArray(list)) {
        rc = sm_error_set(err, SM_EPARSE, "%s", none);
        goto fail;
    }
    x.run = av_str(root, "run");
    x.explains = av_text(root, "explains");
    x.host = av_text(root, "host");
    x.test = av_text(root, "test");
    x.unit = av_text(root, "unit");
    x.state = av_text(root, "state");
    x.summary = av_text(root, "summary");
    x.jobs_max = av_num(root, "jobs_max");
    x.n = av_count(list);
    if ((rc = av_calloc((void **)&x.v, x.n, sizeof *x.v, "suspects", err)))
        goto fail;
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        sm_apiview_suspect *s = &x.v[i++];
        s->item = av_text(e, "item");
        s->label = av_text(e, "label");
        s->host_value = av_text(e, "host_value");
        s->fleet_value = av_text(e, "fleet_value");
        s->treatment = av_str(e, "treatment");
        if (s->treatment && !s->treatment[0])
            s->treatment = NULL;
        s->verdict = av_text(e, "verdict");
        s->why = av_str(e, "why");
        if (!s->why || !s->why[0])
            s->why = av_text(e, "why_untested");
        s->share = av_num(e, "share");
        s->lo = av_num(e, "lo");
        s->hi = av_num(e, "hi");
        s->control = av_num(e, "control_median");
        s->treated = av_num(e, "treated_median");
        s->fleet = av_num(e, "fleet_median");
        s->n_control = av_num(e, "n_control");
        s->n_treated = av_num(e, "n_treated");
        s->n_fleet = av_num(e, "n_fleet");
        /* A plan names the reverse by its text; an answer gives it as an object. */
        const cJSON *rv = cJSON_GetObjectItemCaseSensitive(e, "reverse");
        s->why_no_reverse = av_text(e, "why_no_reverse");
        s->rev_host = s->rev_treatment = NULL;
        s->rev_verdict = s->rev_why = "";
        s->rev_share = s->rev_lo = s->rev_hi = s->rev_control = s->rev_treated = NAN;
        if (cJSON_IsString(rv) && rv->valuestring[0]) {
            s->rev_treatment = rv->valuestring;
            s->rev_host = av_text(e, "reverse_host");
        } else if (cJSON_IsObject(rv)) {
            s->rev_treatment = av_text(rv, "treatment");
            s->rev_host = av_text(rv, "host");
            s->rev_verdict = av_text(rv, "verdict");
            s->rev_why = av_text(rv, "why");
            s->rev_share = av_num(rv, "share");
            s->rev_lo = av_num(rv, "lo");
            s->rev_hi = av_num(rv, "hi");
            s->rev_control = av_num(rv, "control_median");
            s->rev_treated = av_num(rv, "treated_median");
        }
    }
    *out = x;
    return 0;
fail:
    sm_apiview_experiment_fini(&x);
    return rc;
}

void sm_apiview_experiment_fini(sm_apiview_experiment *x)
{
    if (!x)
        return;
    free(x->v);
    sm_apiview_doc_free(x->doc);
    memset(x, 0, sizeof *x);
}

int sm_apiview_experiment_request(const char *host, const char *test, char **body, sm_error *err)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    if (ok && host)
        ok = cJSON_AddStringToObject(o, "host", host) != NULL;
    if (ok && test)
        ok = cJSON_AddStringToObject(o, "test", test) != NULL;
    *body = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!*body)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    return 0;
}
