/* Unit tests of the agent's fingerprint collector: the items say what the system says, and the
 * document stays within its bounds by leaving out whole interfaces. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/host/fingerprint.h"

/* One collection shared by the tests that read the system (collecting is the slow part). */
typedef struct collected {
    sm_fingerprint fp;
} collected;

static int collect_setup(void **state)
{
    collected *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    sm_fp_init(&c->fp);
    sm_error err = {0};
    if (sm_fp_collect(&c->fp, "127.0.0.1", &err) != 0) {
        fprintf(stderr, "collect: %s\n", err.msg);
        sm_fp_fini(&c->fp);
        free(c);
        return -1;
    }
    *state = c;
    return 0;
}

static int collect_teardown(void **state)
{
    collected *c = *state;
    sm_fp_fini(&c->fp);
    free(c);
    return 0;
}

static const sm_fp_item *must_get(const sm_fingerprint *fp, const char *key)
{
    const sm_fp_item *it = sm_fp_get(fp, key);
    if (it == NULL)
        fail_msg("item %s is absent", key);
    return it;
}

static const char *value_of(const sm_fingerprint *fp, const char *key)
{
    const sm_fp_item *it = must_get(fp, key);
    if (it->value == NULL)
        fail_msg("item %s is unreadable (%s)", key, it->unreadable);
    return it->value;
}

/* The file's content with whitespace runs made one space and the ends trimmed. */
static void read_collapsed(const char *path, char *out, size_t len)
{
    char raw[4096];
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(raw, 1, sizeof raw - 1, f);
    fclose(f);
    raw[n] = '\0';
    size_t o = 0;
    for (char *tok = strtok(raw, " \t\n"); tok && o + 1 < len; tok = strtok(NULL, " \t\n"))
        o += (size_t)snprintf(out + o, len - o, "%s%s", o ? " " : "", tok);
    out[o] = '\0';
}

static void test_fp_collect_kernel_release_is_unames(void **state)
{
    collected *c = *state;
    struct utsname u;
    assert_int_equal(uname(&u), 0);
    assert_string_equal(value_of(&c->fp, "kernel.release"), u.release);
    assert_string_equal(value_of(&c->fp, "info.hostname"), u.nodename);
}

static void test_fp_collect_tcp_rmem_is_the_sysctl_files(void **state)
{
    collected *c = *state;
    char want[256];
    read_collapsed("/proc/sys/net/ipv4/tcp_rmem", want, sizeof want);
    assert_string_equal(value_of(&c->fp, "sysctl.net.ipv4.tcp_rmem"), want);
    read_collapsed("/proc/sys/net/core/somaxconn", want, sizeof want);
    assert_string_equal(value_of(&c->fp, "sysctl.net.core.somaxconn"), want);
}

/* Every readable file of net/core is an item; write-only files and the keys are not. */
static void test_fp_collect_takes_every_readable_net_core_sysctl_but_keys(void **state)
{
    collected *c = *state;
    DIR *d = opendir("/proc/sys/net/core");
    assert_non_null(d);
    struct dirent *de;
    int readable = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char key[256];
        struct stat st;
        snprintf(key, sizeof key, "sysctl.net.core.%.200s", de->d_name);
        assert_int_equal(fstatat(dirfd(d), de->d_name, &st, 0), 0);
        bool wanted = (st.st_mode & 0444) != 0 && strcmp(de->d_name, "netdev_rss_key") != 0;
        if (wanted != (sm_fp_get(&c->fp, key) != NULL))
            fail_msg("%s: %s", key, wanted ? "absent" : "present but should not be");
        readable += wanted;
    }
    closedir(d);
    assert_true(readable > 10);
    assert_null(sm_fp_get(&c->fp, "sysctl.net.core.netdev_rss_key"));
    assert_null(sm_fp_get(&c->fp, "sysctl.net.ipv4.tcp_fastopen_key"));
    assert_non_null(sm_fp_get(&c->fp, "sysctl.net.ipv4.udp_mem"));
}

static void test_fp_collect_lo_mtu_is_siocgifmtus(void **state)
{
    collected *c = *state;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    assert_int_equal(ioctl(fd, SIOCGIFMTU, &ifr), 0);
    close(fd);
    char want[32];
    snprintf(want, sizeof want, "%d", ifr.ifr_mtu);
    assert_string_equal(value_of(&c->fp, "if.lo.mtu"), want);
    assert_true(value_of(&c->fp, "if.lo.qdisc")[0] != '\0');
    assert_string_equal(value_of(&c->fp, "if.lo.state"), "up");
    const char *gso = value_of(&c->fp, "if.lo.offload.gso");
    assert_true(strcmp(gso, "on") == 0 || strcmp(gso, "off") == 0);
    assert_string_equal(value_of(&c->fp, "info.data_if"), "lo");
}

/* cpu.governor is the file's word where cpufreq exists, and says ENOENT where it does not. */
static void test_fp_collect_unreadable_item_names_its_errno(void **state)
{
    collected *c = *state;
    const char *path = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";
    const sm_fp_item *it = must_get(&c->fp, "cpu.governor");
    if (access(path, R_OK) == 0) {
        char want[128];
        read_collapsed(path, want, sizeof want);
        assert_string_equal(it->value, want);
    } else {
        assert_null(it->value);
        assert_string_equal(it->unreadable, sm_fp_errno_name(errno));
    }
    /* and every unreadable item of the document names an errno */
    for (size_t i = 0; i < c->fp.n; i++)
        if (c->fp.items[i].value == NULL && c->fp.items[i].unreadable[0] != 'E')
            fail_msg("%s: unreadable '%s'", c->fp.items[i].key, c->fp.items[i].unreadable);
}

/* Each kernel.cmdline.<param> is a word of the command line, with its value; the line itself
 * is not sent. */
static void test_fp_collect_cmdline_params_come_from_the_cmdline(void **state)
{
    collected *c = *state;
    char cmdline[4096];
    read_collapsed("/proc/cmdline", cmdline, sizeof cmdline);
    assert_null(sm_fp_get(&c->fp, "info.kernel.cmdline"));
    assert_non_null(sm_fp_get(&c->fp, "info.kernel.cmdline_left_out"));
    for (size_t i = 0; i < c->fp.n; i++) {
        const sm_fp_item *it = &c->fp.items[i];
        if (strncmp(it->key, "kernel.cmdline.", 15) != 0)
            continue;
        char word[SM_FP_VALUE_MAX + 200];
        snprintf(word, sizeof word, "%s%s%s", it->key + 15, it->value[0] ? "=" : "", it->value);
        if (strstr(cmdline, word) == NULL)
            fail_msg("%s=%s is not in the command line", it->key, it->value);
    }
    assert_non_null(sm_fp_get(&c->fp, "virt.hypervisor"));
    assert_non_null(sm_fp_get(&c->fp, "clock.source"));
    assert_non_null(sm_fp_get(&c->fp, "mem.thp"));
    assert_non_null(sm_fp_get(&c->fp, "cgroup.memory.max"));
    assert_string_equal(value_of(&c->fp, "agent.version"), SM_VERSION);
}

static void test_fp_collect_is_timed_and_encodes_within_the_limit(void **state)
{
    collected *c = *state;
    assert_true(c->fp.collect_us > 0);
    assert_true(c->fp.collected_ms > 1700000000000ull);
    sm_error err = {0};
    size_t len = 0;
    char *text = sm_fp_encode(&c->fp, &len, &err);
    assert_non_null(text);
    assert_true(len <= SM_FP_MAX);
    print_message("fingerprint: %zu items, %zu bytes, collected in %llu us\n", c->fp.n, len,
                  (unsigned long long)c->fp.collect_us);
    sm_fingerprint back;
    sm_fp_init(&back);
    assert_int_equal(sm_fp_decode(text, len, &back, &err), 0);
    char h1[SM_FP_HASH_HEX + 1], h2[SM_FP_HASH_HEX + 1];
    sm_fp_hash(&c->fp, h1);
    sm_fp_hash(&back, h2);
    assert_string_equal(h1, h2);
    sm_fp_fini(&back);
    free(text);
}

static void test_fp_collect_data_if_absent_without_addr_and_enxio_for_a_foreign_one(void **state)
{
    (void)state;
    sm_fingerprint fp;
    sm_error err = {0};
    sm_fp_init(&fp);
    assert_int_equal(sm_fp_collect(&fp, "", &err), 0);
    assert_null(sm_fp_get(&fp, "info.data_if"));
    sm_fp_fini(&fp);
    assert_int_equal(sm_fp_collect(&fp, "192.0.2.77", &err), 0); /* TEST-NET-1 */
    const sm_fp_item *it = must_get(&fp, "info.data_if");
    assert_null(it->value);
    assert_string_equal(it->unreadable, "ENXIO");
    sm_fp_fini(&fp);
}

static void test_fp_rate_and_size_read_as_tc_prints_them(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(sm_fp_rate_text(57000000, b, sizeof b), "57Mbit");
    assert_string_equal(sm_fp_rate_text(57300000, b, sizeof b), "57.3Mbit");
    assert_string_equal(sm_fp_rate_text(800, b, sizeof b), "800bit");
    assert_string_equal(sm_fp_rate_text(1000, b, sizeof b), "1Kbit");
    assert_string_equal(sm_fp_rate_text(10000000000ull, b, sizeof b), "10Gbit");
    assert_string_equal(sm_fp_size_text(4000, b, sizeof b), "4000b");
    assert_string_equal(sm_fp_size_text(1600, b, sizeof b), "1600b");
    assert_string_equal(sm_fp_size_text(65536, b, sizeof b), "64Kb");
    assert_string_equal(sm_fp_size_text(2u << 20, b, sizeof b), "2Mb");
    assert_string_equal(sm_fp_size_text(0, b, sizeof b), "0b");
}

/* ---- the bound ---- */

/* n synthetic interfaces eth0000... (even ones up) after lo, each with items items. */
static sm_fp_iface *synthetic(size_t n, size_t items)
{
    sm_fp_iface *ifs = calloc(n + 1, sizeof *ifs);
    assert_non_null(ifs);
    for (size_t i = 0; i <= n; i++) {
        sm_fp_iface *f = &ifs[i];
        if (i == n)
            snprintf(f->name, sizeof f->name, "lo");
        else
            snprintf(f->name, sizeof f->name, "eth%04u", (unsigned)(i % 10000));
        f->up = i == n || i % 2 == 0;
        sm_fp_init(&f->items);
        for (size_t k = 0; k < items; k++) {
            char key[64];
            snprintf(key, sizeof key, "if.%s.k%02zu", f->name, k);
            assert_int_equal(sm_fp_setf(&f->items, key, NULL, "value-%zu-%zu", i, k), 0);
        }
    }
    return ifs;
}

static void free_synthetic(sm_fp_iface *ifs, size_t n)
{
    for (size_t i = 0; i <= n; i++)
        sm_fp_fini(&ifs[i].items);
    free(ifs);
}

static bool has_iface(const sm_fingerprint *fp, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "if.%s.k00", name);
    return sm_fp_get(fp, key) != NULL;
}

static void test_fp_bound_2000_interfaces_keeps_lo_data_and_up_ones_by_name(void **state)
{
    (void)state;
    const size_t n = 2000;
    sm_fp_iface *ifs = synthetic(n, 12);
    sm_fingerprint fp;
    sm_error err = {0};
    sm_fp_init(&fp);
    assert_int_equal(sm_fp_set(&fp, "kernel.release", "6.1.0", &err), 0);
    assert_int_equal(sm_fp_add_ifaces(&fp, ifs, n + 1, "eth1999", &err), 0);
    sm_fp_sort(&fp);
    size_t len = 0;
    char *text = sm_fp_encode(&fp, &len, &err);
    assert_non_null(text);
    assert_true(len <= SM_FP_MAX);
    assert_true(len > SM_FP_MAX - 1024); /* full: not more left out than needed */
    free(text);
    assert_true(has_iface(&fp, "lo"));
    assert_true(has_iface(&fp, "eth1999")); /* the data interface, though down */
    /* the rest kept: the first up ones by name, none down */
    size_t kept = 2, up_kept = 0;
    char name[16];
    for (size_t i = 0; i < n - 1; i++) {
        snprintf(name, sizeof name, "eth%04zu", i);
        bool in = has_iface(&fp, name);
        if (i % 2 == 1)
            assert_false(in);
        else if (in)
            assert_int_equal(i, 2 * up_kept++); /* no gap: eth0000, eth0002, ... */
        kept += in;
    }
    assert_true(up_kept > 10);
    assert_int_equal(fp.omitted_ifaces, n + 1 - kept);
    assert_non_null(strstr(fp.omitted_reason, "interfaces left out"));
    assert_non_null(sm_fp_get(&fp, "if.eth0000.k11")); /* whole interfaces */
    sm_fp_fini(&fp);
    free_synthetic(ifs, n);
}

static void test_fp_bound_stops_at_the_item_count_too(void **state)
{
    (void)state;
    const size_t n = 200; /* 200 x 20 tiny items: the count fills before the bytes do */
    sm_fp_iface *ifs = calloc(n, sizeof *ifs);
    assert_non_null(ifs);
    for (size_t i = 0; i < n; i++) {
        snprintf(ifs[i].name, sizeof ifs[i].name, "e%03zu", i);
        ifs[i].up = true;
        sm_fp_init(&ifs[i].items);
        for (size_t k = 0; k < 20; k++) {
            char key[32];
            snprintf(key, sizeof key, "if.e%03zu.%02zu", i, k);
            assert_int_equal(sm_fp_set(&ifs[i].items, key, "1", NULL), 0);
        }
    }
    sm_fingerprint fp;
    sm_error err = {0};
    sm_fp_init(&fp);
    assert_int_equal(sm_fp_add_ifaces(&fp, ifs, n, "", &err), 0);
    assert_int_equal(fp.n, (SM_FP_ITEMS_MAX / 20) * 20);
    assert_int_equal(fp.omitted_ifaces, n - SM_FP_ITEMS_MAX / 20);
    size_t len;
    char *text = sm_fp_encode(&fp, &len, &err);
    assert_non_null(text);
    free(text);
    sm_fp_fini(&fp);
    for (size_t i = 0; i < n; i++)
        sm_fp_fini(&ifs[i].items);
    free(ifs);
}

static void test_fp_bound_leaves_nothing_out_when_it_fits(void **state)
{
    (void)state;
    sm_fp_iface *ifs = synthetic(3, 5);
    sm_fingerprint fp;
    sm_error err = {0};
    sm_fp_init(&fp);
    assert_int_equal(sm_fp_add_ifaces(&fp, ifs, 4, NULL, &err), 0);
    assert_int_equal(fp.n, 20);
    assert_int_equal(fp.omitted_ifaces, 0);
    assert_string_equal(fp.omitted_reason, "");
    sm_fp_fini(&fp);
    free_synthetic(ifs, 3);
}

int main(void)
{
    const struct CMUnitTest collect[] = {
        cmocka_unit_test(test_fp_collect_kernel_release_is_unames),
        cmocka_unit_test(test_fp_collect_tcp_rmem_is_the_sysctl_files),
        cmocka_unit_test(test_fp_collect_takes_every_readable_net_core_sysctl_but_keys),
        cmocka_unit_test(test_fp_collect_lo_mtu_is_siocgifmtus),
        cmocka_unit_test(test_fp_collect_unreadable_item_names_its_errno),
        cmocka_unit_test(test_fp_collect_cmdline_params_come_from_the_cmdline),
        cmocka_unit_test(test_fp_collect_is_timed_and_encodes_within_the_limit),
    };
    const struct CMUnitTest alone[] = {
        cmocka_unit_test(test_fp_collect_data_if_absent_without_addr_and_enxio_for_a_foreign_one),
        cmocka_unit_test(test_fp_rate_and_size_read_as_tc_prints_them),
        cmocka_unit_test(test_fp_bound_2000_interfaces_keeps_lo_data_and_up_ones_by_name),
        cmocka_unit_test(test_fp_bound_stops_at_the_item_count_too),
        cmocka_unit_test(test_fp_bound_leaves_nothing_out_when_it_fits),
    };
    int failed = cmocka_run_group_tests(collect, collect_setup, collect_teardown);
    failed += cmocka_run_group_tests(alone, NULL, NULL);
    return failed;
}
