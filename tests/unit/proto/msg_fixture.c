/* What proto/msg's unit tests share: see msg_fixture.h. */
#include "tests/unit/proto/msg_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void msg_fixture_reply_init(sm_poll_reply *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->to, sizeof r->to, "h1");
    snprintf(r->poll, sizeof r->poll, REPLY_NONCE);
}

void msg_fixture_check_contains(const char *text, const char *part, const char *file, int line)
{
    if (strstr(text, part) == NULL) {
        print_error("\"%s\"\nlacks \"%s\"\n", text, part);
        _fail(file, line);
    }
}

void msg_fixture_check_code(int rc, const sm_error *err, int code, const char *file, int line)
{
    _assert_int_equal(cast_to_largest_integral_type(rc), cast_to_largest_integral_type(code), file,
                      line);
    _assert_int_equal(cast_to_largest_integral_type(err->code), cast_to_largest_integral_type(code),
                      file, line);
}

void msg_fixture_check_poll_error(const char *json, int code, const char *part, const char *file,
                                  int line)
{
    static sm_poll p, zero;
    sm_error err;
    memset(&p, 0xff, sizeof p);
    sm_error_clear(&err);
    int rc = sm_msg_poll_decode(json, strlen(json), &p, &err);
    msg_fixture_check_code(rc, &err, code, file, line);
    msg_fixture_check_contains(err.msg, part, file, line);
    _assert_true(memcmp(&p, &zero, sizeof p) == 0, "poll left zeroed", file, line);
}

void msg_fixture_check_reply_error(const char *json, int code, const char *part, const char *file,
                                   int line)
{
    static sm_poll_reply r, zero;
    sm_error err;
    memset(&r, 0xff, sizeof r);
    sm_error_clear(&err);
    int rc = sm_msg_reply_decode(json, strlen(json), &r, &err);
    msg_fixture_check_code(rc, &err, code, file, line);
    msg_fixture_check_contains(err.msg, part, file, line);
    _assert_true(memcmp(&r, &zero, sizeof r) == 0, "reply left zeroed", file, line);
}

void msg_fixture_fill_ok_result(sm_result *r)
{
    static const uint64_t ns[] = {900, 1200, 1200, 5000, 2000000};
    sm_result_init(r);
    r->ok = true;
    sm_result_set(r, SM_M_RT_PER_S, 12345.678);
    sm_result_set(r, SM_M_RTT_P99_US, 1.0 / 3.0);
    r->sndbuf_eff = 87380;
    r->tx_cpu = 2;
    r->hist = sm_hist_new();
    assert_non_null(r->hist);
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        sm_hist_record(r->hist, ns[i]);
}

void msg_fixture_assert_hist_equal(const sm_hist *a, const sm_hist *b)
{
    if (a == NULL || b == NULL) {
        assert_true(a == b);
        return;
    }
    assert_int_equal(sm_hist_count(a), sm_hist_count(b));
    assert_int_equal(sm_hist_min(a), sm_hist_min(b));
    assert_int_equal(sm_hist_max(a), sm_hist_max(b));
    size_t ca = 0, cb = 0, ia, ib;
    uint64_t na, nb;
    while (sm_hist_next(a, &ca, &ia, &na) == 0) {
        assert_int_equal(sm_hist_next(b, &cb, &ib, &nb), 0);
        assert_int_equal(ia, ib);
        assert_int_equal(na, nb);
    }
    assert_int_not_equal(sm_hist_next(b, &cb, &ib, &nb), 0);
}

void msg_fixture_assert_result_equal(const sm_result *a, const sm_result *b)
{
    assert_int_equal(a->ok, b->ok);
    assert_string_equal(a->reason, b->reason);
    assert_int_equal(a->have, b->have);
    for (int m = 0; m < SM_M__COUNT; m++)
        if (sm_result_has(a, (sm_metric)m))
            assert_memory_equal(&a->v[m], &b->v[m], sizeof(double));
    assert_int_equal(a->sndbuf_eff, b->sndbuf_eff);
    assert_int_equal(a->rcvbuf_eff, b->rcvbuf_eff);
    assert_int_equal(a->tx_cpu, b->tx_cpu);
    assert_int_equal(a->rx_cpu, b->rx_cpu);
    msg_fixture_assert_hist_equal(a->hist, b->hist);
}
