/* Fixed-seed random draws (draw.h). */
#include "testkit/draw.h"

#include <math.h>

uint64_t draw_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

double draw_uniform(uint64_t *s)
{
    return ((double)(draw_next(s) >> 11) + 0.5) * 0x1p-53;
}

double draw_rtt_median_ns(uint64_t *s)
{
    return 18000.0 + (double)(draw_next(s) % 8000);
}

uint64_t draw_rtt_ns(uint64_t *s, double median_ns)
{
    const double z = sqrt(-2.0 * log(draw_uniform(s))) * cos(6.283185307179586 * draw_uniform(s));
    if (draw_next(s) % 200 == 0)
        return (uint64_t)(median_ns * exp(draw_uniform(s) * log(250.0)));
    return (uint64_t)(median_ns * exp(0.04 * z));
}
