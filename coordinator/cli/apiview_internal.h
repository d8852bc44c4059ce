/* What the files of the API's views share: the answer a view keeps, and reading its members
 * as they come (apiview.h's second half). Only apiview*.c include it. */
#ifndef SM_CLI_APIVIEW_INTERNAL_H
#define SM_CLI_APIVIEW_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "coordinator/cli/apiview.h"

struct sm_apiview_doc {
    cJSON *root; /* owned */
};

/* json[0..len) parsed into *out. SM_EPARSE `what` when it is not JSON (or parsing ran out of
 * memory), SM_ENOMEM when the doc itself could not be had. */
int av_doc_parse(const char *json, size_t len, const char *what, sm_apiview_doc **out,
                 sm_error *err);

/* Member k of o (o may be NULL): a string, or NULL; a string, or ""; a number, or NaN; true. */
const char *av_str(const cJSON *o, const char *k);
const char *av_text(const cJSON *o, const char *k);
double av_num(const cJSON *o, const char *k);
bool av_true(const cJSON *o, const char *k);

/* How many items o holds (an array's entries, an object's members): the items
 * cJSON_ArrayForEach walks. */
size_t av_count(const cJSON *o);

/* n elements of size bytes, zeroed, into *out (NULL for none); SM_ENOMEM naming what. */
int av_calloc(void **out, size_t n, size_t size, const char *what, sm_error *err);

#endif
