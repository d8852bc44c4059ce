/* The fingerprint collector: kernel, virtualisation and versions, then the system and network
 * items (system.c, network.c). */
#include "agent/host/fingerprint.h"

#include "agent/host/internal.h"
#include "proto/clock.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netlink/version.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#ifndef SM_NANOMSG_VERSION
#define SM_NANOMSG_VERSION "unknown"
#endif

/* The kernel command line, filtered (cmdline.c). SM_FP_PROC_CMDLINE names another
 * file to read it from: for tests, which cannot boot the host with the line they need. */
static int kernel_cmdline(sm_fingerprint *fp, sm_error *err)
{
    char buf[4096];
    const char *path = getenv("SM_FP_PROC_CMDLINE");
    int e = sm_fpc_read(path && *path ? path : "/proc/cmdline", buf, sizeof buf);
    return e ? sm_fpc_unreadable(fp, "info.kernel.cmdline_left_out", e, err)
             : sm_fpc_cmdline(fp, buf, err);
}

/* kernel.mitigations.<name> for each file of the vulnerabilities directory. */
static int kernel_mitigations(sm_fingerprint *fp, sm_error *err)
{
    const char *dir = "/sys/devices/system/cpu/vulnerabilities";
    DIR *d = opendir(dir);
    if (d == NULL)
        return sm_fpc_unreadable(fp, "kernel.mitigations", errno, err);
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char key[SM_FP_KEY_MAX + 1], path[512];
        snprintf(key, sizeof key, "kernel.mitigations.%.100s", de->d_name);
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        rc = sm_fpc_file(fp, key, path, err);
    }
    closedir(d);
    return rc;
}

static int kernel_items(sm_fingerprint *fp, sm_error *err)
{
    struct utsname u;
    int rc;
    if (uname(&u) != 0) {
        int e = errno;
        rc = sm_fpc_unreadable(fp, "kernel.release", e, err);
        rc = rc ? rc : sm_fpc_unreadable(fp, "kernel.version", e, err);
        rc = rc ? rc : sm_fpc_unreadable(fp, "info.hostname", e, err);
    } else {
        rc = sm_fpc_put(fp, "kernel.release", u.release, err);
        rc = rc ? rc : sm_fpc_put(fp, "kernel.version", u.version, err);
        rc = rc ? rc : sm_fpc_put(fp, "info.hostname", u.nodename, err);
    }
    rc = rc ? rc : kernel_cmdline(fp, err);
    rc = rc ? rc : kernel_mitigations(fp, err);
    rc = rc ? rc : sm_fpc_file(fp, "kernel.isolated", "/sys/devices/system/cpu/isolated", err);
    rc = rc ? rc : sm_fpc_file(fp, "kernel.nohz_full", "/sys/devices/system/cpu/nohz_full", err);
    return rc;
}

/* The hypervisor's vendor from CPUID leaf 0x40000000 when the hypervisor bit (leaf 1, ECX bit
 * 31) is set; "none" when it is clear. Elsewhere, what Xen-style /sys/hypervisor says. */
static int virt_hypervisor(sm_fingerprint *fp, sm_error *err)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31)))
        return sm_fpc_put(fp, "virt.hypervisor", "none", err);
    __cpuid(0x40000000, a, b, c, d);
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &c, 4);
    memcpy(vendor + 8, &d, 4);
    vendor[12] = '\0';
    return sm_fpc_put(fp, "virt.hypervisor", vendor[0] ? vendor : "unknown", err);
#else
    return sm_fpc_file(fp, "virt.hypervisor", "/sys/hypervisor/type", err);
#endif
}

static int virt_items(sm_fingerprint *fp, sm_error *err)
{
    int rc = virt_hypervisor(fp, err);
    rc = rc ? rc : sm_fpc_file(fp, "virt.product", "/sys/class/dmi/id/product_name", err);
    rc = rc ? rc
            : sm_fpc_file(fp, "clock.source",
                          "/sys/devices/system/clocksource/clocksource0/current_clocksource", err);
    return rc;
}

static int version_items(sm_fingerprint *fp, sm_error *err)
{
    const curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
    int rc = sm_fpc_put(fp, "lib.curl", cv && cv->version ? cv->version : "unknown", err);
    rc = rc ? rc : sm_fpc_put(fp, "lib.openssl", OpenSSL_version(OPENSSL_VERSION), err);
    /* nanomsg has no call that says its version: the one the build was configured with. */
    rc = rc ? rc : sm_fpc_put(fp, "lib.nanomsg", SM_NANOMSG_VERSION " (built against)", err);
    rc = rc ? rc : sm_fpc_put(fp, "lib.libnl", LIBNL_VERSION, err);
    rc = rc ? rc : sm_fpc_put(fp, "agent.version", SM_VERSION, err);
    return rc;
}

int sm_fp_collect(sm_fingerprint *fp, const char *data_addr, sm_error *err)
{
    int64_t t0 = sm_mono_ns();
    fp->collected_ms = (uint64_t)sm_wall_ms();
    int rc = kernel_items(fp, err);
    rc = rc ? rc : virt_items(fp, err);
    rc = rc ? rc : version_items(fp, err);
    rc = rc ? rc : sm_fpc_sys(fp, err);
    rc = rc ? rc : sm_fpc_net(fp, data_addr ? data_addr : "", err);
    int64_t us = (sm_mono_ns() - t0) / 1000;
    fp->collect_us = us > 0 ? (uint64_t)us : 1;
    sm_fp_sort(fp);
    return rc;
}
