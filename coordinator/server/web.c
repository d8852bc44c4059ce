/* The dashboard's static files and the hub of live events for browsers on /ws. */
#include "coordinator/server/web.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/openat2.h>
#endif

#include "coordinator/schema/events.h"
#include "coordinator/analysis/export.h"
#include "proto/map.h"
#include "proto/codec.h"
#include "proto/log.h"

/* ---- static files ---- */

static const char *media_type(const char *path)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".map", "application/json"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

/* Only plain names below the folder: a request names a file, never a way out of it. */
static bool safe_path(const char *path)
{
    size_t n = strlen(path);
    if (n == 0 || n > 200 || path[0] != '/')
        return false;
    if (strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/") != n)
        return false;
    for (const char *p = path; (p = strchr(p, '/')) != NULL; p++)
        if (p[1] == '.' || p[1] == '/')
            return false; /* "..", hidden names, "//" */
    return true;
}

/* rel (no leading '/', a safe path) opened under the folder dirfd one name at a time, each with
 * O_NOFOLLOW: for kernels without openat2 (before 5.6) or where a filter refuses it. */
static int open_nofollow(int dirfd, const char *rel)
{
    char name[256];
    int at = dirfd;
    for (;;) {
        size_t n = strcspn(rel, "/");
        if (n == 0 || n >= sizeof name) {
            errno = ENOENT;
            break;
        }
        memcpy(name, rel, n);
        name[n] = '\0';
        const bool last = rel[n] == '\0';
        int fd =
            openat(at, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (last ? O_NONBLOCK : O_DIRECTORY));
        if (at != dirfd)
            close(at);
        if (fd < 0 || last)
            return fd;
        at = fd;
        rel += n + 1;
    }
    if (at != dirfd)
        close(at);
    return -1;
}

/* path (a safe path, with its leading '/') under dir, refusing every symbolic link below dir
 * (dir itself may be one: a package's folder often is): openat2 with RESOLVE_BENEATH and
 * RESOLVE_NO_SYMLINKS, else a walk with O_NOFOLLOW. */
static int open_beneath(const char *dir, const char *path)
{
    int dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return -1;
    int fd = -1;
#ifdef SYS_openat2
    struct open_how how = {.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK,
                           .resolve =
                               RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    fd = getenv("SM_WEB_NO_OPENAT2") ? (errno = ENOSYS, -1)
                                     : (int)syscall(SYS_openat2, dirfd, path + 1, &how, sizeof how);
    if (fd < 0 && (errno == ENOSYS || errno == EPERM))
        fd = open_nofollow(dirfd, path + 1);
#else
    fd = open_nofollow(dirfd, path + 1);
#endif
    const int e = errno;
    close(dirfd);
    errno = e;
    return fd;
}

int sm_web_file(const char *dir, const char *path, char **body, size_t *len, const char **ctype)
{
    *body = NULL;
    *len = 0;
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    if (!dir || !safe_path(path))
        return 404;
    int fd = open_beneath(dir, path);
    if (fd < 0)
        /* ELOOP, EXDEV: a symbolic link, which is refused as if it were not there. */
        return errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == EXDEV ? 404 : 500;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)SM_WEB_FILE_MAX) {
        close(fd);
        return 404;
    }
    char *b = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (b && got < (size_t)st.st_size) {
        ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!b || got != (size_t)st.st_size) {
        free(b);
        return 500;
    }
    b[got] = '\0';
    *body = b;
    *len = got;
    *ctype = media_type(path);
    return 200;
}

/* ---- live events ---- */

/* Past this much queued for one browser, it is too slow: cut off, not buffered without bound. */
#define QUEUE_MAX (1u << 20)

typedef struct msg {
    struct msg *next;
    size_t len;
    unsigned char data[]; /* LWS_PRE bytes, then the text */
} msg;

typedef struct session {
    struct session *next;
    struct lws *wsi;
    sm_ws_hub *hub;
    msg *head, *tail;
    size_t queued;
    bool cut;
} session;

/* The values of the hub's sets: a run the hub knows as running, and whether its jobs were told
 * yet. */
static char FRESH[] = "fresh", TOLD[] = "told", MARK[] = "1";

struct sm_ws_hub {
    sm_api_ctx *api;
    sm_store *st;
    uint64_t *counters; /* clients, rejected, cut */
    session *sessions;
    /* What changed since the last tick (sm_control_on_change), by name or id. */
    sm_map *agents;  /* -> MARK */
    sm_map *jobs;    /* -> MARK (jobs of runs only) */
    sm_map *touched; /* run -> MARK: the run changed, or a job of it did */
    sm_map *runs;    /* run -> MARK: the run itself changed */
    /* Runs known as running (their jobs' news is told, and their anomalies when they end):
     * -> FRESH until the jobs it had were told, then TOLD. */
    sm_map *live;
    uint64_t newest; /* the highest run id known: a higher one is a run that started */
    /* Ended runs' anomalies built off the loop (sm_ws_hub_set_anomalies), and the runs whose
     * anomalies are still being built (-> MARK), told at a later tick. */
    int (*anomalies)(void *ctx, uint64_t run, uint64_t baseline, int *status, char **json);
    void *anomalies_ctx;
    sm_map *waiting;
    void (*tap)(void *arg, const char *text);
    void *tap_arg;
};

static void lost(void)
{
    sm_log(LOG_WARNING, "SM-WS-LOST", "out of memory: a dashboard change is not told");
}

static void hub_mark(sm_map *m, const char *name, void *val)
{
    if (!sm_map_get(m, name) && sm_map_put(m, name, val) != 0)
        lost();
}

static void hub_mark_id(sm_map *m, uint64_t id, void *val)
{
    if (!sm_map_get_id(m, id) && sm_map_put_id(m, id, val) != 0)
        lost();
}

void sm_ws_hub_change(void *ctx, const sm_change *ch)
{
    sm_ws_hub *h = ctx;
    if (ch->kind == SM_CHANGE_RUN)
        sm_api_run_state_changed(h->api, ch->run);
    else if (ch->kind == SM_CHANGE_JOB)
        sm_api_run_changed(h->api, ch->run);
    switch (ch->kind) {
    case SM_CHANGE_AGENT:
        if (ch->agent)
            hub_mark(h->agents, ch->agent, MARK);
        return;
    case SM_CHANGE_JOB: {
        if (ch->run == 0)
            return; /* a job of no run is not on the dashboard */
        hub_mark_id(h->jobs, ch->job, MARK);
        hub_mark_id(h->touched, ch->run, MARK);
        return;
    }
    case SM_CHANGE_RUN:
        hub_mark_id(h->touched, ch->run, MARK);
        hub_mark_id(h->runs, ch->run, MARK);
        /* A run that started: followed from now, even if it ends before the next tick. */
        if (ch->run > h->newest) {
            h->newest = ch->run;
            hub_mark_id(h->live, ch->run, FRESH);
        }
        return;
    }
}

/* The runs running now are followed; every run known up to now is not new. */
static int hub_load(sm_ws_hub *h)
{
    sm_run_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    int rc = sm_store_runs_list(h->st, 1, &rows, &n, &err);
    if (rc == 0 && n)
        h->newest = rows[0].id;
    sm_store_runs_free(rows, n);
    if (rc == 0)
        rc = sm_store_runs_running(h->st, &rows, &n, &err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (sm_map_put_id(h->live, rows[i].id, TOLD) != 0) {
            sm_store_runs_free(rows, n);
            return SM_ENOMEM;
        }
    }
    if (rc == 0)
        sm_store_runs_free(rows, n);
    return rc;
}

sm_ws_hub *sm_ws_hub_new(sm_api_ctx *api, sm_store *st, uint64_t *counters)
{
    sm_ws_hub *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->api = api;
    h->st = st;
    h->counters = counters;
    h->agents = sm_map_new();
    h->jobs = sm_map_new();
    h->touched = sm_map_new();
    h->runs = sm_map_new();
    h->live = sm_map_new();
    h->waiting = sm_map_new();
    if (!h->agents || !h->jobs || !h->touched || !h->runs || !h->live || !h->waiting ||
        hub_load(h) != 0) {
        sm_ws_hub_free(h);
        return NULL;
    }
    if (api->ctl)
        sm_control_on_change(api->ctl, sm_ws_hub_change, h);
    return h;
}

static void clear(sm_map **m, void (*free_val)(void *))
{
    sm_map *fresh = sm_map_new();
    if (!fresh)
        return; /* kept: told again next time rather than lost */
    sm_map_free(*m, free_val);
    *m = fresh;
}

void sm_ws_hub_free(sm_ws_hub *h)
{
    if (!h)
        return;
    if (h->api && h->api->ctl)
        sm_control_on_change(h->api->ctl, NULL, NULL);
    sm_map_free(h->agents, NULL);
    sm_map_free(h->jobs, NULL);
    sm_map_free(h->touched, NULL);
    sm_map_free(h->runs, NULL);
    sm_map_free(h->live, NULL);
    sm_map_free(h->waiting, NULL);
    free(h);
}

static void queue_to(session *s, const char *text)
{
    if (s->cut)
        return;
    size_t n = strlen(text);
    if (s->queued + n > QUEUE_MAX) {
        s->cut = true;
        s->hub->counters[2]++;
        sm_log(LOG_WARNING, "SM-WS-SLOW", "a dashboard client is too slow (%zu bytes queued): cut",
               s->queued);
        lws_callback_on_writable(s->wsi);
        return;
    }
    msg *m = malloc(sizeof *m + LWS_PRE + n);
    if (!m)
        return;
    m->next = NULL;
    m->len = n;
    memcpy(m->data + LWS_PRE, text, n);
    if (s->tail)
        s->tail->next = m;
    else
        s->head = m;
    s->tail = m;
    s->queued += n;
    lws_callback_on_writable(s->wsi);
}

static void broadcast(sm_ws_hub *h, char *text)
{
    if (!text)
        return;
    for (session *s = h->sessions; s; s = s->next)
        queue_to(s, text);
    if (h->tap)
        h->tap(h->tap_arg, text);
    free(text);
}

/* A finished job's headline figure, as its column in the table shows it, and why its host was
 * disturbed ("" when it was not). */
static void job_headline(sm_ws_hub *h, const sm_job_row *j, sm_metric *m, double *v,
                         char *disturbed, size_t cap)
{
    char *json = NULL;
    sm_error err = {0};
    sm_params p;
    sm_result r;
    sm_result_init(&r);
    if (j->params_json &&
        sm_codec_params_decode(j->params_json, strlen(j->params_json), &p, &err) == 0 &&
        sm_store_result_get(h->st, j->id, j->attempt, &json, &err) == 0 &&
        sm_codec_result_decode(json, strlen(json), &r, &err) == 0) {
        *m = sm_export_headline(&p);
        *v = sm_result_get(&r, *m);
        snprintf(disturbed, cap, "%s", r.host.disturbed ? r.host.reason : "");
    }
    sm_result_fini(&r);
    free(json);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The agents that changed, each once and by name, as GET /api/agents shows them: each read
 * alone, so that a change of one agent costs one row however large the fleet. */
static void tell_agents(sm_ws_hub *h, bool tell)
{
    const size_t n = sm_map_size(h->agents);
    const char **names = tell && n ? calloc(n, sizeof *names) : NULL;
    size_t k = 0, cur = 0;
    const char *name;
    void *val;
    while (names && k < n && sm_map_next(h->agents, &cur, &name, &val) == 1)
        names[k++] = name;
    if (k)
        qsort(names, k, sizeof *names, by_name);
    for (size_t i = 0; i < k; i++) {
        sm_agent_row row;
        sm_error err = {0};
        if (sm_store_agent_get(h->st, names[i], &row, &err) != 0)
            continue;
        char *item = sm_api_agent_item(h->api, &row);
        broadcast(h, item ? sm_event_wrap("agent", "agent", item, 0) : NULL);
        free(item);
        sm_agent_row_fini(&row);
    }
    free(names);
    clear(&h->agents, NULL);
}

static int by_ord(const void *a, const void *b)
{
    const sm_job_row *x = a, *y = b;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* The rows of run_id's jobs that changed since the last look, each read alone (a run of
 * 20,000 jobs is not read whole twice a second for the few that moved), in the run's order. */
static int changed_jobs(sm_ws_hub *h, uint64_t run_id, sm_job_row **rows, size_t *n)
{
    const size_t changed = sm_map_size(h->jobs);
    *rows = calloc(changed ? changed : 1, sizeof **rows);
    *n = 0;
    if (!*rows)
        return SM_ENOMEM;
    size_t cur = 0;
    uint64_t id;
    void *val;
    while (*n < changed && sm_map_next_id(h->jobs, &cur, &id, &val) == 1) {
        sm_error err = {0};
        sm_job_row *j = &(*rows)[*n];
        if (sm_store_job_get(h->st, id, j, &err) != 0)
            continue;
        if (j->run_id == run_id)
            ++*n;
        else
            sm_job_row_fini(j);
    }
    if (*n)
        qsort(*rows, *n, sizeof **rows, by_ord);
    return 0;
}

/* The jobs of run_id that changed (all of them, for a run not told of before), in the run's
 * order. */
static void tell_jobs(sm_ws_hub *h, uint64_t run_id, bool all)
{
    sm_job_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    if ((all ? sm_store_run_jobs(h->st, run_id, &rows, &n, &err)
             : changed_jobs(h, run_id, &rows, &n)) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        double v = NAN;
        sm_metric m = SM_M_SECONDS;
        char disturbed[SM_HOST_REASON_MAX] = "";
        if (rows[i].state == SM_JOB_DONE)
            job_headline(h, &rows[i], &m, &v, disturbed, sizeof disturbed);
        broadcast(h, sm_event_job(rows[i].id, run_id, rows[i].host, rows[i].peer,
                                  sm_job_state_name(rows[i].state), rows[i].reason,
                                  sm_metric_name(m), v, sm_metric_unit(m), disturbed));
    }
    sm_store_jobs_free(rows, n);
}

/* Tells an ended run's anomalies, or, while the worker builds them, marks the run to be told
 * at a later tick (false). */
static bool tell_anomalies(sm_ws_hub *h, uint64_t run_id)
{
    char *body = NULL;
    int status = 0;
    if (!h->anomalies)
        body = sm_api_anomalies_body(h->api, run_id);
    else if (h->anomalies(h->anomalies_ctx, run_id, 0, &status, &body) == 0) {
        hub_mark_id(h->waiting, run_id, MARK);
        return false;
    }
    size_t n = 0;
    char **msgs = body ? sm_event_anomalies(body, run_id, &n) : NULL;
    for (size_t i = 0; i < n; i++) {
        broadcast(h, msgs[i]);
        msgs[i] = NULL;
    }
    sm_event_anomalies_free(msgs, n);
    free(body);
    return true;
}

/* The runs whose anomalies were being built: those that came are told. */
static void tell_waiting(sm_ws_hub *h)
{
    uint64_t ids[64], id;
    size_t n = 0, cur = 0;
    void *val;
    while (n < 64 && sm_map_next_id(h->waiting, &cur, &id, &val))
        ids[n++] = id;
    for (size_t i = 0; i < n; i++) {
        sm_map_del_id(h->waiting, ids[i]);
        tell_anomalies(h, ids[i]); /* marked again while not there yet */
    }
}

/* One run that changed, or whose jobs did: its jobs' news (while it is followed), then the run
 * itself when it changed, then (when it ended) its anomalies. Without browsers only what the
 * hub follows is brought up to date. */
static void tell_run(sm_ws_hub *h, uint64_t id, bool tell)
{
    sm_run_row run;
    sm_error err = {0};
    if (sm_store_run_get(h->st, id, &run, &err) != 0) {
        sm_map_del_id(h->live, id); /* rolled back */
        return;
    }
    const bool running = run.state == SM_RUN_RUNNING;
    char *was = sm_map_get_id(h->live, id);
    if (running && !was)
        hub_mark_id(h->live, id, (was = FRESH));
    if (tell && was)
        tell_jobs(h, id, was == FRESH);
    if (was == FRESH)
        sm_map_put_id(h->live, id, TOLD); /* replaces: no memory needed */
    if (tell && sm_map_get_id(h->runs, id)) {
        char *item = sm_api_run_item(&run);
        broadcast(h, item ? sm_event_wrap("run", "run", item, 0) : NULL);
        free(item);
    }
    if (!running && was) {
        if (tell)
            tell_anomalies(h, id);
        sm_map_del_id(h->live, id);
    }
    sm_run_row_fini(&run);
}

static int by_id_desc(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* What changed since the last look, each object once; runs newest first, as GET /api/runs
 * lists them. */
static void look(sm_ws_hub *h)
{
    const bool tell = h->sessions != NULL || h->tap != NULL;
    tell_agents(h, tell);
    tell_waiting(h);
    size_t n = sm_map_size(h->touched), k = 0, cur = 0;
    uint64_t *ids = calloc(n ? n : 1, sizeof *ids);
    uint64_t id;
    void *val;
    while (ids && k < n && sm_map_next_id(h->touched, &cur, &id, &val))
        ids[k++] = id;
    qsort(ids, k, sizeof *ids, by_id_desc);
    for (size_t i = 0; i < k; i++)
        tell_run(h, ids[i], tell);
    free(ids);
    clear(&h->jobs, NULL);
    clear(&h->touched, NULL);
    clear(&h->runs, NULL);
}

void sm_ws_hub_tap(sm_ws_hub *h, void (*fn)(void *arg, const char *text), void *arg)
{
    h->tap = fn;
    h->tap_arg = arg;
}

void sm_ws_hub_set_anomalies(sm_ws_hub *h,
                             int (*fn)(void *ctx, uint64_t run, uint64_t baseline, int *status,
                                       char **json),
                             void *ctx)
{
    h->anomalies = fn;
    h->anomalies_ctx = ctx;
}

void sm_ws_tick(sm_ws_hub *h)
{
    if (h)
        look(h);
}

/* A new browser starts from the whole picture, so a reloaded page is complete. */
static void send_snapshot(sm_ws_hub *h, session *s)
{
    sm_error err = {0};
    char *agents = sm_api_agents_body(h->api, &err);
    char *runs = agents ? sm_api_runs_body(h->api, &err) : NULL;
    char *snap = agents && runs ? sm_event_snapshot(agents, runs) : NULL;
    if (snap)
        queue_to(s, snap);
    free(snap);
    free(agents);
    free(runs);
}

static void session_drop(session *s)
{
    sm_ws_hub *h = s->hub;
    for (session **p = &h->sessions; *p; p = &(*p)->next) {
        if (*p == s) {
            *p = s->next;
            break;
        }
    }
    while (s->head) {
        msg *m = s->head;
        s->head = m->next;
        free(m);
    }
    s->tail = NULL;
    h->counters[0]--;
}

size_t sm_ws_session_size(void)
{
    return sizeof(session);
}

int sm_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                   size_t len)
{
    session *s = user;
    const struct lws_protocols *proto = lws_get_protocol(wsi);
    sm_ws_hub *h = proto ? proto->user : NULL;
    switch (reason) {
    case LWS_CALLBACK_ESTABLISHED:
        if (!h)
            return -1;
        /* The others hear of what changed up to now (with nobody listening, the hub's memory
         * is brought up to date); the newcomer learns it all from its snapshot, and both then
         * follow the same events. */
        look(h);
        memset(s, 0, sizeof *s);
        s->wsi = wsi;
        s->hub = h;
        s->next = h->sessions;
        h->sessions = s;
        h->counters[0]++;
        send_snapshot(h, s);
        return 0;
    case LWS_CALLBACK_RECEIVE: {
        if (!lws_is_first_fragment(wsi))
            return 0; /* the rest of a message already refused */
        sm_error err = {0};
        int rc = lws_is_final_fragment(wsi)
                     ? sm_event_client_check(in, len, &err)
                     : sm_error_set(&err, SM_EINVAL, "ws: a fragmented or oversized message");
        if (rc == 1) {
            queue_to(s, "{\"type\":\"pong\"}");
        } else {
            h->counters[1]++;
            sm_log(LOG_INFO, "SM-WS-DROP", "dropped a dashboard message: %s", err.msg);
        }
        return 0;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        if (s->cut) {
            static const char why[] = "too slow";
            lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char *)why,
                             sizeof why - 1);
            return -1;
        }
        msg *m = s->head;
        if (!m)
            return 0;
        if (lws_write(wsi, m->data + LWS_PRE, m->len, LWS_WRITE_TEXT) < (int)m->len)
            return -1;
        s->head = m->next;
        if (!s->head)
            s->tail = NULL;
        s->queued -= m->len;
        free(m);
        if (s->head)
            lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_CLOSED:
        if (s && s->hub)
            session_drop(s);
        return 0;
    default:
        return 0;
    }
}
