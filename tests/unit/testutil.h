/* Helpers shared by the unit tests. */
#ifndef SM_TESTS_UNIT_TESTUTIL_H
#define SM_TESTS_UNIT_TESTUTIL_H

#include <math.h>

#include "proto/params.h"

/* cmocka 1.1's assert_float_equal compares as float (~7 digits): too coarse for these checks. */
#define assert_double_near(got, want, tol)                                                         \
    do {                                                                                           \
        double got_ = (got), want_ = (want);                                                       \
        if (!(fabs(got_ - want_) <= (tol)))                                                        \
            fail_msg("%s = %.17g, want %.17g +- %g", #got, got_, want_, (double)(tol));            \
    } while (0)

/* Every field of two params, one assertion each, so a failure names the field. cmocka.h must
 * be included first. */
static inline void assert_params_equal(const sm_params *a, const sm_params *b)
{
    assert_int_equal(a->workload, b->workload);
    assert_int_equal(a->transport, b->transport);
    assert_int_equal(a->scope, b->scope);
    assert_int_equal(a->framing, b->framing);
    assert_int_equal(a->msg_size, b->msg_size);
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->bytes, b->bytes);
    assert_int_equal(a->duration_ms, b->duration_ms);
    assert_int_equal(a->req_size, b->req_size);
    assert_int_equal(a->resp_size, b->resp_size);
    assert_int_equal(a->nodelay, b->nodelay);
    assert_int_equal(a->cork, b->cork);
    assert_int_equal(a->sndbuf, b->sndbuf);
    assert_int_equal(a->rcvbuf, b->rcvbuf);
    assert_int_equal(a->read_size, b->read_size);
    assert_int_equal(a->time_limit_ms, b->time_limit_ms);
    assert_int_equal(a->client, b->client);
    assert_int_equal(a->connections, b->connections);
    assert_int_equal(a->repeat, b->repeat);
    assert_int_equal(a->buffer_size, b->buffer_size);
    assert_int_equal(a->fresh_connect, b->fresh_connect);
    assert_int_equal(a->http2, b->http2);
    assert_int_equal(a->tls, b->tls);
    assert_int_equal(a->verify, b->verify);
    assert_string_equal(a->url, b->url);
}

#endif
