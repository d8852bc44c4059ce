/* Planning: a run spec over the fleet becomes cells and jobs (DESIGN section 8). */
#include "coordinator/model/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An ordered pair as indexes into the selected hosts. */
typedef struct pair {
    uint32_t client;
    uint32_t server;
} pair;

typedef struct expand {
    const sm_spec *spec;
    const sm_plan_host **sel; /* selected hosts, sorted by name, no duplicates */
    size_t n_sel;
    pair *pairs;
    size_t n_pairs;
    sm_error *err;
} expand;

__attribute__((format(printf, 2, 3))) static void set_field(expand *x, const char *fmt, ...)
{
    if (!x->err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err->field, sizeof x->err->field, fmt, ap);
    va_end(ap);
}

static int name_eq(const char *a, const char *b)
{
    return strncmp(a, b, SM_NAME_LEN) == 0;
}

static int cmp_host(const void *a, const void *b)
{
    const sm_plan_host *const *ha = a;
    const sm_plan_host *const *hb = b;
    return strncmp((*ha)->name, (*hb)->name, SM_NAME_LEN);
}

static bool has_label(const sm_plan_host *h, const char *key, const char *value)
{
    for (size_t i = 0; i < h->n_labels && i < SM_LABELS_MAX; i++)
        if (strcmp(h->labels[i].key, key) == 0 && strcmp(h->labels[i].value, value) == 0)
            return true;
    return false;
}

/* Index of name among the selected hosts, or -1. */
static long sel_index(const expand *x, const char *name)
{
    size_t lo = 0, hi = x->n_sel;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(x->sel[mid]->name, name, SM_NAME_LEN);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static int select_hosts(expand *x, const sm_plan_host *fleet, size_t n_fleet)
{
    const sm_spec *s = x->spec;
    size_t cap = n_fleet + (s->hosts == SM_HOSTS_LIST ? s->n_host_names : 0) + 1;
    x->sel = malloc(cap * sizeof *x->sel);
    if (!x->sel)
        return sm_error_set(x->err, SM_ENOMEM, "plan: out of memory for %zu hosts", n_fleet);
    switch (s->hosts) {
    case SM_HOSTS_ALL:
        for (size_t i = 0; i < n_fleet; i++)
            if (fleet[i].online)
                x->sel[x->n_sel++] = &fleet[i];
        break;
    case SM_HOSTS_LIST:
        for (size_t i = 0; i < s->n_host_names; i++) {
            const char *name = s->host_names[i];
            const sm_plan_host *h = NULL;
            for (size_t j = 0; j < n_fleet && !h; j++)
                if (name_eq(fleet[j].name, name))
                    h = &fleet[j];
            if (!h || !h->online) {
                set_field(x, "hosts");
                return sm_error_set(x->err, SM_EINVAL, "hosts: '%.*s' %s", SM_NAME_MAX, name,
                                    h ? "is lost" : "is not a registered agent");
            }
            x->sel[x->n_sel++] = h;
        }
        break;
    case SM_HOSTS_LABEL:
        for (size_t i = 0; i < n_fleet; i++)
            if (fleet[i].online && has_label(&fleet[i], s->label_key, s->label_value))
                x->sel[x->n_sel++] = &fleet[i];
        break;
    default:
        set_field(x, "hosts");
        return sm_error_set(x->err, SM_EINVAL, "hosts: unknown selection %d", (int)s->hosts);
    }
    if (x->n_sel == 0) {
        set_field(x, "hosts");
        if (s->hosts == SM_HOSTS_LABEL)
            return sm_error_set(x->err, SM_EINVAL, "hosts: no online agent has the label %s=%s",
                                s->label_key, s->label_value);
        return sm_error_set(x->err, SM_EINVAL, "hosts: no online agent is selected");
    }
    /* A name listed twice (or registered twice) is one host: keep the first. */
    qsort(x->sel, x->n_sel, sizeof *x->sel, cmp_host);
    size_t k = 1;
    for (size_t i = 1; i < x->n_sel; i++)
        if (!name_eq(x->sel[i]->name, x->sel[k - 1]->name))
            x->sel[k++] = x->sel[i];
    x->n_sel = k;
    return 0;
}

/* Checks the pairs rule against the selection and counts its pairs, before anything of that
 * size is allocated: a mesh of a large fleet must fail the job bound, not malloc. */
static int count_pairs(expand *x, uint64_t *count)
{
    const sm_spec *s = x->spec;
    uint64_t n = x->n_sel;
    switch (s->pairs) {
    case SM_PAIRS_MESH:
        *count = n * (n - 1);
        break;
    case SM_PAIRS_RING:
        *count = n >= 2 ? n : 0;
        break;
    case SM_PAIRS_STAR:
        if (sel_index(x, s->star) < 0) {
            set_field(x, "pairs");
            return sm_error_set(x->err, SM_EINVAL, "pairs: star '%.*s' is not a selected host",
                                SM_NAME_MAX, s->star);
        }
        *count = 2 * (n - 1);
        break;
    case SM_PAIRS_LIST:
        for (size_t i = 0; i < s->n_pairs; i++) {
            for (int end = 0; end < 2; end++) {
                if (sel_index(x, s->pair_list[i][end]) < 0) {
                    set_field(x, "pairs[%zu]", i);
                    return sm_error_set(x->err, SM_EINVAL,
                                        "pairs[%zu]: '%.*s' is not a selected host", i, SM_NAME_MAX,
                                        s->pair_list[i][end]);
                }
            }
            if (name_eq(s->pair_list[i][0], s->pair_list[i][1])) {
                set_field(x, "pairs[%zu]", i);
                return sm_error_set(x->err, SM_EINVAL,
                                    "pairs[%zu]: '%.*s' cannot be paired with itself", i,
                                    SM_NAME_MAX, s->pair_list[i][0]);
            }
            /* A repeated pair would make two cells that measure the same thing. */
            for (size_t j = 0; j < i; j++) {
                if (name_eq(s->pair_list[i][0], s->pair_list[j][0]) &&
                    name_eq(s->pair_list[i][1], s->pair_list[j][1])) {
                    set_field(x, "pairs[%zu]", i);
                    return sm_error_set(x->err, SM_EINVAL, "pairs[%zu]: repeats pairs[%zu]", i, j);
                }
            }
        }
        *count = s->n_pairs;
        break;
    default:
        set_field(x, "pairs");
        return sm_error_set(x->err, SM_EINVAL, "pairs: unknown rule %d", (int)s->pairs);
    }
    if (*count == 0) {
        set_field(x, "pairs");
        return sm_error_set(x->err, SM_EINVAL,
                            "pairs: a pair test needs two selected hosts in a pair, %zu selected",
                            x->n_sel);
    }
    return 0;
}

static void add_pair(expand *x, size_t client, size_t server)
{
    x->pairs[x->n_pairs].client = (uint32_t)client;
    x->pairs[x->n_pairs].server = (uint32_t)server;
    x->n_pairs++;
}

static int build_pairs(expand *x, uint64_t count)
{
    const sm_spec *s = x->spec;
    size_t n = x->n_sel;
    x->pairs = malloc((size_t)count * sizeof *x->pairs);
    if (!x->pairs)
        return sm_error_set(x->err, SM_ENOMEM, "plan: out of memory for %zu pairs", (size_t)count);
    switch (s->pairs) {
    case SM_PAIRS_MESH:
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                if (i != j)
                    add_pair(x, i, j);
        break;
    case SM_PAIRS_RING:
        /* With two hosts this gives both directions, h1 -> h2 and h2 -> h1. */
        for (size_t i = 0; i < n; i++)
            add_pair(x, i, (i + 1) % n);
        break;
    case SM_PAIRS_STAR: {
        size_t c = (size_t)sel_index(x, s->star);
        for (size_t i = 0; i < n; i++) {
            if (i == c)
                continue;
            add_pair(x, c, i);
            add_pair(x, i, c);
        }
        break;
    }
    case SM_PAIRS_LIST:
        for (size_t i = 0; i < s->n_pairs; i++)
            add_pair(x, (size_t)sel_index(x, s->pair_list[i][0]),
                     (size_t)sel_index(x, s->pair_list[i][1]));
        break;
    }
    return 0;
}

/* The round of {i, j} (i != j) among n hosts by the circle method. With m = n rounded up to
 * even (the extra host for odd n is the dummy: whoever meets it sits out), host m-1 stays fixed
 * and the others rotate: round r pairs m-1 with r and (r+k, r-k) mod (m-1) for k = 1..m/2-1.
 * So two rotating hosts meet in the round r with i + j = 2r (mod m-1), and m/2 is the inverse
 * of 2 modulo the odd m-1. This closed form keeps the planner from holding an n x n table. */
static uint32_t circle_round(size_t n, size_t i, size_t j)
{
    uint64_t m = n + (n & 1);
    if (i == m - 1)
        return (uint32_t)j;
    if (j == m - 1)
        return (uint32_t)i;
    return (uint32_t)(((uint64_t)(i + j) * (m / 2)) % (m - 1));
}

uint32_t sm_plan_rounds(size_t n, uint32_t *round)
{
    if (n < 2)
        return 0;
    for (size_t i = 0; i < n; i++) {
        round[i * n + i] = 0;
        for (size_t j = 0; j < n; j++)
            if (i != j)
                round[i * n + j] = circle_round(n, i, j);
    }
    return (uint32_t)(n % 2 == 0 ? n - 1 : n);
}

/* The round a pair job carries. Both directions of {a, b} belong to the same circle round r;
 * the scheduler runs them one after the other by giving (a, b) with a < b the round 2r and
 * (b, a) the round 2r + 1. Every round value thus holds disjoint ordered pairs: no host is in
 * two pair jobs of one round value. */
static uint32_t pair_round(const expand *x, const pair *p)
{
    uint32_t r = circle_round(x->n_sel, p->client, p->server);
    return p->client < p->server ? 2 * r : 2 * r + 1;
}

static int check_spec(expand *x)
{
    const sm_spec *s = x->spec;
    if (s->repetitions < 1 || s->repetitions > SM_SPEC_REPS_MAX) {
        set_field(x, "repetitions");
        return sm_error_set(x->err, SM_EINVAL, "repetitions: %u is not within 1..%d",
                            s->repetitions, SM_SPEC_REPS_MAX);
    }
    if (s->warmup > SM_SPEC_WARMUP_MAX) {
        set_field(x, "warmup");
        return sm_error_set(x->err, SM_EINVAL, "warmup: %u is above the maximum %d", s->warmup,
                            SM_SPEC_WARMUP_MAX);
    }
    if (s->n_tests == 0 || s->n_tests > SM_SPEC_TESTS_MAX || !s->tests) {
        set_field(x, "tests");
        return sm_error_set(x->err, SM_EINVAL, "tests: %zu tests; from 1 to %d", s->n_tests,
                            SM_SPEC_TESTS_MAX);
    }
    for (size_t t = 0; t < s->n_tests; t++) {
        const sm_spec_test *st = &s->tests[t];
        if (st->n_variants == 0 || st->n_variants > SM_SPEC_VARIANTS_MAX) {
            set_field(x, "tests[%zu]", t);
            return sm_error_set(x->err, SM_EINVAL, "tests[%zu]: %zu variants; from 1 to %d", t,
                                st->n_variants, SM_SPEC_VARIANTS_MAX);
        }
        for (size_t v = 0; v < st->n_variants; v++) {
            sm_scope sc = st->variants[v].scope;
            if (sc != SM_SCOPE_LOCAL && sc != SM_SCOPE_PAIR) {
                set_field(x, "tests[%zu].scope", t);
                return sm_error_set(x->err, SM_EINVAL, "tests[%zu].scope: unknown scope %d", t,
                                    (int)sc);
            }
        }
    }
    return 0;
}

static size_t count_scope(const sm_spec_test *st, sm_scope sc)
{
    size_t k = 0;
    for (size_t v = 0; v < st->n_variants; v++)
        if (st->variants[v].scope == sc)
            k++;
    return k;
}

static void fill_cell(sm_cell *c, size_t test, size_t variant, const sm_params *params,
                      const char *host, const char *peer)
{
    memset(c, 0, sizeof *c);
    c->test = (uint32_t)test;
    c->variant = (uint32_t)variant;
    snprintf(c->host, sizeof c->host, "%s", host);
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    c->params = *params;
}

/* Whether test st runs on host: a test without hosts of its own runs on every selected one. */
static bool test_on(const sm_spec_test *st, const char *host)
{
    for (size_t i = 0; i < st->n_hosts; i++)
        if (strcmp(st->hosts[i], host) == 0)
            return true;
    return st->n_hosts == 0;
}

/* How many of the selected hosts test st runs on. */
static size_t hosts_of(const expand *x, const sm_spec_test *st)
{
    size_t n = 0;
    for (size_t h = 0; h < x->n_sel; h++)
        n += test_on(st, x->sel[h]->name);
    return n;
}

/* Cells in the order test, host (or pair), variant. A test whose scope is a matrix axis gives
 * its local cells first, then its pair cells. cell_round gets each cell's job round. */
static void build_cells(const expand *x, sm_cell *cells, uint32_t *cell_round)
{
    const sm_spec *s = x->spec;
    size_t k = 0;
    for (size_t t = 0; t < s->n_tests; t++) {
        const sm_spec_test *st = &s->tests[t];
        if (count_scope(st, SM_SCOPE_LOCAL) > 0) {
            for (size_t h = 0; h < x->n_sel; h++) {
                for (size_t v = 0; test_on(st, x->sel[h]->name) && v < st->n_variants; v++) {
                    if (st->variants[v].scope != SM_SCOPE_LOCAL)
                        continue;
                    fill_cell(&cells[k], t, v, &st->variants[v], x->sel[h]->name, "");
                    cell_round[k++] = 0;
                }
            }
        }
        if (count_scope(st, SM_SCOPE_PAIR) > 0) {
            for (size_t p = 0; p < x->n_pairs; p++) {
                const pair *pr = &x->pairs[p];
                for (size_t v = 0; v < st->n_variants; v++) {
                    if (st->variants[v].scope != SM_SCOPE_PAIR)
                        continue;
                    fill_cell(&cells[k], t, v, &st->variants[v], x->sel[pr->client]->name,
                              x->sel[pr->server]->name);
                    cell_round[k++] = pair_round(x, pr);
                }
            }
        }
    }
}

/* How many cells the spec makes on the selected hosts; *n_pairs is 0 without pair tests. */
static int count_cells(expand *x, uint64_t *n_pairs, uint64_t *n_cells)
{
    const sm_spec *spec = x->spec;
    bool any_pair = false;
    *n_pairs = *n_cells = 0;
    for (size_t t = 0; t < spec->n_tests; t++)
        any_pair = any_pair || count_scope(&spec->tests[t], SM_SCOPE_PAIR) > 0;
    if (any_pair) {
        int rc = count_pairs(x, n_pairs);
        if (rc)
            return rc;
    }
    for (size_t t = 0; t < spec->n_tests; t++)
        *n_cells +=
            count_scope(&spec->tests[t], SM_SCOPE_LOCAL) * (uint64_t)hosts_of(x, &spec->tests[t]) +
            count_scope(&spec->tests[t], SM_SCOPE_PAIR) * *n_pairs;
    return 0;
}

/* The measured repetitions a cell may reach before remeasuring: its fixed count, or max. */
static uint32_t most_reps(const sm_spec *spec)
{
    return spec->adaptive ? spec->reps.max : spec->repetitions;
}

uint32_t sm_plan_remeasure(const sm_spec *spec, size_t n_cells)
{
    if (spec->remeasure_given || n_cells == 0)
        return spec->remeasure;
    /* A default remeasure takes what the job bound leaves, so that it never refuses a spec
     * that would run without it. */
    const uint64_t per_cell = SM_PLAN_JOBS_MAX / n_cells;
    const uint64_t used = (uint64_t)spec->warmup + most_reps(spec);
    const uint64_t room = per_cell > used ? per_cell - used : 0;
    return room < spec->remeasure ? (uint32_t)room : spec->remeasure;
}

/* The run's jobs, counted before anything is allocated for them. */
static int check_jobs(expand *x, uint64_t n_cells, uint64_t n_jobs)
{
    const sm_spec *spec = x->spec;
    /* An adaptive run may grow to max repetitions per cell, and any run by what remeasuring
     * adds: the bounds are checked up front, so that a run accepted never outgrows what the
     * store and the queues were sized for. */
    const uint64_t n_most = n_cells * ((uint64_t)spec->warmup + most_reps(spec));
    if (spec->adaptive && n_most > SM_PLAN_JOBS_MAX) {
        set_field(x, "repetitions.max");
        return sm_error_set(x->err, SM_EINVAL,
                            "repetitions.max: %llu cells x (%u repetitions + %u warm-up) = %llu "
                            "jobs, above the maximum %d",
                            (unsigned long long)n_cells, spec->reps.max, spec->warmup,
                            (unsigned long long)n_most, SM_PLAN_JOBS_MAX);
    }
    if (n_jobs > SM_PLAN_JOBS_MAX) {
        set_field(x, "repetitions");
        return sm_error_set(x->err, SM_EINVAL,
                            "repetitions: %llu cells x (%u repetitions + %u warm-up) = %llu jobs, "
                            "above the maximum %d",
                            (unsigned long long)n_cells, spec->repetitions, spec->warmup,
                            (unsigned long long)n_jobs, SM_PLAN_JOBS_MAX);
    }
    const uint32_t extra = sm_plan_remeasure(spec, (size_t)n_cells);
    if (n_most + n_cells * extra > SM_PLAN_JOBS_MAX) {
        set_field(x, "remeasure");
        return sm_error_set(x->err, SM_EINVAL,
                            "remeasure: %llu cells x (%u repetitions + %u remeasured + %u "
                            "warm-up) = %llu jobs, above the maximum %d",
                            (unsigned long long)n_cells, most_reps(spec), extra, spec->warmup,
                            (unsigned long long)(n_most + n_cells * extra), SM_PLAN_JOBS_MAX);
    }
    return 0;
}

/* Cells are already in the order of one repetition (test, host or pair, variant), so
 * repeating them whole interleaves the variants of a cell group: A B A B. */
static void order_jobs(const sm_spec *spec, const uint32_t *cell_round, size_t n_cells,
                       sm_plan_job *jobs)
{
    size_t k = 0;
    for (int warm = 1; warm >= 0; warm--) {
        uint32_t reps = warm ? spec->warmup : spec->repetitions;
        for (uint32_t r = 0; r < reps; r++) {
            for (size_t c = 0; c < n_cells; c++) {
                jobs[k].cell = (uint32_t)c;
                jobs[k].rep = r;
                jobs[k].warmup = warm;
                jobs[k].round = cell_round[c];
                jobs[k].order = (uint32_t)k;
                k++;
            }
        }
    }
}

int sm_plan_expand(const sm_spec *spec, const sm_plan_host *fleet, size_t n_fleet, sm_plan *out,
                   sm_error *err)
{
    memset(out, 0, sizeof *out);
    if (err)
        err->field[0] = '\0';
    expand x = {.spec = spec, .err = err};
    sm_cell *cells = NULL;
    uint32_t *cell_round = NULL;
    sm_plan_job *jobs = NULL;
    uint64_t n_pairs = 0, n_cells = 0, n_jobs = 0;
    int rc = check_spec(&x);
    if (!rc)
        rc = select_hosts(&x, fleet, n_fleet);
    if (!rc)
        rc = count_cells(&x, &n_pairs, &n_cells);
    if (rc)
        goto out;
    n_jobs = n_cells * ((uint64_t)spec->warmup + spec->repetitions);
    if ((rc = check_jobs(&x, n_cells, n_jobs)))
        goto out;
    if (n_pairs && (rc = build_pairs(&x, n_pairs)))
        goto out;
    cells = calloc((size_t)n_cells, sizeof *cells);
    cell_round = calloc((size_t)n_cells, sizeof *cell_round);
    jobs = calloc((size_t)n_jobs, sizeof *jobs);
    if (!cells || !cell_round || !jobs) {
        rc = sm_error_set(err, SM_ENOMEM, "plan: out of memory for %llu jobs",
                          (unsigned long long)n_jobs);
        goto out;
    }
    build_cells(&x, cells, cell_round);
    order_jobs(spec, cell_round, (size_t)n_cells, jobs);
    out->cells = cells;
    out->n_cells = (size_t)n_cells;
    out->jobs = jobs;
    out->n_jobs = (size_t)n_jobs;
    out->remeasure = sm_plan_remeasure(spec, (size_t)n_cells);
    cells = NULL;
    jobs = NULL;
out:
    free(cells);
    free(cell_round);
    free(jobs);
    free(x.pairs);
    free(x.sel);
    return rc;
}

int sm_plan_keep(sm_plan *p, const bool *keep)
{
    uint32_t *moved = malloc((p->n_cells ? p->n_cells : 1) * sizeof *moved);
    if (!moved)
        return SM_ENOMEM;
    size_t nc = 0, nj = 0;
    for (size_t i = 0; i < p->n_cells; i++) {
        moved[i] = (uint32_t)nc;
        if (keep[i])
            p->cells[nc++] = p->cells[i];
    }
    for (size_t k = 0; k < p->n_jobs; k++) {
        const uint32_t cell = p->jobs[k].cell;
        if (cell >= p->n_cells || !keep[cell])
            continue;
        p->jobs[nj] = p->jobs[k];
        p->jobs[nj++].cell = moved[cell];
    }
    free(moved);
    p->n_cells = nc;
    p->n_jobs = nj;
    return 0;
}

void sm_plan_fini(sm_plan *p)
{
    if (!p)
        return;
    free(p->cells);
    free(p->jobs);
    memset(p, 0, sizeof *p);
}
