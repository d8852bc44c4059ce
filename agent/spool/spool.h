/* The agent's durable spool: every measured result is written here (write, fsync, rename,
 * fsync of the directory) before it is sent, resent until acked, and removed only on ack, so a
 * result survives agent crashes and restarts and reaches the coordinator exactly once (the
 * coordinator's store drops duplicates by job id + attempt).
 *
 * Thread-safe: the worker puts, the control thread lists, reads and removes. */
#ifndef SM_AGENT_SPOOL_SPOOL_H
#define SM_AGENT_SPOOL_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"

typedef struct sm_spool sm_spool;

/* Opens (creating with mode 0700 when missing) the spool directory, removes temporary files a
 * crash left behind, and indexes the complete entries. */
int sm_spool_open(sm_spool **sp, const char *dir, sm_error *err);
/* Proves the directory takes a durable write: creates PROBE_NAME (".probe", a name no entry or
 * temporary file has), writes and fsyncs a few bytes, removes it and fsyncs the directory. A
 * read-only, full or otherwise unwritable spool fails here (SM_ESYS, err naming the directory,
 * the step and errno) rather than at the first result, which would be measured and then lost.
 * A real write, not access(2): root passes permission checks that a read-only mount still fails. */
int sm_spool_probe(sm_spool *sp, sm_error *err);
#define SM_SPOOL_PROBE_NAME ".probe"
/* NULL is ignored. Entries stay on disk. */
void sm_spool_close(sm_spool *sp);

/* Stores data under (job, attempt) durably; returns only once it would survive a crash.
 * An entry already there for the same key is kept (returns 0): a result is spooled once. */
int sm_spool_put(sm_spool *sp, uint64_t job, uint32_t attempt, const char *data, size_t len,
                 sm_error *err);

/* For tests: performs sm_spool_put's steps 1..stop_after and returns as a crash there would
 * leave the directory (no cleanup). Steps: 1 create the temporary file, 2 write half the data,
 * 3 write the rest, 4 fsync it, 5 rename it into place, 6 fsync the directory. stop_after >= 6
 * is a whole put. */
int sm_spool_put_until(sm_spool *sp, uint64_t job, uint32_t attempt, const char *data, size_t len,
                       int stop_after, sm_error *err);

/* Up to max entries still to send, oldest first, into jobs[] and attempts[]; returns how many.
 * An entry whose removal after its ack failed is not listed. */
size_t sm_spool_list(sm_spool *sp, uint64_t *jobs, uint32_t *attempts, size_t max);
/* Reads one entry into a malloc'd buffer (NUL-terminated; *len excludes the NUL).
 * SM_EINVAL when there is no such entry; SM_EPARSE when its file is no entry any more (not a
 * regular file, over the 1 MiB limit, or failing to open or read for a reason other than a
 * shortage of descriptors or memory): sm_spool_quarantine is then its way out; SM_ESYS or
 * SM_ENOMEM for a shortage that may pass. */
int sm_spool_get(sm_spool *sp, uint64_t job, uint32_t attempt, char **data, size_t *len,
                 sm_error *err);
/* Removes an entry after its ack (unlink, fsync of the directory). An absent entry is 0.
 * When the unlink fails (SM_ESYS, err naming the file and errno) the entry stays on disk and
 * for sm_spool_get and put, but is no longer listed: the coordinator has it, and resending it
 * would only draw the same ack again. The next open lists it once more, to be acked again. */
int sm_spool_remove(sm_spool *sp, uint64_t job, uint32_t attempt, sm_error *err);
size_t sm_spool_count(sm_spool *sp);

/* Moves an entry out of the spool, never deleting it, into SM_SPOOL_ASIDE_DIR/tag/ (both made
 * 0700 when missing) under its own file name: a result measured for a job that the coordinator
 * will not take any more (its store was replaced), which stays the user's measurement. The
 * entry leaves the index (not listed, not found by get); the rename and both directories are
 * fsynced. tag is 1..64 of [A-Za-z0-9._-], not "." or "..". An absent entry is SM_EINVAL; a
 * failed move (SM_ESYS) leaves the entry where it was. */
#define SM_SPOOL_ASIDE_DIR "aside"
int sm_spool_set_aside(sm_spool *sp, uint64_t job, uint32_t attempt, const char *tag,
                       sm_error *err);

/* Moves an entry that can never be sent (its file unreadable, not a result, too large for a
 * poll: the caller's judgement, given as why) into SM_SPOOL_QUARANTINE_DIR/ (made 0700 when
 * missing) under its own file name (".1", ".2", ... appended when the name is taken), so that it
 * no longer holds back the entries behind it, and logs it once (SM-SPOOL-QUARANTINE, naming the
 * file and why). The entry leaves the index either way and is counted (sm_spool_quarantined).
 * When the move fails (a read-only spool; SM_ESYS, logged once as well) the file stays where it
 * is, skipped until the next open tries again. An absent entry is SM_EINVAL. Control thread. */
#define SM_SPOOL_QUARANTINE_DIR "quarantine"
int sm_spool_quarantine(sm_spool *sp, uint64_t job, uint32_t attempt, const char *why,
                        sm_error *err);
/* Entries out of service: the files in SM_SPOOL_QUARANTINE_DIR/ when the spool was opened,
 * plus every file quarantined (or skipped, when its move failed) since. sm_spool_open
 * quarantines, besides, every file of the spool folder that is not a directory, not hidden
 * (".name") and not named as an entry: a name put never writes, so nothing that reads it. */
uint64_t sm_spool_quarantined(sm_spool *sp);

#endif
