/* Unit tests of delta debugging over an experiment's suspects (coordinator/analysis/xpdd.c):
 * the replay driven to its end by a synthetic oracle (call, run the asked arms by the oracle,
 * call again) finds the subset that closes the gap, in the arms derived by hand; the worst case
 * of every oracle of a few suspects stays within the budget; unresolved outcomes read as not
 * closing; what does not apply or is out of bounds asks for nothing and writes nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/xpdd.h"

#include <string.h>

#define TABLE (1u << SM_XP_DD_MAX)

/* The outcome of each subset of k suspects as the experiment would give it. */
typedef sm_xp_dd_outcome (*oracle_fn)(uint32_t mask, const void *ctx);

/* What one search took. */
typedef struct search {
    uint32_t result;
    size_t arms, stages;
} search;

/* Drives the replay over known (the full set already set) to its end, filling each asked arm
 * from the oracle; checks each stage as xpdd.h promises it (unknown subsets, none empty, the
 * full set or twice, at most 2k). */
static search drive(size_t k, sm_xp_dd_outcome *known, oracle_fn oracle, const void *ctx)
{
    search s = {0, 0, 0};
    const uint32_t full = (1u << k) - 1;
    for (;;) {
        uint32_t arms[SM_XP_DD_BATCH_MAX];
        size_t n = 99;
        uint32_t result = 99;
        assert_int_equal(sm_xp_dd_next(k, known, arms, SM_XP_DD_BATCH_MAX, &n, &result), 0);
        if (n == 0) {
            assert_int_not_equal(result, 0);
            assert_int_equal(result & ~full, 0);
            s.result = result;
            return s;
        }
        assert_int_equal(result, 0);
        assert_true(n <= 2 * k);
        for (size_t i = 0; i < n; i++) {
            assert_true(arms[i] != 0 && arms[i] != full && (arms[i] & ~full) == 0);
            assert_int_equal(known[arms[i]], SM_XP_DD_UNKNOWN);
            for (size_t j = 0; j < i; j++)
                assert_int_not_equal(arms[i], arms[j]);
        }
        for (size_t i = 0; i < n; i++)
            known[arms[i]] = oracle(arms[i], ctx);
        s.arms += n;
        s.stages++;
        /* No search of 8 suspects takes more than 64 stages (xpdd.c: c shrinks or n grows). */
        assert_true(s.stages <= 64);
    }
}

/* The oracle of a set that must all be treated: closes iff the subset holds every bit of S. */
static sm_xp_dd_outcome superset_of(uint32_t mask, const void *ctx)
{
    uint32_t need = *(const uint32_t *)ctx;
    return (mask & need) == need ? SM_XP_DD_CLOSES : SM_XP_DD_NOT;
}

/* A search over k suspects whose full set closes and nothing else is known. */
static search run(size_t k, oracle_fn oracle, const void *ctx)
{
    sm_xp_dd_outcome known[TABLE] = {0};
    known[(1u << k) - 1] = SM_XP_DD_CLOSES;
    return drive(k, known, oracle, ctx);
}

static void test_xpdd_a_two_setting_interaction_is_found_in_the_arms_derived_by_hand(void **state)
{
    (void)state;
    /* k = 4, the gap closes only with suspects 1 and 3 both treated (S = 1010). By hand:
     *   c = 1111, n = 2: parts 0011, 1100 (the complements are the same): 2 arms, both not;
     *     n < |c|, so n = 4.
     *   c = 1111, n = 4: parts 0001 0010 0100 1000, complements 1110 1101 1011 0111: 8 arms;
     *     no single closes, 1110 is the first complement that does: c = 1110, n = 3.
     *   c = 1110, n = 3: parts 0010 0100 1000 known, complements 1100 (known from the first
     *     stage), 1010, 0110: 2 arms; 1010 closes: c = 1010, n = 2.
     *   c = 1010, n = 2: parts 0010 1000 known, neither closes, n = |c|: the end, 1010.
     * 2 + 8 + 2 = 12 arms in 3 stages. */
    const uint32_t s13 = 0xa;
    search s = run(4, superset_of, &s13);
    assert_int_equal(s.result, 0xa);
    assert_int_equal(s.arms, 12);
    assert_int_equal(s.stages, 3);
    assert_true(s.arms <= sm_xp_dd_budget(4));
    assert_true((int)s.stages <= sm_xp_dd_stages_max(4));

    /* The plan ran the four singles before (none is the cause): the second stage asks for the
     * complements alone, 2 + 4 + 2 = 8 arms. */
    sm_xp_dd_outcome known[TABLE] = {0};
    known[0xf] = SM_XP_DD_CLOSES;
    for (int i = 0; i < 4; i++)
        known[1u << i] = SM_XP_DD_NOT;
    s = drive(4, known, superset_of, &s13);
    assert_int_equal(s.result, 0xa);
    assert_int_equal(s.arms, 8);
    assert_int_equal(s.stages, 3);
}

static void test_xpdd_a_single_hidden_cause_is_found(void **state)
{
    (void)state;
    /* k = 4, closes iff suspect 2 is treated: 0011 not, 1100 closes (c = 1100, n = 2); 0100
     * closes: c = 0100, one suspect, the end. 4 arms in 2 stages. */
    const uint32_t s2 = 0x4;
    search s = run(4, superset_of, &s2);
    assert_int_equal(s.result, 0x4);
    assert_int_equal(s.arms, 4);
    assert_int_equal(s.stages, 2);

    /* One suspect alone: the full set is the answer, nothing to run. */
    const uint32_t s0 = 0x1;
    s = run(1, superset_of, &s0);
    assert_int_equal(s.result, 0x1);
    assert_int_equal(s.arms, 0);
    assert_int_equal(sm_xp_dd_budget(1), 0);
}

static void test_xpdd_three_needed_of_five_are_found(void **state)
{
    (void)state;
    /* The first stage splits the five in bit order, the larger part last: 00011 and 11100. */
    sm_xp_dd_outcome known[TABLE] = {0};
    known[0x1f] = SM_XP_DD_CLOSES;
    uint32_t arms[SM_XP_DD_BATCH_MAX];
    size_t n = 0;
    uint32_t result = 99;
    assert_int_equal(sm_xp_dd_next(5, known, arms, SM_XP_DD_BATCH_MAX, &n, &result), 0);
    assert_int_equal(n, 2);
    assert_int_equal(arms[0], 0x03);
    assert_int_equal(arms[1], 0x1c);
    const uint32_t s024 = 0x15;
    search s = run(5, superset_of, &s024);
    assert_int_equal(s.result, 0x15);
    assert_true(s.arms > 0 && s.arms <= sm_xp_dd_budget(5));
    assert_true((int)s.stages <= sm_xp_dd_stages_max(5));
}

static void test_xpdd_every_superset_oracle_of_four_finds_its_set(void **state)
{
    (void)state;
    /* ddmin finds the exact minimum when closing needs one set of suspects all treated. */
    for (uint32_t need = 1; need < 16; need++) {
        search s = run(4, superset_of, &need);
        assert_int_equal(s.result, need);
        assert_true(s.arms <= sm_xp_dd_budget(4));
        assert_true((int)s.stages <= sm_xp_dd_stages_max(4));
    }
}

static void test_xpdd_without_the_full_set_closing_nothing_is_asked(void **state)
{
    (void)state;
    const sm_xp_dd_outcome not_closing[] = {SM_XP_DD_UNKNOWN, SM_XP_DD_NOT, SM_XP_DD_UNRESOLVED};
    for (size_t i = 0; i < 3; i++) {
        sm_xp_dd_outcome known[TABLE] = {0};
        known[0xf] = not_closing[i];
        known[0x3] = SM_XP_DD_CLOSES; /* a subset that closes does not make it apply */
        uint32_t arms[SM_XP_DD_BATCH_MAX] = {7, 7};
        size_t n = 99;
        uint32_t result = 99;
        assert_int_equal(sm_xp_dd_next(4, known, arms, SM_XP_DD_BATCH_MAX, &n, &result),
                         SM_XP_DD_NOT_APPLICABLE);
        assert_int_equal(n, 99);
        assert_int_equal(result, 99);
        assert_int_equal(arms[0], 7);
        assert_int_equal(arms[1], 7);
        assert_int_equal(sm_xp_dd_unresolved(4, known), 0);
    }
}

/* Every subset but the full set is inconclusive. */
static sm_xp_dd_outcome all_unresolved(uint32_t mask, const void *ctx)
{
    (void)mask;
    (void)ctx;
    return SM_XP_DD_UNRESOLVED;
}

static sm_xp_dd_outcome all_not(uint32_t mask, const void *ctx)
{
    (void)mask;
    (void)ctx;
    return SM_XP_DD_NOT;
}

/* Closes iff suspect 1 is treated, but 1100 (run, not read: 0011 closes before it) and 0001
 * (read as not closing) are inconclusive. */
static sm_xp_dd_outcome cause_1_with_two_unresolved(uint32_t mask, const void *ctx)
{
    (void)ctx;
    if (mask == 0xc || mask == 0x1)
        return SM_XP_DD_UNRESOLVED;
    return mask & 0x2 ? SM_XP_DD_CLOSES : SM_XP_DD_NOT;
}

static void test_xpdd_unresolved_outcomes_read_as_not_closing(void **state)
{
    (void)state;
    /* All inconclusive: the search goes where all "not" takes it, to the end (the full set, no
     * subset proven to close), and counts each of the 10 subsets it read. */
    sm_xp_dd_outcome unres[TABLE] = {0}, nots[TABLE] = {0};
    unres[0xf] = nots[0xf] = SM_XP_DD_CLOSES;
    search u = drive(4, unres, all_unresolved, NULL);
    search n = drive(4, nots, all_not, NULL);
    assert_int_equal(u.result, 0xf);
    assert_int_equal(u.result, n.result);
    assert_int_equal(u.arms, n.arms);
    assert_int_equal(u.arms, 10);
    assert_int_equal(sm_xp_dd_unresolved(4, unres), 10);
    assert_int_equal(sm_xp_dd_unresolved(4, nots), 0);

    /* 0011 closes, 1100 was run beside it but not read; c = 0011: 0001 inconclusive, read as
     * not closing, 0010 closes. The answer stands, one unresolved read on the way. */
    sm_xp_dd_outcome known[TABLE] = {0};
    known[0xf] = SM_XP_DD_CLOSES;
    search s = drive(4, known, cause_1_with_two_unresolved, NULL);
    assert_int_equal(s.result, 0x2);
    assert_int_equal(known[0xc], SM_XP_DD_UNRESOLVED);
    assert_int_equal(sm_xp_dd_unresolved(4, known), 1);
}

static void test_xpdd_bad_arguments_are_refused_and_nothing_is_written(void **state)
{
    (void)state;
    sm_xp_dd_outcome known[TABLE] = {0};
    known[0xf] = SM_XP_DD_CLOSES;
    uint32_t arms[SM_XP_DD_BATCH_MAX] = {7, 7};
    size_t n = 99;
    uint32_t result = 99;
    assert_int_equal(sm_xp_dd_next(0, known, arms, SM_XP_DD_BATCH_MAX, &n, &result), SM_EINVAL);
    assert_int_equal(sm_xp_dd_next(SM_XP_DD_MAX + 1, known, arms, SM_XP_DD_BATCH_MAX, &n, &result),
                     SM_EINVAL);
    assert_int_equal(sm_xp_dd_next(4, NULL, arms, SM_XP_DD_BATCH_MAX, &n, &result), SM_EINVAL);
    assert_int_equal(sm_xp_dd_next(4, known, NULL, SM_XP_DD_BATCH_MAX, &n, &result), SM_EINVAL);
    /* The first stage asks for 2 arms: 1 is too few, 0 with no array too. */
    assert_int_equal(sm_xp_dd_next(4, known, arms, 1, &n, &result), SM_EINVAL);
    assert_int_equal(sm_xp_dd_next(4, known, NULL, 0, &n, &result), SM_EINVAL);
    known[0x5] = (sm_xp_dd_outcome)7;
    assert_int_equal(sm_xp_dd_next(4, known, arms, SM_XP_DD_BATCH_MAX, &n, &result), SM_EINVAL);
    known[0x5] = SM_XP_DD_UNKNOWN;
    assert_int_equal(n, 99);
    assert_int_equal(result, 99);
    assert_int_equal(arms[0], 7);
    assert_int_equal(arms[1], 7);
    assert_int_equal(sm_xp_dd_next(4, known, arms, SM_XP_DD_BATCH_MAX, NULL, &result), SM_EINVAL);
    assert_int_equal(sm_xp_dd_next(4, known, arms, SM_XP_DD_BATCH_MAX, &n, NULL), SM_EINVAL);
    assert_int_equal(arms[0], 7);
    assert_int_equal(sm_xp_dd_unresolved(0, known), 0);
    assert_int_equal(sm_xp_dd_budget(0), 0);
    assert_int_equal(sm_xp_dd_budget(SM_XP_DD_MAX + 1), 0);
    assert_int_equal(sm_xp_dd_stages_max(SM_XP_DD_MAX + 1), 0);
    /* With room for exactly the stage, it is asked. */
    assert_int_equal(sm_xp_dd_next(4, known, arms, 2, &n, &result), 0);
    assert_int_equal(n, 2);
    assert_int_equal(arms[0], 0x3);
    assert_int_equal(arms[1], 0xc);
    assert_int_equal(result, 0);
}

/* An oracle as two truth tables over the masks of up to 5 suspects: bit m of closes says
 * whether mask m closes, bit m of unresolved (where it does not) whether it is inconclusive. */
typedef struct table_oracle {
    uint32_t closes, unresolved;
} table_oracle;

static sm_xp_dd_outcome by_table(uint32_t mask, const void *ctx)
{
    const table_oracle *t = ctx;
    if (t->closes >> mask & 1)
        return SM_XP_DD_CLOSES;
    return t->unresolved >> mask & 1 ? SM_XP_DD_UNRESOLVED : SM_XP_DD_NOT;
}

/* One search of the oracle t over k suspects, checked: within the budget and the stages, and
 * the result closes while no one suspect of it can be left out (inconclusive read as not). */
static search check_search(size_t k, const table_oracle *t)
{
    search s = run(k, by_table, t);
    assert_true(s.arms <= sm_xp_dd_budget(k));
    assert_true((int)s.stages <= sm_xp_dd_stages_max(k));
    assert_true(t->closes >> s.result & 1);
    for (uint32_t b = 1; b <= s.result; b <<= 1)
        if ((s.result & b) && s.result != b)
            assert_false(t->closes >> (s.result & ~b) & 1);
    return s;
}

/* The monotone truth tables over j suspects (a subset's superset closes too): each is low | high
 * << 2^(j-1), low and high monotone over j - 1 suspects and low within high. */
static size_t monotone(size_t j, uint32_t *out)
{
    static uint32_t prev[8000];
    if (j == 0) {
        out[0] = 0;
        out[1] = 1;
        return 2;
    }
    size_t np = monotone(j - 1, out), n = 0;
    memcpy(prev, out, np * sizeof *out);
    unsigned half = 1u << (j - 1);
    for (size_t a = 0; a < np; a++)
        for (size_t b = 0; b < np; b++)
            if ((prev[a] & ~prev[b]) == 0)
                out[n++] = prev[a] | prev[b] << half;
    return n;
}

static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void test_xpdd_the_budget_holds_for_every_oracle_by_brute_force(void **state)
{
    (void)state;
    /* k 2..4: every oracle (each proper non-empty subset closes or not). The budget and the
     * stages are the worst cases, so some oracle reaches each. */
    for (size_t k = 2; k <= 4; k++) {
        uint32_t full = (1u << k) - 1, free_bits = 0;
        for (uint32_t m = 1; m < full; m++)
            free_bits |= 1u << m;
        size_t worst_arms = 0, worst_stages = 0;
        for (uint32_t f = 0;; f = (f - free_bits) & free_bits) {
            table_oracle t = {f | 1u << full, 0};
            search s = check_search(k, &t);
            worst_arms = s.arms > worst_arms ? s.arms : worst_arms;
            worst_stages = s.stages > worst_stages ? s.stages : worst_stages;
            if (f == free_bits)
                break;
        }
        assert_int_equal(worst_arms, sm_xp_dd_budget(k));
        assert_int_equal((int)worst_stages, sm_xp_dd_stages_max(k));
    }

    /* k 5: every monotone oracle (Dedekind's 7581 but the one that never closes), then 20000
     * random ones, half of them with inconclusive outcomes, whose search must go where the same
     * oracle with "not" for each inconclusive takes it. */
    static uint32_t mono[8000];
    size_t nm = monotone(5, mono);
    assert_int_equal(nm, 7581);
    size_t seen = 0;
    for (size_t i = 0; i < nm; i++) {
        if (!(mono[i] >> 31 & 1))
            continue;
        table_oracle t = {mono[i], 0};
        check_search(5, &t);
        seen++;
    }
    assert_int_equal(seen, 7580);
    uint64_t seed = 42;
    for (int i = 0; i < 20000; i++) {
        uint32_t r = (uint32_t)next_rand(&seed), u = (uint32_t)next_rand(&seed);
        table_oracle t = {(r | 1u << 31) & ~1u, i % 2 ? u & ~r : 0};
        search s = check_search(5, &t);
        table_oracle decided = {t.closes, 0};
        search d = check_search(5, &decided);
        assert_int_equal(s.result, d.result);
        assert_int_equal(s.arms, d.arms);
        assert_int_equal(s.stages, d.stages);
    }
}

/* Every path the replay can take from known: each stage's arms given every assignment of
 * closes and not; the most arms and stages of a path into *most_arms and *most_stages. */
static void every_path(size_t k, sm_xp_dd_outcome *known, size_t arms, size_t stages,
                       size_t *most_arms, size_t *most_stages)
{
    uint32_t v[SM_XP_DD_BATCH_MAX];
    size_t n = 0;
    uint32_t result = 0;
    assert_int_equal(sm_xp_dd_next(k, known, v, SM_XP_DD_BATCH_MAX, &n, &result), 0);
    if (n == 0) {
        *most_arms = arms > *most_arms ? arms : *most_arms;
        *most_stages = stages > *most_stages ? stages : *most_stages;
        return;
    }
    for (uint32_t a = 0; a < (1u << n); a++) {
        for (size_t i = 0; i < n; i++)
            known[v[i]] = a >> i & 1 ? SM_XP_DD_CLOSES : SM_XP_DD_NOT;
        every_path(k, known, arms + n, stages + 1, most_arms, most_stages);
    }
    for (size_t i = 0; i < n; i++)
        known[v[i]] = SM_XP_DD_UNKNOWN;
}

static void test_xpdd_the_budget_is_the_worst_path_of_every_outcome_tree(void **state)
{
    (void)state;
    /* k 1..6: the tree of every outcome of every stage holds every oracle's path (what the
     * replay never asks for cannot change it): its longest path is the budget, to the arm. */
    for (size_t k = 1; k <= 6; k++) {
        sm_xp_dd_outcome known[TABLE] = {0};
        known[(1u << k) - 1] = SM_XP_DD_CLOSES;
        size_t most_arms = 0, most_stages = 0;
        every_path(k, known, 0, 0, &most_arms, &most_stages);
        assert_int_equal(most_arms, sm_xp_dd_budget(k));
        assert_int_equal((int)most_stages, sm_xp_dd_stages_max(k));
        assert_true(sm_xp_dd_budget(k) <= (1u << k) - 2);
    }
    /* With the singles known not to close, as the plan leaves them: xpdd.h's second row. */
    const size_t singles_known[] = {0, 0, 0, 3, 8, 15, 23};
    for (size_t k = 1; k <= 6; k++) {
        sm_xp_dd_outcome known[TABLE] = {0};
        for (size_t i = 0; i < k; i++)
            known[1u << i] = SM_XP_DD_NOT;
        known[(1u << k) - 1] = SM_XP_DD_CLOSES;
        size_t most_arms = 0, most_stages = 0;
        every_path(k, known, 0, 0, &most_arms, &most_stages);
        assert_int_equal(most_arms, singles_known[k]);
        assert_true((int)most_stages <= sm_xp_dd_stages_max(k));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xpdd_a_two_setting_interaction_is_found_in_the_arms_derived_by_hand),
        cmocka_unit_test(test_xpdd_a_single_hidden_cause_is_found),
        cmocka_unit_test(test_xpdd_three_needed_of_five_are_found),
        cmocka_unit_test(test_xpdd_every_superset_oracle_of_four_finds_its_set),
        cmocka_unit_test(test_xpdd_without_the_full_set_closing_nothing_is_asked),
        cmocka_unit_test(test_xpdd_unresolved_outcomes_read_as_not_closing),
        cmocka_unit_test(test_xpdd_bad_arguments_are_refused_and_nothing_is_written),
        cmocka_unit_test(test_xpdd_the_budget_holds_for_every_oracle_by_brute_force),
        cmocka_unit_test(test_xpdd_the_budget_is_the_worst_path_of_every_outcome_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
