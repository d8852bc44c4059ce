/* Unit tests of a job's treatment text (proto/treatment.c): each kind parses into its part and
 * prints back as it was written; every other spelling is refused, naming the part. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proto/params.h"
#include "proto/treatment.h"

#include <string.h>

/* text parses, and its parts print back joined by "; " as text itself. */
static sm_treatment parses(const char *text)
{
    sm_treatment t;
    sm_error err = {0};
    if (sm_treatment_parse(text, &t, &err) != 0)
        fail_msg("'%s' was refused: %s", text, err.msg);
    char back[SM_TREATMENT_MAX + 1] = "", part[SM_TREATMENT_MAX + 1];
    for (size_t i = 0; i < t.n; i++) {
        if (i)
            strcat(back, "; ");
        strcat(back, sm_treatment_part_text(&t.v[i], part, sizeof part));
    }
    assert_string_equal(back, text);
    return t;
}

/* text is refused with a message that holds why. */
static void refused(const char *text, const char *why)
{
    sm_treatment t;
    sm_error err = {0};
    assert_int_equal(sm_treatment_parse(text, &t, &err), SM_EINVAL);
    if (strstr(err.msg, why) == NULL)
        fail_msg("'%s': '%s' does not say '%s'", text, err.msg, why);
    assert_memory_equal(err.msg, "treatment: ", 11);
}

static void test_each_kind_parses_into_its_part(void **state)
{
    (void)state;
    sm_treatment t = parses("sysctl net.ipv4.tcp_rmem=4096 131072 6291456");
    assert_int_equal(t.n, 1);
    assert_int_equal(t.v[0].kind, SM_TREAT_SYSCTL);
    assert_string_equal(t.v[0].key, "net.ipv4.tcp_rmem");
    assert_string_equal(t.v[0].value, "4096 131072 6291456");
    t = parses("qdisc lo tbf rate 139Mbit burst 131044b limit 963839b");
    assert_int_equal(t.v[0].kind, SM_TREAT_QDISC);
    assert_string_equal(t.v[0].key, "lo");
    assert_string_equal(t.v[0].value, "tbf rate 139Mbit burst 131044b limit 963839b");
    t = parses("offload lo gso=off");
    assert_int_equal(t.v[0].kind, SM_TREAT_OFFLOAD);
    assert_string_equal(t.v[0].key, "lo gso");
    assert_string_equal(t.v[0].value, "off");
    assert_true(sm_treat_part_host(&t.v[0]));
    assert_string_equal(sm_treat_flag(SM_TREAT_OFFLOAD), "offload");
    assert_string_equal(sm_treat_kind_name(SM_TREAT_OFFLOAD), "offload");
    t = parses("socket rcvbuf=131072; socket nodelay=1");
    assert_int_equal(t.n, 2);
    assert_int_equal(t.v[1].kind, SM_TREAT_SOCKET);
    assert_false(sm_treat_part_host(&t.v[1]));
    assert_null(sm_treat_flag(SM_TREAT_SOCKET));
    t = parses("");
    assert_int_equal(t.n, 0);
    /* Four parts at most, of four kinds; an offload per interface and name. */
    t = parses("sysctl net.core.somaxconn=4096; qdisc lo noqueue; offload lo gro=on; offload lo "
               "tso=off");
    assert_int_equal(t.n, 4);
    assert_string_equal(t.v[3].key, "lo tso");
}

static void test_socket_parts_set_the_jobs_options(void **state)
{
    (void)state;
    sm_treatment t = parses("socket rcvbuf=65536; socket sndbuf=32768; socket nodelay=1");
    sm_params p;
    memset(&p, 0, sizeof p);
    sm_treatment_socket_apply(&t, &p);
    assert_int_equal(p.rcvbuf, 65536);
    assert_int_equal(p.sndbuf, 32768);
    assert_int_equal(p.nodelay, 1);
    assert_false(p.cork);
    t = parses("socket congestion=bbr; socket notsent_lowat=4294967295; socket cork=1");
    sm_treatment_socket_apply(&t, &p);
    assert_string_equal(p.congestion, "bbr");
    assert_int_equal(p.notsent_lowat, 4294967295u);
    assert_true(p.cork);
    assert_int_equal(p.rcvbuf, 65536); /* what a part does not name stays */
}

static void test_other_spellings_are_refused_naming_the_part(void **state)
{
    (void)state;
    refused("ethtool lo gso=off", "part 1: unknown kind 'ethtool'");
    refused("offload lo", "offload takes IFACE NAME=on|off");
    refused("offload lo gso", "offload takes IFACE NAME=on|off");
    refused("offload lo lro=off", "offload 'lro=off' is not gso, gro, tso, tx_csum, rx_csum or sg");
    refused("offload lo gso=1", "offload lo gso is on or off");
    refused("offload lo gso=on ", "offload lo gso is on or off");
    refused("offload l/o gso=on", "interface 'l/o' is not 1 to 15");
    refused("offload lo gso=on; offload lo gso=off", "part 2: sets offload lo gso again");
    refused("sysctl kernel.panic=1", "does not start with net.");
    refused("sysctl net..x=1", "has an empty component");
    refused("sysctl net.core.somaxconn= 1", "starts or ends with a blank");
    refused("qdisc lo", "qdisc takes IFACE VALUE");
    refused("socket nodelay=2", "socket nodelay is 0 or 1");
    refused("socket cork=yes", "socket cork is 0 or 1");
    refused("socket congestion=BBR", "socket congestion is 1 to 15 of a-z 0-9 _");
    refused("socket congestion=a_name_too_long6", "socket congestion is 1 to 15");
    refused("socket congestion=", "socket congestion is 1 to 15");
    refused("socket notsent_lowat=0", "notsent_lowat is a number of bytes from 1 to 4294967295");
    refused("socket notsent_lowat=4294967296", "notsent_lowat is a number of bytes");
    refused("socket nagle=1", "socket 'nagle' is not rcvbuf, sndbuf, nodelay, cork, congestion");
    refused("socket rcvbuf=1", "socket rcvbuf is a number of bytes");
    refused("qdisc lo noqueue;offload lo gso=on", "a ';' ends a part");
    refused("qdisc lo noqueue; ", "a ';' ends a part");
    refused("sysctl net.v=1; sysctl net.w=1; sysctl net.x=1; sysctl net.y=1; sysctl net.z=1",
            "more than 4 parts");
    char longer[SM_TREATMENT_MAX + 2];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    refused(longer, "longer than 255 bytes");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_kind_parses_into_its_part),
        cmocka_unit_test(test_socket_parts_set_the_jobs_options),
        cmocka_unit_test(test_other_spellings_are_refused_naming_the_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
