/* libFuzzer target: run specs and POST /api/runs bodies, which any holder of the dashboard
 * token (or anyone, on a loopback listener) can send. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/schema/apijson.h"
#include "coordinator/model/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    sm_error err;
    sm_spec spec;
    if (sm_spec_decode(text, size, &spec, &err) == 0)
        sm_spec_fini(&spec);
    char *spec_json = NULL;
    if (sm_api_run_request(text, size, &spec_json, &err) == 0) {
        if (sm_spec_decode(spec_json, strlen(spec_json), &spec, &err) == 0)
            sm_spec_fini(&spec);
        free(spec_json);
    }
    free(text);
    return 0;
}
