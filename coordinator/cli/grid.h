/* An aligned text grid for the terminal: a header row, then rows of strings, two blanks
 * between columns, no trailing blanks. */
#ifndef SM_CLI_GRID_H
#define SM_CLI_GRID_H

#include <stddef.h>
#include <stdio.h>

#define SM_GRID_COLS 17 /* the most columns a grid has: an item and 16 hosts */

/* Embedded: set cols (up to SM_GRID_COLS) and align, the rest zero, then add rows. */
typedef struct sm_grid {
    size_t cols, rows;
    const char *align; /* 'l' or 'r' per column */
    char **cell;       /* rows x cols, row 0 the header; owned */
} sm_grid;

/* Adds a row of g->cols strings (NULL is ""), copied. 0 or SM_ENOMEM; after a failure the
 * grid still holds what was copied, for sm_grid_fini. */
int sm_grid_row(sm_grid *g, const char *const *values);

void sm_grid_print(const sm_grid *g, FILE *f);

void sm_grid_fini(sm_grid *g);

/* Ends a command's grid: with rc 0 prints it on stdout and returns 0; else reports that
 * memory ran out and returns 1. Frees the grid either way. */
int sm_grid_done(sm_grid *g, int rc);

#endif
