/* Option parsing of the agent's fleet mode. */
#include "agent/dopts.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/opts.h"
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

int sm_dopts_parse(int argc, char **argv, sm_daemon_cfg *cfg, bool *help, sm_error *err)
{
    static const struct option opts[] = {
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
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *key_file = NULL;
    memset(cfg, 0, sizeof *cfg);
    cfg->spool_dir = "/var/lib/sockmatrix-agent/spool";
    cfg->sock_dir = NULL; /* the daemon makes a private one */
    cfg->reply_wait_ms = 10000;
    *help = false;
    if (gethostname(cfg->name, sizeof cfg->name - 1) != 0)
        snprintf(cfg->name, sizeof cfg->name, "agent");
    cfg->name[strcspn(cfg->name, ".")] = '\0'; /* the short name */
    int c;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        char *end;
        long v;
        switch (c) {
        case 'c':
            if (strncmp(optarg, "tcp://", 6) != 0)
                return sm_error_set(err, SM_EINVAL, "--coordinator: '%s' is not tcp://HOST:PORT",
                                    optarg);
            cfg->coordinator = optarg;
            break;
        case 'k':
            key_file = optarg;
            break;
        case 'n':
            if (!sm_name_valid(optarg))
                return sm_error_set(err, SM_EINVAL,
                                    "--name: '%s' is not 1 to %d of A-Z a-z 0-9 . _ -", optarg,
                                    SM_NAME_MAX);
            if (sm_name_reserved(optarg))
                return sm_error_set(err, SM_EINVAL,
                                    "--name: '%s' is reserved for the coordinator's replies",
                                    optarg);
            snprintf(cfg->name, sizeof cfg->name, "%s", optarg);
            break;
        case 'l':
            if (sm_labels_parse(optarg, cfg->labels, &cfg->n_labels, err) != 0) {
                char msg[SM_ERR_MSG_MAX];
                snprintf(msg, sizeof msg, "%s", err->msg);
                return sm_error_set(err, SM_EINVAL, "--labels: %.200s", msg);
            }
            break;
        case 'a': {
            unsigned char buf[16];
            if (strlen(optarg) > SM_ADDR_MAX ||
                (inet_pton(AF_INET, optarg, buf) != 1 && inet_pton(AF_INET6, optarg, buf) != 1))
                return sm_error_set(err, SM_EINVAL, "--data-addr: '%s' is not an IP address",
                                    optarg);
            snprintf(cfg->data_addr, sizeof cfg->data_addr, "%s", optarg);
            break;
        }
        case 's':
            cfg->spool_dir = optarg;
            break;
        case 'u':
            cfg->sock_dir = optarg;
            break;
        case 'w':
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1000 || v > 600000)
                return sm_error_set(err, SM_EINVAL,
                                    "--reply-wait-ms: '%s' is not a number from 1000 to 600000",
                                    optarg);
            cfg->reply_wait_ms = (uint32_t)v;
            break;
        case 'A':
            if (sm_opts_parse_affinity(optarg, &cfg->client_cpu, &cfg->server_cpu, err) != 0)
                return SM_EINVAL;
            cfg->pin = true;
            break;
        case 'H':
            if (cfg->n_allow_http == SM_ALLOW_HTTP_MAX)
                return sm_error_set(err, SM_EINVAL, "--allow-http: more than %d prefixes",
                                    SM_ALLOW_HTTP_MAX);
            if (strlen(optarg) > SM_URL_MAX ||
                (strncmp(optarg, "http://", 7) != 0 && strncmp(optarg, "https://", 8) != 0) ||
                strlen(optarg) <= (size_t)(optarg[4] == 's' ? 8 : 7))
                return sm_error_set(err, SM_EINVAL,
                                    "--allow-http: '%.200s' is not an http:// or https:// url "
                                    "prefix with a host",
                                    optarg);
            snprintf(cfg->allow_http[cfg->n_allow_http++], SM_URL_MAX + 1, "%s", optarg);
            break;
        case 'L':
            if ((sm_log_level = sm_log_parse_level(optarg)) < 0)
                return sm_error_set(err, SM_EINVAL, "--log-level: '%s' is not a level", optarg);
            break;
        case 'D':
            if (sm_addr_policy_parse(&cfg->data_addr_allow, optarg, err) != 0)
                return SM_EINVAL;
            break;
        case 'h':
            *help = true;
            return 0;
        case ':':
            return sm_error_set(err, SM_EINVAL, "option '%s' needs a value", argv[optind - 1]);
        default:
            return sm_error_set(err, SM_EINVAL, "unknown option '%s' (see --help)",
                                argv[optind - 1]);
        }
    }
    if (optind < argc)
        return sm_error_set(err, SM_EINVAL, "unexpected argument '%s'", argv[optind]);
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
    if (sm_key_load(key_file, cfg->key, err) != 0) {
        char msg[SM_ERR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return sm_error_set(err, SM_EINVAL, "--key-file: %.200s", msg);
    }
    return 0;
}
