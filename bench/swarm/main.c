/* sm-swarm: options, the shared mapping, the shards' start, and the phases in order. */
#include "bench/swarm/swarm.h"

/* ---- main ---- */

/* Set by the signal handler: a signal is process-wide, so its flag is too. */
static volatile sig_atomic_t stop_flag;

static const char usage[] =
    "Usage: sm-swarm --coordinator tcp://ADDR:PORT --http http://ADDR:PORT --key-file PATH\n"
    "                --agents N --coord-pid PID [--jobs-per-agent J] [--idle-s S]\n"
    "                [--latency-jobs L] [--hold-ms H] [--rr]\n"
    "\n"
    "Simulates N agents (swarm-00000 ...) against a running coordinator with a fresh store and\n"
    "measures it: time to register, idle CPU, results stored per second, dispatch latency and\n"
    "peak RSS. Progress on stderr, one JSON summary on stdout.\n"
    "\n"
    "  --jobs-per-agent J  jobs per agent in the throughput phase (default 20)\n"
    "  --idle-s S          length of the idle phase at least (default 10; two holds when\n"
    "                      longer), after one hold to settle\n"
    "  --latency-jobs L    single-job POSTs of the latency phase (default 500)\n"
    "  --hold-ms H         the coordinator's --hold-ms (default 5000): a poll unanswered for\n"
    "                      H + 5000 ms is sent again\n"
    "  --rr                rr jobs whose results carry a realistic latency histogram (about\n"
    "                      461 non-empty buckets, 5 KB of JSON) instead of stream jobs of one\n"
    "                      1-byte message with none\n";

static int parse_long(const char *name, const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!*text || *end || errno || v < min || v > max) {
        say("%s: '%s' is not a number from %ld to %ld", name, text, min, max);
        return SM_EINVAL;
    }
    *out = v;
    return 0;
}

static int parse_opts(int argc, char **argv, opts *o)
{
    static const struct option longopts[] = {
        {"coordinator", required_argument, NULL, 'c'},
        {"http", required_argument, NULL, 'H'},
        {"key-file", required_argument, NULL, 'k'},
        {"agents", required_argument, NULL, 'n'},
        {"coord-pid", required_argument, NULL, 'p'},
        {"jobs-per-agent", required_argument, NULL, 'j'},
        {"idle-s", required_argument, NULL, 'i'},
        {"latency-jobs", required_argument, NULL, 'l'},
        {"hold-ms", required_argument, NULL, 'o'},
        {"rr", no_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (opts){.jobs_per_agent = 20, .idle_s = 10, .latency_jobs = 500, .hold_ms = 5000};
    long pid = 0;
    int c, rc = 0;
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            o->bus_url = optarg;
            break;
        case 'H':
            o->http_url = optarg;
            break;
        case 'k':
            o->key_file = optarg;
            break;
        case 'n':
            rc = parse_long("--agents", optarg, 1, 99999, &o->agents);
            break;
        case 'p':
            rc = parse_long("--coord-pid", optarg, 1, INT32_MAX, &pid);
            o->coord_pid = (pid_t)pid;
            break;
        case 'j':
            rc = parse_long("--jobs-per-agent", optarg, 1, 100000, &o->jobs_per_agent);
            break;
        case 'i':
            rc = parse_long("--idle-s", optarg, 1, 3600, &o->idle_s);
            break;
        case 'l':
            rc = parse_long("--latency-jobs", optarg, 1, 100000, &o->latency_jobs);
            break;
        case 'o':
            rc = parse_long("--hold-ms", optarg, 100, 60000, &o->hold_ms);
            break;
        case 'r':
            o->rr = true;
            break;
        case 'h':
            fputs(usage, stdout);
            return 1;
        case ':':
            say("option '%s' needs a value", argv[optind - 1]);
            return SM_EINVAL;
        default:
            say("unknown option '%s' (see --help)", argv[optind - 1]);
            return SM_EINVAL;
        }
    }
    if (rc)
        return rc;
    if (optind < argc) {
        say("unexpected argument '%s' (see --help)", argv[optind]);
        return SM_EINVAL;
    }
    if (!o->bus_url || !o->http_url || !o->key_file || !o->agents || !o->coord_pid) {
        say("--coordinator, --http, --key-file, --agents and --coord-pid are required "
            "(see --help)");
        return SM_EINVAL;
    }
    return 0;
}

/* Enough descriptors for a shard: per socket two eventfds and its TCP connection. */
static int raise_nofile(void)
{
    const rlim_t need = SHARD_MAX * 4 + 256;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        say("getrlimit: %s", strerror(errno));
        return SM_ESYS;
    }
    if (rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        say("RLIMIT_NOFILE: need %llu descriptors, the hard limit is %llu (ulimit -Hn)",
            (unsigned long long)need, (unsigned long long)rl.rlim_max);
        return SM_ESYS;
    }
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        say("setrlimit: %s", strerror(errno));
        return SM_ESYS;
    }
    return 0;
}

static shared *shared_new(const opts *o, size_t *bytes)
{
    const uint64_t jobs =
        (uint64_t)o->agents * (uint64_t)o->jobs_per_agent + (uint64_t)o->latency_jobs;
    size_t cap = 1024;
    while (cap < 2 * jobs) /* at most half full: short probes */
        cap *= 2;
    *bytes = sizeof(shared) + cap * sizeof(slot);
    shared *sh = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        say("mmap %zu bytes: %s", *bytes, strerror(errno));
        return NULL;
    }
    sh->cap = cap; /* the rest is zero: every slot free, every counter 0 */
    return sh;
}

/* Forks the shards: agents split evenly, none over SHARD_MAX. */
static int start_shards(ctx *c, const uint8_t *key)
{
    const size_t n = (size_t)c->o->agents;
    const size_t k = (n + SHARD_MAX - 1) / SHARD_MAX;
    const pid_t parent = getpid();
    c->shards = calloc(k, sizeof *c->shards);
    if (!c->shards)
        return SM_ENOMEM;
    fflush(NULL); /* nothing buffered is written twice */
    for (size_t i = 0; i < k; i++) {
        size_t first = n * i / k, count = n * (i + 1) / k - first;
        pid_t pid = fork();
        if (pid < 0) {
            say("fork: %s", strerror(errno));
            return SM_ESYS;
        }
        if (pid == 0) {
            /* The parent owns Ctrl-C and the shutdown; a shard ends with its parent. */
            signal(SIGINT, SIG_IGN);
            signal(SIGTERM, SIG_DFL);
            if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
                _exit(1);
            _exit(shard_main((int)i, c->o, key, c->sh, first, count, parent));
        }
        c->shards[i] = pid;
        c->n_shards = i + 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc > 0 ? 0 : 2;
    uint8_t key[SM_KEY_LEN];
    sm_error err = {0};
    if (sm_key_load(o.key_file, key, &err) != 0) {
        say("%s", err.msg);
        return 2;
    }
    if (raise_nofile() != 0)
        return 1;
    size_t map_bytes;
    shared *sh = shared_new(&o, &map_bytes);
    if (!sh)
        return 1;
    if (sm_signals_install(&stop_flag, NULL, &err) != 0) {
        say("%s", err.msg);
        munmap(sh, map_bytes);
        return 1;
    }

    ctx c = {.o = &o, .sh = sh, .stop = &stop_flag};
    summary s;
    memset(&s, 0, sizeof s);
    const int64_t t0 = sm_mono_ns();
    say("%ld agents against %s (coordinator pid %d)", o.agents, o.bus_url, (int)o.coord_pid);
    rc = start_shards(&c, key);
    /* libcurl after the fork: the shards never touch it. */
    if (!rc && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        say("curl_global_init failed");
        rc = SM_ESYS;
    }
    if (!rc && !(c.curl = curl_easy_init())) {
        say("curl_easy_init failed");
        rc = SM_ENOMEM;
    }
    if (!rc) {
        /* "Expect:" off: curl would wait for a 100 Continue before each large POST. */
        struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
        c.headers = h ? curl_slist_append(h, "Expect:") : NULL;
        if (!c.headers) {
            curl_slist_free_all(h);
            rc = SM_ENOMEM;
        }
    }
    if (!rc) {
        curl_easy_setopt(c.curl, CURLOPT_HTTPHEADER, c.headers);
        curl_easy_setopt(c.curl, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c.curl, CURLOPT_WRITEDATA, &c.resp);
        curl_easy_setopt(c.curl, CURLOPT_TIMEOUT, 60L);
        curl_easy_setopt(c.curl, CURLOPT_NOSIGNAL, 1L);
        rc = run_phases(&c, t0, &s);
    }
    if (stop_shards(&c) && !rc) {
        say("a shard failed");
        rc = SM_ESYS;
    }
    if (!rc)
        print_summary(&c, &s);
    curl_slist_free_all(c.headers);
    if (c.curl) {
        curl_easy_cleanup(c.curl);
        curl_global_cleanup();
    }
    sm_buf_fini(&c.resp);
    free(c.shards);
    munmap(sh, map_bytes);
    return rc ? 1 : 0;
}
