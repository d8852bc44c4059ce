/* Comparison tables: storage, and their CSV and Markdown encoders (JSON: table_json.c). */
#include "coordinator/analysis/table.h"

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/internal.h"
#include "coordinator/analysis/verdict.h"
#include "proto/csv.h"
#include "proto/err.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- storage ---- */

/* calloc of n x size with overflow checked; never NULL for n == 0 on success, so that a NULL
 * pointer always means "out of memory" to the caller. */
static void *alloc_zeroed(size_t n, size_t size)
{
    if (n != 0 && size > SIZE_MAX / n)
        return NULL;
    return calloc(n ? n : 1, size);
}

int sm_table_init(sm_table *t, size_t n_rows, size_t n_cols, size_t n_ratio_cols)
{
    memset(t, 0, sizeof *t);
    if ((n_cols != 0 && n_rows > SIZE_MAX / n_cols) ||
        (n_ratio_cols != 0 && n_rows > SIZE_MAX / n_ratio_cols))
        return SM_ENOMEM;
    t->rows = alloc_zeroed(n_rows, sizeof t->rows[0]);
    t->cols = alloc_zeroed(n_cols, sizeof t->cols[0]);
    t->cells = alloc_zeroed(n_rows * n_cols, sizeof t->cells[0]);
    t->ratio_cols = alloc_zeroed(n_ratio_cols, sizeof t->ratio_cols[0]);
    t->ratio_cells = alloc_zeroed(n_rows * n_ratio_cols, sizeof t->ratio_cells[0]);
    t->flags = alloc_zeroed(n_rows, sizeof t->flags[0]);
    if (!t->rows || !t->cols || !t->cells || !t->ratio_cols || !t->ratio_cells || !t->flags) {
        sm_table_fini(t);
        return SM_ENOMEM;
    }
    t->n_rows = n_rows;
    t->n_cols = n_cols;
    t->n_ratio_cols = n_ratio_cols;
    return 0;
}

static void cells_fini(sm_table_cell *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].disturbed_reason);
        free(c[i].failed_reason);
        free(c[i].j.why);
    }
}

void sm_table_fini(sm_table *t)
{
    if (t == NULL)
        return;
    cells_fini(t->cells, t->n_rows * t->n_cols);
    cells_fini(t->ratio_cells, t->n_rows * t->n_ratio_cols);
    for (size_t r = 0; t->row_j && r < t->n_rows; r++)
        free(t->row_j[r].why);
    free(t->row_j);
    free(t->whole.why);
    free(t->rows);
    free(t->cols);
    free(t->cells);
    free(t->ratio_cols);
    free(t->ratio_cells);
    free(t->flags);
    memset(t, 0, sizeof *t);
}

sm_table_cell *sm_table_at(sm_table *t, size_t row, size_t col)
{
    if (row >= t->n_rows || col >= t->n_cols)
        return NULL;
    return &t->cells[row * t->n_cols + col];
}

sm_table_cell *sm_table_ratio_at(sm_table *t, size_t row, size_t col)
{
    if (row >= t->n_rows || col >= t->n_ratio_cols)
        return NULL;
    return &t->ratio_cells[row * t->n_ratio_cols + col];
}

/* The encoders take a const table; the accessors above hand out mutable cells. */
static const sm_table_cell *cell_of(const sm_table *t, size_t row, size_t col)
{
    return &t->cells[row * t->n_cols + col];
}

static const sm_table_cell *ratio_of(const sm_table *t, size_t row, size_t col)
{
    return &t->ratio_cells[row * t->n_ratio_cols + col];
}

/* ---- a growing text buffer: the first failed allocation sticks, the caller checks once ---- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static bool sbuf_reserve(sbuf *b, size_t more)
{
    if (b->oom)
        return false;
    if (more >= SIZE_MAX - b->len) {
        b->oom = true;
        return false;
    }
    size_t need = b->len + more + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

static void sbuf_putn(sbuf *b, const char *s, size_t n)
{
    if (!sbuf_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sbuf_puts(sbuf *b, const char *s)
{
    sbuf_putn(b, s, strlen(s));
}

static void sbuf_putc_n(sbuf *b, char c, size_t n)
{
    if (!sbuf_reserve(b, n))
        return;
    memset(b->p + b->len, c, n);
    b->len += n;
    b->p[b->len] = '\0';
}

__attribute__((format(printf, 2, 3))) static void sbuf_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = true;
        return;
    }
    if (!sbuf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* The text, or NULL (everything freed) when an allocation failed on the way. */
static char *sbuf_finish(sbuf *b)
{
    if (b->oom) {
        free(b->p);
        return NULL;
    }
    if (b->p == NULL)
        return calloc(1, 1);
    return b->p;
}

/* The struct's fixed char arrays are read no further than their size even without a NUL. */
static size_t fixed_len(const char *s, size_t cap)
{
    return strnlen(s, cap);
}

/* ---- CSV (RFC 4180) ---- */

static void csv_put(void *arg, const char *p, size_t n)
{
    sbuf_putn(arg, p, n);
}

static void csv_field(sbuf *b, const char *s, size_t n)
{
    sm_csv_field(s, n, csv_put, b);
}

/* "<label> <stat>" or "<label> <stat> (<unit>)" as one field. */
static void csv_header_field(sbuf *b, const sm_table_col *c, const char *stat, bool with_unit)
{
    char text[SM_TABLE_LABEL_MAX + sizeof c->unit + 32];
    int label_len = (int)fixed_len(c->label, sizeof c->label);
    int unit_len = (int)fixed_len(c->unit, sizeof c->unit);
    int n;
    if (with_unit && unit_len > 0)
        n = snprintf(text, sizeof text, "%.*s %s (%.*s)", label_len, c->label, stat, unit_len,
                     c->unit);
    else
        n = snprintf(text, sizeof text, "%.*s %s", label_len, c->label, stat);
    sbuf_putn(b, ",", 1);
    csv_field(b, text, n < 0 ? 0 : (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

static void csv_header_group(sbuf *b, const sm_table_col *c, bool ratio, bool stopped)
{
    csv_header_field(b, c, "median", true);
    csv_header_field(b, c, "ci95_low", true);
    csv_header_field(b, c, "ci95_high", true);
    csv_header_field(b, c, "n", false);
    if (!ratio)
        csv_header_field(b, c, "disturbed", false);
    if (stopped)
        csv_header_field(b, c, "stopped", false);
}

/* Whether any value cell records why its repetitions stopped (adaptive ones, or disturbed
 * samples measured again to the bound): only then has the CSV a "stopped" column per test, so
 * that tables of fixed repetitions keep their columns. */
static bool any_stopped(const sm_table *t)
{
    for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
        if (t->cells[i].stopped != SM_REPS_NONE)
            return true;
    return false;
}

/* A number never needs quoting; a non-finite one (which a summary never holds) is left empty
 * rather than written as "nan", which no spreadsheet reads as a number. */
static void csv_number(sbuf *b, double v)
{
    sbuf_putn(b, ",", 1);
    if (isfinite(v))
        sbuf_printf(b, "%.6g", v);
}

/* A value cell ends with its disturbed count, which a cell without data can have too, and
 * when the table has cells that say so, why their repetitions stopped. */
static void csv_cell(sbuf *b, const sm_table_cell *c, bool ratio, bool stopped)
{
    if (!c->have) {
        sbuf_puts(b, ",,,,");
    } else {
        csv_number(b, c->s.median);
        csv_number(b, c->s.ci95_low);
        csv_number(b, c->s.ci95_high);
        sbuf_printf(b, ",%zu", c->s.n);
    }
    if (!ratio)
        sbuf_printf(b, ",%" PRIu32, c->disturbed);
    if (stopped) {
        const char *why = sm_reps_stop_name(c->stopped);
        sbuf_printf(b, ",%s", why ? why : "");
    }
}

char *sm_table_csv(const sm_table *t)
{
    sbuf b = {0};
    const bool stopped = any_stopped(t);
    sbuf_puts(&b, t->pairs ? "pair" : "host");
    for (size_t c = 0; c < t->n_cols; c++)
        csv_header_group(&b, &t->cols[c], false, stopped);
    for (size_t c = 0; c < t->n_ratio_cols; c++)
        csv_header_group(&b, &t->ratio_cols[c], true, false);
    /* A table that was judged (sm_verdict_table) ends each row with its verdict and why. */
    const bool judged = t->row_j != NULL;
    sbuf_puts(&b, judged ? ",flags,verdict,why\r\n" : ",flags\r\n");
    for (size_t r = 0; r < t->n_rows; r++) {
        csv_field(&b, t->rows[r], fixed_len(t->rows[r], sizeof t->rows[r]));
        for (size_t c = 0; c < t->n_cols; c++)
            csv_cell(&b, cell_of(t, r, c), false, stopped);
        for (size_t c = 0; c < t->n_ratio_cols; c++)
            csv_cell(&b, ratio_of(t, r, c), true, false);
        sbuf_putn(&b, ",", 1);
        csv_field(&b, t->flags[r], fixed_len(t->flags[r], sizeof t->flags[r]));
        /* The row's verdict, empty in a table that was never judged. */
        const sm_judgement *j = judged ? &t->row_j[r] : NULL;
        if (j) {
            sbuf_printf(&b, ",%s,",
                        j->verdict != SM_VERDICT_NONE ? sm_verdict_name(j->verdict) : "");
            if (j->why)
                csv_field(&b, j->why, strlen(j->why));
        }
        sbuf_puts(&b, "\r\n");
    }
    return sbuf_finish(&b);
}

/* ---- Markdown ---- */

/* Text fit for one table cell: a pipe would end the cell and a line break the row. */
static void md_text(sbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '|')
            sbuf_putn(b, "\\|", 2);
        else if (s[i] == '\r' || s[i] == '\n')
            sbuf_putn(b, " ", 1);
        else
            sbuf_putn(b, &s[i], 1);
    }
}

/* Four significant digits in fixed notation, the CI with the median's decimals so that the
 * three numbers of a cell line up; exponents only for magnitudes fixed notation cannot show. */
static void md_values(sbuf *b, const sm_summary *s)
{
    double m = fabs(s->median);
    if (m != 0.0 && (m < 1e-3 || m >= 1e15)) {
        sbuf_printf(b, "%.4g [%.4g, %.4g]", s->median, s->ci95_low, s->ci95_high);
        return;
    }
    int mag = m == 0.0 ? 0 : (int)floor(log10(m));
    int decimals = mag >= 3 ? 0 : 3 - mag;
    sbuf_printf(b, "%.*f [%.*f, %.*f]", decimals, s->median, decimals, s->ci95_low, decimals,
                s->ci95_high);
}

static void md_cell(sbuf *b, const sm_table_cell *c, bool ratio)
{
    /* A ratio's n (paired repetitions) is left to CSV and JSON: it keeps the ratio columns
     * narrow, and the value cells beside them show how many samples there were. */
    if (c->have && ratio) {
        sbuf_printf(b, "%.2fx [%.2f, %.2f]%s%s", c->s.median, c->s.ci95_low, c->s.ci95_high,
                    sm_table_ci_short(c) ? "~" : "", c->coarse ? " (coarse)" : "");
    } else if (c->have) {
        md_values(b, &c->s);
        sbuf_printf(b, "%s n=%zu", sm_table_ci_short(c) ? "~" : "", c->s.n);
        /* Adaptive repetitions ran out before the CI was tight: its width is all there is. */
        if (c->stopped == SM_REPS_MAX)
            sbuf_puts(b, " (max)");
    }
    /* Jobs stopped by their time limit are evidence, not gaps: their bound shows where the
     * cell has no value of its own ("> 60", in the column's unit). */
    bool bound = c->limited > 0 && !c->have && isfinite(c->limit_bound);
    if (bound)
        sbuf_printf(b, "> %g", c->limit_bound);
    /* Disturbed samples are counted beside the value, or stand alone where they were all;
     * measured again as often as remeasure allows, they say so as "(max)" does. */
    if (c->disturbed > 0)
        sbuf_printf(b, "%s%" PRIu32 " disturbed%s", c->have || bound ? ", " : "", c->disturbed,
                    c->stopped == SM_REPS_DISTURBED ? " (remeasure ran out)" : "");
    bool any = c->have || bound || c->disturbed > 0;
    if (c->failed > 0 && c->limited == c->failed)
        sbuf_printf(b, "%s(%" PRIu32 " at time limit)", any ? " " : "", c->failed);
    else if (c->limited > 0)
        sbuf_printf(b, "%s(%" PRIu32 " failed, %" PRIu32 " at time limit)", any ? " " : "",
                    c->failed, c->limited);
    else if (c->failed > 0)
        sbuf_printf(b, "%s(%" PRIu32 " failed)", any ? " " : "", c->failed);
}

/* A ratio's unit "x" reads "ratio" where people read it. */
static void md_unit(sbuf *b, const sm_table_col *c)
{
    size_t unit_len = fixed_len(c->unit, sizeof c->unit);
    if (unit_len == 1 && c->unit[0] == 'x') {
        sbuf_puts(b, " (ratio)");
    } else if (unit_len > 0) {
        sbuf_puts(b, " (");
        md_text(b, c->unit, unit_len);
        sbuf_puts(b, ")");
    }
}

/* The brief header when the column has one (the legend under the table names it in full). */
static void md_header(sbuf *b, const sm_table_col *c)
{
    size_t brief_len = fixed_len(c->brief, sizeof c->brief);
    if (brief_len > 0)
        md_text(b, c->brief, brief_len);
    else
        md_text(b, c->label, fixed_len(c->label, sizeof c->label));
    md_unit(b, c);
}

/* "- brief: full label, metric (unit)" for each column with a brief header. */
static void md_legend_col(sbuf *b, const sm_table_col *c, bool *any)
{
    size_t brief_len = fixed_len(c->brief, sizeof c->brief);
    if (brief_len == 0)
        return;
    sbuf_puts(b, *any ? "- " : "\nColumns:\n\n- ");
    *any = true;
    md_text(b, c->brief, brief_len);
    sbuf_puts(b, ": ");
    md_text(b, c->label, fixed_len(c->label, sizeof c->label));
    sbuf_puts(b, ", ");
    md_text(b, c->metric, fixed_len(c->metric, sizeof c->metric));
    md_unit(b, c);
    sbuf_puts(b, "\n");
}

/* Under the table: the full label of each brief header, and what "~" means when a cell has
 * it. */
static void md_legend(const sm_table *t, sbuf *out)
{
    bool any = false;
    for (size_t c = 0; c < t->n_cols; c++)
        md_legend_col(out, &t->cols[c], &any);
    for (size_t c = 0; c < t->n_ratio_cols; c++)
        md_legend_col(out, &t->ratio_cols[c], &any);
    bool tilde = false;
    for (size_t i = 0; i < t->n_rows * t->n_cols && !tilde; i++)
        tilde = sm_table_ci_short(&t->cells[i]);
    for (size_t i = 0; i < t->n_rows * t->n_ratio_cols && !tilde; i++)
        tilde = sm_table_ci_short(&t->ratio_cells[i]);
    if (tilde)
        sbuf_puts(out, "\n" SM_TABLE_TILDE_RULE ".\n");
}

/* Under the table, first: the table's verdict in words and each cell not judged with why (at
 * most MD_NOTES; the JSON has them all). */
#define MD_NOTES 20
static void md_verdict(const sm_table *t, sbuf *out)
{
    if (t->row_j == NULL || t->whole.verdict == SM_VERDICT_NONE)
        return;
    char summary[256];
    sm_table_verdict_summary(t, summary, sizeof summary);
    sbuf_printf(out, "\n**Verdict: %s.** %s.\n", sm_verdict_name(t->whole.verdict), summary);
    size_t shown = 0, more = 0;
    for (size_t i = 0; i < t->n_rows * t->n_cols; i++) {
        const sm_table_cell *c = &t->cells[i];
        if (c->j.verdict != SM_VERDICT_INCONCLUSIVE && c->j.verdict != SM_VERDICT_FAILED)
            continue;
        if (shown == MD_NOTES) {
            more++;
            continue;
        }
        shown++;
        const sm_table_col *col = &t->cols[i % t->n_cols];
        sbuf_puts(out, shown == 1 ? "\n- " : "- ");
        md_text(out, t->rows[i / t->n_cols], fixed_len(t->rows[i / t->n_cols], sizeof t->rows[0]));
        sbuf_puts(out, ", ");
        const char *name = col->brief[0] ? col->brief : col->label;
        md_text(out, name, strnlen(name, sizeof col->label));
        sbuf_printf(out, ": %s: ", sm_verdict_name(c->j.verdict));
        if (c->j.why)
            md_text(out, c->j.why, strlen(c->j.why));
        sbuf_puts(out, "\n");
    }
    if (more > 0)
        sbuf_printf(out, "- ... and %zu more cells not judged\n", more);
}

/* Display width: UTF-8 code points, so that a name with accents still lines up. */
static size_t text_width(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

/* Every cell text is built first (one buffer, offsets per cell) because each column's width is
 * only known once all of its cells are. */
/* The header line's fields into text: the rows' kind, the columns, the ratios, "flags". Field
 * k starts at start[k]; returns the next k. */
static size_t md_header_fields(const sm_table *t, sbuf *text, size_t *start, size_t k)
{
    start[k++] = text->len;
    sbuf_puts(text, t->pairs ? "pair" : "host");
    for (size_t c = 0; c < t->n_cols; c++) {
        start[k++] = text->len;
        md_header(text, &t->cols[c]);
    }
    for (size_t c = 0; c < t->n_ratio_cols; c++) {
        start[k++] = text->len;
        md_header(text, &t->ratio_cols[c]);
    }
    if (t->row_j) {
        start[k++] = text->len;
        sbuf_puts(text, "verdict");
    }
    start[k++] = text->len;
    sbuf_puts(text, "flags");
    return k;
}

/* Row r's fields into text, as md_header_fields; the flags in bold. */
static size_t md_row_fields(const sm_table *t, size_t r, sbuf *text, size_t *start, size_t k)
{
    start[k++] = text->len;
    md_text(text, t->rows[r], fixed_len(t->rows[r], sizeof t->rows[r]));
    for (size_t c = 0; c < t->n_cols; c++) {
        start[k++] = text->len;
        md_cell(text, cell_of(t, r, c), false);
    }
    for (size_t c = 0; c < t->n_ratio_cols; c++) {
        start[k++] = text->len;
        md_cell(text, ratio_of(t, r, c), true);
    }
    if (t->row_j) {
        start[k++] = text->len;
        if (t->row_j[r].verdict != SM_VERDICT_NONE)
            sbuf_puts(text, sm_verdict_name(t->row_j[r].verdict));
    }
    start[k++] = text->len;
    size_t flag_len = fixed_len(t->flags[r], sizeof t->flags[r]);
    if (flag_len > 0) {
        sbuf_puts(text, "**");
        md_text(text, t->flags[r], flag_len);
        sbuf_puts(text, "**");
    }
    return k;
}

/* The width of each of the n_fields columns: its widest field among the k, at least 3. */
static void md_widths(const sbuf *text, const size_t *start, size_t k, size_t n_fields,
                      size_t *width)
{
    /* A separator needs three dashes to be one. */
    for (size_t f = 0; f < n_fields; f++)
        width[f] = 3;
    for (size_t i = 0; i < k; i++) {
        size_t w = text_width(text->p + start[i], start[i + 1] - start[i]);
        if (w > width[i % n_fields])
            width[i % n_fields] = w;
    }
}

/* The title, then the n_lines lines of n_fields padded fields, the separator after the first. */
static void md_render(const sm_table *t, const sbuf *text, const size_t *start, const size_t *width,
                      size_t n_lines, size_t n_fields, sbuf *out)
{
    sbuf_printf(out, "## run %" PRIu64 ": ", t->run_id);
    md_text(out, t->run_name, fixed_len(t->run_name, sizeof t->run_name));
    sbuf_puts(out, "\n\n");
    for (size_t line = 0; line < n_lines; line++) {
        for (size_t f = 0; f < n_fields; f++) {
            size_t i = line * n_fields + f;
            size_t n = start[i + 1] - start[i];
            sbuf_puts(out, "| ");
            sbuf_putn(out, text->p + start[i], n);
            sbuf_putc_n(out, ' ', width[f] - text_width(text->p + start[i], n) + 1);
        }
        sbuf_puts(out, "|\n");
        if (line == 0) {
            for (size_t f = 0; f < n_fields; f++) {
                sbuf_puts(out, "| ");
                sbuf_putc_n(out, '-', width[f]);
                sbuf_putn(out, " ", 1);
            }
            sbuf_puts(out, "|\n");
        }
    }
}

char *sm_table_md(const sm_table *t)
{
    /* row label, columns, ratios, verdict (once judged), flags */
    size_t n_fields = 2 + (t->row_j != NULL) + t->n_cols + t->n_ratio_cols;
    size_t n_lines = t->n_rows + 1;
    sbuf text = {0}, out = {0};
    size_t *start = NULL, *width = NULL;
    char *result = NULL;
    if (n_lines > (SIZE_MAX / sizeof *start - 1) / n_fields)
        return NULL;
    start = malloc((n_lines * n_fields + 1) * sizeof *start);
    width = calloc(n_fields, sizeof *width);
    if (start == NULL || width == NULL)
        goto out;

    size_t k = md_header_fields(t, &text, start, 0);
    for (size_t r = 0; r < t->n_rows; r++)
        k = md_row_fields(t, r, &text, start, k);
    start[k] = text.len;
    if (text.oom)
        goto out;
    md_widths(&text, start, k, n_fields, width);
    md_render(t, &text, start, width, n_lines, n_fields, &out);
    md_verdict(t, &out);
    md_legend(t, &out);
    result = sbuf_finish(&out);
    out.p = NULL;
out:
    free(out.p);
    free(text.p);
    free(start);
    free(width);
    return result;
}

/* ---- brief headers and "~" ---- */

void sm_table_unique_briefs(sm_table *t)
{
    size_t n = t->n_cols + t->n_ratio_cols;
    for (size_t i = 0; i < n; i++) {
        sm_table_col *c = i < t->n_cols ? &t->cols[i] : &t->ratio_cols[i - t->n_cols];
        if (c->brief[0] == '\0')
            continue;
        /* Columns are few (a run's tests): quadratic is fine. */
        unsigned same = 1;
        for (size_t j = 0; j < i; j++) {
            const sm_table_col *d = j < t->n_cols ? &t->cols[j] : &t->ratio_cols[j - t->n_cols];
            size_t len = strnlen(c->brief, sizeof c->brief);
            same += strncmp(d->brief, c->brief, len) == 0 &&
                    (d->brief[len] == '\0' || strncmp(d->brief + len, " #", 2) == 0);
        }
        if (same > 1) {
            char mark[16];
            int m = snprintf(mark, sizeof mark, " #%u", same);
            size_t len = strnlen(c->brief, sizeof c->brief);
            if (len + (size_t)m >= sizeof c->brief)
                len = sizeof c->brief - (size_t)m - 1;
            memcpy(c->brief + len, mark, (size_t)m + 1);
        }
    }
}

bool sm_table_ci_short(const sm_table_cell *c)
{
    return c->have && c->s.ci_coverage < 0.95;
}

/* ---- why a cell is noisy ---- */

void sm_table_noisy_reason(const sm_table_cell *c, bool with_disturbed, char *buf, size_t cap)
{
    if (cap == 0)
        return;
    buf[0] = '\0';
    size_t n = c->have ? c->s.n : 0;
    if (c->have && !sm_analysis_noisy(&c->s))
        return;
    /* Too few clean samples because disturbed ones were left out: that is the reason to give,
     * since including them (?disturbed=include) is the user's way out. */
    if (n < SM_ANALYSIS_NOISY_MIN_N && c->disturbed > 0 && !with_disturbed) {
        snprintf(buf, cap, "%" PRIu32 " of %zu samples disturbed%s", c->disturbed, n + c->disturbed,
                 c->stopped == SM_REPS_DISTURBED ? " (remeasure ran out)" : "");
        return;
    }
    if (n < SM_ANALYSIS_NOISY_MIN_N) {
        snprintf(buf, cap, "n %zu < %d", n, SM_ANALYSIS_NOISY_MIN_N);
        return;
    }
    if (isfinite(c->s.cv))
        snprintf(buf, cap, "CV %.0f%% > %.0f%%", 100.0 * c->s.cv, 100.0 * SM_ANALYSIS_NOISY_CV);
    else
        snprintf(buf, cap, "CV unknown");
}
