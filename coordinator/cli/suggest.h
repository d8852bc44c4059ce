/* "Did you mean": the nearest of some words to a word the command line did not know. */
#ifndef SM_CLI_SUGGEST_H
#define SM_CLI_SUGGEST_H

#include <stddef.h>

/* The edit distance between a and b: insertions, deletions, substitutions and swaps of two
 * neighbours ("fromat" is 1 from "format"), letters compared case-insensitively. Words of
 * more than 63 characters are as far as their length. */
size_t sm_cli_edit_distance(const char *a, const char *b);

/* The word of cands[0..n) nearest to word, when it is near enough to be what was meant: at
 * most 2 edits, and fewer than half of word's length (so "ab" suggests nothing for "xy");
 * the first of the nearest on a tie. Else the one that starts as word does for the most
 * letters, at least 4 and two thirds of word ("anomaly": "anomalies"). NULL when none is. */
const char *sm_cli_suggest(const char *word, const char *const *cands, size_t n);

#endif
