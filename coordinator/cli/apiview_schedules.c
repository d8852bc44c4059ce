/* Views of the recurring runs' answers, and the body that adds one. */
#include "coordinator/cli/apiview_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sm_apiview_schedules_decode(const char *json, size_t len, sm_apiview_schedules *out,
                                sm_error *err)
{
    static const char none[] = "no \"schedules\" list";
    memset(out, 0, sizeof *out);
    sm_apiview_schedules s;
    memset(&s, 0, sizeof s);
    int rc = av_doc_parse(json, len, none, &s.doc, err);
    if (rc)
        return rc;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(s.doc->root, "schedules");
    if (!cJSON_IsArray(list)) {
        rc = sm_error_set(err, SM_EPARSE, "%s", none);
        goto fail;
    }
    s.n = av_count(list);
    if ((rc = av_calloc((void **)&s.v, s.n, sizeof *s.v, "schedules", err)))
        goto fail;
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        sm_apiview_schedule *x = &s.v[i++];
        x->id = av_str(e, "id");
        x->name = av_str(e, "name");
        x->cron = av_str(e, "cron");
        x->every_s = av_num(e, "every_s");
        x->next_ms = av_num(e, "next_ms");
        const cJSON *last = cJSON_GetObjectItemCaseSensitive(e, "last_run");
        x->has_last_run = cJSON_IsObject(last);
        x->last_run_id = av_str(last, "id");
        x->last_run_state = av_str(last, "state");
        const double runs = av_num(e, "runs");
        x->runs = runs == runs ? runs : 0; /* NaN: absent */
        x->paused = av_true(e, "paused");
    }
    *out = s;
    return 0;
fail:
    sm_apiview_schedules_fini(&s);
    return rc;
}

void sm_apiview_schedules_fini(sm_apiview_schedules *s)
{
    free(s->v);
    sm_apiview_doc_free(s->doc);
    memset(s, 0, sizeof *s);
}

void sm_apiview_schedule_made_decode(const char *json, size_t len, sm_apiview_schedule_made *out)
{
    memset(out, 0, sizeof *out);
    sm_error ignored = {0};
    if (av_doc_parse(json, len, "not JSON", &out->doc, &ignored) != 0)
        return;
    const cJSON *root = out->doc->root;
    out->id = av_str(root, "id");
    out->webhook_secret = av_str(root, "webhook_secret");
    const double next = av_num(root, "next_ms");
    out->next_ms = next == next ? next : 0; /* NaN: absent */
}

void sm_apiview_schedule_made_fini(sm_apiview_schedule_made *m)
{
    sm_apiview_doc_free(m->doc);
    memset(m, 0, sizeof *m);
}

/* "a,b" as a list of names under "hosts" in b; a name longer than 79 bytes is cut there. */
static bool put_hosts(cJSON *b, const char *list)
{
    cJSON *hosts = cJSON_AddArrayToObject(b, "hosts");
    bool ok = hosts != NULL;
    for (const char *p = list; ok && *p;) {
        const size_t n = strcspn(p, ",");
        char name[80];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        ok = cJSON_AddItemToArray(hosts, cJSON_CreateString(name));
        p += n + (p[n] == ',');
    }
    return ok;
}

int sm_apiview_schedule_request(const sm_apiview_schedule_req *r, char **body, sm_error *err)
{
    cJSON *b = cJSON_CreateObject();
    bool ok = b && cJSON_AddStringToObject(b, "name", r->name);
    if (ok && r->spec) {
        cJSON *spec = cJSON_ParseWithLength(r->spec, r->spec_len);
        ok = spec && cJSON_AddItemToObject(b, "spec", spec);
        if (!ok)
            cJSON_Delete(spec);
    } else if (ok) {
        ok = cJSON_AddStringToObject(b, "preset", r->preset) != NULL;
    }
    if (ok)
        ok = r->every ? cJSON_AddStringToObject(b, "every", r->every) != NULL
                      : cJSON_AddStringToObject(b, "cron", r->cron) != NULL;
    if (ok && r->hosts && strcmp(r->hosts, "all") != 0)
        ok = put_hosts(b, r->hosts);
    if (ok && r->webhook)
        ok = cJSON_AddStringToObject(b, "webhook", r->webhook) != NULL;
    char *text = ok ? cJSON_PrintUnformatted(b) : NULL;
    cJSON_Delete(b);
    if (!text)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    *body = text;
    return 0;
}
