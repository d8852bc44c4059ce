/* sm-bench-hist: the memory and time of decoding a run's rr results as the report builder does. */
#include "proto/codec.h"
#include "proto/hist.h"
#include "proto/result.h"
#include "testkit/draw.h"
#include "bench/measure.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* Only functions that exist in every version of proto/ are used (with bench/measure.c and
 * testkit/draw.c, which stand alone), so that this file builds against older checkouts too
 * and their figures can be put beside the current ones. */

typedef struct {
    long results;   /* decoded and kept alive, as run_data_load keeps a run's */
    long templates; /* distinct encoded results the decoded ones cycle through */
    long samples;   /* round trips a job recorded */
} options;

/* The encoded results the run's results are copies of; NULL on failure. */
static char **make_templates(const options *o, size_t *buckets_total)
{
    char **t = calloc((size_t)o->templates, sizeof *t);
    sm_result r;
    sm_result_init(&r);
    r.ok = true;
    r.hist = sm_hist_new();
    if (!t || !r.hist)
        goto fail;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    *buckets_total = 0;
    for (long i = 0; i < o->templates; i++) {
        sm_hist_reset(r.hist);
        double median = draw_rtt_median_ns(&seed);
        for (long k = 0; k < o->samples; k++)
            sm_hist_record(r.hist, draw_rtt_ns(&seed, median));
        sm_result_set(&r, SM_M_RT_PER_S, 1e9 / median);
        sm_result_set(&r, SM_M_RTT_P50_US, (double)sm_hist_percentile(r.hist, 50) / 1e3);
        size_t cursor = 0, index;
        uint64_t count;
        while (sm_hist_next(r.hist, &cursor, &index, &count) == 0)
            (*buckets_total)++;
        sm_error err = {0};
        if (!(t[i] = sm_codec_result_encode(&r, &err))) {
            fprintf(stderr, "encode: %s\n", err.msg);
            goto fail;
        }
    }
    sm_result_fini(&r);
    return t;
fail:
    for (long i = 0; t && i < o->templates; i++)
        free(t[i]);
    free(t);
    sm_result_fini(&r);
    return NULL;
}

static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){20000, 256, 20000};
    for (int i = 1; i + 1 < argc; i += 2) {
        long v = strtol(argv[i + 1], NULL, 10);
        if (v <= 0)
            return -1;
        if (strcmp(argv[i], "--results") == 0)
            o->results = v;
        else if (strcmp(argv[i], "--templates") == 0)
            o->templates = v;
        else if (strcmp(argv[i], "--samples") == 0)
            o->samples = v;
        else
            return -1;
    }
    return argc % 2 == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: %s [--results N] [--templates N] [--samples N]\n", argv[0]);
        return 2;
    }
    size_t buckets = 0;
    char **t = make_templates(&o, &buckets);
    sm_result *res = calloc((size_t)o.results, sizeof *res);
    if (!t || !res) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    double rss0 = bench_peak_rss_mb(), t0 = bench_now_s();
    for (long i = 0; i < o.results; i++) {
        const char *json = t[i % o.templates];
        sm_error err = {0};
        sm_result_init(&res[i]);
        if (sm_codec_result_decode(json, strlen(json), &res[i], &err) != 0) {
            fprintf(stderr, "decode: %s\n", err.msg);
            return 1;
        }
    }
    double t1 = bench_now_s(), rss1 = bench_peak_rss_mb();
    /* What a report asks of each result's histogram once it is decoded. */
    uint64_t check = 0;
    for (long i = 0; i < o.results; i++)
        check += sm_hist_percentile(res[i].hist, 50) + sm_hist_percentile(res[i].hist, 99.9);
    double t2 = bench_now_s();
    printf("results decoded and kept    %ld (cycling %ld encoded results of %ld round trips)\n",
           o.results, o.templates, o.samples);
    printf("non-empty buckets a result  %.1f\n", (double)buckets / (double)o.templates);
    printf("peak RSS before decoding    %.1f MB\n", rss0);
    printf("peak RSS after decoding     %.1f MB\n", rss1);
    printf("growth per decoded result   %.0f bytes\n", (rss1 - rss0) * 1e6 / (double)o.results);
    printf("peak address space          %.1f MB\n", bench_peak_vm_mb());
    printf("decode time                 %.3f s (%.1f us a result)\n", t1 - t0,
           (t1 - t0) * 1e6 / (double)o.results);
    printf("p50 + p99.9 of every result %.3f s (checksum %llu)\n", t2 - t1,
           (unsigned long long)check);
    for (long i = 0; i < o.results; i++)
        sm_result_fini(&res[i]);
    for (long i = 0; i < o.templates; i++)
        free(t[i]);
    free(res);
    free(t);
    return 0;
}
