/* Error codes and the human-readable reason that travels with them. */
#ifndef SM_PROTO_ERR_H
#define SM_PROTO_ERR_H

#include <stddef.h>

/* Every function that can fail returns 0 or one of these (negative). */
enum {
    SM_OK = 0,
    SM_EINVAL = -1,    /* a parameter or option is out of its bounds */
    SM_ENOMEM = -2,    /* allocation failed */
    SM_ESYS = -3,      /* a system call failed; the reason names it and errno */
    SM_ETIMEDOUT = -4, /* the job's time limit passed */
    SM_ECLOSED = -5,   /* the peer closed the connection early */
    SM_EVERIFY = -6,   /* received bytes differ from the bytes that were promised */
    SM_ECANCELED = -7, /* the other side of the job failed first */
    SM_EPARSE = -8,    /* malformed input (JSON, option value) */
    SM_EPROTO = -9,    /* the peer broke the workload's protocol */
};

#define SM_ERR_MSG_MAX   256
#define SM_ERR_FIELD_MAX 96

/* A code with the reason in words; embedded by value, no ownership. field is the path of the
 * input field at fault ("tests[1].msg_size[2]", "jobs[3].params") when the function says it
 * names one, "" otherwise; sm_error_set and sm_error_sys leave it as it is. */
typedef struct sm_error {
    int code;
    char msg[SM_ERR_MSG_MAX];
    char field[SM_ERR_FIELD_MAX];
} sm_error;

/* Short name of a code: "invalid", "timeout", ... Never NULL. */
const char *sm_strerror(int code);

/* Sets *err (when err is not NULL) to code and the formatted reason; returns code, so that
 * `return sm_error_set(err, SM_EINVAL, "count: ...");` reads as one statement. */
int sm_error_set(sm_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As sm_error_set, appending ": strerror(errnum)" to the reason. Returns SM_ESYS. */
int sm_error_sys(sm_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets err->field (when err is not NULL) to the formatted path, cut to SM_ERR_FIELD_MAX - 1
 * bytes; the code and reason stay as they are. */
void sm_error_field(sm_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears *err to SM_OK with an empty reason and field. */
void sm_error_clear(sm_error *err);

#endif
