/* The report worker (worker.h): a bounded queue in, a queue of answers out, one thread between
 * them building reports over a read-only connection. */
#include "coordinator/api/worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "coordinator/api/api.h"
#include "coordinator/api/internal.h"
#include "coordinator/api/routes.h"
#include "coordinator/analysis/promtext.h"
#include "proto/clock.h"
#include "proto/log.h"

/* A request, then its answer: the same node moves from the queue to the done list. */
typedef struct job {
    uint64_t ticket;
    char path[256];
    char query[512];
    char *metrics; /* GET /metrics: the loop's part, the cells to follow; NULL otherwise */
    sm_api_answer ans;
    struct job *next;
} job;

typedef struct fifo {
    job *first, *last;
    size_t n;
} fifo;

struct sm_api_worker {
    sm_api_ctx api; /* st: the reader; ctl NULL: the worker never touches the control core */
    size_t queue_max;
    void (*wake)(void *arg);
    void *wake_arg;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* Under mu: */
    bool stop;
    fifo queue, done;
    uint64_t next_ticket;
    uint64_t building;  /* the ticket being built; 0: none */
    bool building_gone; /* its connection closed meanwhile */
    char *cells;        /* /metrics' cells as last built, NULL before the first */
    int64_t cells_ms;   /* monotonic, when they were */
    uint64_t cells_since;
};

static void fifo_push(fifo *f, job *j)
{
    j->next = NULL;
    if (f->last)
        f->last->next = j;
    else
        f->first = j;
    f->last = j;
    f->n++;
}

static void fifo_push_front(fifo *f, job *j)
{
    j->next = f->first;
    f->first = j;
    if (!f->last)
        f->last = j;
    f->n++;
}

static job *fifo_pop(fifo *f)
{
    job *j = f->first;
    if (j) {
        f->first = j->next;
        if (!f->first)
            f->last = NULL;
        f->n--;
    }
    return j;
}

/* Unlinks the job of ticket from f; NULL when it is not there. */
static job *fifo_take(fifo *f, uint64_t ticket)
{
    job *prev = NULL;
    for (job *j = f->first; j; prev = j, j = j->next) {
        if (j->ticket != ticket)
            continue;
        if (prev)
            prev->next = j->next;
        else
            f->first = j->next;
        if (f->last == j)
            f->last = prev;
        f->n--;
        return j;
    }
    return NULL;
}

static void job_free(job *j)
{
    if (j) {
        sm_api_answer_fini(&j->ans);
        free(j->metrics);
    }
    free(j);
}

static void fifo_clear(fifo *f)
{
    for (job *j; (j = fifo_pop(f));)
        job_free(j);
}

void sm_api_answer_fini(sm_api_answer *a)
{
    if (!a)
        return;
    free(a->resp);
    a->resp = NULL;
    a->len = 0;
}

/* /metrics' text: the loop's part, then the cells built now, kept for the scrapes that follow
 * until they are stale. */
static void build_metrics(sm_api_worker *w, job *j)
{
    const uint64_t since = sm_report_cache_since(w->api.reports.cache);
    char *cells = sm_api_metrics_cells_text(&w->api);
    sm_prom p;
    sm_prom_init(&p);
    sm_prom_text(&p, j->metrics);
    sm_prom_text(&p, cells);
    sm_api_answer *a = &j->ans;
    a->resp = sm_prom_take(&p, &a->len);
    a->ctype = SM_PROM_CTYPE;
    a->status = a->resp ? 200 : sm_api_reply_error(&a->resp, &a->len, 500, "out of memory", NULL);
    if (!a->resp || a->status != 200)
        a->ctype = "application/json";
    pthread_mutex_lock(&w->mu);
    if (cells) {
        free(w->cells);
        w->cells = cells;
        w->cells_since = since;
        w->cells_ms = sm_mono_ms();
    }
    pthread_mutex_unlock(&w->mu);
}

static void build(sm_api_worker *w, job *j)
{
    sm_api_answer *a = &j->ans;
    a->ticket = j->ticket;
    if (j->metrics) {
        build_metrics(w, j);
        return;
    }
    a->status = sm_api_handle(&w->api, "GET", j->path, j->query[0] ? j->query : NULL, NULL, "", 0,
                              &a->resp, &a->len, &a->ctype);
}

/* How much lower than the loop the worker runs (nice values above the loop's, at most 19): on a
 * machine of two cores shared with the measurements' own processes, a report of seconds must give
 * way to the polls and results the loop answers, not compete with them. */
#define WORKER_NICE 10

static void *run(void *arg)
{
    sm_api_worker *w = arg;
    /* Linux gives each thread its own nice value (setpriority(2), "BUGS"): this lowers the
     * worker's alone. Raising it needs no privilege; failing to is not worth stopping for. */
    const id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    const int base = getpriority(PRIO_PROCESS, tid);
    if (errno != 0 ||
        setpriority(PRIO_PROCESS, tid, base + WORKER_NICE > 19 ? 19 : base + WORKER_NICE) != 0)
        sm_log(LOG_INFO, "SM-WORKER-NICE", "the report worker runs at the loop's priority");
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        job *j = fifo_pop(&w->queue);
        if (!j) {
            pthread_cond_wait(&w->cv, &w->mu);
            continue;
        }
        w->building = j->ticket;
        w->building_gone = false;
        pthread_mutex_unlock(&w->mu);
        build(w, j);
        pthread_mutex_lock(&w->mu);
        const bool gone = w->building_gone;
        w->building = 0;
        if (gone) {
            job_free(j);
            continue;
        }
        fifo_push(&w->done, j);
        if (w->wake) {
            /* Outside the lock: the loop may be in _take waiting for it. */
            pthread_mutex_unlock(&w->mu);
            w->wake(w->wake_arg);
            pthread_mutex_lock(&w->mu);
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int sm_api_worker_start(sm_api_worker **pw, const sm_api_worker_cfg *cfg, sm_error *err)
{
    sm_api_worker *w = calloc(1, sizeof *w);
    if (!w)
        return sm_error_set(err, SM_ENOMEM, "report worker: out of memory");
    int rc = sm_store_open_reader(&w->api.st, cfg->db_path, err);
    if (rc) {
        free(w);
        return rc;
    }
    /* token NULL: the listener checked the request's token before it queued it. */
    w->api.reports =
        (sm_reports){.st = w->api.st, .cache = cfg->cache, .memory_limit = cfg->memory_limit};
    w->queue_max = cfg->queue_max ? cfg->queue_max : SM_API_WORKER_QUEUE_MAX;
    w->wake = cfg->wake;
    w->wake_arg = cfg->wake_arg;
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        sm_store_close(w->api.st);
        free(w);
        return sm_error_set(err, SM_ESYS, "report worker: cannot make its mutex");
    }
    if (pthread_cond_init(&w->cv, NULL) != 0 || pthread_create(&w->thread, NULL, run, w) != 0) {
        pthread_mutex_destroy(&w->mu);
        sm_store_close(w->api.st);
        free(w);
        return sm_error_set(err, SM_ESYS, "report worker: cannot start its thread");
    }
    *pw = w;
    return 0;
}

/* Queues j (freed when refused): 0 with *ticket, or the status of the refusal in *resp. */
static int enqueue(sm_api_worker *w, job *j, uint64_t *ticket, char **resp, size_t *len)
{
    pthread_mutex_lock(&w->mu);
    if (w->queue.n >= w->queue_max) {
        pthread_mutex_unlock(&w->mu);
        job_free(j);
        char msg[128];
        snprintf(msg, sizeof msg,
                 "the report worker has %zu requests waiting, its bound: try again shortly",
                 w->queue_max);
        return sm_api_reply_error(resp, len, 503, msg, NULL);
    }
    j->ticket = *ticket = ++w->next_ticket;
    /* A scrape goes first: its cells come from the cache mostly, and monitoring should not
     * wait behind a queue of trends (it still waits for the report being built). */
    if (j->metrics)
        fifo_push_front(&w->queue, j);
    else
        fifo_push(&w->queue, j);
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

int sm_api_worker_submit(sm_api_worker *w, const char *path, const char *query, uint64_t *ticket,
                         char **resp, size_t *len)
{
    job *j = calloc(1, sizeof *j);
    if (!j)
        return sm_api_reply_error(resp, len, 500, "out of memory", NULL);
    const size_t qn = query ? strlen(query) : 0;
    if (strlen(path) >= sizeof j->path || qn >= sizeof j->query) {
        free(j);
        return sm_api_reply_error(resp, len, 400, "the path or query is too long", NULL);
    }
    /* The worker has no control core: a route that reads it must not get here. */
    const sm_route *rt = NULL;
    char allow[SM_ROUTE_ALLOW_MAX];
    if (sm_routes_find(path, "GET", false, &rt, allow, sizeof allow) == 0 && !rt->off_loop) {
        free(j);
        return sm_api_reply_error(resp, len, 500, "this route is not built by the report worker",
                                  NULL);
    }
    memcpy(j->path, path, strlen(path) + 1);
    if (query)
        memcpy(j->query, query, qn + 1);
    return enqueue(w, j, ticket, resp, len);
}

int sm_api_worker_metrics(sm_api_worker *w, char *loop_text, uint64_t *ticket, char **resp,
                          size_t *len)
{
    if (!loop_text)
        return sm_api_reply_error(resp, len, 500, "out of memory", NULL);
    const uint64_t since = sm_report_cache_since(w->api.reports.cache);
    pthread_mutex_lock(&w->mu);
    const bool fresh = w->cells && w->cells_since == since &&
                       sm_mono_ms() - w->cells_ms <= SM_API_METRICS_MAX_AGE_MS;
    sm_prom p;
    sm_prom_init(&p);
    if (fresh) {
        sm_prom_text(&p, loop_text);
        sm_prom_text(&p, w->cells);
    }
    pthread_mutex_unlock(&w->mu);
    if (fresh) {
        free(loop_text);
        *resp = sm_prom_take(&p, len);
        return *resp ? 200 : sm_api_reply_error(resp, len, 500, "out of memory", NULL);
    }
    job *j = calloc(1, sizeof *j);
    if (!j) {
        free(loop_text);
        return sm_api_reply_error(resp, len, 500, "out of memory", NULL);
    }
    snprintf(j->path, sizeof j->path, "/metrics");
    j->metrics = loop_text;
    return enqueue(w, j, ticket, resp, len);
}

void sm_api_worker_forget(sm_api_worker *w, uint64_t ticket)
{
    if (!w || !ticket)
        return;
    pthread_mutex_lock(&w->mu);
    job *j = fifo_take(&w->queue, ticket);
    if (!j)
        j = fifo_take(&w->done, ticket);
    if (!j && w->building == ticket)
        w->building_gone = true;
    pthread_mutex_unlock(&w->mu);
    job_free(j);
}

bool sm_api_worker_take(sm_api_worker *w, sm_api_answer *out)
{
    pthread_mutex_lock(&w->mu);
    job *j = fifo_pop(&w->done);
    pthread_mutex_unlock(&w->mu);
    if (!j)
        return false;
    *out = j->ans;
    free(j->metrics);
    free(j);
    return true;
}

size_t sm_api_worker_pending(sm_api_worker *w)
{
    pthread_mutex_lock(&w->mu);
    const size_t n = w->queue.n + (w->building != 0);
    pthread_mutex_unlock(&w->mu);
    return n;
}

void sm_api_worker_stop(sm_api_worker *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    fifo_clear(&w->queue);
    fifo_clear(&w->done);
    free(w->cells);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    w->api.reports.cache = NULL; /* the loop's */
    sm_reports_fini(&w->api.reports);
    sm_store_close(w->api.st);
    free(w);
}
