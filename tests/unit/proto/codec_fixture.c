/* What proto/codec's unit tests share: see codec_fixture.h. */
#include "tests/unit/proto/codec_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

void codec_fixture_check_contains(const char *text, const char *part, bool want, const char *file,
                                  int line)
{
    if ((strstr(text, part) != NULL) != want) {
        print_error("%s\n%s \"%s\"\n", text, want ? "lacks" : "contains", part);
        _fail(file, line);
    }
}

void codec_fixture_fill_facts(sm_facts *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->hostname, sizeof f->hostname, "h1");
    snprintf(f->kernel, sizeof f->kernel, "6.1.0");
    snprintf(f->cpu_model, sizeof f->cpu_model, "unknown");
    f->cores = 8;
    f->mem_bytes = 8ull << 30;
    snprintf(f->congestion, sizeof f->congestion, "cubic");
    f->lo_mtu = 65536;
    f->loadavg[0] = 0.5;
    f->loadavg[1] = 1;
    f->loadavg[2] = 1.25;
    f->tcp_autocorking = 1;
}
