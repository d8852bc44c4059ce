/* The http workload's two halves: the built-in source (server side) and the libcurl client
 * models (client side); the table that joins them is in http_client.c. */
#ifndef SM_AGENT_WORKLOADS_HTTP_H
#define SM_AGENT_WORKLOADS_HTTP_H

#include "agent/workloads/workload.h"

/* The built-in source: accepts on lfd and serves `GET /bytes/N` (HTTP/1.1, keep-alive, over
 * TLS with job->tls when p->tls) with N bytes of job->pat from offset 0 until the job ends:
 * the client done (local job), or, alone, once it has answered connections x repeat requests
 * and every connection closed; or the deadline or a cancel (failure). s->bytes counts body
 * bytes written, s->msgs responses; the CPU of its connection threads goes to s->extra_cpu.
 * A bad request is answered 400/404/405/431 with Connection: close and that connection ends
 * (logged, the job goes on: in a pair job it may be a stray client). Returns 0 or an SM_E code
 * with s->err set. */
int sm_http_source_serve(sm_side *s, int lfd);

/* libcurl's global set-up, once per process, from any thread (pthread_once). 0 or SM_ESYS. */
int sm_http_global_init(sm_error *err);

#endif
