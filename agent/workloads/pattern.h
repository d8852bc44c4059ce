/* The payload pattern: senders write straight out of it, receivers memcmp against it, so
 * verifying every byte costs one compare and sending costs nothing extra. */
#ifndef SM_AGENT_WORKLOADS_PATTERN_H
#define SM_AGENT_WORKLOADS_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* A period of `period` bytes repeated so that any window of up to `window` bytes starting at
 * any offset is contiguous in buf: buf[i] == buf[i % period] for i < period + window. */
typedef struct sm_pattern {
    uint8_t *buf;
    size_t period;
    size_t window;
} sm_pattern;

/* Raw payload: pseudo-random bytes with a prime period (65521), so that a lost, repeated or
 * reordered chunk of any size that is not a multiple of the period shows as a mismatch. */
#define SM_PATTERN_RAW_PERIOD 65521u
int sm_pattern_init_raw(sm_pattern *pt, size_t window);

/* framing=lines: a block of 61 lines of line_size printable bytes + CRLF, each line a
 * different rotation, so that a lost line shows as a mismatch too. */
#define SM_PATTERN_LINES_BLOCK 61u
int sm_pattern_init_lines(sm_pattern *pt, size_t line_size, size_t window);

void sm_pattern_fini(sm_pattern *pt);

/* The expected bytes at stream offset `off`; valid for `window` bytes. */
static inline const uint8_t *sm_pattern_at(const sm_pattern *pt, uint64_t off)
{
    return pt->buf + (size_t)(off % pt->period);
}

/* Compares data[0..len) with the pattern at offset off (len may exceed the window).
 * Returns -1 when equal, else the index in data of the first differing byte. */
long sm_pattern_check(const sm_pattern *pt, uint64_t off, const uint8_t *data, size_t len);

#endif
