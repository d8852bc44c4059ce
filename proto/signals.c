/* The stop signals of the daemons and tools, set up the one way all three mains want. */
#include "proto/signals.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* What the handler reaches: a handler takes no argument, so these are the one place a signal
 * can find its process's flag (the house rule against mutable globals yields to that). */
static volatile sig_atomic_t *stop_flag;
static const int *wake_fd_of;

static void on_stop(int sig)
{
    (void)sig;
    /* The interrupted code may be about to read errno; the write below can change it. */
    int saved = errno;
    *stop_flag = 1;
    if (wake_fd_of && *wake_fd_of >= 0) {
        const unsigned long long one = 1;
        ssize_t n = write(*wake_fd_of, &one, sizeof one);
        (void)n; /* a full eventfd is already awake */
    }
    errno = saved;
}

int sm_signals_install(volatile sig_atomic_t *stop, const int *wake_fd, sm_error *err)
{
    if (!stop)
        return sm_error_set(err, SM_EINVAL, "signals: no stop flag");
    stop_flag = stop;
    wake_fd_of = wake_fd;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
        return sm_error_sys(err, errno, "signals: sigaction");
    sa.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &sa, NULL) != 0)
        return sm_error_sys(err, errno, "signals: ignoring SIGPIPE");
    return 0;
}
