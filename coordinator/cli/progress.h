/* The progress of a run on stderr while the CLI waits for it: a bar redrawn in place on a
 * terminal, a line per change otherwise. */
#ifndef SM_CLI_PROGRESS_H
#define SM_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "coordinator/cli/apiview.h"

/* Embedded: zero it and set tty (whether stderr is a terminal). */
typedef struct sm_progress {
    bool tty;
    bool shown;
    int width; /* of the last bar drawn, to blank what a shorter one leaves */
    uint32_t done, failed, total;
} sm_progress;

/* Shows run's counts, unless they are those shown last. */
void sm_progress_show(sm_progress *p, const sm_apiview_run *run);

/* Ends the bar's line so that what follows starts on its own. */
void sm_progress_end(sm_progress *p);

#endif
