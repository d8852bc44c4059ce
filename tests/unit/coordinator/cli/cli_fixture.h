/* Helpers of the CLI's unit tests: its option parser run on an argv, and the one-line errors
 * it gives (cmocka assertions). */
#ifndef SM_TESTS_UNIT_CLI_FIXTURE_H
#define SM_TESTS_UNIT_CLI_FIXTURE_H

#include "coordinator/cli/cli.h"
#include "proto/err.h"

/* The number of arguments of a NULL-terminated argv array. */
#define ARGC(a) ((int)(sizeof(a) / sizeof *(a)) - 1)

/* sm_cli_parse of argv with env as the environment's value (NULL: none), into *o and *err
 * both first filled with junk (nothing may depend on what was there). */
int cli_fixture_parse_env(char **argv, int argc, const char *env, sm_cli_opts *o, sm_error *err);

/* cli_fixture_parse_env with no environment value. */
int cli_fixture_parse(char **argv, int argc, sm_cli_opts *o, sm_error *err);

/* err's message names needle and is one line; fails the test otherwise. */
void cli_fixture_assert_msg_has(const sm_error *err, const char *needle);

/* argv must fail with SM_EINVAL, one line, naming needle. */
void cli_fixture_assert_fails_naming(char **argv, int argc, const char *needle);

#endif
