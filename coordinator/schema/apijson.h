/* JSON of the coordinator's HTTP API (requests and responses), shared by the coordinator and
 * its CLI. Encoders return malloc'd compact text or NULL when out of memory. */
#ifndef SM_COORD_APIJSON_H
#define SM_COORD_APIJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"
#include "proto/params.h"

#define SM_API_JOBS_MAX 10000 /* jobs one POST /api/jobs may queue */

/* {"error":"...","field":"..."} (field left out when NULL or empty). */
char *sm_api_error(const char *msg, const char *field);

/* One agent for GET /api/agents; the JSON texts are the store's and are embedded as objects. */
typedef struct sm_api_agent {
    const char *name, *boot, *data_addr, *status;
    const char *labels_json; /* may be NULL */
    const char *facts_json;  /* may be NULL */
    int64_t first_seen_ms, last_seen_ms;
    uint64_t spool_quarantined; /* entries out of service in its spool, as it last said */
} sm_api_agent;
/* {"agents":[{"name","status","boot","data_addr","labels","facts","first_seen_ms",
 *  "last_seen_ms","spool_quarantined"}]} */
char *sm_api_agents(const sm_api_agent *a, size_t n);
/* One item of that list, alone. */
char *sm_api_agent_encode(const sm_api_agent *a);

typedef struct sm_api_job {
    uint64_t id;
    const char *host, *state, *reason;
    uint32_t attempt;
    const char *params_json;
    const char *result_json; /* NULL until stored */
    int64_t created_ms, assigned_ms, started_ms, finished_ms;
} sm_api_job;
/* {"id":"12","host","state","reason","attempt","params":{...},"result":{...}|null,
 *  "created_ms",...} */
char *sm_api_job_encode(const sm_api_job *j);

/* {"jobs":["12","13"]} */
char *sm_api_job_ids(const uint64_t *ids, size_t n);

/* One job request of POST /api/jobs. */
typedef struct sm_api_job_req {
    char host[65];
    sm_params params;
} sm_api_job_req;
/* Parses [{"host":"h1","params":{...}}, ...] or {"jobs":[...]}: every params is decoded and
 * validated (sm_codec), at most SM_API_JOBS_MAX. On error, err->msg says what and err->field
 * names the offending field ("jobs[3].params"; "" when none is at fault). *reqs is malloc'd. */
int sm_api_jobs_parse(const char *body, size_t len, sm_api_job_req **reqs, size_t *n,
                      sm_error *err);

/* POST /api/runs: the body is a spec, or {"preset":NAME,"hosts":...,"repetitions":N,
 * "remeasure":N,"warmup":N,"parallel":B} whose fields are put over the preset's spec.
 * *spec_json is the spec to run (malloc'd). Errors name the field in err->field ("preset" when
 * there is no such preset). */
int sm_api_run_request(const char *body, size_t len, char **spec_json, sm_error *err);

/* POST /api/runs/{id}/again: the body is empty, {} or {"cells":"unjudged"} (the cells the run
 * could not judge: inconclusive or failed; the only choice there is). SM_EPARSE or SM_EINVAL
 * naming the field otherwise. Then the spec of the new run: run spec_json renamed to NAME
 * "-again" (a name that already ends so keeps it; cut to fit SM_SPEC_NAME_MAX), malloc'd into
 * *out, *name the new name (cap bytes). */
int sm_api_again_request(const char *body, size_t len, sm_error *err);
int sm_api_again_spec(const char *spec_json, char **out, char *name, size_t cap, sm_error *err);

typedef struct sm_api_run {
    uint64_t id;
    const char *name, *state, *reason;
    uint32_t total, done, failed;
    int64_t created_ms, finished_ms;
    bool serial;               /* its jobs go one at a time (false: side by side) */
    const char *parallel_note; /* why they go one at a time, or the warning; NULL or "" */
    uint64_t schedule;         /* the schedule that started it; 0: started by hand */
    uint64_t explains;         /* an experiment's: the run it explains; 0 for other runs */
} sm_api_run;

/* One cell of a run with the states of its jobs. */
typedef struct sm_api_cell {
    uint32_t idx;
    const char *host, *peer, *params_json;
    uint32_t jobs, queued, active, done, failed;
} sm_api_cell;

/* {"runs":[{"id","name","state","reason","progress":{"done","failed","total"},
 *  "created_ms","finished_ms","parallel","serial_reason","parallel_warning","schedule"}]}
 * "schedule" is the id of the schedule that started the run, null for a run started by hand.
 * "parallel" is false when the jobs go one at a time, and "serial_reason" then says why (hosts
 * that share one machine, or the spec); "parallel_warning" is set when they go side by side on
 * hosts that share one machine. Each is "" when it does not apply. */
char *sm_api_runs_encode(const sm_api_run *r, size_t n);
/* One item of that list, alone. */
char *sm_api_run_item_encode(const sm_api_run *r);
/* One run as above plus "explains" (an experiment's: the id of the run it explains, its
 * answer at /api/runs/ID/experiment; null for another run) and "cells":[{"index","host","peer",
 * "params","test","jobs","queued","active","done","failed"}] ("test" as the run's table names
 * the column: sm_export_label; the spec is left out, it is what was posted). */
char *sm_api_run_encode(const sm_api_run *r, const sm_api_cell *cells, size_t n);
/* {"run":"7"} */
char *sm_api_run_created(uint64_t id);

/* GET /healthz: {"ok":true,"agents":N,"agents_online":N,"results":N,"hold_ms":N,
 * "counters":{...},
 * "rejected":{"mac":N,...,"total":N},"spool_quarantined":{"h1":N,...}}. names/values are
 * parallel arrays, and so are q_names/q_values (the agents whose spools have entries in
 * quarantine, and how many; "spool_quarantined" is {} when none). A store_error (NULL:
 * none) makes it {"ok":false,"store_error":"...","store_error_at_ms":N,...}. A store_warning
 * (NULL or "": none) adds "store_warning":"..." and leaves "ok" as it is: the store works, but
 * lost something when it was opened (a cut WAL). hold_ms: how long a poll is held now (it
 * grows with the fleet). */
char *sm_api_health(uint64_t agents, uint64_t online, uint64_t results, uint32_t hold_ms,
                    const char *const *names, const uint64_t *values, size_t n,
                    const char *const *rej_names, const uint64_t *rej_values, size_t n_rej,
                    const char *const *q_names, const uint64_t *q_values, size_t n_q,
                    const char *store_error, int64_t store_error_at_ms, const char *store_warning);

#endif
