/* Host facts from uname(2), /proc and /sys. */
#include "agent/host/facts.h"

#include <net/if.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "proto/buf.h"

/* Reads the first line of a small file into buf without its newline; 0 or -1. */
static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *ok = fgets(buf, (int)len, f);
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static void cpu_model(char *out, size_t len)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(out, len, "unknown");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *v = strchr(line, ':');
            if (v) {
                v += 1 + strspn(v + 1, " \t");
                v[strcspn(v, "\n")] = '\0';
                snprintf(out, len, "%s", v);
            }
            break;
        }
    }
    fclose(f);
}

static uint64_t mem_total(void)
{
    char line[256];
    unsigned long long kb = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb * 1024u;
}

static uint32_t lo_mtu(void)
{
    struct ifreq ifr;
    uint32_t mtu = 0;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return 0;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    if (ioctl(s, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
        mtu = (uint32_t)ifr.ifr_mtu;
    close(s);
    return mtu;
}

/* An identity file's first line when it looks like one (hex digits and '-'), else "". */
static void read_id(const char *path, char *out, size_t len)
{
    char buf[128];
    out[0] = '\0';
    if (read_line(path, buf, sizeof buf) != 0 || buf[0] == '\0' ||
        buf[strspn(buf, "0123456789abcdefABCDEF-")] != '\0' || strlen(buf) >= len)
        return;
    memcpy(out, buf, strlen(buf) + 1); /* fits: checked above */
}

/* sockmatrix's application id, fixed: every agent on one machine derives the same id from it. */
static const unsigned char app_id[16] = {0x6c, 0x1e, 0x0b, 0x5d, 0x92, 0x3f, 0x4a, 0x87,
                                         0xb4, 0x21, 0x7e, 0xc9, 0x58, 0x0d, 0xa3, 0x16};

int sm_facts_machine_hash(const char *machine_id, char out[33])
{
    unsigned char id[16], mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    out[0] = '\0';
    if (strlen(machine_id) != 32)
        return -1;
    for (int i = 0; i < 16; i++) {
        int hi = sm_hex_value(machine_id[2 * i]), lo = sm_hex_value(machine_id[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        id[i] = (unsigned char)(hi << 4 | lo);
    }
    if (HMAC(EVP_sha256(), id, sizeof id, app_id, sizeof app_id, mac, &mac_len) == NULL ||
        mac_len < 16)
        return -1;
    /* a version 4 UUID, as systemd's sd_id128_get_machine_app_specific() makes it */
    mac[6] = (unsigned char)((mac[6] & 0x0f) | 0x40);
    mac[8] = (unsigned char)((mac[8] & 0x3f) | 0x80);
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", mac[i]);
    return 0;
}

void sm_facts_collect(sm_facts *f)
{
    struct utsname u;
    char buf[64];
    memset(f, 0, sizeof *f);
    if (gethostname(f->hostname, sizeof f->hostname - 1) != 0)
        snprintf(f->hostname, sizeof f->hostname, "unknown");
    snprintf(f->kernel, sizeof f->kernel, "%s", uname(&u) == 0 ? u.release : "unknown");
    cpu_model(f->cpu_model, sizeof f->cpu_model);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    f->cores = n > 0 ? (uint32_t)n : 0;
    f->mem_bytes = mem_total();
    if (read_line("/proc/sys/net/ipv4/tcp_congestion_control", f->congestion,
                  sizeof f->congestion) != 0)
        snprintf(f->congestion, sizeof f->congestion, "unknown");
    f->lo_mtu = lo_mtu();
    if (getloadavg(f->loadavg, 3) != 3)
        f->loadavg[0] = f->loadavg[1] = f->loadavg[2] = -1;
    f->tcp_autocorking = 2;
    if (read_line("/proc/sys/net/ipv4/tcp_autocorking", buf, sizeof buf) == 0)
        f->tcp_autocorking = (uint32_t)atoi(buf);
    /* Network namespaces and containers of one machine share both: the coordinator runs the
     * jobs of such hosts one at a time, since they share its CPUs. */
    read_id("/proc/sys/kernel/random/boot_id", f->boot_id, sizeof f->boot_id);
    /* machine-id(5) asks to keep the id itself confidential: a hash keyed by it still tells
     * the same machine. The boot id is random per boot and says nothing lasting: sent as it is. */
    char mid[SM_FACTS_ID_MAX + 1];
    read_id("/etc/machine-id", mid, sizeof mid);
    if (sm_facts_machine_hash(mid, f->machine_id) != 0)
        f->machine_id[0] = '\0';
}
