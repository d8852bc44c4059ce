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

#include "coordinator/guard.h"
#include "coordinator/server.h"
#include "proto/envelope.h"
#include "proto/log.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static const char usage[] =
    "Usage: sockmatrix-coordinator --key-file PATH [options]\n"
    "       sockmatrix-coordinator keygen [--token] PATH\n"
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
    "                            /ws too (default: the credential \"token\" under systemd)\n"
    "  --http-host NAME          another name browsers reach the HTTP API by (a DNS name, a\n"
    "                            proxy's); repeatable. The listen address, localhost on\n"
    "                            loopback and any IP literal on 0.0.0.0/:: need none\n"
    "  --http-max-conns N        open HTTP and WebSocket connections at most (default 256)\n"
    "  --hold-ms N               how long a poll is held (default 5000; an agent silent for\n"
    "                            3 x this is lost)\n"
    "  --lost-grace-ms N         how long a lost host's queued run jobs wait for it to come\n"
    "                            back before they fail (default 60000; 0: at once)\n"
    "  --max-agents N            agents that may register (default 4096); a poll from a\n"
    "                            new name beyond it is refused, known agents keep working\n"
    "  --data-addr-allow LIST    data addresses agents may announce besides public and\n"
    "                            private unicast: comma-separated loopback, link-local,\n"
    "                            multicast, any, or ADDR/PREFIX (default: none of them)\n"
    "  --log-level LEVEL         error, warning, notice (default), info, debug\n"
    "  --ready-fd N              write \"ready ...\" to descriptor N once listening\n"
    "  --web-dir DIR             the dashboard's files, served at / (default: the build's or\n"
    "                            the installed web folder, when there is one)\n"
    "  --help, --version\n"
    "\n"
    "keygen PATH writes a new fleet key: 32 random bytes as hex, mode 0600. keygen --token\n"
    "PATH writes a new dashboard token (for --token-file) the same way. keygen --agent NAME\n"
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

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "keygen") == 0) {
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--agent") == 0)
                return keygen_agent(argc, argv);
        /* A token is made like a key: 256 random bits as hex are past guessing, and one line
         * of 64 characters is what --token-file reads. */
        bool token = argc == 4 && strcmp(argv[2], "--token") == 0;
        if (argc != 3 + token || argv[argc - 1][0] == '-')
            return fail("%s", "usage: sockmatrix-coordinator keygen [--token] PATH");
        sm_error err = {0};
        if (sm_key_generate(argv[argc - 1], &err) != 0) {
            fprintf(stderr, "sockmatrix-coordinator: %s\n", err.msg);
            return 1;
        }
        printf("wrote a new %s to %s (mode 0600)\n", token ? "dashboard token" : "fleet key",
               argv[argc - 1]);
        return 0;
    }
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"http", required_argument, NULL, 'H'},
        {"db", required_argument, NULL, 'd'},
        {"key-file", required_argument, NULL, 'k'},
        {"token-file", required_argument, NULL, 't'},
        {"hold-ms", required_argument, NULL, 'o'},
        {"log-level", required_argument, NULL, 'L'},
        {"ready-fd", required_argument, NULL, 'r'},
        {"web-dir", required_argument, NULL, 'w'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"lost-grace-ms", required_argument, NULL, 'g'},
        {"max-agents", required_argument, NULL, 'M'},
        {"data-addr-allow", required_argument, NULL, 'A'},
        {"previous-key-file", required_argument, NULL, 'p'},
        {"previous-key-grace-ms", required_argument, NULL, 'G'},
        {"http-host", required_argument, NULL, 'N'},
        {"http-max-conns", required_argument, NULL, 'C'},
        {NULL, 0, NULL, 0},
    };
    sm_server_cfg cfg = {.listen_url = "tcp://0.0.0.0:7100",
                         .db_path = "sockmatrix.db",
                         .hold_ms = 5000,
                         .lost_grace_ms = 60000,
                         .prev_grace_ms = 86400000,
                         .ready_fd = -1,
                         .max_agents = 4096,
                         .http_max_conns = 256};
    enum { HOSTS_MAX = 32 };
    const char *http_hosts[HOSTS_MAX];
    const char *http = "127.0.0.1:8080", *key_file = NULL, *token_file = NULL,
               *prev_key_file = NULL;
    char http_addr[64], token[SM_TOKEN_MAX + 2];
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        char *end;
        long v;
        switch (c) {
        case 'l':
            if (strncmp(optarg, "tcp://", 6) != 0)
                return fail("--listen: '%s' is not tcp://ADDR:PORT", optarg);
            cfg.listen_url = optarg;
            break;
        case 'H':
            http = optarg;
            break;
        case 'd':
            cfg.db_path = optarg;
            break;
        case 'k':
            key_file = optarg;
            break;
        case 't':
            token_file = optarg;
            break;
        case 'o':
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 100 || v > 60000)
                return fail("--hold-ms: '%s' is not a number from 100 to 60000", optarg);
            cfg.hold_ms = (uint32_t)v;
            break;
        case 'g':
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 0 || v > 86400000)
                return fail("--lost-grace-ms: '%s' is not a number from 0 to 86400000", optarg);
            cfg.lost_grace_ms = (uint32_t)v;
            break;
        case 'M':
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 1000000)
                return fail("--max-agents: '%s' is not a number from 1 to 1000000", optarg);
            cfg.max_agents = (uint32_t)v;
            break;
        case 'A': {
            sm_error perr = {0};
            if (sm_addr_policy_parse(&cfg.data_addr, optarg, &perr) != 0)
                return fail("%s", perr.msg);
            break;
        }
        case 'p':
            prev_key_file = optarg;
            break;
        case 'G': {
            unsigned long long g = strtoull(optarg, &end, 10);
            if (!*optarg || *end || optarg[0] == '-' || g > 31ull * 86400000)
                return fail("--previous-key-grace-ms: '%s' is not a number from 0 to 2678400000",
                            optarg);
            cfg.prev_grace_ms = g;
            break;
        }
        case 'N':
            if (cfg.n_http_hosts == HOSTS_MAX)
                return fail("--http-host: at most %d names", HOSTS_MAX);
            if (!*optarg || strlen(optarg) > 253 || strpbrk(optarg, ":/[] "))
                return fail("--http-host: '%s' is not a host name (no port, no scheme)", optarg);
            http_hosts[cfg.n_http_hosts++] = optarg;
            cfg.http_hosts = http_hosts;
            break;
        case 'C':
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 65536)
                return fail("--http-max-conns: '%s' is not a number from 1 to 65536", optarg);
            cfg.http_max_conns = (unsigned)v;
            break;
        case 'L':
            if ((sm_log_level = sm_log_parse_level(optarg)) < 0)
                return fail("--log-level: '%s' is not error, warning, notice, info or debug",
                            optarg);
            break;
        case 'r':
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 0 || v > 1024)
                return fail("--ready-fd: '%s' is not a descriptor number", optarg);
            cfg.ready_fd = (int)v;
            break;
        case 'w':
            if (!has_index(optarg))
                return fail("--web-dir: %s has no index.html", optarg);
            cfg.web_dir = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        case 'V':
            printf("sockmatrix-coordinator %s\n", SM_VERSION);
            return 0;
        case ':':
            return fail("option '%s' needs a value", argv[optind - 1]);
        default:
            return fail("unknown option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return fail("unexpected argument '%s' (see --help)", argv[optind]);
    char web_buf[4200];
    if (!cfg.web_dir)
        cfg.web_dir = default_web_dir(web_buf, sizeof web_buf);
    if (split_hostport(http, http_addr, sizeof http_addr, &cfg.http_port) != 0)
        return fail("--http: '%s' is not ADDR:PORT", http);
    cfg.http_addr = http_addr;
    if (!key_file)
        return fail("%s",
                    "--key-file is required (make one with: sockmatrix-coordinator keygen PATH)");
    sm_error err = {0};
    if (sm_key_load(key_file, cfg.key, &err) != 0) {
        fprintf(stderr, "sockmatrix-coordinator: %s\n", err.msg);
        return 2;
    }
    /* Under systemd the previous key of a rotation comes as the credential
     * "fleet.key.previous" (the roll-out adds it with a drop-in), as the token does. */
    char cred_prev[4200];
    const char *cdir = getenv("CREDENTIALS_DIRECTORY");
    if (!prev_key_file && cdir && *cdir) {
        int n = snprintf(cred_prev, sizeof cred_prev, "%s/fleet.key.previous", cdir);
        if (n > 0 && (size_t)n < sizeof cred_prev && access(cred_prev, F_OK) == 0)
            prev_key_file = cred_prev;
    }
    if (prev_key_file) {
        if (sm_key_load(prev_key_file, cfg.prev_key, &err) != 0)
            return fail("--previous-key-file: %s", err.msg);
        if (CRYPTO_memcmp(cfg.prev_key, cfg.key, SM_KEY_LEN) == 0)
            return fail("--previous-key-file %s holds the same key as --key-file", prev_key_file);
        cfg.have_prev_key = true;
        sm_log(LOG_NOTICE, "SM-KEY-ROTATION",
               "accepting agents on the previous fleet key for %llu ms after this start",
               (unsigned long long)cfg.prev_grace_ms);
    }
    /* Under systemd a token handed over as the credential "token" (LoadCredential=token:...)
     * needs no option: the unit's command line stays the same with or without one. */
    char cred_token[4200];
    const char *creds = getenv("CREDENTIALS_DIRECTORY");
    if (!token_file && creds && *creds) {
        int n = snprintf(cred_token, sizeof cred_token, "%s/token", creds);
        if (n > 0 && (size_t)n < sizeof cred_token && access(cred_token, F_OK) == 0)
            token_file = cred_token;
    }
    if (token_file) {
        int rc = load_token(token_file, token, sizeof token);
        if (rc)
            return rc;
        cfg.token = token;
    } else if (!sm_guard_is_loopback(http_addr)) {
        return fail("--http %s is not a loopback address: give --token-file so that only "
                    "holders of the token can change state",
                    http);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (sm_server_run(&cfg, &stop_flag, &err) != 0) {
        fprintf(stderr, "sockmatrix-coordinator: %s\n", err.msg);
        return 1;
    }
    return 0;
}
