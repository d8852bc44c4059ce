/* Delta debugging over an experiment's suspects (xpdd.h): the batch ddmin replayed over a table
 * of outcomes. */
#include "coordinator/analysis/xpdd.h"

#include <stdbool.h>
#include <string.h>

/* The worst cases of xpdd.h, by k, found by exhaustive search (the unit test walks every
 * outcome tree again for k <= 6, and runs every oracle of k <= 4 and every monotone one of 5). */
static const size_t BUDGET[SM_XP_DD_MAX + 1] = {0, 0, 2, 6, 12, 20, 29, 39, 50};
static const int STAGES[SM_XP_DD_MAX + 1] = {0, 0, 1, 2, 3, 5, 6, 7, 8};

/* Where a replay stopped: at a stage to run (n_batch > 0) or at the end (result). */
typedef struct dd_step {
    uint32_t batch[SM_XP_DD_BATCH_MAX];
    size_t n_batch;
    uint32_t result;
    size_t unresolved; /* distinct unresolved subsets the decided steps read */
} dd_step;

static bool args_ok(size_t k, const sm_xp_dd_outcome *known)
{
    if (k == 0 || k > SM_XP_DD_MAX || !known)
        return false;
    for (size_t m = 0; m < ((size_t)1 << k); m++)
        if ((unsigned)known[m] > (unsigned)SM_XP_DD_UNRESOLVED)
            return false;
    return true;
}

static size_t bits(uint32_t x)
{
    size_t n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* c's n parts by bit order: part i the set bits of rank i*m/n up to (i+1)*m/n, m = |c|. */
static void split(uint32_t c, size_t n, uint32_t *parts)
{
    uint32_t bit[32];
    size_t m = 0;
    for (uint32_t b = 0; b < 32; b++)
        if (c & (1u << b))
            bit[m++] = 1u << b;
    for (size_t i = 0; i < n; i++) {
        parts[i] = 0;
        for (size_t r = i * m / n; r < (i + 1) * m / n; r++)
            parts[i] |= bit[r];
    }
}

/* The first of v[0..n) that closes, n when none; each unresolved one read before it is marked
 * in seen and counted in *unresolved. */
static size_t first_closing(const sm_xp_dd_outcome *known, const uint32_t *v, size_t n,
                            uint32_t *seen, size_t *unresolved)
{
    for (size_t i = 0; i < n; i++) {
        if (known[v[i]] == SM_XP_DD_CLOSES)
            return i;
        if (known[v[i]] == SM_XP_DD_UNRESOLVED && !(seen[v[i] / 32] & (1u << (v[i] % 32)))) {
            seen[v[i] / 32] |= 1u << (v[i] % 32);
            (*unresolved)++;
        }
    }
    return n;
}

/* The replay of xpdd.h over a valid table whose full set closes. */
static void replay(size_t k, const sm_xp_dd_outcome *known, dd_step *s)
{
    const uint32_t full = (uint32_t)((1u << k) - 1);
    uint32_t seen[(1u << SM_XP_DD_MAX) / 32] = {0};
    uint32_t c = full;
    size_t n = 2;
    memset(s, 0, sizeof *s);
    /* Each step makes c smaller or n larger (n <= |c| <= k): at most k * k steps. */
    for (;;) {
        size_t m = bits(c);
        if (m == 1)
            break;
        if (n > m)
            n = m;
        uint32_t parts[SM_XP_DD_MAX], comps[SM_XP_DD_MAX];
        split(c, n, parts);
        for (size_t i = 0; i < n; i++)
            comps[i] = c & ~parts[i];
        /* The step's subsets not known yet: the stage to run. */
        for (size_t i = 0; i < 2 * n; i++) {
            uint32_t x = i < n ? parts[i] : comps[i - n];
            if (x == 0 || x == full || known[x] != SM_XP_DD_UNKNOWN)
                continue;
            bool dup = false;
            for (size_t j = 0; j < s->n_batch && !dup; j++)
                dup = s->batch[j] == x;
            if (!dup)
                s->batch[s->n_batch++] = x;
        }
        if (s->n_batch > 0)
            return;
        size_t i = first_closing(known, parts, n, seen, &s->unresolved);
        if (i < n) {
            c = parts[i];
            n = 2;
            continue;
        }
        i = n > 2 ? first_closing(known, comps, n, seen, &s->unresolved) : n;
        if (i < n) {
            c = comps[i];
            n = n - 1 > 2 ? n - 1 : 2;
            continue;
        }
        if (n < m) {
            n = 2 * n < m ? 2 * n : m;
            continue;
        }
        break;
    }
    s->result = c;
}

int sm_xp_dd_next(size_t k, const sm_xp_dd_outcome *known, uint32_t *arms, size_t cap,
                  size_t *n_arms, uint32_t *result)
{
    if (!args_ok(k, known) || !n_arms || !result || (!arms && cap > 0))
        return SM_EINVAL;
    if (known[(1u << k) - 1] != SM_XP_DD_CLOSES)
        return SM_XP_DD_NOT_APPLICABLE;
    dd_step s;
    replay(k, known, &s);
    if (s.n_batch > cap)
        return SM_EINVAL;
    if (s.n_batch > 0)
        memcpy(arms, s.batch, s.n_batch * sizeof *arms);
    *n_arms = s.n_batch;
    *result = s.n_batch > 0 ? 0 : s.result;
    return 0;
}

size_t sm_xp_dd_unresolved(size_t k, const sm_xp_dd_outcome *known)
{
    if (!args_ok(k, known) || known[(1u << k) - 1] != SM_XP_DD_CLOSES)
        return 0;
    dd_step s;
    replay(k, known, &s);
    return s.unresolved;
}

size_t sm_xp_dd_budget(size_t k)
{
    return k <= SM_XP_DD_MAX ? BUDGET[k] : 0;
}

int sm_xp_dd_stages_max(size_t k)
{
    return k <= SM_XP_DD_MAX ? STAGES[k] : 0;
}
