/* sm-swarm: the mapping the shards and the parent share (counters, job arrivals), and the
 * helpers both sides use. */
#include "bench/swarm/swarm.h"

void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * NS_PER_MS};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

__attribute__((format(printf, 1, 2))) void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sm-swarm: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static size_t slot_of(uint64_t job, size_t cap)
{
    job ^= job >> 33; /* murmur3's finaliser: sequential ids spread over the table */
    job *= 0xff51afd7ed558ccdull;
    job ^= job >> 33;
    return (size_t)job & (cap - 1);
}

/* Records the arrival of job; true the first time, false for a resent assign. */
bool job_arrived(shared *sh, uint64_t job, int64_t now_ns)
{
    for (size_t i = slot_of(job, sh->cap), n = 0; n < sh->cap; i = (i + 1) & (sh->cap - 1), n++) {
        uint64_t cur = atomic_load(&sh->slots[i].job);
        if (cur == 0) {
            if (atomic_compare_exchange_strong(&sh->slots[i].job, &cur, job)) {
                atomic_store(&sh->slots[i].recv_ns, now_ns);
                return true;
            }
        }
        if (cur == job)
            return false;
    }
    atomic_fetch_add(&sh->table_full, 1);
    return true;
}

/* When job arrived, or 0 when it has not (yet). */
int64_t job_arrival(shared *sh, uint64_t job)
{
    for (size_t i = slot_of(job, sh->cap), n = 0; n < sh->cap; i = (i + 1) & (sh->cap - 1), n++) {
        uint64_t cur = atomic_load(&sh->slots[i].job);
        if (cur == job)
            return atomic_load(&sh->slots[i].recv_ns);
        if (cur == 0)
            return 0;
    }
    return 0;
}
