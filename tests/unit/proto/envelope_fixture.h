/* What proto/envelope's unit tests share: a fixed time and key, and envelopes sealed, forged
 * and opened (cmocka assertions). */
#ifndef SM_TESTS_UNIT_ENVELOPE_FIXTURE_H
#define SM_TESTS_UNIT_ENVELOPE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/envelope.h"

#define T0 1700000000000ull /* a fixed "now" in unix ms */

/* The fleet key of the tests: bytes 0x00 to 0x1f. */
extern const uint8_t KEY[SM_KEY_LEN];

/* Fails the test at file:line unless text holds part. */
#define assert_contains(text, part)                                                                \
    envelope_fixture_check_contains((text), (part), __FILE__, __LINE__)
void envelope_fixture_check_contains(const char *text, const char *part, const char *file,
                                     int line);

/* Seals body from name at ts; the caller frees. */
char *envelope_fixture_seal(const char *name, uint64_t ts, const char *body, size_t *len);

/* Opens a copy of exactly len bytes with no NUL after it, so the sanitizer catches any read
 * past the end. *err receives the reason. */
sm_reject envelope_fixture_open_copy(const uint8_t *key, const char *text, size_t len, uint64_t now,
                                     sm_env *out, sm_error *err);

/* The value of a "key":"..." string field in a sealed envelope, copied into out. */
void envelope_fixture_field(const char *env, const char *key, char *out, size_t cap);

/* An envelope with the given header values and a correct MAC, built independently of the
 * sealer so that the header checks can be fed syntax the sealer would never write. */
char *envelope_fixture_forge(const char *v, const char *agent, const char *ts, const char *nonce,
                             const char *body);

/* A nonce of the documented form. */
#define NONCE "0123456789abcdef0123456789abcdef"

#endif
