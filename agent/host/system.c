/* Fingerprint items from /proc and /sys: sysctls, CPUs, memory, the agent's cgroup. */
#include "agent/host/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether a file of the sysctl directory is one to record: a regular file someone may read
 * (write-only files are triggers, not settings), and not a key: netdev_rss_key is random per
 * boot, tcp_fastopen_key a secret that must not travel to the coordinator. */
static bool sysctl_wanted(int dfd, const char *name, const char *prefix)
{
    if (name[0] == '.' || strncmp(name, prefix, strlen(prefix)) != 0)
        return false;
    if (strcmp(name, "netdev_rss_key") == 0 || strcmp(name, "tcp_fastopen_key") == 0)
        return false;
    struct stat st;
    if (fstatat(dfd, name, &st, 0) != 0)
        return true; /* recorded as unreadable with the reason */
    return S_ISREG(st.st_mode) && (st.st_mode & 0444) != 0;
}

/* sysctl.<dir with dots>.<file> for the files of /proc/sys/<dir> whose name starts with
 * prefix. They are the calling thread's network namespace's: /proc/sys/net follows it. */
static int sysctl_dir(sm_fingerprint *fp, const char *dir, const char *prefix, sm_error *err)
{
    char path[512], key[SM_FP_KEY_MAX + 1], dotted[32];
    snprintf(dotted, sizeof dotted, "%s", dir);
    for (char *c = dotted; *c; c++)
        if (*c == '/')
            *c = '.';
    snprintf(path, sizeof path, "/proc/sys/%s", dir);
    DIR *d = opendir(path);
    if (d == NULL) {
        snprintf(key, sizeof key, "sysctl.%s", dotted);
        return sm_fpc_unreadable(fp, key, errno, err);
    }
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d)) != NULL) {
        if (!sysctl_wanted(dirfd(d), de->d_name, prefix))
            continue;
        snprintf(key, sizeof key, "sysctl.%s.%.64s", dotted, de->d_name);
        snprintf(path, sizeof path, "/proc/sys/%s/%s", dir, de->d_name);
        rc = sm_fpc_file(fp, key, path, err);
    }
    closedir(d);
    return rc;
}

static int sysctl_items(sm_fingerprint *fp, sm_error *err)
{
    int rc = sysctl_dir(fp, "net/core", "", err);
    rc = rc ? rc : sysctl_dir(fp, "net/unix", "", err);
    rc = rc ? rc : sysctl_dir(fp, "net/ipv4", "tcp_", err);
    rc = rc ? rc : sysctl_dir(fp, "net/ipv4", "udp_", err);
    return rc;
}

/* The value after "name<spaces>:" on the first line of path that starts with name. */
static int proc_field(const char *path, const char *name, char *out, size_t len)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return errno;
    char line[1024];
    int e = ENODATA;
    size_t n = strlen(name);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, name, n) != 0 || !strchr(" \t:", line[n]))
            continue;
        char *v = strchr(line, ':');
        if (v == NULL)
            continue;
        v += 1 + strspn(v + 1, " \t");
        v[strcspn(v, "\n")] = '\0';
        snprintf(out, len, "%s", v);
        e = 0;
        break;
    }
    fclose(f);
    return e;
}

static int put_field(sm_fingerprint *fp, const char *key, const char *path, const char *name,
                     sm_error *err)
{
    char v[512];
    int e = proc_field(path, name, v, sizeof v);
    return e ? sm_fpc_unreadable(fp, key, e, err) : sm_fpc_put(fp, key, v, err);
}

/* The [selected] word of a sysfs choice file ("always [madvise] never"). */
static int put_selected(sm_fingerprint *fp, const char *key, const char *path, sm_error *err)
{
    char buf[512];
    int e = sm_fpc_read(path, buf, sizeof buf);
    if (e)
        return sm_fpc_unreadable(fp, key, e, err);
    char *open = strchr(buf, '['), *close = open ? strchr(open, ']') : NULL;
    if (open == NULL || close == NULL)
        return sm_fpc_put(fp, key, buf, err);
    *close = '\0';
    return sm_fpc_put(fp, key, open + 1, err);
}

static int cpu_items(sm_fingerprint *fp, sm_error *err)
{
    const char *cpu = "/sys/devices/system/cpu";
    const char *freq = "/sys/devices/system/cpu/cpu0/cpufreq";
    char path[256];
    int rc = put_field(fp, "cpu.model", "/proc/cpuinfo", "model name", err);
    long n = sysconf(_SC_NPROCESSORS_CONF);
    rc = rc ? rc
            : (n > 0 ? sm_fpc_putf(fp, "cpu.count", err, "%ld", n)
                     : sm_fpc_unreadable(fp, "cpu.count", errno ? errno : EINVAL, err));
    snprintf(path, sizeof path, "%s/online", cpu);
    rc = rc ? rc : sm_fpc_file(fp, "cpu.online", path, err);
    snprintf(path, sizeof path, "%s/smt/control", cpu);
    rc = rc ? rc : sm_fpc_file(fp, "cpu.smt", path, err);
    snprintf(path, sizeof path, "%s/scaling_governor", freq);
    rc = rc ? rc : sm_fpc_file(fp, "cpu.governor", path, err);
    snprintf(path, sizeof path, "%s/scaling_min_freq", freq);
    rc = rc ? rc : sm_fpc_file(fp, "cpu.freq_min_khz", path, err);
    snprintf(path, sizeof path, "%s/scaling_max_freq", freq);
    rc = rc ? rc : sm_fpc_file(fp, "cpu.freq_max_khz", path, err);
    rc = rc ? rc : sm_fpc_file(fp, "cpu.numa_nodes", "/sys/devices/system/node/online", err);
    return rc;
}

static int mem_items(sm_fingerprint *fp, sm_error *err)
{
    const char *thp = "/sys/kernel/mm/transparent_hugepage";
    char path[256], v[128];
    snprintf(path, sizeof path, "%s/enabled", thp);
    int rc = put_selected(fp, "mem.thp", path, err);
    snprintf(path, sizeof path, "%s/defrag", thp);
    rc = rc ? rc : put_selected(fp, "mem.thp_defrag", path, err);
    if (rc)
        return rc;
    int e = proc_field("/proc/meminfo", "MemTotal", v, sizeof v);
    if (e)
        return sm_fpc_unreadable(fp, "mem.total_kib", e, err);
    v[strcspn(v, " ")] = '\0'; /* "16318024 kB" */
    return sm_fpc_put(fp, "mem.total_kib", v, err);
}

/* The path of the agent's cgroup v2, from the "0::/path" line of /proc/self/cgroup. 0 or an
 * errno (ENOENT: no cgroup v2 hierarchy, cgroup v1 alone). */
static int own_cgroup(char *out, size_t len)
{
    char buf[4096], *save = NULL;
    int e = sm_fpc_read("/proc/self/cgroup", buf, sizeof buf);
    if (e)
        return e;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (strncmp(line, "0::", 3) == 0) {
            snprintf(out, len, "%s", line + 3);
            return 0;
        }
    return ENOENT;
}

static int cgroup_items(sm_fingerprint *fp, sm_error *err)
{
    static const char *const files[][2] = {
        {"cgroup.cpu.max", "cpu.max"},
        {"cgroup.memory.max", "memory.max"},
        {"cgroup.cpuset.cpus.effective", "cpuset.cpus.effective"},
    };
    const size_t n = sizeof files / sizeof files[0];
    char cg[2048], path[2400];
    int e = own_cgroup(cg, sizeof cg);
    int rc =
        e ? sm_fpc_unreadable(fp, "info.cgroup", e, err) : sm_fpc_put(fp, "info.cgroup", cg, err);
    for (size_t i = 0; i < n && !rc; i++) {
        if (e) {
            rc = sm_fpc_unreadable(fp, files[i][0], e, err);
            continue;
        }
        /* the root cgroup has no limits of its own: ENOENT says so */
        snprintf(path, sizeof path, "/sys/fs/cgroup%s/%s", strcmp(cg, "/") ? cg : "", files[i][1]);
        rc = sm_fpc_file(fp, files[i][0], path, err);
    }
    return rc;
}

int sm_fpc_sys(sm_fingerprint *fp, sm_error *err)
{
    int rc = sysctl_items(fp, err);
    rc = rc ? rc : cpu_items(fp, err);
    rc = rc ? rc : mem_items(fp, err);
    rc = rc ? rc : cgroup_items(fp, err);
    return rc;
}
