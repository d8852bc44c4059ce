/* Unit tests of an experiment's plan (coordinator/analysis/experiment.c and its JSON): each
 * rule from a difference to its treatment, the budget, the combination, the stored plan. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/experiment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends a difference (fleet NULL: no majority) to d. */
static void add(sm_fp_diffs *d, const char *item, const char *host, const char *fleet)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 8;
        d->v = realloc(d->v, d->cap * sizeof *d->v);
        assert_non_null(d->v);
    }
    sm_fp_diff *x = &d->v[d->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->item, sizeof x->item, "%s", item);
    x->host_value = strdup(host);
    x->fleet_value = fleet ? strdup(fleet) : NULL;
    x->hosts_with_fleet_value = 2;
    x->fleet_hosts = 2;
    x->relevance = 100 - (int)d->n;
}

/* The plan of one difference on h2 with allow. */
static sm_xp_plan one(const char *item, const char *host, const char *fleet, const char *allow)
{
    sm_fp_diffs d = {0};
    add(&d, item, host, fleet);
    sm_xp_plan p;
    sm_error err = {0};
    assert_int_equal(sm_xp_plan_make_for("h2", &d, allow, 8, &p, &err), 0);
    assert_int_equal(p.n, 1);
    sm_fp_diffs_fini(&d);
    return p;
}

/* The treatment one difference gets, or "" and its reason in why. */
static void check_one(const char *item, const char *host, const char *fleet, const char *allow,
                      const char *treatment, const char *why)
{
    sm_xp_plan p = one(item, host, fleet, allow);
    assert_string_equal(p.v[0].treatment, treatment);
    assert_string_equal(p.v[0].why_untested, why);
    assert_int_equal(p.tested, treatment[0] != '\0');
    assert_string_equal(p.v[0].item, item);
    sm_xp_plan_fini(&p);
}

static void test_a_root_qdisc_becomes_the_fleets_noqueue_or_tbf(void **state)
{
    (void)state;
    check_one("if.lo.qdisc", "tbf rate 400Mbit burst 128Kb lat 50ms", "noqueue", "qdisc",
              "qdisc lo noqueue", "");
    check_one("if.eth0.qdisc", "noqueue", "tbf rate 57Mbit burst 3997b limit 360250b",
              "qdisc,sysctl", "qdisc eth0 tbf rate 57Mbit burst 3997b limit 360250b", "");
    /* A VLAN's name holds a dot. */
    check_one("if.eth0.100.qdisc", "tbf rate 1Mbit burst 1600b limit 3000b", "noqueue", "qdisc",
              "qdisc eth0.100 noqueue", "");

    sm_xp_plan p = one("if.lo.qdisc", "noqueue", "tbf rate 400Mbit burst 128Kb lat 50ms", "qdisc");
    assert_string_equal(p.v[0].label, "lo qdisc");
    assert_string_equal(p.v[0].host_value, "noqueue");
    assert_string_equal(p.v[0].fleet_value, "tbf rate 400Mbit burst 128Kb lat 50ms");
    assert_int_equal(p.v[0].relevance, 99);
    sm_xp_plan_fini(&p);
}

static void test_a_qdisc_the_agent_cannot_set_is_untested_naming_it(void **state)
{
    (void)state;
    check_one("if.lo.qdisc", "noqueue", "fq_codel limit 10240p flows 1024", "qdisc", "",
              "sockmatrix-agent sets only noqueue and tbf root qdiscs; the fleet's is fq_codel "
              "...");
    check_one("if.lo.qdisc", "noqueue", "pfifo_fast", "qdisc", "",
              "sockmatrix-agent sets only noqueue and tbf root qdiscs; the fleet's is "
              "pfifo_fast");
    /* Only the root: a child qdisc and a class have no treatment. */
    check_one("if.lo.qdisc.1:10", "fq_codel", "noqueue", "qdisc", "",
              "no treatment exists for lo qdisc.1:10 (sockmatrix sets net.* sysctls, root "
              "qdiscs, offloads and socket options)");
    check_one("if.eth0.class.1:10", "htb rate 1Mbit", "htb rate 100Mbit", "qdisc", "",
              "no treatment exists for eth0 class.1:10 (sockmatrix sets net.* sysctls, root "
              "qdiscs, offloads and socket options)");
    /* A name Linux would not take for an interface. */
    check_one("if.averyveryverylongname.qdisc", "tbf rate 1Mbit", "noqueue", "qdisc", "",
              "averyveryverylongname is not an interface name a treatment can carry");
}

static void test_a_qdisc_without_the_flag_says_how_to_start_the_agent(void **state)
{
    (void)state;
    check_one("if.lo.qdisc", "tbf rate 400Mbit", "noqueue", "none", "",
              "h2's agent may not change qdiscs: start it with --allow-experiment qdisc");
    check_one("if.lo.qdisc", "tbf rate 400Mbit", "noqueue", NULL, "",
              "h2's agent may not change qdiscs: start it with --allow-experiment qdisc");
    check_one("if.lo.qdisc", "tbf rate 400Mbit", "noqueue", "sysctl", "",
              "h2's agent may not change qdiscs: start it with --allow-experiment qdisc,sysctl");
    /* Without a name, the host. */
    sm_fp_diffs d = {0};
    add(&d, "if.lo.qdisc", "tbf rate 400Mbit", "noqueue");
    sm_xp_plan p;
    assert_int_equal(sm_xp_plan_make(&d, NULL, 8, &p, NULL), 0);
    assert_string_equal(p.v[0].why_untested, "the host's agent may not change qdiscs: start it "
                                             "with --allow-experiment qdisc");
    sm_xp_plan_fini(&p);
    sm_fp_diffs_fini(&d);
}

static void test_a_sysctl_is_set_with_the_flag_only(void **state)
{
    (void)state;
    check_one("sysctl.net.ipv4.tcp_autocorking", "0", "1", "qdisc,sysctl",
              "sysctl net.ipv4.tcp_autocorking=1", "");
    check_one("sysctl.net.core.somaxconn", "128", "4096", "sysctl",
              "sysctl net.core.somaxconn=4096", "");
    check_one("sysctl.net.ipv4.tcp_autocorking", "0", "1", "qdisc", "",
              "h2's agent may not change sysctls: start it with --allow-experiment qdisc,sysctl");
    check_one("sysctl.net.ipv4.tcp_autocorking", "0", "1", "none", "",
              "h2's agent may not change sysctls: start it with --allow-experiment sysctl");
    /* tcp_rmem with the flag is the sysctl itself. */
    check_one("sysctl.net.ipv4.tcp_rmem", "4096 65536 1000000", "4096 131072 6291456", "sysctl",
              "sysctl net.ipv4.tcp_rmem=4096 131072 6291456", "");
    /* Only net.* sysctls. */
    check_one("sysctl.kernel.sched_autogroup_enabled", "0", "1", "sysctl", "",
              "no treatment exists for kernel.sched_autogroup_enabled (sockmatrix sets net.* "
              "sysctls, root qdiscs, offloads and socket options)");
}

static void test_tcp_buffers_fall_back_to_the_socket_option_without_the_flag(void **state)
{
    (void)state;
    check_one("sysctl.net.ipv4.tcp_rmem", "4096 65536 1000000", "4096 131072 6291456", NULL,
              "socket rcvbuf=131072", "");
    check_one("sysctl.net.ipv4.tcp_wmem", "4096 8192 4194304", "4096 16384 4194304", "qdisc",
              "socket sndbuf=16384", "");
    /* The same default: a fixed buffer of it would not give the fleet's value. */
    check_one("sysctl.net.ipv4.tcp_rmem", "4096 131072 1000000", "4096 131072 6291456", NULL, "",
              "h2's net.ipv4.tcp_rmem default 131072 is the fleet's already: socket rcvbuf would "
              "not give it the fleet's value; start its agent with --allow-experiment sysctl");
    check_one("sysctl.net.ipv4.tcp_rmem", "4096 65536 1000000", "4096 1024 6291456", NULL, "",
              "the fleet's default net.ipv4.tcp_rmem 1024 is outside socket rcvbuf's "
              "4096..268435456");
    check_one("sysctl.net.ipv4.tcp_rmem", "4096 65536 1000000", "4096 lots", NULL, "",
              "the fleet's net.ipv4.tcp_rmem is not three numbers: no socket rcvbuf to give it");
}

static void test_an_offload_becomes_the_fleets_with_the_flag(void **state)
{
    (void)state;
    check_one("if.lo.offload.gso", "off", "on", "offload", "offload lo gso=on", "");
    check_one("if.lo.offload.gro", "on", "off", "offload,sysctl", "offload lo gro=off", "");
    check_one("if.lo.offload.tso", "off", "on", "offload,qdisc,sysctl", "offload lo tso=on", "");
    check_one("if.lo.offload.gso", "off", "on", "qdisc,sysctl", "",
              "h2's agent may not change offloads: start it with --allow-experiment "
              "offload,qdisc,sysctl");
    check_one("if.lo.offload.gso", "off", "on", "none", "",
              "h2's agent may not change offloads: start it with --allow-experiment offload");
    /* Fixed by lo's driver: the kernel would refuse the change. */
    check_one("if.lo.offload.sg", "off", "on", "offload", "",
              "sockmatrix-agent sets only the gso, gro and tso offloads, the ones Linux lets lo "
              "change; not sg");
    check_one("if.lo.offload.gso", "off", "unreadable (EOPNOTSUPP)", "offload", "",
              "the fleet's lo offload.gso is unreadable (EOPNOTSUPP): its value is not known");
    check_one("if.lo.offload.gso", "off", "auto", "offload", "",
              "the fleet's lo offload.gso is 'auto', not on or off");

    /* The reverse: h1 with the fleet's gso, given h2's. */
    sm_fp_diffs d = {0};
    add(&d, "if.lo.offload.gso", "off", "on");
    sm_fingerprint h1;
    sm_fp_init(&h1);
    sm_error err = {0};
    assert_int_equal(sm_fp_set(&h1, "if.lo.offload.gso", "on", &err), 0);
    sm_xp_plan p;
    assert_int_equal(sm_xp_plan_make_for("h2", &d, "offload", 8, &p, &err), 0);
    const sm_xp_ref sysctl_only = {"h1", "sysctl", &h1}, offload = {"h1", "offload", &h1};
    assert_int_equal(sm_xp_plan_reverse(&p, &d, &sysctl_only), 0);
    assert_string_equal(p.v[0].why_no_reverse, "h1's agent may not change offloads: start it "
                                               "with --allow-experiment offload,sysctl");
    assert_int_equal(sm_xp_plan_reverse(&p, &d, &offload), 1);
    assert_string_equal(p.v[0].reverse, "offload lo gso=off");
    sm_xp_plan_fini(&p);
    sm_fp_fini(&h1);
    sm_fp_diffs_fini(&d);
}

static void test_congestion_and_lowat_fall_back_to_the_socket_option_without_the_flag(void **state)
{
    (void)state;
    check_one("sysctl.net.ipv4.tcp_congestion_control", "bbr", "cubic", "sysctl",
              "sysctl net.ipv4.tcp_congestion_control=cubic", "");
    check_one("sysctl.net.ipv4.tcp_congestion_control", "bbr", "cubic", NULL,
              "socket congestion=cubic", "");
    check_one("sysctl.net.ipv4.tcp_notsent_lowat", "16384", "4294967295", "qdisc",
              "socket notsent_lowat=4294967295", "");
    check_one("sysctl.net.ipv4.tcp_congestion_control", "bbr", "Cubic", NULL, "",
              "the fleet's net.ipv4.tcp_congestion_control 'Cubic' is no value socket congestion "
              "takes; start its agent with --allow-experiment sysctl");
    check_one("sysctl.net.ipv4.tcp_notsent_lowat", "16384", "0", "offload", "",
              "the fleet's net.ipv4.tcp_notsent_lowat '0' is no value socket notsent_lowat takes; "
              "start its agent with --allow-experiment offload,sysctl");
}

static void test_other_items_have_no_treatment(void **state)
{
    (void)state;
    check_one("cpu.governor", "powersave", "performance", "qdisc,sysctl", "",
              "no treatment exists for cpu.governor (sockmatrix sets net.* sysctls, root qdiscs, "
              "offloads and socket options)");
}

static void test_no_majority_or_no_value_has_nothing_to_give(void **state)
{
    (void)state;
    sm_xp_plan p = one("sysctl.net.ipv4.tcp_autocorking", "0", NULL, "sysctl");
    assert_string_equal(p.v[0].treatment, "");
    assert_string_equal(p.v[0].why_untested, "the fleet has no majority value to give it");
    assert_string_equal(p.v[0].fleet_value, "");
    sm_xp_plan_fini(&p);
    check_one("sysctl.net.ipv4.tcp_new_thing", "1", "(absent)", "sysctl", "",
              "the fleet's hosts have no net.ipv4.tcp_new_thing: there is no value to give it");
    check_one("sysctl.net.core.rmem_max", "1", "unreadable (EACCES)", "sysctl", "",
              "the fleet's net.core.rmem_max is unreadable (EACCES): its value is not known");
}

static void test_a_value_outside_the_syntax_is_untested_saying_why(void **state)
{
    (void)state;
    char long_value[140];
    memset(long_value, '7', 129);
    long_value[129] = '\0';
    check_one("sysctl.net.core.x", "1", long_value, "sysctl", "",
              "the fleet's net.core.x cannot be given as a treatment: it is 129 bytes, more than "
              "the 128 a treatment takes");
    check_one("sysctl.net.core.x", "1", "a;b", "sysctl", "",
              "the fleet's net.core.x cannot be given as a treatment: it holds a ';', which "
              "separates the parts of a treatment");
    check_one("sysctl.net.core.x", "1", "caf\xc3\xa9", "sysctl", "",
              "the fleet's net.core.x cannot be given as a treatment: it holds the byte 0xc3, "
              "which is not printable ASCII");
    check_one("sysctl.net.core.x", "1", "", "sysctl", "",
              "the fleet's net.core.x cannot be given as a treatment: it is empty");
    check_one("sysctl.net.ipv4.Tcp_X", "1", "0", "sysctl", "",
              "net.ipv4.Tcp_X is not a sysctl a treatment can name ([a-z0-9_.] after net.)");
    check_one("if.lo.qdisc", "noqueue", "tbf rate 1Mbit; x", "qdisc", "",
              "the fleet's lo qdisc cannot be given as a treatment: it holds a ';', which "
              "separates the parts of a treatment");
    /* A tbf too long for the treatment's 255 bytes. */
    char tbf[300] = "tbf rate 1Mbit";
    memset(tbf + 14, 'x', 250);
    tbf[264] = '\0';
    sm_xp_plan p = one("if.lo.qdisc", "noqueue", tbf, "qdisc");
    assert_string_equal(p.v[0].treatment, "");
    assert_string_equal(p.v[0].why_untested,
                        "the treatment would be 273 bytes, more than the 255 it takes");
    /* The values shown are cut with "...". */
    assert_int_equal(strlen(p.v[0].fleet_value), 255);
    assert_string_equal(p.v[0].fleet_value + 252, "...");
    sm_xp_plan_fini(&p);
}

/* Five differences: qdisc, two sysctls, an offload, tcp_rmem. */
static void five(sm_fp_diffs *d)
{
    memset(d, 0, sizeof *d);
    add(d, "if.lo.qdisc", "tbf rate 400Mbit burst 128Kb lat 50ms", "noqueue");
    add(d, "sysctl.net.ipv4.tcp_autocorking", "0", "1");
    add(d, "if.lo.offload.gso", "off", "on");
    add(d, "sysctl.net.ipv4.tcp_rmem", "4096 65536 1000000", "4096 131072 6291456");
    add(d, "sysctl.net.ipv4.tcp_slow_start_after_idle", "1", "0");
}

static void test_the_budget_tests_the_first_suspects_that_can_be(void **state)
{
    (void)state;
    sm_fp_diffs d;
    five(&d);
    sm_xp_plan p;
    sm_error err = {0};
    assert_int_equal(sm_xp_plan_make_for("h2", &d, "qdisc", 2, &p, &err), 0);
    /* qdisc tested, autocorking untested (no flag), offload (no flag), rmem by socket: the budget
     * of 2 is spent, and slow_start (no flag) keeps its own reason. */
    assert_int_equal(p.n, 6);
    assert_string_equal(p.v[0].treatment, "qdisc lo noqueue");
    assert_string_equal(p.v[1].treatment, "");
    assert_non_null(strstr(p.v[1].why_untested, "may not change sysctls"));
    assert_non_null(strstr(p.v[2].why_untested, "h2's agent may not change offloads"));
    assert_string_equal(p.v[3].treatment, "socket rcvbuf=131072");
    assert_non_null(strstr(p.v[4].why_untested, "may not change sysctls"));
    assert_int_equal(p.tested, 3);
    sm_xp_plan_fini(&p);

    assert_int_equal(sm_xp_plan_make_for("h2", &d, "qdisc,sysctl", 1, &p, &err), 0);
    assert_int_equal(p.n, 5); /* one tested: no combination */
    assert_string_equal(p.v[0].treatment, "qdisc lo noqueue");
    assert_string_equal(p.v[1].why_untested, "beyond the plan's budget of 1 suspect");
    assert_string_equal(p.v[1].treatment, "");
    assert_non_null(strstr(p.v[2].why_untested, "may not change offloads"));
    assert_string_equal(p.v[3].why_untested, "beyond the plan's budget of 1 suspect");
    assert_int_equal(p.tested, 1);
    sm_xp_plan_fini(&p);

    assert_int_equal(sm_xp_plan_make_for("h2", &d, "qdisc,sysctl", 0, &p, &err), 0);
    assert_int_equal(p.tested, 0);
    assert_string_equal(p.v[0].why_untested, "beyond the plan's budget of 0 suspects");
    sm_xp_plan_fini(&p);
    sm_fp_diffs_fini(&d);
}

static void test_the_combination_comes_last_with_at_most_four_parts(void **state)
{
    (void)state;
    sm_fp_diffs d;
    five(&d);
    sm_xp_plan p;
    sm_error err = {0};
    assert_int_equal(sm_xp_plan_make_for("h2", &d, "qdisc,sysctl", 3, &p, &err), 0);
    assert_int_equal(p.n, 6);
    assert_int_equal(p.tested, 4);
    const sm_xp_suspect *c = &p.v[5];
    assert_string_equal(c->item, "");
    assert_string_equal(c->label, "the 3 suspects together");
    assert_string_equal(c->treatment, "qdisc lo noqueue; sysctl net.ipv4.tcp_autocorking=1; "
                                      "sysctl net.ipv4.tcp_rmem=4096 131072 6291456");
    assert_string_equal(c->host_value, "lo qdisc tbf rate 400Mbit burst 128Kb lat 50ms; "
                                       "net.ipv4.tcp_autocorking 0; net.ipv4.tcp_rmem 4096 "
                                       "65536 1000000");
    assert_string_equal(c->fleet_value, "lo qdisc noqueue; net.ipv4.tcp_autocorking 1; "
                                        "net.ipv4.tcp_rmem 4096 131072 6291456");
    assert_string_equal(c->why_untested, "");
    assert_int_equal(c->relevance, 0);
    assert_string_equal(p.v[4].why_untested, "beyond the plan's budget of 3 suspects");
    sm_xp_plan_fini(&p);

    /* Five tested: the combination takes the first four. */
    add(&d, "sysctl.net.core.somaxconn", "128", "4096");
    assert_int_equal(sm_xp_plan_make_for("h2", &d, "qdisc,sysctl", 8, &p, &err), 0);
    assert_int_equal(p.n, 7);
    assert_int_equal(p.tested, 6);
    assert_string_equal(p.v[6].label, "the 4 suspects together");
    assert_string_equal(p.v[6].treatment,
                        "qdisc lo noqueue; sysctl net.ipv4.tcp_autocorking=1; sysctl "
                        "net.ipv4.tcp_rmem=4096 131072 6291456; sysctl "
                        "net.ipv4.tcp_slow_start_after_idle=0");
    sm_xp_plan_fini(&p);
    sm_fp_diffs_fini(&d);

    /* Two tbf of 150 bytes fit one treatment each, not one together. */
    char tbf[160] = "tbf rate 1Mbit burst ";
    memset(tbf + 21, '9', 129);
    tbf[150] = '\0';
    add(&d, "if.eth0.qdisc", "noqueue", tbf);
    add(&d, "if.eth1.qdisc", "noqueue", tbf);
    assert_int_equal(sm_xp_plan_make_for("h2", &d, "qdisc", 8, &p, &err), 0);
    assert_int_equal(p.n, 3);
    assert_int_equal(p.tested, 2);
    assert_string_equal(p.v[2].treatment, "");
    assert_string_equal(p.v[2].label, "the 2 suspects together");
    assert_string_equal(p.v[2].why_untested, "their 2 treatments together are longer than the "
                                             "255 bytes a treatment takes");
    assert_memory_equal(p.v[2].host_value, "eth0 qdisc noqueue; eth1 qdisc noqueue", 38);
    assert_string_equal(p.v[2].fleet_value + 252, "...");
    sm_xp_plan_fini(&p);
    sm_fp_diffs_fini(&d);

    /* No differences: an empty plan; NULL: refused. */
    sm_fp_diffs none = {0};
    assert_int_equal(sm_xp_plan_make(&none, "qdisc", 3, &p, &err), 0);
    assert_int_equal(p.n, 0);
    sm_xp_plan_fini(&p);
    assert_int_equal(sm_xp_plan_make(NULL, "qdisc", 3, &p, &err), SM_EINVAL);
}

/* The reverse: a fleet host given the odd host's value, where its own is the fleet's and its
 * agent may apply it; never for the combination. */
static void test_the_reverse_gives_a_fleet_host_the_odd_hosts_value(void **state)
{
    (void)state;
    sm_fp_diffs d = {0};
    add(&d, "if.lo.qdisc", "tbf rate 400Mbit burst 128Kb lat 50ms", "noqueue");
    add(&d, "sysctl.net.ipv4.tcp_keepalive_time", "7201", "7200");
    add(&d, "sysctl.net.core.somaxconn", "4096", "128");
    add(&d, "cpu.governor", "powersave", "performance");
    sm_fingerprint h1;
    sm_fp_init(&h1);
    sm_error err = {0};
    assert_int_equal(sm_fp_set(&h1, "if.lo.qdisc", "noqueue", &err), 0);
    assert_int_equal(sm_fp_set(&h1, "sysctl.net.ipv4.tcp_keepalive_time", "7200", &err), 0);
    assert_int_equal(sm_fp_set(&h1, "sysctl.net.core.somaxconn", "256", &err), 0);
    sm_fp_sort(&h1);
    sm_xp_plan p;
    assert_int_equal(sm_xp_plan_make_for("h2", &d, "qdisc,sysctl", 8, &p, &err), 0);
    assert_int_equal(p.n, 5); /* three tested, the untested governor, the combination */

    const sm_xp_ref only_qdisc = {"h1", "qdisc", &h1};
    assert_int_equal(sm_xp_plan_reverse(&p, &d, &only_qdisc), 1);
    assert_string_equal(p.v[0].reverse_host, "h1");
    assert_string_equal(p.v[0].reverse, "qdisc lo tbf rate 400Mbit burst 128Kb lat 50ms");
    assert_string_equal(p.v[0].why_no_reverse, "");
    assert_string_equal(p.v[1].reverse, "");
    assert_string_equal(p.v[1].reverse_host, "");
    assert_string_equal(p.v[1].why_no_reverse,
                        "h1's agent may not change sysctls: start it with --allow-experiment "
                        "qdisc,sysctl");
    /* h1's own value is not the fleet's: giving it h2's would not show the gap. */
    assert_string_equal(p.v[2].reverse, "");
    assert_string_equal(p.v[2].why_no_reverse,
                        "h1's net.core.somaxconn is 256, not the fleet's 128");
    assert_string_equal(p.v[3].treatment, "");
    assert_string_equal(p.v[3].why_no_reverse, ""); /* untested: no reverse to speak of */
    assert_string_equal(p.v[4].item, "");
    assert_string_equal(p.v[4].reverse, "");
    assert_string_equal(p.v[4].why_no_reverse, "");

    const sm_xp_ref both = {"h1", "qdisc,sysctl", &h1};
    assert_int_equal(sm_xp_plan_reverse(&p, &d, &both), 2);
    assert_string_equal(p.v[1].reverse, "sysctl net.ipv4.tcp_keepalive_time=7201");
    assert_string_equal(p.v[1].why_no_reverse, "");

    /* The reverse survives the stored plan, and a stored reverse is checked too. */
    char *j = sm_xp_plan_json(&p);
    sm_xp_plan q;
    assert_int_equal(sm_xp_plan_from_json(j, &q, &err), 0);
    for (size_t i = 0; i < p.n; i++)
        assert_memory_equal(&q.v[i], &p.v[i], sizeof p.v[i]);
    sm_xp_plan_fini(&q);
    char *bad = strdup(j);
    char *at = strstr(bad, "\"reverse\":\"qdisc lo tbf");
    assert_non_null(at);
    memcpy(at + strlen("\"reverse\":\""), "tc -h", 5);
    assert_int_equal(sm_xp_plan_from_json(bad, &q, &err), SM_EINVAL);
    assert_string_equal(err.field, "[0].reverse");
    free(bad);
    free(j);

    /* No fleet host to reverse on: nothing changes. */
    assert_int_equal(sm_xp_plan_reverse(&p, &d, NULL), 0);
    const sm_xp_ref no_fp = {"h1", "qdisc", NULL};
    assert_int_equal(sm_xp_plan_reverse(&p, &d, &no_fp), 0);
    sm_xp_plan_fini(&p);
    sm_fp_fini(&h1);
    sm_fp_diffs_fini(&d);
}

static void test_the_plan_survives_its_json(void **state)
{
    (void)state;
    sm_fp_diffs d;
    five(&d);
    sm_xp_plan p, q;
    sm_error err = {0};
    assert_int_equal(sm_xp_plan_make_for("h2", &d, "qdisc,sysctl", 8, &p, &err), 0);
    char *j = sm_xp_plan_json(&p);
    assert_non_null(j);
    const char *first = "[{\"item\":\"if.lo.qdisc\",\"label\":\"lo qdisc\",\"host_value\":\"tbf "
                        "rate 400Mbit burst 128Kb lat 50ms\",\"fleet_value\":\"noqueue\","
                        "\"treatment\":\"qdisc lo noqueue\",\"why_untested\":\"\","
                        "\"relevance\":99,\"reverse_host\":\"\",\"reverse\":\"\","
                        "\"why_no_reverse\":\"\"},";
    assert_memory_equal(j, first, strlen(first));
    assert_int_equal(sm_xp_plan_from_json(j, &q, &err), 0);
    assert_int_equal(q.n, p.n);
    assert_int_equal(q.tested, p.tested);
    for (size_t i = 0; i < p.n; i++)
        assert_memory_equal(&q.v[i], &p.v[i], sizeof p.v[i]);
    free(j);
    sm_xp_plan_fini(&q);
    sm_xp_plan_fini(&p);
    sm_fp_diffs_fini(&d);

    assert_int_equal(sm_xp_plan_from_json("[]", &q, &err), 0);
    assert_int_equal(q.n, 0);
    sm_xp_plan_fini(&q);
}

/* A stored plan of one suspect whose treatment and why are t and w. */
static int read_one(const char *t, const char *w, sm_error *err)
{
    char j[800];
    snprintf(j, sizeof j,
             "[{\"item\":\"if.lo.qdisc\",\"label\":\"lo qdisc\",\"host_value\":\"x\","
             "\"fleet_value\":\"noqueue\",\"treatment\":\"%s\",\"why_untested\":\"%s\","
             "\"relevance\":100}]",
             t, w);
    sm_xp_plan q = {0};
    int rc = sm_xp_plan_from_json(j, &q, err);
    sm_xp_plan_fini(&q);
    return rc;
}

static void test_a_stored_plan_is_checked_as_it_was_made(void **state)
{
    (void)state;
    sm_error err = {0};
    static const char *const good[] = {
        "qdisc lo noqueue",
        "qdisc eth0.100 tbf rate 1Mbit burst 1600b",
        "sysctl net.ipv4.tcp_rmem=4096\t131072\t6291456",
        "socket rcvbuf=4096",
        "socket sndbuf=268435456",
        "socket nodelay=0",
        "qdisc lo noqueue; socket nodelay=1; sysctl net.core.somaxconn=4096; socket rcvbuf=8192",
        "offload lo gso=on",
        "qdisc lo noqueue; offload lo tso=off; offload lo gro=on",
        "socket congestion=bbr; socket notsent_lowat=16384; socket cork=1",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_int_equal(read_one(good[i], "", &err), 0);
    static const char *const bad[] = {
        "sysctl kernel.x=1",
        "sysctl net.core.x=",
        "sysctl net.Core.x=1",
        "qdisc lo fq_codel",
        "qdisc lo",
        "qdisc a/b noqueue",
        "socket rcvbuf=4095",
        "socket sndbuf=268435457",
        "socket nodelay=2",
        "socket rcvbuf=+4096",
        "tc qdisc del dev lo root",
        "offload lo sg=on",
        "offload lo gso=maybe",
        "socket congestion=BBR",
        "socket notsent_lowat=0",
        "socket cork=2",
        "offload lo gso",
        "offload lo/x gso=on",
        "qdisc lo noqueue;socket nodelay=1",
        "qdisc lo noqueue; ",
        /* five parts, one more than a treatment takes */
        ("socket nodelay=1; socket nodelay=1; socket nodelay=1; socket nodelay=1; socket "
         "nodelay=1"),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(read_one(bad[i], "", &err), SM_EINVAL);
        assert_string_equal(err.field, "[0].treatment");
    }
    assert_int_equal(read_one("offload lo sg=on", "", &err), SM_EINVAL);
    assert_non_null(
        strstr(err.msg, "'offload lo sg=on': an offload treatment is offload IFACE gso|gro|tso"));
    assert_int_equal(read_one("qdisc lo noqueue", "and a reason", &err), SM_EINVAL);
    assert_string_equal(err.msg, "experiment plan[0]: exactly one of treatment and why_untested "
                                 "is given");
    assert_int_equal(read_one("", "", &err), SM_EINVAL);
    assert_int_equal(read_one("", "no treatment exists", &err), 0);

    sm_xp_plan q = {0};
    assert_int_equal(sm_xp_plan_from_json("{}", &q, &err), SM_EPARSE);
    assert_string_equal(err.msg, "experiment plan: expected a JSON array");
    assert_int_equal(sm_xp_plan_from_json("[", &q, &err), SM_EPARSE);
    assert_int_equal(sm_xp_plan_from_json(NULL, &q, &err), SM_EINVAL);
    assert_int_equal(sm_xp_plan_from_json("[{\"item\":\"\"}]", &q, &err), SM_EPARSE);
    assert_string_equal(err.msg, "experiment plan[0]: missing field 'label'");
    assert_int_equal(sm_xp_plan_from_json(
                         "[{\"item\":\"\",\"label\":\"\",\"host_value\":\"\",\"fleet_value\":\"\","
                         "\"treatment\":\"\",\"why_untested\":\"w\",\"relevance\":-1}]",
                         &q, &err),
                     SM_EPARSE);
    assert_string_equal(err.field, "[0].relevance");
    char j[600];
    snprintf(j, sizeof j,
             "[{\"item\":\"\",\"label\":\"%0200d\",\"host_value\":\"\",\"fleet_value\":\"\","
             "\"treatment\":\"\",\"why_untested\":\"w\",\"relevance\":1}]",
             0);
    assert_int_equal(sm_xp_plan_from_json(j, &q, &err), SM_EINVAL);
    assert_string_equal(err.field, "[0].label");
    assert_int_equal(sm_xp_plan_from_json(
                         "[{\"item\":\"\",\"label\":\"\",\"host_value\":\"\",\"fleet_value\":\"\","
                         "\"treatment\":\"\",\"why_untested\":\"w\",\"relevance\":1,\"x\":1}]",
                         &q, &err),
                     SM_EPARSE);
    assert_null(q.v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_root_qdisc_becomes_the_fleets_noqueue_or_tbf),
        cmocka_unit_test(test_a_qdisc_the_agent_cannot_set_is_untested_naming_it),
        cmocka_unit_test(test_a_qdisc_without_the_flag_says_how_to_start_the_agent),
        cmocka_unit_test(test_a_sysctl_is_set_with_the_flag_only),
        cmocka_unit_test(test_tcp_buffers_fall_back_to_the_socket_option_without_the_flag),
        cmocka_unit_test(test_an_offload_becomes_the_fleets_with_the_flag),
        cmocka_unit_test(test_congestion_and_lowat_fall_back_to_the_socket_option_without_the_flag),
        cmocka_unit_test(test_other_items_have_no_treatment),
        cmocka_unit_test(test_no_majority_or_no_value_has_nothing_to_give),
        cmocka_unit_test(test_a_value_outside_the_syntax_is_untested_saying_why),
        cmocka_unit_test(test_the_budget_tests_the_first_suspects_that_can_be),
        cmocka_unit_test(test_the_combination_comes_last_with_at_most_four_parts),
        cmocka_unit_test(test_the_reverse_gives_a_fleet_host_the_odd_hosts_value),
        cmocka_unit_test(test_the_plan_survives_its_json),
        cmocka_unit_test(test_a_stored_plan_is_checked_as_it_was_made),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
