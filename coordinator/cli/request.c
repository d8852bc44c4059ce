/* The CLI's calls to the coordinator: one request, its failure said in one line. */
#include "coordinator/cli/request.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/output.h"

/* Whether the message already starts with its field ("preset: no preset ..."). */
static bool names_field(const char *msg, const char *field)
{
    size_t n = strlen(field);
    return strncmp(msg, field, n) == 0 && msg[n] == ':';
}

/* What the user typed for an API field: the option or the argument it came from. */
static const struct {
    const char *field, *words;
} field_words[] = {
    {"a", "run A"},
    {"b", "run B"},
    {"id", "the run"},
    {"run", "the run"},
    {"baseline", "--baseline"},
    {"floor", "--floor"},
    {"disturbed", "--disturbed"},
    {"host", "--host"},
    {"hosts", "--hosts"},
    {"test", "--test"},
    {"metric", "--metric"},
    {"state", "--state"},
    {"cell", "--cell"},
    {"preset", "--preset"},
    {"repetitions", "--repetitions"},
    {"name", "--name"},
    {"every", "--every"},
    {"cron", "--cron"},
    {"webhook", "--webhook"},
    {"schedule", "the schedule"},
    {"format", "--format"},
};

const char *sm_cli_field_words(const char *field)
{
    for (size_t i = 0; i < sizeof field_words / sizeof *field_words; i++)
        if (strcmp(field, field_words[i].field) == 0)
            return field_words[i].words;
    /* A path into a spec ("tests[0].msg_size") is the spec file's own words. */
    return strpbrk(field, ".[") ? NULL : "";
}

void sm_cli_api_message(const char *error, const char *field, char *buf, size_t cap)
{
    const char *words = field[0] ? sm_cli_field_words(field) : "";
    const bool named = field[0] && names_field(error, field);
    const char *rest = named ? error + strlen(field) + 1 : error;
    while (named && *rest == ' ')
        rest++;
    if (!field[0] || (words && !words[0] && named))
        snprintf(buf, cap, "%s", error); /* a field with no words of its own: said as it is */
    else if (!words)
        snprintf(buf, cap, "the spec, at %s: %s", field, rest);
    else if (!words[0])
        snprintf(buf, cap, "%s", error);
    else
        snprintf(buf, cap, "%s: %s", words, rest);
}

void sm_cli_report(sm_http *h, const sm_http_resp *r, const sm_error *err)
{
    if (!r) {
        if (err->code == SM_ESYS)
            sm_cli_fail("cannot reach the coordinator at %s: %s", sm_http_url(h), err->msg);
        else
            sm_cli_fail("%s", err->msg);
        return;
    }
    sm_apiview_error e;
    sm_error derr = {0};
    if (sm_apiview_error_decode(r->body, r->len, &e, &derr) != 0)
        sm_cli_fail("the coordinator at %s answered HTTP %ld without an error message",
                    sm_http_url(h), r->status);
    else {
        char msg[SM_APIVIEW_PROSE + SM_APIVIEW_FIELD + 32];
        sm_cli_api_message(e.error, e.field, msg, sizeof msg);
        sm_cli_fail("%s", msg);
    }
}

/* With run nonzero, a 404 about the id names the run and where the runs are listed. */
static int call(sm_http *h, uint64_t run, const char *path, const char *body, size_t len,
                sm_http_resp *r)
{
    sm_error err = {0};
    int rc = body ? sm_http_post(h, path, body, len, r, &err) : sm_http_get(h, path, r, &err);
    if (rc) {
        sm_cli_report(h, NULL, &err);
        return 1;
    }
    if (r->status < 200 || r->status > 299) {
        sm_apiview_error e;
        sm_error derr = {0};
        if (run && r->status == 404 && sm_apiview_error_decode(r->body, r->len, &e, &derr) == 0 &&
            strcmp(e.field, "id") == 0)
            sm_cli_fail("no run %" PRIu64 " (sockmatrix runs lists them)", run);
        else
            sm_cli_report(h, r, &err);
        sm_http_resp_fini(r);
        return 1;
    }
    return 0;
}

int sm_cli_call(sm_http *h, const char *path, const char *body, size_t len, sm_http_resp *r)
{
    return call(h, 0, path, body, len, r);
}

int sm_cli_call_arg(sm_http *h, const char *path, const char *field, const char *words,
                    sm_http_resp *r)
{
    sm_error err = {0};
    if (sm_http_get(h, path, r, &err)) {
        sm_cli_report(h, NULL, &err);
        return 1;
    }
    if (r->status >= 200 && r->status <= 299)
        return 0;
    sm_apiview_error e;
    sm_error derr = {0};
    const bool ours = r->status >= 400 && r->status <= 499 &&
                      sm_apiview_error_decode(r->body, r->len, &e, &derr) == 0 &&
                      strcmp(e.field, field) == 0;
    if (ours) {
        const char *rest = e.error;
        if (names_field(rest, field))
            for (rest += strlen(field) + 1; *rest == ' ';)
                rest++;
        sm_cli_fail("%s: %s", words, rest);
    } else {
        sm_cli_report(h, r, &err);
    }
    sm_http_resp_fini(r);
    return ours ? 2 : 1;
}

int sm_cli_call_run(sm_http *h, uint64_t run, const char *path, const char *body, size_t len,
                    sm_http_resp *r)
{
    return call(h, run, path, body, len, r);
}

int sm_cli_bad_answer(const char *what, const sm_error *err)
{
    sm_cli_fail("unexpected answer to %s from the coordinator: %s", what, err->msg);
    return 1;
}

static const char *format_query(sm_cli_format f)
{
    switch (f) {
    case SM_CLI_FMT_CSV:
        return "csv";
    case SM_CLI_FMT_JSON:
        return "json";
    case SM_CLI_FMT_TABLE: /* the Markdown table reads well in a terminal as it is */
    case SM_CLI_FMT_MD:
        break;
    }
    return "md";
}

int sm_cli_get_table(sm_http *h, uint64_t id, sm_cli_format f, bool disturbed, sm_http_resp *r)
{
    char path[128];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/table?format=%s%s", id, format_query(f),
             disturbed ? "&disturbed=include" : "");
    return sm_cli_call_run(h, id, path, NULL, 0, r);
}

int sm_cli_get_anomalies(sm_http *h, uint64_t id, uint64_t baseline, const char *floor,
                         bool disturbed, sm_cli_format f, sm_http_resp *r)
{
    char path[192];
    int n = snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/anomalies?format=%s", id,
                     f == SM_CLI_FMT_JSON ? "json" : "text");
    if (baseline)
        n += snprintf(path + n, sizeof path - (size_t)n, "&baseline=%" PRIu64, baseline);
    if (floor)
        n += snprintf(path + n, sizeof path - (size_t)n, "&floor=%s", floor);
    if (disturbed)
        snprintf(path + n, sizeof path - (size_t)n, "&disturbed=include");
    return sm_cli_call_run(h, id, path, NULL, 0, r);
}
