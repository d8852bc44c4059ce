/* Which of the suspects together close the gap when no one of them does alone: delta debugging
 * over the plan's tested suspects, Zeller and Hildebrandt's ddmin ("Simplifying and Isolating
 * Failure-Inducing Input", IEEE TSE 28(2), 2002), the variant that runs each step's subsets
 * together as one stage of an experiment. A subset is a bitmask over k suspects (bit i is the
 * plan's i-th tested single, in order); its outcome is what the experiment said of it. Pure,
 * stateless, no allocation: the caller keeps the table of outcomes, and each call replays the
 * search from the start over it to the first stage not yet run, or to the end. docs/analysis.md,
 * "Proving a cause by experiment". */
#ifndef SM_COORD_XPDD_H
#define SM_COORD_XPDD_H

#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"

#define SM_XP_DD_MAX 8 /* suspects of a search: its table holds 1 << 8 outcomes */
/* Subsets in one stage: at granularity n each of the n parts and their n complements. */
#define SM_XP_DD_BATCH_MAX (2 * SM_XP_DD_MAX)
/* sm_xp_dd_next's answer when the search does not apply: the full set is not known to close. */
#define SM_XP_DD_NOT_APPLICABLE 1

/* A subset's outcome: unknown (not run yet); closes (its verdict was "cause"); not (any other
 * decided verdict: "part of it", "not the cause"); unresolved ("inconclusive", ddmin's "?",
 * and best also a subset that could not be run): the search reads it as not closing, and
 * sm_xp_dd_unresolved counts where it did. */
typedef enum {
    SM_XP_DD_UNKNOWN = 0,
    SM_XP_DD_CLOSES,
    SM_XP_DD_NOT,
    SM_XP_DD_UNRESOLVED
} sm_xp_dd_outcome;

/* The next stage of the search over k suspects (1..SM_XP_DD_MAX), or its end. known holds
 * 1 << k outcomes, indexed by the subset's mask; known[0] is never read. The replay starts at
 * the full set c = (1 << k) - 1 with granularity n = 2 and, at each step while |c| > 1, splits c
 * into n parts by bit order, part i the set bits of rank i*|c|/n up to (i+1)*|c|/n (integer
 * division: sizes differ by at most 1, the larger last). The step's subsets are the parts in
 * order, then (when n > 2; at n = 2 they are the parts) each c minus part i in order. When
 * some of them are unknown, those (no duplicate, never empty or the full set) are the stage to
 * run, in that order. Otherwise: c = the first part that closes, n = 2; else c = the first
 * complement that closes, n = max(n - 1, 2); else when n < |c|, n = min(2n, |c|); else the
 * search has ended at c, 1-minimal: no one suspect of it can be left out and still close the
 * gap (as far as the outcomes tell; unresolved counts as not closing).
 * A subset's outcome is read wherever it is known, however it got there: the outcomes of the
 * singles the plan ran before (known[1 << i]) save their arms. Returns
 *   0                        with *n_arms > 0: arms[0..*n_arms) the stage's subsets, each
 *                            unknown in known, at most SM_XP_DD_BATCH_MAX (2k); the caller
 *                            runs them, sets their outcomes and calls again. *result is 0.
 *                            With *n_arms == 0: the search has ended, *result the subset
 *                            found (non-zero).
 *   SM_XP_DD_NOT_APPLICABLE  (positive, no error) known[(1 << k) - 1] is not SM_XP_DD_CLOSES:
 *                            there is nothing to narrow down; nothing is asked or written.
 *   SM_EINVAL                k 0 or over SM_XP_DD_MAX, known, n_arms or result NULL, an
 *                            outcome out of the enum, or the stage needs more than cap arms
 *                            (arms may be NULL only with cap 0; SM_XP_DD_BATCH_MAX always
 *                            suffices): nothing is written.
 * The same table gives the same answer; a search ends after at most sm_xp_dd_budget(k) arms in
 * sm_xp_dd_stages_max(k) stages, whatever the outcomes. */
int sm_xp_dd_next(size_t k, const sm_xp_dd_outcome *known, uint32_t *arms, size_t cap,
                  size_t *n_arms, uint32_t *result);

/* How many subsets the replay over known read as not closing although their outcome was
 * unresolved, each counted once: the parts and complements of each step it decided, up to and
 * excluding the one that closed (a subset after it was run but not read). 0 when the result is
 * 1-minimal on decided outcomes alone, more when an "inconclusive" may have hidden a smaller
 * subset. 0 too when the search does not apply (the full set not known to close), k is 0 or over
 * SM_XP_DD_MAX, known is NULL or holds an outcome out of the enum. */
size_t sm_xp_dd_unresolved(size_t k, const sm_xp_dd_outcome *known);

/* The most arms sm_xp_dd_next asks for in all over one search of k suspects, over every
 * assignment of outcomes (unresolved reads as not, so closes / not is all that matters), from a
 * table that knows the full set alone; a table that knows more asks for no more (the path is the
 * outcomes', only the arms it asks for are fewer). Exact worst cases, not a closed form, found by
 * exhaustive search over the tree of every stage's outcomes (k <= 7), and for k = 8 over the
 * outcomes that decide each step (the first subset that closes, or none), which give the same
 * worst cases as the whole tree for k <= 7 (tests/unit/coordinator/analysis/test_xpdd.c walks
 * the tree again for k <= 6):
 *   k                               1  2  3   4   5   6   7   8
 *   arms (what it returns)          0  2  6  12  20  29  39  50
 *   the singles known not to close  0  0  3   8  15  23  32  42   (as the plan leaves them)
 * against the trivial bound of every proper non-empty subset once, 2^k - 2: 0 2 6 14 30 62 126
 * 254. 0 for k 0 or over SM_XP_DD_MAX. */
size_t sm_xp_dd_budget(size_t k);

/* The most stages (calls answering *n_arms > 0) of one search of k suspects, over every
 * assignment of outcomes, found as sm_xp_dd_budget's: k 1..8 give 0 1 2 3 5 6 7 8. 0 for k 0
 * or over SM_XP_DD_MAX. */
int sm_xp_dd_stages_max(size_t k);

#endif
