/* Log-linear latency histogram with 3 significant digits (<= 0.1% relative error),
 * mergeable, sent as bucket counts. Values are unsigned integers (nanoseconds here). */
#ifndef SM_PROTO_HIST_H
#define SM_PROTO_HIST_H

#include <stddef.h>
#include <stdint.h>

/* Values below 2^SM_HIST_SUB_BITS are exact; above, each power of two is split into
 * 2^(SM_HIST_SUB_BITS-1) = 1024 linear buckets. Values above SM_HIST_MAX_VALUE are counted in
 * the top bucket and still reported exactly by sm_hist_max. */
#define SM_HIST_SUB_BITS  11
#define SM_HIST_MAX_VALUE ((1ull << 36) - 1) /* ~68.7 s in ns */

typedef struct sm_hist sm_hist;

/* Returns a new empty histogram, or NULL when out of memory. */
sm_hist *sm_hist_new(void);
/* Frees; NULL is ignored. */
void sm_hist_free(sm_hist *h);
void sm_hist_reset(sm_hist *h);

void sm_hist_record(sm_hist *h, uint64_t value);
/* Adds every count of src into dst. */
void sm_hist_merge(sm_hist *dst, const sm_hist *src);

uint64_t sm_hist_count(const sm_hist *h);
uint64_t sm_hist_min(const sm_hist *h); /* exact; 0 when empty */
uint64_t sm_hist_max(const sm_hist *h); /* exact; 0 when empty */
double sm_hist_mean(const sm_hist *h);  /* from bucket midpoints; 0 when empty */
/* The value at percentile q (0 < q <= 100): the midpoint of the bucket holding the
 * ceil(q * count / 100)-th smallest value, clamped to [min, max]. 0 when empty. A q outside
 * (0, 100] (NaN included) takes the first or the last rank. The top bucket also counts values
 * above SM_HIST_MAX_VALUE; they show only through the exact max (and the clamping). */
uint64_t sm_hist_percentile(const sm_hist *h, double q);

/* Bucket index of a value and the [low, high] range of values a bucket holds ([0, 0] for an
 * index past the last bucket). */
size_t sm_hist_index(uint64_t value);
void sm_hist_bucket_range(size_t index, uint64_t *low, uint64_t *high);
size_t sm_hist_bucket_count(void);

/* Iterates the non-empty buckets in index order: start with *cursor = 0; returns 0 and
 * sets *index and *count while there is one, SM_EINVAL (negative) at the end. */
int sm_hist_next(const sm_hist *h, size_t *cursor, size_t *index, uint64_t *count);
/* Sets the count of one bucket (for decoding); the index must be < sm_hist_bucket_count(),
 * else SM_EINVAL. Call sm_hist_set_extremes afterwards with the exact min and max. */
int sm_hist_set_bucket(sm_hist *h, size_t index, uint64_t count);
void sm_hist_set_extremes(sm_hist *h, uint64_t min, uint64_t max);

#endif
