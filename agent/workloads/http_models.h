/* What the http client (http_client.c) shares with its three client models (http_models.c):
 * the lanes, one easy handle each, and a table of drivers per model. Private to those two. */
#ifndef SM_AGENT_WORKLOADS_HTTP_MODELS_H
#define SM_AGENT_WORKLOADS_HTTP_MODELS_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "agent/workloads/http.h"

/* Why a transfer ended before libcurl finished it by itself (set by the lane's callbacks). */
typedef enum sm_http_stop {
    SM_HTTP_STOP_NONE = 0,
    SM_HTTP_STOP_ABORT,    /* the job was stopped from outside (job->abort) */
    SM_HTTP_STOP_CANCEL,   /* the other side failed (job->cancel) */
    SM_HTTP_STOP_DEADLINE, /* the job's time limit passed */
    SM_HTTP_STOP_SIBLING,  /* another transfer of the round failed */
    SM_HTTP_STOP_STATUS,   /* the response is not a 200 */
    SM_HTTP_STOP_VERIFY,   /* a body byte differs from the pattern */
} sm_http_stop;

struct sm_http_run;

/* One lane: an easy handle used by one thread at a time, and its current transfer. The client
 * resets the transfer fields before each round; the thread that performs the transfer writes
 * them; the client reads them once the model's round returned (after a join, a mutex or on
 * the same thread). */
typedef struct sm_http_lane {
    struct sm_http_run *run;
    CURL *easy;
    char errbuf[CURL_ERROR_SIZE];
    pthread_t th;    /* the transfer's thread (thread model) or the lane's worker (pool) */
    uint64_t num;    /* the transfer's number over the job, from 1, for reasons */
    uint64_t got;    /* body bytes received, verified when the job verifies */
    uint64_t bad_at; /* SM_HTTP_STOP_VERIFY: offset in the body of the first wrong byte */
    long status;     /* the response code, read at the first body byte; 0 before it */
    sm_http_stop stop;
    CURLcode res;
    sm_cpu cpu;     /* CPU of the thread that performed it (thread and pool models) */
    unsigned ready; /* pool: the last round the lane's worker took */
} sm_http_lane;

/* A client side's job: its lanes and what the models need to run rounds of them. */
typedef struct sm_http_run {
    sm_side *s;
    sm_http_lane *lanes;
    unsigned n;        /* lanes: p->connections */
    unsigned round;    /* the round in progress, from 1 */
    bool verify;       /* check every body byte against job->pat */
    atomic_int failed; /* a transfer of this round failed: the others stop */
    /* pool model: workers wait for `gen` to move on, the client for `ndone` to reach n. */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned gen, ndone, nworkers;
    bool quit;
    /* multi model: lives for the whole job, so its connection cache keeps connections. */
    CURLM *multi;
} sm_http_run;

/* A client model: open before the first round (not timed), round to perform every lane's
 * transfer once and return when all ended, close after the last round (also after a failed
 * open or round). open and round return 0 or an SM_E code with run->s->err set for a failure
 * of the model itself; a transfer's failure is left in its lane for the client to report.
 * All three run on the side's thread. */
typedef struct sm_http_model {
    int (*open)(sm_http_run *run);
    int (*round)(sm_http_run *run);
    void (*close)(sm_http_run *run);
} sm_http_model;

/* The model of a client kind; never NULL for a validated kind. */
const sm_http_model *sm_http_model_get(sm_http_client kind);

#endif
