/* The sockmatrix command-line client: options parsed into a plain struct, and its commands. */
#ifndef SM_CLI_CLI_H
#define SM_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"
#include "proto/reps.h"

#define SM_CLI_URL_DEFAULT       "http://127.0.0.1:8080"
#define SM_CLI_URL_ENV           "SOCKMATRIX_COORDINATOR"
#define SM_CLI_TIMEOUT_S_DEFAULT 3600u
#define SM_CLI_TIMEOUT_S_MAX     (7u * 24 * 3600)
#define SM_CLI_TOKEN_MAX         512 /* bytes of a token, with its NUL */
#define SM_CLI_HOSTS_MAX         16  /* hosts diff compares at most this many hosts */

typedef enum sm_cli_cmd {
    SM_CLI_HELP = 0,
    SM_CLI_VERSION,
    SM_CLI_AGENTS,
    SM_CLI_PRESETS,
    SM_CLI_RUN,
    SM_CLI_RUNS,
    SM_CLI_SHOW,
    SM_CLI_CANCEL,
    SM_CLI_AGAIN, /* again RUN: a run of the cells RUN could not judge */
    SM_CLI_EXPORT,
    SM_CLI_ANOMALIES,
    SM_CLI_HOSTS_DIFF,        /* hosts diff H1 H2 [H3...] */
    SM_CLI_HOSTS_FINGERPRINT, /* hosts fingerprint H */
    SM_CLI_COMPARE,           /* compare A B */
    SM_CLI_JOBS,              /* jobs RUN [--host H] [--state S] */
    SM_CLI_TRENDS,            /* trends --host H --test T [--metric M] */
    SM_CLI_SCHEDULES,         /* schedules */
    SM_CLI_SCHEDULE_ADD,      /* schedule add --name N ... */
    SM_CLI_SCHEDULE_PAUSE,    /* schedule pause ID */
    SM_CLI_SCHEDULE_RESUME,   /* schedule resume ID */
    SM_CLI_SCHEDULE_DELETE,   /* schedule delete ID */
    SM_CLI_SCHEDULE_ROTATE,   /* schedule rotate-secret ID */
    SM_CLI_TESTS,             /* tests [RUN]: the tests, their ids and labels */
    SM_CLI_EXPLAIN,           /* explain RUN [--host H] [--test T]: prove the cause */
} sm_cli_cmd;

/* --format, taken by every command that prints data (grid.h says how each is written). */
typedef enum sm_cli_format {
    SM_CLI_FMT_TABLE = 0, /* aligned for a terminal (export: the Markdown table) */
    SM_CLI_FMT_CSV,
    SM_CLI_FMT_MD,
    SM_CLI_FMT_JSON,
} sm_cli_format;

/* What the command line asked for. Strings point into argv (or the env_url given to the
 * parser, or a literal) and live as long as they do; NULL means not given. */
typedef struct sm_cli_opts {
    sm_cli_cmd cmd;
    /* SM_CLI_HELP: the command whose help was asked for ("show --help", "help show"); NULL:
     * the whole usage */
    const char *help_cmd;
    const char *coordinator; /* never NULL once parsed */
    const char *token_file;
    const char *cacert; /* --cacert: PEM CA(s) for an https:// coordinator; NULL: the system's */
    bool insecure_http; /* --insecure-http: a token may go over http:// off loopback */
    /* run */
    const char *preset;
    const char *spec_file;
    const char *hosts;    /* "all" or "a,b", names checked */
    uint32_t repetitions; /* 0: the preset's */
    /* --repetitions auto: adaptive repetitions (reps.min .. reps.max until the CI is within
     * reps.ci_rel; --max-repetitions and --ci-rel change the defaults) */
    bool reps_auto;
    sm_reps_rule reps;
    bool wait;
    uint32_t timeout_s; /* --wait gives up after this */
    /* every command that prints data; table unless given, but export's default is its own
     * (Markdown on a terminal, CSV when piped: sm_cli_cmd_export) */
    sm_cli_format format;
    bool format_given;
    /* show, cancel, export; compare: A */
    uint64_t run_id;
    /* compare: B */
    uint64_t run_b;
    /* export */
    const char *output; /* -o FILE; NULL: stdout */
    /* anomalies, run --wait */
    uint64_t baseline; /* 0: the coordinator's choice (the previous run of the same name) */
    const char *floor; /* "0.15", checked; NULL: the coordinator's default */
    /* export, anomalies, run --wait: --disturbed include puts disturbed samples back into
     * the statistics (?disturbed=include) */
    bool include_disturbed;
    /* hosts diff (2..SM_CLI_HOSTS_MAX, each once) and hosts fingerprint (1): agent names */
    const char *host_names[SM_CLI_HOSTS_MAX];
    size_t n_host_names;
    /* jobs: --host and --state filters (checked; NULL: all); explain: --host, the anomaly's */
    const char *job_host, *job_state;
    /* trends: --host (job_host: an agent name or "client->server"), --test, --metric;
     * explain: --test (trend_test), the anomaly's test as its column is labelled */
    const char *trend_test, *trend_metric;
    /* jobs --cell N: that cell's repetitions (GET /api/runs/ID/cells/N) instead of the list */
    bool have_job_cell;
    uint32_t job_cell;
    /* schedule add: --name, --every or --cron, --webhook (checked; NULL: not given), with
     * --preset or --spec and --hosts as run takes them; schedule pause|resume|delete: its id */
    const char *sched_name, *every, *cron, *webhook;
    uint64_t schedule_id;
} sm_cli_opts;

/* Parses argv: sockmatrix [--coordinator URL] [--token-file PATH] COMMAND ... (the global
 * options are also taken after the command). env_url is $SOCKMATRIX_COORDINATOR (NULL or ""
 * when unset) and stands when --coordinator is not given. Returns 0, or SM_EINVAL with
 * err->msg one line naming the option or argument ("--repetitions: 'x' is not a number from
 * 1 to 100", "run: unknown option '--foo' (see --help)"), which is exit status 2. A token
 * file with an http:// coordinator that is not loopback is refused unless --insecure-http:
 * the token would cross the network in clear. Files are not opened here. */
int sm_cli_parse(int argc, char **argv, const char *env_url, sm_cli_opts *o, sm_error *err);

/* The --help text. */
const char *sm_cli_usage(void);
/* One command's part of the usage: its lines under "Commands:" (each form of it: "jobs" has
 * two), the --disturbed option when it takes it, and where the rest is; into buf (cut to
 * len - 1). Returns how many bytes it wanted, 0 when cmd is no command the usage lists. */
size_t sm_cli_usage_of(const char *cmd, char *buf, size_t len);

/* Reads the token: the first line of path, refused when the file is readable by group or
 * others (mode & 077), empty, or longer than SM_CLI_TOKEN_MAX - 1. */
int sm_cli_load_token(const char *path, char *out, size_t cap, sm_error *err);

/* Runs o's command against the coordinator (not HELP or VERSION: main prints those); token
 * may be NULL. Prints results on stdout and one line per error on stderr; returns the exit
 * status (0 ok, 1 a failure of the coordinator, of the run, or of a file). Needs
 * curl_global_init done. */
int sm_cli_exec(const sm_cli_opts *o, const char *token);

#endif
