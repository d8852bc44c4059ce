/* Anomalies as JSON, for GET /api/runs/{id}/anomalies. */
#include "coordinator/analysis/internal.h"

#include "proto/json.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

/* ---- JSON ---- */

static bool json_anomaly(cJSON *arr, const sm_anomaly *a)
{
    cJSON *o = cJSON_CreateObject();
    return sm_json_append(arr, o) &&
           cJSON_AddStringToObject(o, "kind", sm_anomaly_kind_name(a->kind)) != NULL &&
           sm_json_put_fixed(o, "host", a->host, sizeof a->host) &&
           sm_json_put_fixed(o, "role", a->role, sizeof a->role) &&
           sm_json_put_fixed(o, "test", a->test, sizeof a->test) &&
           sm_json_put_fixed(o, "metric", a->metric, sizeof a->metric) &&
           sm_json_put_fixed(o, "unit", a->unit, sizeof a->unit) &&
           cJSON_AddBoolToObject(o, "ratio", a->ratio) != NULL &&
           sm_json_put_double(o, "value", a->value) &&
           sm_json_put_double(o, "reference", a->reference) && sm_json_put_double(o, "z", a->z) &&
           sm_json_put_double(o, "rel", a->rel) && sm_json_put_double(o, "floor", a->floor) &&
           sm_json_put_fixed(o, "rule", a->rule, sizeof a->rule) &&
           cJSON_AddStringToObject(o, "direction", sm_anomaly_dir_name(a->dir)) != NULL &&
           cJSON_AddBoolToObject(o, "at_limit", a->at_limit) != NULL &&
           (a->kind != SM_ANOMALY_FLEET_MOVE ||
            cJSON_AddNumberToObject(o, "hosts", a->moved) != NULL) &&
           (a->kind != SM_ANOMALY_REGRESSION || sm_json_put_double(o, "fleet_move", a->fleet_move));
}

char *sm_anomalies_json(uint64_t run_id, const char *run_name, uint64_t baseline_id,
                        const sm_analysis_opts *o, const sm_anomalies *a)
{
    return sm_anomalies_json_more(run_id, run_name, baseline_id, o, a, NULL, NULL, NULL);
}

char *sm_anomalies_json_more(uint64_t run_id, const char *run_name, uint64_t baseline_id,
                             const sm_analysis_opts *o, const sm_anomalies *a,
                             const struct sm_run_verdict *v, sm_anomaly_json_more more, void *arg)
{
    sm_analysis_limits l = sm_analysis_limits_of(o);
    /* Containers join their parent as they are made: one cJSON_Delete frees a half-built tree. */
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL && cJSON_AddNumberToObject(root, "version", 1) != NULL;
    cJSON *run = ok ? cJSON_AddObjectToObject(root, "run") : NULL;
    ok = run != NULL && sm_json_put_u64_str(run, "id", run_id) &&
         cJSON_AddStringToObject(run, "name", run_name ? run_name : "") != NULL;
    if (ok && baseline_id == 0) {
        ok = cJSON_AddNullToObject(root, "baseline") != NULL;
    } else if (ok) {
        cJSON *base = cJSON_AddObjectToObject(root, "baseline");
        ok = base != NULL && sm_json_put_u64_str(base, "id", baseline_id);
    }
    ok = ok && sm_json_put_double(root, "z", l.z) && sm_json_put_double(root, "floor", l.floor);
    ok = ok && (v == NULL || sm_run_verdict_cjson(v, root));
    cJSON *arr = ok ? cJSON_AddArrayToObject(root, "anomalies") : NULL;
    ok = arr != NULL;
    for (size_t i = 0; ok && i < a->n; i++) {
        ok = json_anomaly(arr, &a->v[i]);
        if (ok && more)
            ok = more(arg, i, cJSON_GetArrayItem(arr, (int)i));
    }
    return sm_json_finish(root, ok, 0, "anomalies", NULL);
}
