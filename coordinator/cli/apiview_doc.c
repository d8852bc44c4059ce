/* The answer a view keeps and prints, and reading its members as they come. */
#include "coordinator/cli/apiview_internal.h"

#include <math.h>
#include <stdlib.h>

#include "proto/json.h"

int av_doc_parse(const char *json, size_t len, const char *what, sm_apiview_doc **out,
                 sm_error *err)
{
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (root == NULL)
        return sm_error_set(err, SM_EPARSE, "%s", what);
    sm_apiview_doc *doc = malloc(sizeof *doc);
    if (doc == NULL) {
        cJSON_Delete(root);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    doc->root = root;
    *out = doc;
    return 0;
}

void sm_apiview_doc_free(sm_apiview_doc *doc)
{
    if (doc == NULL)
        return;
    cJSON_Delete(doc->root);
    free(doc);
}

char *sm_apiview_print(sm_apiview_doc *doc)
{
    /* The strings a view points at stay where they are: only number items are replaced. */
    return sm_json_exact_numbers(doc->root) ? cJSON_Print(doc->root) : NULL;
}

sm_apiview_doc *sm_apiview_list_new(void)
{
    sm_apiview_doc *doc = malloc(sizeof *doc);
    if (doc && !(doc->root = cJSON_CreateArray())) {
        free(doc);
        doc = NULL;
    }
    return doc;
}

const char *av_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *av_text(const cJSON *o, const char *k)
{
    const char *s = av_str(o, k);
    return s ? s : "";
}

double av_num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

bool av_true(const cJSON *o, const char *k)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k));
}

size_t av_count(const cJSON *o)
{
    size_t n = 0;
    for (const cJSON *c = o ? o->child : NULL; c; c = c->next)
        n++;
    return n;
}

int av_calloc(void **out, size_t n, size_t size, const char *what, sm_error *err)
{
    *out = NULL;
    if (n > 0 && !(*out = calloc(n, size)))
        return sm_error_set(err, SM_ENOMEM, "%s: out of memory", what);
    return 0;
}
