/* An experiment's answer to an anomaly of an ended run (xpcauses.h). */
#include "coordinator/analysis/xpcauses.h"

#include "proto/json.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An answer with its JSON parsed (owned). */
typedef struct xp_answer {
    uint64_t run;
    const char *host, *test;
    cJSON *doc;
} xp_answer;

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
    /* Printed again, every figure reads as it came: cJSON alone would cut them to 15 digits. */
    ok = ok && any && sm_json_exact_numbers(doc);
    char *again = ok ? cJSON_PrintUnformatted(doc) : NULL;
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

char *sm_xp_causes_add(char *text, const sm_xp_answer *in, size_t n, sm_xp_form form)
{
    if (!text || n == 0)
        return text;
    xp_answer *v = calloc(n, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; v && i < n; i++) {
        sm_error err = {0};
        cJSON *doc = NULL;
        if (sm_json_parse_object(in[i].json, in[i].len, "experiment", &doc, &err) == 0)
            v[k++] = (xp_answer){in[i].run, in[i].host, in[i].test, doc};
    }
    if (k > 0)
        text = form == SM_XP_JSON ? add_to_json(text, v, k)
                                  : add_to_text(text, v, k, form == SM_XP_MD);
    for (size_t i = 0; i < k; i++)
        cJSON_Delete(v[i].doc);
    free(v);
    return text;
}
