/* HTTP routes of runs' reports: GET /api/runs/{id}/table, /anomalies and GET /api/compare, as
 * the reports room computes them. */
#include "coordinator/api/api.h"
#include "coordinator/api/internal.h"

#include <stdlib.h>

/* The report as the reply: its body with status 200, or its error as {"error","field"}. */
static int reply(sm_run_report *rep, char **resp, size_t *len, const char **ctype)
{
    if (rep->status != SM_REPORT_OK) {
        const int status = sm_api_reply_error(resp, len, (int)rep->status, rep->err.msg,
                                              rep->err.field[0] ? rep->err.field : NULL);
        sm_run_report_fini(rep);
        return status;
    }
    if (ctype)
        *ctype = rep->ctype;
    *len = rep->len;
    *resp = rep->body; /* handed over */
    return 200;
}

int sm_api_get_report(sm_api_ctx *a, uint64_t id, bool table, const char *query, char **resp,
                      size_t *len, const char **ctype)
{
    sm_run_report rep;
    sm_reports_get(&a->reports, id, table ? SM_REPORT_TABLE : SM_REPORT_ANOMALIES, query, &rep);
    return reply(&rep, resp, len, ctype);
}

int sm_api_get_compare(sm_api_ctx *a, const char *query, char **resp, size_t *len)
{
    sm_run_report rep;
    sm_reports_compare(&a->reports, query, &rep);
    return reply(&rep, resp, len, NULL);
}

char *sm_api_anomalies_body(sm_api_ctx *a, uint64_t run_id)
{
    return sm_reports_body(&a->reports, run_id, SM_REPORT_ANOMALIES, NULL);
}
