/* The stop signals of the daemons and tools: SIGINT and SIGTERM ask for a stop, SIGPIPE is
 * ignored. For main.c files only: a signal handler is process-wide. */
#ifndef SM_PROTO_SIGNALS_H
#define SM_PROTO_SIGNALS_H

#include <signal.h>

#include "proto/err.h"

/* From now on SIGINT and SIGTERM set *stop to 1 and, when wake_fd is not NULL and *wake_fd is
 * a descriptor (>= 0) at that moment, write the 8-byte 1 of an eventfd to it, so that a loop
 * blocked in poll wakes up. The handler is installed without SA_RESTART: a blocking call
 * returns EINTR and its loop looks at *stop. SIGPIPE is ignored: a peer gone shows as EPIPE
 * where the write is, not as the end of the process.
 * stop and wake_fd (may be NULL) must outlive every signal, so statics of main.c; *wake_fd may
 * be set later (the agent's daemon sets it when its eventfd exists). A second call replaces
 * the first's pointers. Returns 0, SM_EINVAL (stop NULL, nothing changed) or SM_ESYS when
 * sigaction fails. */
int sm_signals_install(volatile sig_atomic_t *stop, const int *wake_fd, sm_error *err);

#endif
