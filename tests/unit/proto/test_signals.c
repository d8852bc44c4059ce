/* proto/signals: SIGINT and SIGTERM set the stop flag and wake the eventfd, SIGPIPE is ignored. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto/err.h"
#include "proto/signals.h"

/* Statics, as the mains keep them: the handler may run after any test's frame is gone. */
static volatile sig_atomic_t stop;
static int wake = -1;

static int reset(void **state)
{
    (void)state;
    stop = 0;
    wake = -1;
    return 0;
}

static void test_signals_without_a_stop_flag_are_einval_and_install_nothing(void **state)
{
    (void)state;
    struct sigaction before, after;
    assert_int_equal(sigaction(SIGTERM, NULL, &before), 0);
    sm_error err = {0};
    assert_int_equal(sm_signals_install(NULL, &wake, &err), SM_EINVAL);
    assert_string_equal(err.msg, "signals: no stop flag");
    assert_int_equal(sigaction(SIGTERM, NULL, &after), 0);
    assert_ptr_equal(after.sa_handler, before.sa_handler);
}

static void test_signals_sigterm_and_sigint_each_set_the_stop_flag(void **state)
{
    (void)state;
    sm_error err = {0};
    assert_int_equal(sm_signals_install(&stop, NULL, &err), 0);
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(stop, 1);
    stop = 0;
    assert_int_equal(raise(SIGINT), 0);
    assert_int_equal(stop, 1);
}

/* The agent's daemon makes its eventfd after the handler is in place: the handler reads the
 * descriptor when the signal comes, not when it was installed. */
static void test_signals_wake_the_eventfd_set_after_install_once_per_signal(void **state)
{
    (void)state;
    int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    assert_true(efd >= 0);
    sm_error err = {0};
    assert_int_equal(sm_signals_install(&stop, &wake, &err), 0);
    assert_int_equal(raise(SIGTERM), 0); /* no descriptor yet: only the flag */
    assert_int_equal(stop, 1);
    uint64_t v = 0;
    assert_int_equal(read(efd, &v, sizeof v), -1);
    assert_int_equal(errno, EAGAIN);

    wake = efd;
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(raise(SIGINT), 0);
    assert_int_equal(read(efd, &v, sizeof v), (ssize_t)sizeof v);
    assert_int_equal(v, 2);
    close(efd);
}

/* A failed wake-up write inside the handler must not leak into the errno of the code the
 * signal interrupted. */
static void test_signals_handler_keeps_the_interrupted_errno(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    close(fds[1]);
    wake = fds[0]; /* a read end: the handler's write fails with EBADF */
    sm_error err = {0};
    assert_int_equal(sm_signals_install(&stop, &wake, &err), 0);
    errno = EDOM;
    raise(SIGTERM);
    assert_int_equal(errno, EDOM);
    assert_int_equal(stop, 1);
    close(fds[0]);
}

static void test_signals_ignore_sigpipe_and_do_not_restart_calls(void **state)
{
    (void)state;
    sm_error err = {0};
    assert_int_equal(sm_signals_install(&stop, NULL, &err), 0);
    struct sigaction sa;
    assert_int_equal(sigaction(SIGPIPE, NULL, &sa), 0);
    assert_ptr_equal(sa.sa_handler, SIG_IGN);
    assert_int_equal(raise(SIGPIPE), 0); /* still here */
    assert_int_equal(stop, 0);
    assert_int_equal(sigaction(SIGTERM, NULL, &sa), 0);
    assert_int_equal(sa.sa_flags & SA_RESTART, 0);
    assert_int_equal(sigaction(SIGINT, NULL, &sa), 0);
    assert_int_equal(sa.sa_flags & SA_RESTART, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup(fn, reset)
    const struct CMUnitTest tests[] = {
        T(test_signals_without_a_stop_flag_are_einval_and_install_nothing),
        T(test_signals_sigterm_and_sigint_each_set_the_stop_flag),
        T(test_signals_wake_the_eventfd_set_after_install_once_per_signal),
        T(test_signals_handler_keeps_the_interrupted_errno),
        T(test_signals_ignore_sigpipe_and_do_not_restart_calls),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
