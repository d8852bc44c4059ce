/* A --spec file: read whole, and checked before it is sent, its mistakes told with their place. */
#include "coordinator/cli/specfile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "coordinator/model/spec.h"

#define SPEC_FILE_MAX (1u << 20)

static int read_file(const char *path, char **out, size_t *len, sm_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sm_error_sys(err, errno, "--spec: cannot open %s", path);
    char *buf = malloc(SPEC_FILE_MAX + 1);
    if (!buf) {
        fclose(f);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    size_t n = fread(buf, 1, SPEC_FILE_MAX + 1, f);
    int rc = 0;
    if (ferror(f))
        rc = sm_error_sys(err, errno, "--spec: cannot read %s", path);
    else if (n > SPEC_FILE_MAX)
        rc = sm_error_set(err, SM_EINVAL, "--spec: %s is larger than %u KiB", path,
                          SPEC_FILE_MAX >> 10);
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

void sm_cli_spec_position(const char *text, size_t off, unsigned *line, unsigned *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

/* The file's JSON syntax; cJSON gives the byte where it stopped understanding. */
static int check_syntax(const char *path, const char *text, size_t len, sm_error *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (root) {
        cJSON_Delete(root);
        return 0;
    }
    size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
    unsigned line, col;
    sm_cli_spec_position(text, off, &line, &col);
    return sm_error_set(err, SM_EPARSE, "--spec %s: line %u, column %u: not valid JSON", path, line,
                        col);
}

int sm_cli_spec_load(const char *path, char **out, size_t *len, sm_error *err)
{
    char *text = NULL;
    size_t n = 0;
    *out = NULL;
    int rc = read_file(path, &text, &n, err);
    if (rc)
        return rc;
    rc = check_syntax(path, text, n, err);
    if (!rc) {
        sm_spec spec;
        sm_error why = {0};
        if (sm_spec_decode(text, n, &spec, &why) == 0)
            sm_spec_fini(&spec);
        else if (why.field[0])
            rc = sm_error_set(err, why.code, "--spec %s: at %s: %s", path, why.field, why.msg);
        else
            rc = sm_error_set(err, why.code, "--spec %s: %s", path, why.msg);
    }
    if (rc) {
        free(text);
        return rc;
    }
    *out = text;
    *len = n;
    return 0;
}
