/* HTTP routes of host fingerprints: one host's latest fingerprint with its history, and the
 * side by side of several hosts' latest fingerprints. */
#include "coordinator/api/api.h"
#include "coordinator/api/internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/analysis/fpdiff.h"
#include "proto/envelope.h"
#include "proto/fingerprint.h"

/* ---- GET /api/agents/{name}/fingerprint ---- */

static cJSON *history_json(const sm_fp_row *rows, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddStringToObject(o, "hash", rows[i].hash);
        cJSON_AddNumberToObject(o, "first_seen_ms", (double)rows[i].first_seen_ms);
        cJSON_AddNumberToObject(o, "last_seen_ms", (double)rows[i].last_seen_ms);
    }
    return arr;
}

/* The body for the agent's latest row and its history; NULL when out of memory. The stored
 * document is embedded as it was stored (the store holds only what sm_fp_decode accepted). */
static char *fingerprint_body(const sm_fp_row *latest, const sm_fp_row *hist, size_t n,
                              uint64_t left_out)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "agent", latest->agent);
    cJSON_AddStringToObject(o, "hash", latest->hash);
    cJSON_AddNumberToObject(o, "first_seen_ms", (double)latest->first_seen_ms);
    cJSON_AddNumberToObject(o, "last_seen_ms", (double)latest->last_seen_ms);
    cJSON *doc = latest->json ? cJSON_Parse(latest->json) : NULL;
    cJSON_AddItemToObject(o, "fingerprint", doc ? doc : cJSON_CreateNull());
    cJSON *h = history_json(hist, n);
    cJSON_AddItemToObject(o, "history", h ? h : cJSON_CreateArray());
    /* the changes before the last SM_FP_HISTORY_MAX, which the store no longer lists */
    cJSON_AddNumberToObject(o, "history_left_out", (double)left_out);
    char *body = h ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return body;
}

int sm_api_get_fingerprint(sm_api_ctx *a, const char *name, char **resp, size_t *len)
{
    char msg[160];
    if (!sm_name_valid(name))
        return sm_api_reply_error(resp, len, 400, "agent name: expected 1 to 64 of [A-Za-z0-9._-]",
                                  "name");
    sm_agent_status st;
    int64_t seen;
    if (!sm_control_agent_live(a->ctl, name, &st, &seen)) {
        snprintf(msg, sizeof msg, "no agent named '%s' has registered", name);
        return sm_api_reply_error(resp, len, 404, msg, "name");
    }
    sm_fp_row latest = {0};
    sm_fp_row *hist = NULL;
    size_t n = 0;
    uint64_t left_out = 0;
    bool found = false;
    sm_error err = {0};
    int status;
    if (sm_store_fp_latest(a->st, name, &latest, &found, &err) != 0) {
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
    } else if (!found) {
        snprintf(msg, sizeof msg, "agent '%s' has sent no fingerprint yet", name);
        status = sm_api_reply_error(resp, len, 404, msg, "name");
    } else if (sm_store_fp_history(a->st, name, &hist, &n, &left_out, &err) != 0) {
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
    } else {
        status = sm_api_reply(resp, len, 200, fingerprint_body(&latest, hist, n, left_out));
    }
    sm_fp_rows_free(hist, n);
    sm_fp_row_fini(&latest);
    return status;
}

/* ---- GET /api/fingerprints/diff?hosts=h1,h2[,...] ---- */

#define DIFF_HOSTS_MIN 2
#define DIFF_HOSTS_MAX 16

typedef struct diff_hosts {
    char name[DIFF_HOSTS_MAX][SM_NAME_MAX + 1];
    size_t n;
    sm_fingerprint fp[DIFF_HOSTS_MAX];
    size_t n_fp; /* initialised so far */
} diff_hosts;

/* The value of hosts=... in the query, percent-decoded into buf (a browser sends the commas
 * as %2C); false when absent, too long or badly escaped. */
static bool hosts_param(const char *query, char *buf, size_t cap, bool *present)
{
    const int r = sm_query_get(query, "hosts", buf, cap);
    *present = r != 0;
    return r == 1;
}

/* Splits hosts=... into names, each valid and given once; 0 or a 400 with msg set. */
static int parse_hosts(const char *query, diff_hosts *d, char *msg, size_t cap)
{
    char buf[DIFF_HOSTS_MAX * (SM_NAME_MAX + 1) + 1];
    bool present;
    if (!hosts_param(query, buf, sizeof buf, &present)) {
        snprintf(msg, cap,
                 present ? "hosts: expected %d to %d agent names separated by commas"
                         : "hosts: give the hosts to compare (hosts=h1,h2; %d to %d of them)",
                 DIFF_HOSTS_MIN, DIFF_HOSTS_MAX);
        return 400;
    }
    /* strtok_r passes over empty names: "h1,,h2" is a typo worth saying. */
    if (strstr(buf, ",,") || buf[0] == ',' || (buf[0] && buf[strlen(buf) - 1] == ',')) {
        snprintf(msg, cap, "hosts: an empty name in '%.200s'", buf);
        return 400;
    }
    char *save = NULL;
    for (char *p = buf;; p = NULL) {
        char *tok = strtok_r(p, ",", &save);
        if (!tok)
            break;
        if (!sm_name_valid(tok)) {
            snprintf(msg, cap, "hosts: '%.64s' is not an agent name", tok);
            return 400;
        }
        for (size_t i = 0; i < d->n; i++)
            if (strcmp(d->name[i], tok) == 0) {
                snprintf(msg, cap, "hosts: '%s' is given twice", tok);
                return 400;
            }
        if (d->n == DIFF_HOSTS_MAX) {
            snprintf(msg, cap, "hosts: at most %d hosts", DIFF_HOSTS_MAX);
            return 400;
        }
        snprintf(d->name[d->n++], sizeof d->name[0], "%s", tok);
    }
    if (d->n < DIFF_HOSTS_MIN) {
        snprintf(msg, cap, "hosts: compare at least %d hosts (hosts=h1,h2)", DIFF_HOSTS_MIN);
        return 400;
    }
    return 0;
}

/* Each host's latest fingerprint, decoded: 0, 404 naming the host without one, or 500. */
static int load_fps(sm_api_ctx *a, diff_hosts *d, char *msg, size_t cap)
{
    for (size_t i = 0; i < d->n; i++) {
        sm_fp_row row = {0};
        bool found = false;
        sm_error err = {0};
        sm_fp_init(&d->fp[i]);
        d->n_fp = i + 1;
        int rc = sm_store_fp_latest(a->st, d->name[i], &row, &found, &err);
        if (rc == 0 && found)
            rc = sm_fp_decode(row.json, strlen(row.json), &d->fp[i], &err);
        sm_fp_row_fini(&row);
        if (rc != 0) {
            snprintf(msg, cap, "%s: %s", d->name[i], err.msg);
            return 500;
        }
        if (!found) {
            snprintf(msg, cap, "hosts: '%s' has no fingerprint (not an agent, or it sent none)",
                     d->name[i]);
            return 404;
        }
    }
    return 0;
}

static char *diff_body(const diff_hosts *d, const sm_fp_table *t)
{
    cJSON *o = cJSON_CreateObject(), *hosts = cJSON_AddArrayToObject(o, "hosts");
    for (size_t i = 0; hosts && i < d->n; i++)
        cJSON_AddItemToArray(hosts, cJSON_CreateString(d->name[i]));
    cJSON_AddNumberToObject(o, "same", (double)t->same);
    cJSON *items = cJSON_AddArrayToObject(o, "items");
    bool ok = o && hosts && items;
    for (size_t r = 0; ok && r < t->n; r++) {
        char label[SM_FP_KEY_MAX + 64];
        cJSON *it = cJSON_CreateObject();
        ok = it && cJSON_AddItemToArray(items, it);
        if (!ok) {
            cJSON_Delete(it);
            break;
        }
        cJSON_AddStringToObject(it, "item", t->rows[r].item);
        cJSON_AddStringToObject(it, "label",
                                sm_fp_item_label(t->rows[r].item, label, sizeof label));
        cJSON *values = cJSON_AddObjectToObject(it, "values");
        for (size_t i = 0; values && i < d->n; i++)
            cJSON_AddStringToObject(values, d->name[i], t->rows[r].values[i]);
        ok = values != NULL;
    }
    char *body = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return body;
}

int sm_api_get_fp_diff(sm_api_ctx *a, const char *query, char **resp, size_t *len)
{
    diff_hosts *d = calloc(1, sizeof *d);
    if (!d)
        return sm_api_reply_error(resp, len, 500, "out of memory", NULL);
    char msg[320];
    int status = parse_hosts(query, d, msg, sizeof msg);
    if (status == 0)
        status = load_fps(a, d, msg, sizeof msg);
    if (status != 0) {
        status = sm_api_reply_error(resp, len, status, msg, status < 500 ? "hosts" : NULL);
    } else {
        sm_fp_host hosts[DIFF_HOSTS_MAX];
        for (size_t i = 0; i < d->n; i++)
            hosts[i] = (sm_fp_host){d->name[i], &d->fp[i]};
        sm_fp_table t = {0};
        sm_error err = {0};
        if (sm_fp_side_by_side(hosts, d->n, &t, &err) != 0)
            status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
        else
            status = sm_api_reply(resp, len, 200, diff_body(d, &t));
        sm_fp_table_fini(&t);
    }
    for (size_t i = 0; i < d->n_fp; i++)
        sm_fp_fini(&d->fp[i]);
    free(d);
    return status;
}
