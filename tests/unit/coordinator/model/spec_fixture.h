/* What the spec's unit tests share: specs written with single quotes, decoded, and the checks of
 * their errors (cmocka assertions). */
#ifndef SM_TESTS_UNIT_SPEC_FIXTURE_H
#define SM_TESTS_UNIT_SPEC_FIXTURE_H

#include "coordinator/model/spec.h"
#include "proto/err.h"

/* Specs are written with single quotes, which read better in C strings; this swaps them for
 * double quotes. The caller frees the copy. */
char *spec_fixture_dq(const char *text);
/* sm_spec_decode of squoted with its single quotes swapped for double ones. */
int spec_fixture_decode(const char *squoted, sm_spec *out, sm_error *err);
/* As spec_fixture_decode, which must succeed with no error field; fails the test otherwise. */
void spec_fixture_decode_ok(const char *squoted, sm_spec *out);

/* Decoding must fail with `code`, a reason containing `part` and the field path `field`, and
 * leave *out empty. */
#define assert_spec_error(json, code, part, field)                                                 \
    spec_fixture_check_error((json), (code), (part), (field), __FILE__, __LINE__)
void spec_fixture_check_error(const char *squoted, int code, const char *part, const char *field,
                              const char *file, int line);

/* A spec of one stream test, and the rest of its top level (",'hosts':..." or ""). */
#define T_STREAM   "{'workload':'stream'}"
#define SPEC(rest) "{'name':'s','tests':[" T_STREAM "]" rest "}"

#endif
