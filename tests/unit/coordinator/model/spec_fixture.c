/* What the spec's unit tests share: see spec_fixture.h. */
#include "tests/unit/coordinator/model/spec_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *spec_fixture_dq(const char *text)
{
    char *s = strdup(text);
    assert_non_null(s);
    for (char *p = s; *p != '\0'; p++)
        if (*p == '\'')
            *p = '"';
    return s;
}

int spec_fixture_decode(const char *squoted, sm_spec *out, sm_error *err)
{
    char *json = spec_fixture_dq(squoted);
    int rc = sm_spec_decode(json, strlen(json), out, err);
    free(json);
    return rc;
}

void spec_fixture_decode_ok(const char *squoted, sm_spec *out)
{
    sm_error err;
    sm_error_clear(&err);
    memset(err.field, 'x', sizeof err.field - 1);
    if (spec_fixture_decode(squoted, out, &err) != 0)
        fail_msg("%s\n%s (field '%s')", squoted, err.msg, err.field);
    assert_string_equal(err.field, "");
}

void spec_fixture_check_error(const char *squoted, int code, const char *part, const char *field,
                              const char *file, int line)
{
    sm_spec s;
    sm_error err;
    memset(&s, 0xff, sizeof s);
    sm_error_clear(&err);
    memset(err.field, 'x', sizeof err.field - 1);
    int rc = spec_fixture_decode(squoted, &s, &err);
    const char *got = err.field;
    if (rc != code || err.code != code || strstr(err.msg, part) == NULL ||
        strcmp(got, field) != 0) {
        print_error("%s\nrc %d (want %d), code %d, msg \"%s\" (want \"%s\"), field \"%s\" (want "
                    "\"%s\")\n",
                    squoted, rc, code, err.code, err.msg, part, got, field);
        _fail(file, line);
    }
    _assert_true(s.tests == NULL && s.n_tests == 0 && s.host_names == NULL && s.pair_list == NULL &&
                     s.name[0] == '\0',
                 "empty spec", file, line);
}
