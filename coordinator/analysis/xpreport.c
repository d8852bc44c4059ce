/* An experiment's answer (xpreport.h). */
#include "coordinator/analysis/xpreport.h"

#include "proto/json.h"

#include <cjson/cJSON.h>
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

int sm_xp_report_summary(const sm_xp_report *r, char *buf, size_t len)
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
        return snprintf(buf, len,
                        "%s%s: %s is the cause: the fleet's value (%s) closes %.0f%% of the gap "
                        "[%.0f%%, %.0f%%]",
                        so_far, r->host, s->label, s->fleet_value, 100 * e->share, 100 * e->lo,
                        100 * e->hi);
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

static cJSON *suspect_json(const sm_xp_suspect *s, const sm_xp_estimate *e)
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
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *sm_xp_report_json(const sm_xp_report *r)
{
    char summary[512];
    sm_xp_report_summary(r, summary, sizeof summary);
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL;
    ok = ok && sm_json_put_u64_str(root, "run", r->run_id);
    ok = ok && sm_json_put_u64_str(root, "explains", r->parent_run);
    ok = ok && sm_json_put_str(root, "host", r->host) && sm_json_put_str(root, "test", r->test);
    ok = ok && sm_json_put_str(root, "unit", r->unit) && sm_json_put_str(root, "state", r->state);
    ok = ok && sm_json_put_str(root, "summary", summary);
    const size_t c = sm_xp_report_cause(r);
    if (ok && c != SIZE_MAX) {
        cJSON *cause = suspect_json(&r->plan->v[c], &r->est[c]);
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
    cJSON *list = ok ? cJSON_CreateArray() : NULL;
    ok = ok && sm_json_put(root, "suspects", list);
    for (size_t i = 0; ok && i < r->plan->n; i++)
        ok = sm_json_append(list, suspect_json(&r->plan->v[i], &r->est[i]));
    return sm_json_finish(root, ok, 0, "experiment", NULL);
}
