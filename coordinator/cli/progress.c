/* The progress of a run on stderr while the CLI waits for it. */
#include "coordinator/cli/progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define BAR_WIDTH 20

void sm_progress_show(sm_progress *p, const sm_apiview_run *run)
{
    if (p->shown && run->done == p->done && run->failed == p->failed && run->total == p->total)
        return;
    p->shown = true;
    p->done = run->done;
    p->failed = run->failed;
    p->total = run->total;
    if (!p->tty) {
        fprintf(stderr, "run %" PRIu64 ": %" PRIu32 "/%" PRIu32 " jobs, %" PRIu32 " failed\n",
                run->id, run->done, run->total, run->failed);
        return;
    }
    uint64_t ended = (uint64_t)run->done + run->failed;
    size_t fill = run->total ? (size_t)(ended * BAR_WIDTH / run->total) : 0;
    if (fill > BAR_WIDTH)
        fill = BAR_WIDTH;
    char bar[BAR_WIDTH + 1];
    memset(bar, '#', fill);
    memset(bar + fill, '.', BAR_WIDTH - fill);
    bar[BAR_WIDTH] = '\0';
    int w = fprintf(stderr, "\r[%s] %" PRIu32 "/%" PRIu32 " jobs, %" PRIu32 " failed", bar,
                    run->done, run->total, run->failed);
    if (w < p->width)
        fprintf(stderr, "%*s", p->width - w, "");
    p->width = w;
    fflush(stderr);
}

void sm_progress_end(sm_progress *p)
{
    if (p->tty && p->shown)
        fputc('\n', stderr);
    p->shown = false;
}
