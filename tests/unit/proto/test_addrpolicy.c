/* Unit tests of the data address policy: the default, the classes and nets that widen it, and
 * the parser's errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "proto/addrpolicy.h"

static void assert_refused(const sm_addr_policy *p, const char *addr, const char *why)
{
    sm_error err = {0};
    if (sm_addr_policy_check(p, addr, &err) != SM_EINVAL)
        fail_msg("%s was allowed", addr);
    if (!strstr(err.msg, why))
        fail_msg("%s: '%s' does not say '%s'", addr, err.msg, why);
}

static void assert_allowed(const sm_addr_policy *p, const char *addr)
{
    sm_error err = {0};
    if (sm_addr_policy_check(p, addr, &err) != 0)
        fail_msg("%s: %s", addr, err.msg);
}

static void test_addrpolicy_default_allows_unicast_and_refuses_the_rest(void **state)
{
    (void)state;
    sm_addr_policy p = {0};
    assert_allowed(&p, "10.213.0.11");
    assert_allowed(&p, "192.168.1.2");
    assert_allowed(&p, "8.8.8.8");
    assert_allowed(&p, "fd00::12");
    assert_allowed(&p, "2001:db8::1");
    assert_refused(&p, "127.0.0.1",
                   "127.0.0.1 is a loopback address, outside the data address "
                   "policy (--data-addr-allow loopback allows it)");
    assert_refused(&p, "127.1.2.3", "loopback");
    assert_refused(&p, "::1", "loopback");
    assert_refused(&p, "::ffff:127.0.0.1", "loopback");
    assert_refused(&p, "169.254.10.1", "link-local");
    assert_refused(&p, "fe80::1", "link-local");
    assert_refused(&p, "febf::1", "link-local");
    assert_allowed(&p, "fec0::1");
    assert_refused(&p, "224.0.0.251", "multicast");
    assert_refused(&p, "239.1.1.1", "multicast");
    assert_refused(&p, "255.255.255.255", "multicast");
    assert_refused(&p, "ff02::1", "multicast");
    assert_refused(&p, "0.0.0.0", "unspecified");
    assert_refused(&p, "0.1.2.3", "unspecified");
    assert_refused(&p, "::", "unspecified");
    assert_refused(&p, "h1.lab", "not an IPv4 or IPv6 address");
}

static void test_addrpolicy_classes_and_nets_widen_it(void **state)
{
    (void)state;
    sm_addr_policy p = {0};
    sm_error err = {0};
    assert_int_equal(sm_addr_policy_parse(&p, "loopback", &err), 0);
    assert_allowed(&p, "127.0.0.1");
    assert_allowed(&p, "::1");
    assert_refused(&p, "169.254.1.1", "link-local");
    assert_int_equal(sm_addr_policy_parse(&p, "169.254.7.0/24,fe80::/16", &err), 0);
    assert_allowed(&p, "169.254.7.9");
    assert_refused(&p, "169.254.8.9", "link-local");
    assert_allowed(&p, "fe80::9");
    assert_refused(&p, "fe81::9", "link-local");
    assert_int_equal(sm_addr_policy_parse(&p, "239.1.1.1", &err), 0);
    assert_allowed(&p, "239.1.1.1");
    assert_refused(&p, "239.1.1.2", "multicast");
    sm_addr_policy any = {0};
    assert_int_equal(sm_addr_policy_parse(&any, "any", &err), 0);
    assert_allowed(&any, "224.0.0.1");
    assert_allowed(&any, "fe80::1");
    /* Never a host to connect to, whatever is allowed. */
    assert_refused(&any, "0.0.0.0", "unspecified");
}

static void test_addrpolicy_refusing_private_names_its_option(void **state)
{
    (void)state;
    sm_addr_policy p = {.refuse = SM_ADDR_PRIVATE, .option = "--webhook-allow"};
    sm_error err = {0};
    assert_refused(&p, "10.0.0.1",
                   "10.0.0.1 is a private address, which --webhook-allow refuses unless told "
                   "(--webhook-allow private allows it)");
    assert_refused(&p, "172.16.0.1", "private");
    assert_refused(&p, "172.31.255.255", "private");
    assert_allowed(&p, "172.32.0.1");
    assert_refused(&p, "192.168.1.2", "private");
    assert_refused(&p, "100.64.0.1", "private");
    assert_refused(&p, "100.127.255.255", "private");
    assert_allowed(&p, "100.128.0.1");
    assert_refused(&p, "fd00::12", "private");
    assert_refused(&p, "fc00::1", "private");
    assert_refused(&p, "::ffff:10.1.2.3", "private");
    assert_refused(&p, "127.0.0.1", "(--webhook-allow loopback allows it)");
    assert_refused(&p, "169.254.169.254", "link-local");
    assert_allowed(&p, "8.8.8.8");
    assert_allowed(&p, "2001:db8::1");
    assert_int_equal(sm_addr_policy_parse(&p, "private", &err), 0);
    assert_allowed(&p, "10.0.0.1");
    assert_allowed(&p, "fd00::12");
    assert_int_equal(sm_addr_policy_parse(&p, "bogus", &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "--webhook-allow: 'bogus'"));
}

static void test_addrpolicy_parse_names_the_bad_item_and_changes_nothing(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",       "loopback,", ",loopback",   "lo",         "10.0.0.0/33",
        "::/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/x", "privat"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sm_addr_policy p = {0};
        sm_error err = {0};
        if (sm_addr_policy_parse(&p, bad[i], &err) != SM_EINVAL)
            fail_msg("'%s' was taken", bad[i]);
        assert_non_null(strstr(err.msg, "--data-addr-allow"));
        assert_int_equal(p.allow, 0);
        assert_int_equal(p.n_nets, 0);
    }
    sm_addr_policy p = {0};
    sm_error err = {0};
    assert_int_equal(sm_addr_policy_parse(&p, "loopback,nonsense", &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "'nonsense'"));
    assert_int_equal(p.allow, 0);
    char many[400] = "";
    for (int i = 0; i <= SM_ADDR_POLICY_NETS_MAX; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s10.0.%d.0/24", i ? "," : "",
                 i);
    assert_int_equal(sm_addr_policy_parse(&p, many, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "more than 16 networks"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addrpolicy_default_allows_unicast_and_refuses_the_rest),
        cmocka_unit_test(test_addrpolicy_classes_and_nets_widen_it),
        cmocka_unit_test(test_addrpolicy_refusing_private_names_its_option),
        cmocka_unit_test(test_addrpolicy_parse_names_the_bad_item_and_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
