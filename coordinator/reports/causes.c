/* A run's anomalies with what the experiments that explain them proved (internal.h): each ended
 * experiment of the run is answered as GET /api/runs/ID/experiment answers it (experiment.c),
 * and its answer joins the anomaly of its host and test. */
#include "coordinator/reports/internal.h"
#include "coordinator/reports/reports.h"
#include "proto/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One ended experiment's answer: its run, host, test, and the answer's JSON (owned). */
typedef struct xp_answer {
    uint64_t run;
    char host[65], test[128];
    cJSON *doc;
} xp_answer;

static void answers_free(xp_answer *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(v[i].doc);
    free(v);
}

/* The answers of run id's experiments that ended done, oldest first; none when it has none
 * or any step fails (the anomalies are then served as they are). */
static size_t load_answers(sm_reports *r, uint64_t id, xp_answer **out)
{
    sm_experiment_row *rows = NULL;
    size_t n = 0, k = 0;
    sm_error err = {0};
    *out = NULL;
    if (sm_store_experiments_of(r->st, id, &rows, &n, &err) != 0 || n == 0) {
        sm_store_experiments_free(rows, n);
        return 0;
    }
    xp_answer *v = calloc(n, sizeof *v);
    for (size_t i = 0; v && i < n; i++) {
        sm_run_row run;
        if (sm_store_run_get(r->st, rows[i].run_id, &run, &err) != 0)
            continue;
        const bool done = run.state == SM_RUN_DONE;
        sm_run_row_fini(&run);
        sm_run_report rep;
        if (!done || sm_reports_experiment(r, rows[i].run_id, &rep) != SM_REPORT_OK) {
            if (done)
                sm_run_report_fini(&rep);
            continue;
        }
        cJSON *doc = NULL;
        if (sm_json_parse_object(rep.body, rep.len, "experiment", &doc, &err) == 0) {
            v[k] = (xp_answer){.run = rows[i].run_id, .doc = doc};
            snprintf(v[k].host, sizeof v[k].host, "%s", rows[i].host);
            snprintf(v[k].test, sizeof v[k].test, "%s", rows[i].test);
            k++;
        }
        sm_run_report_fini(&rep);
    }
    sm_store_experiments_free(rows, n);
    if (k == 0) {
        free(v);
        return 0;
    }
    *out = v;
    return k;
}

/* The newest answer of host's test, NULL when none. */
static const xp_answer *answer_of(const xp_answer *v, size_t n, const char *host, const char *test)
{
    for (size_t i = n; i-- > 0;)
        if (host && test && strcmp(v[i].host, host) == 0 && strcmp(v[i].test, test) == 0)
            return &v[i];
    return NULL;
}

static const char *str_of(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* "experiment": {"run","summary","cause"} on each anomaly an answer explains, and "cause" (the
 * proven one, with "experiment": its run) where it proved one. The text unchanged otherwise. */
static char *add_to_json(char *text, const xp_answer *v, size_t n)
{
    cJSON *doc = NULL;
    sm_error err = {0};
    if (sm_json_parse_object(text, strlen(text), "anomalies", &doc, &err) != 0)
        return text;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "anomalies");
    bool ok = true, any = false;
    const cJSON *a;
    cJSON_ArrayForEach(a, list)
    {
        const char *kind = str_of(a, "kind");
        if (!kind || (strcmp(kind, "fleet") != 0 && strcmp(kind, "regression") != 0))
            continue;
        const xp_answer *x = answer_of(v, n, str_of(a, "host"), str_of(a, "test"));
        if (!x)
            continue;
        const cJSON *cause = cJSON_GetObjectItemCaseSensitive(x->doc, "cause");
        cJSON *xp = cJSON_CreateObject();
        ok = ok && sm_json_put((cJSON *)a, "experiment", xp) &&
             sm_json_put_u64_str(xp, "run", x->run) &&
             sm_json_put_str(xp, "summary", str_of(x->doc, "summary"));
        cJSON *proven = ok && cJSON_IsObject(cause) ? cJSON_Duplicate(cause, true) : NULL;
        ok = ok &&
             sm_json_put(xp, "cause", proven ? cJSON_Duplicate(proven, true) : cJSON_CreateNull());
        if (proven)
            ok = ok && sm_json_put_u64_str(proven, "experiment", x->run) &&
                 sm_json_put((cJSON *)a, "cause", proven);
        any = true;
    }
    char *again = ok && any ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (!again)
        return text;
    free(text);
    return again;
}

/* After the anomalies (text) or the table's footnotes (Markdown), a line per answer: what it
 * proved, and of which test. */
static char *add_to_text(char *text, const xp_answer *v, size_t n, bool md)
{
    size_t len = strlen(text), cap = len + n * 768 + 1;
    char *out = realloc(text, cap);
    if (!out)
        return text;
    for (size_t i = 0; i < n; i++) {
        const cJSON *cause = cJSON_GetObjectItemCaseSensitive(v[i].doc, "cause");
        const char *summary = str_of(v[i].doc, "summary");
        const bool proven = cJSON_IsObject(cause);
        if (md)
            len += (size_t)snprintf(
                out + len, cap - len, "\n%s by experiment run %" PRIu64 " (%.127s): %.400s\n",
                proven ? "Proven" : "Tested", v[i].run, v[i].test, summary ? summary : "");
        else
            len += (size_t)snprintf(
                out + len, cap - len, "  %-12s %.400s (experiment run %" PRIu64 " of %.127s)\n",
                proven ? "cause" : "tested", summary ? summary : "", v[i].run, v[i].test);
    }
    return out;
}

char *report_add_causes(sm_reports *r, uint64_t id, char *text, report_form form)
{
    if (!text)
        return NULL;
    xp_answer *v = NULL;
    const size_t n = load_answers(r, id, &v);
    if (n > 0)
        text = form == REPORT_JSON ? add_to_json(text, v, n)
                                   : add_to_text(text, v, n, form == REPORT_MD);
    answers_free(v, n);
    return text;
}
