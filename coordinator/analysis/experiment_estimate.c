/* An experiment's estimate: how much of the odd host's gap from the fleet a treatment closed,
 * by a percentile bootstrap of the three groups' medians, its verdict and its line of text. */
#include "coordinator/analysis/experiment.h"

#include "coordinator/analysis/internal.h"

#include "proto/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The resamples left out at each end of the 95% interval: 2.5% of them. */
#define TAIL ((size_t)SM_XP_BOOTSTRAP / 40)

/* ---- the generator: xoshiro256** seeded by splitmix64, as their authors advise ---- */

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed)
{
    for (size_t i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* ---- medians ---- */

/* A group's finite samples, sorted. */
typedef struct group {
    double *v;
    size_t n;
} group;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int group_of(const double *x, size_t n, group *g)
{
    g->n = 0;
    g->v = sm_analysis_doubles(n);
    if (g->v == NULL)
        return SM_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            g->v[g->n++] = x[i];
    qsort(g->v, g->n, sizeof *g->v, cmp_double);
    return 0;
}

/* The value of rank k (0-based) among the resample whose draws of each sorted index are
 * counts[0..n). */
static double rank_value(const group *g, const size_t *counts, size_t k)
{
    size_t seen = 0;
    for (size_t i = 0; i < g->n; i++) {
        seen += counts[i];
        if (seen > k)
            return g->v[i];
    }
    return g->v[g->n - 1];
}

/* The median of one resample of g with replacement, as sm_stats_median takes a median. The
 * samples are sorted, so counting the draws of each index orders the resample in O(n). */
static double resample_median(const group *g, size_t *counts, rng *r)
{
    memset(counts, 0, g->n * sizeof *counts);
    for (size_t i = 0; i < g->n; i++)
        counts[rng_next(r) % g->n]++; /* a bias of n / 2^64: none to see */
    if (g->n % 2 == 1)
        return rank_value(g, counts, g->n / 2);
    return 0.5 * rank_value(g, counts, g->n / 2 - 1) + 0.5 * rank_value(g, counts, g->n / 2);
}

static double group_median(const group *g)
{
    if (g->n == 0)
        return NAN;
    return sm_stats_median_in(g->v, g->n, 1, g->v);
}

/* ---- the estimate ---- */

static void percent(char *buf, size_t len, double x)
{
    double p = round(100 * x);
    if (!isfinite(p))
        snprintf(buf, len, "%s", x > 0 ? "+inf" : "-inf");
    else
        snprintf(buf, len, "%.0f%%", p == 0 ? 0.0 : p);
}

/* "too few samples: control 2, treated 1 (each group needs 3)". */
static bool too_few(sm_xp_estimate *e)
{
    static const char *const names[3] = {"control", "treated", "fleet"};
    size_t ns[3] = {e->n_ctrl, e->n_treat, e->n_fleet}, at = 0;
    char list[100] = "";
    for (size_t i = 0; i < 3; i++) {
        if (ns[i] >= SM_XP_MIN_SAMPLES)
            continue;
        int n = snprintf(list + at, sizeof list - at, "%s%s %zu", at ? ", " : "", names[i], ns[i]);
        at += n > 0 ? (size_t)n : 0;
    }
    if (at == 0)
        return false;
    e->verdict = SM_XP_INCONCLUSIVE;
    snprintf(e->why, sizeof e->why, "too few samples: %s (each group needs %d)", list,
             SM_XP_MIN_SAMPLES);
    return true;
}

static void apart_no_longer(sm_xp_estimate *e, const char *host, size_t flips)
{
    e->verdict = SM_XP_INCONCLUSIVE;
    e->share = e->lo = e->hi = NAN;
    int n = snprintf(e->why, sizeof e->why,
                     "%s no longer stands apart from the fleet in this experiment (control "
                     "median %.4g vs fleet %.4g)",
                     host, e->ctrl_median, e->fleet_median);
    if (flips > 0 && n > 0 && (size_t)n < sizeof e->why)
        snprintf(e->why + n, sizeof e->why - (size_t)n,
                 ": the gap is 0 or reversed in %zu of %d resamples", flips, SM_XP_BOOTSTRAP);
}

/* The verdict of the interval [lo, hi], the rules of experiment.h in order. */
static void judge(sm_xp_estimate *e)
{
    char lo[16], hi[16];
    percent(lo, sizeof lo, e->lo);
    percent(hi, sizeof hi, e->hi);
    if (e->lo >= 0.5) {
        e->verdict = SM_XP_CAUSE;
        snprintf(e->why, sizeof e->why,
                 "closes most of the gap: its interval [%s, %s] reaches no lower than 50%%", lo,
                 hi);
    } else if (e->hi < SM_XP_NEGLIGIBLE && e->hi >= 0) {
        e->verdict = SM_XP_NOT;
        snprintf(e->why, sizeof e->why,
                 "closes less than a tenth of the gap: its interval [%s, %s] stays below 10%%", lo,
                 hi);
    } else if (e->lo > 0) {
        e->verdict = SM_XP_PART;
        snprintf(e->why, sizeof e->why,
                 "closes part of the gap: its interval [%s, %s] lies above 0 and reaches below "
                 "50%%",
                 lo, hi);
    } else if (e->hi < 0) {
        e->verdict = SM_XP_NOT;
        snprintf(e->why, sizeof e->why, "it widens the gap: its interval [%s, %s] lies below 0", lo,
                 hi);
    } else if (e->hi < 0.5) {
        e->verdict = SM_XP_NOT;
        snprintf(e->why, sizeof e->why,
                 "closes no part of the gap it can show: its interval [%s, %s] holds 0 and stays "
                 "below 50%%",
                 lo, hi);
    } else {
        e->verdict = SM_XP_INCONCLUSIVE;
        snprintf(e->why, sizeof e->why,
                 "the interval [%s, %s] is too wide to decide: it holds 0 and reaches 50%%", lo,
                 hi);
    }
}

/* The bootstrap: lo and hi of the share over SM_XP_BOOTSTRAP resamples, a resample whose gap
 * is 0 or of the other sign counting as -infinity for lo and +infinity for hi (its share is
 * undefined: any value). *flips gets how many those were. */
static int bootstrap(const group g[3], double gap, uint64_t seed, sm_xp_estimate *e, size_t *flips)
{
    size_t most = g[0].n > g[1].n ? g[0].n : g[1].n;
    most = most > g[2].n ? most : g[2].n;
    double *share = sm_analysis_doubles(SM_XP_BOOTSTRAP);
    size_t *counts = most <= SIZE_MAX / sizeof(size_t) ? malloc(most * sizeof *counts) : NULL;
    if (share == NULL || counts == NULL) {
        free(share);
        free(counts);
        return SM_ENOMEM;
    }
    rng r;
    rng_seed(&r, seed);
    size_t valid = 0;
    *flips = 0;
    for (size_t b = 0; b < SM_XP_BOOTSTRAP; b++) {
        double c = resample_median(&g[0], counts, &r), t = resample_median(&g[1], counts, &r);
        double f = resample_median(&g[2], counts, &r), d = c - f;
        if (gap > 0 ? !(d > 0) : !(d < 0))
            (*flips)++;
        else
            share[valid++] = (c - t) / d;
    }
    qsort(share, valid, sizeof *share, cmp_double);
    /* In the order of all resamples, the flips first for lo and last for hi. */
    e->lo = TAIL < *flips ? -INFINITY : share[TAIL - *flips];
    e->hi = TAIL < *flips ? INFINITY : share[SM_XP_BOOTSTRAP - 1 - TAIL];
    free(share);
    free(counts);
    return 0;
}

int sm_xp_estimate_share_for(const char *host, const double *ctrl, size_t nc, const double *treat,
                             size_t nt, const double *fleet, size_t nf, uint64_t seed,
                             sm_xp_estimate *out)
{
    if (out == NULL || (ctrl == NULL && nc > 0) || (treat == NULL && nt > 0) ||
        (fleet == NULL && nf > 0))
        return SM_EINVAL;
    if (host == NULL || host[0] == '\0')
        host = "the host";
    group g[3] = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
    int rc = group_of(ctrl, nc, &g[0]);
    rc = rc ? rc : group_of(treat, nt, &g[1]);
    rc = rc ? rc : group_of(fleet, nf, &g[2]);
    sm_xp_estimate e = {SM_XP_INCONCLUSIVE, NAN, NAN, NAN, NAN, NAN, NAN, 0, 0, 0, ""};
    if (rc == 0) {
        e.n_ctrl = g[0].n;
        e.n_treat = g[1].n;
        e.n_fleet = g[2].n;
        e.ctrl_median = group_median(&g[0]);
        e.treat_median = group_median(&g[1]);
        e.fleet_median = group_median(&g[2]);
    }
    double gap = e.ctrl_median - e.fleet_median;
    size_t flips = 0;
    if (rc == 0 && !too_few(&e)) {
        if (gap == 0) {
            apart_no_longer(&e, host, 0);
        } else {
            e.share = (e.ctrl_median - e.treat_median) / gap;
            rc = bootstrap(g, gap, seed, &e, &flips);
            if (rc == 0 && flips > TAIL)
                apart_no_longer(&e, host, flips);
            else if (rc == 0)
                judge(&e);
        }
    }
    for (size_t i = 0; i < 3; i++)
        free(g[i].v);
    if (rc == 0)
        *out = e;
    return rc;
}

int sm_xp_estimate_share(const double *ctrl, size_t nc, const double *treat, size_t nt,
                         const double *fleet, size_t nf, uint64_t seed, sm_xp_estimate *out)
{
    return sm_xp_estimate_share_for(NULL, ctrl, nc, treat, nt, fleet, nf, seed, out);
}

/* ---- the line of text ---- */

/* A median with its unit, 3 significant digits (a whole number too long for them written out,
 * as throughputs are: "1423 MB/s"), "-" when there is none. */
static void quantity(char *buf, size_t len, double v, const char *unit)
{
    const char *sep = unit[0] == '\0' ? "" : " ";
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else if (fabs(v) >= 1e3 && fabs(v) < 1e9)
        snprintf(buf, len, "%.0f%s%s", v, sep, unit);
    else
        snprintf(buf, len, "%.3g%s%s", v, sep, unit);
}

/* A value cut to at most 32 bytes, for one line. */
static void short_value(char *buf, size_t len, const char *v)
{
    size_t n = strlen(v);
    if (n <= 32 || len < 33) {
        snprintf(buf, len, "%s", v);
        return;
    }
    size_t keep = 28;
    while (keep > 0 && ((unsigned char)v[keep] & 0xC0) == 0x80)
        keep--;
    snprintf(buf, len, "%.*s ...", (int)keep, v);
}

int sm_xp_estimate_text(const sm_xp_suspect *s, const sm_xp_estimate *e, const char *unit,
                        char *buf, size_t len)
{
    char what[300], hv[40], fv[40], c[40], t[40], f[40], lo[16], hi[16], pc[16];
    if (unit == NULL)
        unit = "";
    if (s->item[0] == '\0') {
        snprintf(what, sizeof what, "%s", s->label);
    } else {
        short_value(hv, sizeof hv, s->host_value);
        short_value(fv, sizeof fv, s->fleet_value[0] ? s->fleet_value : "(no majority)");
        snprintf(what, sizeof what, "%s %s -> %s", s->label, hv, fv);
    }
    if (e == NULL || e->verdict == SM_XP_UNTESTED || s->treatment[0] == '\0')
        return snprintf(buf, len, "%-12s %s: %s", sm_xp_verdict_name(SM_XP_UNTESTED), what,
                        s->why_untested[0] ? s->why_untested
                        : e                ? e->why
                                           : "");
    quantity(c, sizeof c, e->ctrl_median, unit);
    quantity(t, sizeof t, e->treat_median, unit);
    quantity(f, sizeof f, e->fleet_median, unit);
    const char *name = sm_xp_verdict_name(e->verdict);
    if (e->verdict == SM_XP_INCONCLUSIVE || !isfinite(e->share))
        return snprintf(buf, len, "%-12s %s: %s (control %s, treated %s, fleet %s; n %zu/%zu/%zu)",
                        name, what, e->why, c, t, f, e->n_ctrl, e->n_treat, e->n_fleet);
    percent(lo, sizeof lo, e->lo);
    percent(hi, sizeof hi, e->hi);
    percent(pc, sizeof pc, fabs(e->share));
    char said[48];
    if (e->share < 0)
        snprintf(said, sizeof said, "widens the gap by %s", pc);
    else
        snprintf(said, sizeof said, "closes %s of the gap", pc);
    return snprintf(buf, len,
                    "%-12s %s: %s [%s, %s] (control %s, treated %s, fleet %s; n %zu/%zu/%zu)", name,
                    what, said, lo, hi, c, t, f, e->n_ctrl, e->n_treat, e->n_fleet);
}
