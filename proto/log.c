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

size_t sm_log_escape(char *out, size_t outlen, const char *in)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *)in; *c; c++) {
        char esc[4];
        size_t n = 2;
        esc[0] = '\\';
        if (*c == '\\' || *c == '\n' || *c == '\r' || *c == '\t')
            esc[1] = *c == '\\' ? '\\' : *c == '\n' ? 'n' : *c == '\r' ? 'r' : 't';
        else if (*c < 0x20 || *c == 0x7f) {
            esc[1] = 'x';
            esc[2] = hex[*c >> 4];
            esc[3] = hex[*c & 15];
            n = 4;
        } else {
            esc[0] = (char)*c;
            n = 1;
        }
        if (o + n >= outlen)
            break;
        memcpy(out + o, esc, n);
        o += n;
    }
    out[o] = '\0';
    return o;
}

void sm_log_write(int level, const char *id, const char *fmt, ...)
{
    char msg[1024], line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - (size_t)n, ".%03ldZ %s %s ", ts.tv_nsec / 1000000,
                  level_names[level & 7], id);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* The whole message, not chosen fields: any %s may hold a name or a reason from outside. */
    if (n < (int)sizeof line)
        sm_log_escape(line + n, sizeof line - (size_t)n, msg);
    /* One write per line so that concurrent threads do not interleave within a line. */
    fprintf(stderr, "%s\n", line);
}
