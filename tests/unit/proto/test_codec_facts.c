/* Unit tests of proto/codec's host facts: their exact JSON, round trips, the machine identity, and
 * the refusals. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/codec.h"
#include "tests/unit/testutil.h"
#include "tests/unit/proto/codec_fixture.h"

static void test_codec_facts_encode_exactly(void **state)
{
    (void)state;
    sm_facts f;
    sm_error err;
    codec_fixture_fill_facts(&f);
    char *json = sm_codec_facts_encode(&f, &err);
    assert_string_equal(json, "{\"hostname\":\"h1\",\"kernel\":\"6.1.0\",\"cpu_model\":\"unknown\","
                              "\"cores\":8,\"mem_bytes\":8589934592,\"congestion\":\"cubic\","
                              "\"lo_mtu\":65536,\"loadavg\":[0.5,1,1.25],\"tcp_autocorking\":1}");
    free(json);
}

static void test_codec_facts_round_trip(void **state)
{
    (void)state;
    sm_facts f, back;
    sm_error err;
    codec_fixture_fill_facts(&f);
    memset(f.hostname, 'h', sizeof f.hostname - 1); /* the longest that fits */
    f.mem_bytes = (1ull << 60) + 1;                 /* above 2^53: travels as a string */
    f.loadavg[2] = -1;                              /* agent/host/facts.c's "unknown" */
    char *json = sm_codec_facts_encode(&f, &err);
    assert_non_null(json);
    memset(&back, 0xff, sizeof back);
    if (sm_codec_facts_decode(json, strlen(json), &back, &err) != 0)
        fail_msg("%s: %s", json, err.msg);
    assert_string_equal(back.hostname, f.hostname);
    assert_string_equal(back.kernel, f.kernel);
    assert_string_equal(back.cpu_model, f.cpu_model);
    assert_int_equal(back.cores, f.cores);
    assert_int_equal(back.mem_bytes, f.mem_bytes);
    assert_string_equal(back.congestion, f.congestion);
    assert_int_equal(back.lo_mtu, f.lo_mtu);
    for (int i = 0; i < 3; i++)
        assert_true(back.loadavg[i] == f.loadavg[i]);
    assert_int_equal(back.tcp_autocorking, f.tcp_autocorking);
    free(json);
}

/* The machine's identity travels when known and is left out when not, as an older agent
 * leaves it out; either way the facts decode. */
static void test_codec_facts_carry_the_machine_identity_when_known(void **state)
{
    (void)state;
    sm_facts f, back;
    sm_error err;
    codec_fixture_fill_facts(&f);
    snprintf(f.boot_id, sizeof f.boot_id, "4af93bb9-6eb3-4520-8a34-0f21e7f76433");
    snprintf(f.machine_id, sizeof f.machine_id, "3d1219c7c4c5404aaa1f6d2a48adfda4");
    char *json = sm_codec_facts_encode(&f, &err);
    assert_contains(json, "\"tcp_autocorking\":1,\"boot_id\":\"4af93bb9-6eb3-4520-8a34-"
                          "0f21e7f76433\",\"machine_id\":\"3d1219c7c4c5404aaa1f6d2a48adfda4\"}");
    assert_int_equal(sm_codec_facts_decode(json, strlen(json), &back, &err), 0);
    assert_string_equal(back.boot_id, f.boot_id);
    assert_string_equal(back.machine_id, f.machine_id);
    free(json);

    f.boot_id[0] = '\0';
    json = sm_codec_facts_encode(&f, &err);
    assert_null(strstr(json, "boot_id"));
    memset(&back, 0xff, sizeof back);
    assert_int_equal(sm_codec_facts_decode(json, strlen(json), &back, &err), 0);
    assert_string_equal(back.boot_id, "");
    assert_string_equal(back.machine_id, f.machine_id);
    free(json);
}

static void test_codec_facts_decode_takes_null_loadavg_as_nan(void **state)
{
    (void)state;
    sm_facts f;
    sm_error err;
    codec_fixture_fill_facts(&f);
    f.loadavg[1] = NAN;
    char *json = sm_codec_facts_encode(&f, &err);
    assert_contains(json, "\"loadavg\":[0.5,null,1.25]");
    assert_int_equal(sm_codec_facts_decode(json, strlen(json), &f, &err), 0);
    assert_true(isnan(f.loadavg[1]));
    assert_true(f.loadavg[2] == 1.25);
    free(json);
}

/* Decoding facts is expected to fail with `code` and a reason mentioning `part`; *out zeroed. */
#define assert_facts_error(json, code, part)                                                       \
    check_facts_error((json), (code), (part), __FILE__, __LINE__)

static void check_facts_error(const char *json, int code, const char *part, const char *file,
                              int line)
{
    sm_facts f, zero;
    sm_error err;
    memset(&f, 0xff, sizeof f);
    memset(&zero, 0, sizeof zero);
    sm_error_clear(&err);
    int rc = sm_codec_facts_decode(json, strlen(json), &f, &err);
    _assert_int_equal(cast_to_largest_integral_type(rc), cast_to_largest_integral_type(code), file,
                      line);
    _assert_int_equal(cast_to_largest_integral_type(err.code), cast_to_largest_integral_type(code),
                      file, line);
    codec_fixture_check_contains(err.msg, part, true, file, line);
    _assert_true(memcmp(&f, &zero, sizeof f) == 0, "zeroed facts", file, line);
}

#define FACTS_HEAD "{\"hostname\":\"h1\",\"kernel\":\"6.1.0\",\"cpu_model\":\"x\","
#define FACTS_TAIL "\"mem_bytes\":1,\"congestion\":\"cubic\",\"lo_mtu\":65536,"

static void test_codec_facts_decode_rejects_bad_fields(void **state)
{
    (void)state;
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1,\"gpu\":1}",
                       SM_EPARSE, "facts: unknown field 'gpu'");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL "\"loadavg\":[0,0,0]}", SM_EPARSE,
                       "facts: missing field 'tcp_autocorking'");
    assert_facts_error(FACTS_HEAD "\"cores\":-1," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1}",
                       SM_EPARSE, "cores");
    assert_facts_error(FACTS_HEAD "\"cores\":65537," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1}",
                       SM_EINVAL, "cores");
    assert_facts_error(FACTS_HEAD "\"cores\":\"8\"," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1}",
                       SM_EPARSE, "cores");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":3}",
                       SM_EINVAL, "tcp_autocorking");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0],\"tcp_autocorking\":1}",
                       SM_EPARSE, "loadavg");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,-2,0],\"tcp_autocorking\":1}",
                       SM_EINVAL, "loadavg");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,\"1\",0],\"tcp_autocorking\":1}",
                       SM_EPARSE, "loadavg");
    /* An empty id would make every agent that sent one a single machine. */
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1,\"boot_id\":\"\"}",
                       SM_EINVAL, "facts: boot_id: expected hex digits and '-'");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1,"
                                  "\"machine_id\":\"x; rm\"}",
                       SM_EINVAL, "facts: machine_id: expected hex digits and '-'");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1,\"boot_id\":7}",
                       SM_EPARSE, "facts: boot_id: expected a string");
}

static void test_codec_facts_decode_refuses_a_string_longer_than_its_field(void **state)
{
    (void)state;
    char json[512];
    char cong[33];
    memset(cong, 'c', 32);
    cong[32] = '\0';
    snprintf(json, sizeof json,
             FACTS_HEAD "\"cores\":8,\"mem_bytes\":1,\"congestion\":\"%s\",\"lo_mtu\":1,"
                        "\"loadavg\":[0,0,0],\"tcp_autocorking\":1}",
             cong);
    assert_facts_error(json, SM_EINVAL, "facts: congestion: 32 bytes is above the maximum 31");
    cong[31] = '\0';
    snprintf(json, sizeof json,
             FACTS_HEAD "\"cores\":8,\"mem_bytes\":1,\"congestion\":\"%s\",\"lo_mtu\":1,"
                        "\"loadavg\":[0,0,0],\"tcp_autocorking\":1}",
             cong);
    sm_facts f;
    sm_error err;
    assert_int_equal(sm_codec_facts_decode(json, strlen(json), &f, &err), 0);
    assert_string_equal(f.congestion, cong);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec_facts_encode_exactly),
        cmocka_unit_test(test_codec_facts_round_trip),
        cmocka_unit_test(test_codec_facts_carry_the_machine_identity_when_known),
        cmocka_unit_test(test_codec_facts_decode_takes_null_loadavg_as_nan),
        cmocka_unit_test(test_codec_facts_decode_rejects_bad_fields),
        cmocka_unit_test(test_codec_facts_decode_refuses_a_string_longer_than_its_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
