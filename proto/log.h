/* Logging: one entry point, syslog levels, a stable message id per message, to stderr. */
#ifndef SM_PROTO_LOG_H
#define SM_PROTO_LOG_H

#include <stddef.h>
#include <syslog.h>

/* The only mutable global of the project: the configured level (LOG_ERR .. LOG_DEBUG). */
extern int sm_log_level;

/* Parses "error", "warning", "notice", "info", "debug"; returns the level or -1. */
int sm_log_parse_level(const char *name);

/* Copies in to out (outlen > 0 bytes, always NUL-terminated) so that it stays on one line and
 * shows what it holds: a backslash as "\\\\", newline, carriage return and tab as "\\n", "\\r",
 * "\\t", every other control byte and DEL as "\\xHH"; other bytes (UTF-8 included) as they
 * are. An escape is never cut in half. Returns the length written. */
size_t sm_log_escape(char *out, size_t outlen, const char *in);

/* Writes one line to stderr: the time, the level, id, and the formatted message escaped by
 * sm_log_escape (names and reasons from users and agents cannot forge a line). */
void sm_log_write(int level, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Checks the level before any argument is formatted. `id` is a stable, greppable
 * identifier such as "SM-BIND-FAIL". */
#define sm_log(level, id, ...)                                                                     \
    do {                                                                                           \
        if ((level) <= sm_log_level)                                                               \
            sm_log_write((level), (id), __VA_ARGS__);                                              \
    } while (0)

#endif
