/* Unit tests of what the agent keeps private: the kernel command line reduced to its allow-list
 * of performance parameters (agent/host/cmdline.c), and the machine id sent only as a
 * keyed hash (agent/host/facts.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/host/facts.h"
#include "agent/host/fingerprint.h"
#include "agent/host/internal.h"

/* The fingerprint of cmdline, encoded as the agent sends it; *fp keeps the items. */
static char *filtered(const char *cmdline, sm_fingerprint *fp)
{
    sm_error err = {0};
    sm_fp_init(fp);
    assert_int_equal(sm_fpc_cmdline(fp, cmdline, &err), 0);
    sm_fp_sort(fp);
    size_t len = 0;
    char *text = sm_fp_encode(fp, &len, &err);
    assert_non_null(text);
    return text;
}

static const char *value_of(const sm_fingerprint *fp, const char *key)
{
    const sm_fp_item *it = sm_fp_get(fp, key);
    if (it == NULL || it->value == NULL)
        fail_msg("item %s is absent or unreadable", key);
    return it->value;
}

static void test_cmdline_keeps_only_the_allowed_parameters(void **state)
{
    (void)state;
    sm_fingerprint fp;
    char *text = filtered("BOOT_IMAGE=/vmlinuz-6.1 root=UUID=4b1c ro secret=hunter2 isolcpus=1 "
                          "nfsroot=10.0.0.1:/srv/root,user=lab,pass=s3cr3t "
                          "ip=10.0.0.9::10.0.0.1:255.255.255.0:box:eth0:off "
                          "mitigations=off nosmt intel_idle.max_cstate=1 "
                          "nohz_full=\"1-3\" quiet -- init_token=abc single",
                          &fp);
    assert_null(strstr(text, "hunter2"));
    assert_null(strstr(text, "secret"));
    assert_null(strstr(text, "s3cr3t"));
    assert_null(strstr(text, "nfsroot"));
    assert_null(strstr(text, "10.0.0"));
    assert_null(strstr(text, "4b1c"));
    assert_null(strstr(text, "init_token"));
    assert_null(strstr(text, "abc"));
    assert_null(sm_fp_get(&fp, "info.kernel.cmdline"));
    assert_string_equal(value_of(&fp, "kernel.cmdline.isolcpus"), "1");
    assert_string_equal(value_of(&fp, "kernel.cmdline.mitigations"), "off");
    assert_string_equal(value_of(&fp, "kernel.cmdline.nosmt"), "");
    assert_string_equal(value_of(&fp, "kernel.cmdline.intel_idle.max_cstate"), "1");
    assert_string_equal(value_of(&fp, "kernel.cmdline.nohz_full"), "1-3");
    /* BOOT_IMAGE root ro secret nfsroot ip quiet, and init's init_token single */
    assert_string_equal(value_of(&fp, "info.kernel.cmdline_left_out"), "9");
    /* and nothing else */
    assert_int_equal(fp.n, 6);
    free(text);
    sm_fp_fini(&fp);
}

static void test_cmdline_an_allowed_name_with_an_odd_value_sends_no_value(void **state)
{
    (void)state;
    sm_fingerprint fp;
    char big[400];
    snprintf(big, sizeof big, "isolcpus=%0200d", 1);
    char *text = filtered("iommu=\"pt token/xyz@host\" idle=poll tsc=re$liable", &fp);
    assert_null(strstr(text, "xyz"));
    assert_null(strstr(text, "liable"));
    assert_string_equal(value_of(&fp, "kernel.cmdline.iommu"),
                        "(left out: not a setting's characters)");
    assert_string_equal(value_of(&fp, "kernel.cmdline.tsc"),
                        "(left out: not a setting's characters)");
    assert_string_equal(value_of(&fp, "kernel.cmdline.idle"), "poll");
    assert_string_equal(value_of(&fp, "info.kernel.cmdline_left_out"), "0");
    free(text);
    sm_fp_fini(&fp);
    text = filtered(big, &fp);
    assert_string_equal(value_of(&fp, "kernel.cmdline.isolcpus"),
                        "(left out: not a setting's characters)");
    free(text);
    sm_fp_fini(&fp);
}

static void test_cmdline_names_match_whole(void **state)
{
    (void)state;
    assert_true(sm_fpc_cmdline_allowed("isolcpus", 8));
    assert_true(sm_fpc_cmdline_allowed("processor.max_cstate=1", 20));
    assert_false(sm_fpc_cmdline_allowed("isolcpusx", 9));
    assert_false(sm_fpc_cmdline_allowed("isolcpu", 7));
    assert_false(sm_fpc_cmdline_allowed("", 0));
    sm_fingerprint fp;
    char *text = filtered("", &fp);
    assert_string_equal(value_of(&fp, "info.kernel.cmdline_left_out"), "0");
    assert_int_equal(fp.n, 1);
    free(text);
    sm_fp_fini(&fp);
}

/* The vectors are what `systemd-id128 machine-id --app-specific=6c1e0b5d923f4a87b4217ec9580da316`
 * prints on a machine with that /etc/machine-id (and Python's hmac gives). */
static void test_machine_id_is_sent_as_systemds_app_specific_hash(void **state)
{
    (void)state;
    char out[33];
    assert_int_equal(sm_facts_machine_hash("0123456789abcdef0123456789abcdef", out), 0);
    assert_string_equal(out, "ff7dc7a1d8eb4514b00ccc72541e0fe5");
    assert_int_equal(sm_facts_machine_hash("3d1219c7c4c5404aaa1f6d2a48adfda4", out), 0);
    assert_string_equal(out, "d8e06e5b7b1448319afabf2938c26897");
    /* one digit apart: another machine */
    assert_int_equal(sm_facts_machine_hash("0123456789abcdef0123456789abcdee", out), 0);
    assert_string_equal(out, "6c87b07fe5dc41c39bc91ff76b9c55c8");
    /* upper case is the same id */
    assert_int_equal(sm_facts_machine_hash("0123456789ABCDEF0123456789ABCDEF", out), 0);
    assert_string_equal(out, "ff7dc7a1d8eb4514b00ccc72541e0fe5");
    assert_int_equal(sm_facts_machine_hash("0123456789abcdef0123456789abcde", out), -1);
    assert_string_equal(out, "");
    assert_int_equal(sm_facts_machine_hash("0123456789abcdef0123456789abcdeg", out), -1);
    assert_int_equal(sm_facts_machine_hash("", out), -1);
}

static void test_facts_carry_the_hash_never_the_machine_id(void **state)
{
    (void)state;
    char mid[64] = "", want[33];
    FILE *f = fopen("/etc/machine-id", "r");
    if (f == NULL || fgets(mid, sizeof mid, f) == NULL) {
        if (f)
            fclose(f);
        skip();
    }
    fclose(f);
    mid[strcspn(mid, "\n")] = '\0';
    sm_facts facts;
    sm_facts_collect(&facts);
    assert_int_equal(sm_facts_machine_hash(mid, want), 0);
    assert_string_equal(facts.machine_id, want);
    assert_string_not_equal(facts.machine_id, mid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cmdline_keeps_only_the_allowed_parameters),
        cmocka_unit_test(test_cmdline_an_allowed_name_with_an_odd_value_sends_no_value),
        cmocka_unit_test(test_cmdline_names_match_whole),
        cmocka_unit_test(test_machine_id_is_sent_as_systemds_app_specific_hash),
        cmocka_unit_test(test_facts_carry_the_hash_never_the_machine_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
