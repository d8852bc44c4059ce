/* A --spec file: read whole, and checked here so that a mistake is told with its place. */
#ifndef SM_CLI_SPECFILE_H
#define SM_CLI_SPECFILE_H

#include <stddef.h>

#include "proto/err.h"

/* Reads path (at most 1 MiB) into *out (NUL-terminated, the caller's to free), *len its bytes,
 * and checks it as the coordinator will: JSON syntax, then the spec's fields. Errors name the
 * file and the place: "--spec F: line L, column C: ..." for JSON that does not parse, "--spec
 * F: at tests[0].pairs: ..." (the JSON path) for a field the spec refuses. On error *out is
 * NULL. */
int sm_cli_spec_load(const char *path, char **out, size_t *len, sm_error *err);

/* Line and column (both from 1) of byte off in text. */
void sm_cli_spec_position(const char *text, size_t off, unsigned *line, unsigned *col);

#endif
