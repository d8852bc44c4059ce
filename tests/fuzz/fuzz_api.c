/* libFuzzer target: POST /api/jobs bodies (the coordinator), and the API's answers as the CLI
 * reads them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/schema/apijson.h"
#include "coordinator/cli/apiview.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    sm_error err;
    sm_api_job_req *reqs = NULL;
    size_t n = 0;
    if (sm_api_jobs_parse(text, size, &reqs, &n, &err) == 0)
        free(reqs);
    sm_apiview_run *runs = NULL;
    if (sm_apiview_runs_decode(text, size, &runs, &n, &err) == 0)
        free(runs);
    sm_apiview_agent *agents = NULL;
    if (sm_apiview_agents_decode(text, size, &agents, &n, &err) == 0)
        free(agents);
    free(text);
    return 0;
}
