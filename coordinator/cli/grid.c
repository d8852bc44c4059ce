/* An aligned text grid for the terminal. */
#include "coordinator/cli/grid.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/cli/output.h"
#include "proto/err.h"

void sm_grid_fini(sm_grid *g)
{
    for (size_t i = 0; i < g->rows * g->cols; i++)
        free(g->cell[i]);
    free(g->cell);
}

int sm_grid_row(sm_grid *g, const char *const *values)
{
    char **cell = realloc(g->cell, (g->rows + 1) * g->cols * sizeof *cell);
    if (!cell)
        return SM_ENOMEM;
    g->cell = cell;
    int rc = 0;
    for (size_t c = 0; c < g->cols; c++) {
        cell[g->rows * g->cols + c] = strdup(values[c] ? values[c] : "");
        if (!cell[g->rows * g->cols + c])
            rc = SM_ENOMEM;
    }
    g->rows++; /* even on failure, so that sm_grid_fini frees what was copied */
    return rc;
}

void sm_grid_print(const sm_grid *g, FILE *f)
{
    size_t width[SM_GRID_COLS] = {0};
    for (size_t r = 0; r < g->rows; r++)
        for (size_t c = 0; c < g->cols; c++) {
            size_t w = strlen(g->cell[r * g->cols + c]);
            width[c] = w > width[c] ? w : width[c];
        }
    for (size_t r = 0; r < g->rows; r++) {
        for (size_t c = 0; c < g->cols; c++) {
            const char *v = g->cell[r * g->cols + c];
            bool last = c + 1 == g->cols;
            if (g->align[c] == 'r')
                fprintf(f, "%*s", (int)width[c], v);
            else if (last)
                fputs(v, f); /* no trailing blanks */
            else
                fprintf(f, "%-*s", (int)width[c], v);
            fputs(last ? "\n" : "  ", f);
        }
    }
}

int sm_grid_done(sm_grid *g, int rc)
{
    if (!rc)
        sm_grid_print(g, stdout);
    sm_grid_fini(g);
    if (rc)
        sm_cli_fail("out of memory");
    return rc ? 1 : 0;
}
