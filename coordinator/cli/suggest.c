/* "Did you mean": the nearest known word to a mistyped one, by edit distance. */
#include "coordinator/cli/suggest.h"

#include <string.h>

#define WORD_MAX 64

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

size_t sm_cli_edit_distance(const char *a, const char *b)
{
    const size_t la = strlen(a), lb = strlen(b);
    if (la >= WORD_MAX || lb >= WORD_MAX)
        return la > lb ? la : lb;
    /* The optimal string alignment distance: three rows of the Damerau-Levenshtein table. */
    size_t prev2[WORD_MAX] = {0}, prev[WORD_MAX], cur[WORD_MAX];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
                lower(a[i - 2]) == lower(b[j - 1]) && prev2[j - 2] + 1 < cur[j])
                cur[j] = prev2[j - 2] + 1;
        }
        memcpy(prev2, prev, sizeof prev);
        memcpy(prev, cur, sizeof cur);
    }
    return prev[lb];
}

const char *sm_cli_suggest(const char *word, const char *const *cands, size_t n)
{
    const char *best = NULL;
    size_t best_d = 3;
    const size_t len = strlen(word);
    for (size_t i = 0; i < n; i++) {
        const size_t d = sm_cli_edit_distance(word, cands[i]);
        if (d < best_d && 2 * d < len) {
            best = cands[i];
            best_d = d;
        }
    }
    if (best)
        return best;
    /* A word cut short or given another ending ("anomaly", "sched"): the longest common
     * start of at least 4 letters and two thirds of the word. */
    size_t best_p = 0;
    for (size_t i = 0; i < n; i++) {
        size_t p = 0;
        while (word[p] && cands[i][p] && lower(word[p]) == lower(cands[i][p]))
            p++;
        if (p >= 4 && 3 * p >= 2 * len && p > best_p) {
            best = cands[i];
            best_p = p;
        }
    }
    return best;
}
