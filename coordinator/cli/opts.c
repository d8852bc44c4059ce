/* sockmatrix's command line: getopt_long over the global options, then over the command's own. */
#include "coordinator/cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/cli/cmd.h"
#include "coordinator/cli/http.h"
#include "coordinator/cli/suggest.h"
#include "coordinator/model/spec.h"

/* getopt_long's return values: the short options' letters, the others above any letter. */
enum {
    O_HELP = 'h',
    O_OUTPUT = 'o',
    O_COORD = 256,
    O_TOKEN,
    O_VERSION,
    O_PRESET,
    O_SPEC,
    O_HOSTS,
    O_REPS,
    O_MAX_REPS,
    O_CI_REL,
    O_WAIT,
    O_FORMAT,
    O_TIMEOUT,
    O_BASELINE,
    O_FLOOR,
    O_DISTURBED,
    O_JOB_HOST,
    O_JOB_STATE,
    O_TREND_TEST,
    O_TREND_METRIC,
    O_JOB_CELL,
    O_NAME,
    O_EVERY,
    O_CRON,
    O_WEBHOOK,
    O_CACERT,
    O_INSECURE_HTTP,
};

#define BEFORE_CMD (1u << 31) /* allowed before the command word */
#define ON(c)      (1u << (c))
#define ANYWHERE   0xffffffffu

typedef struct opt {
    const char *name, *alias; /* "--output", "-o" */
    int id;
    bool value;
    uint32_t where;
} opt;

static const opt options[] = {
    {"--coordinator", NULL, O_COORD, true, ANYWHERE},
    {"--token-file", NULL, O_TOKEN, true, ANYWHERE},
    {"--cacert", NULL, O_CACERT, true, ANYWHERE},
    {"--insecure-http", NULL, O_INSECURE_HTTP, false, ANYWHERE},
    {"--help", "-h", O_HELP, false, ANYWHERE},
    {"--version", NULL, O_VERSION, false, ANYWHERE},
    {"--preset", NULL, O_PRESET, true, ON(SM_CLI_RUN) | ON(SM_CLI_SCHEDULE_ADD)},
    {"--spec", NULL, O_SPEC, true, ON(SM_CLI_RUN) | ON(SM_CLI_SCHEDULE_ADD)},
    {"--hosts", NULL, O_HOSTS, true, ON(SM_CLI_RUN) | ON(SM_CLI_SCHEDULE_ADD)},
    {"--repetitions", NULL, O_REPS, true, ON(SM_CLI_RUN)},
    {"--max-repetitions", NULL, O_MAX_REPS, true, ON(SM_CLI_RUN)},
    {"--ci-rel", NULL, O_CI_REL, true, ON(SM_CLI_RUN)},
    {"--wait", NULL, O_WAIT, false, ON(SM_CLI_RUN)},
    /* Every command that prints data. */
    {"--format", NULL, O_FORMAT, true,
     ON(SM_CLI_RUN) | ON(SM_CLI_EXPORT) | ON(SM_CLI_ANOMALIES) | ON(SM_CLI_HOSTS_DIFF) |
         ON(SM_CLI_HOSTS_FINGERPRINT) | ON(SM_CLI_COMPARE) | ON(SM_CLI_JOBS) | ON(SM_CLI_TRENDS) |
         ON(SM_CLI_AGENTS) | ON(SM_CLI_PRESETS) | ON(SM_CLI_RUNS) | ON(SM_CLI_SHOW) |
         ON(SM_CLI_SCHEDULES) | ON(SM_CLI_TESTS) | ON(SM_CLI_EXPLAIN)},
    {"--timeout-s", NULL, O_TIMEOUT, true, ON(SM_CLI_RUN) | ON(SM_CLI_EXPLAIN)},
    {"--output", "-o", O_OUTPUT, true, ON(SM_CLI_EXPORT)},
    {"--baseline", NULL, O_BASELINE, true, ON(SM_CLI_ANOMALIES)},
    {"--floor", NULL, O_FLOOR, true, ON(SM_CLI_ANOMALIES) | ON(SM_CLI_RUN)},
    {"--disturbed", NULL, O_DISTURBED, true,
     ON(SM_CLI_ANOMALIES) | ON(SM_CLI_RUN) | ON(SM_CLI_EXPORT) | ON(SM_CLI_COMPARE) |
         ON(SM_CLI_TRENDS)},
    {"--host", NULL, O_JOB_HOST, true, ON(SM_CLI_JOBS) | ON(SM_CLI_TRENDS) | ON(SM_CLI_EXPLAIN)},
    {"--test", NULL, O_TREND_TEST, true, ON(SM_CLI_TRENDS) | ON(SM_CLI_EXPLAIN)},
    {"--metric", NULL, O_TREND_METRIC, true, ON(SM_CLI_TRENDS)},
    {"--state", NULL, O_JOB_STATE, true, ON(SM_CLI_JOBS)},
    {"--cell", NULL, O_JOB_CELL, true, ON(SM_CLI_JOBS)},
    {"--name", NULL, O_NAME, true, ON(SM_CLI_SCHEDULE_ADD)},
    {"--every", NULL, O_EVERY, true, ON(SM_CLI_SCHEDULE_ADD)},
    {"--cron", NULL, O_CRON, true, ON(SM_CLI_SCHEDULE_ADD)},
    {"--webhook", NULL, O_WEBHOOK, true, ON(SM_CLI_SCHEDULE_ADD)},
};

#define N_OPTIONS (sizeof options / sizeof *options)

typedef struct command {
    const char *name;
    sm_cli_cmd cmd;
    bool takes_run; /* one positional argument: RUN */
} command;

static const command commands[] = {
    {"agents", SM_CLI_AGENTS, false},
    {"presets", SM_CLI_PRESETS, false},
    {"run", SM_CLI_RUN, false},
    {"runs", SM_CLI_RUNS, false},
    {"show", SM_CLI_SHOW, true},
    {"cancel", SM_CLI_CANCEL, true},
    {"again", SM_CLI_AGAIN, true},
    {"export", SM_CLI_EXPORT, true},
    {"anomalies", SM_CLI_ANOMALIES, true},
    {"explain", SM_CLI_EXPLAIN, true},
    /* hosts diff|fingerprint: the word after it picks the command (hosts_positional) */
    {"hosts", SM_CLI_HOSTS_DIFF, false},
    {"compare", SM_CLI_COMPARE, false}, /* two runs (compare_positional) */
    {"jobs", SM_CLI_JOBS, true},
    {"trends", SM_CLI_TRENDS, false},
    {"tests", SM_CLI_TESTS, true}, /* RUN is optional: all the tests of the recent runs */
    {"schedules", SM_CLI_SCHEDULES, false},
    /* schedule add|pause|resume|delete: the word after it picks the command */
    {"schedule", SM_CLI_SCHEDULE_ADD, false},
};

/* The parse so far: what the line asked for, and what the final checks need. */
typedef struct parse {
    sm_cli_opts r;
    const command *cmd; /* NULL before the command word */
    const char *run_arg;
    const char *hosts_sub; /* "diff" or "fingerprint", once given */
    const char *sched_sub; /* "add", "pause", "resume" or "delete", once given */
    bool timeout_given, version, help;
} parse;

/* The option an element of argv names, by its whole name (getopt_long would take a prefix:
 * the command line takes none). Long names end at '='; a short one is the whole element.
 * *name_len is what the messages quote. */
static const opt *find_option(const char *arg, int *name_len)
{
    const char *eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    *name_len = (int)len;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const opt *o = &options[i];
        if ((strlen(o->name) == len && strncmp(arg, o->name, len) == 0) ||
            (o->alias && strlen(o->alias) == len && strncmp(arg, o->alias, len) == 0))
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

#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

/* Agent names are [A-Za-z0-9._-], 1..64 (proto/envelope.h): checked here so that a typo is a
 * usage error, before anything is sent. */
static int check_hosts(const char *hosts, sm_error *err)
{
    if (strcmp(hosts, "all") == 0)
        return 0;
    for (const char *p = hosts;; p++) {
        size_t n = strspn(p, NAME_CHARS);
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

static int parse_format(const char *v, sm_cli_format *out, sm_error *err)
{
    static const char *const names[] = {"table", "csv", "md", "json"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = (sm_cli_format)i;
            return 0;
        }
    const char *near = sm_cli_suggest(v, names, sizeof names / sizeof *names);
    return sm_error_set(err, SM_EINVAL, "--format: '%s' is not table, csv, md or json%s%s%s", v,
                        near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
}

/* A fraction as --floor takes it: checked here, sent as written, since the coordinator reads
 * the same decimal. */
static bool floor_ok(const char *v)
{
    char *end;
    double f = strtod(v, &end);
    return !*end && f > 0 && f < 10 && strlen(v) <= 16 && strspn(v, "0123456789.") == strlen(v);
}

/* Applies one of run's repetition options. */
static int apply_reps(sm_cli_opts *o, int id, const char *v, sm_error *err)
{
    uint64_t n;
    if (id == O_REPS && strcmp(v, "auto") == 0) {
        o->reps_auto = true;
        return 0;
    }
    if (id == O_REPS || id == O_MAX_REPS) {
        if (!parse_uint(v, 1, SM_SPEC_REPS_MAX, &n))
            return sm_error_set(err, SM_EINVAL, "%s: '%s' is not a number from 1 to %d%s",
                                id == O_REPS ? "--repetitions" : "--max-repetitions", v,
                                SM_SPEC_REPS_MAX, id == O_REPS ? " or auto" : "");
        if (id == O_REPS)
            o->repetitions = (uint32_t)n;
        else
            o->reps.max = (uint32_t)n;
        return 0;
    }
    char *end;
    double f = strtod(v, &end);
    if (*end || end == v || !(f > 0 && f < 1))
        return sm_error_set(err, SM_EINVAL,
                            "--ci-rel: '%s' is not a fraction between 0 and 1 (0.05 is +-5%%)", v);
    o->reps.ci_rel = f;
    return 0;
}

/* A trends row: an agent name, or "client->server" of two (names may hold '-', not '>'). */
static bool trend_host_ok(const char *v)
{
    const char *arrow = strstr(v, "->");
    const size_t a = arrow ? (size_t)(arrow - v) : strlen(v);
    const char *b = arrow ? arrow + 2 : NULL;
    for (size_t i = 0; i < a; i++)
        if (!strchr(NAME_CHARS, v[i]))
            return false;
    return a && a <= SM_NAME_MAX &&
           (!b || (*b && strlen(b) <= SM_NAME_MAX && !b[strspn(b, NAME_CHARS)]));
}

/* Applies one option with a value that is a number or a word from a list. */
static int apply_checked(parse *s, int id, const char *v, sm_error *err)
{
    sm_cli_opts *o = &s->r;
    uint64_t n;
    switch (id) {
    case O_FORMAT:
        o->format_given = true;
        return parse_format(v, &o->format, err);
    case O_TIMEOUT:
        if (!parse_uint(v, 1, SM_CLI_TIMEOUT_S_MAX, &n))
            return sm_error_set(err, SM_EINVAL, "--timeout-s: '%s' is not a number from 1 to %u", v,
                                SM_CLI_TIMEOUT_S_MAX);
        o->timeout_s = (uint32_t)n;
        s->timeout_given = true;
        return 0;
    case O_JOB_HOST:
        if (o->cmd == SM_CLI_TRENDS && trend_host_ok(v)) {
            o->job_host = v;
            return 0;
        }
        if (!*v || strlen(v) > SM_NAME_MAX || v[strspn(v, NAME_CHARS)])
            return sm_error_set(err, SM_EINVAL,
                                "--host: '%s' is not an agent name (up to %d of A-Z a-z 0-9 . _ "
                                "-)%s",
                                v, SM_NAME_MAX,
                                o->cmd == SM_CLI_TRENDS ? " or client->server" : "");
        o->job_host = v;
        return 0;
    case O_JOB_STATE:
        if (strcmp(v, "queued") && strcmp(v, "assigned") && strcmp(v, "running") &&
            strcmp(v, "done") && strcmp(v, "failed"))
            return sm_error_set(err, SM_EINVAL,
                                "--state: '%s' is not queued, assigned, running, done or failed",
                                v);
        o->job_state = v;
        return 0;
    case O_JOB_CELL:
        if (!parse_uint(v, 0, UINT32_MAX, &n))
            return sm_error_set(err, SM_EINVAL,
                                "--cell: '%s' is not a cell number (sockmatrix show RUN lists "
                                "them)",
                                v);
        o->job_cell = (uint32_t)n;
        o->have_job_cell = true;
        return 0;
    case O_BASELINE:
        if (!parse_uint(v, 1, UINT64_MAX, &n))
            return sm_error_set(err, SM_EINVAL, "--baseline: '%s' is not a run id", v);
        o->baseline = n;
        return 0;
    case O_FLOOR:
        if (!floor_ok(v))
            return sm_error_set(err, SM_EINVAL,
                                "--floor: '%s' is not a fraction above 0 (0.15 is 15%%)", v);
        o->floor = v;
        return 0;
    case O_DISTURBED:
        if (strcmp(v, "include") != 0 && strcmp(v, "exclude") != 0)
            return sm_error_set(err, SM_EINVAL, "--disturbed: '%s' is not include or exclude", v);
        o->include_disturbed = strcmp(v, "include") == 0;
        return 0;
    case O_NAME:
    case O_EVERY:
    case O_CRON:
    case O_WEBHOOK:
        return sm_cli_schedule_option(o, id - O_NAME, v, err);
    default:
        return apply_reps(o, id, v, err);
    }
}

/* Applies one option with its value (NULL for a flag). */
static int apply(parse *s, const opt *op, const char *v, sm_error *err)
{
    sm_cli_opts *o = &s->r;
    if (op->value && !*v)
        return sm_error_set(err, SM_EINVAL, "%s: the value is empty", op->name);
    switch (op->id) {
    case O_COORD:
        o->coordinator = v;
        return check_url(v, "--coordinator", err);
    case O_TOKEN:
        o->token_file = v;
        return 0;
    case O_CACERT:
        o->cacert = v;
        return 0;
    case O_INSECURE_HTTP:
        o->insecure_http = true;
        return 0;
    case O_HELP:
        s->help = true;
        return 0;
    case O_VERSION:
        s->version = true;
        return 0;
    case O_PRESET:
        o->preset = v;
        return 0;
    case O_SPEC:
        o->spec_file = v;
        return 0;
    case O_HOSTS:
        o->hosts = v;
        return check_hosts(v, err);
    case O_WAIT:
        o->wait = true;
        return 0;
    case O_OUTPUT:
        o->output = v;
        return 0;
    case O_TREND_TEST:
        if (!*v || strlen(v) >= 128)
            return sm_error_set(err, SM_EINVAL,
                                "--test: give a part of a test's label, such as 'tcp lines', "
                                "or its id such as t3 (at most 127 characters)");
        o->trend_test = v;
        return 0;
    case O_TREND_METRIC:
        if (!*v || strlen(v) >= 32)
            return sm_error_set(err, SM_EINVAL,
                                "--metric: give a metric name such as throughput_MBps (at most "
                                "31 characters)");
        o->trend_metric = v;
        return 0;
    default:
        return apply_checked(s, op->id, v, err);
    }
}

/* hosts' arguments: diff or fingerprint, then agent names, each once. */
static int hosts_positional(parse *s, const char *arg, sm_error *err)
{
    sm_cli_opts *o = &s->r;
    if (!s->hosts_sub) {
        static const char *const subs[] = {"diff", "fingerprint"};
        const char *near = sm_cli_suggest(arg, subs, 2);
        if (strcmp(arg, "diff") != 0 && strcmp(arg, "fingerprint") != 0)
            return sm_error_set(err, SM_EINVAL, "hosts: '%s' is not diff or fingerprint%s%s%s", arg,
                                near ? ": did you mean " : " (see --help)", near ? near : "",
                                near ? "?" : "");
        s->hosts_sub = arg;
        o->cmd = arg[0] == 'd' ? SM_CLI_HOSTS_DIFF : SM_CLI_HOSTS_FINGERPRINT;
        return 0;
    }
    const size_t max = o->cmd == SM_CLI_HOSTS_DIFF ? SM_CLI_HOSTS_MAX : 1;
    if (o->n_host_names == max)
        return o->cmd == SM_CLI_HOSTS_DIFF
                   ? sm_error_set(err, SM_EINVAL, "hosts diff: at most %d hosts", SM_CLI_HOSTS_MAX)
                   : sm_error_set(err, SM_EINVAL,
                                  "hosts fingerprint: unexpected argument '%s' (one host; "
                                  "to compare hosts: sockmatrix hosts diff)",
                                  arg);
    const size_t n = strspn(arg, NAME_CHARS);
    if (n == 0 || arg[n] || n > SM_NAME_MAX)
        return sm_error_set(err, SM_EINVAL,
                            "hosts %s: '%s' is not an agent name (up to %d of A-Z a-z 0-9 . _ -; "
                            "give the names one by one)",
                            s->hosts_sub, arg, SM_NAME_MAX);
    for (size_t i = 0; i < o->n_host_names; i++)
        if (strcmp(o->host_names[i], arg) == 0)
            return sm_error_set(err, SM_EINVAL, "hosts %s: '%s' is given twice", s->hosts_sub, arg);
    o->host_names[o->n_host_names++] = arg;
    return 0;
}

/* compare A B: two run ids, different. */
static int compare_positional(parse *s, const char *arg, sm_error *err)
{
    uint64_t id;
    if (s->r.run_b)
        return sm_error_set(err, SM_EINVAL,
                            "compare: unexpected argument '%s' (it compares two runs: "
                            "sockmatrix compare A B)",
                            arg);
    if (!parse_uint(arg, 1, UINT64_MAX, &id))
        return sm_error_set(err, SM_EINVAL,
                            "compare: '%s' is not a run id (a number; sockmatrix runs lists them)",
                            arg);
    if (s->r.run_id == 0) {
        s->r.run_id = id;
        return 0;
    }
    if (id == s->r.run_id)
        return sm_error_set(err, SM_EINVAL,
                            "compare: run %s against itself (give two different runs)", arg);
    s->r.run_b = id;
    return 0;
}

/* The command's positional argument: its run id, and nothing else. */
static int positional(parse *s, const char *arg, sm_error *err)
{
    if (s->cmd->cmd == SM_CLI_HOSTS_DIFF)
        return hosts_positional(s, arg, err);
    if (s->cmd->cmd == SM_CLI_COMPARE)
        return compare_positional(s, arg, err);
    if (s->cmd->cmd == SM_CLI_SCHEDULE_ADD)
        return sm_cli_schedule_positional(&s->r, &s->sched_sub, arg, err);
    if (!s->cmd->takes_run || s->run_arg)
        return sm_error_set(err, SM_EINVAL, "%s: unexpected argument '%s' (see --help)",
                            s->cmd->name, arg);
    if (!parse_uint(arg, 1, UINT64_MAX, &s->r.run_id))
        return sm_error_set(err, SM_EINVAL,
                            "%s: '%s' is not a run id (a number; sockmatrix runs lists them)",
                            s->cmd->name, arg);
    s->run_arg = arg;
    return 0;
}

/* An option no command knows: the nearest one allowed there, when one is near. */
static int unknown_option(const command *cmd, const char *arg, int len, sm_error *err)
{
    const char *names[N_OPTIONS];
    size_t n = 0;
    char word[72];
    snprintf(word, sizeof word, "%.*s", len, arg);
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (options[i].where & (cmd ? ON(cmd->cmd) : BEFORE_CMD))
            names[n++] = options[i].name;
    const char *near = sm_cli_suggest(word, names, n);
    return sm_error_set(err, SM_EINVAL, "%s%sunknown option '%s'%s%s%s (see --help)",
                        cmd ? cmd->name : "", cmd ? ": " : "", word, near ? ": did you mean " : "",
                        near ? near : "", near ? "?" : "");
}

/* What getopt_long returned (c) for the option element arg, checked against this project's
 * rules: whole names only, each option where it belongs. */
static int take_option(parse *s, const char *arg, int c, const char *value, sm_error *err)
{
    const command *cmd = s->cmd;
    int len;
    const opt *op = find_option(arg, &len);
    if (!op)
        return unknown_option(cmd, arg, len, err);
    if (!(op->where & (cmd ? ON(cmd->cmd) : BEFORE_CMD))) {
        if (!cmd)
            return sm_error_set(err, SM_EINVAL,
                                "%.*s: put it after the command it belongs to (see --help)", len,
                                arg);
        return sm_error_set(err, SM_EINVAL, "%.*s: not an option of %s (see --help)", len, arg,
                            cmd->name);
    }
    if (c == ':')
        return sm_error_set(err, SM_EINVAL, "%s needs a value", op->name);
    if (c == '?') /* a whole name allowed here: getopt_long refused its "=value" */
        return sm_error_set(err, SM_EINVAL, "%s takes no value", op->name);
    return apply(s, op, value, err);
}

/* getopt_long's table of the options allowed at `where`, and its short options after
 * `prefix` ("+:" stops at the command word, "-:" hands over the arguments in order). */
static void build_table(uint32_t where, const char *prefix, struct option *lo, char *shorts)
{
    size_t n = 0;
    strcpy(shorts, prefix);
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (!(options[i].where & where))
            continue;
        lo[n++] =
            (struct option){options[i].name + 2, options[i].value ? required_argument : no_argument,
                            NULL, options[i].id};
        if (options[i].alias) {
            const char letter[] = {options[i].alias[1], options[i].value ? ':' : '\0', '\0'};
            strcat(shorts, letter);
        }
    }
    lo[n] = (struct option){NULL, 0, NULL, 0};
}

/* Scans argv[1..argc) with getopt_long: before the command word (s->cmd NULL) up to it, after
 * it to the end. *next is the index of the first argument getopt_long left: the command word,
 * or what follows a "--" (which *dashdash then says). Stops early when --help is seen. */
static int scan(parse *s, int argc, char **argv, int *next, bool *dashdash, sm_error *err)
{
    struct option lo[N_OPTIONS + 1];
    char shorts[16];
    build_table(s->cmd ? ON(s->cmd->cmd) : BEFORE_CMD, s->cmd ? "-:" : "+:", lo, shorts);
    opterr = 0;
    optind = 0; /* glibc: start afresh on this argv */
    for (;;) {
        int at = optind ? optind : 1;
        int c = getopt_long(argc, argv, shorts, lo, NULL);
        if (c == -1) {
            *next = optind;
            *dashdash = optind == at + 1; /* only "--" is passed over without a return */
            return 0;
        }
        int rc = c == 1 ? positional(s, optarg, err) : take_option(s, argv[at], c, optarg, err);
        if (rc || s->help)
            return rc;
    }
}

static const command *find_command(const char *word, sm_error *err)
{
    for (size_t k = 0; k < sizeof commands / sizeof *commands; k++)
        if (strcmp(word, commands[k].name) == 0)
            return &commands[k];
    const char *names[sizeof commands / sizeof *commands];
    for (size_t k = 0; k < sizeof commands / sizeof *commands; k++)
        names[k] = commands[k].name;
    const char *near = sm_cli_suggest(word, names, sizeof names / sizeof *names);
    if (near)
        sm_error_set(err, SM_EINVAL, "unknown command '%s': did you mean %s? (see --help)", word,
                     near);
    else
        sm_error_set(err, SM_EINVAL, "unknown command '%s' (see --help)", word);
    return NULL;
}

/* The global options, the command word, the command's options and arguments, in order. */
static int scan_line(parse *s, int argc, char **argv, sm_error *err)
{
    int next, rc;
    bool dashdash;
    if ((rc = scan(s, argc, argv, &next, &dashdash, err)) || s->help || next >= argc)
        return rc;
    /* help [CMD]: the usage, or CMD's part of it. */
    if (strcmp(argv[next], "help") == 0) {
        if (next + 2 < argc)
            return sm_error_set(err, SM_EINVAL, "help takes one command: help CMD");
        if (next + 1 < argc && !(s->cmd = find_command(argv[next + 1], err)))
            return SM_EINVAL;
        s->help = true;
        return 0;
    }
    if (!(s->cmd = find_command(argv[next], err)))
        return SM_EINVAL;
    s->r.cmd = s->cmd->cmd;
    argc -= next;
    argv += next;  /* argv[0] is the command word, as getopt_long wants a program name */
    int first = 1; /* after a "--", everything is an argument */
    if (!dashdash) {
        if ((rc = scan(s, argc, argv, &next, &dashdash, err)) || s->help)
            return rc;
        first = dashdash ? next : argc;
    }
    for (int i = first; i < argc; i++)
        if ((rc = positional(s, argv[i], err)))
            return rc;
    return 0;
}

/* The checks of run that need the whole command line. */
static int check_run(const parse *s, sm_error *err)
{
    const sm_cli_opts *o = &s->r;
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
    if (o->format_given && !o->wait)
        return sm_error_set(err, SM_EINVAL,
                            "--format goes with --wait (without it, run prints the run's id; "
                            "see also: sockmatrix export)");
    if (s->timeout_given && !o->wait && o->cmd != SM_CLI_EXPLAIN)
        return sm_error_set(err, SM_EINVAL, "--timeout-s goes with --wait");
    if (o->floor && !o->wait)
        return sm_error_set(err, SM_EINVAL, "--floor goes with --wait");
    if (o->include_disturbed && !o->wait)
        return sm_error_set(err, SM_EINVAL, "--disturbed goes with --wait");
    return 0;
}

/* The checks of hosts that need the whole command line. */
static int check_hosts_cmd(const parse *s, sm_error *err)
{
    if (!s->hosts_sub)
        return sm_error_set(err, SM_EINVAL,
                            "hosts: diff or fingerprint? (sockmatrix hosts diff H1 H2, "
                            "sockmatrix hosts fingerprint H)");
    if (s->r.cmd == SM_CLI_HOSTS_DIFF && s->r.n_host_names < 2)
        return sm_error_set(err, SM_EINVAL,
                            "hosts diff: compare at least 2 hosts (sockmatrix hosts diff H1 H2 "
                            "[H3...]; sockmatrix agents lists them)");
    if (s->r.cmd == SM_CLI_HOSTS_FINGERPRINT && s->r.n_host_names != 1)
        return sm_error_set(err, SM_EINVAL,
                            "hosts fingerprint: which host? (sockmatrix hosts fingerprint H; "
                            "sockmatrix agents lists them)");
    return 0;
}

/* The checks that need the whole command line. */
static int check_command(const parse *s, sm_error *err)
{
    if (s->r.cmd == SM_CLI_RUN)
        return check_run(s, err);
    if (s->cmd->cmd == SM_CLI_HOSTS_DIFF)
        return check_hosts_cmd(s, err);
    if (s->cmd->cmd == SM_CLI_SCHEDULE_ADD)
        return sm_cli_schedule_check(&s->r, s->sched_sub, err);
    if (s->r.cmd == SM_CLI_COMPARE && !s->r.run_b)
        return sm_error_set(err, SM_EINVAL,
                            "compare: which two runs? (sockmatrix compare A B; sockmatrix runs "
                            "lists them)");
    if (s->cmd->takes_run && !s->run_arg && s->r.cmd != SM_CLI_TESTS)
        return sm_error_set(err, SM_EINVAL,
                            "%s: which run? (sockmatrix %s RUN; sockmatrix runs lists them)",
                            s->cmd->name, s->cmd->name);
    if (s->r.cmd == SM_CLI_TRENDS && (!s->r.job_host || !s->r.trend_test))
        return sm_error_set(err, SM_EINVAL,
                            "trends: --host H and --test T are needed (T is any part of a "
                            "test's label that names one test, or its id: sockmatrix tests "
                            "lists them)");
    if (s->r.have_job_cell && (s->r.job_host || s->r.job_state))
        return sm_error_set(err, SM_EINVAL,
                            "--cell shows one cell's repetitions: give it without --host and "
                            "--state");
    return 0;
}

int sm_cli_parse(int argc, char **argv, const char *env_url, sm_cli_opts *o, sm_error *err)
{
    parse s;
    memset(&s, 0, sizeof s);
    s.r.coordinator = SM_CLI_URL_DEFAULT;
    s.r.timeout_s = SM_CLI_TIMEOUT_S_DEFAULT;
    s.r.cmd = SM_CLI_HELP;
    int rc;
    if (env_url && *env_url) {
        if ((rc = check_url(env_url, SM_CLI_URL_ENV, err)))
            return rc;
        s.r.coordinator = env_url;
    }
    if ((rc = scan_line(&s, argc, argv, err)))
        return rc;
    if (s.help) {
        /* --help wins over whatever else is wrong with the line after it. */
        memset(o, 0, sizeof *o);
        o->cmd = SM_CLI_HELP;
        o->help_cmd = s.cmd ? s.cmd->name : NULL;
        o->coordinator = s.r.coordinator;
        return 0;
    }
    if (s.version)
        s.r.cmd = SM_CLI_VERSION;
    else if (!s.cmd)
        return sm_error_set(
            err, SM_EINVAL,
            "a command is needed: agents, presets, run, runs, "
            "show, jobs, tests, cancel, again, export, anomalies, explain, compare, "
            "trends, hosts, schedules or schedule (see --help)");
    else if ((rc = check_command(&s, err)))
        return rc;
    /* A token sent over http:// to another machine can be read by anyone on the way. */
    if (s.r.token_file && !s.r.insecure_http && sm_http_url_in_clear(s.r.coordinator))
        return sm_error_set(
            err, SM_EINVAL,
            "%s: %s is plain HTTP to a host that is not loopback, where the token "
            "crosses the network in clear: use https:// (with --cacert for a lab "
            "CA or a self-signed certificate), or --insecure-http to send it anyway",
            s.r.coordinator == env_url ? SM_CLI_URL_ENV : "--coordinator", s.r.coordinator);
    if (s.r.reps_auto) {
        /* The spec's defaults, but a --max-repetitions below 5 also lowers the minimum. */
        if (!s.r.reps.max)
            s.r.reps.max = SM_REPS_AUTO_MAX;
        if (!(s.r.reps.ci_rel > 0))
            s.r.reps.ci_rel = SM_REPS_AUTO_CI_REL;
        s.r.reps.min = s.r.reps.max < SM_REPS_AUTO_MIN ? s.r.reps.max : SM_REPS_AUTO_MIN;
        s.r.repetitions = 0;
    }
    *o = s.r;
    return 0;
}
