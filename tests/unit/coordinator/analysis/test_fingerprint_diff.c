/* Unit tests of the fingerprint diff (coordinator/analysis/fpdiff.c): majority, ranking, text,
 * JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/fpdiff.h"
#include "coordinator/analysis/internal.h"
#include "proto/err.h"
#include "proto/fingerprint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_HOSTS 5

typedef struct fleet {
    sm_fingerprint fp[N_HOSTS];
    sm_fp_host hosts[N_HOSTS];
    size_t n;
} fleet;

static void set(sm_fingerprint *fp, const char *key, const char *value)
{
    sm_error err = {0};
    assert_int_equal(sm_fp_set(fp, key, value, &err), 0);
}

/* n hosts h1..hn with the same settings, a lo and an eth0, the items of every family. */
static void fleet_init(fleet *f, size_t n)
{
    static const char *const names[N_HOSTS] = {"h1", "h2", "h3", "h4", "h5"};
    f->n = n;
    for (size_t i = 0; i < n; i++) {
        sm_fingerprint *fp = &f->fp[i];
        sm_fp_init(fp);
        char host[16];
        snprintf(host, sizeof host, "%s.example", names[i]);
        set(fp, "info.hostname", host);
        set(fp, "info.data_if", "eth0");
        set(fp, "kernel.release", "6.1.0-18-amd64");
        set(fp, "kernel.cmdline.mitigations", "(unset)");
        set(fp, "if.lo.qdisc", "noqueue");
        set(fp, "if.lo.mtu", "65536");
        set(fp, "if.lo.offload.gso", "on");
        set(fp, "if.eth0.qdisc", "fq_codel limit 10240p");
        set(fp, "if.eth0.mtu", "1500");
        set(fp, "sysctl.net.ipv4.tcp_autocorking", "1");
        set(fp, "sysctl.net.ipv4.tcp_rmem", "4096 131072 6291456");
        set(fp, "sysctl.net.unix.max_dgram_qlen", "512");
        set(fp, "sysctl.net.core.somaxconn", "4096");
        set(fp, "cpu.governor", "performance");
        set(fp, "lib.curl", "7.88.1");
        sm_fp_sort(fp);
        f->hosts[i] = (sm_fp_host){names[i], fp};
    }
}

static void fleet_fini(fleet *f)
{
    for (size_t i = 0; i < f->n; i++)
        sm_fp_fini(&f->fp[i]);
}

static void set_on(fleet *f, size_t host, const char *key, const char *value)
{
    set(&f->fp[host], key, value);
    sm_fp_sort(&f->fp[host]);
}

static const sm_fp_context tcp_lo = {"tcp", "lo", false};

static void test_differences_names_the_odd_hosts_three_items_ranked(void **state)
{
    (void)state;
    fleet f;
    fleet_init(&f, 5);
    set_on(&f, 2, "if.lo.qdisc", "tbf rate 400Mbit burst 128Kb lat 50ms");
    set_on(&f, 2, "sysctl.net.ipv4.tcp_autocorking", "0");
    set_on(&f, 2, "kernel.cmdline.mitigations", "off");
    set_on(&f, 2, "info.hostname", "odd"); /* info.* differs on every host anyway */
    sm_fp_diffs d;
    sm_error err = {0};
    assert_int_equal(sm_fp_differences(f.hosts, f.n, "h3", &tcp_lo, 0, &d, &err), 0);
    assert_int_equal(d.n, 3);
    assert_string_equal(d.v[0].item, "if.lo.qdisc");
    assert_string_equal(d.v[0].host_value, "tbf rate 400Mbit burst 128Kb lat 50ms");
    assert_string_equal(d.v[0].fleet_value, "noqueue");
    assert_int_equal(d.v[0].hosts_with_fleet_value, 4);
    assert_int_equal(d.v[0].fleet_hosts, 4);
    assert_string_equal(d.v[1].item, "sysctl.net.ipv4.tcp_autocorking");
    assert_string_equal(d.v[2].item, "kernel.cmdline.mitigations");
    assert_true(d.v[0].relevance > d.v[1].relevance);
    assert_true(d.v[1].relevance > d.v[2].relevance);
    char buf[256];
    sm_fp_diff_text("h3", &d.v[0], buf, sizeof buf);
    assert_string_equal(buf,
                        "h3: lo qdisc tbf rate 400Mbit burst 128Kb lat 50ms (fleet: noqueue, 4 of "
                        "4 hosts)");
    sm_fp_diff_text("h3", &d.v[1], buf, sizeof buf);
    assert_string_equal(buf, "h3: net.ipv4.tcp_autocorking 0 (fleet: 1, 4 of 4 hosts)");
    sm_fp_diffs_fini(&d);

    /* max keeps the first ones; another host of the fleet has no differences. */
    assert_int_equal(sm_fp_differences(f.hosts, f.n, "h3", &tcp_lo, 1, &d, &err), 0);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.v[0].item, "if.lo.qdisc");
    sm_fp_diffs_fini(&d);
    assert_int_equal(sm_fp_differences(f.hosts, f.n, "h1", &tcp_lo, 0, &d, &err), 0);
    assert_int_equal(d.n, 0);
    sm_fp_diffs_fini(&d);
    fleet_fini(&f);
}

static void test_ranking_follows_the_context(void **state)
{
    (void)state;
    fleet f;
    fleet_init(&f, 4);
    set_on(&f, 1, "if.lo.qdisc", "tbf rate 1Gbit");
    set_on(&f, 1, "if.lo.offload.gso", "off");
    set_on(&f, 1, "if.lo.mtu", "1500");
    set_on(&f, 1, "if.eth0.qdisc", "noqueue");
    set_on(&f, 1, "if.eth0.mtu", "9000");
    set_on(&f, 1, "sysctl.net.ipv4.tcp_autocorking", "0");
    set_on(&f, 1, "sysctl.net.unix.max_dgram_qlen", "10");
    set_on(&f, 1, "sysctl.net.core.somaxconn", "128");
    set_on(&f, 1, "cpu.governor", "powersave");
    set_on(&f, 1, "lib.curl", "8.0.0");
    sm_fp_diffs d;
    sm_error err = {0};
    static const char *const tcp[] = {"if.lo.qdisc",
                                      "sysctl.net.ipv4.tcp_autocorking",
                                      "if.lo.offload.gso",
                                      "if.lo.mtu",
                                      "sysctl.net.core.somaxconn",
                                      "cpu.governor",
                                      "sysctl.net.unix.max_dgram_qlen",
                                      "lib.curl",
                                      "if.eth0.mtu",
                                      "if.eth0.qdisc"};
    assert_int_equal(sm_fp_differences(f.hosts, f.n, "h2", &tcp_lo, 0, &d, &err), 0);
    assert_int_equal(d.n, 10);
    for (size_t i = 0; i < d.n; i++)
        assert_string_equal(d.v[i].item, tcp[i]);
    sm_fp_diffs_fini(&d);

    /* A unix test ranks the unix sysctls where the tcp ones were. */
    const sm_fp_context unx = {"unix", "lo", false};
    assert_int_equal(sm_fp_differences(f.hosts, f.n, "h2", &unx, 0, &d, &err), 0);
    assert_string_equal(d.v[1].item, "sysctl.net.unix.max_dgram_qlen");
    sm_fp_diffs_fini(&d);

    /* A slow link on eth0: its interface first, all of it, lo's items last. */
    const sm_fp_context link = {"tcp", "eth0", true};
    static const char *const lk[] = {"if.eth0.qdisc", "if.eth0.mtu",
                                     "sysctl.net.ipv4.tcp_autocorking"};
    assert_int_equal(sm_fp_differences(f.hosts, f.n, "h2", &link, 0, &d, &err), 0);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(d.v[i].item, lk[i]);
    assert_string_equal(d.v[d.n - 1].item, "if.lo.qdisc");
    assert_string_equal(d.v[d.n - 2].item, "if.lo.offload.gso");
    sm_fp_diffs_fini(&d);

    /* A VLAN on eth0 is another interface than eth0. */
    set_on(&f, 1, "if.eth0.100.qdisc", "tbf rate 1Mbit");
    assert_int_equal(sm_fp_differences(f.hosts, f.n, "h2", &link, 0, &d, &err), 0);
    assert_string_equal(d.v[0].item, "if.eth0.qdisc");
    int vlan = -1;
    for (size_t i = 0; i < d.n; i++)
        if (strcmp(d.v[i].item, "if.eth0.100.qdisc") == 0)
            vlan = d.v[i].relevance;
    assert_int_equal(vlan, 10);
    sm_fp_diffs_fini(&d);
    fleet_fini(&f);
}

static void test_no_majority_is_said_and_listed_last(void **state)
{
    (void)state;
    fleet f;
    fleet_init(&f, 5);
    /* h1's governor is its own; the others split 2:2, no majority. */
    set_on(&f, 0, "cpu.governor", "ondemand");
    set_on(&f, 1, "cpu.governor", "powersave");
    set_on(&f, 2, "cpu.governor", "powersave");
    set_on(&f, 0, "lib.curl", "8.5.0"); /* a majority difference of low relevance */
    /* lo's mtu: h1 holds a value another host holds too: no difference without a majority */
    set_on(&f, 0, "if.lo.mtu", "1500");
    set_on(&f, 1, "if.lo.mtu", "1500");
    set_on(&f, 2, "if.lo.mtu", "9000");
    sm_fp_diffs d;
    sm_error err = {0};
    assert_int_equal(sm_fp_differences(f.hosts, f.n, "h1", &tcp_lo, 0, &d, &err), 0);
    assert_int_equal(d.n, 2);
    assert_string_equal(d.v[0].item, "lib.curl");
    assert_non_null(d.v[0].fleet_value);
    assert_string_equal(d.v[1].item, "cpu.governor");
    assert_null(d.v[1].fleet_value);
    assert_int_equal(d.v[1].hosts_with_fleet_value, 0);
    assert_int_equal(d.v[1].fleet_hosts, 4);
    char buf[256];
    sm_fp_diff_text("h1", &d.v[1], buf, sizeof buf);
    assert_string_equal(buf, "h1: cpu.governor ondemand (fleet: no majority of 4 hosts)");
    char *text = sm_fp_diffs_json(&d);
    assert_non_null(text);
    assert_string_equal(text,
                        "[{\"item\":\"lib.curl\",\"label\":\"lib.curl\",\"host_value\":\"8.5.0\","
                        "\"fleet_value\":\"7.88.1\",\"hosts_with_fleet_value\":4,"
                        "\"fleet_hosts\":4},{\"item\":\"cpu.governor\",\"label\":\"cpu."
                        "governor\",\"host_value\":\"ondemand\",\"fleet_value\":null,"
                        "\"hosts_with_fleet_value\":0,\"fleet_hosts\":4}]");
    free(text);
    sm_fp_diffs_fini(&d);
    fleet_fini(&f);
}

static void test_absent_and_unreadable_items_are_values(void **state)
{
    (void)state;
    fleet f;
    fleet_init(&f, 3);
    sm_error err = {0};
    /* h2 lacks an item the others have, has one they lack, cannot read one they can, and
     * cannot read another for another reason than they. */
    sm_fp_remove_prefix(&f.fp[1], "if.lo.offload.");
    set_on(&f, 1, "sysctl.net.ipv4.tcp_mtu_probing", "1");
    assert_int_equal(sm_fp_set_unreadable(&f.fp[1], "cpu.governor", ENOENT, &err), 0);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(
            sm_fp_set_unreadable(&f.fp[i], "cgroup.cpu.max", i == 1 ? EACCES : ENOENT, &err), 0);
    for (size_t i = 0; i < 3; i++)
        sm_fp_sort(&f.fp[i]);
    sm_fp_diffs d;
    assert_int_equal(sm_fp_differences(f.hosts, f.n, "h2", &tcp_lo, 0, &d, &err), 0);
    assert_int_equal(d.n, 4);
    assert_string_equal(d.v[0].item, "sysctl.net.ipv4.tcp_mtu_probing");
    assert_string_equal(d.v[0].host_value, "1");
    assert_string_equal(d.v[0].fleet_value, "(absent)");
    assert_string_equal(d.v[1].item, "if.lo.offload.gso");
    assert_string_equal(d.v[1].host_value, "(absent)");
    assert_string_equal(d.v[1].fleet_value, "on");
    assert_string_equal(d.v[2].item, "cgroup.cpu.max");
    assert_string_equal(d.v[2].host_value, "unreadable (EACCES)");
    assert_string_equal(d.v[2].fleet_value, "unreadable (ENOENT)");
    assert_int_equal(d.v[2].hosts_with_fleet_value, 2);
    assert_string_equal(d.v[3].item, "cpu.governor");
    assert_string_equal(d.v[3].host_value, "unreadable (ENOENT)");
    sm_fp_diffs_fini(&d);
    /* The others agree with each other on unreadable cgroup.cpu.max (ENOENT): h1 differs
     * from nothing. */
    assert_int_equal(sm_fp_differences(f.hosts, f.n, "h1", &tcp_lo, 0, &d, &err), 0);
    for (size_t i = 0; i < d.n; i++)
        assert_string_not_equal(d.v[i].item, "cgroup.cpu.max");
    sm_fp_diffs_fini(&d);
    fleet_fini(&f);
}

static void test_no_fleet_to_compare_gives_no_differences(void **state)
{
    (void)state;
    fleet f;
    fleet_init(&f, 3);
    set_on(&f, 0, "if.lo.qdisc", "tbf rate 1Gbit");
    sm_fp_diffs d;
    sm_error err = {0};
    /* The others without a fingerprint: nothing to compare with. */
    sm_fp_host alone[3] = {f.hosts[0], {"h2", NULL}, {"h3", NULL}};
    assert_int_equal(sm_fp_differences(alone, 3, "h1", &tcp_lo, 0, &d, &err), 0);
    assert_int_equal(d.n, 0);
    sm_fp_diffs_fini(&d);
    /* The flagged host without one, or not in the list. */
    alone[0].fp = NULL;
    alone[1].fp = &f.fp[1];
    alone[2].fp = &f.fp[2];
    assert_int_equal(sm_fp_differences(alone, 3, "h1", &tcp_lo, 0, &d, &err), 0);
    assert_int_equal(d.n, 0);
    assert_int_equal(sm_fp_differences(f.hosts, 3, "h9", &tcp_lo, 0, &d, &err), 0);
    assert_int_equal(d.n, 0);
    /* One other host is a fleet of one. */
    assert_int_equal(sm_fp_differences(f.hosts, 2, "h1", NULL, 0, &d, &err), 0);
    assert_int_equal(d.n, 1);
    char buf[256];
    sm_fp_diff_text("h1", &d.v[0], buf, sizeof buf);
    assert_string_equal(buf, "h1: lo qdisc tbf rate 1Gbit (fleet: noqueue, 1 of 1 host)");
    sm_fp_diffs_fini(&d);
    fleet_fini(&f);
}

static void test_changes_between_two_fingerprints(void **state)
{
    (void)state;
    fleet f;
    fleet_init(&f, 2);
    sm_fingerprint *before = &f.fp[0], *after = &f.fp[1];
    set_on(&f, 1, "sysctl.net.ipv4.tcp_rmem", "4096 87380 6291456");
    set_on(&f, 1, "if.lo.qdisc", "tbf rate 400Mbit burst 128Kb");
    set_on(&f, 1, "kernel.release", "6.1.0-20-amd64");
    set_on(&f, 1, "cpu.smt", "off");    /* new */
    sm_fp_remove_prefix(after, "lib."); /* gone */
    sm_fp_diffs d;
    sm_error err = {0};
    assert_int_equal(sm_fp_changes(before, after, &tcp_lo, 0, &d, &err), 0);
    assert_int_equal(d.n, 5);
    static const char *const order[] = {"if.lo.qdisc", "sysctl.net.ipv4.tcp_rmem", "cpu.smt",
                                        "kernel.release", "lib.curl"};
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(d.v[i].item, order[i]);
    char buf[256];
    sm_fp_diff_text("h2", &d.v[0], buf, sizeof buf);
    assert_string_equal(buf, "h2: lo qdisc now tbf rate 400Mbit burst 128Kb (was noqueue)");
    sm_fp_diff_text("h2", &d.v[2], buf, sizeof buf);
    assert_string_equal(buf, "h2: cpu.smt now off (was (absent))");
    sm_fp_diff_text("h2", &d.v[4], buf, sizeof buf);
    assert_string_equal(buf, "h2: lib.curl now (absent) (was 7.88.1)");
    char *text = sm_fp_changes_json(&d);
    assert_string_equal(text,
                        "[{\"item\":\"if.lo.qdisc\",\"label\":\"lo qdisc\",\"before\":\"noqueue\","
                        "\"after\":\"tbf rate 400Mbit burst 128Kb\"},"
                        "{\"item\":\"sysctl.net.ipv4.tcp_rmem\",\"label\":\"net.ipv4.tcp_rmem\","
                        "\"before\":\"4096 131072 6291456\",\"after\":\"4096 87380 6291456\"},"
                        "{\"item\":\"cpu.smt\",\"label\":\"cpu.smt\",\"before\":\"(absent)\","
                        "\"after\":\"off\"},"
                        "{\"item\":\"kernel.release\",\"label\":\"kernel.release\","
                        "\"before\":\"6.1.0-18-amd64\",\"after\":\"6.1.0-20-amd64\"},"
                        "{\"item\":\"lib.curl\",\"label\":\"lib.curl\",\"before\":\"7.88.1\","
                        "\"after\":\"(absent)\"}]");
    free(text);
    sm_fp_diffs_fini(&d);
    /* No change, and no fingerprint on either side: nothing. */
    assert_int_equal(sm_fp_changes(before, before, &tcp_lo, 0, &d, &err), 0);
    assert_int_equal(d.n, 0);
    assert_int_equal(sm_fp_changes(NULL, after, &tcp_lo, 0, &d, &err), 0);
    assert_int_equal(d.n, 0);
    fleet_fini(&f);
}

static void test_side_by_side_lists_only_rows_that_differ(void **state)
{
    (void)state;
    fleet f;
    fleet_init(&f, 3);
    set_on(&f, 1, "if.lo.qdisc", "tbf rate 400Mbit");
    set_on(&f, 2, "cpu.governor", "powersave");
    set_on(&f, 2, "cpu.smt", "on"); /* only h3 has it */
    sm_fp_table t;
    sm_error err = {0};
    assert_int_equal(sm_fp_side_by_side(f.hosts, 3, &t, &err), 0);
    assert_int_equal(t.n_hosts, 3);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.same, 11); /* 14 items but info.*, less the 3 rows */
    assert_string_equal(t.rows[0].item, "cpu.governor");
    assert_string_equal(t.rows[0].values[0], "performance");
    assert_string_equal(t.rows[0].values[2], "powersave");
    assert_string_equal(t.rows[1].item, "cpu.smt");
    assert_string_equal(t.rows[1].values[0], "(absent)");
    assert_string_equal(t.rows[1].values[2], "on");
    assert_string_equal(t.rows[2].item, "if.lo.qdisc");
    assert_string_equal(t.rows[2].values[1], "tbf rate 400Mbit");
    sm_fp_table_fini(&t);

    /* A host without a fingerprint says so and does not make every row differ. */
    sm_fp_host two[3] = {f.hosts[0], {"h9", NULL}, f.hosts[1]};
    assert_int_equal(sm_fp_side_by_side(two, 3, &t, &err), 0);
    assert_int_equal(t.n, 1);
    assert_string_equal(t.rows[0].item, "if.lo.qdisc");
    assert_string_equal(t.rows[0].values[1], "(no fingerprint)");
    sm_fp_table_fini(&t);
    fleet_fini(&f);
}

/* One array builder serves both lists: an empty list is an empty array either way. */
static void test_empty_lists_are_empty_arrays(void **state)
{
    (void)state;
    sm_fp_diffs d = {0};
    char *a = sm_fp_diffs_json(&d), *b = sm_fp_changes_json(&d);
    assert_string_equal(a, "[]");
    assert_string_equal(b, "[]");
    free(a);
    free(b);
}

/* The one object builder behind both lists and the explanations: a difference's fields, or a
 * change's, after the item and its label. */
static void test_one_diff_as_a_difference_and_as_a_change(void **state)
{
    (void)state;
    sm_fp_diff x = {.item = "if.eth0.mtu",
                    .host_value = "9000",
                    .fleet_value = "1500",
                    .hosts_with_fleet_value = 3,
                    .fleet_hosts = 4};
    cJSON *o = sm_fp_diff_to_cjson(&x, false);
    char *text = cJSON_PrintUnformatted(o);
    assert_string_equal(text, "{\"item\":\"if.eth0.mtu\",\"label\":\"eth0 mtu\",\"host_value\":"
                              "\"9000\",\"fleet_value\":\"1500\",\"hosts_with_fleet_value\":3,"
                              "\"fleet_hosts\":4}");
    free(text);
    cJSON_Delete(o);
    x.fleet_value = NULL; /* a change from nothing: the item was absent before */
    o = sm_fp_diff_to_cjson(&x, true);
    text = cJSON_PrintUnformatted(o);
    assert_string_equal(text, "{\"item\":\"if.eth0.mtu\",\"label\":\"eth0 mtu\",\"before\":"
                              "\"(absent)\",\"after\":\"9000\"}");
    free(text);
    cJSON_Delete(o);
}

static void test_item_labels(void **state)
{
    (void)state;
    char buf[SM_FP_KEY_MAX + 2];
    assert_string_equal(sm_fp_item_label("if.lo.qdisc", buf, sizeof buf), "lo qdisc");
    assert_string_equal(sm_fp_item_label("if.eth0.offload.tso", buf, sizeof buf),
                        "eth0 offload.tso");
    assert_string_equal(sm_fp_item_label("sysctl.net.core.rmem_max", buf, sizeof buf),
                        "net.core.rmem_max");
    assert_string_equal(sm_fp_item_label("cpu.governor", buf, sizeof buf), "cpu.governor");
    assert_string_equal(sm_fp_item_label("if.eth0.100.qdisc", buf, sizeof buf), "eth0.100 qdisc");
    assert_string_equal(sm_fp_item_label("if.br0.class.1:10", buf, sizeof buf), "br0 class.1:10");
    assert_string_equal(sm_fp_item_label("if.", buf, sizeof buf), "if.");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differences_names_the_odd_hosts_three_items_ranked),
        cmocka_unit_test(test_ranking_follows_the_context),
        cmocka_unit_test(test_no_majority_is_said_and_listed_last),
        cmocka_unit_test(test_absent_and_unreadable_items_are_values),
        cmocka_unit_test(test_no_fleet_to_compare_gives_no_differences),
        cmocka_unit_test(test_changes_between_two_fingerprints),
        cmocka_unit_test(test_side_by_side_lists_only_rows_that_differ),
        cmocka_unit_test(test_empty_lists_are_empty_arrays),
        cmocka_unit_test(test_one_diff_as_a_difference_and_as_a_change),
        cmocka_unit_test(test_item_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
