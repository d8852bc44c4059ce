/* Payload patterns for senders and their verification at receivers. */
#include "agent/workloads/pattern.h"

#include <stdlib.h>
#include <string.h>

#include "proto/err.h"

static int alloc(sm_pattern *pt, size_t period, size_t window)
{
    pt->period = period;
    pt->window = window;
    pt->buf = malloc(period + window);
    return pt->buf ? 0 : SM_ENOMEM;
}

/* Fills the tail so that windows across the period boundary read contiguously. */
static void wrap(sm_pattern *pt)
{
    for (size_t i = pt->period; i < pt->period + pt->window; i++)
        pt->buf[i] = pt->buf[i % pt->period];
}

int sm_pattern_init_raw(sm_pattern *pt, size_t window)
{
    if (alloc(pt, SM_PATTERN_RAW_PERIOD, window))
        return SM_ENOMEM;
    uint64_t x = 0x9e3779b97f4a7c15ull; /* xorshift64: fixed seed, both ends agree */
    for (size_t i = 0; i < pt->period; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        pt->buf[i] = (uint8_t)(x >> 24);
    }
    wrap(pt);
    return 0;
}

int sm_pattern_init_lines(sm_pattern *pt, size_t line_size, size_t window)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    const size_t na = sizeof alphabet - 1;
    const size_t line = line_size + 2;
    if (alloc(pt, SM_PATTERN_LINES_BLOCK * line, window))
        return SM_ENOMEM;
    for (size_t l = 0; l < SM_PATTERN_LINES_BLOCK; l++) {
        uint8_t *p = pt->buf + l * line;
        for (size_t i = 0; i < line_size; i++)
            p[i] = (uint8_t)alphabet[(l + i) % na];
        p[line_size] = '\r';
        p[line_size + 1] = '\n';
    }
    wrap(pt);
    return 0;
}

void sm_pattern_fini(sm_pattern *pt)
{
    free(pt->buf);
    pt->buf = NULL;
}

long sm_pattern_check(const sm_pattern *pt, uint64_t off, const uint8_t *data, size_t len)
{
    size_t done = 0;
    while (done < len) {
        size_t n = len - done < pt->window ? len - done : pt->window;
        const uint8_t *want = sm_pattern_at(pt, off + done);
        if (memcmp(want, data + done, n) != 0) {
            for (size_t i = 0; i < n; i++)
                if (want[i] != data[done + i])
                    return (long)(done + i);
        }
        done += n;
    }
    return -1;
}
