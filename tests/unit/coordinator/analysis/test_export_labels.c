/* Unit tests of the export's labels: sizes in binary suffixes, each workload and kind of column,
 * pairs, and HTTP ratios. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/export.h"
#include "proto/params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/testutil.h"
#include "tests/unit/coordinator/analysis/export_fixture.h"

/* One label function for every place a test is named: sizes in binary suffixes, each
 * workload, each kind of column, the brief header form. */
static void label_is(const sm_params *p, sm_export_label_kind kind, const char *full,
                     const char *brief)
{
    char buf[SM_TABLE_LABEL_MAX];
    sm_export_label(p, kind, false, buf, sizeof buf);
    assert_string_equal(buf, full);
    sm_export_label(p, kind, true, buf, sizeof buf);
    assert_string_equal(buf, brief);
}

static void test_export_label_writes_sizes_in_binary_suffixes(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    p.msg_size = 131072;
    p.count = 256;
    /* The quick preset's stream: never "131072 B" in one place and "128 KiB" in another. */
    label_is(&p, SM_LABEL_TEST, "stream tcp 128 KiB x 256", "stream tcp 128 KiB");
    p.msg_size = 1000; /* not a multiple of 1024: bytes as they are */
    label_is(&p, SM_LABEL_TEST, "stream tcp 1000 B x 256", "stream tcp 1000 B");
    p.msg_size = 3u << 20;
    p.count = 0;
    p.bytes = 1ull << 30;
    label_is(&p, SM_LABEL_TEST, "stream tcp 3 MiB 1 GiB total", "stream tcp 3 MiB");
    p.bytes = 0;
    p.duration_ms = 2000;
    p.transport = SM_TR_UNIX;
    label_is(&p, SM_LABEL_TEST, "stream unix 3 MiB 2000 ms", "stream unix 3 MiB");
}

static void test_export_label_names_each_workload_and_kind_of_column(void **state)
{
    (void)state;
    sm_params rr;
    sm_params_init(&rr, SM_WL_RR);
    rr.req_size = 1;
    rr.resp_size = 1024;
    rr.duration_ms = 1000;
    rr.nodelay = true;
    label_is(&rr, SM_LABEL_TEST, "rr tcp+nodelay 1 B/1 KiB 1000 ms", "rr tcp+nodelay 1 B/1 KiB");
    label_is(&rr, SM_LABEL_RATIO, "tcp+nodelay/unix rr 1 B/1 KiB 1000 ms",
             "tcp+nodelay/unix rr 1 B/1 KiB");
    sm_params conn;
    sm_params_init(&conn, SM_WL_CONNECT);
    conn.count = 500;
    conn.transport = SM_TR_UNIX;
    label_is(&conn, SM_LABEL_TEST, "connect unix x 500", "connect unix");
    sm_params lines = export_fixture_lines_params(SM_TR_TCP, false);
    label_is(&lines, SM_LABEL_TEST, "stream tcp lines 128 B x 8192", "stream tcp lines 128 B");
}

static void test_export_label_names_pairs_against_loopback(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    p.msg_size = 131072;
    p.count = 256;
    p.scope = SM_SCOPE_PAIR;
    /* The scope is in the rows ("a->b"), not in the test's name: a pair and a loopback test of
     * the same params are one test. */
    label_is(&p, SM_LABEL_TEST, "stream tcp 128 KiB x 256", "stream tcp 128 KiB");
    label_is(&p, SM_LABEL_LOOPBACK, "pair/loopback stream tcp 128 KiB x 256",
             "pair/loopback stream tcp 128 KiB");
}

static void test_export_label_names_http_ratios_user_cpu(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_HTTP);
    p.bytes = 16u << 20;
    p.repeat = 11;
    p.client = SM_HTTP_POOL;
    label_is(&p, SM_LABEL_TEST, "http pool 16 MiB x11", "http pool 16 MiB");
    label_is(&p, SM_LABEL_RATIO, "user CPU pool/thread, http 16 MiB x11",
             "user CPU pool/thread http 16 MiB");
    p.tls = true;
    p.connections = 4;
    label_is(&p, SM_LABEL_TEST, "http pool+tls 16 MiB x11 4 conns", "http pool+tls 16 MiB");
    /* A buffer too small is cut, never overrun. */
    char small[8];
    sm_export_label(&p, SM_LABEL_RATIO, false, small, sizeof small);
    assert_string_equal(small, "user CP");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_label_writes_sizes_in_binary_suffixes),
        cmocka_unit_test(test_export_label_names_each_workload_and_kind_of_column),
        cmocka_unit_test(test_export_label_names_pairs_against_loopback),
        cmocka_unit_test(test_export_label_names_http_ratios_user_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
