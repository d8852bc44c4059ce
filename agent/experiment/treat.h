/* A job's treatment on this agent (proto/treatment.h): its socket parts set on the job's own
 * sockets, its host parts (a net.* sysctl, lo's root qdisc, an offload of lo) made only when
 * --allow-experiment allows them, journalled in the spool folder before they are made, undone and
 * read back after the job, and undone at the next start when a kill left the journal behind. */
#ifndef SM_AGENT_EXPERIMENT_TREAT_H
#define SM_AGENT_EXPERIMENT_TREAT_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/err.h"
#include "proto/fingerprint.h"
#include "proto/params.h"

#define SM_ALLOW_SYSCTL  1u
#define SM_ALLOW_QDISC   2u
#define SM_ALLOW_OFFLOAD 4u

/* --allow-experiment LIST: "none", or a comma list of sysctl, qdisc and offload. 0 or
 * SM_EINVAL. */
int sm_treat_allow_parse(const char *list, unsigned *allow, sm_error *err);
/* "none", or the allowed words in name order joined by ',' ("offload,qdisc,sysctl"): the
 * fingerprint's info.allow_experiment. */
const char *sm_treat_allow_text(unsigned allow);

typedef struct sm_treat_ctx {
    const char *dir; /* where .treatment.journal lives (the spool folder) */
    unsigned allow;  /* SM_ALLOW_* */
    bool active;     /* host parts are in place (between begin and end) */
    /* The host's fingerprint before the first host part was made (owned; NULL when none):
     * sm_treat_end compares it with the host once undone. */
    sm_fingerprint *before;
} sm_treat_ctx;

/* Before a job of params *p: sets its socket parts on *p, then makes its host parts, each
 * journalled (write, fsync, rename, fsync of the folder) before it is made and read back after.
 * A part not allowed, of another interface than lo, or that does not read back as asked, fails
 * the job: SM_EINVAL with err's reason ("treatment: qdisc lo noqueue needs sockmatrix-agent
 * --allow-experiment qdisc"), whatever was made undone. 0 otherwise (c->active when a host part
 * was made). */
int sm_treat_begin(sm_treat_ctx *c, sm_params *p, sm_error *err);

/* After the job, whatever its end: undoes the host parts in reverse order, reads each back
 * against its old value, and removes the journal when all read back. SM_ESYS with err naming
 * the part when one did not: the journal stays, and the next begin or start tries again. Then
 * collects the host's fingerprint again: SM_ESYS when it differs from the one begin collected
 * before its first change (info.* aside), naming the first item that does, logged
 * SM-TREAT-FP-CHANGED. */
int sm_treat_end(sm_treat_ctx *c, sm_error *err);

/* At start: a journal left by a kill or a crash is undone (as sm_treat_end), logged
 * SM-TREAT-RESTORED. 0 when there was none or it was undone. */
int sm_treat_recover(sm_treat_ctx *c, sm_error *err);

#endif
