/* What proto/params' unit tests share: see params_fixture.h. */
#include "tests/unit/proto/params_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

void params_fixture_check_invalid(sm_params *p, const char *field, const char *bound,
                                  const char *file, int line)
{
    sm_error err;
    sm_error_clear(&err);
    int rc = sm_params_validate(p, &err);
    _assert_int_equal(cast_to_largest_integral_type(rc), cast_to_largest_integral_type(SM_EINVAL),
                      file, line);
    _assert_int_equal(cast_to_largest_integral_type(err.code),
                      cast_to_largest_integral_type(SM_EINVAL), file, line);
    if (strstr(err.msg, field) == NULL || (bound != NULL && strstr(err.msg, bound) == NULL)) {
        print_error("\"%s\" lacks \"%s\" or \"%s\"\n", err.msg, field, bound ? bound : "");
        _fail(file, line);
    }
}

void params_fixture_check_valid(sm_params *p, const char *file, int line)
{
    sm_error err;
    sm_error_clear(&err);
    int rc = sm_params_validate(p, &err);
    if (rc != 0) {
        print_error("unexpected error %d: %s\n", rc, err.msg);
        _fail(file, line);
    }
}

sm_params params_fixture_stream(void)
{
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    return p;
}

sm_params params_fixture_rr(void)
{
    sm_params p;
    sm_params_init(&p, SM_WL_RR);
    return p;
}

sm_params params_fixture_connect(void)
{
    sm_params p;
    sm_params_init(&p, SM_WL_CONNECT);
    return p;
}
