/* Option parsing of the agent's fleet mode. */
#include "agent/fleet/opts.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/experiment/treat.h"
#include "agent/runner/affinity.h"
#include "proto/log.h"

const char *sm_dopts_usage(void)
{
    return "Usage: sockmatrix-agent --coordinator tcp://HOST:PORT --key-file PATH [options]\n"
           "\n"
           "Runs the agent of this machine: it long-polls the coordinator, runs one job at a\n"
           "time, and keeps every result in its spool until the coordinator has stored it.\n"
           "\n"
           "  --coordinator tcp://HOST:PORT  the coordinator's --listen address\n"
           "  --key-file PATH        this agent's own key (64 hex digits, mode 0600), made on\n"
           "                         the coordinator with: sockmatrix-coordinator keygen\n"
           "                         --agent NAME --key-file FLEET_KEY OUT\n"
           "  --name NAME            this agent's name (default: the hostname)\n"
           "  --labels k=v,...       labels the coordinator can select hosts by\n"
           "  --data-addr IP         the address peers reach this host on for pair jobs\n"
           "  --data-addr-allow LIST server addresses a pair job may connect to besides\n"
           "                         public and private unicast: comma-separated loopback,\n"
           "                         link-local, multicast, any, or ADDR/PREFIX (default:\n"
           "                         none of them); the coordinator has the same option\n"
           "  --spool-dir DIR        results not yet stored (default "
           "/var/lib/sockmatrix-agent/spool)\n"
           "  --sock-dir DIR         where Unix sockets of jobs are made (default: a private\n"
           "                         folder made at start under $TMPDIR or /tmp, mode 0700,\n"
           "                         removed at exit)\n"
           "  --reply-wait-ms N      resend a poll not answered in N ms (default 10000)\n"
           "  --affinity C,S         pin every job's client thread to CPU C and its server\n"
           "                         thread to CPU S (where the two ends run can change a\n"
           "                         loopback result several-fold; see --once --help)\n"
           "  --allow-http PREFIX    http jobs may fetch urls under this prefix (repeatable,\n"
           "                         up to 16; without it, only peers' built-in sources)\n"
           "  --allow-experiment L   host settings an experiment's treated jobs may change for\n"
           "                         the job alone: sysctl (net.* of this network namespace),\n"
           "                         qdisc (lo's root qdisc, with tc), offload (lo's gso,\n"
           "                         gro, tso), a comma list (offload,qdisc,sysctl) or none\n"
           "                         (default); journalled in the spool folder and\n"
           "                         undone after the job, or at the next start after a kill\n"
           "  --log-level LEVEL      error, warning, notice (default), info, debug\n"
           "  --help\n";
}

bool sm_dopts_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--coordinator", 13) == 0)
            return true;
    return false;
}

static const struct option long_opts[] = {
    {"coordinator", required_argument, NULL, 'c'},
    {"key-file", required_argument, NULL, 'k'},
    {"name", required_argument, NULL, 'n'},
    {"labels", required_argument, NULL, 'l'},
    {"data-addr", required_argument, NULL, 'a'},
    {"spool-dir", required_argument, NULL, 's'},
    {"sock-dir", required_argument, NULL, 'u'},
    {"reply-wait-ms", required_argument, NULL, 'w'},
    {"allow-http", required_argument, NULL, 'H'},
    {"affinity", required_argument, NULL, 'A'},
    {"log-level", required_argument, NULL, 'L'},
    {"data-addr-allow", required_argument, NULL, 'D'},
    {"allow-experiment", required_argument, NULL, 'X'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int parse_name(const char *val, sm_daemon_cfg *cfg, sm_error *err)
{
    if (!sm_name_valid(val))
        return sm_error_set(err, SM_EINVAL, "--name: '%s' is not 1 to %d of A-Z a-z 0-9 . _ -", val,
                            SM_NAME_MAX);
    if (sm_name_reserved(val))
        return sm_error_set(err, SM_EINVAL,
                            "--name: '%s' is reserved for the coordinator's replies", val);
    snprintf(cfg->name, sizeof cfg->name, "%s", val);
    return 0;
}

static int parse_data_addr(const char *val, sm_daemon_cfg *cfg, sm_error *err)
{
    unsigned char buf[16];
    if (strlen(val) > SM_ADDR_MAX ||
        (inet_pton(AF_INET, val, buf) != 1 && inet_pton(AF_INET6, val, buf) != 1))
        return sm_error_set(err, SM_EINVAL, "--data-addr: '%s' is not an IP address", val);
    snprintf(cfg->data_addr, sizeof cfg->data_addr, "%s", val);
    return 0;
}

static int parse_allow_http(const char *val, sm_daemon_cfg *cfg, sm_error *err)
{
    if (cfg->n_allow_http == SM_ALLOW_HTTP_MAX)
        return sm_error_set(err, SM_EINVAL, "--allow-http: more than %d prefixes",
                            SM_ALLOW_HTTP_MAX);
    if (strlen(val) > SM_URL_MAX ||
        (strncmp(val, "http://", 7) != 0 && strncmp(val, "https://", 8) != 0) ||
        strlen(val) <= (size_t)(val[4] == 's' ? 8 : 7))
        return sm_error_set(err, SM_EINVAL,
                            "--allow-http: '%.200s' is not an http:// or https:// url "
                            "prefix with a host",
                            val);
    snprintf(cfg->allow_http[cfg->n_allow_http++], SM_URL_MAX + 1, "%s", val);
    return 0;
}

/* err's reason again, after "--OPTION: ". */
static int prefixed(sm_error *err, const char *opt)
{
    char msg[SM_ERR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return sm_error_set(err, SM_EINVAL, "%s: %.200s", opt, msg);
}

/* One option. The key file's path goes to *key_file; *help ends the parse. */
static int one_option(int c, char *val, const char *name, sm_daemon_cfg *cfg, const char **key_file,
                      bool *help, sm_error *err)
{
    char *end;
    long v;
    switch (c) {
    case 'c':
        if (strncmp(val, "tcp://", 6) != 0)
            return sm_error_set(err, SM_EINVAL, "--coordinator: '%s' is not tcp://HOST:PORT", val);
        cfg->coordinator = val;
        return 0;
    case 'k':
        *key_file = val;
        return 0;
    case 'n':
        return parse_name(val, cfg, err);
    case 'l':
        if (sm_labels_parse(val, cfg->labels, &cfg->n_labels, err) != 0)
            return prefixed(err, "--labels");
        return 0;
    case 'a':
        return parse_data_addr(val, cfg, err);
    case 's':
        cfg->spool_dir = val;
        return 0;
    case 'u':
        cfg->sock_dir = val;
        return 0;
    case 'w':
        v = strtol(val, &end, 10);
        if (!*val || *end || v < 1000 || v > 600000)
            return sm_error_set(err, SM_EINVAL,
                                "--reply-wait-ms: '%s' is not a number from 1000 to 600000", val);
        cfg->reply_wait_ms = (uint32_t)v;
        return 0;
    case 'A':
        if (sm_affinity_parse(val, &cfg->client_cpu, &cfg->server_cpu, err) != 0)
            return SM_EINVAL;
        cfg->pin = true;
        return 0;
    case 'H':
        return parse_allow_http(val, cfg, err);
    case 'L':
        if ((sm_log_level = sm_log_parse_level(val)) < 0)
            return sm_error_set(err, SM_EINVAL, "--log-level: '%s' is not a level", val);
        return 0;
    case 'D':
        return sm_addr_policy_parse(&cfg->data_addr_allow, val, err) != 0 ? SM_EINVAL : 0;
    case 'X':
        return sm_treat_allow_parse(val, &cfg->allow_experiment, err);
    case 'h':
        *help = true;
        return 0;
    case ':':
        return sm_error_set(err, SM_EINVAL, "option '%s' needs a value", name);
    default:
        return sm_error_set(err, SM_EINVAL, "unknown option '%s' (see --help)", name);
    }
}

/* The name the agent goes by, and its key. */
static int check_identity(const sm_daemon_cfg *cfg, const char *key_file, uint8_t *key,
                          sm_error *err)
{
    if (!sm_name_valid(cfg->name) || sm_name_reserved(cfg->name))
        return sm_error_set(err, SM_EINVAL,
                            "the hostname '%s' is not a valid agent name: give --name", cfg->name);
    /* The coordinator signs as "coordinator" and refuses an agent of that name. */
    if (strcmp(cfg->name, "coordinator") == 0)
        return sm_error_set(err, SM_EINVAL,
                            "the agent name 'coordinator' is reserved for the coordinator: give "
                            "another --name");
    if (!key_file)
        return sm_error_set(err, SM_EINVAL, "--key-file is required");
    if (sm_key_load(key_file, key, err) != 0)
        return prefixed(err, "--key-file");
    return 0;
}

int sm_dopts_parse(int argc, char **argv, sm_daemon_cfg *cfg, bool *help, sm_error *err)
{
    const char *key_file = NULL;
    memset(cfg, 0, sizeof *cfg);
    cfg->spool_dir = "/var/lib/sockmatrix-agent/spool";
    cfg->sock_dir = NULL; /* the daemon makes a private one */
    cfg->reply_wait_ms = 10000;
    *help = false;
    if (gethostname(cfg->name, sizeof cfg->name - 1) != 0)
        snprintf(cfg->name, sizeof cfg->name, "agent");
    cfg->name[strcspn(cfg->name, ".")] = '\0'; /* the short name */
    int c, rc;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
        if ((rc = one_option(c, optarg, argv[optind - 1], cfg, &key_file, help, err)))
            return rc;
        if (*help)
            return 0;
    }
    if (optind < argc)
        return sm_error_set(err, SM_EINVAL, "unexpected argument '%s'", argv[optind]);
    return check_identity(cfg, key_file, cfg->key, err);
}
