/* Logging: one entry point, syslog levels, a stable message id per message, to stderr. */
#ifndef SM_PROTO_LOG_H
#define SM_PROTO_LOG_H

#include <syslog.h>

/* The only mutable global of the project: the configured level (LOG_ERR .. LOG_DEBUG). */
extern int sm_log_level;

/* Parses "error", "warning", "notice", "info", "debug"; returns the level or -1. */
int sm_log_parse_level(const char *name);

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
