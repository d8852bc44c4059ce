/* sm-bench-report: the peak memory and time of building a 20,000-rr-job run's table. */
#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/export.h"
#include "coordinator/analysis/verdict.h"
#include "coordinator/reports/reports.h"
#include "coordinator/store/store.h"
#include "proto/codec.h"
#include "proto/log.h"
#include "testkit/rr_run.h"
#include "bench/measure.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Without --db: makes the run in a temporary store, then measures each way in a process of its
 * own (this program again, with --db), so that one's peak is not the other's. */
typedef struct options {
    const char *db;   /* measure the run in this store */
    const char *make; /* only make the run, in a new store there */
    bool whole;       /* the builder before streaming: every result decoded at once */
    bool both;        /* without --db: both ways, not only cell by cell */
    long limit_mb;    /* --report-memory of the cell-by-cell way; 0: the default */
    rr_run_shape shape;
} options;

/* FNV-1a of the report, so that the two ways' outputs can be seen to be the same bytes. */
static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* Measures one way of building the table of run 1 of db; 0 or 1. */
static int measure(const options *o)
{
    sm_error err = {0};
    sm_store *st = NULL;
    if (sm_store_open(&st, o->db, &err) != 0) {
        fprintf(stderr, "open %s: %s\n", o->db, err.msg);
        return 1;
    }
    sm_cell_size *sz = NULL;
    size_t n = 0;
    uint64_t jobs = 0, json = 0;
    double rss0 = bench_peak_rss_mb(), t0 = bench_now_s();
    if (sm_store_run_result_sizes(st, 1, &sz, &n, &err) != 0) {
        fprintf(stderr, "sizes: %s\n", err.msg);
        return 1;
    }
    double t_sizes = bench_now_s() - t0;
    for (size_t i = 0; i < n; i++) {
        jobs += sz[i].n;
        json += sz[i].json_bytes;
    }
    free(sz);
    sm_reports r = {.st = st, .memory_limit = (uint64_t)o->limit_mb * 1000000};
    sm_run_report rep = {0};
    t0 = bench_now_s();
    if (o->whole) {
        rep.body = rr_whole_run_report(st, 1, SM_SCOPE_LOCAL, false, "json", &err);
        rep.len = rep.body ? strlen(rep.body) : 0;
        rep.status = rep.body ? SM_REPORT_OK : SM_REPORT_FAILED;
        rep.err = err;
    } else {
        sm_reports_get(&r, 1, SM_REPORT_TABLE, "format=json", &rep);
    }
    double t1 = bench_now_s();
    if (rep.status != SM_REPORT_OK) {
        fprintf(stderr, "report: %d %s\n", rep.status, rep.err.msg);
        return 1;
    }
    printf("way                         %s\n",
           o->whole ? "whole run (every result decoded at once, as before)"
                    : "cell by cell (sm_reports_get, as the API builds it)");
    printf("run                         %" PRIu64 " rr jobs in %zu cells, %.1f MB of JSON\n", jobs,
           n, (double)json / 1e6);
    printf("peak RSS before the report  %.1f MB\n", rss0);
    printf("peak RSS after the report   %.1f MB\n", bench_peak_rss_mb());
    printf("peak address space          %.1f MB\n", bench_peak_vm_mb());
    printf("table time                  %.2f s (the sizes' query alone: %.2f s)\n", t1 - t0,
           t_sizes);
    printf("table JSON                  %zu bytes, FNV-1a %016" PRIx64 "\n\n", rep.len,
           fnv1a(rep.body, rep.len));
    sm_run_report_fini(&rep);
    sm_reports_fini(&r);
    sm_store_close(st);
    return 0;
}

/* This program again with --db path (and --whole), waited for; 0 when it measured. */
static int measure_apart(const char *self, const char *path, bool whole)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {(char *)self, "--db", (char *)path, whole ? "--whole" : NULL, NULL};
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* Makes the run in a new store at path; 0 or 1. */
static int make_store(const char *path, const rr_run_shape *shape)
{
    sm_error err = {0};
    sm_store *st = NULL;
    rr_run run;
    double t0 = bench_now_s();
    int rc = sm_store_open(&st, path, &err);
    if (rc == 0)
        rc = rr_run_make(st, shape, &run, &err);
    sm_store_close(st);
    if (rc != 0) {
        fprintf(stderr, "making the run: %s\n", err.msg);
        return 1;
    }
    printf("store made in %.1f s: %u hosts x %u tests x %u repetitions, %u templates of %u "
           "round trips\n\n",
           bench_now_s() - t0, shape->hosts, shape->tests, shape->reps, shape->templates,
           shape->samples);
    rr_run_fini(&run);
    return 0;
}

/* Makes the run in a temporary store and measures it one way or both. */
static int make_and_measure(const char *self, const options *o)
{
    char dir[] = "/tmp/sm_bench_report_XXXXXX", path[64];
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/sm.db", dir);
    int rc = make_store(path, &o->shape);
    if (rc == 0)
        rc = measure_apart(self, path, false);
    if (rc == 0 && o->both)
        rc = measure_apart(self, path, true);
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char p[96];
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
    rmdir(dir);
    return rc;
}

static bool shape_option(const char *name, const char *val, rr_run_shape *s)
{
    char *end;
    long v = strtol(val, &end, 10);
    if (*end || v <= 0 || v > 100000)
        return false;
    if (strcmp(name, "--hosts") == 0)
        s->hosts = (uint32_t)v;
    else if (strcmp(name, "--tests") == 0)
        s->tests = (uint32_t)v;
    else if (strcmp(name, "--reps") == 0)
        s->reps = (uint32_t)v;
    else
        return false;
    return true;
}

static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.shape = RR_RUN_ISSUE};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--whole") == 0)
            o->whole = true;
        else if (strcmp(argv[i], "--both") == 0)
            o->both = true;
        else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
            o->db = argv[++i];
        else if (strcmp(argv[i], "--make") == 0 && i + 1 < argc)
            o->make = argv[++i];
        else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc)
            o->limit_mb = strtol(argv[++i], NULL, 10);
        else if (i + 1 >= argc || !shape_option(argv[i], argv[i + 1], &o->shape))
            return -1;
        else
            i++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o) != 0) {
        fprintf(stderr,
                "usage: %s [--both] [--hosts N] [--tests N] [--reps N]\n"
                "       %s --make PATH [--hosts N] [--tests N] [--reps N]   (only the store)\n"
                "       %s --db PATH [--whole] [--limit MB]   (measure run 1 of a store --make\n"
                "       made; --limit: the --report-memory of the cell-by-cell way)\n",
                argv[0], argv[0], argv[0]);
        return 2;
    }
    sm_log_level = LOG_WARNING; /* the store's migrations are no figure */
    return o.db     ? measure(&o)
           : o.make ? make_store(o.make, &o.shape)
                    : make_and_measure(argv[0], &o);
}
