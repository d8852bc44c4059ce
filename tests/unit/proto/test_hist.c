/* Unit tests of the log-linear histogram (proto/hist.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proto/err.h"
#include "proto/hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_RANDOM 100000

#include "tests/unit/testutil.h"
#include "testkit/draw.h"

/* Log-uniform over [1, 1e10]: every decade gets as many values, so both the exact buckets
 * and the linear sub-buckets of many powers of two are exercised. */
static uint64_t random_value(uint64_t *s)
{
    double u = (double)(draw_next(s) >> 11) * 0x1p-53;
    return (uint64_t)exp(u * log(1e10)) + 1;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

static uint64_t *random_values(size_t n, uint64_t seed)
{
    uint64_t *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = random_value(&seed);
    return v;
}

static sm_hist *hist_of(const uint64_t *v, size_t n)
{
    sm_hist *h = sm_hist_new();
    assert_non_null(h);
    for (size_t i = 0; i < n; i++)
        sm_hist_record(h, v[i]);
    return h;
}

/* |got - want| <= want/1024 + 1: the bucket precision plus the integer midpoint's rounding. */
static void assert_within_bucket_precision(uint64_t got, uint64_t want)
{
    uint64_t diff = got > want ? got - want : want - got;
    if (diff > want / 1024 + 1)
        fail_msg("got %llu, want %llu (+-%llu)", (unsigned long long)got, (unsigned long long)want,
                 (unsigned long long)(want / 1024 + 1));
}

static void test_hist_percentiles_match_sorted_reference_within_bucket_precision(void **state)
{
    (void)state;
    uint64_t *v = random_values(N_RANDOM, 0x9e3779b97f4a7c15ull);
    sm_hist *h = hist_of(v, N_RANDOM);
    qsort(v, N_RANDOM, sizeof *v, cmp_u64);

    /* Ranks ceil(q/100 * 100000), written out so the test does not share the code's rounding. */
    static const struct {
        double q;
        size_t rank;
    } cases[] = {{50, 50000}, {90, 90000}, {99, 99000}, {99.9, 99900}, {100, 100000}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_within_bucket_precision(sm_hist_percentile(h, cases[i].q), v[cases[i].rank - 1]);
    /* The top percentile is clamped to the exact max rather than a bucket midpoint. */
    assert_int_equal(sm_hist_percentile(h, 100), v[N_RANDOM - 1]);

    double sum = 0;
    for (size_t i = 0; i < N_RANDOM; i++)
        sum += (double)v[i];
    double mean = sum / N_RANDOM;
    assert_true(fabs(sm_hist_mean(h) - mean) <= mean / 1024);

    sm_hist_free(h);
    free(v);
}

static void test_hist_percentile_uses_ceil_rank_on_exact_buckets(void **state)
{
    (void)state;
    sm_hist *h = sm_hist_new();
    assert_non_null(h);
    for (uint64_t x = 100; x >= 1; x--)
        sm_hist_record(h, x);
    assert_int_equal(sm_hist_percentile(h, 0.5), 1); /* rank ceil(0.5) = 1 */
    assert_int_equal(sm_hist_percentile(h, 1), 1);
    assert_int_equal(sm_hist_percentile(h, 50), 50);
    assert_int_equal(sm_hist_percentile(h, 50.5), 51);
    assert_int_equal(sm_hist_percentile(h, 90), 90);
    assert_int_equal(sm_hist_percentile(h, 99), 99);
    assert_int_equal(sm_hist_percentile(h, 99.9), 100);
    assert_int_equal(sm_hist_percentile(h, 100), 100);
    /* 1+...+100 = 5050; values below 2048 have their own bucket, so the mean is exact. */
    assert_double_near(sm_hist_mean(h), 50.5, 1e-12);
    sm_hist_free(h);
}

static void test_hist_min_and_max_are_exact(void **state)
{
    (void)state;
    uint64_t *v = random_values(N_RANDOM, 42);
    sm_hist *h = hist_of(v, N_RANDOM);
    qsort(v, N_RANDOM, sizeof *v, cmp_u64);
    assert_int_equal(sm_hist_count(h), N_RANDOM);
    assert_int_equal(sm_hist_min(h), v[0]);
    assert_int_equal(sm_hist_max(h), v[N_RANDOM - 1]);
    sm_hist_free(h);
    free(v);

    /* Inside wide buckets (width 2^9 and 2^16), away from bucket edges and midpoints. */
    h = sm_hist_new();
    assert_non_null(h);
    sm_hist_record(h, 123456789);
    sm_hist_record(h, 1000003);
    sm_hist_record(h, 5000000);
    assert_int_equal(sm_hist_min(h), 1000003);
    assert_int_equal(sm_hist_max(h), 123456789);
    sm_hist_free(h);
}

static void test_hist_index_of_layout_boundaries(void **state)
{
    (void)state;
    assert_int_equal(sm_hist_bucket_count(), 2048 + 25 * 1024);
    assert_int_equal(sm_hist_index(0), 0);
    assert_int_equal(sm_hist_index(2047), 2047);
    assert_int_equal(sm_hist_index(2048), 2048);
    assert_int_equal(sm_hist_index(2049), 2048);
    assert_int_equal(sm_hist_index(2050), 2049);
    assert_int_equal(sm_hist_index(4095), 3071);
    assert_int_equal(sm_hist_index(4096), 3072);
    assert_int_equal(sm_hist_index(SM_HIST_MAX_VALUE), sm_hist_bucket_count() - 1);

    uint64_t low, high;
    sm_hist_bucket_range(2048, &low, &high);
    assert_int_equal(low, 2048);
    assert_int_equal(high, 2049);
    sm_hist_bucket_range(3072, &low, &high);
    assert_int_equal(low, 4096);
    assert_int_equal(high, 4099);
}

static void test_hist_bucket_ranges_are_contiguous_and_hold_their_own_values(void **state)
{
    (void)state;
    size_t n = sm_hist_bucket_count();
    uint64_t prev_high = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t low, high;
        sm_hist_bucket_range(i, &low, &high);
        assert_true(low <= high);
        if (i == 0)
            assert_int_equal(low, 0);
        else
            assert_int_equal(low, prev_high + 1);
        assert_int_equal(sm_hist_index(low), i);
        assert_int_equal(sm_hist_index(high), i);
        /* The 3-significant-digit promise: a bucket is at most 1/1024 of its values wide. */
        if (low > 0)
            assert_true((high - low + 1) * 1024 <= low || high == low);
        prev_high = high;
    }
    assert_int_equal(prev_high, SM_HIST_MAX_VALUE);

    uint64_t seed = 7;
    for (size_t k = 0; k < N_RANDOM; k++) {
        uint64_t x = random_value(&seed), low, high;
        sm_hist_bucket_range(sm_hist_index(x), &low, &high);
        assert_in_range(x, low, high);
    }
}

static void test_hist_merge_of_halves_equals_histogram_of_all(void **state)
{
    (void)state;
    uint64_t *v = random_values(N_RANDOM, 1234567);
    sm_hist *all = hist_of(v, N_RANDOM);
    sm_hist *a = hist_of(v, N_RANDOM / 3);
    sm_hist *b = hist_of(v + N_RANDOM / 3, N_RANDOM - N_RANDOM / 3);
    sm_hist_merge(a, b);

    assert_int_equal(sm_hist_count(a), sm_hist_count(all));
    assert_int_equal(sm_hist_min(a), sm_hist_min(all));
    assert_int_equal(sm_hist_max(a), sm_hist_max(all));
    size_t ca = 0, call = 0, ia, iall, buckets = 0;
    uint64_t na, nall;
    for (;;) {
        int ra = sm_hist_next(a, &ca, &ia, &na);
        int rall = sm_hist_next(all, &call, &iall, &nall);
        assert_int_equal(ra, rall);
        if (ra != 0)
            break;
        assert_int_equal(ia, iall);
        assert_int_equal(na, nall);
        buckets++;
    }
    assert_true(buckets > 1000);
    assert_int_equal(sm_hist_percentile(a, 99), sm_hist_percentile(all, 99));
    assert_double_near(sm_hist_mean(a), sm_hist_mean(all), 1e-6);

    sm_hist_free(all);
    sm_hist_free(a);
    sm_hist_free(b);
    free(v);
}

static void test_hist_merge_with_empty_side_keeps_real_extremes(void **state)
{
    (void)state;
    sm_hist *full = sm_hist_new();
    sm_hist *empty = sm_hist_new();
    sm_hist *dst = sm_hist_new();
    assert_non_null(full);
    assert_non_null(empty);
    assert_non_null(dst);
    sm_hist_record(full, 500);
    sm_hist_record(full, 70000);

    /* An empty source must not pull min down to its placeholder 0. */
    sm_hist_merge(full, empty);
    assert_int_equal(sm_hist_count(full), 2);
    assert_int_equal(sm_hist_min(full), 500);
    assert_int_equal(sm_hist_max(full), 70000);

    /* An empty destination takes the source's extremes, not min(0, 500). */
    sm_hist_merge(dst, full);
    assert_int_equal(sm_hist_count(dst), 2);
    assert_int_equal(sm_hist_min(dst), 500);
    assert_int_equal(sm_hist_max(dst), 70000);

    sm_hist_free(full);
    sm_hist_free(empty);
    sm_hist_free(dst);
}

static void test_hist_empty_reports_zeros_and_no_buckets(void **state)
{
    (void)state;
    sm_hist *h = sm_hist_new();
    assert_non_null(h);
    assert_int_equal(sm_hist_count(h), 0);
    assert_int_equal(sm_hist_min(h), 0);
    assert_int_equal(sm_hist_max(h), 0);
    assert_double_near(sm_hist_mean(h), 0.0, 0.0);
    assert_int_equal(sm_hist_percentile(h, 50), 0);
    assert_int_equal(sm_hist_percentile(h, 100), 0);
    size_t cursor = 0, index = 99;
    uint64_t count = 99;
    assert_int_equal(sm_hist_next(h, &cursor, &index, &count), SM_EINVAL);
    sm_hist_free(h);
}

static void test_hist_reset_empties_a_used_histogram(void **state)
{
    (void)state;
    sm_hist *h = sm_hist_new();
    assert_non_null(h);
    sm_hist_record(h, 10);
    sm_hist_record(h, 1000000);
    sm_hist_reset(h);
    assert_int_equal(sm_hist_count(h), 0);
    assert_int_equal(sm_hist_max(h), 0);
    size_t cursor = 0, index;
    uint64_t count;
    assert_int_equal(sm_hist_next(h, &cursor, &index, &count), SM_EINVAL);
    /* Extremes restart from the next value, not from the old ones or 0. */
    sm_hist_record(h, 300);
    assert_int_equal(sm_hist_min(h), 300);
    assert_int_equal(sm_hist_max(h), 300);
    sm_hist_free(h);
}

static void test_hist_next_visits_non_empty_buckets_in_order(void **state)
{
    (void)state;
    sm_hist *h = sm_hist_new();
    assert_non_null(h);
    sm_hist_record(h, 1000000000);
    sm_hist_record(h, 5);
    sm_hist_record(h, 3000);
    sm_hist_record(h, 5);

    size_t cursor = 0, index;
    uint64_t count;
    assert_int_equal(sm_hist_next(h, &cursor, &index, &count), 0);
    assert_int_equal(index, 5);
    assert_int_equal(count, 2);
    assert_int_equal(sm_hist_next(h, &cursor, &index, &count), 0);
    assert_int_equal(index, sm_hist_index(3000));
    assert_int_equal(count, 1);
    assert_int_equal(sm_hist_next(h, &cursor, &index, &count), 0);
    assert_int_equal(index, sm_hist_index(1000000000));
    assert_int_equal(count, 1);
    assert_int_equal(sm_hist_next(h, &cursor, &index, &count), SM_EINVAL);
    assert_int_equal(sm_hist_next(h, &cursor, &index, &count), SM_EINVAL);
    sm_hist_free(h);
}

static void test_hist_overflow_values_clamp_into_top_bucket_with_exact_max(void **state)
{
    (void)state;
    size_t top = sm_hist_bucket_count() - 1;
    assert_int_equal(sm_hist_index(SM_HIST_MAX_VALUE + 1), top);
    assert_int_equal(sm_hist_index(UINT64_MAX), top);

    sm_hist *h = sm_hist_new();
    assert_non_null(h);
    sm_hist_record(h, SM_HIST_MAX_VALUE + 12345);
    sm_hist_record(h, UINT64_MAX);
    assert_int_equal(sm_hist_min(h), SM_HIST_MAX_VALUE + 12345);
    assert_int_equal(sm_hist_max(h), UINT64_MAX);

    size_t cursor = 0, index;
    uint64_t count;
    assert_int_equal(sm_hist_next(h, &cursor, &index, &count), 0);
    assert_int_equal(index, top);
    assert_int_equal(count, 2);
    assert_int_equal(sm_hist_next(h, &cursor, &index, &count), SM_EINVAL);
    /* The top bucket's midpoint lies below both values, so the clamp to min applies. */
    assert_int_equal(sm_hist_percentile(h, 100), SM_HIST_MAX_VALUE + 12345);
    sm_hist_free(h);
}

static void test_hist_set_bucket_rejects_out_of_range_index(void **state)
{
    (void)state;
    sm_hist *h = sm_hist_new();
    assert_non_null(h);
    assert_int_equal(sm_hist_set_bucket(h, sm_hist_bucket_count(), 1), SM_EINVAL);
    assert_int_equal(sm_hist_set_bucket(h, SIZE_MAX, 1), SM_EINVAL);
    assert_int_equal(sm_hist_count(h), 0);
    assert_int_equal(sm_hist_set_bucket(h, sm_hist_bucket_count() - 1, 1), 0);
    assert_int_equal(sm_hist_count(h), 1);
    sm_hist_free(h);
}

static void test_hist_set_bucket_replaces_counts_and_rebuilds_a_decoded_histogram(void **state)
{
    (void)state;
    sm_hist *src = sm_hist_new();
    sm_hist *dst = sm_hist_new();
    assert_non_null(src);
    assert_non_null(dst);
    uint64_t seed = 99;
    for (size_t i = 0; i < 1000; i++)
        sm_hist_record(src, random_value(&seed));

    /* A stale count must be replaced, not added to. */
    assert_int_equal(sm_hist_set_bucket(dst, 100, 50), 0);
    assert_int_equal(sm_hist_set_bucket(dst, 100, 0), 0);
    assert_int_equal(sm_hist_count(dst), 0);

    size_t cursor = 0, index;
    uint64_t count;
    while (sm_hist_next(src, &cursor, &index, &count) == 0)
        assert_int_equal(sm_hist_set_bucket(dst, index, count), 0);
    sm_hist_set_extremes(dst, sm_hist_min(src), sm_hist_max(src));

    assert_int_equal(sm_hist_count(dst), 1000);
    assert_int_equal(sm_hist_min(dst), sm_hist_min(src));
    assert_int_equal(sm_hist_max(dst), sm_hist_max(src));
    assert_int_equal(sm_hist_percentile(dst, 50), sm_hist_percentile(src, 50));
    assert_int_equal(sm_hist_percentile(dst, 99.9), sm_hist_percentile(src, 99.9));
    assert_double_near(sm_hist_mean(dst), sm_hist_mean(src), 0.0);
    sm_hist_free(src);
    sm_hist_free(dst);
}

/* A new histogram is empty by every accessor, and sm_hist_free takes NULL (the error paths
 * free what they may not have made) without touching the histograms that exist. */
static void test_hist_new_is_empty_and_free_null_is_a_no_op(void **state)
{
    (void)state;
    sm_hist *h = sm_hist_new();
    assert_non_null(h);
    sm_hist_free(NULL);
    assert_int_equal(sm_hist_count(h), 0);
    assert_int_equal(sm_hist_min(h), 0);
    assert_int_equal(sm_hist_max(h), 0);
    assert_double_near(sm_hist_mean(h), 0.0, 0.0);
    assert_int_equal(sm_hist_percentile(h, 50), 0);
    size_t cursor = 0, index;
    uint64_t count;
    assert_int_equal(sm_hist_next(h, &cursor, &index, &count), SM_EINVAL);
    sm_hist_record(h, 42);
    sm_hist_free(NULL);
    assert_int_equal(sm_hist_count(h), 1);
    assert_int_equal(sm_hist_percentile(h, 50), 42);
    sm_hist_free(h);
}

/* The distributions the sparse representation must answer for exactly as the dense one. */
enum dist { D_EXACT, D_LOG_LINEAR, D_ABOVE_MAX, D_SINGLE, D_EMPTY, D_LATENCY, D_COUNT };

/* n values of distribution d into v; returns how many (0 for D_EMPTY). */
static size_t dist_values(enum dist d, uint64_t seed, uint64_t *v, size_t n)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1, single = 2048 + seed % 100000;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = draw_next(&s);
        double u = (double)(r >> 11) * 0x1p-53;
        switch (d) {
        case D_EXACT: /* below 2048: one bucket per value */
            v[i] = r % 2048;
            break;
        case D_LOG_LINEAR: /* log-uniform over [2048, SM_HIST_MAX_VALUE] */
            v[i] = 2048 + (uint64_t)exp(u * log((double)(SM_HIST_MAX_VALUE - 2048)));
            break;
        case D_ABOVE_MAX: /* half beyond the last bucket, up to UINT64_MAX */
            v[i] = i % 2 ? SM_HIST_MAX_VALUE + 1 + r % (UINT64_MAX - SM_HIST_MAX_VALUE) : r % 5000;
            break;
        case D_SINGLE:
            v[i] = single;
            break;
        case D_EMPTY:
            return 0;
        default: /* an rr job: ~20 us median, 1% tail out to 10 ms */
            v[i] = i % 100 ? 15000 + r % 10000 : 20000 + (uint64_t)exp(u * log(1e7));
            break;
        }
    }
    return n;
}

/* Sparse copy of h made as the decoder makes one: buckets in index order, then extremes. */
static sm_hist *sparse_decode_of(const sm_hist *h)
{
    sm_hist *s = sm_hist_new_sparse(0);
    assert_non_null(s);
    size_t cursor = 0, index;
    uint64_t count;
    while (sm_hist_next(h, &cursor, &index, &count) == 0)
        assert_int_equal(sm_hist_set_bucket(s, index, count), 0);
    sm_hist_set_extremes(s, sm_hist_min(h), sm_hist_max(h));
    return s;
}

/* Every query of a and b gives the same answer, doubles compared bit for bit. */
static void assert_same_answers(const sm_hist *a, const sm_hist *b)
{
    assert_int_equal(sm_hist_count(a), sm_hist_count(b));
    assert_int_equal(sm_hist_min(a), sm_hist_min(b));
    assert_int_equal(sm_hist_max(a), sm_hist_max(b));
    double ma = sm_hist_mean(a), mb = sm_hist_mean(b);
    if (memcmp(&ma, &mb, sizeof ma) != 0)
        fail_msg("mean %.17g != %.17g", ma, mb);
    /* Every 0.1 at both ends, where ranks are few, every 1 between. */
    for (int i = 1; i <= 1000; i += i < 10 || i >= 990 ? 1 : 10)
        assert_int_equal(sm_hist_percentile(a, i / 10.0), sm_hist_percentile(b, i / 10.0));
    const double odd[] = {0.0,    -1.0,  -INFINITY, 1e-12,    33.333333, 99.99,
                          99.999, 100.5, 1e300,     INFINITY, NAN};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        assert_int_equal(sm_hist_percentile(a, odd[i]), sm_hist_percentile(b, odd[i]));
    size_t ca = 0, cb = 0, ia, ib, n = 0;
    uint64_t na, nb;
    while (sm_hist_next(a, &ca, &ia, &na) == 0) {
        assert_int_equal(sm_hist_next(b, &cb, &ib, &nb), 0);
        assert_int_equal(ia, ib);
        assert_int_equal(na, nb);
        n++;
    }
    assert_int_equal(sm_hist_next(b, &cb, &ib, &nb), SM_EINVAL);
    assert_int_equal(sm_hist_nonempty(a), n);
    assert_int_equal(sm_hist_nonempty(b), n);
}

static void test_hist_sparse_decode_answers_every_query_as_the_dense_one(void **state)
{
    (void)state;
    static uint64_t v[20000];
    const size_t sizes[] = {1, 2, 7, 1000, 20000};
    for (int d = 0; d < D_COUNT; d++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = dist_values((enum dist)d, 10 * (uint64_t)d + k, v, sizes[k]);
            sm_hist *dense = hist_of(v, n);
            sm_hist *sparse = sparse_decode_of(dense);
            /* A sparse histogram that records the same values in their random order. */
            sm_hist *recorded = sm_hist_new_sparse(3);
            assert_non_null(recorded);
            for (size_t i = 0; i < n; i++)
                assert_int_equal(sm_hist_record(recorded, v[i]), 0);
            assert_true(sm_hist_is_sparse(sparse));
            assert_true(sm_hist_is_sparse(recorded));
            assert_false(sm_hist_is_sparse(dense));
            assert_same_answers(dense, sparse);
            assert_same_answers(dense, recorded);
            sm_hist_free(dense);
            sm_hist_free(sparse);
            sm_hist_free(recorded);
        }
    }
}

/* dst (dense or sparse) merged with src (dense or sparse) into a fresh copy of dst. */
static sm_hist *merged(const sm_hist *dst, bool dst_sparse, const sm_hist *src, bool src_sparse)
{
    sm_hist *d = dst_sparse ? sparse_decode_of(dst) : sm_hist_new();
    assert_non_null(d);
    if (!dst_sparse)
        assert_int_equal(sm_hist_merge(d, dst), 0);
    sm_hist *s = src_sparse ? sparse_decode_of(src) : NULL;
    assert_int_equal(sm_hist_merge(d, s ? s : src), 0);
    sm_hist_free(s);
    assert_int_equal(sm_hist_is_sparse(d), dst_sparse);
    return d;
}

static void test_hist_merge_gives_the_dense_answer_whatever_the_representations(void **state)
{
    (void)state;
    static uint64_t va[5000], vb[5000];
    for (int da = 0; da < D_COUNT; da++) {
        for (int db = 0; db < D_COUNT; db++) {
            size_t na = dist_values((enum dist)da, 100 + (uint64_t)da, va, 5000);
            size_t nb = dist_values((enum dist)db, 200 + (uint64_t)db, vb, 700);
            sm_hist *a = hist_of(va, na), *b = hist_of(vb, nb);
            sm_hist *want = merged(a, false, b, false);
            const bool kinds[3][2] = {{true, true}, {true, false}, {false, true}};
            for (size_t k = 0; k < 3; k++) {
                sm_hist *got = merged(a, kinds[k][0], b, kinds[k][1]);
                assert_same_answers(want, got);
                sm_hist_free(got);
            }
            sm_hist_free(a);
            sm_hist_free(b);
            sm_hist_free(want);
        }
    }
}

/* The memory claim itself: a sparse histogram holds its non-empty buckets and a small header,
 * before and after merges, where a dense one holds every bucket. */
static void test_hist_sparse_bytes_follow_its_non_empty_buckets_through_merges(void **state)
{
    (void)state;
    static uint64_t v[10000];
    size_t n = dist_values(D_LATENCY, 7, v, 10000);
    sm_hist *dense = hist_of(v, n);
    assert_true(sm_hist_bytes(dense) >= sm_hist_bucket_count() * sizeof(uint64_t));
    sm_hist *acc = sm_hist_new_sparse(0);
    assert_non_null(acc);
    for (int i = 0; i < 20; i++) {
        n = dist_values(D_LATENCY, 8 + (uint64_t)i, v, 2000);
        sm_hist *one = sm_hist_new_sparse(0);
        assert_non_null(one);
        for (size_t j = 0; j < n; j++)
            assert_int_equal(sm_hist_record(one, v[j]), 0);
        assert_int_equal(sm_hist_merge(acc, one), 0);
        assert_true(sm_hist_is_sparse(acc));
        assert_true(sm_hist_bytes(one) <= 128 + 2 * 16 * sm_hist_nonempty(one));
        sm_hist_free(one);
    }
    assert_int_equal(sm_hist_count(acc), 20 * 2000);
    /* Merging shrinks to fit: 16 bytes a bucket plus the header. */
    assert_true(sm_hist_bytes(acc) <= 128 + 16 * sm_hist_nonempty(acc));
    assert_true(sm_hist_bytes(acc) < sm_hist_bytes(dense) / 10);
    sm_hist_free(dense);
    sm_hist_free(acc);
}

static void test_hist_sparse_set_bucket_refuses_out_of_range_and_keeps_order(void **state)
{
    (void)state;
    sm_hist *h = sm_hist_new_sparse(1);
    assert_non_null(h);
    assert_int_equal(sm_hist_set_bucket(h, sm_hist_bucket_count(), 1), SM_EINVAL);
    assert_int_equal(sm_hist_set_bucket(h, SIZE_MAX, 1), SM_EINVAL);
    assert_int_equal(sm_hist_count(h), 0);
    assert_int_equal(sm_hist_nonempty(h), 0);
    /* Out of order, replaced, and set to 0 (which removes the bucket). */
    assert_int_equal(sm_hist_set_bucket(h, 500, 3), 0);
    assert_int_equal(sm_hist_set_bucket(h, 7, 1), 0);
    assert_int_equal(sm_hist_set_bucket(h, sm_hist_bucket_count() - 1, 2), 0);
    assert_int_equal(sm_hist_set_bucket(h, 300, 9), 0);
    assert_int_equal(sm_hist_set_bucket(h, 500, 4), 0);
    assert_int_equal(sm_hist_set_bucket(h, 300, 0), 0);
    assert_int_equal(sm_hist_set_bucket(h, 301, 0), 0);
    assert_int_equal(sm_hist_count(h), 1 + 4 + 2);
    const size_t want_index[] = {7, 500, sm_hist_bucket_count() - 1};
    const uint64_t want_count[] = {1, 4, 2};
    size_t cursor = 0, index;
    uint64_t count;
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(sm_hist_next(h, &cursor, &index, &count), 0);
        assert_int_equal(index, want_index[i]);
        assert_int_equal(count, want_count[i]);
    }
    assert_int_equal(sm_hist_next(h, &cursor, &index, &count), SM_EINVAL);
    sm_hist_reset(h);
    assert_true(sm_hist_is_sparse(h));
    assert_int_equal(sm_hist_count(h), 0);
    assert_int_equal(sm_hist_nonempty(h), 0);
    assert_int_equal(sm_hist_percentile(h, 50), 0);
    sm_hist_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hist_percentiles_match_sorted_reference_within_bucket_precision),
        cmocka_unit_test(test_hist_percentile_uses_ceil_rank_on_exact_buckets),
        cmocka_unit_test(test_hist_min_and_max_are_exact),
        cmocka_unit_test(test_hist_index_of_layout_boundaries),
        cmocka_unit_test(test_hist_bucket_ranges_are_contiguous_and_hold_their_own_values),
        cmocka_unit_test(test_hist_merge_of_halves_equals_histogram_of_all),
        cmocka_unit_test(test_hist_merge_with_empty_side_keeps_real_extremes),
        cmocka_unit_test(test_hist_empty_reports_zeros_and_no_buckets),
        cmocka_unit_test(test_hist_reset_empties_a_used_histogram),
        cmocka_unit_test(test_hist_next_visits_non_empty_buckets_in_order),
        cmocka_unit_test(test_hist_overflow_values_clamp_into_top_bucket_with_exact_max),
        cmocka_unit_test(test_hist_set_bucket_rejects_out_of_range_index),
        cmocka_unit_test(test_hist_set_bucket_replaces_counts_and_rebuilds_a_decoded_histogram),
        cmocka_unit_test(test_hist_new_is_empty_and_free_null_is_a_no_op),
        cmocka_unit_test(test_hist_sparse_decode_answers_every_query_as_the_dense_one),
        cmocka_unit_test(test_hist_merge_gives_the_dense_answer_whatever_the_representations),
        cmocka_unit_test(test_hist_sparse_bytes_follow_its_non_empty_buckets_through_merges),
        cmocka_unit_test(test_hist_sparse_set_bucket_refuses_out_of_range_and_keeps_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
