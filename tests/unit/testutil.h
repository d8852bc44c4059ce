/* Helpers shared by the unit tests. */
#ifndef SM_TESTS_UNIT_TESTUTIL_H
#define SM_TESTS_UNIT_TESTUTIL_H

#include <math.h>

/* cmocka 1.1's assert_float_equal compares as float (~7 digits): too coarse for these checks. */
#define assert_double_near(got, want, tol)                                                         \
    do {                                                                                           \
        double got_ = (got), want_ = (want);                                                       \
        if (!(fabs(got_ - want_) <= (tol)))                                                        \
            fail_msg("%s = %.17g, want %.17g +- %g", #got, got_, want_, (double)(tol));            \
    } while (0)

#endif
