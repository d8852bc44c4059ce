/* The kernel command line reduced to the parameters that change how a host measures. */
#include "agent/host/internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The allow-list, each one documented in docs/fingerprint.md. A command line also holds
 * provisioning URLs, NFS or iSCSI credentials and tokens (root=, nfsroot=, ip=, ...): only these
 * names are ever sent, and of the others only how many there were. */
static const char *const perf_params[] = {
    /* CPU vulnerability mitigations */
    "mitigations", "nosmt", "spectre_v2", "spectre_v2_user", "spec_store_bypass_disable", "pti",
    "nopti", "mds", "tsx", "retbleed", "l1tf",
    /* CPUs kept from the scheduler, ticks and RCU callbacks; preemption */
    "isolcpus", "nohz", "nohz_full", "rcu_nocbs", "rcu_nocb_poll", "irqaffinity", "skew_tick",
    "threadirqs", "preempt", "maxcpus", "nr_cpus",
    /* idle states and frequency scaling */
    "idle", "intel_idle.max_cstate", "processor.max_cstate", "intel_pstate", "amd_pstate",
    "cpufreq.default_governor",
    /* DMA remapping */
    "iommu", "intel_iommu", "amd_iommu",
    /* memory */
    "transparent_hugepage", "hugepages", "hugepagesz", "default_hugepagesz", "numa_balancing",
    /* clocks, watchdogs, audit */
    "tsc", "clocksource", "nowatchdog", "nmi_watchdog", "audit"};

bool sm_fpc_cmdline_allowed(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof perf_params / sizeof perf_params[0]; i++)
        if (strlen(perf_params[i]) == n && strncmp(name, perf_params[i], n) == 0)
            return true;
    return false;
}

/* A value is sent only when it reads as a setting: CPU lists, words, sizes. */
static bool value_char_ok(char c)
{
    return c && strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,.-_:+=", c);
}

/* One word of the command line: kernel.cmdline.<name> when its name is allowed; *others counts
 * the rest. */
static int one_param(sm_fingerprint *fp, const char *word, size_t n, unsigned *others,
                     sm_error *err)
{
    char v[SM_FP_CMDLINE_VALUE_MAX + 1];
    const char *eq = memchr(word, '=', n);
    size_t name_n = eq ? (size_t)(eq - word) : n;
    if (!sm_fpc_cmdline_allowed(word, name_n)) {
        (*others)++;
        return 0;
    }
    size_t o = 0;
    bool ok = true;
    if (eq) {
        /* quotes only group words: isolcpus="1,2" is isolcpus=1,2 */
        for (const char *c = eq + 1; c < word + n && ok; c++)
            if (*c != '"') {
                ok = o < SM_FP_CMDLINE_VALUE_MAX && value_char_ok(*c);
                if (ok)
                    v[o++] = *c;
            }
    }
    v[o] = '\0';
    char key[SM_FP_KEY_MAX + 1];
    snprintf(key, sizeof key, "kernel.cmdline.%.*s", (int)name_n, word);
    return sm_fpc_put(fp, key, ok ? v : "(left out: not a setting's characters)", err);
}

int sm_fpc_cmdline(sm_fingerprint *fp, const char *cmdline, sm_error *err)
{
    unsigned others = 0;
    int rc = 0;
    const char *c = cmdline;
    while (!rc && *c) {
        c += strspn(c, " \t\n");
        const char *start = c;
        bool quoted = false;
        while (*c && (quoted || !strchr(" \t\n", *c))) {
            if (*c == '"')
                quoted = !quoted;
            c++;
        }
        if (c - start == 2 && strncmp(start, "--", 2) == 0) {
            /* what follows is init's, not the kernel's: left out, counted */
            while (*c) {
                c += strspn(c, " \t\n");
                if (*c)
                    others++;
                c += strcspn(c, " \t\n");
            }
            break;
        }
        if (c > start)
            rc = one_param(fp, start, (size_t)(c - start), &others, err);
    }
    return rc ? rc : sm_fpc_putf(fp, "info.kernel.cmdline_left_out", err, "%u", others);
}
