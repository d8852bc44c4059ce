/* Read-only tokens from a file of one token a line, checked as the operate token is. */
#include "coordinator/server/tokenfile.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void sm_token_list_wipe(sm_token_list *l)
{
    OPENSSL_cleanse(l, sizeof *l);
}

/* One line (without its end) checked and kept. 0, or SM_EINVAL with err set. */
static int keep(sm_token_list *out, const char *path, int lineno, const char *line,
                const char *operate, sm_error *err)
{
    const size_t len = strlen(line);
    if (len > SM_TOKEN_MAX)
        return sm_error_set(err, SM_EINVAL,
                            "read token on line %d of %s is longer than %d "
                            "characters",
                            lineno, path, SM_TOKEN_MAX);
    if (len < SM_TOKEN_MIN)
        return sm_error_set(err, SM_EINVAL,
                            "read token on line %d of %s is shorter than %d "
                            "characters",
                            lineno, path, SM_TOKEN_MIN);
    if (out->n == SM_READ_TOKENS_MAX)
        return sm_error_set(err, SM_EINVAL, "%s holds more than %d read tokens", path,
                            SM_READ_TOKENS_MAX);
    /* A read token equal to the operate one would operate: a mistake worth stopping at. */
    if (operate && strcmp(line, operate) == 0)
        return sm_error_set(err, SM_EINVAL,
                            "read token on line %d of %s is the operate token "
                            "(--token-file): make one with keygen --token --scope read",
                            lineno, path);
    for (size_t i = 0; i < out->n; i++)
        if (strcmp(out->tok[i], line) == 0)
            return sm_error_set(err, SM_EINVAL, "read token on line %d of %s is there twice",
                                lineno, path);
    memcpy(out->tok[out->n], line, len + 1);
    out->ptr[out->n] = out->tok[out->n];
    out->n++;
    return 0;
}

int sm_token_list_load(sm_token_list *out, const char *path, const char *operate, sm_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f)
        return sm_error_sys(err, errno, "cannot read the read-token file %s", path);
    struct stat st;
    int rc = 0;
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
        rc = sm_error_set(err, SM_EINVAL,
                          "read-token file %s is readable by group or others: chmod 600 it", path);
    /* A line longer than any token is read in pieces; the first piece is refused. */
    char line[SM_TOKEN_MAX + 3];
    for (int lineno = 1; !rc && fgets(line, sizeof line, f); lineno++) {
        const bool whole = strchr(line, '\n') != NULL || feof(f);
        line[strcspn(line, "\r\n")] = '\0';
        if (!whole)
            rc = sm_error_set(err, SM_EINVAL,
                              "read token on line %d of %s is longer than %d characters", lineno,
                              path, SM_TOKEN_MAX);
        else if (line[0])
            rc = keep(out, path, lineno, line, operate, err);
    }
    OPENSSL_cleanse(line, sizeof line);
    fclose(f);
    if (!rc && out->n == 0)
        rc = sm_error_set(err, SM_EINVAL, "read-token file %s holds no token", path);
    if (rc)
        sm_token_list_wipe(out);
    return rc;
}
