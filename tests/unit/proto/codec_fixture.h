/* What proto/codec's unit tests share: checks of the JSON text a codec writes, and host facts
 * with every field set. */
#ifndef SM_TESTS_UNIT_CODEC_FIXTURE_H
#define SM_TESTS_UNIT_CODEC_FIXTURE_H

#include <stdbool.h>

#include "proto/facts.h"

/* Fails the test at file:line unless text holds part (want) or lacks it (!want). */
#define assert_contains(text, part)                                                                \
    codec_fixture_check_contains((text), (part), true, __FILE__, __LINE__)
#define assert_lacks(text, part)                                                                   \
    codec_fixture_check_contains((text), (part), false, __FILE__, __LINE__)
void codec_fixture_check_contains(const char *text, const char *part, bool want, const char *file,
                                  int line);

/* *f = the facts of h1: every field set, no machine identity. */
void codec_fixture_fill_facts(sm_facts *f);

#endif
