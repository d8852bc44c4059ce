/* Unit tests of agent/experiment/qdisc's pure half: the tbf text the fingerprint writes parsed
 * back (and every other spelling refused), and the bucket given to libnl so that the kernel's
 * clock ticks read back as the burst asked for. Nothing here touches a qdisc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <netlink/route/tc.h>
#include <netlink/utils.h>

#include "agent/experiment/qdisc.h"

static void check_refused(const char *text, const char *why)
{
    sm_tbf t;
    sm_error err;
    sm_error_clear(&err);
    if (sm_treat_tbf_parse(text, &t, &err) != SM_EINVAL || strstr(err.msg, why) == NULL)
        fail_msg("'%s': '%s' lacks '%s'", text, err.msg, why);
}

static void test_qdisc_tbf_text_of_the_fingerprint_parses_back(void **state)
{
    (void)state;
    sm_tbf t;
    sm_error err;
    assert_int_equal(sm_treat_tbf_parse("tbf rate 100Mbit burst 131062b limit 756072b", &t, &err),
                     0);
    assert_int_equal(t.rate, 12500000);
    assert_int_equal(t.burst, 131062);
    assert_int_equal(t.limit, 756072);
    assert_int_equal(sm_treat_tbf_parse("tbf rate 57.304Kbit burst 4Kb limit 2Mb", &t, &err), 0);
    assert_int_equal(t.rate, 7163); /* 57304 / 8 */
    assert_int_equal(t.burst, 4096);
    assert_int_equal(t.limit, 2u << 20);
}

static void test_qdisc_other_kinds_and_spellings_are_refused(void **state)
{
    (void)state;
    check_refused("fq_codel limit 10240p flows 1024", "sets only noqueue and tbf root qdiscs");
    check_refused("pfifo_fast", "sets only noqueue and tbf root qdiscs");
    check_refused("tbf rate 100Mbit burst 131062b limit 756072b peakrate 200Mbit mtu 2Kb",
                  "a tbf with a peak rate");
    check_refused("tbf rate 100mbit burst 131062b limit 756072b", "tbf takes a rate as 100Mbit");
    check_refused("tbf rate 100Mbit burst 128kb limit 756072b", "sizes as 131062b");
    check_refused("tbf rate 100Mbit burst 131072b limit 756072b",
                  "not as the fingerprint writes it ('tbf rate 100Mbit burst 128Kb limit "
                  "756072b')");
    /* 57.3Kbit is no whole number of bytes a second: the kernel's rate would read otherwise */
    check_refused("tbf rate 57.3Kbit burst 4Kb limit 2Mb", "('tbf rate 57.304Kbit burst 4Kb");
    check_refused("tbf rate 0.1Mbit burst 1b limit 1b",
                  "not as the fingerprint writes it ('tbf rate 100Kbit");
    check_refused("tbf rate 100Mbit burst 131062b", "not 'tbf rate R burst B limit L'");
    check_refused("tbf rate 100Mbit burst 131062b limit 756072b latency 50ms",
                  "not 'tbf rate R burst B limit L'");
    check_refused("tbf rate 20Gbit burst 131062b limit 756072b", "17.1799Gbit");
    check_refused("tbf rate -8bit burst 1b limit 1b", "tbf takes a rate");
    check_refused("tbf rate 100Mbit burst 0b limit 1b", "sizes as");
}

/* What libnl 3.7's tbf reads back for the bucket it was given (lib/route/qdisc/tbf.c). */
static int libnl_reads(uint32_t rate, int64_t bucket)
{
    uint32_t ticks = nl_us2ticks((uint32_t)rtnl_tc_calc_txtime((int)bucket, (int)rate));
    return rtnl_tc_calc_bufsize((int)nl_ticks2us(ticks), (int)rate);
}

static void test_qdisc_bucket_reads_back_as_the_burst_asked_for(void **state)
{
    (void)state;
    /* tc's "rate 100mbit burst 128kb" reads back as 131062b; given as it is, libnl would
     * read back less (131037b), and each undo would shrink it again */
    assert_int_not_equal(libnl_reads(12500000, 131062), 131062);
    int64_t b = sm_treat_tbf_bucket(12500000, 131062);
    assert_true(b >= 131062 && b < 131062 + 64);
    assert_int_equal(libnl_reads(12500000, b), 131062);
    static const uint32_t rates[] = {125, 7163, 12500000, 50000000, 1250000000};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        /* a burst read back from some bucket is found again */
        for (int64_t given = 3000; given < 3000 + 4000; given += 997) {
            int burst = libnl_reads(rates[i], given);
            if (burst <= 0)
                continue;
            int64_t got = sm_treat_tbf_bucket(rates[i], (uint32_t)burst);
            assert_true(got >= burst);
            assert_int_equal(libnl_reads(rates[i], got), burst);
        }
    }
    /* at 12.5 bytes a microsecond some bursts never read back: refused, not approximated */
    assert_int_equal(sm_treat_tbf_bucket(12500000, 131063), -1);
    assert_int_equal(sm_treat_tbf_bucket(0, 1000), -1);
    assert_int_equal(sm_treat_tbf_bucket(1000, 200000), -1); /* 200 s of buffer */
}

/* A burst no bucket reads back as exactly is set to the nearest that one does, within a
 * microsecond's bytes; a tbf set so reads as its text, and nothing further off does. */
static void test_qdisc_a_burst_never_read_back_gets_the_nearest(void **state)
{
    (void)state;
    uint32_t reads = 0;
    /* exact where one is */
    assert_int_equal(sm_treat_tbf_bucket_near(12500000, 131062, &reads),
                     sm_treat_tbf_bucket(12500000, 131062));
    assert_int_equal(reads, 131062);
    /* 131063 is never read back at 12.5 bytes a microsecond: the nearest is */
    int64_t b = sm_treat_tbf_bucket_near(12500000, 131063, &reads);
    assert_true(b > 0);
    assert_int_equal(libnl_reads(12500000, b), reads);
    assert_int_not_equal(reads, 131063);
    const uint32_t off = reads > 131063 ? reads - 131063 : 131063 - reads;
    assert_true(off <= sm_treat_tbf_slack(12500000));
    assert_int_equal(sm_treat_tbf_slack(12500000), 14);
    /* every burst over a range gets a bucket, at a rate of the lab's */
    for (uint32_t burst = 131000; burst < 131200; burst++) {
        b = sm_treat_tbf_bucket_near(15511000, burst, &reads);
        assert_true(b > 0);
        const uint32_t d = reads > burst ? reads - burst : burst - reads;
        assert_true(d <= sm_treat_tbf_slack(15511000));
    }
    assert_int_equal(sm_treat_tbf_bucket_near(0, 1000, &reads), -1);

    assert_true(sm_treat_tbf_near("tbf rate 100Mbit burst 131062b limit 1Mb",
                                  "tbf rate 100Mbit burst 131062b limit 1Mb"));
    assert_true(sm_treat_tbf_near("tbf rate 100Mbit burst 131050b limit 1Mb",
                                  "tbf rate 100Mbit burst 131063b limit 1Mb"));
    assert_false(sm_treat_tbf_near("tbf rate 100Mbit burst 131040b limit 1Mb",
                                   "tbf rate 100Mbit burst 131063b limit 1Mb"));
    assert_false(sm_treat_tbf_near("tbf rate 200Mbit burst 131063b limit 1Mb",
                                   "tbf rate 100Mbit burst 131063b limit 1Mb"));
    assert_false(sm_treat_tbf_near("tbf rate 100Mbit burst 131063b limit 2Mb",
                                   "tbf rate 100Mbit burst 131063b limit 1Mb"));
    assert_false(sm_treat_tbf_near("noqueue", "tbf rate 100Mbit burst 131063b limit 1Mb"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qdisc_tbf_text_of_the_fingerprint_parses_back),
        cmocka_unit_test(test_qdisc_other_kinds_and_spellings_are_refused),
        cmocka_unit_test(test_qdisc_bucket_reads_back_as_the_burst_asked_for),
        cmocka_unit_test(test_qdisc_a_burst_never_read_back_gets_the_nearest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
