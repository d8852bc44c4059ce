/* Unit tests of the log (proto/log.c): whatever a message holds, it is written as one line, its
 * control bytes and backslashes escaped so that a name cannot forge another line. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/log.h"

static void expect_escaped(const char *in, const char *want)
{
    char out[256];
    assert_int_equal(sm_log_escape(out, sizeof out, in), strlen(want));
    assert_string_equal(out, want);
}

static void test_log_escape_writes_control_bytes_as_text(void **state)
{
    (void)state;
    expect_escaped("plain name: h1 (ok)", "plain name: h1 (ok)");
    expect_escaped("x\n2026-12-02T00:03:40.000Z error SM-KEY-FLEET forged",
                   "x\\n2026-12-02T00:03:40.000Z error SM-KEY-FLEET forged");
    expect_escaped("a\rb\tc", "a\\rb\\tc");
    expect_escaped("\x1b[31mred\x7f\x01", "\\x1b[31mred\\x7f\\x01");
    /* a backslash is doubled, so "\\n" in a name cannot pass for an escaped newline */
    expect_escaped("a\\nb", "a\\\\nb");
    /* UTF-8 passes as it is */
    expect_escaped("h\xc3\xb4"
                   "te",
                   "h\xc3\xb4"
                   "te");
}

static void test_log_escape_never_cuts_an_escape_in_half(void **state)
{
    (void)state;
    char out[6];
    /* "ab" then \x1b takes 4: only "ab" fits with the NUL */
    assert_int_equal(sm_log_escape(out, sizeof out, "ab\x1b"), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(sm_log_escape(out, sizeof out, "abc\n"), 5);
    assert_string_equal(out, "abc\\n");
    assert_int_equal(sm_log_escape(out, 1, "abc"), 0);
    assert_string_equal(out, "");
}

/* What sm_log_write puts on stderr for msg. */
static void logged(const char *msg, char *out, size_t len)
{
    char path[] = "/tmp/sm-test-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    sm_log_write(LOG_NOTICE, "SM-TEST", "schedule 1 (%s): made", msg);
    fflush(stderr);
    assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
    close(saved);
    ssize_t n = pread(fd, out, len - 1, 0);
    close(fd);
    assert_true(n > 0);
    out[n] = '\0';
}

static void test_log_a_forged_line_in_a_value_stays_one_line(void **state)
{
    (void)state;
    char out[2048];
    logged("x\n2026-12-02T00:03:40.000Z error SM-KEY-FLEET forged\r\x1b[2K", out, sizeof out);
    /* one newline: the line's own, at the end */
    assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
    assert_null(strchr(out, '\r'));
    assert_null(strchr(out, '\x1b'));
    assert_non_null(strstr(out, " notice SM-TEST schedule 1 (x\\n2026-12-02T00:03:40.000Z error "
                                "SM-KEY-FLEET forged\\r\\x1b[2K): made\n"));
}

static void test_log_a_long_message_of_control_bytes_stays_bounded(void **state)
{
    (void)state;
    char big[1500], out[4096];
    memset(big, '\n', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    logged(big, out, sizeof out);
    assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
    assert_true(strlen(out) <= 2048);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_escape_writes_control_bytes_as_text),
        cmocka_unit_test(test_log_escape_never_cuts_an_escape_in_half),
        cmocka_unit_test(test_log_a_forged_line_in_a_value_stays_one_line),
        cmocka_unit_test(test_log_a_long_message_of_control_bytes_stays_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
