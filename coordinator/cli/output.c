/* What the CLI's commands print: error lines, answer bodies, files written whole. */
#include "coordinator/cli/output.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coordinator/cli/http.h"

void sm_cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sockmatrix: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int sm_cli_print_body(const char *body, size_t len)
{
    if (fwrite(body, 1, len, stdout) != len ||
        (len && body[len - 1] != '\n' && putchar('\n') == EOF) || fflush(stdout) != 0) {
        sm_cli_fail("cannot write to stdout: %s", strerror(errno));
        return 1;
    }
    return 0;
}

int sm_cli_print_answer(sm_http_resp *r)
{
    const int rc = sm_cli_print_body(r->body, r->len);
    sm_http_resp_fini(r);
    return rc;
}

/* Writes all of data to fd, then makes it durable. */
static int write_all(int fd, const char *tmp, const char *data, size_t len, sm_error *err)
{
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return sm_error_sys(err, errno, "cannot write %s", tmp);
        off += (size_t)w;
    }
    if (fsync(fd) != 0)
        return sm_error_sys(err, errno, "cannot write %s", tmp);
    return 0;
}

int sm_cli_write_atomic(const char *path, const char *data, size_t len, sm_error *err)
{
    size_t plen = strlen(path) + 8;
    char *tmp = malloc(plen);
    if (!tmp)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    snprintf(tmp, plen, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return sm_error_sys(err, e, "cannot create a temporary file next to %s", path);
    }
    /* mkstemp makes the file 0600; an export is an ordinary file, so follow the umask. */
    mode_t mask = umask(0);
    umask(mask);
    int rc = 0;
    if (fchmod(fd, 0666 & ~mask) != 0)
        rc = sm_error_sys(err, errno, "cannot set the mode of %s", tmp);
    if (!rc)
        rc = write_all(fd, tmp, data, len, err);
    if (close(fd) != 0 && !rc)
        rc = sm_error_sys(err, errno, "cannot write %s", tmp);
    if (!rc && rename(tmp, path) != 0)
        rc = sm_error_sys(err, errno, "cannot rename %s to %s", tmp, path);
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

void sm_cli_print_parallel(FILE *f, const char *prefix, const sm_apiview_run *run)
{
    if (!run->parallel)
        fprintf(f, "%sjobs: one at a time: %s\n", prefix ? prefix : "",
                run->parallel_note[0] ? run->parallel_note : "the run says so");
    else if (run->parallel_note[0])
        fprintf(f, "%swarning: %s\n", prefix ? prefix : "", run->parallel_note);
}

void sm_cli_job_reason(const sm_apiview_job *j, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (j->state && strcmp(j->state, "failed") == 0) {
        snprintf(buf, cap, "%s", j->reason ? j->reason : "");
        return;
    }
    if (j->disturbed)
        snprintf(buf, cap, "disturbed%s%s", *j->disturbed ? ": " : "", j->disturbed);
}

void sm_cli_num4(double v, char *buf, size_t cap)
{
    const double a = v < 0 ? -v : v;
    if (!isfinite(v))
        snprintf(buf, cap, "-");
    else if (a != 0 && (a < 1e-3 || a >= 1e9))
        snprintf(buf, cap, "%.3e", v);
    else {
        /* %.4g rounds to 4 digits but may say 2e+04; %.15g of that value says 20000. */
        char tmp[48];
        snprintf(tmp, sizeof tmp, "%.4g", v);
        snprintf(buf, cap, "%.15g", strtod(tmp, NULL));
    }
}

void sm_cli_csv_num(double v, const char *sep)
{
    if (isfinite(v))
        printf("%.17g", v);
    fputs(sep, stdout);
}
