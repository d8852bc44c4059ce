/* Cron expressions and intervals for recurring runs (cron.h). */
#include "coordinator/model/cron.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
    const char *name;
    int lo, hi;
} fields[5] = {{"minute", 0, 59},
               {"hour", 0, 23},
               {"day-of-month", 1, 31},
               {"month", 1, 12},
               {"day-of-week", 0, 7}};

/* A number at *p, advanced past it; -1 when there is none (or it is absurdly long). */
static int number(const char **p)
{
    if (!isdigit((unsigned char)**p))
        return -1;
    int v = 0;
    while (isdigit((unsigned char)**p)) {
        if (v > 1000)
            return -1;
        v = v * 10 + (**p - '0');
        (*p)++;
    }
    return v;
}

static int field_error(sm_error *err, int f, const char *text, size_t len, const char *what)
{
    return sm_error_set(err, SM_EINVAL, "cron: the %s field \"%.*s\": %s", fields[f].name,
                        (int)(len > 32 ? 32 : len), text, what);
}

/* One field's text [text, text + len) into the bits of *bits. */
static int parse_field(int f, const char *text, size_t len, uint64_t *bits, sm_error *err)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return field_error(err, f, text, len, "empty or too long");
    memcpy(buf, text, len);
    buf[len] = '\0';
    const int lo = fields[f].lo, hi = fields[f].hi;
    char range_msg[48];
    snprintf(range_msg, sizeof range_msg, "values are %d-%d", lo, hi);
    *bits = 0;
    for (char *item = buf, *next; item; item = next) {
        next = strchr(item, ',');
        if (next)
            *next++ = '\0';
        const char *p = item;
        int a, b, step = 1;
        if (*p == '*') {
            a = lo;
            b = hi;
            p++;
        } else {
            if ((a = number(&p)) < 0)
                return field_error(err, f, text, len, "expected a number, a range or *");
            b = a;
            if (*p == '-') {
                p++;
                if ((b = number(&p)) < 0)
                    return field_error(err, f, text, len, "a range needs a number after '-'");
            }
        }
        if (*p == '/') {
            p++;
            if ((step = number(&p)) <= 0)
                return field_error(err, f, text, len, "a step needs a number of at least 1");
            if (item[0] != '*' && !strchr(item, '-'))
                b = hi; /* "5/15" reads as "5-max/15", as Vixie cron does */
        }
        if (*p != '\0')
            return field_error(err, f, text, len, "expected a number, a range, * or a step");
        if (a < lo || a > hi || b < lo || b > hi)
            return field_error(err, f, text, len, range_msg);
        if (a > b)
            return field_error(err, f, text, len, "a range must go upwards (a-b with a <= b)");
        for (int v = a; v <= b; v += step)
            *bits |= 1ull << v;
    }
    return 0;
}

int sm_cron_parse(const char *expr, sm_cron *out, sm_error *err)
{
    sm_error_field(err, "cron");
    if (!expr || !*expr)
        return sm_error_set(err, SM_EINVAL,
                            "cron: empty; give 5 fields: minute hour day-of-month month "
                            "day-of-week, e.g. \"0 3 * * *\"");
    if (strlen(expr) >= SM_CRON_MAX)
        return sm_error_set(err, SM_EINVAL, "cron: longer than %d bytes", SM_CRON_MAX - 1);
    const char *start[6];
    size_t len[6];
    int n = 0;
    for (const char *p = expr; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const size_t l = strcspn(p, " \t");
        if (n < 6) {
            start[n] = p;
            len[n] = l;
        }
        n++;
        p += l;
    }
    if (n != 5)
        return sm_error_set(err, SM_EINVAL,
                            "cron: %d fields; give 5: minute hour day-of-month month day-of-week "
                            "(UTC), e.g. \"0 3 * * *\"",
                            n);
    uint64_t bits[5];
    for (int f = 0; f < 5; f++) {
        int rc = parse_field(f, start[f], len[f], &bits[f], err);
        if (rc)
            return rc;
    }
    sm_cron c = {.minute = bits[0],
                 .hour = (uint32_t)bits[1],
                 .dom = (uint32_t)bits[2],
                 .month = (uint16_t)bits[3],
                 .dow = (uint8_t)((bits[4] | (bits[4] >> 7)) & 0x7f),
                 .dom_star = start[2][0] == '*',
                 .dow_star = start[4][0] == '*'};
    *out = c;
    return 0;
}

static bool day_ok(const sm_cron *c, const struct tm *tm)
{
    const bool dom = c->dom >> tm->tm_mday & 1, dow = c->dow >> tm->tm_wday & 1;
    if (c->dom_star || c->dow_star)
        return dom && dow;
    return dom || dow;
}

int64_t sm_cron_next(const sm_cron *c, int64_t after_ms)
{
    /* Minute resolution: the first whole minute after after_ms. */
    time_t t = (time_t)(after_ms >= 0 ? after_ms / 60000 : (after_ms - 59999) / 60000) * 60 + 60;
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        return -1;
    const int last_year = tm.tm_year + 8;
    while (tm.tm_year <= last_year) {
        if (!(c->month >> (tm.tm_mon + 1) & 1)) {
            tm.tm_mon++;
            tm.tm_mday = 1;
            tm.tm_hour = tm.tm_min = 0;
        } else if (!day_ok(c, &tm)) {
            tm.tm_mday++;
            tm.tm_hour = tm.tm_min = 0;
        } else if (!(c->hour >> tm.tm_hour & 1)) {
            tm.tm_hour++;
            tm.tm_min = 0;
        } else if (!(c->minute >> tm.tm_min & 1)) {
            tm.tm_min++;
        } else {
            return (int64_t)timegm(&tm) * 1000;
        }
        /* timegm carries the overflowed field into the next and sets tm_wday */
        tm.tm_sec = 0;
        t = timegm(&tm);
        if (t == (time_t)-1 || !gmtime_r(&t, &tm))
            return -1;
    }
    return -1;
}

int sm_every_parse(const char *text, uint32_t *seconds, sm_error *err)
{
    sm_error_field(err, "every");
    if (!text || !*text)
        return sm_error_set(err, SM_EINVAL,
                            "every: empty; give seconds or a number with s, m, h or d, e.g. "
                            "\"15m\"");
    const char *p = text;
    char *end;
    if (!isdigit((unsigned char)*p))
        return sm_error_set(err, SM_EINVAL,
                            "every: \"%.32s\" is not seconds nor a number with s, m, h or d "
                            "(e.g. \"30s\", \"15m\", \"6h\", \"1d\")",
                            text);
    unsigned long long v = strtoull(p, &end, 10);
    unsigned long long mult = 1;
    if (*end == 's')
        end++;
    else if (*end == 'm')
        mult = 60, end++;
    else if (*end == 'h')
        mult = 3600, end++;
    else if (*end == 'd')
        mult = 86400, end++;
    if (*end != '\0')
        return sm_error_set(err, SM_EINVAL,
                            "every: \"%.32s\" is not seconds nor a number with s, m, h or d "
                            "(e.g. \"30s\", \"15m\", \"6h\", \"1d\")",
                            text);
    if (v > SM_EVERY_MAX_S || v * mult > SM_EVERY_MAX_S)
        return sm_error_set(err, SM_EINVAL, "every: \"%.32s\" is longer than a year (366d)", text);
    if (v * mult < SM_EVERY_MIN_S)
        return sm_error_set(err, SM_EINVAL, "every: \"%.32s\" is under the minimum of %d s", text,
                            SM_EVERY_MIN_S);
    *seconds = (uint32_t)(v * mult);
    return 0;
}
