/* sm-swarm: what /proc says of the coordinator and the shards (CPU, memory), and whether
 * they still run. */
#include "bench/swarm/swarm.h"

/* user + system CPU ticks of a process. */
int cpu_ticks(pid_t pid, uint64_t *ticks)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) {
        say("%s: %s", path, strerror(errno));
        return SM_ESYS;
    }
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    /* The command name may hold spaces and parentheses: the fields start after the last ')'. */
    const char *p = strrchr(text, ')');
    unsigned long long ut, st;
    if (!p ||
        sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) {
        say("%s: unexpected format", path);
        return SM_EPARSE;
    }
    *ticks = ut + st;
    return 0;
}

int swarm_ticks(ctx *c, uint64_t *ticks)
{
    uint64_t t, sum = 0;
    int rc = cpu_ticks(getpid(), &t);
    sum += t;
    for (size_t i = 0; i < c->n_shards && !rc; i++) {
        rc = cpu_ticks(c->shards[i], &t);
        sum += t;
    }
    *ticks = sum;
    return rc;
}

double pct_of_core(uint64_t ticks, int64_t ns)
{
    return (double)ticks / (double)sysconf(_SC_CLK_TCK) / ((double)ns / NS_PER_S) * 100.0;
}

/* A line of /proc/PID/status in kB (VmHWM, VmRSS) as MB (10^6 bytes). */
int status_mb(pid_t pid, const char *field, double *mb)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) {
        say("%s: %s", path, strerror(errno));
        return SM_ESYS;
    }
    size_t flen = strlen(field);
    int rc = SM_EPARSE;
    unsigned long long kb;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, flen) == 0 && line[flen] == ':' &&
            sscanf(line + flen + 1, "%llu", &kb) == 1) {
            *mb = (double)kb * 1024.0 / 1e6;
            rc = 0;
            break;
        }
    fclose(f);
    if (rc)
        say("%s: no %s line", path, field);
    return rc;
}

/* Fails when a shard died or we were asked to stop. */
int still_running(ctx *c)
{
    if (*c->stop) {
        say("interrupted");
        return SM_ECANCELED;
    }
    for (size_t i = 0; i < c->n_shards; i++) {
        int status;
        pid_t p = waitpid(c->shards[i], &status, WNOHANG);
        if (p == c->shards[i]) {
            say("shard %zu exited early (status %d)", i,
                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
            c->shards[i] = -1;
            return SM_ECLOSED;
        }
    }
    if (kill(c->o->coord_pid, 0) != 0) {
        say("the coordinator (pid %d) is gone", (int)c->o->coord_pid);
        return SM_ECLOSED;
    }
    return 0;
}
