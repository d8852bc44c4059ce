/* Option parsing for sockmatrix-agent --once, first half: the command line into the options as
 * typed (resolve.c makes the run's tests of them). */
#include "agent/once/internal.h"
#include "agent/runner/affinity.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <stddef.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "proto/log.h"

enum {
    OPT_ONCE = 256,
    OPT_WORKLOAD,
    OPT_TRANSPORT,
    OPT_MSG_SIZE,
    OPT_COUNT,
    OPT_BYTES,
    OPT_DURATION,
    OPT_FRAMING,
    OPT_NODELAY,
    OPT_CORK,
    OPT_SNDBUF,
    OPT_RCVBUF,
    OPT_READ_SIZE,
    OPT_REQ_SIZE,
    OPT_RESP_SIZE,
    OPT_REPETITIONS,
    OPT_MAX_REPS,
    OPT_CI_REL,
    OPT_WARMUP,
    OPT_TIME_LIMIT,
    OPT_FORMAT,
    OPT_PRESET,
    OPT_QUIET,
    OPT_LOG_LEVEL,
    OPT_SOCK_DIR,
    OPT_TEST_FAULT,
    OPT_AFFINITY,
    OPT_CLIENT,
    OPT_URL,
    OPT_CONNECTIONS,
    OPT_REPEAT,
    OPT_BUFFER_SIZE,
    OPT_FRESH_CONNECT,
    OPT_HTTP2,
    OPT_TLS,
    OPT_VERIFY,
    OPT_HELP,
    OPT_VERSION,
    OPT_DISTURBED,
    OPT_FINGERPRINT,
    OPT_DATA_ADDR,
};

static const struct option long_opts[] = {
    {"once", no_argument, NULL, OPT_ONCE},
    {"workload", required_argument, NULL, OPT_WORKLOAD},
    {"transport", required_argument, NULL, OPT_TRANSPORT},
    {"msg-size", required_argument, NULL, OPT_MSG_SIZE},
    {"count", required_argument, NULL, OPT_COUNT},
    {"bytes", required_argument, NULL, OPT_BYTES},
    {"duration-ms", required_argument, NULL, OPT_DURATION},
    {"framing", required_argument, NULL, OPT_FRAMING},
    {"nodelay", optional_argument, NULL, OPT_NODELAY},
    {"cork", no_argument, NULL, OPT_CORK},
    {"sndbuf", required_argument, NULL, OPT_SNDBUF},
    {"rcvbuf", required_argument, NULL, OPT_RCVBUF},
    {"read-size", required_argument, NULL, OPT_READ_SIZE},
    {"req-size", required_argument, NULL, OPT_REQ_SIZE},
    {"resp-size", required_argument, NULL, OPT_RESP_SIZE},
    {"repetitions", required_argument, NULL, OPT_REPETITIONS},
    {"max-repetitions", required_argument, NULL, OPT_MAX_REPS},
    {"ci-rel", required_argument, NULL, OPT_CI_REL},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"time-limit-ms", required_argument, NULL, OPT_TIME_LIMIT},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"preset", required_argument, NULL, OPT_PRESET},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"disturbed", required_argument, NULL, OPT_DISTURBED},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"sock-dir", required_argument, NULL, OPT_SOCK_DIR},
    {"test-fault", required_argument, NULL, OPT_TEST_FAULT},
    {"affinity", required_argument, NULL, OPT_AFFINITY},
    {"client", required_argument, NULL, OPT_CLIENT},
    {"url", required_argument, NULL, OPT_URL},
    {"connections", required_argument, NULL, OPT_CONNECTIONS},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"buffer-size", required_argument, NULL, OPT_BUFFER_SIZE},
    {"fresh-connect", no_argument, NULL, OPT_FRESH_CONNECT},
    {"http2", no_argument, NULL, OPT_HTTP2},
    {"tls", no_argument, NULL, OPT_TLS},
    {"verify", no_argument, NULL, OPT_VERIFY},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {"fingerprint", no_argument, NULL, OPT_FINGERPRINT},
    {"data-addr", required_argument, NULL, OPT_DATA_ADDR},
    {NULL, 0, NULL, 0},
};

static const char usage[] =
    "Usage: sockmatrix-agent --once [options]\n"
    "       sockmatrix-agent --once --preset seed-tcp-unix\n"
    "       sockmatrix-agent --once --workload http --client thread,pool,multi\n"
    "\n"
    "Runs a test on this machine, both ends local, and prints a comparison of the\n"
    "transports: median with its 95% confidence interval, CPU per side, ratios.\n"
    "\n"
    "Test:\n"
    "  --workload stream|rr|connect|http  what runs on the wire (default stream)\n"
    "  --transport LIST       tcp, unix or both, comma-separated (default tcp,unix);\n"
    "                         repetitions alternate between them in this order\n"
    "  --msg-size N           stream: bytes per write; framing=lines: bytes per line\n"
    "                         without CRLF (default 128K)\n"
    "  --count N              messages (stream), round trips (rr), connections (connect)\n"
    "  --bytes N              stream: total payload instead of --count\n"
    "  --duration-ms N        run for N ms instead of a count\n"
    "  --framing raw|lines    stream: raw messages, or the 2010 line protocol\n"
    "                         (profile_start, N lines + CRLF, profile_end)\n"
    "  --nodelay[=off,on]     TCP_NODELAY on both ends; a list runs both variants\n"
    "  --cork                 TCP_CORK on the stream sender\n"
    "  --sndbuf N, --rcvbuf N SO_SNDBUF / SO_RCVBUF on both ends (default: kernel)\n"
    "  --read-size N          receiver read size (default 128K or msg-size)\n"
    "  --req-size N, --resp-size N  rr: request and response bytes (default 1)\n"
    "  --time-limit-ms N      a job that runs longer fails (default 60000)\n"
    "HTTP (--workload http; libcurl against the built-in source on loopback, or --url):\n"
    "  --client LIST          thread (a new thread per transfer), pool (reused threads),\n"
    "                         multi (one event loop); repetitions alternate between them\n"
    "                         in this order (default thread,pool,multi)\n"
    "  --bytes N              size of every body (default 16M from the built-in source)\n"
    "  --repeat N             rounds per job; the first is reported apart (default 5)\n"
    "  --connections N        simultaneous transfers per round (default 1, max 64)\n"
    "  --fresh-connect        a new connection per transfer instead of keep-alive\n"
    "  --buffer-size N        libcurl's receive buffer (default libcurl's 16K)\n"
    "  --http2                ask for HTTP/2 where the server offers it (TLS ALPN)\n"
    "  --tls                  https to the built-in source, its key pinned\n"
    "  --url URL              fetch this instead of the built-in source\n"
    "  --verify               with --url: the body is the pattern (--write-pattern)\n"
    "  --affinity C,S         pin the client (sender) thread to CPU C and the server\n"
    "                         (receiver) thread to CPU S; C,C shares one CPU. Without\n"
    "                         it the scheduler places them; the report says where\n"
    "                         they ran, since sharing a CPU can change the result\n"
    "Sizes take binary suffixes: 64K = 65536, 1M, 1G.\n"
    "\n"
    "Repetitions:\n"
    "  --repetitions N|auto   measured repetitions per variant (default 7, max 1000);\n"
    "                         auto: 5, then one more round of every variant until\n"
    "                         each one's 95% CI of the median is within +-F of it\n"
    "  --ci-rel F             auto: the CI's half-width F x the median (default 0.05)\n"
    "  --max-repetitions N    auto: stop there, CI tight or not (default 30)\n"
    "  --warmup N             warm-up repetitions first, reported apart (default 1)\n"
    "  --preset NAME          options given with it override its values:\n"
    "                         seed-tcp-unix: the 2010 test (8192 lines of 128 bytes,\n"
    "                         TCP with and without TCP_NODELAY against a Unix socket);\n"
    "                         seed-http: the 2009 test (51711600-byte bodies over one\n"
    "                         plain connection; thread, pool and multi alternated).\n"
    "                         Its follow-ups (4 connections, HTTPS) are in the\n"
    "                         coordinator's seed-http; here: --preset seed-http\n"
    "                         --bytes 12927900 --repeat 5 --connections 4 --tls\n"
    "\n"
    "Output:\n"
    "  --format table|json|csv  (default table); units: MB = 10^6 bytes, us = microseconds\n"
    "  --quiet                no progress lines on stderr\n"
    "  --disturbed include|exclude  samples measured while the host was disturbed\n"
    "                         (another task held a measuring CPU, steal; see\n"
    "                         docs/analysis.md) are counted per variant and left out of\n"
    "                         the statistics (exclude, the default) or kept in\n"
    "  --log-level LEVEL      error, warning, notice, info, debug\n"
    "  --sock-dir DIR         where Unix sockets are made (default: a new temporary dir)\n"
    "  --test-fault KIND      for sockmatrix's own tests: corrupt, short or stall the\n"
    "                         stream sender or the http source, or pin a wrong key\n"
    "                         (wrong-pin), to prove the other side's checks\n"
    "  --help, --version\n"
    "\n"
    "  sockmatrix-agent --fingerprint [--data-addr IP]  prints this host's fingerprint\n"
    "                         (JSON: kernel, sysctls, interfaces and qdiscs, CPUs,\n"
    "                         limits, versions; docs/fingerprint.md) as seen from this\n"
    "                         network namespace; --data-addr names the address whose\n"
    "                         interface is reported as info.data_if\n"
    "  sockmatrix-agent --write-pattern SIZE > FILE  writes the bytes the built-in\n"
    "                         source serves, for another server and --url --verify\n"
    "\n"
    "Exit status: 0 all jobs passed, 1 a job failed (the report says which and why),\n"
    "2 bad usage.\n";

const char *sm_opts_usage(void)
{
    return usage;
}

static int bad_value(sm_error *err, const char *opt, const char *val, const char *what)
{
    return sm_error_set(err, SM_EINVAL, "--%s: '%s' is not %s", opt, val, what);
}

static int size_arg(const char *opt, const char *val, uint64_t max, uint64_t *out, sm_error *err)
{
    if (sm_parse_size(val, out) != 0)
        return bad_value(err, opt, val, "a size (examples: 128, 64K, 1M)");
    if (*out > max)
        return sm_error_set(err, SM_EINVAL, "--%s: %s is above the maximum %llu", opt, val,
                            (unsigned long long)max);
    return 0;
}

static int u32_size_arg(const char *opt, const char *val, uint32_t *out, sm_error *err)
{
    uint64_t v;
    int rc = size_arg(opt, val, UINT32_MAX, &v, err);
    if (!rc)
        *out = (uint32_t)v;
    return rc;
}

static int num_arg(const char *opt, const char *val, uint64_t max, uint64_t *out, sm_error *err)
{
    if (sm_parse_u64(val, out) != 0)
        return bad_value(err, opt, val, "a whole number");
    if (*out > max)
        return sm_error_set(err, SM_EINVAL, "--%s: %s is above the maximum %llu", opt, val,
                            (unsigned long long)max);
    return 0;
}

static int parse_transports(const char *val, sm_once_opts *o, sm_error *err)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", val);
    o->n_transports = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        sm_transport_kind k;
        if (sm_transport_parse(t, &k) != 0)
            return bad_value(err, "transport", t, "a transport (tcp, unix)");
        for (size_t i = 0; i < o->n_transports; i++)
            if (o->transports[i] == k)
                return sm_error_set(err, SM_EINVAL, "--transport: %s is listed twice", t);
        o->transports[o->n_transports++] = k;
    }
    if (o->n_transports == 0)
        return bad_value(err, "transport", val, "a list of transports (tcp, unix)");
    return 0;
}

static int parse_clients(const char *val, sm_once_opts *o, sm_error *err)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", val);
    o->n_clients = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        sm_http_client k;
        if (sm_http_client_parse(t, &k) != 0)
            return bad_value(err, "client", t, "a client model (thread, pool, multi)");
        for (size_t i = 0; i < o->n_clients; i++)
            if (o->clients[i] == k)
                return sm_error_set(err, SM_EINVAL, "--client: %s is listed twice", t);
        o->clients[o->n_clients++] = k;
    }
    if (o->n_clients == 0)
        return bad_value(err, "client", val, "a list of client models (thread, pool, multi)");
    return 0;
}

static int parse_nodelay(const char *val, sm_once_opts *o, sm_error *err)
{
    char buf[64];
    o->n_nodelay = 0;
    if (!val) {
        o->nodelay_order[o->n_nodelay++] = true;
        return 0;
    }
    snprintf(buf, sizeof buf, "%s", val);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        bool on;
        if (strcmp(t, "on") == 0)
            on = true;
        else if (strcmp(t, "off") == 0)
            on = false;
        else
            return bad_value(err, "nodelay", t, "on or off");
        if (o->n_nodelay == 2 || (o->n_nodelay == 1 && o->nodelay_order[0] == on))
            return sm_error_set(err, SM_EINVAL, "--nodelay: %s is listed twice", t);
        o->nodelay_order[o->n_nodelay++] = on;
    }
    if (o->n_nodelay == 0)
        return bad_value(err, "nodelay", val, "on, off or on,off");
    return 0;
}

static int parse_fault(const char *val, sm_fault *out, sm_error *err)
{
    static const char *const names[] = {"none", "corrupt", "short", "stall", "wrong-pin"};
    for (int i = 0; i < 5; i++)
        if (strcmp(val, names[i]) == 0) {
            *out = (sm_fault)i;
            return 0;
        }
    return bad_value(err, "test-fault", val, "a fault (corrupt, short, stall, wrong-pin)");
}

/* The options that take one uint32 field of sm_params: a size (64K) or a whole number. */
typedef struct u32_opt {
    int code;
    const char *name;
    bool size; /* binary suffixes allowed */
    size_t given_off, field_off;
} u32_opt;

#define U32_OPT(code, name, size, flag, field)                                                     \
    {                                                                                              \
        code, name, size, offsetof(given, flag), offsetof(given, v) + offsetof(sm_params, field)   \
    }
static const u32_opt u32_opts[] = {
    U32_OPT(OPT_MSG_SIZE, "msg-size", true, msg_size, msg_size),
    U32_OPT(OPT_SNDBUF, "sndbuf", true, sndbuf, sndbuf),
    U32_OPT(OPT_RCVBUF, "rcvbuf", true, rcvbuf, rcvbuf),
    U32_OPT(OPT_READ_SIZE, "read-size", true, read_size, read_size),
    U32_OPT(OPT_REQ_SIZE, "req-size", true, req_size, req_size),
    U32_OPT(OPT_RESP_SIZE, "resp-size", true, resp_size, resp_size),
    U32_OPT(OPT_BUFFER_SIZE, "buffer-size", true, buffer_size, buffer_size),
    U32_OPT(OPT_DURATION, "duration-ms", false, duration, duration_ms),
    U32_OPT(OPT_TIME_LIMIT, "time-limit-ms", false, time_limit, time_limit_ms),
    U32_OPT(OPT_CONNECTIONS, "connections", false, connections, connections),
    U32_OPT(OPT_REPEAT, "repeat", false, repeat, repeat),
};
#undef U32_OPT

/* Returns 1 when c is none of the table's options. */
static int parse_u32_opt(int c, const char *val, given *g, sm_error *err)
{
    for (size_t i = 0; i < sizeof u32_opts / sizeof u32_opts[0]; i++) {
        const u32_opt *t = &u32_opts[i];
        if (t->code != c)
            continue;
        *(bool *)((char *)g + t->given_off) = true;
        uint32_t *field = (uint32_t *)((char *)g + t->field_off);
        if (t->size)
            return u32_size_arg(t->name, val, field, err);
        uint64_t v;
        int rc = num_arg(t->name, val, UINT32_MAX, &v, err);
        if (!rc)
            *field = (uint32_t)v;
        return rc;
    }
    return 1;
}

/* A count of repetitions: at most max, at least 1. */
static int reps_arg(const char *opt, const char *val, uint32_t max, uint32_t *out, sm_error *err)
{
    uint64_t v;
    int rc = num_arg(opt, val, max, &v, err);
    if (rc)
        return rc;
    if (v == 0)
        rc = sm_error_set(err, SM_EINVAL, "--%s: 0 is below the minimum 1", opt);
    *out = (uint32_t)v;
    return rc;
}

/* The test's own options, and the lists that land in cli until the preset is applied.
 * Returns 1 when c is not one of them. */
static int parse_test_opt(int c, const char *val, sm_once_opts *cli, given *g, sm_error *err)
{
    uint64_t v;
    int rc = 0;
    switch (c) {
    case OPT_WORKLOAD:
        g->workload = true;
        if (sm_workload_parse(val, &g->v.workload) != 0)
            rc = bad_value(err, "workload", val, "a workload (stream, rr, connect, http)");
        return rc;
    case OPT_TRANSPORT:
        g->transports = true;
        return parse_transports(val, cli, err);
    case OPT_COUNT:
        g->count = true;
        return num_arg("count", val, UINT64_MAX, &g->v.count, err);
    case OPT_BYTES:
        g->bytes = true;
        return size_arg("bytes", val, UINT64_MAX, &g->v.bytes, err);
    case OPT_FRAMING:
        g->framing = true;
        if (sm_framing_parse(val, &g->v.framing) != 0)
            rc = bad_value(err, "framing", val, "a framing (raw, lines)");
        return rc;
    case OPT_NODELAY:
        g->nodelay = true;
        return parse_nodelay(val, cli, err);
    case OPT_CORK:
        g->cork = g->v.cork = true;
        return 0;
    case OPT_REPETITIONS:
        g->repetitions = true;
        cli->reps_auto = strcmp(val, "auto") == 0;
        return cli->reps_auto
                   ? 0
                   : reps_arg("repetitions", val, SM_REPETITIONS_MAX, &cli->repetitions, err);
    case OPT_MAX_REPS:
        g->max_reps = true;
        return reps_arg("max-repetitions", val, SM_REPETITIONS_MAX, &cli->reps.max, err);
    case OPT_CI_REL: {
        g->ci_rel = true;
        char *end;
        cli->reps.ci_rel = strtod(val, &end);
        if (*end || end == val || !(cli->reps.ci_rel > 0 && cli->reps.ci_rel < 1))
            rc = bad_value(err, "ci-rel", val, "a fraction between 0 and 1 (0.05 is +-5%)");
        return rc;
    }
    case OPT_WARMUP:
        g->warmup = true;
        if (!(rc = num_arg("warmup", val, SM_WARMUP_MAX, &v, err)))
            cli->warmup = (uint32_t)v;
        return rc;
    case OPT_CLIENT:
        g->clients = true;
        return parse_clients(val, cli, err);
    case OPT_URL:
        g->url = true;
        if (strlen(val) > SM_URL_MAX)
            return sm_error_set(err, SM_EINVAL, "--url: longer than %u bytes", SM_URL_MAX);
        snprintf(g->v.url, sizeof g->v.url, "%s", val);
        return 0;
    case OPT_FRESH_CONNECT:
        g->fresh_connect = g->v.fresh_connect = true;
        return 0;
    case OPT_HTTP2:
        g->http2 = g->v.http2 = true;
        return 0;
    case OPT_TLS:
        g->tls = g->v.tls = true;
        return 0;
    case OPT_VERIFY:
        g->verify = g->v.verify = true;
        return 0;
    default:
        return parse_u32_opt(c, val, g, err);
    }
}

static int parse_format(const char *val, sm_once_opts *o, sm_error *err)
{
    static const char *const names[] = {"table", "json", "csv"};
    static const sm_format formats[] = {SM_FMT_TABLE, SM_FMT_JSON, SM_FMT_CSV};
    for (int i = 0; i < 3; i++)
        if (strcmp(val, names[i]) == 0) {
            o->format = formats[i];
            return 0;
        }
    return bad_value(err, "format", val, "a format (table, json, csv)");
}

/* How the run is reported and where it runs; name is the option as typed, for the errors
 * of getopt itself. */
static int parse_run_opt(int c, const char *val, const char *name, sm_once_opts *o, sm_error *err)
{
    switch (c) {
    case OPT_ONCE:
        o->once = true;
        return 0;
    case OPT_FORMAT:
        return parse_format(val, o, err);
    case OPT_PRESET:
        snprintf(o->preset, sizeof o->preset, "%s", val);
        return 0;
    case OPT_QUIET:
        o->quiet = true;
        return 0;
    case OPT_DISTURBED:
        if (strcmp(val, "include") != 0 && strcmp(val, "exclude") != 0)
            return bad_value(err, "disturbed", val, "include or exclude");
        o->include_disturbed = strcmp(val, "include") == 0;
        return 0;
    case OPT_LOG_LEVEL:
        if ((o->log_level = sm_log_parse_level(val)) < 0)
            return bad_value(err, "log-level", val,
                             "a level (error, warning, notice, info, debug)");
        return 0;
    case OPT_SOCK_DIR:
        if (strlen(val) >= sizeof o->sock_dir - 32)
            return sm_error_set(err, SM_EINVAL, "--sock-dir: path is too long");
        snprintf(o->sock_dir, sizeof o->sock_dir, "%s", val);
        return 0;
    case OPT_TEST_FAULT:
        return parse_fault(val, &o->fault, err);
    case OPT_AFFINITY: {
        int rc = sm_affinity_parse(val, &o->client_cpu, &o->server_cpu, err);
        o->pin = rc == 0;
        return rc;
    }
    case 'h':
    case OPT_HELP:
        o->help = true;
        return 0;
    case OPT_VERSION:
        o->version = true;
        return 0;
    case OPT_FINGERPRINT:
        o->fingerprint = true;
        return 0;
    case OPT_DATA_ADDR: {
        unsigned char a[sizeof(struct in6_addr)];
        if (inet_pton(AF_INET, val, a) != 1 && inet_pton(AF_INET6, val, a) != 1)
            return bad_value(err, "data-addr", val, "an IP address");
        snprintf(o->data_addr, sizeof o->data_addr, "%s", val);
        return 0;
    }
    case ':':
        return sm_error_set(err, SM_EINVAL, "option '%s' needs a value", name);
    default:
        return sm_error_set(err, SM_EINVAL, "unknown option '%s' (see --help)", name);
    }
}

static void set_defaults(sm_once_opts *o)
{
    memset(o, 0, sizeof *o);
    sm_params_init(&o->base, SM_WL_STREAM);
    o->transports[0] = SM_TR_TCP;
    o->transports[1] = SM_TR_UNIX;
    o->n_transports = 2;
    o->nodelay_order[0] = false;
    o->n_nodelay = 1;
    o->clients[0] = SM_HTTP_THREAD;
    o->clients[1] = SM_HTTP_POOL;
    o->clients[2] = SM_HTTP_MULTI;
    o->n_clients = 3;
    o->repetitions = 7;
    o->warmup = 1;
    o->log_level = -1;
}

/* The command line into o (the run's own options), cli (lists and repetitions, which wait
 * for the preset) and g (the test's fields). */
static int parse_args(int argc, char **argv, sm_once_opts *o, sm_once_opts *cli, given *g,
                      sm_error *err)
{
    int rc = 0, c;
    opterr = 0;
    optind = 0; /* 0 rather than 1: a full re-initialisation, so tests can parse repeatedly */
    while (!rc && (c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
        const char *name = optind > 1 && optind <= argc ? argv[optind - 1] : "?";
        rc = parse_test_opt(c, optarg, cli, g, err);
        if (rc == 1)
            rc = parse_run_opt(c, optarg, name, o, err);
    }
    if (rc)
        return rc;
    if (optind < argc)
        return sm_error_set(err, SM_EINVAL, "unexpected argument '%s' (see --help)", argv[optind]);
    return 0;
}

int sm_opts_parse(int argc, char **argv, sm_once_opts *o, sm_error *err)
{
    given g;
    memset(&g, 0, sizeof g);
    set_defaults(o);
    sm_once_opts cli = *o; /* list-valued options land here until the preset is applied */
    int rc = parse_args(argc, argv, o, &cli, &g, err);
    if (rc || o->help || o->version)
        return rc;
    if (o->data_addr[0] && !o->fingerprint)
        return sm_error_set(err, SM_EINVAL,
                            "--data-addr: goes with --fingerprint (or --coordinator)");
    if (o->fingerprint)
        return 0;
    return opts_resolve(o, &cli, &g, err);
}
