/* The http client's three models, one round at a time: a new thread per transfer, a pool of
 * threads that live for the job, and one multi handle driven on the side's own thread. */
#include "agent/workloads/http_models.h"

#include <string.h>

/* The multi loop's longest wait, so that a cancel or the deadline is seen within it even when
 * no transfer makes progress (libcurl 7.88 calls every transfer's progress callback from each
 * curl_multi_perform). */
#define MULTI_POLL_MS 100

static void lane_done(sm_http_lane *l, CURLcode res)
{
    l->res = res;
    if (res != CURLE_OK)
        atomic_store(&l->run->failed, 1);
}

/* One transfer on the calling thread; its CPU is that thread's over curl_easy_perform. */
static void perform(sm_http_lane *l)
{
    sm_cpu before, after;
    sm_cpu_thread(&before);
    CURLcode res = curl_easy_perform(l->easy);
    sm_cpu_thread(&after);
    l->cpu = sm_cpu_diff(&after, &before);
    lane_done(l, res);
}

/* ---- thread: the easy handle is handed to a new thread each round; it is never used by two
 * threads at once, which is all libcurl asks. ---- */

static void *transfer_main(void *arg)
{
    perform(arg);
    return NULL;
}

static int thread_round(sm_http_run *run)
{
    int rc = 0;
    unsigned started = 0;
    for (; started < run->n; started++) {
        sm_http_lane *l = &run->lanes[started];
        int e = pthread_create(&l->th, NULL, transfer_main, l);
        if (e) {
            atomic_store(&run->failed, 1);
            rc = sm_io_fail(run->s, SM_ESYS, "cannot start the thread of transfer %llu: %s",
                            (unsigned long long)l->num, strerror(e));
            break;
        }
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(run->lanes[i].th, NULL);
    return rc;
}

/* ---- pool: one worker per lane, started before the first round ---- */

static void *worker_main(void *arg)
{
    sm_http_lane *l = arg;
    sm_http_run *run = l->run;
    pthread_mutex_lock(&run->mu);
    for (;;) {
        while (!run->quit && l->ready == run->gen)
            pthread_cond_wait(&run->go, &run->mu);
        if (run->quit)
            break;
        l->ready = run->gen;
        pthread_mutex_unlock(&run->mu);
        perform(l);
        pthread_mutex_lock(&run->mu);
        if (++run->ndone == run->n)
            pthread_cond_signal(&run->done);
    }
    pthread_mutex_unlock(&run->mu);
    return NULL;
}

static void pool_close(sm_http_run *run)
{
    pthread_mutex_lock(&run->mu);
    run->quit = true;
    pthread_cond_broadcast(&run->go);
    pthread_mutex_unlock(&run->mu);
    for (unsigned i = 0; i < run->nworkers; i++)
        pthread_join(run->lanes[i].th, NULL);
    run->nworkers = 0;
    pthread_cond_destroy(&run->done);
    pthread_cond_destroy(&run->go);
    pthread_mutex_destroy(&run->mu);
}

static int pool_open(sm_http_run *run)
{
    /* Default attributes: these cannot fail on Linux. */
    pthread_mutex_init(&run->mu, NULL);
    pthread_cond_init(&run->go, NULL);
    pthread_cond_init(&run->done, NULL);
    for (; run->nworkers < run->n; run->nworkers++) {
        int e = pthread_create(&run->lanes[run->nworkers].th, NULL, worker_main,
                               &run->lanes[run->nworkers]);
        if (e)
            return sm_io_fail(run->s, SM_ESYS, "cannot start worker %u of %u of the pool: %s",
                              run->nworkers + 1, run->n, strerror(e));
    }
    return 0;
}

static int pool_round(sm_http_run *run)
{
    pthread_mutex_lock(&run->mu);
    run->gen++;
    run->ndone = 0;
    pthread_cond_broadcast(&run->go);
    while (run->ndone < run->n)
        pthread_cond_wait(&run->done, &run->mu);
    pthread_mutex_unlock(&run->mu);
    return 0;
}

/* ---- multi: every lane in one multi handle, driven on the side's thread ---- */

static int multi_open(sm_http_run *run)
{
    run->multi = curl_multi_init();
    if (!run->multi)
        return sm_io_fail(run->s, SM_ENOMEM, "curl_multi_init failed");
    return 0;
}

static void multi_close(sm_http_run *run)
{
    curl_multi_cleanup(run->multi);
    run->multi = NULL;
}

static int multi_fail(sm_http_run *run, const char *call, CURLMcode mc)
{
    atomic_store(&run->failed, 1);
    return sm_io_fail(run->s, mc == CURLM_OUT_OF_MEMORY ? SM_ENOMEM : SM_ESYS, "%s: %s", call,
                      curl_multi_strerror(mc));
}

static void multi_collect(sm_http_run *run)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(run->multi, &left))) {
        sm_http_lane *l = NULL;
        if (m->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&l);
        if (l)
            lane_done(l, m->data.result);
    }
}

static int multi_round(sm_http_run *run)
{
    int rc = 0, running = 0;
    unsigned added = 0;
    for (; added < run->n; added++) {
        CURLMcode mc = curl_multi_add_handle(run->multi, run->lanes[added].easy);
        if (mc) {
            rc = multi_fail(run, "curl_multi_add_handle", mc);
            break;
        }
    }
    /* After a failure the transfers already added stop at their next progress callback. */
    do {
        CURLMcode mc = curl_multi_perform(run->multi, &running);
        if (mc) {
            rc = rc ? rc : multi_fail(run, "curl_multi_perform", mc);
            break;
        }
        multi_collect(run);
        if (running && (mc = curl_multi_poll(run->multi, NULL, 0, MULTI_POLL_MS, NULL))) {
            rc = rc ? rc : multi_fail(run, "curl_multi_poll", mc);
            break;
        }
    } while (running);
    /* Back to the multi's connection cache, which the next round reuses. */
    for (unsigned i = 0; i < added; i++)
        curl_multi_remove_handle(run->multi, run->lanes[i].easy);
    return rc;
}

static const sm_http_model models[SM_HTTP__COUNT] = {
    [SM_HTTP_THREAD] = {NULL, thread_round, NULL},
    [SM_HTTP_POOL] = {pool_open, pool_round, pool_close},
    [SM_HTTP_MULTI] = {multi_open, multi_round, multi_close},
};

const sm_http_model *sm_http_model_get(sm_http_client kind)
{
    return (unsigned)kind < SM_HTTP__COUNT ? &models[kind] : NULL;
}
