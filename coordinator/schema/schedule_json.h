/* Recurring runs' JSON, free of the store and the clock: the request of POST /api/schedules,
 * the spec a firing runs, and the webhook bodies a finished run or experiment may raise. Shared by
 * the coordinator and its CLI. */
#ifndef SM_COORD_SCHEDULE_JSON_H
#define SM_COORD_SCHEDULE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "coordinator/model/cron.h"
#include "coordinator/schema/webhook_url.h"
#include "proto/err.h"

/* One POST /api/schedules body, checked. */
typedef struct sm_schedule_req {
    char name[65];
    char *spec_json;                  /* malloc'd: the spec as POST /api/runs would store it */
    uint32_t every_s;                 /* 0 when cron */
    char cron[SM_CRON_MAX];           /* "" when every */
    char *hosts_json;                 /* malloc'd: ["h1","h2"], or "" for the spec's own */
    char webhook[SM_WEBHOOK_URL_MAX]; /* "" none */
} sm_schedule_req;
void sm_schedule_req_fini(sm_schedule_req *r);

/* Parses {"name", "spec":{...} | "preset":NAME, "every":"15m"|SECONDS | "cron":"0 3 * * *",
 * "hosts":["h1",...]?, "webhook":"http://..."?}. The spec (or the preset with its fields, as
 * POST /api/runs takes them) is decoded with the hosts put in, so that a schedule that could
 * never start a run is refused now. On error (SM_EPARSE for a body that is not an object,
 * SM_EINVAL otherwise) err->field names the field: "name", "spec" (or "spec.<its field>"),
 * "preset", "every", "cron", "hosts", "webhook", or the unknown one. *out is filled only on
 * success. */
int sm_schedule_req_parse(const char *body, size_t len, sm_schedule_req *out, sm_error *err);

/* The spec a firing runs: spec_json with its "hosts" replaced by hosts_json when that is not
 * "" (malloc'd into *out). SM_EPARSE when either does not parse. */
int sm_schedule_spec(const char *spec_json, const char *hosts_json, char **out, sm_error *err);

/* What a run of a schedule is, for its webhook body. */
typedef struct sm_hook_run {
    uint64_t schedule_id;
    const char *schedule_name;
    uint64_t run_id;
    const char *run_name;
    int64_t finished_ms;
} sm_hook_run;

/* The webhook body for a finished run, from the body of GET /api/runs/ID/anomalies of the run
 * (judged against its baseline, which it names) and of the schedule's previous finished run
 * (NULL: none). A flag (kind fleet, slow-host, slow-link) is new when the previous run had no
 * flag for the same host and test; every regression counts. When there is something new,
 * *body is {"event":"flag"|"regression","schedule":{"id","name"},"run":{"id","name",
 * "finished_ms"},"baseline_run":ID|null,"flags":[{"host","test","metric","text"}],
 * "regressions":[{"host","test","metric","text"}]} (malloc'd; "regression" when there is a
 * regression, else "flag") and *event that word (static). A run whose verdict (the body's
 * "verdict") is inconclusive or failed is told too, as event "inconclusive" when it raised
 * nothing new: it could not judge what it was scheduled to judge. The body then carries
 * "verdict", "summary" and "inconclusive":[{"host","test","verdict","why"}] as the anomalies
 * body gave them (on every event). Else both NULL. Ids are strings, as everywhere in the API.
 * SM_EPARSE when run_json is not such a body, SM_ENOMEM. */
int sm_schedule_hook_body(const sm_hook_run *r, const char *run_json, const char *prev_json,
                          const char **event, char **body, sm_error *err);

/* The webhook body for an ended experiment that explains a run of the schedule: r names that
 * run (the one the experiment explains), xp_json is the experiment's report (the body of GET
 * /api/runs/ID/experiment). *body is {"event":"cause"|"experiment","schedule":{"id","name"},
 * "run":{"id","name","finished_ms"},"experiment":{"run","host","test","state","summary",
 * "cause"}}, "cause" the report's own (the suspect proven, its share of the gap closed with
 * its interval, its treatment) or null; *event (static) "cause" when it proved one, else
 * "experiment". SM_EPARSE when xp_json is not such a report, SM_ENOMEM; both NULL then. */
int sm_schedule_cause_body(const sm_hook_run *r, const char *xp_json, const char **event,
                           char **body, sm_error *err);

#endif
