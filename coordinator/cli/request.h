/* The CLI's calls to the coordinator: one request, its failure said in one line. */
#ifndef SM_CLI_REQUEST_H
#define SM_CLI_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/cli/cli.h"
#include "coordinator/cli/http.h"

/* One line on stderr for a failed call: with r NULL, err (the coordinator could not be
 * reached, or what else went wrong); else the API's error message in r's body. */
void sm_cli_report(sm_http *h, const sm_http_resp *r, const sm_error *err);

/* The words the user typed for an API error's field: "run B" for "b", "--host" for "host";
 * NULL for a path into a spec ("tests[0].msg_size"); "" for a field it has no words for. */
const char *sm_cli_field_words(const char *field);

/* An API error in the user's words, into buf: the field's words in front of the message
 * ("b: no such run 99" is "run B: no such run 99"), a spec path said as "the spec, at PATH:
 * ...", a field without words left out. */
void sm_cli_api_message(const char *error, const char *field, char *buf, size_t cap);

/* GET (body NULL) or POST path; 0 with *r holding a 2xx answer (the caller's to
 * sm_http_resp_fini), or 1 once the failure is reported. */
int sm_cli_call(sm_http *h, const char *path, const char *body, size_t len, sm_http_resp *r);
/* sm_cli_call of a GET whose API field `field` came from the command's arguments: a 4xx
 * answer about that field is said in `words` ("hosts diff: 'h9' has no fingerprint ...") and
 * returns 2, a bad argument; any other failure as sm_cli_call. */
int sm_cli_call_arg(sm_http *h, const char *path, const char *field, const char *words,
                    sm_http_resp *r);

/* As sm_cli_call for a path about run: the coordinator's 404 for its id is said as "no run
 * ID (sockmatrix runs lists them)". */
int sm_cli_call_run(sm_http *h, uint64_t run, const char *path, const char *body, size_t len,
                    sm_http_resp *r);

/* Reports an answer that did not decode; returns 1, the exit status. */
int sm_cli_bad_answer(const char *what, const sm_error *err);

/* GET the run's comparison table in format f (table is the Markdown one); as sm_cli_call. */
int sm_cli_get_table(sm_http *h, uint64_t id, sm_cli_format f, bool disturbed, sm_http_resp *r);

/* GET the run's anomalies: lines for people (format table) or the JSON; baseline 0 and
 * floor NULL leave the coordinator's defaults. As sm_cli_call. */
int sm_cli_get_anomalies(sm_http *h, uint64_t id, uint64_t baseline, const char *floor,
                         bool disturbed, sm_cli_format f, sm_http_resp *r);

#endif
