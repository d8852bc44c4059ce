/* sockmatrix, the command-line client: option parsing and the commands over the HTTP API. */
#include "coordinator/cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "coordinator/cli/http.h"
#include "coordinator/spec.h"
#include "proto/clock.h"
#include "proto/apiview.h"

/* ---- option parsing ---- */

static const char usage[] =
    "Usage: sockmatrix [--coordinator URL] [--token-file PATH] COMMAND ...\n"
    "\n"
    "Drives a sockmatrix coordinator over its HTTP API.\n"
    "\n"
    "Commands:\n"
    "  agents                   the fleet: status, cores, memory, kernel, labels, last seen\n"
    "  presets                  the run specs that ship with sockmatrix\n"
    "  run (--preset NAME | --spec FILE) [--hosts a,b|all] [--repetitions N|auto]\n"
    "      [--max-repetitions N] [--ci-rel F]\n"
    "      [--wait] [--format table|csv|md|json] [--timeout-s N]\n"
    "                           start a run and print its id; with --wait, follow it and\n"
    "                           print its comparison table (give up after --timeout-s,\n"
    "                           default 3600). --hosts and --repetitions go with --preset;\n"
    "                           a --spec file is sent as it is. --repetitions auto: 5 or\n"
    "                           more per cell, one interleaved round more until the 95%%\n"
    "                           CI of the median is within +-F of it (--ci-rel, default\n"
    "                           0.05) or N repetitions ran (--max-repetitions, default 30)\n"
    "  runs                     the latest runs and their progress\n"
    "  show RUN                 one run: state, reason, progress and per-cell counts\n"
    "  cancel RUN               cancel a run and print its new state\n"
    "  export RUN --format csv|md|json [-o FILE]\n"
    "                           the run's comparison table, to FILE (replaced atomically)\n"
    "                           or stdout\n"
    "  anomalies RUN [--baseline RUN] [--floor F] [--format table|json]\n"
    "                           the hosts that stand apart from the fleet, slow hosts and\n"
    "                           slow links of pair tests, and the cells that moved since\n"
    "                           the baseline (default: the previous run of the same name),\n"
    "                           each with its evidence; --floor is the relative difference\n"
    "                           a flag needs (default 0.15). run --wait ends with them too\n"
    "  --disturbed include|exclude  (export, anomalies, run --wait) samples measured while\n"
    "                           the host was disturbed are counted per cell and left out of\n"
    "                           the statistics (exclude, the default); include puts them back\n"
    "\n"
    "Options:\n"
    "  --coordinator URL        the coordinator (default $SOCKMATRIX_COORDINATOR, else\n"
    "                           " SM_CLI_URL_DEFAULT ")\n"
    "  --token-file PATH        the dashboard token: one line, mode 0600; needed for run and\n"
    "                           cancel, and for every command when the coordinator's HTTP\n"
    "                           listener is not on loopback\n"
    "  --help, --version\n"
    "\n"
    "Exit status: 0 success; 1 the coordinator refused or could not be reached, the run\n"
    "failed or was cancelled, or --wait gave up; 2 a bad option or argument.\n";

const char *sm_cli_usage(void)
{
    return usage;
}

typedef enum opt_id {
    O_COORD,
    O_TOKEN,
    O_HELP,
    O_VERSION,
    O_PRESET,
    O_SPEC,
    O_HOSTS,
    O_REPS,
    O_WAIT,
    O_FORMAT,
    O_TIMEOUT,
    O_OUTPUT,
    O_BASELINE,
    O_FLOOR,
    O_DISTURBED,
    O_MAX_REPS,
    O_CI_REL,
} opt_id;

#define BEFORE_CMD (1u << 31) /* allowed before the command word */
#define ON(c)      (1u << (c))
#define ANYWHERE   0xffffffffu

typedef struct opt {
    const char *name, *alias;
    opt_id id;
    bool value;
    uint32_t where;
} opt;

static const opt options[] = {
    {"--coordinator", NULL, O_COORD, true, ANYWHERE},
    {"--token-file", NULL, O_TOKEN, true, ANYWHERE},
    {"--help", "-h", O_HELP, false, ANYWHERE},
    {"--version", NULL, O_VERSION, false, ANYWHERE},
    {"--preset", NULL, O_PRESET, true, ON(SM_CLI_RUN)},
    {"--spec", NULL, O_SPEC, true, ON(SM_CLI_RUN)},
    {"--hosts", NULL, O_HOSTS, true, ON(SM_CLI_RUN)},
    {"--repetitions", NULL, O_REPS, true, ON(SM_CLI_RUN)},
    {"--max-repetitions", NULL, O_MAX_REPS, true, ON(SM_CLI_RUN)},
    {"--ci-rel", NULL, O_CI_REL, true, ON(SM_CLI_RUN)},
    {"--wait", NULL, O_WAIT, false, ON(SM_CLI_RUN)},
    {"--format", NULL, O_FORMAT, true, ON(SM_CLI_RUN) | ON(SM_CLI_EXPORT) | ON(SM_CLI_ANOMALIES)},
    {"--timeout-s", NULL, O_TIMEOUT, true, ON(SM_CLI_RUN)},
    {"--output", "-o", O_OUTPUT, true, ON(SM_CLI_EXPORT)},
    {"--baseline", NULL, O_BASELINE, true, ON(SM_CLI_ANOMALIES)},
    {"--floor", NULL, O_FLOOR, true, ON(SM_CLI_ANOMALIES) | ON(SM_CLI_RUN)},
    {"--disturbed", NULL, O_DISTURBED, true,
     ON(SM_CLI_ANOMALIES) | ON(SM_CLI_RUN) | ON(SM_CLI_EXPORT)},
};

typedef struct command {
    const char *name;
    sm_cli_cmd cmd;
    bool takes_run; /* one positional argument: RUN */
} command;

static const command commands[] = {
    {"agents", SM_CLI_AGENTS, false}, {"presets", SM_CLI_PRESETS, false},
    {"run", SM_CLI_RUN, false},       {"runs", SM_CLI_RUNS, false},
    {"show", SM_CLI_SHOW, true},      {"cancel", SM_CLI_CANCEL, true},
    {"export", SM_CLI_EXPORT, true},  {"anomalies", SM_CLI_ANOMALIES, true},
};

static const opt *find_option(const char *arg, size_t name_len)
{
    for (size_t i = 0; i < sizeof options / sizeof *options; i++) {
        const opt *o = &options[i];
        if ((strlen(o->name) == name_len && strncmp(arg, o->name, name_len) == 0) ||
            (o->alias && strlen(o->alias) == name_len && strncmp(arg, o->alias, name_len) == 0))
            return o;
    }
    return NULL;
}

static int check_url(const char *url, const char *what, sm_error *err)
{
    const char *rest = strncmp(url, "http://", 7) == 0    ? url + 7
                       : strncmp(url, "https://", 8) == 0 ? url + 8
                                                          : NULL;
    if (!rest || !*rest || *rest == '/')
        return sm_error_set(err, SM_EINVAL, "%s: '%s' is not an http:// or https:// URL", what,
                            url);
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            return sm_error_set(err, SM_EINVAL, "%s: '%s' has a space or control character", what,
                                url);
    return 0;
}

/* An unsigned decimal from lo to hi, nothing else. */
static bool parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* Agent names are [A-Za-z0-9._-], 1..64 (proto/envelope.h): checked here so that a typo is a
 * usage error, before anything is sent. */
static int check_hosts(const char *hosts, sm_error *err)
{
    if (strcmp(hosts, "all") == 0)
        return 0;
    for (const char *p = hosts;; p++) {
        size_t n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
        if (p[n] != ',' && p[n] != '\0')
            return sm_error_set(err, SM_EINVAL,
                                "--hosts: '%s': '%c' cannot be in an agent name (give names "
                                "separated by commas, or all)",
                                hosts, p[n]);
        if (n == 0)
            return sm_error_set(err, SM_EINVAL, "--hosts: '%s' has an empty name", hosts);
        if (n > SM_NAME_MAX)
            return sm_error_set(err, SM_EINVAL, "--hosts: a name is longer than %d characters",
                                SM_NAME_MAX);
        p += n;
        if (*p == '\0')
            return 0;
    }
}

static int parse_format(const char *v, sm_cli_cmd cmd, sm_cli_format *out, sm_error *err)
{
    if (cmd == SM_CLI_ANOMALIES) {
        if (strcmp(v, "table") == 0 || strcmp(v, "json") == 0) {
            *out = v[0] == 't' ? SM_CLI_FMT_TABLE : SM_CLI_FMT_JSON;
            return 0;
        }
        return sm_error_set(err, SM_EINVAL, "--format: '%s' is not table or json", v);
    }
    static const char *const names[] = {"table", "csv", "md", "json"};
    for (size_t i = cmd == SM_CLI_EXPORT ? 1 : 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = (sm_cli_format)i;
            return 0;
        }
    if (cmd == SM_CLI_EXPORT)
        return sm_error_set(err, SM_EINVAL, "--format: '%s' is not csv, md or json", v);
    return sm_error_set(err, SM_EINVAL, "--format: '%s' is not table, csv, md or json", v);
}

/* Applies one option with its value (NULL for a flag). */
static int apply(sm_cli_opts *o, const opt *op, const char *v, bool *format_given,
                 bool *timeout_given, sm_error *err)
{
    uint64_t n;
    if (op->value && !*v)
        return sm_error_set(err, SM_EINVAL, "%s: the value is empty", op->name);
    switch (op->id) {
    case O_COORD:
        o->coordinator = v;
        return check_url(v, "--coordinator", err);
    case O_TOKEN:
        o->token_file = v;
        return 0;
    case O_HELP:
    case O_VERSION:
        return 0; /* handled by the caller */
    case O_PRESET:
        o->preset = v;
        return 0;
    case O_SPEC:
        o->spec_file = v;
        return 0;
    case O_HOSTS:
        o->hosts = v;
        return check_hosts(v, err);
    case O_REPS:
        if (strcmp(v, "auto") == 0) {
            o->reps_auto = true;
            return 0;
        }
        if (!parse_uint(v, 1, SM_SPEC_REPS_MAX, &n))
            return sm_error_set(err, SM_EINVAL,
                                "--repetitions: '%s' is not a number from 1 to %d or auto", v,
                                SM_SPEC_REPS_MAX);
        o->repetitions = (uint32_t)n;
        return 0;
    case O_MAX_REPS:
        if (!parse_uint(v, 1, SM_SPEC_REPS_MAX, &n))
            return sm_error_set(err, SM_EINVAL,
                                "--max-repetitions: '%s' is not a number from 1 to %d", v,
                                SM_SPEC_REPS_MAX);
        o->reps.max = (uint32_t)n;
        return 0;
    case O_CI_REL: {
        char *end;
        double f = strtod(v, &end);
        if (*end || end == v || !(f > 0 && f < 1))
            return sm_error_set(err, SM_EINVAL,
                                "--ci-rel: '%s' is not a fraction between 0 and 1 (0.05 is "
                                "+-5%%)",
                                v);
        o->reps.ci_rel = f;
        return 0;
    }
    case O_WAIT:
        o->wait = true;
        return 0;
    case O_FORMAT:
        *format_given = true;
        return parse_format(v, o->cmd, &o->format, err);
    case O_TIMEOUT:
        if (!parse_uint(v, 1, SM_CLI_TIMEOUT_S_MAX, &n))
            return sm_error_set(err, SM_EINVAL, "--timeout-s: '%s' is not a number from 1 to %u", v,
                                SM_CLI_TIMEOUT_S_MAX);
        o->timeout_s = (uint32_t)n;
        *timeout_given = true;
        return 0;
    case O_OUTPUT:
        o->output = v;
        return 0;
    case O_BASELINE:
        if (!parse_uint(v, 1, UINT64_MAX, &n))
            return sm_error_set(err, SM_EINVAL, "--baseline: '%s' is not a run id", v);
        o->baseline = n;
        return 0;
    case O_FLOOR: {
        char *end;
        double f = strtod(v, &end);
        /* Checked here, sent as written: the coordinator reads the same decimal. */
        if (*end || !(f > 0 && f < 10) || strlen(v) > 16 || strspn(v, "0123456789.") != strlen(v))
            return sm_error_set(err, SM_EINVAL,
                                "--floor: '%s' is not a fraction above 0 (0.15 is 15%%)", v);
        o->floor = v;
        return 0;
    }
    case O_DISTURBED:
        if (strcmp(v, "include") != 0 && strcmp(v, "exclude") != 0)
            return sm_error_set(err, SM_EINVAL, "--disturbed: '%s' is not include or exclude", v);
        o->include_disturbed = strcmp(v, "include") == 0;
        return 0;
    }
    return sm_error_set(err, SM_EINVAL, "%s: not handled", op->name);
}

/* The checks that need the whole command line. */
static int check_command(const sm_cli_opts *o, const char *name, const char *run_arg,
                         bool format_given, bool timeout_given, sm_error *err)
{
    if (o->cmd == SM_CLI_RUN) {
        if (o->preset && o->spec_file)
            return sm_error_set(err, SM_EINVAL, "run: give --preset or --spec, not both");
        if (!o->preset && !o->spec_file)
            return sm_error_set(err, SM_EINVAL, "run: give --preset NAME or --spec FILE");
        if (o->spec_file && o->hosts)
            return sm_error_set(err, SM_EINVAL,
                                "--hosts goes with --preset only; with --spec, put \"hosts\" in "
                                "the spec file");
        if (o->spec_file && (o->repetitions || o->reps_auto))
            return sm_error_set(err, SM_EINVAL,
                                "--repetitions goes with --preset only; with --spec, put "
                                "\"repetitions\" in the spec file");
        if ((o->reps.max || o->reps.ci_rel > 0) && !o->reps_auto)
            return sm_error_set(err, SM_EINVAL,
                                "--max-repetitions and --ci-rel go with --repetitions auto");
        if (format_given && !o->wait)
            return sm_error_set(err, SM_EINVAL,
                                "--format goes with --wait (without it, run prints the run's id; "
                                "see also: sockmatrix export)");
        if (timeout_given && !o->wait)
            return sm_error_set(err, SM_EINVAL, "--timeout-s goes with --wait");
    }
    if (o->cmd == SM_CLI_RUN && o->floor && !o->wait)
        return sm_error_set(err, SM_EINVAL, "--floor goes with --wait");
    if (o->cmd == SM_CLI_RUN && o->include_disturbed && !o->wait)
        return sm_error_set(err, SM_EINVAL, "--disturbed goes with --wait");
    bool takes_run = o->cmd == SM_CLI_SHOW || o->cmd == SM_CLI_CANCEL || o->cmd == SM_CLI_EXPORT ||
                     o->cmd == SM_CLI_ANOMALIES;
    if (takes_run && !run_arg)
        return sm_error_set(err, SM_EINVAL,
                            "%s: which run? (sockmatrix %s RUN; sockmatrix runs "
                            "lists them)",
                            name, name);
    if (o->cmd == SM_CLI_EXPORT && !format_given)
        return sm_error_set(err, SM_EINVAL, "export: --format csv|md|json is required");
    return 0;
}

int sm_cli_parse(int argc, char **argv, const char *env_url, sm_cli_opts *o, sm_error *err)
{
    sm_cli_opts r;
    memset(&r, 0, sizeof r);
    r.coordinator = SM_CLI_URL_DEFAULT;
    r.timeout_s = SM_CLI_TIMEOUT_S_DEFAULT;
    r.cmd = SM_CLI_HELP;
    int rc;
    if (env_url && *env_url) {
        if ((rc = check_url(env_url, SM_CLI_URL_ENV, err)))
            return rc;
        r.coordinator = env_url;
    }
    const command *cmd = NULL;
    const char *run_arg = NULL;
    bool format_given = false, timeout_given = false, version = false, options_end = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_end && strcmp(arg, "--") == 0) {
            options_end = true;
            continue;
        }
        if (options_end || arg[0] != '-' || arg[1] == '\0') {
            if (!cmd) {
                for (size_t k = 0; k < sizeof commands / sizeof *commands && !cmd; k++)
                    if (strcmp(arg, commands[k].name) == 0)
                        cmd = &commands[k];
                if (!cmd)
                    return sm_error_set(err, SM_EINVAL, "unknown command '%s' (see --help)", arg);
                r.cmd = cmd->cmd;
            } else if (cmd->takes_run && !run_arg) {
                uint64_t id;
                if (!parse_uint(arg, 1, UINT64_MAX, &id))
                    return sm_error_set(err, SM_EINVAL,
                                        "%s: '%s' is not a run id (a number; sockmatrix runs "
                                        "lists them)",
                                        cmd->name, arg);
                r.run_id = id;
                run_arg = arg;
            } else {
                return sm_error_set(err, SM_EINVAL, "%s: unexpected argument '%s' (see --help)",
                                    cmd->name, arg);
            }
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t name_len = eq && arg[1] == '-' ? (size_t)(eq - arg) : strlen(arg);
        const opt *op = find_option(arg, name_len);
        if (!op)
            return sm_error_set(err, SM_EINVAL, "%s%sunknown option '%.*s' (see --help)",
                                cmd ? cmd->name : "", cmd ? ": " : "", (int)name_len, arg);
        if (!(op->where & (cmd ? ON(cmd->cmd) : BEFORE_CMD))) {
            if (!cmd)
                return sm_error_set(err, SM_EINVAL,
                                    "%.*s: put it after the command it belongs to "
                                    "(see --help)",
                                    (int)name_len, arg);
            return sm_error_set(err, SM_EINVAL, "%.*s: not an option of %s (see --help)",
                                (int)name_len, arg, cmd->name);
        }
        const char *value = NULL;
        if (op->value) {
            if (arg[name_len] == '=')
                value = arg + name_len + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return sm_error_set(err, SM_EINVAL, "%s needs a value", op->name);
        } else if (arg[name_len] == '=') {
            return sm_error_set(err, SM_EINVAL, "%s takes no value", op->name);
        }
        if (op->id == O_HELP) {
            /* --help wins over whatever else is wrong with the line. */
            memset(o, 0, sizeof *o);
            o->cmd = SM_CLI_HELP;
            o->coordinator = r.coordinator;
            return 0;
        }
        version |= op->id == O_VERSION;
        if ((rc = apply(&r, op, value, &format_given, &timeout_given, err)))
            return rc;
    }
    if (version) {
        r.cmd = SM_CLI_VERSION;
    } else if (!cmd) {
        return sm_error_set(err, SM_EINVAL,
                            "a command is needed: agents, presets, run, runs, "
                            "show, cancel, export or anomalies (see --help)");
    } else if ((rc = check_command(&r, cmd->name, run_arg, format_given, timeout_given, err))) {
        return rc;
    }
    if (r.reps_auto) {
        /* The spec's defaults, but a --max-repetitions below 5 also lowers the minimum. */
        if (!r.reps.max)
            r.reps.max = SM_REPS_AUTO_MAX;
        if (!(r.reps.ci_rel > 0))
            r.reps.ci_rel = SM_REPS_AUTO_CI_REL;
        r.reps.min = r.reps.max < SM_REPS_AUTO_MIN ? r.reps.max : SM_REPS_AUTO_MIN;
        r.repetitions = 0;
    }
    *o = r;
    return 0;
}

int sm_cli_load_token(const char *path, char *out, size_t cap, sm_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sm_error_sys(err, errno, "--token-file: cannot open %s", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return sm_error_sys(err, e, "--token-file: cannot stat %s", path);
    }
    /* The token lets its holder start and cancel runs; a file others can read has leaked it. */
    if (st.st_mode & 077) {
        close(fd);
        return sm_error_set(err, SM_EINVAL,
                            "--token-file: %s is readable by group or others (mode %03o): chmod "
                            "600 it",
                            path, (unsigned)(st.st_mode & 0777));
    }
    char buf[SM_CLI_TOKEN_MAX + 2];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int e = errno;
    close(fd);
    if (n < 0)
        return sm_error_sys(err, e, "--token-file: cannot read %s", path);
    buf[n] = '\0';
    size_t len = strcspn(buf, "\r\n");
    buf[len] = '\0';
    int rc = 0;
    if (len == 0)
        rc = sm_error_set(err, SM_EINVAL, "--token-file: %s: the first line is empty", path);
    else if (len >= SM_CLI_TOKEN_MAX || len >= cap)
        rc = sm_error_set(err, SM_EINVAL, "--token-file: %s: the token is longer than %zu bytes",
                          path, (cap < SM_CLI_TOKEN_MAX ? cap : SM_CLI_TOKEN_MAX) - 1);
    else
        memcpy(out, buf, len + 1);
    memset(buf, 0, sizeof buf);
    return rc;
}

/* ---- talking to the coordinator ---- */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sockmatrix: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* One line for a failed call: the API's error, or what else went wrong. */
static void report(sm_http *h, const sm_http_resp *r, const sm_error *err)
{
    if (!r) {
        if (err->code == SM_ESYS)
            fail("cannot reach the coordinator at %s: %s", sm_http_url(h), err->msg);
        else
            fail("%s", err->msg);
        return;
    }
    sm_apiview_error e;
    sm_error derr = {0};
    if (sm_apiview_error_decode(r->body, r->len, &e, &derr) != 0)
        fail("the coordinator at %s answered HTTP %ld without an error message", sm_http_url(h),
             r->status);
    else if (e.field[0])
        fail("%s (field: %s)", e.error, e.field);
    else
        fail("%s", e.error);
}

/* GET (body NULL) or POST path; 0 with *r holding a 2xx answer, or 1 once reported. */
static int call(sm_http *h, const char *path, const char *body, size_t len, sm_http_resp *r)
{
    sm_error err = {0};
    int rc = body ? sm_http_post(h, path, body, len, r, &err) : sm_http_get(h, path, r, &err);
    if (rc) {
        report(h, NULL, &err);
        return 1;
    }
    if (r->status < 200 || r->status > 299) {
        report(h, r, &err);
        sm_http_resp_fini(r);
        return 1;
    }
    return 0;
}

static int bad_answer(const char *what, const sm_error *err)
{
    fail("unexpected answer to %s from the coordinator: %s", what, err->msg);
    return 1;
}

/* ---- aligned text tables ---- */

#define GRID_COLS 10

typedef struct grid {
    size_t cols, rows;
    const char *align; /* 'l' or 'r' per column */
    char **cell;       /* rows x cols, row 0 the header */
} grid;

static void grid_fini(grid *g)
{
    for (size_t i = 0; i < g->rows * g->cols; i++)
        free(g->cell[i]);
    free(g->cell);
}

/* Adds a row of g->cols strings. */
static int grid_row(grid *g, const char *const *values)
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
    g->rows++; /* even on failure, so that grid_fini frees what was copied */
    return rc;
}

static void grid_print(const grid *g, FILE *f)
{
    size_t width[GRID_COLS] = {0};
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

static int print_grid(grid *g)
{
    grid_print(g, stdout);
    grid_fini(g);
    return 0;
}

static int64_t now_ms(void)
{
    return sm_wall_ms();
}

/* ---- commands ---- */

static int cmd_agents(sm_http *h)
{
    sm_http_resp r;
    if (call(h, "/api/agents", NULL, 0, &r))
        return 1;
    sm_apiview_agent *a = NULL;
    size_t n = 0;
    sm_error err = {0};
    int rc = sm_apiview_agents_decode(r.body, r.len, &a, &n, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return bad_answer("GET /api/agents", &err);
    if (n == 0) {
        fail("no agent has registered with the coordinator at %s yet", sm_http_url(h));
        return 0;
    }
    grid g = {7, 0, "lllrrlr", NULL};
    static const char *const head[] = {"NAME",    "STATUS", "KERNEL",       "CORES",
                                       "MEM GiB", "LABELS", "LAST SEEN (s)"};
    rc = grid_row(&g, head);
    int64_t now = now_ms();
    for (size_t i = 0; i < n && !rc; i++) {
        char cores[16], mem[32], seen[32];
        snprintf(cores, sizeof cores, "%" PRIu32, a[i].cores);
        snprintf(mem, sizeof mem, "%.1f", (double)a[i].mem_bytes / (1024.0 * 1024 * 1024));
        /* The two clocks may differ a little: never show a negative age. */
        int64_t age = a[i].last_seen_ms ? (now - a[i].last_seen_ms) / 1000 : -1;
        if (age < 0 && a[i].last_seen_ms)
            age = 0;
        if (age < 0)
            snprintf(seen, sizeof seen, "-");
        else
            snprintf(seen, sizeof seen, "%" PRId64, age);
        const char *row[] = {a[i].name, a[i].status, a[i].kernel[0] ? a[i].kernel : "-",
                             cores,     mem,         a[i].labels[0] ? a[i].labels : "-",
                             seen};
        rc = grid_row(&g, row);
    }
    free(a);
    if (rc) {
        grid_fini(&g);
        fail("out of memory");
        return 1;
    }
    return print_grid(&g);
}

static int cmd_presets(sm_http *h)
{
    sm_http_resp r;
    if (call(h, "/api/presets", NULL, 0, &r))
        return 1;
    sm_apiview_preset *p = NULL;
    size_t n = 0;
    sm_error err = {0};
    int rc = sm_apiview_presets_decode(r.body, r.len, &p, &n, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return bad_answer("GET /api/presets", &err);
    grid g = {2, 0, "ll", NULL};
    static const char *const head[] = {"NAME", "DESCRIPTION"};
    rc = grid_row(&g, head);
    for (size_t i = 0; i < n && !rc; i++) {
        const char *row[] = {p[i].name, p[i].description};
        rc = grid_row(&g, row);
    }
    free(p);
    if (rc) {
        grid_fini(&g);
        fail("out of memory");
        return 1;
    }
    return print_grid(&g);
}

static int cmd_runs(sm_http *h)
{
    sm_http_resp r;
    if (call(h, "/api/runs", NULL, 0, &r))
        return 1;
    sm_apiview_run *runs = NULL;
    size_t n = 0;
    sm_error err = {0};
    int rc = sm_apiview_runs_decode(r.body, r.len, &runs, &n, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return bad_answer("GET /api/runs", &err);
    if (n == 0) {
        fail("no runs yet (start one: sockmatrix run --preset NAME)");
        return 0;
    }
    grid g = {4, 0, "rllr", NULL};
    static const char *const head[] = {"ID", "NAME", "STATE", "DONE/FAILED/TOTAL"};
    rc = grid_row(&g, head);
    for (size_t i = 0; i < n && !rc; i++) {
        char id[24], prog[48];
        snprintf(id, sizeof id, "%" PRIu64, runs[i].id);
        snprintf(prog, sizeof prog, "%" PRIu32 "/%" PRIu32 "/%" PRIu32, runs[i].done,
                 runs[i].failed, runs[i].total);
        const char *row[] = {id, runs[i].name, runs[i].state, prog};
        rc = grid_row(&g, row);
    }
    free(runs);
    if (rc) {
        grid_fini(&g);
        fail("out of memory");
        return 1;
    }
    return print_grid(&g);
}

/* How the run's jobs go, when there is something to say: one at a time and why, or the
 * warning that they run side by side on hosts that share one machine. */
static void print_parallel(FILE *f, const char *prefix, const sm_apiview_run *run)
{
    if (!run->parallel)
        fprintf(f, "%sjobs: one at a time: %s\n", prefix ? prefix : "",
                run->parallel_note[0] ? run->parallel_note : "the run says so");
    else if (run->parallel_note[0])
        fprintf(f, "%swarning: %s\n", prefix ? prefix : "", run->parallel_note);
}

static int cmd_show(sm_http *h, uint64_t id)
{
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64, id);
    sm_http_resp r;
    if (call(h, path, NULL, 0, &r))
        return 1;
    sm_apiview_run run;
    sm_apiview_cell *cells = NULL;
    size_t n = 0;
    sm_error err = {0};
    int rc = sm_apiview_run_decode(r.body, r.len, &run, &cells, &n, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return bad_answer("GET /api/runs/ID", &err);
    printf("run %" PRIu64 " (%s): %s\n", run.id, run.name, run.state);
    if (run.reason[0])
        printf("reason: %s\n", run.reason);
    print_parallel(stdout, NULL, &run);
    printf("progress: %" PRIu32 "/%" PRIu32 " jobs done, %" PRIu32 " failed\n", run.done, run.total,
           run.failed);
    if (n == 0) {
        free(cells);
        return 0;
    }
    putchar('\n');
    grid g = {9, 0, "rlllrrrrr", NULL};
    static const char *const head[] = {"CELL",   "HOST",   "PEER", "TEST",  "JOBS",
                                       "QUEUED", "ACTIVE", "DONE", "FAILED"};
    rc = grid_row(&g, head);
    for (size_t i = 0; i < n && !rc; i++) {
        char num[6][16];
        const uint32_t v[6] = {cells[i].index,  cells[i].jobs, cells[i].queued,
                               cells[i].active, cells[i].done, cells[i].failed};
        for (size_t k = 0; k < 6; k++)
            snprintf(num[k], sizeof num[k], "%" PRIu32, v[k]);
        const char *row[] = {num[0],        cells[i].host, cells[i].peer[0] ? cells[i].peer : "-",
                             cells[i].test, num[1],        num[2],
                             num[3],        num[4],        num[5]};
        rc = grid_row(&g, row);
    }
    free(cells);
    if (rc) {
        grid_fini(&g);
        fail("out of memory");
        return 1;
    }
    return print_grid(&g);
}

static int cmd_cancel(sm_http *h, uint64_t id)
{
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/cancel", id);
    sm_http_resp r;
    /* The call has nothing to say, but it is sent as application/json: an empty object. */
    if (call(h, path, "{}", 2, &r))
        return 1;
    sm_apiview_run run;
    sm_error err = {0};
    int rc = sm_apiview_run_decode(r.body, r.len, &run, NULL, NULL, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return bad_answer("POST /api/runs/ID/cancel", &err);
    printf("run %" PRIu64 ": %s\n", run.id, run.state);
    return 0;
}

static const char *format_query(sm_cli_format f)
{
    switch (f) {
    case SM_CLI_FMT_CSV:
        return "csv";
    case SM_CLI_FMT_JSON:
        return "json";
    case SM_CLI_FMT_TABLE: /* the Markdown table reads well in a terminal as it is */
    case SM_CLI_FMT_MD:
        break;
    }
    return "md";
}

/* GET the run's table; 0 with *r holding it, or 1 once reported. */
static int get_table(sm_http *h, uint64_t id, sm_cli_format f, bool disturbed, sm_http_resp *r)
{
    char path[128];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/table?format=%s%s", id, format_query(f),
             disturbed ? "&disturbed=include" : "");
    return call(h, path, NULL, 0, r);
}

/* The body on stdout, ending in a newline for the terminal's sake. */
static int print_body(const sm_http_resp *r)
{
    if (fwrite(r->body, 1, r->len, stdout) != r->len ||
        (r->len && r->body[r->len - 1] != '\n' && putchar('\n') == EOF) || fflush(stdout) != 0) {
        fail("cannot write to stdout: %s", strerror(errno));
        return 1;
    }
    return 0;
}

/* Writes data to path through a temporary file in the same folder and rename(), so that a
 * reader never sees half a table and a failure leaves the old file as it was. */
static int write_atomic(const char *path, const char *data, size_t len, sm_error *err)
{
    size_t plen = strlen(path) + 8;
    char *tmp = malloc(plen);
    if (!tmp)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    snprintf(tmp, plen, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return sm_error_sys(err, e, "cannot create a temporary file next to %s", path);
    }
    /* mkstemp makes the file 0600; an export is an ordinary file, so follow the umask. */
    mode_t mask = umask(0);
    umask(mask);
    int rc = 0;
    if (fchmod(fd, 0666 & ~mask) != 0)
        rc = sm_error_sys(err, errno, "cannot set the mode of %s", tmp);
    for (size_t off = 0; !rc && off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            rc = sm_error_sys(err, errno, "cannot write %s", tmp);
        else
            off += (size_t)w;
    }
    if (!rc && fsync(fd) != 0)
        rc = sm_error_sys(err, errno, "cannot write %s", tmp);
    if (close(fd) != 0 && !rc)
        rc = sm_error_sys(err, errno, "cannot write %s", tmp);
    if (!rc && rename(tmp, path) != 0)
        rc = sm_error_sys(err, errno, "cannot rename %s to %s", tmp, path);
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

static int cmd_export(sm_http *h, const sm_cli_opts *o)
{
    sm_http_resp r;
    if (get_table(h, o->run_id, o->format, o->include_disturbed, &r))
        return 1;
    int rc = 0;
    if (o->output) {
        sm_error err = {0};
        if (write_atomic(o->output, r.body, r.len, &err) != 0) {
            fail("%s", err.msg);
            rc = 1;
        }
    } else {
        rc = print_body(&r);
    }
    sm_http_resp_fini(&r);
    return rc;
}

/* GET the run's anomalies: lines for people (format table) or the JSON; 0 with *r, or 1. */
static int get_anomalies(sm_http *h, uint64_t id, uint64_t baseline, const char *floor,
                         bool disturbed, sm_cli_format f, sm_http_resp *r)
{
    char path[192];
    int n = snprintf(path, sizeof path, "/api/runs/%" PRIu64 "/anomalies?format=%s", id,
                     f == SM_CLI_FMT_JSON ? "json" : "text");
    if (baseline)
        n += snprintf(path + n, sizeof path - (size_t)n, "&baseline=%" PRIu64, baseline);
    if (floor)
        n += snprintf(path + n, sizeof path - (size_t)n, "&floor=%s", floor);
    if (disturbed)
        snprintf(path + n, sizeof path - (size_t)n, "&disturbed=include");
    return call(h, path, NULL, 0, r);
}

static int cmd_anomalies(sm_http *h, const sm_cli_opts *o)
{
    sm_http_resp r;
    if (get_anomalies(h, o->run_id, o->baseline, o->floor, o->include_disturbed, o->format, &r))
        return 1;
    int rc = print_body(&r);
    sm_http_resp_fini(&r);
    return rc;
}

/* ---- run ---- */

#define SPEC_FILE_MAX (1u << 20)
#define POLL_MS       500
#define BAR_WIDTH     20
/* How long --wait rides out a coordinator it cannot reach (a restart) before it gives up. */
#define UNREACHABLE_MS 30000

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

static int64_t mono_ms(void)
{
    return sm_mono_ms();
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static bool run_ended(const char *state)
{
    return strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
           strcmp(state, "cancelled") == 0;
}

typedef struct progress {
    bool tty;
    bool shown;
    int width; /* of the last bar drawn, to blank what a shorter one leaves */
    uint32_t done, failed, total;
} progress;

static void progress_show(progress *p, const sm_apiview_run *run)
{
    if (p->shown && run->done == p->done && run->failed == p->failed && run->total == p->total)
        return;
    p->shown = true;
    p->done = run->done;
    p->failed = run->failed;
    p->total = run->total;
    if (!p->tty) {
        fprintf(stderr, "run %" PRIu64 ": %" PRIu32 "/%" PRIu32 " jobs, %" PRIu32 " failed\n",
                run->id, run->done, run->total, run->failed);
        return;
    }
    uint64_t ended = (uint64_t)run->done + run->failed;
    size_t fill = run->total ? (size_t)(ended * BAR_WIDTH / run->total) : 0;
    if (fill > BAR_WIDTH)
        fill = BAR_WIDTH;
    char bar[BAR_WIDTH + 1];
    memset(bar, '#', fill);
    memset(bar + fill, '.', BAR_WIDTH - fill);
    bar[BAR_WIDTH] = '\0';
    int w = fprintf(stderr, "\r[%s] %" PRIu32 "/%" PRIu32 " jobs, %" PRIu32 " failed", bar,
                    run->done, run->total, run->failed);
    if (w < p->width)
        fprintf(stderr, "%*s", p->width - w, "");
    p->width = w;
    fflush(stderr);
}

/* Ends the progress bar's line so that what follows starts on its own. */
static void progress_end(progress *p)
{
    if (p->tty && p->shown)
        fputc('\n', stderr);
    p->shown = false;
}

/* Polls the run until it ends; 0 with *out its last state, or 1 once reported. */
static int wait_run(sm_http *h, uint64_t id, uint32_t timeout_s, sm_apiview_run *out)
{
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%" PRIu64, id);
    progress p = {.tty = isatty(STDERR_FILENO) == 1};
    const int64_t deadline = mono_ms() + (int64_t)timeout_s * 1000;
    int64_t unreachable_since = -1;
    bool noted = false; /* how its jobs go is said once, first */
    for (;;) {
        sm_http_resp r;
        sm_error err = {0};
        int rc = sm_http_get(h, path, &r, &err);
        int64_t now = mono_ms();
        if (rc == SM_ESYS) {
            if (unreachable_since < 0)
                unreachable_since = now;
            if (now - unreachable_since >= UNREACHABLE_MS || now >= deadline) {
                progress_end(&p);
                report(h, NULL, &err);
                return 1;
            }
        } else if (rc) {
            progress_end(&p);
            report(h, NULL, &err);
            return 1;
        } else if (r.status < 200 || r.status > 299) {
            progress_end(&p);
            report(h, &r, &err);
            sm_http_resp_fini(&r);
            return 1;
        } else {
            unreachable_since = -1;
            sm_apiview_run run;
            rc = sm_apiview_run_decode(r.body, r.len, &run, NULL, NULL, &err);
            sm_http_resp_fini(&r);
            if (rc) {
                progress_end(&p);
                return bad_answer("GET /api/runs/ID", &err);
            }
            if (!noted) {
                char prefix[40];
                snprintf(prefix, sizeof prefix, "run %" PRIu64 ": ", id);
                print_parallel(stderr, prefix, &run);
                noted = true;
            }
            progress_show(&p, &run);
            if (run_ended(run.state)) {
                progress_end(&p);
                *out = run;
                return 0;
            }
        }
        if (now >= deadline) {
            progress_end(&p);
            fail("gave up waiting for run %" PRIu64 " after %" PRIu32 " s; it goes on (sockmatrix "
                 "show %" PRIu64 ", sockmatrix cancel %" PRIu64 ")",
                 id, timeout_s, id, id);
            return 1;
        }
        int64_t nap = deadline - now < POLL_MS ? deadline - now : POLL_MS;
        sleep_ms(nap);
    }
}

static int cmd_run(sm_http *h, const sm_cli_opts *o)
{
    char *body = NULL;
    size_t len = 0;
    sm_error err = {0};
    int rc = o->spec_file ? read_file(o->spec_file, &body, &len, &err)
             : o->reps_auto
                 ? sm_apiview_preset_request_adaptive(o->preset, o->hosts, &o->reps, &body, &err)
                 : sm_apiview_preset_request(o->preset, o->hosts, o->repetitions, &body, &err);
    if (rc) {
        fail("%s", err.msg);
        return 1;
    }
    if (!o->spec_file)
        len = strlen(body);
    sm_http_resp r;
    rc = call(h, "/api/runs", body, len, &r);
    free(body);
    if (rc)
        return 1;
    uint64_t id;
    rc = sm_apiview_run_id_decode(r.body, r.len, &id, &err);
    sm_http_resp_fini(&r);
    if (rc)
        return bad_answer("POST /api/runs", &err);
    fprintf(stderr, "run %" PRIu64 " started\n", id);
    if (!o->wait) {
        printf("%" PRIu64 "\n", id);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    sm_apiview_run run;
    if (wait_run(h, id, o->timeout_s, &run))
        return 1;
    /* The table of a failed or cancelled run still holds what was measured: print it too. */
    if (get_table(h, id, o->format, o->include_disturbed, &r))
        return 1;
    rc = print_body(&r);
    sm_http_resp_fini(&r);
    if (rc)
        return 1;
    /* The flags after the table, as lines whatever the table's format: the table itself says
     * them in its flags column, the lines give the evidence. On stderr for csv and json, so
     * that stdout stays one document. */
    if (get_anomalies(h, id, 0, o->floor, o->include_disturbed, SM_CLI_FMT_TABLE, &r))
        return 1;
    bool doc = o->format == SM_CLI_FMT_CSV || o->format == SM_CLI_FMT_JSON;
    if (doc)
        fwrite(r.body, 1, r.len, stderr);
    else
        rc = fputc('\n', stdout) == EOF || print_body(&r);
    sm_http_resp_fini(&r);
    if (rc)
        return 1;
    if (strcmp(run.state, "done") == 0)
        return 0;
    if (run.reason[0])
        fail("run %" PRIu64 " %s: %s", id, run.state, run.reason);
    else
        fail("run %" PRIu64 " %s (%" PRIu32 " of %" PRIu32 " jobs failed)", id, run.state,
             run.failed, run.total);
    return 1;
}

int sm_cli_exec(const sm_cli_opts *o, const char *token)
{
    sm_http *h;
    sm_error err = {0};
    if (sm_http_open(&h, o->coordinator, token, &err) != 0) {
        fail("%s", err.msg);
        return 1;
    }
    int rc;
    switch (o->cmd) {
    case SM_CLI_AGENTS:
        rc = cmd_agents(h);
        break;
    case SM_CLI_PRESETS:
        rc = cmd_presets(h);
        break;
    case SM_CLI_RUN:
        rc = cmd_run(h, o);
        break;
    case SM_CLI_RUNS:
        rc = cmd_runs(h);
        break;
    case SM_CLI_SHOW:
        rc = cmd_show(h, o->run_id);
        break;
    case SM_CLI_CANCEL:
        rc = cmd_cancel(h, o->run_id);
        break;
    case SM_CLI_EXPORT:
        rc = cmd_export(h, o);
        break;
    case SM_CLI_ANOMALIES:
        rc = cmd_anomalies(h, o);
        break;
    default:
        fail("internal: command %d is main's to handle", (int)o->cmd);
        rc = 1;
        break;
    }
    sm_http_close(h);
    return rc;
}
