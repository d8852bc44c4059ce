/* Log-linear latency histogram: exact below 2048, then 1024 linear buckets per power of two. */
#include "proto/hist.h"

#include "proto/err.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SUB_COUNT  (1ull << SM_HIST_SUB_BITS)       /* 2048 exact buckets */
#define HALF_COUNT (1ull << (SM_HIST_SUB_BITS - 1)) /* 1024 buckets per power of two */
#define MAX_BITS   36
/* Powers of two 2^11 .. 2^35 each get HALF_COUNT buckets, so SM_HIST_MAX_VALUE closes the last. */
#define N_BUCKETS ((size_t)(SUB_COUNT + (MAX_BITS - SM_HIST_SUB_BITS) * HALF_COUNT))
#define TOP_INDEX (N_BUCKETS - 1) /* also holds every value above SM_HIST_MAX_VALUE */

_Static_assert(SM_HIST_MAX_VALUE == (1ull << MAX_BITS) - 1, "N_BUCKETS assumes 2^36 - 1");

/* One non-empty bucket of a sparse histogram. */
struct bucket {
    uint32_t index;
    uint64_t count;
};

struct sm_hist {
    uint64_t count; /* always the sum of the bucket counts */
    uint64_t min, max;
    bool sparse;
    /* Sparse: the non-empty buckets by increasing index, n of them in room for cap. A bucket
     * whose count falls to 0 is removed, so n is always the number of non-empty buckets. */
    struct bucket *b;
    size_t n, cap;
    uint64_t counts[]; /* dense only: N_BUCKETS counts */
};

static size_t index_of(uint64_t value)
{
    if (value < SUB_COUNT)
        return (size_t)value;
    int msb = 63 - __builtin_clzll(value);
    /* Keep the top SM_HIST_SUB_BITS bits: the leading one picks the power of two (via shift),
     * the next ten bits pick one of its 1024 linear buckets. */
    int shift = msb - (SM_HIST_SUB_BITS - 1);
    return (size_t)(SUB_COUNT + (uint64_t)(shift - 1) * HALF_COUNT +
                    ((value >> shift) - HALF_COUNT));
}

sm_hist *sm_hist_new(void)
{
    return calloc(1, sizeof(sm_hist) + N_BUCKETS * sizeof(uint64_t));
}

sm_hist *sm_hist_new_sparse(size_t capacity)
{
    sm_hist *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->sparse = true;
    if (capacity > N_BUCKETS)
        capacity = N_BUCKETS;
    if (capacity && !(h->b = malloc(capacity * sizeof *h->b))) {
        free(h);
        return NULL;
    }
    h->cap = capacity;
    return h;
}

void sm_hist_free(sm_hist *h)
{
    if (h)
        free(h->b);
    free(h);
}

void sm_hist_reset(sm_hist *h)
{
    h->count = h->min = h->max = 0;
    h->n = 0;
    if (!h->sparse)
        memset(h->counts, 0, N_BUCKETS * sizeof(uint64_t));
}

bool sm_hist_is_sparse(const sm_hist *h)
{
    return h->sparse;
}

size_t sm_hist_bytes(const sm_hist *h)
{
    if (h->sparse)
        return sizeof *h + h->cap * sizeof *h->b;
    return sizeof *h + N_BUCKETS * sizeof(uint64_t);
}

size_t sm_hist_nonempty(const sm_hist *h)
{
    if (h->sparse)
        return h->n;
    size_t n = 0;
    for (size_t i = 0; i < N_BUCKETS; i++)
        n += h->counts[i] != 0;
    return n;
}

/* The position of index in a sparse histogram's buckets, or where it would be inserted. */
static size_t find(const sm_hist *h, size_t index)
{
    size_t lo = 0, hi = h->n;
    /* Decoding and merging append in index order: check the end before searching. */
    if (h->n == 0 || h->b[h->n - 1].index < index)
        return h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->b[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Makes room for one more bucket in a sparse histogram; SM_ENOMEM leaves it as it was. */
static int reserve_one(sm_hist *h)
{
    if (h->n < h->cap)
        return 0;
    size_t cap = h->cap ? h->cap * 2 : 8;
    if (cap > N_BUCKETS)
        cap = N_BUCKETS;
    struct bucket *b = realloc(h->b, cap * sizeof *b);
    if (!b)
        return SM_ENOMEM;
    h->b = b;
    h->cap = cap;
    return 0;
}

/* Sets a sparse histogram's bucket to count (0 removes it) and keeps h->count the sum. */
static int sparse_set(sm_hist *h, size_t index, uint64_t count)
{
    size_t at = find(h, index);
    bool present = at < h->n && h->b[at].index == index;
    if (present) {
        h->count = h->count - h->b[at].count + count;
        if (count) {
            h->b[at].count = count;
        } else {
            memmove(&h->b[at], &h->b[at + 1], (h->n - at - 1) * sizeof *h->b);
            h->n--;
        }
        return 0;
    }
    if (count == 0)
        return 0;
    if (reserve_one(h) != 0)
        return SM_ENOMEM;
    memmove(&h->b[at + 1], &h->b[at], (h->n - at) * sizeof *h->b);
    h->b[at] = (struct bucket){(uint32_t)index, count};
    h->n++;
    h->count += count;
    return 0;
}

int sm_hist_record(sm_hist *h, uint64_t value)
{
    size_t index = sm_hist_index(value);
    bool first = h->count == 0;
    if (!h->sparse) {
        h->counts[index]++;
        h->count++;
    } else {
        size_t at = find(h, index);
        uint64_t was = at < h->n && h->b[at].index == index ? h->b[at].count : 0;
        if (sparse_set(h, index, was + 1) != 0)
            return SM_ENOMEM;
    }
    if (first || value < h->min)
        h->min = value;
    if (first || value > h->max)
        h->max = value;
    return 0;
}

/* Merges src's buckets into sparse dst as one pass over both sorted lists into a new array,
 * so a merge costs O(n + m) and never holds the dense form. */
static int merge_into_sparse(sm_hist *dst, const sm_hist *src)
{
    /* src->count > 0, so m >= 1 and so is n below. */
    size_t m = sm_hist_nonempty(src), cap = dst->n + m;
    if (cap > N_BUCKETS)
        cap = N_BUCKETS;
    struct bucket *out = malloc(cap * sizeof *out);
    if (!out)
        return SM_ENOMEM;
    size_t i = 0, n = 0, cursor = 0, index;
    uint64_t count;
    while (sm_hist_next(src, &cursor, &index, &count) == 0) {
        while (i < dst->n && dst->b[i].index < index)
            out[n++] = dst->b[i++];
        if (i < dst->n && dst->b[i].index == index)
            count += dst->b[i++].count;
        out[n++] = (struct bucket){(uint32_t)index, count};
    }
    while (i < dst->n)
        out[n++] = dst->b[i++];
    /* Shrink to what the buckets need: a run's merged histograms stay proportional to their
     * buckets, not to the sum of their parts. A failed shrink keeps the larger array. */
    if (n < cap) {
        struct bucket *fit = realloc(out, n * sizeof *out);
        if (fit) {
            out = fit;
            cap = n;
        }
    }
    free(dst->b);
    dst->b = out;
    dst->cap = cap;
    dst->n = n;
    return 0;
}

int sm_hist_merge(sm_hist *dst, const sm_hist *src)
{
    /* An empty histogram's min/max are placeholders (0), so they must not take part. */
    if (src->count == 0)
        return 0;
    if (dst->sparse) {
        if (merge_into_sparse(dst, src) != 0)
            return SM_ENOMEM;
    } else {
        size_t cursor = 0, index;
        uint64_t count;
        while (sm_hist_next(src, &cursor, &index, &count) == 0)
            dst->counts[index] += count;
    }
    if (dst->count == 0) {
        dst->min = src->min;
        dst->max = src->max;
    } else {
        if (src->min < dst->min)
            dst->min = src->min;
        if (src->max > dst->max)
            dst->max = src->max;
    }
    dst->count += src->count;
    return 0;
}

uint64_t sm_hist_count(const sm_hist *h)
{
    return h->count;
}

uint64_t sm_hist_min(const sm_hist *h)
{
    return h->count ? h->min : 0;
}

uint64_t sm_hist_max(const sm_hist *h)
{
    return h->count ? h->max : 0;
}

/* The bucket's representative value; clamping keeps single-valued and overflow buckets
 * from reporting values that were never recorded. */
static uint64_t midpoint(const sm_hist *h, size_t index)
{
    uint64_t low, high;
    sm_hist_bucket_range(index, &low, &high);
    uint64_t mid = low + (high - low) / 2;
    if (mid < h->min)
        return h->min;
    if (mid > h->max)
        return h->max;
    return mid;
}

double sm_hist_mean(const sm_hist *h)
{
    if (h->count == 0)
        return 0.0;
    /* Both representations visit the same buckets in the same order, so the sum is rounded
     * the same way and the mean is the same double. */
    double sum = 0.0;
    size_t cursor = 0, index;
    uint64_t count;
    while (sm_hist_next(h, &cursor, &index, &count) == 0)
        sum += (double)midpoint(h, index) * (double)count;
    return sum / (double)h->count;
}

uint64_t sm_hist_percentile(const sm_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    /* q * count / 100 rather than q / 100 * count: for the usual q (50, 99.9) the product is
     * exact or nearly so, so ceil() does not round a whole rank up by one. Out-of-range q
     * (including NaN) is clamped to the first or last rank rather than rejected. */
    uint64_t rank = h->count;
    double r = ceil(q * (double)h->count / 100.0);
    if (!(r >= 1.0))
        rank = 1;
    else if (r < (double)h->count)
        rank = (uint64_t)r;
    uint64_t seen = 0, count;
    size_t cursor = 0, index;
    while (sm_hist_next(h, &cursor, &index, &count) == 0) {
        seen += count;
        if (seen >= rank)
            return midpoint(h, index);
    }
    return h->max; /* unreachable while count is the sum of the bucket counts */
}

size_t sm_hist_index(uint64_t value)
{
    if (value > SM_HIST_MAX_VALUE)
        return TOP_INDEX;
    return index_of(value);
}

/* The header does not say what an index past the last bucket means; such a bucket holds
 * nothing, reported as [0, 0]. */
void sm_hist_bucket_range(size_t index, uint64_t *low, uint64_t *high)
{
    if (index >= N_BUCKETS) {
        *low = *high = 0;
        return;
    }
    if (index < SUB_COUNT) {
        *low = *high = index;
        return;
    }
    uint64_t j = index - SUB_COUNT;
    unsigned shift = (unsigned)(j / HALF_COUNT) + 1;
    *low = (HALF_COUNT + j % HALF_COUNT) << shift;
    /* The top bucket's nominal range ends at SM_HIST_MAX_VALUE although it also counts larger
     * values: those are reported through the exact max, which clamps the midpoint. */
    *high = *low + (1ull << shift) - 1;
}

size_t sm_hist_bucket_count(void)
{
    return N_BUCKETS;
}

int sm_hist_next(const sm_hist *h, size_t *cursor, size_t *index, uint64_t *count)
{
    if (h->sparse) {
        if (*cursor >= h->n)
            return SM_EINVAL;
        *index = h->b[*cursor].index;
        *count = h->b[(*cursor)++].count;
        return 0;
    }
    while (*cursor < N_BUCKETS) {
        size_t i = (*cursor)++;
        if (h->counts[i]) {
            *index = i;
            *count = h->counts[i];
            return 0;
        }
    }
    return SM_EINVAL;
}

int sm_hist_set_bucket(sm_hist *h, size_t index, uint64_t count)
{
    if (index >= N_BUCKETS)
        return SM_EINVAL;
    if (h->sparse)
        return sparse_set(h, index, count);
    h->count = h->count - h->counts[index] + count;
    h->counts[index] = count;
    return 0;
}

void sm_hist_set_extremes(sm_hist *h, uint64_t min, uint64_t max)
{
    h->min = min;
    h->max = max;
}
