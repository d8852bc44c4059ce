/* Error codes and reasons. */
#include "proto/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *sm_strerror(int code)
{
    switch (code) {
    case SM_OK:
        return "ok";
    case SM_EINVAL:
        return "invalid";
    case SM_ENOMEM:
        return "out of memory";
    case SM_ESYS:
        return "system error";
    case SM_ETIMEDOUT:
        return "timeout";
    case SM_ECLOSED:
        return "peer closed";
    case SM_EVERIFY:
        return "verification failed";
    case SM_ECANCELED:
        return "cancelled";
    case SM_EPARSE:
        return "parse error";
    case SM_EPROTO:
        return "protocol error";
    default:
        return "unknown error";
    }
}

__attribute__((format(printf, 3, 0))) static void vset(sm_error *err, int code, const char *fmt,
                                                       va_list ap)
{
    err->code = code;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
}

int sm_error_set(sm_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vset(err, code, fmt, ap);
        va_end(ap);
    }
    return code;
}

int sm_error_sys(sm_error *err, int errnum, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vset(err, SM_ESYS, fmt, ap);
        va_end(ap);
        size_t len = strlen(err->msg);
        snprintf(err->msg + len, sizeof err->msg - len, ": %s", strerror(errnum));
    }
    return SM_ESYS;
}

void sm_error_field(sm_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->field, sizeof err->field, fmt, ap);
        va_end(ap);
    }
}

void sm_error_clear(sm_error *err)
{
    if (err) {
        err->code = SM_OK;
        err->msg[0] = '\0';
        err->field[0] = '\0';
    }
}
