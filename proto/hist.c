/* Log-linear latency histogram: exact below 2048, then 1024 linear buckets per power of two. */
#include "proto/hist.h"

#include "proto/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUB_COUNT  (1ull << SM_HIST_SUB_BITS)       /* 2048 exact buckets */
#define HALF_COUNT (1ull << (SM_HIST_SUB_BITS - 1)) /* 1024 buckets per power of two */
#define MAX_BITS   36
/* Powers of two 2^11 .. 2^35 each get HALF_COUNT buckets, so SM_HIST_MAX_VALUE closes the last. */
#define N_BUCKETS ((size_t)(SUB_COUNT + (MAX_BITS - SM_HIST_SUB_BITS) * HALF_COUNT))
#define TOP_INDEX (N_BUCKETS - 1) /* also holds every value above SM_HIST_MAX_VALUE */

_Static_assert(SM_HIST_MAX_VALUE == (1ull << MAX_BITS) - 1, "N_BUCKETS assumes 2^36 - 1");

struct sm_hist {
    uint64_t count; /* always the sum of counts[] */
    uint64_t min, max;
    uint64_t counts[];
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

void sm_hist_free(sm_hist *h)
{
    free(h);
}

void sm_hist_reset(sm_hist *h)
{
    memset(h, 0, sizeof(sm_hist) + N_BUCKETS * sizeof(uint64_t));
}

void sm_hist_record(sm_hist *h, uint64_t value)
{
    if (h->count == 0 || value < h->min)
        h->min = value;
    if (h->count == 0 || value > h->max)
        h->max = value;
    h->counts[sm_hist_index(value)]++;
    h->count++;
}

void sm_hist_merge(sm_hist *dst, const sm_hist *src)
{
    /* An empty histogram's min/max are placeholders (0), so they must not take part. */
    if (src->count == 0)
        return;
    if (dst->count == 0) {
        dst->min = src->min;
        dst->max = src->max;
    } else {
        if (src->min < dst->min)
            dst->min = src->min;
        if (src->max > dst->max)
            dst->max = src->max;
    }
    for (size_t i = 0; i < N_BUCKETS; i++)
        dst->counts[i] += src->counts[i];
    dst->count += src->count;
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
    double sum = 0.0;
    for (size_t i = 0; i < N_BUCKETS; i++) {
        if (h->counts[i])
            sum += (double)midpoint(h, i) * (double)h->counts[i];
    }
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
    uint64_t seen = 0;
    for (size_t i = 0; i < N_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank)
            return midpoint(h, i);
    }
    return h->max; /* unreachable while count is the sum of counts[] */
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
    h->count = h->count - h->counts[index] + count;
    h->counts[index] = count;
    return 0;
}

void sm_hist_set_extremes(sm_hist *h, uint64_t min, uint64_t max)
{
    h->min = min;
    h->max = max;
}
