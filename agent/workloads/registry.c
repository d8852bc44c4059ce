/* The registry of workloads: one line per workload. */
#include "agent/workloads/workload.h"

const sm_workload_ops *sm_workload_get(sm_workload_kind kind)
{
    switch (kind) {
    case SM_WL_STREAM:
        return &sm_workload_stream;
    case SM_WL_RR:
        return &sm_workload_rr;
    case SM_WL_CONNECT:
        return &sm_workload_connect;
    case SM_WL_HTTP:
        return &sm_workload_http;
    default:
        return NULL;
    }
}
