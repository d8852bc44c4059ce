/* What the export's unit tests share: the params of its cells. */
#ifndef SM_TESTS_UNIT_EXPORT_FIXTURE_H
#define SM_TESTS_UNIT_EXPORT_FIXTURE_H

#include <stdbool.h>

#include "proto/params.h"

/* The params of a stream of 8192 lines of 128 B over transport tr (with nodelay or not), which
 * validate. */
sm_params export_fixture_lines_params(sm_transport_kind tr, bool nodelay);

#endif
