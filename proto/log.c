/* Logging to stderr with syslog levels; journald adds its own timestamps under systemd. */
#include "proto/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int sm_log_level = LOG_NOTICE;

static const char *const level_names[] = {"emerg",   "alert",  "crit", "error",
                                          "warning", "notice", "info", "debug"};

int sm_log_parse_level(const char *name)
{
    for (int i = LOG_ERR; i <= LOG_DEBUG; i++)
        if (strcmp(name, level_names[i]) == 0)
            return i;
    return -1;
}

void sm_log_write(int level, const char *id, const char *fmt, ...)
{
    char line[1024];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - (size_t)n, ".%03ldZ %s %s ", ts.tv_nsec / 1000000,
                  level_names[level & 7], id);
    va_list ap;
    va_start(ap, fmt);
    if (n < (int)sizeof line)
        vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    /* One write per line so that concurrent threads do not interleave within a line. */
    fprintf(stderr, "%s\n", line);
}
