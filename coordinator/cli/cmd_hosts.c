/* sockmatrix hosts diff and hosts fingerprint: the settings on which hosts differ, side by
 * side, and one host's fingerprint item by item. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/cli/apiview.h"
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

/* GET path: with --format json its body is printed as it is; else *r is the answer to decode
 * (*decode true, the caller's to sm_http_resp_fini). The exit code, 1 once a failure is
 * reported. */
static int get_answer(sm_http *h, const char *path, const char *field, const char *words,
                      sm_cli_format format, sm_http_resp *r, bool *decode)
{
    *decode = false;
    /* The hosts are the command's arguments, not a --hosts option: an unknown one is said as
     * the command's and exits 2. */
    const int called = sm_cli_call_arg(h, path, field, words, r);
    if (called)
        return called;
    if (format != SM_CLI_FMT_JSON) {
        *decode = true;
        return 0;
    }
    int rc = sm_cli_print_body(r->body, r->len);
    sm_http_resp_fini(r);
    return rc;
}

/* The side by side as a grid: ITEM and one column per host, then how many items agree. */
static int print_diff(const sm_apiview_fp_diff *d, sm_cli_format fmt)
{
    const size_t nh = d->n_hosts;
    char align[SM_GRID_COLS + 1];
    memset(align, 'l', sizeof align - 1);
    align[nh + 1] = '\0';
    sm_grid g = {nh + 1, 0, align, NULL, fmt};
    const char *row[SM_GRID_COLS];
    row[0] = "ITEM";
    for (size_t i = 0; i < nh; i++)
        row[i + 1] = d->hosts[i];
    int rc = sm_grid_row(&g, row);
    for (size_t k = 0; k < d->n_items && !rc; k++) {
        char buf[SM_GRID_COLS][CELL_MAX + 1];
        row[0] = d->items[k].item;
        for (size_t i = 0; i < nh; i++) {
            const char *v = d->items[k].values[i];
            row[i + 1] = v ? cell(v, buf[i], sizeof buf[i]) : "-";
        }
        rc = sm_grid_row(&g, row);
    }
    const size_t n_items = d->n_items;
    if (n_items == 0 && !rc && fmt == SM_CLI_FMT_TABLE) {
        sm_grid_fini(&g);
        printf("no differences: %.0f items the same\n", d->same);
        return 0;
    }
    rc = sm_grid_done(&g, rc);
    if (!rc && fmt == SM_CLI_FMT_TABLE)
        printf("\n%zu %s, %.0f items the same\n", n_items,
               n_items == 1 ? "item differs" : "items differ", d->same);
    return rc;
}

int sm_cli_cmd_hosts_diff(sm_http *h, const sm_cli_opts *o)
{
    char path[64 + SM_CLI_HOSTS_MAX * 66];
    int at = snprintf(path, sizeof path, "/api/fingerprints/diff?hosts=");
    for (size_t i = 0; i < o->n_host_names; i++)
        at += snprintf(path + at, sizeof path - (size_t)at, "%s%s", i ? "," : "", o->host_names[i]);
    sm_http_resp r;
    bool decode;
    int rc = get_answer(h, path, "hosts", "hosts diff", o->format, &r, &decode);
    if (!decode)
        return rc;
    sm_apiview_fp_diff d;
    sm_error err = {0};
    rc = sm_apiview_fp_diff_decode(r.body, r.len, SM_CLI_HOSTS_MAX, &d, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("GET /api/fingerprints/diff", &err);
    rc = print_diff(&d, o->format);
    sm_apiview_fp_diff_fini(&d);
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

/* The fingerprint's items as a grid, then its history, oldest first. */
static int print_fingerprint(const char *host, const sm_apiview_fingerprint *f, sm_cli_format fmt)
{
    const sm_fingerprint *fp = &f->fp;
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
           f->latest.hash ? f->latest.hash : "-", fp->n,
           when(f->latest.first_seen_ms, t1, sizeof t1),
           when(f->latest.last_seen_ms, t2, sizeof t2));
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
    if (f->n_history < 2)
        return 0;
    printf("\n");
    sm_grid hg = {3, 0, "lll", NULL, SM_CLI_FMT_TABLE};
    static const char *const hhead[] = {"FINGERPRINT", "FIRST SEEN", "LAST SEEN"};
    rc = sm_grid_row(&hg, hhead);
    for (size_t i = 0; i < f->n_history && !rc; i++) {
        const sm_apiview_fp_seen *e = &f->history[i];
        const char *row[] = {e->hash ? e->hash : "-", when(e->first_seen_ms, t1, sizeof t1),
                             when(e->last_seen_ms, t2, sizeof t2)};
        rc = sm_grid_row(&hg, row);
    }
    return sm_grid_done(&hg, rc);
}

int sm_cli_cmd_hosts_fingerprint(sm_http *h, const sm_cli_opts *o)
{
    const char *host = o->host_names[0];
    char path[128];
    snprintf(path, sizeof path, "/api/agents/%s/fingerprint", host);
    sm_http_resp r;
    bool decode;
    int rc = get_answer(h, path, "name", "hosts fingerprint", o->format, &r, &decode);
    if (!decode)
        return rc;
    sm_apiview_fingerprint f;
    sm_error err = {0};
    rc = sm_apiview_fingerprint_decode(r.body, r.len, &f, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return sm_cli_bad_answer("GET /api/agents/NAME/fingerprint", &err);
    rc = print_fingerprint(host, &f, o->format);
    sm_apiview_fingerprint_fini(&f);
    return rc;
}
