/* What the CLI's commands print as rows: a header row, then rows of strings, printed in the
 * --format asked for. One implementation for every command:
 *   table  aligned for a terminal: two blanks between columns, no trailing blanks
 *   csv    RFC 4180: the header as shown, a field quoted ("...", a quote doubled) when it holds
 *          a comma, a quote or a line end; lines end in CRLF
 *   md     a Markdown pipe table: "| A | B |", "| --- | ---: |", a '|' in a value written "\|",
 *          a line end as a blank
 *   json   an array of objects, one per row, the keys the headers in lower case with each
 *          run of other characters than a-z 0-9 made one '_' ("LAST SEEN (s)" is
 *          "last_seen_s"), the values strings as shown ("" where the table shows nothing). */
#ifndef SM_CLI_GRID_H
#define SM_CLI_GRID_H

#include <stddef.h>
#include <stdio.h>

#include "coordinator/cli/cli.h"

#define SM_GRID_COLS 17 /* the most columns a grid has: an item and 16 hosts */

/* Embedded: set cols (up to SM_GRID_COLS) and align, the rest zero (fmt: table), then add
 * rows. */
typedef struct sm_grid {
    size_t cols, rows;
    const char *align; /* 'l' or 'r' per column */
    char **cell;       /* rows x cols, row 0 the header; owned */
    sm_cli_format fmt; /* how sm_grid_print writes it */
} sm_grid;

/* Adds a row of g->cols strings (NULL is ""), copied. 0 or SM_ENOMEM; after a failure the
 * grid still holds what was copied, for sm_grid_fini. */
int sm_grid_row(sm_grid *g, const char *const *values);

/* Writes g to f in g->fmt. */
void sm_grid_print(const sm_grid *g, FILE *f);

/* One field as RFC 4180 has it, then sep ("," or "\r\n"). */
void sm_grid_csv_field(const char *v, const char *sep, FILE *f);

/* head as a JSON key: "LAST SEEN (s)" is "last_seen_s" (cap bytes, NUL-terminated). */
void sm_grid_json_key(const char *head, char *buf, size_t cap);

void sm_grid_fini(sm_grid *g);

/* Ends a command's grid: with rc 0 prints it on stdout and returns 0; else reports that
 * memory ran out and returns 1. Frees the grid either way. */
int sm_grid_done(sm_grid *g, int rc);

#endif
