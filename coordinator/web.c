/* The dashboard's static files and the hub of live events for browsers on /ws. */
#include "coordinator/web.h"

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

#include "coordinator/export.h"
#include "proto/map.h"
#include "proto/codec.h"
#include "proto/events.h"
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

struct sm_ws_hub {
    sm_api_ctx *api;
    sm_store *st;
    uint64_t *counters; /* clients, rejected, cut */
    session *sessions;
    sm_map *agents;  /* name -> the agent's JSON as last told */
    sm_map *runs;    /* id -> the run's JSON as last told */
    sm_map *jobs;    /* id -> state as last told, jobs of watched runs */
    sm_map *watched; /* id -> (non-NULL) runs seen running */
    bool primed;     /* runs holds every run known at the last look */
};

sm_ws_hub *sm_ws_hub_new(sm_api_ctx *api, sm_store *st, uint64_t *counters)
{
    sm_ws_hub *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->api = api;
    h->st = st;
    h->counters = counters;
    h->agents = sm_map_new();
    h->runs = sm_map_new();
    h->jobs = sm_map_new();
    h->watched = sm_map_new();
    if (!h->agents || !h->runs || !h->jobs || !h->watched) {
        sm_ws_hub_free(h);
        return NULL;
    }
    return h;
}

void sm_ws_hub_free(sm_ws_hub *h)
{
    if (!h)
        return;
    sm_map_free(h->agents, free);
    sm_map_free(h->runs, free);
    sm_map_free(h->jobs, free);
    sm_map_free(h->watched, free);
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
    free(text);
}

/* GET path through the API; the body, or NULL. */
static char *api_get(sm_ws_hub *h, const char *path)
{
    char *resp = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    int status = sm_api_handle(h->api, "GET", path, NULL, NULL, "", 0, &resp, &len, &ctype);
    if (status != 200) {
        free(resp);
        return NULL;
    }
    return resp;
}

/* Replaces the text kept under key; returns whether it changed. */
static bool remember(sm_map *m, const char *key, const char *text)
{
    char *old = sm_map_get(m, key);
    if (old && strcmp(old, text) == 0)
        return false;
    char *copy = strdup(text);
    if (!copy)
        return false;
    free(sm_map_del(m, key));
    if (sm_map_put(m, key, copy) != 0) {
        free(copy);
        return false;
    }
    return true;
}

static void tell_agents(sm_ws_hub *h)
{
    char *json = api_get(h, "/api/agents");
    char **items, **ids;
    long n = json ? sm_event_split(json, "agents", &items, &ids) : -1;
    for (long i = 0; i < n; i++)
        if (remember(h->agents, ids[i], items[i]))
            broadcast(h, sm_event_wrap("agent", "agent", items[i], 0));
    if (n >= 0)
        sm_event_items_free(items, ids, n);
    free(json);
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

static void tell_jobs(sm_ws_hub *h, uint64_t run_id)
{
    sm_job_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (sm_store_run_jobs(h->st, run_id, &rows, &n, &err) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        char key[24];
        snprintf(key, sizeof key, "%" PRIu64, rows[i].id);
        const char *state = sm_job_state_name(rows[i].state);
        if (!remember(h->jobs, key, state))
            continue;
        double v = NAN;
        sm_metric m = SM_M_SECONDS;
        char disturbed[SM_HOST_REASON_MAX] = "";
        if (rows[i].state == SM_JOB_DONE)
            job_headline(h, &rows[i], &m, &v, disturbed, sizeof disturbed);
        broadcast(h,
                  sm_event_job(rows[i].id, run_id, rows[i].host, rows[i].peer, state,
                               rows[i].reason, sm_metric_name(m), v, sm_metric_unit(m), disturbed));
    }
    sm_store_jobs_free(rows, n);
}

/* A run that ended: its anomalies, and it is no longer watched. */
static void tell_ended(sm_ws_hub *h, uint64_t run_id, const char *key)
{
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/anomalies", run_id);
    char *json = api_get(h, path);
    char **items, **ids;
    long n = json ? sm_event_split(json, "anomalies", &items, &ids) : -1;
    for (long i = 0; i < n; i++)
        broadcast(h, sm_event_wrap("anomaly", "anomaly", items[i], run_id));
    if (n >= 0)
        sm_event_items_free(items, ids, n);
    free(json);
    free(sm_map_del(h->watched, key));
}

/* Per run, in the order a page needs them: its jobs' news, then the run itself, then (once it
 * ended) its anomalies. */
static void tell_runs(sm_ws_hub *h)
{
    char *json = api_get(h, "/api/runs");
    char **items, **ids;
    long n = json ? sm_event_split(json, "runs", &items, &ids) : -1;
    for (long i = 0; i < n; i++) {
        char state[16] = "";
        uint64_t id = strtoull(ids[i], NULL, 10);
        sm_event_field(items[i], "state", state, sizeof state);
        const bool running = strcmp(state, "running") == 0;
        const bool watched = sm_map_get(h->watched, ids[i]) != NULL;
        /* A run that started and ended between two looks was never watched: its news is told
         * all at once. */
        const bool ended_unseen = h->primed && !running && !sm_map_get(h->runs, ids[i]);
        if (running && !watched) {
            char *mark = strdup("1");
            if (mark && sm_map_put(h->watched, ids[i], mark) != 0)
                free(mark);
        }
        if (running || watched || ended_unseen)
            tell_jobs(h, id);
        if (remember(h->runs, ids[i], items[i]))
            broadcast(h, sm_event_wrap("run", "run", items[i], 0));
        if (!running && (watched || ended_unseen))
            tell_ended(h, id, ids[i]);
    }
    if (n >= 0)
        sm_event_items_free(items, ids, n);
    free(json);
}

static void look(sm_ws_hub *h)
{
    tell_agents(h);
    tell_runs(h);
    h->primed = true;
}

void sm_ws_tick(sm_ws_hub *h)
{
    if (h && h->sessions)
        look(h);
}

/* A new browser starts from the whole picture, so a reloaded page is complete. */
static void send_snapshot(sm_ws_hub *h, session *s)
{
    char *agents = api_get(h, "/api/agents");
    char *runs = api_get(h, "/api/runs");
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
