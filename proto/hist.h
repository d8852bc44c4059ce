/* Log-linear latency histogram with 3 significant digits (<= 0.1% relative error),
 * mergeable, sent as bucket counts. Values are unsigned integers (nanoseconds here).
 *
 * A histogram is held one of two ways behind the same functions. Dense (sm_hist_new): every
 * bucket in one array, about 221 KB, so recording is one increment; for the agent, which
 * records while it measures and holds one or two at a time. Sparse (sm_hist_new_sparse): only
 * the non-empty buckets, sorted by index, 16 bytes each plus a small header; for decoded
 * results, which the coordinator holds by the thousand. Every query gives the same answer,
 * bit for bit, for the same counts whichever way a histogram is held; merging into a sparse
 * histogram keeps it sparse. A histogram is not thread-safe. */
#ifndef SM_PROTO_HIST_H
#define SM_PROTO_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Values below 2^SM_HIST_SUB_BITS are exact; above, each power of two is split into
 * 2^(SM_HIST_SUB_BITS-1) = 1024 linear buckets. Values above SM_HIST_MAX_VALUE are counted in
 * the top bucket and still reported exactly by sm_hist_max. */
#define SM_HIST_SUB_BITS  11
#define SM_HIST_MAX_VALUE ((1ull << 36) - 1) /* ~68.7 s in ns */

typedef struct sm_hist sm_hist;

/* Returns a new empty dense histogram, or NULL when out of memory. */
sm_hist *sm_hist_new(void);
/* Returns a new empty sparse histogram with room for `capacity` non-empty buckets (a hint:
 * it grows as needed; values above sm_hist_bucket_count() are taken as that), or NULL when
 * out of memory. */
sm_hist *sm_hist_new_sparse(size_t capacity);
/* Frees; NULL is ignored. */
void sm_hist_free(sm_hist *h);
/* Empties h; it keeps its representation (and a sparse one its capacity). */
void sm_hist_reset(sm_hist *h);

/* Counts one value. 0; SM_ENOMEM only for a sparse histogram that had to grow and could not,
 * in which case h is unchanged. A dense one never fails. */
int sm_hist_record(sm_hist *h, uint64_t value);
/* Adds every count of src into dst, whatever the representation of either; dst keeps its own.
 * 0, or SM_ENOMEM (sparse dst only) with dst unchanged. */
int sm_hist_merge(sm_hist *dst, const sm_hist *src);

/* True when h holds only its non-empty buckets. */
bool sm_hist_is_sparse(const sm_hist *h);
/* The heap bytes h holds (header and bucket storage), for accounting. */
size_t sm_hist_bytes(const sm_hist *h);
/* How many buckets are non-empty. */
size_t sm_hist_nonempty(const sm_hist *h);

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

/* Iterates the non-empty buckets in index order: start with *cursor = 0 and leave it to this
 * function (its value means different things for the two representations); returns 0 and
 * sets *index and *count while there is one, SM_EINVAL (negative) at the end. */
int sm_hist_next(const sm_hist *h, size_t *cursor, size_t *index, uint64_t *count);
/* Sets the count of one bucket (for decoding); the index must be < sm_hist_bucket_count(),
 * else SM_EINVAL. SM_ENOMEM when a sparse histogram could not grow (h unchanged). Setting
 * buckets in increasing index order, as the decoder does, appends to a sparse histogram in
 * constant time. Call sm_hist_set_extremes afterwards with the exact min and max. */
int sm_hist_set_bucket(sm_hist *h, size_t index, uint64_t count);
void sm_hist_set_extremes(sm_hist *h, uint64_t min, uint64_t max);

#endif
