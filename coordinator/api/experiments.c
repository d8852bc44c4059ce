/* Experiments over the API: POST /api/runs/{id}/experiments plans one from an anomaly of the
 * run and starts it; GET /api/runs/{id}/experiment answers what it found. */
#include "coordinator/api/internal.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/analysis/experiment.h"
#include "coordinator/analysis/export.h"
#include "coordinator/analysis/fpdiff.h"
#include "coordinator/analysis/xpdd.h"
#include "coordinator/model/spec.h"
#include "proto/codec.h"
#include "proto/fingerprint.h"
#include "proto/json.h"
#include "proto/log.h"

/* The suspects a plan tests at most, unless the request says; and the repetitions of each of
 * its cells (the control and one per tested suspect), interleaved, until the median's CI is
 * within +-5% or max ran, with as many again at most for disturbed samples. */
#define XP_SUSPECTS_DEFAULT 4
#define XP_SUSPECTS_MAX     8
#define XP_REPS_MIN         5
#define XP_REPS_MAX         15
#define XP_WARMUP           1
#define XP_REMEASURE        5

/* What the request asks: the anomaly's host and test (NULL: the first that can be explained). */
typedef struct xp_request {
    const char *host, *test;
    size_t suspects;
} xp_request;

static int parse_request(const char *body, size_t blen, cJSON **doc, xp_request *q, sm_error *err)
{
    static const char *const keys[] = {"host", "test", "suspects"};
    memset(q, 0, sizeof *q);
    q->suspects = XP_SUSPECTS_DEFAULT;
    *doc = NULL;
    if (blen == 0)
        return 0;
    int rc = sm_json_parse_object(body, blen, "experiment", doc, err);
    uint32_t seen = 0;
    if (rc == 0)
        rc = sm_json_check_keys(*doc, "experiment", keys, sizeof keys[0], 3, 0, &seen, err);
    if (rc == 0 && (seen & 1))
        rc = sm_json_get_string(*doc, "experiment", "host", &q->host, err);
    if (rc == 0 && (seen & 2))
        rc = sm_json_get_string(*doc, "experiment", "test", &q->test, err);
    if (rc == 0 && (seen & 4)) {
        uint64_t n = 0;
        rc = sm_json_get_uint(cJSON_GetObjectItemCaseSensitive(*doc, "suspects"), "experiment",
                              "suspects", XP_SUSPECTS_MAX, false, &n, err);
        if (rc == 0 && n == 0)
            rc = sm_error_set(err, SM_EINVAL, "experiment: suspects: at least 1");
        q->suspects = (size_t)n;
    }
    return rc;
}

static const char *str(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* The first anomaly of the run's that an experiment can explain and the request names: a fleet
 * or regression anomaly of a host's own test (not a ratio, not a pair's row), of test q->test
 * or else the first whose test holds it. */
static const cJSON *pick_anomaly(const cJSON *an, const xp_request *q)
{
    const cJSON *a, *part = NULL; /* the first whose test holds q->test, when none is it */
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(an, "anomalies"))
    {
        const char *kind = str(a, "kind"), *host = str(a, "host"), *test = str(a, "test");
        if (!kind || !host || !test || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "ratio")))
            continue;
        if ((strcmp(kind, "fleet") != 0 && strcmp(kind, "regression") != 0) ||
            strstr(host, "->") != NULL)
            continue;
        if (q->host && strcmp(q->host, host) != 0)
            continue;
        if (!q->test || strcmp(q->test, test) == 0)
            return a;
        if (!part && strstr(test, q->test))
            part = a;
    }
    return part;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The anomaly's differences from the fleet (or, for a regression, its host's changes since the
 * baseline: the value before is what the host had when it was good), in rank order. */
static int diffs_of(const cJSON *a, sm_fp_diffs *d, sm_error *err)
{
    const bool changes = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(a, "changes"));
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(a, changes ? "changes" : "differences");
    const int n = cJSON_GetArraySize(list);
    memset(d, 0, sizeof *d);
    d->v = calloc(n > 0 ? (size_t)n : 1, sizeof *d->v);
    if (!d->v)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    d->cap = n > 0 ? (size_t)n : 1;
    const cJSON *x;
    cJSON_ArrayForEach(x, list)
    {
        const char *item = str(x, "item");
        if (!item || strlen(item) > SM_FP_KEY_MAX)
            continue;
        sm_fp_diff *f = &d->v[d->n];
        snprintf(f->item, sizeof f->item, "%s", item);
        f->host_value = dup_or_null(str(x, changes ? "after" : "host_value"));
        f->fleet_value = dup_or_null(str(x, changes ? "before" : "fleet_value"));
        f->relevance = 1000 - (int)d->n;
        d->n++;
        if (!f->host_value)
            return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    return 0;
}

/* The host's latest fingerprint into fp (sm_fp_init'd by the caller); false when none is
 * stored or it does not decode. */
static bool latest_fp(sm_api_ctx *a, const char *host, sm_fingerprint *fp)
{
    sm_fp_row row = {0};
    bool found = false;
    sm_error err = {0};
    const bool ok = sm_store_fp_latest(a->st, host, &row, &found, &err) == 0 && found && row.json &&
                    sm_fp_decode(row.json, strlen(row.json), fp, &err) == 0;
    sm_fp_row_fini(&row);
    return ok;
}

/* The host's info.allow_experiment (docs/agent.md) in fp into buf; "none" when it does not say.
 * False when it does not: an agent from before experiments, which would run a treated job
 * untreated. */
static bool allowed_by(const sm_fingerprint *fp, char *buf, size_t cap)
{
    snprintf(buf, cap, "none");
    const sm_fp_item *it = sm_fp_get(fp, "info.allow_experiment");
    char text[64];
    if (it != NULL)
        snprintf(buf, cap, "%s", sm_fp_item_text(it, text, sizeof text));
    return it != NULL;
}

/* allowed_by of the host's latest fingerprint; false too when none is stored. */
static bool allowed(sm_api_ctx *a, const char *host, char *buf, size_t cap)
{
    sm_fingerprint fp;
    sm_fp_init(&fp);
    snprintf(buf, cap, "none");
    const bool said = latest_fp(a, host, &fp) && allowed_by(&fp, buf, cap);
    sm_fp_fini(&fp);
    return said;
}

/* The fleet hosts a reverse is tried on at most: each costs a fingerprint read. */
#define XP_REVERSE_CANDIDATES 16

/* Applies the reverses on host (its latest fingerprint) to the plan; how many it got. */
static size_t reverse_on(sm_api_ctx *a, const char *host, const sm_fp_diffs *d, sm_xp_plan *plan)
{
    sm_fingerprint fp;
    sm_fp_init(&fp);
    char allow[64];
    size_t got = 0;
    if (latest_fp(a, host, &fp) && allowed_by(&fp, allow, sizeof allow)) {
        const sm_xp_ref r = {host, allow, &fp};
        got = sm_xp_plan_reverse(plan, d, &r);
    }
    sm_fp_fini(&fp);
    return got;
}

/* Gives the plan its reverses on one fleet host (sm_xp_plan_reverse): among the first
 * XP_REVERSE_CANDIDATES other hosts with the anomaly's cell in run, in name order, whose agent
 * can apply treatments, the one that can apply the most of them (the first on a tie). Its name
 * into ref, "" when none can apply any: each tested suspect then says why, for the first such
 * host. Returns how many reverses. */
static size_t pick_reverse(sm_api_ctx *a, const sm_run_row *run, const char *host, const char *test,
                           const sm_fp_diffs *d, sm_xp_plan *plan, char *ref, size_t cap)
{
    sm_cell_row *cells = NULL;
    size_t n = 0, best = 0, tried = 0;
    sm_error err = {0};
    char last[sizeof cells->host] = "", first[sizeof cells->host] = "", allow[64];
    ref[0] = '\0';
    if (sm_store_cells_list(a->st, run->id, &cells, &n, &err) != 0)
        return 0;
    for (size_t i = 0; i < n && tried < XP_REVERSE_CANDIDATES; i++) {
        const sm_cell_row *c = &cells[i];
        sm_params p;
        sm_error perr = {0};
        char label[SM_TABLE_LABEL_MAX];
        if (c->peer[0] || strcmp(c->host, host) == 0 || strcmp(c->host, last) == 0 ||
            sm_codec_params_decode(c->params_json, strlen(c->params_json), &p, &perr) != 0)
            continue;
        sm_export_label(&p, SM_LABEL_TEST, false, label, sizeof label);
        if (strcmp(label, test) != 0)
            continue;
        snprintf(last, sizeof last, "%s", c->host);
        tried++;
        if (!allowed(a, c->host, allow, sizeof allow))
            continue;
        if (!first[0])
            snprintf(first, sizeof first, "%s", c->host);
        const size_t got = reverse_on(a, c->host, d, plan);
        if (got > best) {
            best = got;
            snprintf(ref, cap, "%s", c->host);
        }
    }
    sm_store_cells_free(cells, n);
    /* The plan holds the last host's reverses: give it the chosen one's (or the first's
     * reasons) again. */
    if (best > 0)
        reverse_on(a, ref, d, plan);
    else if (first[0])
        reverse_on(a, first, d, plan);
    for (size_t i = 0; !first[0] && i < plan->n; i++)
        if (plan->v[i].item[0] && plan->v[i].treatment[0])
            snprintf(plan->v[i].why_no_reverse, sizeof plan->v[i].why_no_reverse,
                     "no other host of the run's cell says that its agent can apply a "
                     "treatment");
    return best;
}

/* No treatment for an agent that does not know them: each suspect says why. */
static void untreatable(sm_xp_plan *plan, const char *host)
{
    for (size_t i = 0; i < plan->n; i++) {
        sm_xp_suspect *s = &plan->v[i];
        if (!s->treatment[0])
            continue;
        s->treatment[0] = '\0';
        snprintf(s->why_untested, sizeof s->why_untested,
                 "%s's agent does not say that it can apply a treatment (no "
                 "info.allow_experiment in its fingerprint): upgrade it",
                 host);
    }
    plan->tested = 0;
}

/* One test of the experiment: params (the anomaly's cell, copied) with a treatment axis of ""
 * (the control) and then, for each suspect, its treatment (reverse false) or its reverse, so
 * that within each repetition they follow each other (A B C A B C); on host alone when one is
 * named. NULL when out of memory. */
static cJSON *arm_test(const cJSON *params, const sm_xp_plan *plan, bool reverse, const char *host)
{
    cJSON *t = cJSON_Duplicate(params, 1), *axis = NULL, *hosts = NULL;
    bool ok = t && sm_json_put(t, "treatment", axis = cJSON_CreateArray()) &&
              sm_json_append(axis, cJSON_CreateString(""));
    for (size_t i = 0; ok && i < plan->n; i++) {
        const char *x = reverse ? plan->v[i].reverse : plan->v[i].treatment;
        if (x[0])
            ok = sm_json_append(axis, cJSON_CreateString(x));
    }
    if (ok && host)
        ok = sm_json_put(t, "hosts", hosts = cJSON_CreateArray()) &&
             sm_json_append(hosts, cJSON_CreateString(host));
    if (!ok) {
        cJSON_Delete(t);
        return NULL;
    }
    return t;
}

/* The spec of the experiment: the anomaly's cell on its host with the treatments; with a
 * fleet host ref (not ""), the same cell on ref with the reverses, beside its own control.
 * NULL with err set when the run has no such cell. */
static char *experiment_spec(sm_api_ctx *a, const sm_run_row *run, const char *host,
                             const char *test, const sm_xp_plan *plan, const char *ref,
                             sm_error *err)
{
    sm_cell_row *cells = NULL;
    size_t n = 0;
    if (sm_store_cells_list(a->st, run->id, &cells, &n, err) != 0)
        return NULL;
    cJSON *params = NULL;
    for (size_t i = 0; i < n && !params; i++) {
        sm_params p;
        sm_error perr = {0};
        if (cells[i].peer[0] || strcmp(cells[i].host, host) != 0 ||
            sm_codec_params_decode(cells[i].params_json, strlen(cells[i].params_json), &p, &perr) !=
                0)
            continue;
        char label[SM_TABLE_LABEL_MAX];
        sm_export_label(&p, SM_LABEL_TEST, false, label, sizeof label);
        if (strcmp(label, test) == 0)
            params = cJSON_Parse(cells[i].params_json);
    }
    sm_store_cells_free(cells, n);
    if (!params) {
        sm_error_set(err, SM_EINVAL, "run %" PRIu64 " has no cell of %s on %s", run->id, test,
                     host);
        return NULL;
    }
    const bool two = ref != NULL && ref[0] != '\0';
    char name[SM_SPEC_NAME_MAX + 1];
    snprintf(name, sizeof name, "%.50s-explain-%s", run->name, host);
    /* Each item is made where it is put, so that a put that fails (and frees it) leaves
     * nothing to free twice, and one never made leaves nothing to leak. */
    cJSON *spec = cJSON_CreateObject(), *reps = NULL, *hosts = NULL, *tests = NULL;
    bool ok =
        spec && sm_json_put_str(spec, "name", name) &&
        sm_json_put(spec, "hosts", hosts = cJSON_CreateArray()) &&
        sm_json_append(hosts, cJSON_CreateString(host)) &&
        (!two || sm_json_append(hosts, cJSON_CreateString(ref))) &&
        sm_json_put(spec, "repetitions", reps = cJSON_CreateObject()) &&
        sm_json_put_u64(reps, "min", XP_REPS_MIN) && sm_json_put_u64(reps, "max", XP_REPS_MAX) &&
        sm_json_put_double(reps, "ci_rel", 0.05) && sm_json_put_u64(spec, "warmup", XP_WARMUP) &&
        sm_json_put_u64(spec, "remeasure", XP_REMEASURE) &&
        sm_json_put(spec, "tests", tests = cJSON_CreateArray()) &&
        sm_json_append(tests, arm_test(params, plan, false, two ? host : NULL)) &&
        (!two || sm_json_append(tests, arm_test(params, plan, true, ref)));
    cJSON_Delete(params);
    return sm_json_finish(spec, ok, 0, "experiment spec", err);
}

typedef struct xp_row_arg {
    sm_experiment_row row;
    uint64_t follows; /* the experiment whose search this stage takes on; 0 none */
} xp_row_arg;

static int store_experiment(sm_api_ctx *a, uint64_t id, void *arg, sm_error *err)
{
    xp_row_arg *x = arg;
    x->row.run_id = id;
    int rc = sm_store_experiment_insert(a->st, &x->row, err);
    /* In the stage's own transaction: a restart never starts it twice. */
    if (rc == 0 && x->follows)
        rc = sm_store_experiment_set_followed(a->st, x->follows, err);
    return rc;
}

static size_t plan_summary(const sm_xp_plan *plan, const char *host, size_t jobs_max,
                           const char *ref, char *buf, size_t cap)
{
    size_t tested = 0, singles = 0, reverses = 0;
    for (size_t i = 0; i < plan->n; i++) {
        singles += plan->v[i].item[0] != '\0';
        tested += plan->v[i].treatment[0] != '\0';
        reverses += plan->v[i].reverse[0] != '\0';
    }
    if (tested == 0)
        return (size_t)snprintf(buf, cap, "none of %s's %zu suspect%s could be tested", host,
                                singles, singles == 1 ? "" : "s");
    char rev[120] = "", narrow[200] = "";
    if (reverses > 0 && ref[0])
        snprintf(rev, sizeof rev, ", and %zu reverse%s on %s beside its own control", reverses,
                 reverses == 1 ? "" : "s", ref);
    /* The search's bound, stated up front: its parts are the combination's. */
    const sm_xp_suspect *combo = plan->n ? &plan->v[plan->n - 1] : NULL;
    size_t parts = 0;
    if (combo && !combo->item[0] && combo->treatment[0])
        for (const char *p = combo->treatment; p; p = strstr(p + 1, "; "))
            parts++;
    if (parts >= 3)
        snprintf(narrow, sizeof narrow,
                 "; if only the %zu together close the gap, narrowing them down takes at most "
                 "%zu more treatments in %d stages",
                 parts, sm_xp_dd_budget(parts), sm_xp_dd_stages_max(parts));
    return (size_t)snprintf(buf, cap,
                            "%zu treatment%s on %s beside an untreated control%s, interleaved, "
                            "%d to %d repetitions each: at most %zu jobs%s",
                            tested, tested == 1 ? "" : "s", host, rev, XP_REPS_MIN, XP_REPS_MAX,
                            jobs_max, narrow);
}

/* The answer: {"run": "M" | null, "explains", "host", "test", "reverse_host" ("" none), "plan",
 * "jobs_max", "summary"}. */
static char *answer(uint64_t run_id, uint64_t parent, const char *host, const char *test,
                    const sm_xp_plan *plan, size_t jobs_max, const char *ref)
{
    char summary[512];
    plan_summary(plan, host, jobs_max, ref, summary, sizeof summary);
    char *plan_json = sm_xp_plan_json(plan);
    cJSON *root = cJSON_CreateObject();
    bool ok = root && plan_json;
    ok = ok && (run_id ? sm_json_put_u64_str(root, "run", run_id)
                       : sm_json_put(root, "run", cJSON_CreateNull()));
    ok = ok && sm_json_put_u64_str(root, "explains", parent) &&
         sm_json_put_str(root, "host", host) && sm_json_put_str(root, "test", test) &&
         sm_json_put_str(root, "reverse_host", ref) &&
         sm_json_put(root, "plan", cJSON_Parse(plan_json)) &&
         sm_json_put_u64(root, "jobs_max", jobs_max) && sm_json_put_str(root, "summary", summary);
    free(plan_json);
    return sm_json_finish(root, ok, 0, "experiment", NULL);
}

/* Plans and starts the experiment of anomaly an_obj of run. */
static int start(sm_api_ctx *a, const sm_run_row *run, const cJSON *an_obj, size_t suspects,
                 char **resp, size_t *len)
{
    const char *host = str(an_obj, "host"), *test = str(an_obj, "test");
    sm_error err = {0};
    sm_fp_diffs d = {0};
    sm_xp_plan plan = {0};
    char allow[64], *spec_json = NULL;
    int status = 0;
    if (diffs_of(an_obj, &d, &err) != 0) {
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    const bool knows = allowed(a, host, allow, sizeof allow);
    if (sm_xp_plan_make_for(host, &d, allow, suspects, &plan, &err) != 0) {
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    if (!knows)
        untreatable(&plan, host);
    size_t cells = 1;
    for (size_t i = 0; i < plan.n; i++)
        cells += plan.v[i].treatment[0] != '\0';
    if (cells == 1) {
        status = sm_api_reply(resp, len, 200, answer(0, run->id, host, test, &plan, 0, ""));
        goto out;
    }
    /* A regression's suspects are the host's own changes: there is no fleet value to reverse. */
    char ref[65] = "";
    const size_t reverses = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(an_obj, "changes"))
                                ? 0
                                : pick_reverse(a, run, host, test, &d, &plan, ref, sizeof ref);
    if (reverses > 0)
        cells += 1 + reverses; /* ref's control and its reverses */
    const size_t jobs_max = cells * (XP_WARMUP + XP_REPS_MAX + XP_REMEASURE);
    if (!(spec_json = experiment_spec(a, run, host, test, &plan, ref, &err))) {
        status = sm_api_reply_error(resp, len, err.code == SM_EINVAL ? 409 : 500, err.msg, NULL);
        goto out;
    }
    sm_spec spec;
    if (sm_spec_decode(spec_json, strlen(spec_json), &spec, &err) != 0) {
        status = sm_api_reply_error(resp, len, 409, err.msg, err.field);
        goto out;
    }
    xp_row_arg x = {.row = {.parent_run = run->id, .created_ms = 0}};
    snprintf(x.row.host, sizeof x.row.host, "%s", host);
    snprintf(x.row.test, sizeof x.row.test, "%s", test);
    x.row.plan_json = sm_xp_plan_json(&plan);
    uint64_t id = 0;
    status = x.row.plan_json
                 ? sm_api_start_run(a, spec_json, &spec, store_experiment, &x, &id, resp, len)
                 : sm_api_reply_error(resp, len, 500, "out of memory", NULL);
    sm_spec_fini(&spec);
    free(x.row.plan_json);
    if (status == 0) {
        sm_log(LOG_NOTICE, "SM-EXPERIMENT",
               "run %" PRIu64 ": an experiment on run %" PRIu64 "'s anomaly of %s on %s: %zu "
               "treatments, %zu reverse%s%s%s, at most %zu jobs",
               id, run->id, test, host, cells - 1 - (reverses ? 1 + reverses : 0), reverses,
               reverses == 1 ? "" : "s", ref[0] ? " on " : "", ref, jobs_max);
        status =
            sm_api_reply(resp, len, 201, answer(id, run->id, host, test, &plan, jobs_max, ref));
    }
out:
    free(spec_json);
    sm_xp_plan_fini(&plan);
    sm_fp_diffs_fini(&d);
    return status;
}

int sm_api_post_experiment(sm_api_ctx *a, uint64_t id, const char *body, size_t blen, char **resp,
                           size_t *len)
{
    sm_error err = {0};
    cJSON *req = NULL;
    xp_request q;
    if (parse_request(body, blen, &req, &q, &err) != 0) {
        cJSON_Delete(req);
        return sm_api_reply_error(resp, len, 400, err.msg, err.field);
    }
    sm_run_row run;
    if (sm_store_run_get(a->st, id, &run, &err) != 0) {
        cJSON_Delete(req);
        return sm_api_reply_error(resp, len, 404, "no such run", "id");
    }
    int status = 0;
    cJSON *an = NULL;
    sm_experiment_row xr;
    char msg[512];
    if (run.state == SM_RUN_RUNNING) {
        status = sm_api_reply_error(resp, len, 409,
                                    "the run is still running: explain it once it has ended", NULL);
    } else if (sm_store_experiment_get(a->st, id, &xr, &err) == 0) {
        snprintf(msg, sizeof msg, "run %" PRIu64 " is an experiment: explain run %" PRIu64, id,
                 xr.parent_run);
        sm_experiment_row_fini(&xr);
        status = sm_api_reply_error(resp, len, 409, msg, NULL);
    }
    if (!status) {
        sm_run_report rep;
        sm_reports_get(&a->reports, id, SM_REPORT_ANOMALIES, NULL, &rep);
        if (rep.status != SM_REPORT_OK)
            status = sm_api_reply_error(resp, len, (int)rep.status, rep.err.msg, NULL);
        else if (!(an = cJSON_ParseWithLength(rep.body, rep.len)))
            status = sm_api_reply_error(resp, len, 500, "out of memory", NULL);
        sm_run_report_fini(&rep);
    }
    const cJSON *pick = status ? NULL : pick_anomaly(an, &q);
    if (!status && !pick) {
        snprintf(msg, sizeof msg,
                 "run %" PRIu64 " has no anomaly%s%s%s%s that an experiment can explain (a "
                 "host's own test that stands apart from the fleet or regressed; `sockmatrix "
                 "anomalies %" PRIu64 "` lists them)",
                 id, q.host ? " on " : "", q.host ? q.host : "", q.test ? " of " : "",
                 q.test ? q.test : "", id);
        status = sm_api_reply_error(resp, len, 409, msg, q.host ? "host" : NULL);
    }
    if (!status)
        status = start(a, &run, pick, q.suspects, resp, len);
    cJSON_Delete(an);
    cJSON_Delete(req);
    sm_run_row_fini(&run);
    return status;
}

int sm_api_get_experiment(sm_api_ctx *a, uint64_t id, char **resp, size_t *len)
{
    sm_run_report rep;
    sm_reports_experiment(&a->reports, id, &rep);
    int status;
    if (rep.status != SM_REPORT_OK) {
        status = sm_api_reply_error(resp, len, (int)rep.status, rep.err.msg, rep.err.field);
    } else {
        status = sm_api_reply(resp, len, 200, rep.body);
        rep.body = NULL;
    }
    sm_run_report_fini(&rep);
    return status;
}

/* Takes experiment id's search on (reports.h, sm_reports_experiment_next): when it has a next
 * stage, an experiment of its own starts on the same host, test and run, one treatment per
 * subset beside an untreated control; else, or when it cannot start, id is marked followed. */
static void follow(sm_api_ctx *a, uint64_t id)
{
    sm_error err = {0};
    sm_experiment_row xr;
    if (sm_store_experiment_get(a->st, id, &xr, &err) != 0)
        return;
    sm_xp_plan stage = {0};
    sm_run_row run = {0};
    char *spec_json = NULL, *resp = NULL;
    bool started = false;
    const int rc = sm_reports_experiment_next(&a->reports, id, &stage, &err);
    if (rc == 1 && sm_store_run_get(a->st, xr.parent_run, &run, &err) == 0 &&
        (spec_json = experiment_spec(a, &run, xr.host, xr.test, &stage, "", &err)) != NULL) {
        sm_spec spec;
        if (sm_spec_decode(spec_json, strlen(spec_json), &spec, &err) == 0) {
            xp_row_arg x = {.row = {.parent_run = run.id}, .follows = id};
            snprintf(x.row.host, sizeof x.row.host, "%s", xr.host);
            snprintf(x.row.test, sizeof x.row.test, "%s", xr.test);
            x.row.plan_json = sm_xp_plan_json(&stage);
            uint64_t nid = 0;
            size_t len = 0;
            started = x.row.plan_json && sm_api_start_run(a, spec_json, &spec, store_experiment, &x,
                                                          &nid, &resp, &len) == 0;
            if (started)
                sm_log(LOG_NOTICE, "SM-EXPERIMENT-STAGE",
                       "run %" PRIu64 ": the next stage of experiment %" PRIu64 "'s search on "
                       "%s (%s): %zu subsets of its suspects, each together",
                       nid, id, xr.host, xr.test, stage.n);
            else
                snprintf(err.msg, sizeof err.msg, "%.200s", resp ? resp : "out of memory");
            free(x.row.plan_json);
            sm_spec_fini(&spec);
        }
    }
    if (rc != 0 && !started)
        sm_log(LOG_WARNING, "SM-EXPERIMENT-STAGE-FAILED",
               "experiment %" PRIu64 ": its search's next stage did not start: %s", id, err.msg);
    if (!started && sm_store_experiment_set_followed(a->st, id, &err) != 0)
        sm_log(LOG_ERR, "SM-EXPERIMENT-STAGE-FAILED", "experiment %" PRIu64 ": %s", id, err.msg);
    free(resp);
    free(spec_json);
    sm_run_row_fini(&run);
    sm_xp_plan_fini(&stage);
    sm_experiment_row_fini(&xr);
}

void sm_api_experiments_follow(sm_api_ctx *a)
{
    uint64_t ids[8];
    size_t n = 0;
    sm_error err = {0};
    if (a == NULL || sm_store_experiments_to_follow(a->st, ids, 8, &n, &err) != 0)
        return;
    for (size_t i = 0; i < n; i++)
        follow(a, ids[i]);
}
