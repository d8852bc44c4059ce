/* sockmatrix-coordinator: the lab's coordinator daemon, and `keygen`. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "coordinator/control/control.h"
#include "coordinator/reports/reports.h"
#include "coordinator/schema/webhook_url.h"
#include "coordinator/server/guard.h"
#include "coordinator/server/server.h"
#include "coordinator/server/tokenfile.h"
#include "proto/envelope.h"
#include "proto/log.h"
#include "proto/signals.h"

/* Set by the signal handler: a signal is process-wide, so its flag is too. */
static volatile sig_atomic_t stop_flag;

static const char usage[] =
    "Usage: sockmatrix-coordinator --key-file PATH [options]\n"
    "       sockmatrix-coordinator keygen [--token [--scope operate|read]] PATH\n"
    "       sockmatrix-coordinator keygen --agent NAME --key-file FLEET_KEY PATH\n"
    "\n"
    "Runs the lab's coordinator: agents long-poll it over nanomsg with signed messages; it\n"
    "queues jobs, stores every result exactly once in SQLite, and serves the HTTP API.\n"
    "\n"
    "  --listen tcp://ADDR:PORT  where agents connect (default tcp://0.0.0.0:7100)\n"
    "  --http ADDR:PORT          HTTP API (default 127.0.0.1:8080; port 0 picks one)\n"
    "  --db PATH                 SQLite store (default sockmatrix.db)\n"
    "  --key-file PATH           the fleet key (64 hex digits, mode 0600); required. Each\n"
    "                            agent signs with its own key derived from it (keygen --agent)\n"
    "  --previous-key-file PATH  the fleet key before a rotation: agents still on their key\n"
    "                            derived from it are accepted, and logged, for a grace period\n"
    "                            (default: the credential \"fleet.key.previous\" under\n"
    "                            systemd, if given)\n"
    "  --previous-key-grace-ms N how long the previous key is accepted after the start\n"
    "                            (default 86400000: 24 h)\n"
    "  --token-file PATH         the dashboard token (16 to 255 characters); required when\n"
    "                            --http is not loopback, where it guards reading the API and\n"
    "                            /ws too (default: the credential \"token\" under systemd).\n"
    "                            The operate token: it may do everything\n"
    "  --read-token-file PATH    read-only tokens, one a line (at most 64): they read the\n"
    "                            API, /ws and /metrics, and get 403 on anything that changes\n"
    "                            state. Needs --token-file (default: the credential\n"
    "                            \"read-tokens\" under systemd, if given)\n"
    "  --http-host NAME          another name browsers reach the HTTP API by (a DNS name, a\n"
    "                            proxy's); repeatable. The listen address, localhost on\n"
    "                            loopback and any IP literal on 0.0.0.0/:: need none\n"
    "  --http-max-conns N        open HTTP and WebSocket connections at most (default 256)\n"
    "  --tls-cert PATH           serve HTTPS and wss:// with this PEM certificate (chain)\n"
    "  --tls-key PATH            and its PEM private key (mode 0600); both or neither\n"
    "                            (default: the credentials \"tls.crt\" and \"tls.key\" under\n"
    "                            systemd, if given)\n"
    "  --insecure-http           serve plain HTTP off loopback, the token in clear: without\n"
    "                            it an --http off loopback needs --tls-cert and --tls-key\n"
    "  --hold-ms N               how long a poll is held at least (default 5000; an agent\n"
    "                            silent for 3 x its hold is lost)\n"
    "  --poll-rate N             idle polls a second the fleet is held to (default 400): a\n"
    "                            fleet of more than N x hold agents is held longer, up to\n"
    "                            60 s; 0 keeps every hold at --hold-ms\n"
    "  --lost-grace-ms N         how long a lost host's queued run jobs wait for it to come\n"
    "                            back before they fail (default 60000; 0: at once)\n"
    "  --max-agents N            agents that may register (default 4096); a poll from a\n"
    "                            new name beyond it is refused, known agents keep working\n"
    "  --report-memory MB        what building one report (a run's table, anomalies, a\n"
    "                            comparison) may hold, in MB (default 512); a report that\n"
    "                            would need more answers 503 naming the bound\n"
    "  --data-addr-allow LIST    data addresses agents may announce besides public and\n"
    "                            private unicast: comma-separated loopback, link-local,\n"
    "                            multicast, any, or ADDR/PREFIX (default: none of them)\n"
    "  --webhook-allow LIST      where webhooks may go besides public addresses: comma-\n"
    "                            separated loopback, link-local, private, multicast, any,\n"
    "                            or ADDR/PREFIX (default: none of them)\n"
    "  --log-level LEVEL         error, warning, notice (default), info, debug\n"
    "  --ready-fd N              write \"ready ...\" to descriptor N once listening\n"
    "  --web-dir DIR             the dashboard's files, served at / (default: the build's or\n"
    "                            the installed web folder, when there is one)\n"
    "  --help, --version\n"
    "\n"
    "keygen PATH writes a new fleet key: 32 random bytes as hex, mode 0600. keygen --token\n"
    "PATH writes a new operate token (for --token-file) the same way; with --scope read, a\n"
    "read-only token (a line of --read-token-file). keygen --agent NAME\n"
    "--key-file FLEET_KEY PATH writes agent NAME's own key (HKDF-SHA256 of the fleet key and\n"
    "the name), the one its --key-file takes; the fleet key stays on the coordinator. None\n"
    "overwrites a file.\n";

static bool has_index(const char *dir)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/index.html", dir);
    return n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0;
}

/* The dashboard laid out beside this binary (bin/../share/sockmatrix/web, in the build tree
 * as in the package), else the configured install path; NULL when neither has one. */
static const char *default_web_dir(char *buf, size_t len)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            int k = snprintf(buf, len, "%s/../share/sockmatrix/web", exe);
            if (k > 0 && (size_t)k < len && has_index(buf))
                return buf;
        }
    }
    return has_index(SM_WEB_DIR_INSTALLED) ? SM_WEB_DIR_INSTALLED : NULL;
}

/* One line on stderr naming what is wrong; returns the usage exit status. */
__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sockmatrix-coordinator: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

/* ADDR:PORT or [V6]:PORT into addr and port. */
static int split_hostport(const char *s, char *addr, size_t alen, int *port)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s)
        return -1;
    size_t n = (size_t)(colon - s);
    if (s[0] == '[' && colon[-1] == ']') {
        s++;
        n -= 2;
    }
    if (n >= alen)
        return -1;
    memcpy(addr, s, n);
    addr[n] = '\0';
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || p < 0 || p > 65535)
        return -1;
    *port = (int)p;
    return 0;
}

/* The token file: one line of 16 to SM_TOKEN_MAX characters, mode 0600 like the key. A longer
 * line is refused, not cut: a cut token would differ from the one its holders send. */
static int load_token(const char *path, char *out, size_t len)
{
    struct stat st;
    FILE *f = fopen(path, "r");
    if (!f)
        return fail("cannot read the token file: %s", strerror(errno));
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077)) {
        fclose(f);
        return fail("token file %s is readable by group or others: chmod 600 it", path);
    }
    char *ok = fgets(out, (int)len, f);
    if (!ok) {
        fclose(f);
        return fail("token file %s is empty", path);
    }
    const bool whole = strchr(out, '\n') != NULL || feof(f);
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
    if (!whole || strlen(out) > SM_TOKEN_MAX)
        return fail("token in %s is longer than %d characters", path, SM_TOKEN_MAX);
    if (strlen(out) < 16)
        return fail("token in %s is shorter than 16 characters", path);
    return 0;
}

/* keygen --agent NAME --key-file FLEET PATH (the options in any order, PATH last). */
static int keygen_agent(int argc, char **argv)
{
    const char *name = NULL, *fleet = NULL, *path = NULL;
    static const char use[] =
        "usage: sockmatrix-coordinator keygen --agent NAME --key-file FLEET_KEY PATH";
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--agent") == 0 && i + 1 < argc && !name)
            name = argv[++i];
        else if (strcmp(argv[i], "--key-file") == 0 && i + 1 < argc && !fleet)
            fleet = argv[++i];
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else
            return fail("%s", use);
    }
    if (!name || !fleet || !path)
        return fail("%s", use);
    if (!sm_name_valid(name) || sm_name_reserved(name))
        return fail("--agent: '%s' is not an agent name (1 to %d of A-Z a-z 0-9 . _ -, not "
                    "\"%s\")",
                    name, SM_NAME_MAX, SM_COORDINATOR);
    sm_error err = {0};
    uint8_t key[SM_KEY_LEN], own[SM_KEY_LEN];
    if (sm_key_load(fleet, key, &err) != 0)
        return fail("--key-file: %s", err.msg);
    int rc = sm_key_derive(key, name, own, &err);
    if (rc == 0)
        rc = sm_key_write(path, own, &err);
    OPENSSL_cleanse(key, sizeof key);
    OPENSSL_cleanse(own, sizeof own);
    if (rc != 0) {
        fprintf(stderr, "sockmatrix-coordinator: %s\n", err.msg);
        return 1;
    }
    printf("wrote agent %s's key to %s (mode 0600): give it to that agent's --key-file\n", name,
           path);
    return 0;
}

/* keygen [--token [--scope operate|read]] PATH, or keygen --agent NAME --key-file FLEET PATH. */
static int keygen(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--agent") == 0)
            return keygen_agent(argc, argv);
    static const char use[] =
        "usage: sockmatrix-coordinator keygen [--token [--scope operate|read]] PATH";
    bool token = false;
    const char *scope = NULL, *path = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--token") == 0 && !token)
            token = true;
        else if (strcmp(argv[i], "--scope") == 0 && i + 1 < argc && !scope)
            scope = argv[++i];
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else
            return fail("%s", use);
    }
    if (!path || (scope && !token))
        return fail("%s", use);
    if (scope && strcmp(scope, "operate") != 0 && strcmp(scope, "read") != 0)
        return fail("--scope: '%s' is not operate or read", scope);
    const bool read = scope && strcmp(scope, "read") == 0;
    /* A token is made like a key: 256 random bits as hex are past guessing, and one line
     * of 64 characters is what --token-file and --read-token-file read. Both scopes look
     * alike: the file the coordinator finds a token in gives its scope. */
    sm_error err = {0};
    if (sm_key_generate(path, &err) != 0) {
        fprintf(stderr, "sockmatrix-coordinator: %s\n", err.msg);
        return 1;
    }
    if (!token)
        printf("wrote a new fleet key to %s (mode 0600)\n", path);
    else if (read)
        printf("wrote a new read token to %s (mode 0600): add its line to --read-token-file\n",
               path);
    else
        printf("wrote a new dashboard token, the operate token, to %s (mode 0600): give it to "
               "--token-file\n",
               path);
    return 0;
}

enum { HOSTS_MAX = 32, GO_ON = -1 };

/* getopt_long's values for the TLS options, above any letter. */
enum { OPT_TLS_CERT = 0x100, OPT_TLS_KEY, OPT_INSECURE_HTTP };

/* The command line, and the buffers the server's configuration points into: they live in
 * main's frame for the server's whole run. */
typedef struct opts {
    sm_server_cfg cfg;
    const char *http_hosts[HOSTS_MAX];
    const char *http, *key_file, *token_file, *prev_key_file, *read_token_file;
    sm_token_list read_tokens;
    char http_addr[64], token[SM_TOKEN_MAX + 2];
    char web_buf[4200], cred_prev[4200], cred_token[4200], cred_read[4200];
    bool insecure_http;
    char cred_tls_cert[4200], cred_tls_key[4200];
} opts;

static const struct option long_opts[] = {
    {"listen", required_argument, NULL, 'l'},
    {"http", required_argument, NULL, 'H'},
    {"db", required_argument, NULL, 'd'},
    {"key-file", required_argument, NULL, 'k'},
    {"token-file", required_argument, NULL, 't'},
    {"read-token-file", required_argument, NULL, 'T'},
    {"hold-ms", required_argument, NULL, 'o'},
    {"log-level", required_argument, NULL, 'L'},
    {"ready-fd", required_argument, NULL, 'r'},
    {"web-dir", required_argument, NULL, 'w'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"lost-grace-ms", required_argument, NULL, 'g'},
    {"max-agents", required_argument, NULL, 'M'},
    {"data-addr-allow", required_argument, NULL, 'A'},
    {"webhook-allow", required_argument, NULL, 'W'},
    {"previous-key-file", required_argument, NULL, 'p'},
    {"previous-key-grace-ms", required_argument, NULL, 'G'},
    {"http-host", required_argument, NULL, 'N'},
    {"http-max-conns", required_argument, NULL, 'C'},
    {"report-memory", required_argument, NULL, 'R'},
    {"poll-rate", required_argument, NULL, 'P'},
    {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
    {"tls-key", required_argument, NULL, OPT_TLS_KEY},
    {"insecure-http", no_argument, NULL, OPT_INSECURE_HTTP},
    {NULL, 0, NULL, 0},
};

/* A whole number from lo to hi into *out; false when val is not one. */
static bool long_in(const char *val, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(val, &end, 10);
    if (!*val || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* The options that take a number. GO_ON, or the exit status. */
static int number_option(int c, const char *val, sm_server_cfg *cfg)
{
    long v;
    switch (c) {
    case 'o':
        if (!long_in(val, 100, 60000, &v))
            return fail("--hold-ms: '%s' is not a number from 100 to 60000", val);
        cfg->hold_ms = (uint32_t)v;
        return GO_ON;
    case 'P':
        if (!long_in(val, 0, 1000000, &v))
            return fail("--poll-rate: '%s' is not a number from 0 to 1000000", val);
        cfg->poll_rate = (uint32_t)v;
        return GO_ON;
    case 'g':
        if (!long_in(val, 0, 86400000, &v))
            return fail("--lost-grace-ms: '%s' is not a number from 0 to 86400000", val);
        cfg->lost_grace_ms = (uint32_t)v;
        return GO_ON;
    case 'M':
        if (!long_in(val, 1, 1000000, &v))
            return fail("--max-agents: '%s' is not a number from 1 to 1000000", val);
        cfg->max_agents = (uint32_t)v;
        return GO_ON;
    case 'C':
        if (!long_in(val, 1, 65536, &v))
            return fail("--http-max-conns: '%s' is not a number from 1 to 65536", val);
        cfg->http_max_conns = (unsigned)v;
        return GO_ON;
    case 'R':
        if (!long_in(val, 1, 1000000, &v))
            return fail("--report-memory: '%s' is not a number of MB from 1 to 1000000", val);
        cfg->report_memory_mb = (uint32_t)v;
        return GO_ON;
    case 'r':
        if (!long_in(val, 0, 1024, &v))
            return fail("--ready-fd: '%s' is not a descriptor number", val);
        cfg->ready_fd = (int)v;
        return GO_ON;
    default: { /* 'G' */
        char *end;
        unsigned long long g = strtoull(val, &end, 10);
        if (!*val || *end || val[0] == '-' || g > 31ull * 86400000)
            return fail("--previous-key-grace-ms: '%s' is not a number from 0 to 2678400000", val);
        cfg->prev_grace_ms = g;
        return GO_ON;
    }
    }
}

/* One option; name is the option as typed. GO_ON, or the exit status. */
static int one_option(int c, char *val, const char *name, opts *o)
{
    sm_server_cfg *cfg = &o->cfg;
    switch (c) {
    case 'l':
        if (strncmp(val, "tcp://", 6) != 0)
            return fail("--listen: '%s' is not tcp://ADDR:PORT", val);
        cfg->listen_url = val;
        return GO_ON;
    case 'H':
        o->http = val;
        return GO_ON;
    case 'd':
        cfg->db_path = val;
        return GO_ON;
    case 'k':
        o->key_file = val;
        return GO_ON;
    case 't':
        o->token_file = val;
        return GO_ON;
    case 'T':
        o->read_token_file = val;
        return GO_ON;
    case 'p':
        o->prev_key_file = val;
        return GO_ON;
    case 'o':
    case 'g':
    case 'M':
    case 'C':
    case 'R':
    case 'P':
    case 'r':
    case 'G':
        return number_option(c, val, cfg);
    case 'A':
    case 'W': {
        sm_error perr = {0};
        if (sm_addr_policy_parse(c == 'A' ? &cfg->data_addr : &cfg->webhook_allow, val, &perr))
            return fail("%s", perr.msg);
        return GO_ON;
    }
    case 'N':
        if (cfg->n_http_hosts == HOSTS_MAX)
            return fail("--http-host: at most %d names", HOSTS_MAX);
        if (!*val || strlen(val) > 253 || strpbrk(val, ":/[] "))
            return fail("--http-host: '%s' is not a host name (no port, no scheme)", val);
        o->http_hosts[cfg->n_http_hosts++] = val;
        cfg->http_hosts = o->http_hosts;
        return GO_ON;
    case 'L':
        if ((sm_log_level = sm_log_parse_level(val)) < 0)
            return fail("--log-level: '%s' is not error, warning, notice, info or debug", val);
        return GO_ON;
    case 'w':
        if (!has_index(val))
            return fail("--web-dir: %s has no index.html", val);
        cfg->web_dir = val;
        return GO_ON;
    case OPT_TLS_CERT:
        cfg->tls_cert = val;
        return GO_ON;
    case OPT_TLS_KEY:
        cfg->tls_key = val;
        return GO_ON;
    case OPT_INSECURE_HTTP:
        o->insecure_http = true;
        return GO_ON;
    case 'h':
        fputs(usage, stdout);
        return 0;
    case 'V':
        printf("sockmatrix-coordinator %s\n", SM_VERSION);
        return 0;
    case ':':
        return fail("option '%s' needs a value", name);
    default:
        return fail("unknown option '%s' (see --help)", name);
    }
}

/* The command line into o. GO_ON, or the exit status. */
static int parse_args(int argc, char **argv, opts *o)
{
    o->cfg = (sm_server_cfg){.listen_url = "tcp://0.0.0.0:7100",
                             .db_path = "sockmatrix.db",
                             .hold_ms = 5000,
                             .poll_rate = SM_POLL_RATE_DEFAULT,
                             .lost_grace_ms = 60000,
                             .prev_grace_ms = 86400000,
                             .ready_fd = -1,
                             .max_agents = 4096,
                             .http_max_conns = 256,
                             .report_memory_mb = SM_REPORT_MEMORY_DEFAULT_MB};
    sm_webhook_policy_init(&o->cfg.webhook_allow);
    o->http = "127.0.0.1:8080";
    int c, rc;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1)
        if ((rc = one_option(c, optarg, argv[optind - 1], o)) != GO_ON)
            return rc;
    if (optind < argc)
        return fail("unexpected argument '%s' (see --help)", argv[optind]);
    return GO_ON;
}

/* path = $CREDENTIALS_DIRECTORY/name when systemd handed that credential over. */
static const char *credential(const char *name, char *path, size_t len)
{
    const char *cdir = getenv("CREDENTIALS_DIRECTORY");
    if (!cdir || !*cdir)
        return NULL;
    int n = snprintf(path, len, "%s/%s", cdir, name);
    return n > 0 && (size_t)n < len && access(path, F_OK) == 0 ? path : NULL;
}

/* The previous fleet key of a rotation, if there is one. GO_ON, or the exit status. */
static int load_previous_key(opts *o)
{
    sm_server_cfg *cfg = &o->cfg;
    sm_error err = {0};
    /* Under systemd the previous key of a rotation comes as the credential
     * "fleet.key.previous" (the roll-out adds it with a drop-in), as the token does. */
    if (!o->prev_key_file)
        o->prev_key_file = credential("fleet.key.previous", o->cred_prev, sizeof o->cred_prev);
    if (!o->prev_key_file)
        return GO_ON;
    if (sm_key_load(o->prev_key_file, cfg->prev_key, &err) != 0)
        return fail("--previous-key-file: %s", err.msg);
    if (CRYPTO_memcmp(cfg->prev_key, cfg->key, SM_KEY_LEN) == 0)
        return fail("--previous-key-file %s holds the same key as --key-file", o->prev_key_file);
    cfg->have_prev_key = true;
    sm_log(LOG_NOTICE, "SM-KEY-ROTATION",
           "accepting agents on the previous fleet key for %llu ms after this start",
           (unsigned long long)cfg->prev_grace_ms);
    return GO_ON;
}

/* The dashboard token, required off loopback. GO_ON, or the exit status. */
static int load_dashboard_token(opts *o)
{
    /* Under systemd a token handed over as the credential "token" (LoadCredential=token:...)
     * needs no option: the unit's command line stays the same with or without one. */
    if (!o->token_file)
        o->token_file = credential("token", o->cred_token, sizeof o->cred_token);
    if (o->token_file) {
        int rc = load_token(o->token_file, o->token, sizeof o->token);
        if (rc)
            return rc;
        o->cfg.token = o->token;
    } else if (!sm_guard_is_loopback(o->http_addr)) {
        return fail("--http %s is not a loopback address: give --token-file so that only "
                    "holders of the token can change state",
                    o->http);
    }
    return GO_ON;
}

/* A passphrase callback that has none: an encrypted key is refused rather than asked for on a
 * daemon's terminal. */
static int no_passphrase(char *buf, int size, int rwflag, void *arg)
{
    (void)buf, (void)size, (void)rwflag, (void)arg;
    return 0;
}

/* The certificate and its key, read as libwebsockets will read them, so that a wrong file is a
 * usage error naming the option before anything is opened or made. GO_ON, or the exit
 * status. */
static int check_tls_files(const char *cert_path, const char *key_path)
{
    FILE *f = fopen(cert_path, "r");
    if (!f)
        return fail("--tls-cert: cannot read %s: %s", cert_path, strerror(errno));
    X509 *cert = PEM_read_X509(f, NULL, no_passphrase, NULL);
    fclose(f);
    if (!cert) {
        ERR_clear_error();
        return fail("--tls-cert: %s holds no PEM certificate", cert_path);
    }
    struct stat st;
    EVP_PKEY *key = NULL;
    int rc = GO_ON;
    if (!(f = fopen(key_path, "r")))
        rc = fail("--tls-key: cannot read %s: %s", key_path, strerror(errno));
    /* The key lets its holder pose as this coordinator and read its users' tokens. */
    else if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
        rc = fail("--tls-key: %s is readable by group or others (mode %03o): chmod 600 it",
                  key_path, (unsigned)(st.st_mode & 0777));
    else if (!(key = PEM_read_PrivateKey(f, NULL, no_passphrase, NULL)))
        rc = fail("--tls-key: %s holds no unencrypted PEM private key", key_path);
    else if (X509_check_private_key(cert, key) != 1)
        rc = fail("--tls-key: %s is not the key of the certificate in %s", key_path, cert_path);
    if (f)
        fclose(f);
    EVP_PKEY_free(key);
    X509_free(cert);
    ERR_clear_error();
    return rc;
}

/* The TLS certificate and key: both or neither, the key readable by its owner alone as the
 * fleet key is; off loopback, plain HTTP only with --insecure-http. GO_ON, or the exit
 * status. */
static int load_tls(opts *o)
{
    sm_server_cfg *cfg = &o->cfg;
    /* Under systemd they may come as the credentials "tls.crt" and "tls.key", as the token
     * does: the unit's command line stays the same with or without them. */
    if (!cfg->tls_cert && !cfg->tls_key) {
        cfg->tls_cert = credential("tls.crt", o->cred_tls_cert, sizeof o->cred_tls_cert);
        cfg->tls_key = credential("tls.key", o->cred_tls_key, sizeof o->cred_tls_key);
    }
    if (!cfg->tls_cert != !cfg->tls_key)
        return fail("%s", "--tls-cert and --tls-key go together: give both, or neither");
    if (cfg->tls_cert)
        return check_tls_files(cfg->tls_cert, cfg->tls_key);
    if (sm_guard_is_loopback(o->http_addr))
        return GO_ON;
    if (!o->insecure_http)
        return fail("--http %s is not a loopback address and would send the token in clear: "
                    "give --tls-cert and --tls-key, or --insecure-http to serve plain HTTP "
                    "anyway",
                    o->http);
    sm_log(LOG_WARNING, "SM-HTTP-INSECURE",
           "serving plain HTTP on %s (--insecure-http): the token crosses the network in clear",
           o->http);
    return GO_ON;
}

/* The read-only tokens, if any: only beside an operate token, without which everyone could
 * already do more than a read token. GO_ON, or the exit status. */
static int load_read_tokens(opts *o)
{
    const bool given = o->read_token_file != NULL;
    if (!o->read_token_file)
        o->read_token_file = credential("read-tokens", o->cred_read, sizeof o->cred_read);
    if (!o->read_token_file)
        return GO_ON;
    if (!o->cfg.token)
        return fail("%s %s: read tokens need an operate token too (--token-file), or anyone "
                    "could do more than their holders",
                    given ? "--read-token-file" : "the credential read-tokens", o->read_token_file);
    sm_error err = {0};
    if (sm_token_list_load(&o->read_tokens, o->read_token_file, o->cfg.token, &err) != 0)
        return fail("--read-token-file: %s", err.msg);
    o->cfg.read_tokens = o->read_tokens.ptr;
    o->cfg.n_read_tokens = o->read_tokens.n;
    return GO_ON;
}

/* What the options name: the web folder, the HTTP address, the keys, the token. GO_ON, or
 * the exit status. */
static int resolve(opts *o)
{
    sm_server_cfg *cfg = &o->cfg;
    if (!cfg->web_dir)
        cfg->web_dir = default_web_dir(o->web_buf, sizeof o->web_buf);
    if (split_hostport(o->http, o->http_addr, sizeof o->http_addr, &cfg->http_port) != 0)
        return fail("--http: '%s' is not ADDR:PORT", o->http);
    cfg->http_addr = o->http_addr;
    if (!o->key_file)
        return fail("%s",
                    "--key-file is required (make one with: sockmatrix-coordinator keygen PATH)");
    sm_error err = {0};
    if (sm_key_load(o->key_file, cfg->key, &err) != 0) {
        fprintf(stderr, "sockmatrix-coordinator: %s\n", err.msg);
        return 2;
    }
    int rc = load_previous_key(o);
    if (rc == GO_ON)
        rc = load_dashboard_token(o);
    if (rc == GO_ON)
        rc = load_read_tokens(o);
    return rc != GO_ON ? rc : load_tls(o);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "keygen") == 0)
        return keygen(argc, argv);
    opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    if (rc == GO_ON)
        rc = resolve(&o);
    if (rc != GO_ON)
        return rc;
    sm_error err = {0};
    if (sm_signals_install(&stop_flag, NULL, &err) != 0 ||
        sm_server_run(&o.cfg, &stop_flag, &err) != 0) {
        fprintf(stderr, "sockmatrix-coordinator: %s\n", err.msg);
        return 1;
    }
    return 0;
}
