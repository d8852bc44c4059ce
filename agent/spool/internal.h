/* The spool's index and the helpers its files share: spool.c (write, scan, read, remove) and
 * quarantine.c (quarantine and set-aside). Internal to the agent library. */
#ifndef SM_AGENT_SPOOL_INTERNAL_H
#define SM_AGENT_SPOOL_INTERNAL_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/spool/spool.h"

/* A result is a JSON document of a few KiB; anything near this is a bug, not a measurement. */
#define MAX_ENTRY ((size_t)1 << 20)
/* "%016llx-%llu-%u.res" is at most 16 + 1 + 20 + 1 + 10 + 4 + 1 = 53 bytes. */
#define NAME_SIZE 64
#define NOT_FOUND ((size_t)-1)
/* Quarantine lines one process logs before it only counts: a spool filled with junk by a
 * broken disk or script must not turn into an endless log. */
#define QUARANTINE_LOG_MAX 100

typedef struct entry {
    uint64_t seq;
    uint64_t job;
    uint32_t attempt;
    /* Acked, but its file could not be removed: kept so a put of the key stays a no-op and the
     * key counts as taken, never listed again (see sm_spool_remove). */
    bool acked;
} entry;

struct sm_spool {
    int dirfd;
    char *path; /* for error messages only */
    /* Serializes puts, so that the duplicate check, the temporary file (one name per key) and the
     * sequence number are each used by one put at a time, while the slow part of a put (two
     * fsyncs) runs outside mu and never stalls the control thread's list, get and remove. */
    pthread_mutex_t put_mu;
    uint64_t next_seq; /* guarded by put_mu */
    pthread_mutex_t mu;
    entry *v; /* guarded by mu: sorted by seq, oldest first */
    size_t n, cap;
    uint64_t quarantined; /* guarded by mu (or open, before the handle is shared) */
    unsigned quarantine_logged;
};

static inline void entry_name(char *buf, uint64_t seq, uint64_t job, uint32_t attempt)
{
    snprintf(buf, NAME_SIZE, "%016llx-%llu-%u.res", (unsigned long long)seq,
             (unsigned long long)job, attempt);
}

static inline int open_retry(int dirfd, const char *name, int flags, mode_t mode)
{
    int fd;
    do {
        fd = openat(dirfd, name, flags, mode);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

static inline int fsync_retry(int fd)
{
    int rc;
    do {
        rc = fsync(fd);
    } while (rc != 0 && errno == EINTR);
    return rc;
}

/* Caller holds mu. The backlog of unacked results is normally a handful of entries, so a scan
 * costs less than a second index kept in step with this one. */
static inline size_t find(const sm_spool *sp, uint64_t job, uint32_t attempt)
{
    for (size_t i = 0; i < sp->n; i++)
        if (sp->v[i].job == job && sp->v[i].attempt == attempt)
            return i;
    return NOT_FOUND;
}

/* Takes mu and looks job's attempt up. Returns 0 with mu held, the entry's index in *index
 * (index may be NULL) and its file's name in name; or SM_EINVAL "spool DIR: no entry for job J
 * attempt A" with mu released, *index and name untouched (err may be NULL, for a caller to whom
 * a miss is no error). Inline here so that spool.c and quarantine.c share it without calling
 * each other. */
static inline int spool_lock_entry(sm_spool *sp, uint64_t job, uint32_t attempt, size_t *index,
                                   char name[NAME_SIZE], sm_error *err)
{
    pthread_mutex_lock(&sp->mu);
    size_t i = find(sp, job, attempt);
    if (i == NOT_FOUND) {
        pthread_mutex_unlock(&sp->mu);
        return sm_error_set(err, SM_EINVAL, "spool %s: no entry for job %llu attempt %u", sp->path,
                            (unsigned long long)job, attempt);
    }
    entry_name(name, sp->v[i].seq, job, attempt);
    if (index)
        *index = i;
    return 0;
}

/* Takes entry i out of the index, keeping the rest in order. Caller holds mu. */
static inline void drop_entry(sm_spool *sp, size_t i)
{
    memmove(&sp->v[i], &sp->v[i + 1], (sp->n - i - 1) * sizeof *sp->v);
    sp->n--;
}

/* mkdirat that takes an existing directory as success. */
static inline int mkdir_at(int dirfd, const char *name)
{
    if (mkdirat(dirfd, name, 0700) == 0 || errno == EEXIST)
        return 0;
    return -1;
}

/* Moves the file name of the spool folder into quarantine/, logs it once and counts it. The
 * caller holds mu, or is sm_spool_open. No fsync: a crash that undoes the rename only brings the
 * file back to be quarantined again. Returns 0, SM_ESYS (err says why; logged as well), or
 * SM_EINVAL when the file is gone (removed by hand: nothing to count). */
int spool_quarantine_move(sm_spool *sp, const char *name, const char *why, sm_error *err);
/* Files in quarantine/ now; 0 when there is no such folder. */
uint64_t spool_quarantine_count(sm_spool *sp);

#endif
