/* Helpers of the CLI's unit tests: see cli_fixture.h. */
#include "tests/unit/coordinator/cli/cli_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

int cli_fixture_parse_env(char **argv, int argc, const char *env, sm_cli_opts *o, sm_error *err)
{
    memset(err, 0, sizeof *err);
    memset(o, 0xA5, sizeof *o); /* nothing may depend on what was there */
    return sm_cli_parse(argc, argv, env, o, err);
}

int cli_fixture_parse(char **argv, int argc, sm_cli_opts *o, sm_error *err)
{
    return cli_fixture_parse_env(argv, argc, NULL, o, err);
}

void cli_fixture_assert_msg_has(const sm_error *err, const char *needle)
{
    if (!strstr(err->msg, needle))
        fail_msg("error '%s' does not name '%s'", err->msg, needle);
    assert_null(strchr(err->msg, '\n'));
}

void cli_fixture_assert_fails_naming(char **argv, int argc, const char *needle)
{
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(argv, argc, &o, &err), SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    cli_fixture_assert_msg_has(&err, needle);
}
