/* What the export's unit tests share: see export_fixture.h. */
#include "tests/unit/coordinator/analysis/export_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

sm_params export_fixture_lines_params(sm_transport_kind tr, bool nodelay)
{
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    p.framing = SM_FRAMING_LINES;
    p.msg_size = 128;
    p.count = 8192;
    p.transport = tr;
    p.nodelay = nodelay;
    sm_error err;
    assert_int_equal(sm_params_validate(&p, &err), 0);
    return p;
}
