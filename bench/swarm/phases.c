/* sm-swarm: the measurement phases (register, idle, throughput, latency), the summary, and
 * the shards' shutdown. */
#include "bench/swarm/swarm.h"

static double secs(int64_t ns)
{
    return (double)ns / NS_PER_S;
}

/* Registered means online in the coordinator's view: an agent's first poll registers it, but
 * its answer is held (there is nothing to say), so the swarm hears back only hold_ms later. */
static int phase_register(ctx *c, int64_t t0, summary *s)
{
    const uint64_t n = (uint64_t)c->o->agents;
    int64_t next_say = t0 + 2 * NS_PER_S;
    for (;;) {
        health h;
        int rc = still_running(c);
        if (rc || (rc = get_health(c, &h)))
            return rc;
        const int64_t now = sm_mono_ns();
        if (h.agents_online >= n) {
            s->register_s = secs(now - t0);
            say("register: %" PRIu64 " agents online after %.2f s", n, s->register_s);
            return 0;
        }
        if (now - t0 > PHASE_TIMEOUT_S * NS_PER_S) {
            say("register: only %" PRIu64 " of %" PRIu64 " agents online after %d s",
                h.agents_online, n, PHASE_TIMEOUT_S);
            return SM_ETIMEDOUT;
        }
        if (now >= next_say) {
            say("register: %" PRIu64 " of %" PRIu64 " agents online (%" PRIu64
                " messages rejected)",
                h.agents_online, n, h.rejected);
            next_say = now + 2 * NS_PER_S;
        }
        sleep_ms(100);
    }
}

/* The hold the agents wait for: the longest a reply said, or --hold-ms. */
static long hold_now_ms(const ctx *c)
{
    const uint64_t told = atomic_load(&c->sh->hold_told_ms);
    return told ? (long)told : c->o->hold_ms;
}

static int sleep_running(ctx *c, int64_t ns)
{
    const int64_t end = sm_mono_ns() + ns;
    int rc = 0;
    while (!rc && sm_mono_ns() < end) {
        rc = still_running(c);
        sleep_ms(100);
    }
    return rc;
}

static int phase_idle(ctx *c, summary *s)
{
    health h0, h1;
    uint64_t t0, t1;
    int rc;
    /* The polls of registration were held as long as the agents then said they wait; each
     * reply told them the fleet's hold, and after one hold every agent polls at it. */
    if ((rc = get_health(c, &h0)))
        return rc;
    const long hold_s = (long)(h0.hold_ms + 999) / 1000;
    say("idle: the coordinator holds polls %" PRIu64 " ms; settling for as long", h0.hold_ms);
    if ((rc = sleep_running(c, hold_s * NS_PER_S)))
        return rc;
    /* At least two holds: a fleet that registered at once polls in waves, and a window
     * shorter than a hold could fall between two of them. */
    const long idle_s = c->o->idle_s > 2 * hold_s ? c->o->idle_s : 2 * hold_s;
    say("idle: %ld s of long polls", idle_s);
    if ((rc = get_health(c, &h0)) || (rc = cpu_ticks(c->o->coord_pid, &t0)))
        return rc;
    const int64_t start = sm_mono_ns();
    if ((rc = sleep_running(c, idle_s * NS_PER_S)))
        return rc;
    if ((rc = cpu_ticks(c->o->coord_pid, &t1)))
        return rc;
    const int64_t ns = sm_mono_ns() - start;
    if ((rc = get_health(c, &h1)) || (rc = status_mb(c->o->coord_pid, "VmRSS", &s->idle_rss)))
        return rc;
    s->idle_s = secs(ns);
    s->idle_cpu = pct_of_core(t1 - t0, ns);
    s->idle_polls_per_s = (double)(h1.polls - h0.polls) / secs(ns);
    say("idle: coordinator at %.2f%% of a core, %.0f polls/s, RSS %.1f MB", s->idle_cpu,
        s->idle_polls_per_s, s->idle_rss);
    return 0;
}

/* Every batch of at most POST_BATCH jobs, round-robin over the agents so all start at once. */
static int post_throughput_jobs(ctx *c, uint64_t total)
{
    sm_buf body = {0};
    uint64_t *ids = calloc(POST_BATCH, sizeof *ids);
    int rc = ids ? 0 : SM_ENOMEM;
    for (uint64_t done = 0; done < total && !rc;) {
        size_t n = total - done < POST_BATCH ? (size_t)(total - done) : POST_BATCH;
        sm_buf_clear(&body);
        rc = sm_buf_append(&body, "[", 1);
        for (size_t i = 0; i < n && !rc; i++)
            rc = add_job(&body, (size_t)((done + i) % (uint64_t)c->o->agents), i == 0, c->o->rr);
        if (!rc)
            rc = sm_buf_append(&body, "]", 1);
        if (!rc)
            rc = http(c, "/api/jobs", &body, 201);
        if (!rc && job_ids(c->resp.p, ids, n) != 0) {
            say("POST /api/jobs: expected %zu job ids: %.300s", n, c->resp.p);
            rc = SM_EPARSE;
        }
        if (!rc)
            rc = still_running(c);
        done += n;
    }
    sm_buf_fini(&body);
    free(ids);
    return rc;
}

static int phase_throughput(ctx *c, summary *s)
{
    const uint64_t total = (uint64_t)c->o->agents * (uint64_t)c->o->jobs_per_agent;
    say("throughput: %" PRIu64 " jobs (%ld per agent) in POSTs of %d", total, c->o->jobs_per_agent,
        POST_BATCH);
    health h0, h;
    uint64_t ct0, ct1, st0, st1;
    int rc;
    if ((rc = get_health(c, &h0)) || (rc = cpu_ticks(c->o->coord_pid, &ct0)) ||
        (rc = swarm_ticks(c, &st0)))
        return rc;
    const uint64_t assigns0 = atomic_load(&c->sh->assigns);
    const int64_t t0 = sm_mono_ns();
    if ((rc = post_throughput_jobs(c, total)))
        return rc;
    const int64_t posted = sm_mono_ns();
    say("throughput: all %" PRIu64 " jobs queued after %.2f s", total, secs(posted - t0));
    int64_t next_say = posted + 2 * NS_PER_S;
    for (;;) {
        if ((rc = still_running(c)) || (rc = get_health(c, &h)))
            return rc;
        const int64_t now = sm_mono_ns();
        if (h.results - h0.results >= total)
            break;
        if (now - t0 > PHASE_TIMEOUT_S * NS_PER_S) {
            say("throughput: only %" PRIu64 " of %" PRIu64 " results stored in %d s",
                h.results - h0.results, total, PHASE_TIMEOUT_S);
            return SM_ETIMEDOUT;
        }
        if (now >= next_say) {
            say("throughput: %" PRIu64 " of %" PRIu64 " results stored", h.results - h0.results,
                total);
            next_say = now + 2 * NS_PER_S;
        }
        sleep_ms(100);
    }
    const int64_t ns = sm_mono_ns() - t0;
    const uint64_t assigns = atomic_load(&c->sh->assigns) - assigns0;
    if ((rc = cpu_ticks(c->o->coord_pid, &ct1)) || (rc = swarm_ticks(c, &st1)))
        return rc;
    s->tp_jobs = total;
    s->tp_s = secs(ns);
    s->submit_per_s = (double)total / secs(posted - t0);
    s->results_per_s = (double)total / secs(ns);
    s->dispatch_per_s = (double)assigns / secs(ns);
    s->tp_coord_cpu = pct_of_core(ct1 - ct0, ns);
    s->tp_swarm_cpu = pct_of_core(st1 - st0, ns);
    say("throughput: %" PRIu64 " results in %.2f s: %.0f results/s, %.0f jobs dispatched/s, "
        "coordinator at %.0f%% of a core",
        total, s->tp_s, s->results_per_s, s->dispatch_per_s, s->tp_coord_cpu);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least q of the sample at or below it. */
static double quantile(const double *sorted, size_t n, double q)
{
    size_t rank = (size_t)ceil(q * (double)n);
    return sorted[(rank ? rank : 1) - 1];
}

static int wait_quiet(ctx *c)
{
    /* Every result acked, then a little time for the last polls to reach the coordinator and be
     * held there: the latency phase starts against idle, held agents. */
    const int64_t deadline = sm_mono_ns() + PHASE_TIMEOUT_S * NS_PER_S;
    while (atomic_load(&c->sh->pending) > 0) {
        int rc = still_running(c);
        if (rc)
            return rc;
        if (sm_mono_ns() > deadline) {
            say("latency: %" PRId64 " results still unacked after %d s",
                atomic_load(&c->sh->pending), PHASE_TIMEOUT_S);
            return SM_ETIMEDOUT;
        }
        sleep_ms(20);
    }
    sleep_ms(500);
    return 0;
}

static int phase_latency(ctx *c, summary *s)
{
    const size_t n = (size_t)c->o->latency_jobs;
    say("latency: %zu single-job POSTs to random agents, 10 ms apart", n);
    int rc = wait_quiet(c);
    if (rc)
        return rc;
    uint64_t *ids = calloc(n, sizeof *ids);
    int64_t *sent = calloc(n, sizeof *sent);
    double *lat = calloc(n, sizeof *lat);
    sm_buf body = {0};
    if (!ids || !sent || !lat) {
        rc = SM_ENOMEM;
        goto out;
    }
    unsigned short rng[3] = {0x5357, 0x4152, 0x4d21}; /* fixed: the same agents every run */
    const int64_t start = sm_mono_ns();
    for (size_t i = 0; i < n && !rc; i++) {
        const int64_t at = start + (int64_t)i * 10 * NS_PER_MS, now = sm_mono_ns();
        if (at > now)
            sleep_ms((long)((at - now + NS_PER_MS - 1) / NS_PER_MS));
        sm_buf_clear(&body);
        rc = sm_buf_append(&body, "[", 1);
        if (!rc)
            rc = add_job(&body, (size_t)(nrand48(rng) % (long)c->o->agents), true, c->o->rr);
        if (!rc)
            rc = sm_buf_append(&body, "]", 1);
        sent[i] = sm_mono_ns();
        if (!rc)
            rc = http(c, "/api/jobs", &body, 201);
        if (!rc && job_ids(c->resp.p, &ids[i], 1) != 0) {
            say("POST /api/jobs: expected one job id: %.300s", c->resp.p);
            rc = SM_EPARSE;
        }
        if (!rc && i % 100 == 99)
            rc = still_running(c);
    }
    if (rc)
        goto out;
    /* The stragglers: every assign should be there within a poll's hold. */
    const int64_t deadline = sm_mono_ns() + (hold_now_ms(c) + RESEND_SLACK_MS) * NS_PER_MS * 2;
    size_t missing;
    do {
        missing = 0;
        for (size_t i = 0; i < n; i++)
            missing += job_arrival(c->sh, ids[i]) == 0;
        if (missing)
            sleep_ms(50);
    } while (missing && sm_mono_ns() < deadline);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const int64_t at = job_arrival(c->sh, ids[i]);
        if (at)
            lat[k++] = (double)(at - sent[i]) / NS_PER_MS;
    }
    s->lat_n = k;
    s->lat_missing = n - k;
    if (!k) {
        say("latency: no assign arrived");
        rc = SM_ETIMEDOUT;
        goto out;
    }
    qsort(lat, k, sizeof *lat, cmp_double);
    s->p50 = quantile(lat, k, 0.50);
    s->p90 = quantile(lat, k, 0.90);
    s->p99 = quantile(lat, k, 0.99);
    s->max = lat[k - 1];
    say("latency: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (%zu of %zu arrived)", s->p50,
        s->p90, s->p99, s->max, k, n);
out:
    free(ids);
    free(sent);
    free(lat);
    sm_buf_fini(&body);
    return rc;
}

/* The summary: one JSON object, units in the keys, counters as integers. */
void print_summary(const ctx *c, const summary *s)
{
    shared *sh = c->sh;
    const struct {
        const char *key;
        double v;
        int decimals;
    } f[] = {
        {"agents", (double)c->o->agents, 0},
        {"shards", (double)c->n_shards, 0},
        {"hold_ms", (double)c->o->hold_ms, 0},
        {"hold_told_ms", (double)atomic_load(&sh->hold_told_ms), 0},
        {"jobs_per_agent", (double)c->o->jobs_per_agent, 0},
        {"register_s", s->register_s, 3},
        {"idle_s", s->idle_s, 2},
        {"idle_cpu_pct_of_core", s->idle_cpu, 3},
        {"idle_polls_per_s", s->idle_polls_per_s, 1},
        {"idle_rss_MB", s->idle_rss, 2},
        {"throughput_jobs", (double)s->tp_jobs, 0},
        {"throughput_s", s->tp_s, 3},
        {"submit_jobs_per_s", s->submit_per_s, 1},
        {"results_per_s", s->results_per_s, 1},
        {"dispatch_jobs_per_s", s->dispatch_per_s, 1},
        {"throughput_coord_cpu_pct_of_core", s->tp_coord_cpu, 1},
        {"throughput_swarm_cpu_pct_of_core", s->tp_swarm_cpu, 1},
        {"latency_jobs", (double)(s->lat_n + s->lat_missing), 0},
        {"latency_missing", (double)s->lat_missing, 0},
        {"dispatch_p50_ms", s->p50, 3},
        {"dispatch_p90_ms", s->p90, 3},
        {"dispatch_p99_ms", s->p99, 3},
        {"dispatch_max_ms", s->max, 3},
        {"peak_rss_MB", s->peak_rss, 2},
        {"rss_MB", s->rss, 2},
        {"swarm_agents_answered", (double)atomic_load(&sh->registered), 0},
        {"swarm_replies", (double)atomic_load(&sh->replies), 0},
        {"swarm_bad_replies", (double)atomic_load(&sh->bad_replies), 0},
        {"swarm_resends", (double)atomic_load(&sh->resends), 0},
        {"swarm_send_eagain", (double)atomic_load(&sh->send_again), 0},
        {"swarm_results_acked", (double)atomic_load(&sh->acked), 0},
        {"coord_polls", (double)s->end.polls, 0},
        {"coord_results_duplicate", (double)s->end.duplicate, 0},
        {"coord_results_orphan", (double)s->end.orphan, 0},
        {"coord_rejected_total", (double)s->end.rejected, 0},
    };
    putchar('{');
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        printf("%s\"%s\":%.*f", i ? "," : "", f[i].key, f[i].decimals, f[i].v);
    puts("}");
}

int run_phases(ctx *c, int64_t t0, summary *s)
{
    int rc;
    if ((rc = phase_register(c, t0, s)) || (rc = phase_idle(c, s)) ||
        (rc = phase_throughput(c, s)) || (rc = phase_latency(c, s)))
        return rc;
    if ((rc = status_mb(c->o->coord_pid, "VmHWM", &s->peak_rss)) ||
        (rc = status_mb(c->o->coord_pid, "VmRSS", &s->rss)) || (rc = get_health(c, &s->end)))
        return rc;
    say("peak RSS of the coordinator: %.1f MB (now %.1f MB)", s->peak_rss, s->rss);
    if (atomic_load(&c->sh->table_full))
        say("warning: %" PRIu64 " arrivals did not fit the job table",
            atomic_load(&c->sh->table_full));
    return 0;
}

/* Stops the shards and reaps them; a shard that does not leave in 10 s is killed. */
int stop_shards(ctx *c)
{
    int bad = 0;
    atomic_store(&c->sh->stop, 1);
    const int64_t deadline = sm_mono_ns() + 10 * NS_PER_S;
    for (size_t i = 0; i < c->n_shards; i++) {
        if (c->shards[i] <= 0)
            continue;
        int status;
        pid_t p;
        while ((p = waitpid(c->shards[i], &status, WNOHANG)) == 0 && sm_mono_ns() < deadline)
            sleep_ms(20);
        if (p == 0) {
            say("shard %zu did not stop: killing it", i);
            kill(c->shards[i], SIGKILL);
            waitpid(c->shards[i], &status, 0);
            bad = 1;
        } else if (p < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            bad = 1;
        }
    }
    return bad;
}
