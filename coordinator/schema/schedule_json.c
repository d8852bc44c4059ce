/* Recurring runs' JSON (schedule_json.h). */
#include "coordinator/schema/schedule_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/analysis/analysis.h"
#include "coordinator/schema/apijson.h"
#include "coordinator/model/spec.h"
#include "proto/json.h"

void sm_schedule_req_fini(sm_schedule_req *r)
{
    if (!r)
        return;
    free(r->spec_json);
    free(r->hosts_json);
    r->spec_json = r->hosts_json = NULL;
}

int sm_schedule_spec(const char *spec_json, const char *hosts_json, char **out, sm_error *err)
{
    *out = NULL;
    if (!hosts_json || !*hosts_json) {
        *out = strdup(spec_json);
        return *out ? 0 : sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    cJSON *spec = cJSON_Parse(spec_json), *hosts = cJSON_Parse(hosts_json);
    int rc = 0;
    if (!cJSON_IsObject(spec) || !cJSON_IsArray(hosts)) {
        rc = sm_error_set(err, SM_EPARSE, "schedule: its spec or hosts do not parse");
    } else {
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "hosts");
        cJSON_AddItemToObject(spec, "hosts", hosts);
        hosts = NULL;
        if (!(*out = cJSON_PrintUnformatted(spec)))
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    cJSON_Delete(spec);
    cJSON_Delete(hosts);
    return rc;
}

/* "hosts": 1 to SM_SPEC_HOSTS_MAX names, each once, into *out (compact JSON). */
static int parse_hosts(const cJSON *h, char **out, sm_error *err)
{
    sm_error_field(err, "hosts");
    const int n = cJSON_GetArraySize(h);
    if (!cJSON_IsArray(h) || n < 1 || n > SM_SPEC_HOSTS_MAX)
        return sm_error_set(err, SM_EINVAL,
                            "hosts: expected a list of 1 to %d host names, e.g. [\"h1\",\"h2\"]",
                            SM_SPEC_HOSTS_MAX);
    int i = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, h)
    {
        if (!cJSON_IsString(x) || !x->valuestring[0] || strlen(x->valuestring) > 64)
            return sm_error_set(err, SM_EINVAL, "hosts[%d]: expected a host name of 1 to 64 bytes",
                                i);
        i++;
    }
    *out = cJSON_PrintUnformatted(h);
    return *out ? 0 : sm_error_set(err, SM_ENOMEM, "out of memory");
}

/* "spec" or "preset" into the spec POST /api/runs would store. */
static int parse_spec(const cJSON *req, char **spec_json, sm_error *err)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(req, "spec");
    const cJSON *preset = cJSON_GetObjectItemCaseSensitive(req, "preset");
    if ((spec != NULL) == (preset != NULL)) {
        sm_error_field(err, "spec");
        return sm_error_set(err, SM_EINVAL,
                            "spec: give either \"spec\": {...} or \"preset\": NAME (GET "
                            "/api/presets lists them)");
    }
    if (spec && !cJSON_IsObject(spec)) {
        sm_error_field(err, "spec");
        return sm_error_set(err, SM_EINVAL, "spec: expected an object, a run spec");
    }
    cJSON *wrap = NULL;
    if (preset) {
        wrap = cJSON_CreateObject();
        if (!wrap || !cJSON_AddItemToObject(wrap, "preset", cJSON_Duplicate(preset, 1))) {
            cJSON_Delete(wrap);
            return sm_error_set(err, SM_ENOMEM, "out of memory");
        }
    }
    char *text = cJSON_PrintUnformatted(preset ? wrap : spec);
    cJSON_Delete(wrap);
    if (!text)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    int rc = sm_api_run_request(text, strlen(text), spec_json, err);
    free(text);
    if (rc && !preset) {
        char inner[SM_ERR_FIELD_MAX];
        snprintf(inner, sizeof inner, "%s", err->field);
        sm_error_field(err, inner[0] ? "spec.%s" : "spec", inner);
    }
    return rc;
}

/* "every" (text or whole seconds) or "cron", exactly one. */
static int parse_when(const cJSON *req, sm_schedule_req *r, sm_error *err)
{
    const cJSON *every = cJSON_GetObjectItemCaseSensitive(req, "every");
    const cJSON *cron = cJSON_GetObjectItemCaseSensitive(req, "cron");
    if ((every != NULL) == (cron != NULL)) {
        sm_error_field(err, "every");
        return sm_error_set(err, SM_EINVAL,
                            "every: give either \"every\": \"15m\" (s, m, h, d; at least 10 s) or "
                            "\"cron\": \"0 3 * * *\" (UTC)");
    }
    if (every) {
        char text[32];
        if (cJSON_IsNumber(every) && every->valuedouble >= 0 && every->valuedouble < 1e12 &&
            every->valuedouble == floor(every->valuedouble))
            snprintf(text, sizeof text, "%.0f", every->valuedouble);
        else if (cJSON_IsString(every))
            snprintf(text, sizeof text, "%.31s", every->valuestring);
        else
            snprintf(text, sizeof text, "?");
        return sm_every_parse(text, &r->every_s, err);
    }
    sm_cron c;
    if (!cJSON_IsString(cron)) {
        sm_error_field(err, "cron");
        return sm_error_set(err, SM_EINVAL, "cron: expected a string such as \"0 3 * * *\"");
    }
    int rc = sm_cron_parse(cron->valuestring, &c, err);
    if (rc)
        return rc;
    if (sm_cron_next(&c, 0) < 0 && sm_cron_next(&c, 4102444800000LL) < 0)
        return sm_error_set(err, SM_EINVAL, "cron: \"%.64s\" never fires (no such day)",
                            cron->valuestring);
    snprintf(r->cron, sizeof r->cron, "%s", cron->valuestring);
    return 0;
}

static int parse_fields(const cJSON *req, sm_schedule_req *r, sm_error *err)
{
    static const char *const allowed[] = {"name", "spec",  "preset", "every",
                                          "cron", "hosts", "webhook"};
    const cJSON *item;
    cJSON_ArrayForEach(item, req)
    {
        size_t k = 0;
        while (k < sizeof allowed / sizeof *allowed && strcmp(item->string, allowed[k]) != 0)
            k++;
        if (k == sizeof allowed / sizeof *allowed) {
            sm_error_field(err, "%.60s", item->string);
            return sm_error_set(err, SM_EINVAL,
                                "%.64s: not a field of a schedule (name, spec or preset, every "
                                "or cron, hosts, webhook)",
                                item->string);
        }
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(req, "name");
    if (!cJSON_IsString(name) || !name->valuestring[0] ||
        strlen(name->valuestring) >= sizeof r->name) {
        sm_error_field(err, "name");
        return sm_error_set(err, SM_EINVAL, "name: expected a name of 1 to %zu bytes",
                            sizeof r->name - 1);
    }
    snprintf(r->name, sizeof r->name, "%s", name->valuestring);
    int rc = parse_when(req, r, err);
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(req, "hosts");
    if (!rc && hosts)
        rc = parse_hosts(hosts, &r->hosts_json, err);
    const cJSON *hook = cJSON_GetObjectItemCaseSensitive(req, "webhook");
    if (!rc && hook) {
        rc = sm_webhook_url_check(cJSON_IsString(hook) ? hook->valuestring : NULL, err);
        if (!rc)
            snprintf(r->webhook, sizeof r->webhook, "%s", hook->valuestring);
    }
    if (!rc)
        rc = parse_spec(req, &r->spec_json, err);
    return rc;
}

/* Whether the spec, with the hosts put in, is one POST /api/runs would take. */
static int check_spec(const sm_schedule_req *r, sm_error *err)
{
    char *eff = NULL;
    int rc = sm_schedule_spec(r->spec_json, r->hosts_json, &eff, err);
    sm_spec spec;
    if (!rc && (rc = sm_spec_decode(eff, strlen(eff), &spec, err)) == 0)
        sm_spec_fini(&spec);
    else if (rc) {
        char inner[SM_ERR_FIELD_MAX];
        snprintf(inner, sizeof inner, "%s", err->field);
        /* The hosts the schedule gives are its own field. */
        if (strcmp(inner, "hosts") == 0 && r->hosts_json[0])
            sm_error_field(err, "hosts");
        else
            sm_error_field(err, inner[0] ? "spec.%s" : "spec", inner);
    }
    free(eff);
    return rc;
}

int sm_schedule_req_parse(const char *body, size_t len, sm_schedule_req *out, sm_error *err)
{
    sm_error_field(err, "%s", "");
    cJSON *req = cJSON_ParseWithLength(body, len);
    if (!cJSON_IsObject(req)) {
        cJSON_Delete(req);
        return sm_error_set(err, SM_EPARSE,
                            "the body is not a JSON object ({\"name\", \"spec\" or \"preset\", "
                            "\"every\" or \"cron\"})");
    }
    sm_schedule_req r;
    memset(&r, 0, sizeof r);
    int rc = parse_fields(req, &r, err);
    cJSON_Delete(req);
    if (!rc && !r.hosts_json && !(r.hosts_json = strdup("")))
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    if (!rc)
        rc = check_spec(&r, err);
    if (rc) {
        sm_schedule_req_fini(&r);
        return rc;
    }
    *out = r;
    return 0;
}

/* ---- the webhook body ---- */

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* An anomaly as sm_anomalies_json wrote it, back into the struct sm_anomaly_text reads;
 * false for a kind this build does not know. */
static bool anomaly_of(const cJSON *o, sm_anomaly *a)
{
    memset(a, 0, sizeof *a);
    const char *kind = str(o, "kind"), *dir = str(o, "direction");
    int k = 0;
    while (k <= SM_ANOMALY_FLEET_MOVE && strcmp(kind, sm_anomaly_kind_name((sm_anomaly_kind)k)))
        k++;
    if (k > SM_ANOMALY_FLEET_MOVE)
        return false;
    a->kind = (sm_anomaly_kind)k;
    for (int d = SM_DIR_SLOWER; d <= SM_DIR_LOWER; d++)
        if (strcmp(dir, sm_anomaly_dir_name((sm_anomaly_dir)d)) == 0)
            a->dir = (sm_anomaly_dir)d;
    snprintf(a->host, sizeof a->host, "%s", str(o, "host"));
    snprintf(a->role, sizeof a->role, "%s", str(o, "role"));
    snprintf(a->test, sizeof a->test, "%s", str(o, "test"));
    snprintf(a->metric, sizeof a->metric, "%s", str(o, "metric"));
    snprintf(a->unit, sizeof a->unit, "%s", str(o, "unit"));
    snprintf(a->rule, sizeof a->rule, "%s", str(o, "rule"));
    a->ratio = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ratio"));
    a->at_limit = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "at_limit"));
    a->value = num(o, "value");
    a->reference = num(o, "reference");
    a->z = num(o, "z");
    a->rel = num(o, "rel");
    a->floor = num(o, "floor");
    a->fleet_move = num(o, "fleet_move");
    if (isnan(a->fleet_move))
        a->fleet_move = 0;
    return true;
}

static bool is_flag(sm_anomaly_kind k)
{
    return k == SM_ANOMALY_FLEET || k == SM_ANOMALY_SLOW_HOST || k == SM_ANOMALY_SLOW_LINK;
}

/* Whether the anomalies body prev holds a flag for host and test. */
static bool had_flag(const cJSON *prev, const char *host, const char *test)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(prev, "anomalies"))
    {
        sm_anomaly a;
        if (anomaly_of(o, &a) && is_flag(a.kind) && strcmp(a.host, host) == 0 &&
            strcmp(a.test, test) == 0)
            return true;
    }
    return false;
}

static bool add_item(cJSON *arr, const sm_anomaly *a)
{
    char text[512];
    sm_anomaly_text(a, text, sizeof text);
    cJSON *o = cJSON_CreateObject();
    return o && sm_json_append(arr, o) && sm_json_put_str(o, "host", a->host) &&
           sm_json_put_str(o, "test", a->test) && sm_json_put_str(o, "metric", a->metric) &&
           sm_json_put_str(o, "text", text);
}

static cJSON *head(const sm_hook_run *r, uint64_t base)
{
    cJSON *root = cJSON_CreateObject();
    /* The event first, where a receiver looks; its word is set once the anomalies are read. */
    cJSON *s = root && cJSON_AddStringToObject(root, "event", "flag")
                   ? cJSON_AddObjectToObject(root, "schedule")
                   : NULL;
    bool ok = s && sm_json_put_u64_str(s, "id", r->schedule_id) &&
              sm_json_put_str(s, "name", r->schedule_name ? r->schedule_name : "");
    cJSON *run = ok ? cJSON_AddObjectToObject(root, "run") : NULL;
    ok = run && sm_json_put_u64_str(run, "id", r->run_id) &&
         sm_json_put_str(run, "name", r->run_name ? r->run_name : "") &&
         cJSON_AddNumberToObject(run, "finished_ms", (double)r->finished_ms) &&
         (base ? sm_json_put_u64_str(root, "baseline_run", base)
               : cJSON_AddNullToObject(root, "baseline_run") != NULL);
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* "verdict", "summary" and "inconclusive" (the cells not judged: host, test, verdict, why)
 * copied from the anomalies body now, when it has them. false: out of memory. */
static bool add_verdict(cJSON *root, const cJSON *now)
{
    static const char *const keys[] = {"verdict", "summary"};
    for (size_t i = 0; i < 2; i++) {
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(now, keys[i]));
        if (v && !cJSON_AddStringToObject(root, keys[i], v))
            return false;
    }
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(now, "inconclusive");
    if (!cJSON_IsArray(list))
        return true;
    cJSON *out = cJSON_AddArrayToObject(root, "inconclusive");
    if (!out)
        return false;
    const cJSON *o;
    cJSON_ArrayForEach(o, list)
    {
        cJSON *x = cJSON_CreateObject();
        if (!x || !cJSON_AddItemToArray(out, x)) {
            cJSON_Delete(x);
            return false;
        }
        static const char *const fields[][2] = {
            {"row", "host"}, {"test", "test"}, {"verdict", "verdict"}, {"why", "why"}};
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
            const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, fields[i][0]));
            if (!cJSON_AddStringToObject(x, fields[i][1], v ? v : ""))
                return false;
        }
    }
    return true;
}

int sm_schedule_hook_body(const sm_hook_run *r, const char *run_json, const char *prev_json,
                          const char **event, char **body, sm_error *err)
{
    *event = NULL;
    *body = NULL;
    cJSON *now = run_json ? cJSON_Parse(run_json) : NULL;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(now, "anomalies");
    if (!cJSON_IsArray(list)) {
        cJSON_Delete(now);
        return sm_error_set(err, SM_EPARSE, "run %llu: not an anomalies body",
                            (unsigned long long)r->run_id);
    }
    cJSON *prev = prev_json ? cJSON_Parse(prev_json) : NULL;
    const cJSON *b =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(now, "baseline"), "id");
    const uint64_t base = cJSON_IsString(b) ? strtoull(b->valuestring, NULL, 10) : 0;
    cJSON *root = head(r, base);
    cJSON *flags = root ? cJSON_AddArrayToObject(root, "flags") : NULL;
    cJSON *regs = flags ? cJSON_AddArrayToObject(root, "regressions") : NULL;
    bool ok = regs != NULL;
    size_t nf = 0, nr = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, list)
    {
        sm_anomaly a;
        if (!ok || !anomaly_of(o, &a))
            continue;
        if (a.kind == SM_ANOMALY_REGRESSION) {
            ok = add_item(regs, &a);
            nr++;
        } else if (is_flag(a.kind) && !had_flag(prev, a.host, a.test)) {
            ok = add_item(flags, &a);
            nf++;
        }
    }
    /* The run's verdict: a run that could not judge what it was scheduled to judge says so,
     * with the cells it could not judge, even when it raised nothing new. */
    const char *verdict = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(now, "verdict"));
    const bool unjudged =
        verdict && (strcmp(verdict, "inconclusive") == 0 || strcmp(verdict, "failed") == 0);
    ok = ok && add_verdict(root, now);
    int rc = 0;
    if (!ok) {
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    } else if (nf + nr > 0 || unjudged) {
        *event = nr ? "regression" : nf ? "flag" : "inconclusive";
        cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "event");
        if (!cJSON_SetValuestring(ev, *event) || !(*body = cJSON_PrintUnformatted(root)))
            rc = sm_error_set(err, SM_ENOMEM, "out of memory");
        if (rc)
            *event = NULL;
    }
    cJSON_Delete(root);
    cJSON_Delete(prev);
    cJSON_Delete(now);
    return rc;
}

int sm_schedule_cause_body(const sm_hook_run *r, const char *xp_json, const char **event,
                           char **body, sm_error *err)
{
    *event = NULL;
    *body = NULL;
    cJSON *xp = xp_json ? cJSON_Parse(xp_json) : NULL;
    static const char *const fields[] = {"run", "host", "test", "state", "summary"};
    bool is_report = cJSON_IsObject(xp);
    for (size_t i = 0; is_report && i < sizeof fields / sizeof fields[0]; i++)
        is_report = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(xp, fields[i]));
    const cJSON *cause = cJSON_GetObjectItemCaseSensitive(xp, "cause");
    if (!is_report || !(cJSON_IsObject(cause) || cJSON_IsNull(cause))) {
        cJSON_Delete(xp);
        return sm_error_set(err, SM_EPARSE, "run %llu: not an experiment's report",
                            (unsigned long long)r->run_id);
    }
    cJSON *root = head(r, 0);
    cJSON_DeleteItemFromObjectCaseSensitive(root, "baseline_run");
    cJSON *out = root ? cJSON_AddObjectToObject(root, "experiment") : NULL;
    bool ok = out != NULL;
    for (size_t i = 0; ok && i < sizeof fields / sizeof fields[0]; i++)
        ok = sm_json_put(out, fields[i],
                         cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(xp, fields[i]), 1));
    ok = ok && sm_json_put(out, "cause", cJSON_Duplicate(cause, 1));
    /* The shares as the report wrote them, not as 15 digits. */
    ok = ok && sm_json_exact_numbers(out);
    const char *word = cJSON_IsObject(cause) ? "cause" : "experiment";
    int rc = 0;
    if (!ok || !cJSON_SetValuestring(cJSON_GetObjectItemCaseSensitive(root, "event"), word) ||
        !(*body = cJSON_PrintUnformatted(root)))
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    else
        *event = word;
    cJSON_Delete(root);
    cJSON_Delete(xp);
    return rc;
}
