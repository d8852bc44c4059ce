/* What proto/params' unit tests share: each workload's defaults, and the checks of validation
 * (cmocka assertions). */
#ifndef SM_TESTS_UNIT_PARAMS_FIXTURE_H
#define SM_TESTS_UNIT_PARAMS_FIXTURE_H

#include "proto/params.h"

/* Validation of *p fails with SM_EINVAL and a reason naming field and bound (NULL: any);
 * fails the test at the caller's line otherwise (a macro, so that a failure points there). */
#define assert_invalid(p, field, bound)                                                            \
    params_fixture_check_invalid((p), (field), (bound), __FILE__, __LINE__)
void params_fixture_check_invalid(sm_params *p, const char *field, const char *bound,
                                  const char *file, int line);

/* *p validates; fails the test at the caller's line otherwise. */
#define assert_valid(p) params_fixture_check_valid((p), __FILE__, __LINE__)
void params_fixture_check_valid(sm_params *p, const char *file, int line);

/* The defaults of a stream, rr and connect job. */
sm_params params_fixture_stream(void);
sm_params params_fixture_rr(void);
sm_params params_fixture_connect(void);

#endif
