/* The spool's entries taken out of the way: quarantined when unreadable, set aside on request. */
#include "agent/spool/internal.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "proto/log.h"

static void log_quarantine(sm_spool *sp, const char *name, const char *why, const char *failed)
{
    if (sp->quarantine_logged > QUARANTINE_LOG_MAX)
        return;
    if (sp->quarantine_logged++ == QUARANTINE_LOG_MAX) {
        sm_log(LOG_WARNING, "SM-SPOOL-QUARANTINE",
               "spool %s: more than %d entries quarantined; further ones are only counted",
               sp->path, QUARANTINE_LOG_MAX);
        return;
    }
    if (failed)
        sm_log(LOG_ERR, "SM-SPOOL-QUARANTINE",
               "spool entry %s/%s cannot be moved to %s/ (%s); skipped until the agent restarts: "
               "%s",
               sp->path, name, SM_SPOOL_QUARANTINE_DIR, failed, why);
    else
        sm_log(LOG_WARNING, "SM-SPOOL-QUARANTINE", "spool entry %s/%s moved to %s/: %s", sp->path,
               name, SM_SPOOL_QUARANTINE_DIR, why);
}

int spool_quarantine_move(sm_spool *sp, const char *name, const char *why, sm_error *err)
{
    char to[sizeof SM_SPOOL_QUARANTINE_DIR + NAME_MAX + 8];
    struct stat st;
    sm_error e = {0}; /* the log line needs the reason even when the caller wants none */
    int rc = 0;
    if (mkdir_at(sp->dirfd, SM_SPOOL_QUARANTINE_DIR) != 0) {
        rc = sm_error_sys(&e, errno, "mkdir %s", SM_SPOOL_QUARANTINE_DIR);
        goto out;
    }
    /* renameat would replace a file of the same name (a sequence number used again after the
     * spool was emptied) and lose it. Only this process writes here (the spool's lock). */
    for (int k = 0;; k++) {
        if (k == 0)
            snprintf(to, sizeof to, "%s/%s", SM_SPOOL_QUARANTINE_DIR, name);
        else
            snprintf(to, sizeof to, "%s/%s.%d", SM_SPOOL_QUARANTINE_DIR, name, k);
        if (fstatat(sp->dirfd, to, &st, AT_SYMLINK_NOFOLLOW) != 0)
            break;
        if (k == 100) {
            rc = sm_error_set(&e, SM_ESYS, "%s/%s and its 100 suffixed names are taken",
                              SM_SPOOL_QUARANTINE_DIR, name);
            goto out;
        }
    }
    if (renameat(sp->dirfd, name, sp->dirfd, to) != 0) {
        if (errno == ENOENT)
            return sm_error_set(err, SM_EINVAL, "spool %s: %s is gone", sp->path, name);
        rc = sm_error_sys(&e, errno, "rename");
    }
out:
    sp->quarantined++;
    log_quarantine(sp, name, why, rc ? e.msg : NULL);
    if (rc && err)
        *err = e;
    return rc;
}

uint64_t spool_quarantine_count(sm_spool *sp)
{
    int fd = open_retry(sp->dirfd, SM_SPOOL_QUARANTINE_DIR,
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 0;
    }
    uint64_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

static bool valid_tag(const char *tag)
{
    size_t n = tag ? strlen(tag) : 0;
    if (n == 0 || n > 64 || strcmp(tag, ".") == 0 || strcmp(tag, "..") == 0)
        return false;
    return strspn(tag, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

int sm_spool_set_aside(sm_spool *sp, uint64_t job, uint32_t attempt, const char *tag, sm_error *err)
{
    if (!sp)
        return sm_error_set(err, SM_EINVAL, "spool set aside: no spool");
    if (!valid_tag(tag))
        return sm_error_set(err, SM_EINVAL, "spool %s: set aside: '%.70s' is no directory name",
                            sp->path, tag ? tag : "");
    char sub[sizeof SM_SPOOL_ASIDE_DIR + 66], name[NAME_SIZE], to[sizeof sub + NAME_SIZE];
    snprintf(sub, sizeof sub, "%s/%s", SM_SPOOL_ASIDE_DIR, tag);
    /* Made before taking mu: listing and removing need not wait on two mkdirs. */
    if (mkdir_at(sp->dirfd, SM_SPOOL_ASIDE_DIR) != 0 || mkdir_at(sp->dirfd, sub) != 0)
        return sm_error_sys(err, errno, "spool %s: mkdir %s", sp->path, sub);

    size_t i = NOT_FOUND; /* set on a hit (gcc does not see it through the lookup) */
    int rc = spool_lock_entry(sp, job, attempt, &i, name, err);
    if (rc != 0)
        return rc;
    snprintf(to, sizeof to, "%s/%s", sub, name);
    /* The sequence number in the name keeps two results of one job id (from two stores that
     * both had it) apart in one directory; renameat would replace the older silently. */
    struct stat st;
    if (fstatat(sp->dirfd, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        pthread_mutex_unlock(&sp->mu);
        return sm_error_set(err, SM_EINVAL, "spool %s: %s is already there", sp->path, to);
    }
    if (renameat(sp->dirfd, name, sp->dirfd, to) != 0) {
        rc = sm_error_sys(err, errno, "spool %s: move %s to %s", sp->path, name, sub);
        pthread_mutex_unlock(&sp->mu);
        return rc;
    }
    drop_entry(sp, i);
    pthread_mutex_unlock(&sp->mu);

    /* The new name first: a crash between the two syncs leaves the file in both places at
     * worst, never in neither. */
    int fd = open_retry(sp->dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0 || fsync_retry(fd) != 0) {
        rc = sm_error_sys(err, errno, "spool %s: fsync of %s", sp->path, sub);
        if (fd >= 0)
            close(fd);
        return rc;
    }
    close(fd);
    if (fsync_retry(sp->dirfd) != 0)
        return sm_error_sys(err, errno, "spool %s: fsync of the directory", sp->path);
    return 0;
}

int sm_spool_quarantine(sm_spool *sp, uint64_t job, uint32_t attempt, const char *why,
                        sm_error *err)
{
    char name[NAME_SIZE];
    if (!sp)
        return sm_error_set(err, SM_EINVAL, "spool quarantine: no spool");
    size_t i = NOT_FOUND; /* set on a hit (gcc does not see it through the lookup) */
    int rc = spool_lock_entry(sp, job, attempt, &i, name, err);
    if (rc != 0)
        return rc;
    rc = spool_quarantine_move(sp, name, why ? why : "unreadable", err);
    /* Out of the index whatever became of the move: listed again, an entry that failed to move
     * would be read, judged, and fail to move at every poll. */
    drop_entry(sp, i);
    pthread_mutex_unlock(&sp->mu);
    return rc;
}
