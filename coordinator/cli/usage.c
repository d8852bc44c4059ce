/* sockmatrix --help: what the command line takes. */
#include "coordinator/cli/cli.h"

#include <stdbool.h>
#include <string.h>

static const char usage[] =
    "Usage: sockmatrix [--coordinator URL] [--token-file PATH] [--cacert FILE] COMMAND ...\n"
    "\n"
    "Drives a sockmatrix coordinator over its HTTP API.\n"
    "\n"
    "Every command that prints data takes --format FMT, FMT one of table, csv, md and\n"
    "json: table, aligned for a terminal, is the default (export's is its own); csv is\n"
    "RFC 4180 with CRLF line ends, a field with a comma, quote or line end quoted; md a\n"
    "Markdown pipe table; json the coordinator's answer as it is (presets and tests: an\n"
    "array of rows).\n"
    "\n"
    "Commands:\n"
    "  agents [--format FMT]    the fleet: status, cores, memory, kernel, labels, last seen\n"
    "  presets [--format FMT]   the run specs that ship with sockmatrix, each one's jobs on\n"
    "                           every registered host and a time estimate from the newest\n"
    "                           finished run of the same tests, whatever its name\n"
    "  run (--preset NAME | --spec FILE) [--hosts a,b|all] [--repetitions N|auto]\n"
    "      [--max-repetitions N] [--ci-rel F]\n"
    "      [--wait] [--format FMT] [--timeout-s N]\n"
    "                           start a run and print its id; with --wait, follow it and\n"
    "                           print its comparison table (give up after --timeout-s,\n"
    "                           default 3600). --hosts and --repetitions go with --preset;\n"
    "                           a --spec file is checked here (an error gives its line\n"
    "                           and column, or the field's path) and sent as it is.\n"
    "                           --repetitions auto: 5 or more per cell, one interleaved\n"
    "                           round more until the 95% CI of the median is within +-F\n"
    "                           of it (--ci-rel, default 0.05) or N repetitions ran\n"
    "                           (--max-repetitions, default 30)\n"
    "  runs [--format FMT]      the latest runs and their progress\n"
    "  show RUN [--format FMT]  one run: state, reason, progress, times, failed jobs and\n"
    "                           their reasons, flags each with its why (as anomalies\n"
    "                           prints them) and per-cell counts; csv, md, json: the cells\n"
    "  tests [RUN] [--format FMT]\n"
    "                           the tests of the ended runs (of RUN: its tests), each with\n"
    "                           its id (t1, t2, ...), short label and label; trends --test\n"
    "                           takes the id or any part of a label that names one test\n"
    "  jobs RUN [--host H] [--state S] [--format FMT]\n"
    "                           the run's jobs in run order: host, test, repetition,\n"
    "                           warm-up, state, duration and headline figure; S is queued,\n"
    "                           assigned, running, done or failed\n"
    "  jobs RUN --cell N [--format FMT]\n"
    "                           cell N's every repetition of its headline figure in run\n"
    "                           order, warm-ups marked, and the median and 95% CI the\n"
    "                           run's table shows for it\n"
    "  cancel RUN               cancel a run and print its new state\n"
    "  again RUN                measure again the cells RUN could not judge (inconclusive\n"
    "                           or failed): start that run and print its id\n"
    "  export RUN [--format csv|md|json] [-o FILE]\n"
    "                           the run's comparison table, to FILE (replaced atomically)\n"
    "                           or stdout. Without --format: Markdown on a terminal, CSV\n"
    "                           when piped; for -o FILE by its name (.md, .json, else CSV)\n"
    "  explain RUN [--host H] [--test T] [--format FMT] [--timeout-s N]\n"
    "                           prove which setting causes an anomaly of RUN (the first\n"
    "                           one, or H's, of the test T names any part of): measure\n"
    "                           the test on its host again with each suspect given the\n"
    "                           fleet's value, beside untreated controls, and print the\n"
    "                           share of the gap each closes with its 95% CI and verdict;\n"
    "                           a host setting needs its agent's --allow-experiment. An\n"
    "                           experiment's own RUN prints its answer\n"
    "  anomalies RUN [--baseline RUN] [--floor X] [--format FMT]\n"
    "                           the hosts that stand apart from the fleet, slow hosts and\n"
    "                           slow links of pair tests, and the cells that moved since\n"
    "                           the baseline (default: the previous run of the same name),\n"
    "                           each with its evidence; --floor is the relative difference\n"
    "                           a flag needs (default 0.15). run --wait ends with them too\n"
    "  hosts diff H1 H2 [H3...] [--format FMT]\n"
    "                           the settings on which 2 to 16 hosts differ, side by side\n"
    "                           (their latest fingerprints), and how many they share\n"
    "  hosts fingerprint H [--format FMT]\n"
    "                           one host's latest fingerprint, item by item, and when it\n"
    "                           changed\n"
    "  compare A B [--format FMT]\n"
    "                           run A against run B: the cells both have (same host, same\n"
    "                           test) with both medians and 95% CIs, the change (B/A - 1)\n"
    "                           and whether the CIs are apart; the cells only one run has\n"
    "                           are listed under it\n"
    "  trends --host H --test T [--metric M] [--format FMT]\n"
    "                           one host's (or client->server pair's) cell of one test\n"
    "                           across the ended runs: finished time (UTC), run, median\n"
    "                           and 95% CI, and whether that run's analysis flagged it;\n"
    "                           T is a test's id (sockmatrix tests) or any part of its\n"
    "                           label that names one test, in any case: after make demo,\n"
    "                           sockmatrix trends --host h2 --test 'stream tcp lines'\n"
    "  schedules [--format FMT]\n"
    "                           the recurring runs: when each fires next, paused, its\n"
    "                           last run and how many runs it started\n"
    "  schedule add --name N (--preset NAME | --spec FILE) (--every D | --cron EXPR)\n"
    "      [--hosts a,b] [--webhook URL]\n"
    "                           a recurring run: every D (\"30s\", \"15m\", \"6h\", \"1d\",\n"
    "                           at least 10 s) or on a 5-field cron expression (UTC);\n"
    "                           --webhook hears of new flags and regressions, signed\n"
    "                           with a secret printed once here\n"
    "  schedule pause|resume|delete ID\n"
    "                           stop firing it for now, fire again, or drop it (its runs\n"
    "                           stay)\n"
    "  schedule rotate-secret ID  a new webhook secret, printed once; the old one signs\n"
    "                           no more\n"
    "  --disturbed include|exclude  (export, anomalies, compare, trends, run --wait)\n"
    "                           samples measured while the host was disturbed are counted\n"
    "                           per cell and left out of the statistics (exclude, the\n"
    "                           default); include puts them back\n"
    "\n"
    "Options:\n"
    "  --coordinator URL        the coordinator (default $SOCKMATRIX_COORDINATOR, else\n"
    "                           " SM_CLI_URL_DEFAULT ")\n"
    "  --token-file PATH        a dashboard token: one line, mode 0600. The operate token\n"
    "                           is needed for run, cancel and schedule changes; a read\n"
    "                           token does every other command. Off loopback every\n"
    "                           command needs one of them\n"
    "  --cacert FILE            the PEM certificate(s) that vouch for an https://\n"
    "                           coordinator (a lab CA, or its self-signed certificate);\n"
    "                           default: the system's trusted CAs\n"
    "  --insecure-http          send the token over http:// to a host that is not loopback\n"
    "                           (in clear: refused without it)\n"
    "  --help, --version\n"
    "\n"
    "A mistyped command or option gets \"did you mean\" the nearest one. sockmatrix help\n"
    "CMD (or CMD --help) prints CMD's part of this.\n"
    "\n"
    "Exit status: 0 success; 1 the coordinator refused or could not be reached, the run\n"
    "failed or was cancelled, or --wait gave up; 2 a bad option or argument (a --test that\n"
    "names several tests or none, a --cell the run does not have, a host that no run or\n"
    "agent has).\n";

const char *sm_cli_usage(void)
{
    return usage;
}

/* Whether line[0..n) is the first line of a command's entry: two blanks, then a letter. */
static bool entry_start(const char *line, size_t n)
{
    return n > 2 && line[0] == ' ' && line[1] == ' ' && line[2] >= 'a' && line[2] <= 'z';
}

/* Whether word is the first word of the entry at line (after its two blanks). */
static bool entry_of(const char *line, const char *word)
{
    const size_t w = strlen(word);
    return strncmp(line + 2, word, w) == 0 && (line[2 + w] == ' ' || line[2 + w] == '\n');
}

size_t sm_cli_usage_of(const char *cmd, char *buf, size_t len)
{
    const char *from = strstr(usage, "Commands:\n"), *to = strstr(usage, "\nOptions:\n");
    size_t at = 0, found = 0;
    if (len)
        buf[0] = '\0';
    if (!from || !to || !cmd || !*cmd)
        return 0;
    bool in = false;
    for (const char *line = strchr(from, '\n') + 1; line < to;) {
        const char *end = strchr(line, '\n');
        const size_t n = (size_t)(end - line) + 1;
        if (entry_start(line, n) || strncmp(line, "  --", 4) == 0) {
            /* An option's entry lists the commands that take it: "(export, anomalies, ...)" */
            const char *paren = strncmp(line, "  --", 4) == 0 ? strchr(line, '(') : NULL;
            bool named = false;
            for (const char *p = paren; p && p < end && !named; p = strpbrk(p + 1, " (,")) {
                const char *w = p + 1;
                named = strncmp(w, cmd, strlen(cmd)) == 0 && strchr(" ,)", w[strlen(cmd)]);
            }
            in = paren ? named : entry_of(line, cmd);
            found += in && !paren;
        }
        if (in) {
            if (at + n < len)
                memcpy(buf + at, line, n);
            at += n;
        }
        line = end + 1;
    }
    if (!found) {
        if (len)
            buf[0] = '\0';
        return 0;
    }
    static const char tail[] = "\nThe options every command takes, the formats and the exit "
                               "status: sockmatrix --help\n";
    if (at + sizeof tail <= len)
        memcpy(buf + at, tail, sizeof tail);
    else if (len)
        buf[at < len ? at : len - 1] = '\0';
    return at + sizeof tail - 1;
}
