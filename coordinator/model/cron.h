/* When a recurring run fires: 5-field cron expressions (minute hour day-of-month month
 * day-of-week, UTC) and plain intervals ("every"). Pure functions, no clock of their own. */
#ifndef SM_COORD_CRON_H
#define SM_COORD_CRON_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/err.h"

#define SM_CRON_MAX    128             /* bytes of an expression, with its NUL */
#define SM_EVERY_MIN_S 10              /* the shortest interval */
#define SM_EVERY_MAX_S (366u * 86400u) /* the longest: a year */

/* A parsed expression: one bit per value each field allows. */
typedef struct sm_cron {
    uint64_t minute; /* bits 0..59 */
    uint32_t hour;   /* bits 0..23 */
    uint32_t dom;    /* bits 1..31 */
    uint16_t month;  /* bits 1..12 */
    uint8_t dow;     /* bits 0..6, Sunday 0 (7 is read as 0) */
    /* The day fields as Vixie cron reads them: when both are restricted (neither starts with
     * '*'), a day matches either; otherwise it must match both. */
    bool dom_star, dow_star;
} sm_cron;

/* Parses "M H DOM MON DOW": each field '*', a number, a range "a-b", a step "*" or a range
 * followed by "/N", or a comma-separated list of those; months and days by number only.
 * SM_EINVAL with err->field "cron" and a message naming the field at fault ("cron: the hour
 * field: 24 is out of 0-23"). */
int sm_cron_parse(const char *expr, sm_cron *out, sm_error *err);

/* The first minute the expression allows strictly after after_ms (UTC, ms since the epoch), in
 * ms; -1 when none comes within the next 8 years (e.g. "0 0 30 2 *"). */
int64_t sm_cron_next(const sm_cron *c, int64_t after_ms);

/* An interval: whole seconds as a number or text ("90"), or a number with a unit s, m, h or d
 * ("30s", "15m", "6h", "1d"). At least SM_EVERY_MIN_S and at most SM_EVERY_MAX_S seconds.
 * SM_EINVAL with err->field "every" saying what is wrong. */
int sm_every_parse(const char *text, uint32_t *seconds, sm_error *err);

#endif
