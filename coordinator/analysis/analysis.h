/* Analysis of comparison tables (DESIGN section 10): which cells are too noisy to judge, which
 * hosts stand apart from the fleet (robust z with a relative floor), slow hosts and slow links
 * in a pair matrix (Tukey's median polish), and regressions against a baseline run. Pure
 * computation on sm_table; every flag carries its evidence. */
#ifndef SM_COORD_ANALYSIS_H
#define SM_COORD_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/table.h"
#include "proto/err.h"
#include "proto/stats.h"

#define SM_ANALYSIS_Z_DEFAULT     3.5  /* Iglewicz and Hoaglin's cut for the modified z */
#define SM_ANALYSIS_FLOOR_DEFAULT 0.15 /* relative difference a flag needs as well */
#define SM_ANALYSIS_NOISY_CV      0.10
#define SM_ANALYSIS_NOISY_MIN_N   3
#define SM_ANALYSIS_POLISH_ITERS  10

/* A cell is noisy when its CV is above 10% or it has fewer than 3 samples: it takes part in
 * the fleet's median, but its median alone never raises a flag (see sm_analysis_table). */
bool sm_analysis_noisy(const sm_summary *s);

/* Robust (modified) z of x[0..n): z[i] = 0.6745 (x[i] - median) / MAD, MAD the median of
 * |x - median|, both over the finite values. A non-finite x[i] gets z[i] = NaN. When MAD is 0,
 * z[i] is 0 for x[i] == median and +-INFINITY otherwise. *median and *mad are set (NaN when no
 * value is finite) unless NULL. Returns 0, or SM_ENOMEM with z, *median and *mad untouched. */
int sm_robust_z(const double *x, size_t n, double *z, double *median, double *mad);

/* Tukey's median polish of the rows x cols matrix m (row-major; NaN or any non-finite value =
 * missing, e.g. a host paired with itself): m[r][c] ~ overall + row[r] + col[c] + resid[r][c].
 * Alternates row and column sweeps (medians over the present values; a row or column with none
 * gets effect 0 and stays out of the rest), starting with rows; after each sweep the median of
 * the other side's effects moves into overall, as R's medpolish does. At most max_iter full
 * iterations, or until no effect (nor overall) moves by more than 1e-9 of |overall|. resid is
 * NaN where m is missing. Returns 0, SM_EINVAL when no value is present, or SM_ENOMEM. */
int sm_median_polish(const double *m, size_t rows, size_t cols, size_t max_iter, double *overall,
                     double *row, double *col, double *resid);

typedef enum sm_anomaly_kind {
    SM_ANOMALY_FLEET = 0,  /* a host's cell stands apart from the same column across hosts */
    SM_ANOMALY_SLOW_HOST,  /* pair matrix: a host's client or server effect stands apart */
    SM_ANOMALY_SLOW_LINK,  /* pair matrix: one client->server residual stands apart */
    SM_ANOMALY_REGRESSION, /* a cell moved since the baseline run, beyond the fleet's move */
    SM_ANOMALY_FLEET_MOVE, /* a column moved on the whole fleet since the baseline run */
} sm_anomaly_kind;
/* "fleet", "slow-host", "slow-link", "regression", "fleet-move" */
const char *sm_anomaly_kind_name(sm_anomaly_kind k);

/* Which way the value lies from the reference: slower/faster when the metric says which is
 * better (sm_metric_sense_of), else higher/lower. A ratio column takes its metric's sense. */
typedef enum sm_anomaly_dir {
    SM_DIR_SLOWER = 0,
    SM_DIR_FASTER,
    SM_DIR_HIGHER,
    SM_DIR_LOWER
} sm_anomaly_dir;
const char *sm_anomaly_dir_name(sm_anomaly_dir d); /* "slower", "faster", "higher", "lower" */

typedef struct sm_anomaly {
    sm_anomaly_kind kind;
    char host[2 * 65 + 2];         /* the host; "client->server" for a slow link */
    char role[8];                  /* slow host: "client" or "server"; else "" */
    char test[SM_TABLE_LABEL_MAX]; /* the column's label (a test variant, or a ratio) */
    char metric[32];               /* the column's metric name */
    char unit[16];                 /* the column's unit ("x" for a ratio) */
    bool ratio;                    /* the column is a ratio column */
    double value;     /* fleet, regression: the cell's median (fleet, at_limit: the bound its
                       * jobs' time limit sets, NaN when the column's unit has none); slow
                       * host: overall + effect; slow link: overall + both hosts' effects +
                       * residual (the fit); fleet move: the median of the hosts' medians */
    double reference; /* fleet: the column's median across hosts; slow host: overall (the
                       * polish's typical cell); slow link: overall + both hosts' effects (what
                       * its two hosts predict); regression: the baseline's median moved by the
                       * fleet's move; fleet move: the median of the baseline's medians */
    double z;         /* robust z; NaN for a regression, or when MAD was 0 */
    double rel;       /* what the floor was tested on: (value - reference) / |reference| for
                       * fleet and regression; slow host/link: (value - reference) / |overall|,
                       * i.e. the effect or the residual over |overall|; fleet move: the median
                       * of the hosts' moves, now / baseline - 1; fleet at_limit: NaN */
    double floor;     /* the floor the flag passed */
    char rule[64];    /* the rule that fired, e.g. "|z| > 3.5 and >= 15%", "MAD 0, >= 15%",
                       * "CIs apart and >= 15%" */
    sm_anomaly_dir dir;
    bool at_limit;     /* fleet: the cell's jobs failed on their time limit (value is a bound) */
    uint32_t moved;    /* fleet move: how many hosts (rows) the move was the median of */
    double fleet_move; /* regression: the fleet's move it was judged against (0: none) */
    size_t row;        /* the table row (for a slow host: the first row it is in; SIZE_MAX for a
                        * fleet move, which is on no row) */
    size_t col;        /* the column, in cols or, when ratio, in ratio_cols */
} sm_anomaly;

typedef struct sm_anomalies {
    sm_anomaly *v; /* owned */
    size_t n, cap;
} sm_anomalies;

void sm_anomalies_fini(sm_anomalies *a);

typedef struct sm_analysis_opts {
    double z;     /* 0: SM_ANALYSIS_Z_DEFAULT */
    double floor; /* 0: SM_ANALYSIS_FLOOR_DEFAULT */
} sm_analysis_opts;

/* Appends the anomalies of t to *out, in column order then row order.
 * Host rows (t->pairs false): for each column and each ratio column, the cells that have a
 * summary give the fleet; a cell flags when the column has at least 3 such cells, |rel| >=
 * floor and |z| > z (or MAD is 0: the floor alone decides), and it is not noisy or, noisy, its
 * whole 95% CI lies beyond the floor on the same side (rule "noisy, ... CI beyond 15%").
 * Whatever z says, a cell of at least 3 samples also flags when its 95% CI lies beyond every
 * other host's CI, by at least the floor relative to the nearest one and by a larger factor
 * than the other hosts' medians differ among themselves (rule "CI beyond every other host's by
 * >= 15%"). A cell whose jobs mostly ran into their time limit (limited >= its n) has no value
 * in the fleet; it flags slower (at_limit, rule "N of M jobs at the time limit") when at least
 * two hosts finished, more than were limited, and its limit_bound lies the floor beyond all of
 * their CIs (a NaN bound always does).
 * Pair rows ("client->server", split at the "->" before the only '>'; other labels are
 * skipped): per column, the hosts are those of the rows with a summary (fewer than 3: nothing
 * is raised); the matrix hosts x hosts of medians (noisy ones included) is median-polished; a
 * host whose client (row) or server (column) effect has |z| > z among the hosts' effects of
 * that role (hosts with a present cell in it, at least 3; or MAD 0) and |effect| / |overall|
 * >= floor is a slow host; a residual with |z| > z among the residuals of the pairs between
 * hosts that are not slow (or MAD 0) and
 * |residual| / |overall| >= floor is a slow link, unless its cell is noisy or one of its two
 * hosts is already a slow host of that column (in either role). A column's slow hosts and links
 * come in row order, client before server on a tie. Returns 0, or SM_ENOMEM with err set. */
int sm_analysis_table(const sm_table *t, const sm_analysis_opts *o, sm_anomalies *out,
                      sm_error *err);

/* Appends the regressions of run against base: cells (and ratio cells) matched by row label
 * and column label, both with a summary of at least 3 samples, whose 95% CIs do not overlap
 * (when either is noisy: lie at least the floor apart, rule "noisy, CIs apart by >= 15%") and
 * whose medians differ by >= floor relative to the baseline's, the baseline (median and CI)
 * first multiplied by the fleet's move: the median over the matched rows (at least 3, else 1)
 * of now / baseline. A column whose fleet move is at least the floor is reported once, before
 * its regressions, as a SM_ANOMALY_FLEET_MOVE of host "fleet" on no row (row SIZE_MAX).
 * Returns 0 or SM_ENOMEM. */
int sm_analysis_regression(const sm_table *run, const sm_table *base, const sm_analysis_opts *o,
                           sm_anomalies *out, sm_error *err);

/* One line for people: "h1: stream tcp lines 128 B x 8192 (s) 0.23 s vs fleet 0.133 s,
 * +73%, z 21.8, slower [|z| > 3.5 and >= 15%]": numbers %.4g, the unit glued to a ratio's
 * value ("3.594x") and spaced otherwise, z "-" when NaN. The metric is named as the table's
 * header names its column: "(ratio)" for a ratio column, else by its unit with what the unit
 * does not say (sm_metric_detail): "(MB/s)", "(s)", "(us, p50)"; the JSON keeps its name.
 * The change is a percentage within 2x, a factor that says the direction beyond it (value /
 * reference >= 2 or <= 0.5): "..., 315x slower, z -21.8 [...]" (text.c, change_text). z has
 * one decimal, more (up to 3) when the printed |z| would not pass the rule's printed cut
 * ("z -3.503" against "|z| > 3.5"), as in the flag column.
 * A slow host reads "h3 (server): ..." and the reference's word is "overall", a slow link's
 * "expected", a regression's "baseline". Returns snprintf's count. */
int sm_anomaly_text(const sm_anomaly *a, char *buf, size_t len);

/* Replaces t->flags: for each row, the short forms of its anomalies ("tcp/unix stream ...
 * 3.59x vs 2.1x (z 54.1)", "... (MAD 0)", "slow host: h3 (server) ... (z -55.2)", "slow link:
 * ...", "regression: ... 0.299 s (was 0.23 s)"; %.3g) joined by "; ", whole entries only, cut
 * with " (+N more)" when they do not fit. A slow host goes on every row where it has the role
 * found slow; any other anomaly on its own row (a->row indexes t's rows). */
void sm_analysis_flag_table(sm_table *t, const sm_anomalies *a);

/* {"version":1,"run":{"id":"7","name":"..."},"baseline":null|{"id":"5"},"z":3.5,"floor":0.15,
 *  "anomalies":[{"kind","host","role","test","metric","unit","ratio","value","reference","z"
 *  (null when NaN),"rel","floor","rule","direction"}]}. malloc'd text, or NULL (out of memory).
 * baseline_id 0: none. */
char *sm_anomalies_json(uint64_t run_id, const char *run_name, uint64_t baseline_id,
                        const sm_analysis_opts *o, const sm_anomalies *a);

#endif
