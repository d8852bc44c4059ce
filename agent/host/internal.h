/* What the fingerprint collector's files share: the item writer and the bound (items.c), and the
 * collectors the other files add. */
#ifndef SM_AGENT_HOST_INTERNAL_H
#define SM_AGENT_HOST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/host/fingerprint.h"

/* Reads up to len - 1 bytes of path into buf (NUL-terminated, a trailing newline dropped).
 * Returns 0 or the errno of the failing open or read. */
int sm_fpc_read(const char *path, char *buf, size_t len);

/* Sets key to value; a name the codec refuses (an interface name with characters no item
 * name has) is left out rather than failing the whole document. 0 or SM_ENOMEM. */
int sm_fpc_put(sm_fingerprint *fp, const char *key, const char *value, sm_error *err);
int sm_fpc_putf(sm_fingerprint *fp, const char *key, sm_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Sets key as unreadable for errnum. 0 or SM_ENOMEM. */
int sm_fpc_unreadable(sm_fingerprint *fp, const char *key, int errnum, sm_error *err);
/* Sets key to the content of path, or unreadable with the errno reading it failed with. */
int sm_fpc_file(sm_fingerprint *fp, const char *key, const char *path, sm_error *err);

/* The longest value of a kernel.cmdline.<param> item sent. */
#define SM_FP_CMDLINE_VALUE_MAX 128

/* Whether the kernel parameter name[0..n) is one of the allow-listed ones that matter for
 * performance (cmdline.c). */
bool sm_fpc_cmdline_allowed(const char *name, size_t n);
/* From a kernel command line (as /proc/cmdline holds it): kernel.cmdline.<param> for each
 * allow-listed parameter ("" for a flag; a value of other characters than a setting has, or
 * longer than SM_FP_CMDLINE_VALUE_MAX, is replaced by a note), and
 * info.kernel.cmdline_left_out, the count of the other words, init's after "--" included.
 * Nothing else of the line is kept. 0 or SM_ENOMEM. */
int sm_fpc_cmdline(sm_fingerprint *fp, const char *cmdline, sm_error *err);

/* The sysctl, CPU, memory and cgroup items (system.c). */
int sm_fpc_sys(sm_fingerprint *fp, sm_error *err);
/* The interfaces of the calling thread's network namespace and info.data_if
 * (network.c); bounded by sm_fp_add_ifaces. */
int sm_fpc_net(sm_fingerprint *fp, const char *data_addr, sm_error *err);

#endif
