/* The coordinator's read-only tokens, read from their file (--read-token-file). */
#ifndef SM_COORD_TOKENFILE_H
#define SM_COORD_TOKENFILE_H

#include <stddef.h>

#include "coordinator/server/guard.h"
#include "proto/err.h"

#define SM_READ_TOKENS_MAX 64 /* tokens in one read-token file */
#define SM_TOKEN_MIN       16 /* characters of any token */

/* Holds the tokens of a file: one a line, blank lines skipped. */
typedef struct sm_token_list {
    char tok[SM_READ_TOKENS_MAX][SM_TOKEN_MAX + 1];
    const char *ptr[SM_READ_TOKENS_MAX]; /* ptr[i] is tok[i], for sm_tokens.read */
    size_t n;
} sm_token_list;

/* Reads path into out: each line one token of SM_TOKEN_MIN to SM_TOKEN_MAX characters, at
 * least one and at most SM_READ_TOKENS_MAX, the file not readable by group or others, no token
 * twice, none equal to operate (the operate token, may be NULL). 0, or SM_EINVAL/SM_ESYS with
 * err naming the file and the line; out is then wiped. */
int sm_token_list_load(sm_token_list *out, const char *path, const char *operate, sm_error *err);

/* Wipes the tokens held. */
void sm_token_list_wipe(sm_token_list *l);

#endif
