/* An experiment's answer (xpreport.h). */
#include "coordinator/analysis/xpreport.h"

#include "proto/json.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

size_t sm_xp_report_cause(const sm_xp_report *r)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < r->plan->n; i++) {
        if (r->est[i].verdict != SM_XP_CAUSE)
            continue;
        if (best == SIZE_MAX) {
            best = i;
            continue;
        }
        const bool single = r->plan->v[i].item[0] != '\0';
        const bool best_single = r->plan->v[best].item[0] != '\0';
        if (single != best_single ? single : r->est[i].lo > r->est[best].lo)
            best = i;
    }
    return best;
}

const char *sm_xp_reverse_verdict(sm_xp_verdict v)
{
    switch (v) {
    case SM_XP_CAUSE:
        return "confirms";
    case SM_XP_PART:
        return "confirms in part";
    case SM_XP_NOT:
        return "does not confirm";
    case SM_XP_INCONCLUSIVE:
        return "inconclusive";
    case SM_XP_UNTESTED:
        break;
    }
    return "";
}

static void pct(char *buf, size_t len, double x)
{
    if (isinf(x))
        snprintf(buf, len, "%s", x > 0 ? "+inf" : "-inf");
    else
        snprintf(buf, len, "%.0f%%", 100 * x + 0.0);
}

void sm_xp_reverse_judge(sm_xp_estimate *e, const char *host, const char *ref)
{
    char lo[16], hi[16];
    pct(lo, sizeof lo, e->lo);
    pct(hi, sizeof hi, e->hi);
    if (e->n_ctrl < SM_XP_MIN_SAMPLES || e->n_treat < SM_XP_MIN_SAMPLES ||
        e->n_fleet < SM_XP_MIN_SAMPLES) {
        snprintf(e->why, sizeof e->why,
                 "too few samples: %s's control %zu, with %s's value %zu, %s's control %zu (each "
                 "group needs %d)",
                 ref, e->n_ctrl, host, e->n_treat, host, e->n_fleet, SM_XP_MIN_SAMPLES);
        return;
    }
    if (isnan(e->lo) || isnan(e->hi)) {
        snprintf(e->why, sizeof e->why,
                 "%s and %s do not stand apart in this experiment (%s's control median %.4g, "
                 "%s's %.4g)",
                 ref, host, ref, e->ctrl_median, host, e->fleet_median);
        return;
    }
    switch (e->verdict) {
    case SM_XP_CAUSE:
        snprintf(e->why, sizeof e->why,
                 "%s's value opens most of the gap on %s: its interval [%s, %s] reaches no lower "
                 "than 50%%",
                 host, ref, lo, hi);
        break;
    case SM_XP_PART:
        snprintf(e->why, sizeof e->why,
                 "%s's value opens part of the gap on %s: its interval [%s, %s] lies above 0 and "
                 "reaches below 50%%",
                 host, ref, lo, hi);
        break;
    case SM_XP_NOT:
        if (e->hi < SM_XP_NEGLIGIBLE && e->hi >= 0)
            snprintf(e->why, sizeof e->why,
                     "%s's value opens less than a tenth of the gap on %s: its interval [%s, %s] "
                     "stays below 10%%",
                     host, ref, lo, hi);
        else
            snprintf(e->why, sizeof e->why,
                     "%s's value does not open the gap on %s: its interval [%s, %s] stays below "
                     "50%% and holds 0 or less",
                     host, ref, lo, hi);
        break;
    default:
        snprintf(e->why, sizeof e->why,
                 "the interval [%s, %s] of the gap %s's value opens on %s is too wide to decide",
                 lo, hi, host, ref);
        break;
    }
}

/* "; confirmed on h1: h2's value opens 97% of it [90%, 104%]" for suspect c's decided reverse,
 * else "". */
static void confirmation(const sm_xp_report *r, size_t c, char *buf, size_t len)
{
    buf[0] = '\0';
    const sm_xp_estimate *v = r->rev ? &r->rev[c] : NULL;
    if (v == NULL ||
        (v->verdict != SM_XP_CAUSE && v->verdict != SM_XP_PART && v->verdict != SM_XP_NOT))
        return;
    char lo[16], hi[16];
    pct(lo, sizeof lo, v->lo);
    pct(hi, sizeof hi, v->hi);
    snprintf(buf, len, "; %s on %s: %s's value opens %.0f%% of it [%s, %s]",
             v->verdict == SM_XP_CAUSE  ? "confirmed"
             : v->verdict == SM_XP_PART ? "confirmed in part"
                                        : "not confirmed",
             r->plan->v[c].reverse_host, r->host, 100 * v->share + 0.0, lo, hi);
}

static int summary_of_own(const sm_xp_report *r, char *buf, size_t len);

/* The headline of a search that ended on a subset; -1 when there is none to give. */
static int search_summary(const sm_xp_report *r, char *buf, size_t len)
{
    const sm_xp_search_view *q = r->search;
    if (!q || strcmp(q->state, "done") != 0 || q->result.verdict != SM_XP_CAUSE)
        return -1;
    const sm_xp_estimate *e = &q->result;
    char lo[16], hi[16];
    pct(lo, sizeof lo, e->lo);
    pct(hi, sizeof hi, e->hi);
    return snprintf(buf, len,
                    "%s: %s are the cause together (narrowed down from %zu suspects in %zu "
                    "stage%s, run %" PRIu64 "): they close %.0f%% of the gap [%s, %s]%s",
                    r->host, q->label, q->k, q->stages, q->stages == 1 ? "" : "s", q->result_run,
                    100 * e->share + 0.0, lo, hi,
                    q->unresolved ? "; some subsets were inconclusive, so a smaller one may do"
                                  : "");
}

int sm_xp_report_summary(const sm_xp_report *r, char *buf, size_t len)
{
    const int found = search_summary(r, buf, len);
    if (found >= 0)
        return found;
    const int n = summary_of_own(r, buf, len);
    const sm_xp_search_view *q = r->search;
    if (n < 0 || (size_t)n >= len || !q || strcmp(q->state, "narrowing") != 0)
        return n;
    return n + snprintf(buf + n, len - (size_t)n,
                        "; narrowing the %zu suspects down: stage %zu of at most %zu next (%zu "
                        "subset%s)",
                        q->k, q->stages + 1, q->stages_max, q->n_next, q->n_next == 1 ? "" : "s");
}

static int summary_of_own(const sm_xp_report *r, char *buf, size_t len)
{
    const char *so_far = strcmp(r->state, "running") == 0 ? "so far, " : "";
    const size_t c = sm_xp_report_cause(r);
    if (c != SIZE_MAX) {
        const sm_xp_suspect *s = &r->plan->v[c];
        const sm_xp_estimate *e = &r->est[c];
        if (s->item[0] == '\0')
            return snprintf(buf, len,
                            "%s%s: %s are the cause together, no single one is: they close "
                            "%.0f%% of the gap [%.0f%%, %.0f%%]",
                            so_far, r->host, s->label, 100 * e->share, 100 * e->lo, 100 * e->hi);
        char confirmed[200];
        confirmation(r, c, confirmed, sizeof confirmed);
        return snprintf(buf, len,
                        "%s%s: %s is the cause: the fleet's value (%s) closes %.0f%% of the gap "
                        "[%.0f%%, %.0f%%]%s",
                        so_far, r->host, s->label, s->fleet_value, 100 * e->share, 100 * e->lo,
                        100 * e->hi, confirmed);
    }
    size_t tested = 0, untested = 0, undecided = 0;
    for (size_t i = 0; i < r->plan->n; i++) {
        if (r->plan->v[i].item[0] == '\0')
            continue;
        if (r->est[i].verdict == SM_XP_UNTESTED)
            untested++;
        else
            tested++;
        if (r->est[i].verdict == SM_XP_INCONCLUSIVE)
            undecided++;
    }
    if (tested == 0)
        return snprintf(buf, len, "%s%s: none of its %zu suspect%s could be tested", so_far,
                        r->host, untested, untested == 1 ? "" : "s");
    return snprintf(buf, len,
                    "%s%s: no tested suspect closes most of the gap (%zu tested, %zu of them "
                    "undecided; %zu could not be tested)",
                    so_far, r->host, tested, undecided, untested);
}

static bool put_num(cJSON *o, const char *key, double v)
{
    return isfinite(v) ? sm_json_put_double(o, key, v) : sm_json_put(o, key, cJSON_CreateNull());
}

static cJSON *reverse_json(const sm_xp_suspect *s, const sm_xp_estimate *v)
{
    if (v == NULL || s->reverse[0] == '\0' || v->verdict == SM_XP_UNTESTED)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    bool ok =
        o != NULL && sm_json_put_str(o, "host", s->reverse_host) &&
        sm_json_put_str(o, "treatment", s->reverse) &&
        sm_json_put_str(o, "verdict", sm_xp_reverse_verdict(v->verdict)) &&
        sm_json_put_str(o, "why", v->why) && put_num(o, "share", v->share) &&
        put_num(o, "lo", v->lo) && put_num(o, "hi", v->hi) &&
        put_num(o, "control_median", v->ctrl_median) &&
        put_num(o, "treated_median", v->treat_median) &&
        put_num(o, "odd_median", v->fleet_median) && sm_json_put_u64(o, "n_control", v->n_ctrl) &&
        sm_json_put_u64(o, "n_treated", v->n_treat) && sm_json_put_u64(o, "n_odd", v->n_fleet);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *suspect_json(const sm_xp_suspect *s, const sm_xp_estimate *e, const sm_xp_estimate *v)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    ok = ok && sm_json_put_str(o, "item", s->item);
    ok = ok && sm_json_put_str(o, "label", s->label);
    ok = ok && sm_json_put_str(o, "host_value", s->host_value);
    ok = ok && sm_json_put_str(o, "fleet_value", s->fleet_value);
    ok = ok && (s->treatment[0] ? sm_json_put_str(o, "treatment", s->treatment)
                                : sm_json_put(o, "treatment", cJSON_CreateNull()));
    ok = ok && sm_json_put_str(o, "verdict", sm_xp_verdict_name(e->verdict));
    ok = ok && sm_json_put_str(o, "why", e->why);
    ok = ok && put_num(o, "share", e->share) && put_num(o, "lo", e->lo) && put_num(o, "hi", e->hi);
    ok = ok && put_num(o, "control_median", e->ctrl_median) &&
         put_num(o, "treated_median", e->treat_median) &&
         put_num(o, "fleet_median", e->fleet_median);
    ok = ok && sm_json_put_u64(o, "n_control", e->n_ctrl) &&
         sm_json_put_u64(o, "n_treated", e->n_treat) && sm_json_put_u64(o, "n_fleet", e->n_fleet);
    ok = ok && sm_json_put_str(o, "why_no_reverse", s->why_no_reverse) &&
         sm_json_put(o, "reverse", reverse_json(s, v));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *search_json(const sm_xp_search_view *q)
{
    if (q == NULL)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject(), *sus = NULL, *next = NULL, *res = NULL;
    bool ok = o && sm_json_put_str(o, "state", q->state) &&
              sm_json_put(o, "suspects", sus = cJSON_CreateArray());
    for (size_t i = 0; ok && i < q->k; i++)
        ok = sm_json_append(sus, cJSON_CreateString(q->suspects[i] ? q->suspects[i] : ""));
    ok = ok && sm_json_put_u64(o, "stages", q->stages) &&
         sm_json_put_u64(o, "arms_max", q->arms_max) &&
         sm_json_put_u64(o, "stages_max", q->stages_max) &&
         sm_json_put_u64_str(o, "first_run", q->head_run) &&
         sm_json_put(o, "next", next = cJSON_CreateArray());
    for (size_t i = 0; ok && i < q->n_next; i++)
        ok = sm_json_append(next, cJSON_CreateString(q->next[i]));
    if (ok && strcmp(q->state, "done") == 0) {
        ok = sm_json_put(o, "result", res = cJSON_CreateObject()) &&
             sm_json_put_str(res, "label", q->label) &&
             sm_json_put_u64_str(res, "run", q->result_run) &&
             sm_json_put_str(res, "verdict", sm_xp_verdict_name(q->result.verdict)) &&
             put_num(res, "share", q->result.share) && put_num(res, "lo", q->result.lo) &&
             put_num(res, "hi", q->result.hi);
    } else if (ok) {
        ok = sm_json_put(o, "result", cJSON_CreateNull());
    }
    ok = ok && sm_json_put_u64(o, "unresolved", q->unresolved);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *sm_xp_report_json(const sm_xp_report *r)
{
    char summary[768];
    sm_xp_report_summary(r, summary, sizeof summary);
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL;
    ok = ok && sm_json_put_u64_str(root, "run", r->run_id);
    ok = ok && sm_json_put_u64_str(root, "explains", r->parent_run);
    ok = ok && sm_json_put_str(root, "host", r->host) && sm_json_put_str(root, "test", r->test);
    ok = ok && sm_json_put_str(root, "unit", r->unit) && sm_json_put_str(root, "state", r->state);
    ok = ok && sm_json_put_str(root, "summary", summary);
    const size_t c = sm_xp_report_cause(r);
    const sm_xp_search_view *q = r->search;
    if (ok && q && strcmp(q->state, "done") == 0 && q->result.verdict == SM_XP_CAUSE) {
        ok = sm_json_put(root, "cause", suspect_json(&q->found, &q->result, NULL));
    } else if (ok && c != SIZE_MAX) {
        cJSON *cause = suspect_json(&r->plan->v[c], &r->est[c], r->rev ? &r->rev[c] : NULL);
        ok = sm_json_put(root, "cause", cause);
    } else if (ok) {
        ok = sm_json_put(root, "cause", cJSON_CreateNull());
    }
    cJSON *ctrl = ok ? cJSON_CreateObject() : NULL;
    ok = ok && sm_json_put(root, "control", ctrl);
    ok = ok && sm_json_put_u64(ctrl, "n", r->n_ctrl) &&
         sm_json_put_u64(ctrl, "disturbed", r->ctrl_disturbed);
    cJSON *fleet = ok ? cJSON_CreateObject() : NULL;
    ok = ok && sm_json_put(root, "fleet", fleet) && sm_json_put_u64(fleet, "n", r->n_fleet);
    ok = ok && sm_json_put(root, "search", search_json(q));
    cJSON *list = ok ? cJSON_CreateArray() : NULL;
    ok = ok && sm_json_put(root, "suspects", list);
    for (size_t i = 0; ok && i < r->plan->n; i++)
        ok = sm_json_append(list,
                            suspect_json(&r->plan->v[i], &r->est[i], r->rev ? &r->rev[i] : NULL));
    return sm_json_finish(root, ok, 0, "experiment", NULL);
}
