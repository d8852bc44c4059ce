/* What the CLI's commands print as rows, in the four formats. */
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

static void print_table(const sm_grid *g, FILE *f)
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

void sm_grid_csv_field(const char *v, const char *sep, FILE *f)
{
    if (strpbrk(v, ",\"\r\n")) {
        fputc('"', f);
        for (; *v; v++) {
            if (*v == '"')
                fputc('"', f);
            fputc(*v, f);
        }
        fputc('"', f);
    } else {
        fputs(v, f);
    }
    fputs(sep, f);
}

static void print_csv(const sm_grid *g, FILE *f)
{
    for (size_t r = 0; r < g->rows; r++)
        for (size_t c = 0; c < g->cols; c++)
            sm_grid_csv_field(g->cell[r * g->cols + c], c + 1 == g->cols ? "\r\n" : ",", f);
}

/* A value in a pipe table's cell: '|' escaped, line ends as blanks, an empty one as nothing. */
static void md_cell(const char *v, FILE *f)
{
    for (; *v; v++) {
        if (*v == '|')
            fputs("\\|", f);
        else if (*v == '\r' || *v == '\n')
            fputc(' ', f);
        else
            fputc(*v, f);
    }
}

static void print_md(const sm_grid *g, FILE *f)
{
    for (size_t r = 0; r < g->rows; r++) {
        fputc('|', f);
        for (size_t c = 0; c < g->cols; c++) {
            fputc(' ', f);
            md_cell(g->cell[r * g->cols + c], f);
            fputs(" |", f);
        }
        fputc('\n', f);
        if (r == 0) {
            fputc('|', f);
            for (size_t c = 0; c < g->cols; c++)
                fputs(g->align[c] == 'r' ? " ---: |" : " --- |", f);
            fputc('\n', f);
        }
    }
}

static void json_string(const char *v, FILE *f)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\r')
            fputs("\\r", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void sm_grid_json_key(const char *head, char *buf, size_t cap)
{
    size_t n = 0;
    bool gap = false;
    for (const char *p = head; *p && n + 2 < cap; p++) {
        char ch = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
            if (gap && n)
                buf[n++] = '_';
            buf[n++] = ch;
            gap = false;
        } else {
            gap = true;
        }
    }
    buf[n] = '\0';
}

static void print_json(const sm_grid *g, FILE *f)
{
    fputc('[', f);
    for (size_t r = 1; r < g->rows; r++) {
        fputs(r > 1 ? ",\n {" : "\n {", f);
        for (size_t c = 0; c < g->cols; c++) {
            char key[64];
            sm_grid_json_key(g->cell[c], key, sizeof key);
            if (c)
                fputs(", ", f);
            json_string(key, f);
            fputs(": ", f);
            json_string(g->cell[r * g->cols + c], f);
        }
        fputc('}', f);
    }
    fputs(g->rows > 1 ? "\n]\n" : "]\n", f);
}

void sm_grid_print(const sm_grid *g, FILE *f)
{
    switch (g->fmt) {
    case SM_CLI_FMT_CSV:
        print_csv(g, f);
        break;
    case SM_CLI_FMT_MD:
        print_md(g, f);
        break;
    case SM_CLI_FMT_JSON:
        print_json(g, f);
        break;
    case SM_CLI_FMT_TABLE:
        print_table(g, f);
        break;
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
