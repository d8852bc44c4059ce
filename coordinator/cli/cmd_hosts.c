/* sockmatrix hosts diff and hosts fingerprint: the settings on which hosts differ, side by
 * side, and one host's fingerprint item by item. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/request.h"
#include "proto/fingerprint.h"

/* A value longer than this is cut in the grid (the JSON has it whole): a cgroup path or a
 * kernel command line would push every other column off the screen. */
#define CELL_MAX 60

/* v cut to CELL_MAX characters, ending in "..."; points into buf or at v. */
static const char *cell(const char *v, char *buf, size_t cap)
{
    if (strlen(v) <= CELL_MAX)
        return v;
    snprintf(buf, cap, "%.*s...", CELL_MAX - 3, v);
    return buf;
}

static int answer_error(const char *what, const char *msg)
{
    sm_error err = {0};
    sm_error_set(&err, SM_EPARSE, "%s", msg);
    return sm_cli_bad_answer(what, &err);
}

/* GET path: with --format json its body is printed as it is (*out stays NULL, the exit code is
 * returned); else *out is the parsed answer (NULL and 1 when it could not be had). */
static int get_json(sm_http *h, const char *path, const char *what, sm_cli_format format,
                    cJSON **out)
{
    *out = NULL;
    sm_http_resp r;
    if (sm_cli_call(h, path, NULL, 0, &r))
        return 1;
    if (format == SM_CLI_FMT_JSON) {
        int rc = sm_cli_print_body(r.body, r.len);
        sm_http_resp_fini(&r);
        return rc;
    }
    *out = cJSON_ParseWithLength(r.body, r.len);
    sm_http_resp_fini(&r);
    return *out ? 0 : answer_error(what, "not JSON");
}

/* The side by side as a grid: ITEM and one column per host, then how many items agree. */
static int print_diff(const cJSON *o, sm_cli_format fmt)
{
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(o, "hosts");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(o, "items");
    const cJSON *same = cJSON_GetObjectItemCaseSensitive(o, "same");
    const int nh = cJSON_GetArraySize(hosts);
    if (!cJSON_IsArray(hosts) || !cJSON_IsArray(items) || !cJSON_IsNumber(same) || nh < 2 ||
        nh > SM_CLI_HOSTS_MAX)
        return answer_error("GET /api/fingerprints/diff", "expected hosts, same and items");
    char align[SM_GRID_COLS + 1];
    memset(align, 'l', sizeof align - 1);
    align[nh + 1] = '\0';
    sm_grid g = {(size_t)nh + 1, 0, align, NULL, fmt};
    const char *row[SM_GRID_COLS];
    row[0] = "ITEM";
    for (int i = 0; i < nh; i++) {
        const cJSON *n = cJSON_GetArrayItem(hosts, i);
        if (!cJSON_IsString(n)) {
            sm_grid_fini(&g);
            return answer_error("GET /api/fingerprints/diff", "hosts: expected names");
        }
        row[i + 1] = n->valuestring;
    }
    int rc = sm_grid_row(&g, row);
    const cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
        if (rc)
            break;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "item");
        const cJSON *values = cJSON_GetObjectItemCaseSensitive(it, "values");
        if (!cJSON_IsString(name) || !cJSON_IsObject(values)) {
            sm_grid_fini(&g);
            return answer_error("GET /api/fingerprints/diff", "items: expected item and values");
        }
        char buf[SM_GRID_COLS][CELL_MAX + 1];
        row[0] = name->valuestring;
        for (int i = 0; i < nh; i++) {
            const cJSON *v =
                cJSON_GetObjectItemCaseSensitive(values, cJSON_GetArrayItem(hosts, i)->valuestring);
            row[i + 1] = cJSON_IsString(v) ? cell(v->valuestring, buf[i], sizeof buf[i]) : "-";
        }
        rc = sm_grid_row(&g, row);
    }
    const int n_items = cJSON_GetArraySize(items);
    if (n_items == 0 && !rc && fmt == SM_CLI_FMT_TABLE) {
        sm_grid_fini(&g);
        printf("no differences: %.0f items the same\n", same->valuedouble);
        return 0;
    }
    rc = sm_grid_done(&g, rc);
    if (!rc && fmt == SM_CLI_FMT_TABLE)
        printf("\n%d %s, %.0f items the same\n", n_items,
               n_items == 1 ? "item differs" : "items differ", same->valuedouble);
    return rc;
}

int sm_cli_cmd_hosts_diff(sm_http *h, const sm_cli_opts *o)
{
    char path[64 + SM_CLI_HOSTS_MAX * 66];
    int at = snprintf(path, sizeof path, "/api/fingerprints/diff?hosts=");
    for (size_t i = 0; i < o->n_host_names; i++)
        at += snprintf(path + at, sizeof path - (size_t)at, "%s%s", i ? "," : "", o->host_names[i]);
    cJSON *j = NULL;
    int rc = get_json(h, path, "GET /api/fingerprints/diff", o->format, &j);
    if (j == NULL)
        return rc;
    rc = print_diff(j, o->format);
    cJSON_Delete(j);
    return rc;
}

/* "2026-12-01 14:02:03 UTC" for a wall-clock time in ms; "-" for none. */
static const char *when(double ms, char *buf, size_t cap)
{
    if (!(ms > 0))
        return "-";
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm))
        return "-";
    return buf;
}

static double num(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* The fingerprint's items as a grid, then its history, oldest first. */
static int print_fingerprint(const char *host, const cJSON *o, const sm_fingerprint *fp,
                             sm_cli_format fmt)
{
    const cJSON *hash = cJSON_GetObjectItemCaseSensitive(o, "hash");
    char t1[40], t2[40];
    if (fmt != SM_CLI_FMT_TABLE) {
        /* The data alone: the items, each a row. */
        sm_grid g = {2, 0, "ll", NULL, fmt};
        static const char *const head[] = {"ITEM", "VALUE"};
        int rc = sm_grid_row(&g, head);
        for (size_t i = 0; i < fp->n && !rc; i++) {
            char text[SM_FP_VALUE_MAX + 64];
            const char *row[] = {fp->items[i].key,
                                 sm_fp_item_text(&fp->items[i], text, sizeof text)};
            rc = sm_grid_row(&g, row);
        }
        return sm_grid_done(&g, rc);
    }
    printf("%s: fingerprint %s, %zu items, seen from %s to %s\n", host,
           cJSON_IsString(hash) ? hash->valuestring : "-", fp->n,
           when(num(o, "first_seen_ms"), t1, sizeof t1),
           when(num(o, "last_seen_ms"), t2, sizeof t2));
    if (fp->omitted_ifaces)
        printf("%" PRIu32 " interfaces left out: %s\n", fp->omitted_ifaces, fp->omitted_reason);
    putchar('\n');
    sm_grid g = {2, 0, "ll", NULL, SM_CLI_FMT_TABLE};
    static const char *const head[] = {"ITEM", "VALUE"};
    int rc = sm_grid_row(&g, head);
    for (size_t i = 0; i < fp->n && !rc; i++) {
        char text[SM_FP_VALUE_MAX + 64], buf[CELL_MAX + 1];
        const char *row[] = {
            fp->items[i].key,
            cell(sm_fp_item_text(&fp->items[i], text, sizeof text), buf, sizeof buf)};
        rc = sm_grid_row(&g, row);
    }
    if ((rc = sm_grid_done(&g, rc)))
        return rc;
    const cJSON *hist = cJSON_GetObjectItemCaseSensitive(o, "history");
    if (cJSON_GetArraySize(hist) < 2)
        return 0;
    printf("\n");
    sm_grid hg = {3, 0, "lll", NULL, SM_CLI_FMT_TABLE};
    static const char *const hhead[] = {"FINGERPRINT", "FIRST SEEN", "LAST SEEN"};
    rc = sm_grid_row(&hg, hhead);
    const cJSON *e;
    cJSON_ArrayForEach(e, hist)
    {
        if (rc)
            break;
        const cJSON *eh = cJSON_GetObjectItemCaseSensitive(e, "hash");
        const char *row[] = {cJSON_IsString(eh) ? eh->valuestring : "-",
                             when(num(e, "first_seen_ms"), t1, sizeof t1),
                             when(num(e, "last_seen_ms"), t2, sizeof t2)};
        rc = sm_grid_row(&hg, row);
    }
    return sm_grid_done(&hg, rc);
}

int sm_cli_cmd_hosts_fingerprint(sm_http *h, const sm_cli_opts *o)
{
    const char *host = o->host_names[0];
    char path[128];
    snprintf(path, sizeof path, "/api/agents/%s/fingerprint", host);
    cJSON *j = NULL;
    int rc = get_json(h, path, "GET /api/agents/NAME/fingerprint", o->format, &j);
    if (j == NULL)
        return rc;
    sm_fingerprint fp;
    sm_fp_init(&fp);
    sm_error err = {0};
    if (sm_fp_from_cjson(cJSON_GetObjectItemCaseSensitive(j, "fingerprint"), &fp, &err) != 0)
        rc = sm_cli_bad_answer("GET /api/agents/NAME/fingerprint", &err);
    else
        rc = print_fingerprint(host, j, &fp, o->format);
    sm_fp_fini(&fp);
    cJSON_Delete(j);
    return rc;
}
