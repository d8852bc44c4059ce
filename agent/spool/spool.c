/* The agent's durable result spool: one file per result, made durable by write, fsync, rename. */
#include "agent/spool/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/log.h"

static void tmp_name(char *buf, uint64_t job, uint32_t attempt)
{
    snprintf(buf, NAME_SIZE, ".tmp-%llu-%u", (unsigned long long)job, attempt);
}

/* Digits only (no sign, space or 0x, unlike strtoull), without overflow; *p moves past them. */
static int parse_digits(const char **p, unsigned base, uint64_t max, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a') + 10;
        else
            break;
        if (v > (max - d) / base)
            return -1;
        v = v * base + d;
    }
    if (s == *p)
        return -1;
    *p = s;
    *out = v;
    return 0;
}

/* Parses "<job>-<attempt>" and returns where it stopped, or NULL. */
static const char *parse_key(const char *s, uint64_t *job, uint32_t *attempt)
{
    uint64_t a;
    if (parse_digits(&s, 10, UINT64_MAX, job) != 0 || *s++ != '-' ||
        parse_digits(&s, 10, UINT32_MAX, &a) != 0)
        return NULL;
    *attempt = (uint32_t)a;
    return s;
}

/* Accepts only the exact names entry_name writes: a leading zero such as "-01-" would parse to
 * a key whose file get and remove could never find by name. */
static int parse_entry_name(const char *name, uint64_t *seq, uint64_t *job, uint32_t *attempt)
{
    const char *s = name;
    char canon[NAME_SIZE];
    if (parse_digits(&s, 16, UINT64_MAX, seq) != 0 || s - name != 16 || *s++ != '-')
        return -1;
    s = parse_key(s, job, attempt);
    if (!s || strcmp(s, ".res") != 0)
        return -1;
    entry_name(canon, *seq, *job, *attempt);
    return strcmp(canon, name) == 0 ? 0 : -1;
}

static int parse_tmp_name(const char *name)
{
    uint64_t job;
    uint32_t attempt;
    char canon[NAME_SIZE];
    if (strncmp(name, ".tmp-", 5) != 0)
        return -1;
    const char *s = parse_key(name + 5, &job, &attempt);
    if (!s || *s)
        return -1;
    tmp_name(canon, job, attempt);
    return strcmp(canon, name) == 0 ? 0 : -1;
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            /* A regular file never takes 0 bytes of a non-empty write; looping would spin. */
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static int cmp_seq(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_key_then_seq(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->job != y->job)
        return (x->job > y->job) - (x->job < y->job);
    if (x->attempt != y->attempt)
        return (x->attempt > y->attempt) - (x->attempt < y->attempt);
    return cmp_seq(a, b);
}

/* Caller holds mu. */
static int reserve(sm_spool *sp, size_t want, sm_error *err)
{
    if (want <= sp->cap)
        return 0;
    size_t cap = sp->cap ? sp->cap * 2 : 16;
    while (cap < want)
        cap *= 2;
    entry *v = realloc(sp->v, cap * sizeof *v);
    if (!v)
        return sm_error_set(err, SM_ENOMEM, "spool %s: index of %zu entries", sp->path, cap);
    sp->v = v;
    sp->cap = cap;
    return 0;
}

/* Steps 1..stop_after of a put whose key is not in the index; the caller holds put_mu. */
static int write_entry(sm_spool *sp, uint64_t job, uint32_t attempt, const char *data, size_t len,
                       int stop_after, sm_error *err)
{
    char tmp[NAME_SIZE], final[NAME_SIZE];
    int whole = stop_after >= 6;
    int rc = 0;

    if (stop_after < 1)
        return 0;
    tmp_name(tmp, job, attempt);
    /* O_TRUNC, not O_EXCL: a leftover of this key's crashed put is garbage to overwrite. */
    int fd = open_retry(sp->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return sm_error_sys(err, errno, "spool %s: create %s", sp->path, tmp);
    size_t half = len / 2;
    if (stop_after >= 2 && write_all(fd, data, half) != 0)
        rc = sm_error_sys(err, errno, "spool %s: write %s", sp->path, tmp);
    if (rc == 0 && stop_after >= 3 && write_all(fd, data + half, len - half) != 0)
        rc = sm_error_sys(err, errno, "spool %s: write %s", sp->path, tmp);
    if (rc == 0 && stop_after >= 4 && fsync_retry(fd) != 0)
        rc = sm_error_sys(err, errno, "spool %s: fsync %s", sp->path, tmp);
    /* close can still report a write lost on its way out (NFS); EINTR leaves the fd closed. */
    if (close(fd) != 0 && errno != EINTR && rc == 0)
        rc = sm_error_sys(err, errno, "spool %s: close %s", sp->path, tmp);
    if (rc != 0 || stop_after < 5) {
        if (rc != 0 && whole)
            unlinkat(sp->dirfd, tmp, 0);
        return rc;
    }

    uint64_t seq = sp->next_seq++;
    entry_name(final, seq, job, attempt);
    if (renameat(sp->dirfd, tmp, sp->dirfd, final) != 0) {
        rc = sm_error_sys(err, errno, "spool %s: rename %s to %s", sp->path, tmp, final);
        if (whole)
            unlinkat(sp->dirfd, tmp, 0);
        return rc;
    }
    if (whole && fsync_retry(sp->dirfd) != 0) {
        rc = sm_error_sys(err, errno, "spool %s: fsync of the directory", sp->path);
        /* Until the directory is synced the rename may vanish in a crash, so this put failed.
         * Taking the file back makes a retry redo every step rather than find the key and
         * return 0 for a result that was never durable. */
        unlinkat(sp->dirfd, final, 0);
        return rc;
    }

    /* Capacity was reserved before any I/O, so a durable entry is never left out of the index
     * for want of memory; seq is above every indexed one, so appending keeps the order. */
    pthread_mutex_lock(&sp->mu);
    sp->v[sp->n++] = (entry){.seq = seq, .job = job, .attempt = attempt};
    pthread_mutex_unlock(&sp->mu);
    return 0;
}

int sm_spool_put_until(sm_spool *sp, uint64_t job, uint32_t attempt, const char *data, size_t len,
                       int stop_after, sm_error *err)
{
    if (!sp || (!data && len > 0))
        return sm_error_set(err, SM_EINVAL, "spool put: no spool or no data");
    if (len > MAX_ENTRY)
        return sm_error_set(err, SM_EINVAL,
                            "spool put: job %llu attempt %u: %zu bytes is over the %zu-byte limit",
                            (unsigned long long)job, attempt, len, MAX_ENTRY);

    if (!data)
        data = ""; /* NULL + 0 is undefined, and write_entry computes data + len / 2 */

    pthread_mutex_lock(&sp->put_mu);
    pthread_mutex_lock(&sp->mu);
    int present = find(sp, job, attempt) != NOT_FOUND;
    int rc = present ? 0 : reserve(sp, sp->n + 1, err);
    pthread_mutex_unlock(&sp->mu);
    if (!present && rc == 0)
        rc = write_entry(sp, job, attempt, data, len, stop_after, err);
    pthread_mutex_unlock(&sp->put_mu);
    return rc;
}

int sm_spool_put(sm_spool *sp, uint64_t job, uint32_t attempt, const char *data, size_t len,
                 sm_error *err)
{
    return sm_spool_put_until(sp, job, attempt, data, len, 6, err);
}

/* Whether errno says the system is short of something (descriptors, memory) rather than that
 * the file is bad: such an entry is tried again at the next poll, not quarantined. */
static bool shortage(int e)
{
    return e == EMFILE || e == ENFILE || e == ENOMEM || e == EAGAIN || e == ENOBUFS;
}

/* Sorts the entries by key, keeps the oldest of each key, and sorts what is left by age. Two
 * files for one key only come from outside the spool (put never writes a key it holds); the
 * newer stays on disk, unindexed, and is sent after the older is acked and the spool reopened:
 * a duplicate the coordinator drops, never a loss. */
static void drop_duplicate_keys(sm_spool *sp)
{
    if (sp->n < 2)
        return; /* qsort's array may not be NULL, which an empty index is */
    qsort(sp->v, sp->n, sizeof *sp->v, cmp_key_then_seq);
    size_t kept = 0;
    for (size_t i = 0; i < sp->n; i++) {
        if (kept > 0 && sp->v[kept - 1].job == sp->v[i].job &&
            sp->v[kept - 1].attempt == sp->v[i].attempt)
            continue;
        sp->v[kept++] = sp->v[i];
    }
    sp->n = kept;
    qsort(sp->v, sp->n, sizeof *sp->v, cmp_seq);
}

static int scan(sm_spool *sp, sm_error *err)
{
    /* A descriptor of its own: readdir moves the offset, which dirfd should not share. */
    int fd = open_retry(sp->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0)
        return sm_error_sys(err, errno, "spool %s: open for listing", sp->path);
    DIR *d = fdopendir(fd);
    if (!d) {
        int rc = sm_error_sys(err, errno, "spool %s: fdopendir", sp->path);
        close(fd);
        return rc;
    }

    int rc = 0;
    uint64_t max_seq = 0;
    /* Before the loop, whose moves count themselves: a failed one is counted too. */
    sp->quarantined = spool_quarantine_count(sp);
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno != 0)
                rc = sm_error_sys(err, errno, "spool %s: readdir", sp->path);
            break;
        }
        const char *name = de->d_name;
        entry e = {0};
        struct stat st;
        if (parse_tmp_name(name) == 0) {
            /* A temporary file is a put that crashed before its rename. That put never
             * returned, so the worker never reported the result as spooled and it was never
             * sent: dropping the file breaks no promise, and the job's attempt fails as any
             * crashed job does. The unlink needs no directory fsync: a file a crash brings
             * back is dropped again at the next open. */
            if (unlinkat(sp->dirfd, name, 0) != 0 && errno != ENOENT) {
                rc = sm_error_sys(err, errno, "spool %s: remove %s", sp->path, name);
                break;
            }
            continue;
        }
        /* Hidden names are the probe's, an editor's or NFS's; the two folder names are ours
         * even when something else took them. Not ours to move. */
        if (name[0] == '.' || strcmp(name, SM_SPOOL_QUARANTINE_DIR) == 0 ||
            strcmp(name, SM_SPOOL_ASIDE_DIR) == 0 ||
            fstatat(sp->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode))
            continue;
        const bool named = parse_entry_name(name, &e.seq, &e.job, &e.attempt) == 0;
        if (!named || !S_ISREG(st.st_mode)) {
            /* Nothing would ever read or remove it; the count and the log line say it is
             * there. A failed move (logged) leaves it where it is, harmless. */
            sm_error qe = {0};
            spool_quarantine_move(sp, name,
                                  named ? "not a regular file" : "not named as a spool entry", &qe);
            continue;
        }
        if ((rc = reserve(sp, sp->n + 1, err)) != 0)
            break;
        sp->v[sp->n++] = e;
        if (e.seq > max_seq)
            max_seq = e.seq;
    }
    closedir(d);
    if (rc != 0)
        return rc;
    drop_duplicate_keys(sp);
    sp->next_seq = max_seq + 1;
    return 0;
}

/* A directory this call created is itself only a new name in its parent: without a sync of the
 * parent, a crash can take the directory and every entry synced into it. */
static int fsync_parent(const char *dir, sm_error *err)
{
    char *copy = strdup(dir);
    if (!copy)
        return sm_error_set(err, SM_ENOMEM, "spool %s: path copy", dir);
    int rc = 0;
    int fd = open_retry(AT_FDCWD, dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0 || fsync_retry(fd) != 0)
        rc = sm_error_sys(err, errno, "spool %s: fsync of the parent directory", dir);
    if (fd >= 0)
        close(fd);
    free(copy);
    return rc;
}

int sm_spool_open(sm_spool **sp, const char *dir, sm_error *err)
{
    if (!sp || !dir || !*dir)
        return sm_error_set(err, SM_EINVAL, "spool: no directory given");

    int created = mkdir(dir, 0700) == 0;
    if (!created && errno != EEXIST)
        return sm_error_sys(err, errno, "spool directory %s: mkdir", dir);
    int fd = open_retry(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0 && errno == ENOTDIR)
        return sm_error_set(err, SM_EINVAL, "spool directory %s: exists and is not a directory",
                            dir);
    if (fd < 0)
        return sm_error_sys(err, errno, "spool directory %s: open", dir);
    /* Two agents on one spool would send and delete each other's results: the first holds an
     * exclusive lock on the directory itself, released by the kernel when it exits or dies. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            return sm_error_set(err, SM_EINVAL,
                                "spool directory %s is in use by another agent process", dir);
        return sm_error_sys(err, e, "spool directory %s: flock", dir);
    }

    int rc = 0;
    sm_spool *s = calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        return sm_error_set(err, SM_ENOMEM, "spool %s: handle", dir);
    }
    s->dirfd = fd;
    int mu_ok = 0, put_mu_ok = 0, e;
    if (!(s->path = strdup(dir))) {
        rc = sm_error_set(err, SM_ENOMEM, "spool %s: path copy", dir);
        goto out;
    }
    if ((e = pthread_mutex_init(&s->mu, NULL)) != 0) {
        rc = sm_error_sys(err, e, "spool %s: mutex", dir);
        goto out;
    }
    mu_ok = 1;
    if ((e = pthread_mutex_init(&s->put_mu, NULL)) != 0) {
        rc = sm_error_sys(err, e, "spool %s: mutex", dir);
        goto out;
    }
    put_mu_ok = 1;
    if (created && (rc = fsync_parent(dir, err)) != 0)
        goto out;
    rc = scan(s, err);

out:
    if (rc != 0) {
        if (put_mu_ok)
            pthread_mutex_destroy(&s->put_mu);
        if (mu_ok)
            pthread_mutex_destroy(&s->mu);
        close(s->dirfd);
        free(s->v);
        free(s->path);
        free(s);
        return rc;
    }
    *sp = s;
    return 0;
}

int sm_spool_probe(sm_spool *sp, sm_error *err)
{
    if (!sp)
        return sm_error_set(err, SM_EINVAL, "spool: no handle");
    static const char bytes[] = "sockmatrix spool write probe\n";
    /* O_TRUNC, not O_EXCL: a probe file a crash left behind is simply reused. O_NOFOLLOW keeps
     * a planted link from sending the write elsewhere. */
    int fd = open_retry(sp->dirfd, SM_SPOOL_PROBE_NAME,
                        O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return sm_error_sys(err, errno, "spool directory %s is not writable: create %s", sp->path,
                            SM_SPOOL_PROBE_NAME);
    const char *step = NULL;
    if (write_all(fd, bytes, sizeof bytes - 1) != 0)
        step = "write";
    else if (fsync_retry(fd) != 0)
        step = "fsync";
    int e = errno;
    close(fd);
    if (step) {
        unlinkat(sp->dirfd, SM_SPOOL_PROBE_NAME, 0); /* best effort: the error below matters */
        return sm_error_sys(err, e, "spool directory %s is not writable: %s %s", sp->path, step,
                            SM_SPOOL_PROBE_NAME);
    }
    if (unlinkat(sp->dirfd, SM_SPOOL_PROBE_NAME, 0) != 0)
        return sm_error_sys(err, errno, "spool directory %s is not writable: remove %s", sp->path,
                            SM_SPOOL_PROBE_NAME);
    if (fsync_retry(sp->dirfd) != 0)
        return sm_error_sys(err, errno, "spool directory %s is not writable: fsync", sp->path);
    return 0;
}

void sm_spool_close(sm_spool *sp)
{
    if (!sp)
        return;
    pthread_mutex_destroy(&sp->put_mu);
    pthread_mutex_destroy(&sp->mu);
    close(sp->dirfd);
    free(sp->v);
    free(sp->path);
    free(sp);
}

size_t sm_spool_list(sm_spool *sp, uint64_t *jobs, uint32_t *attempts, size_t max)
{
    if (!sp || !jobs || !attempts)
        return 0;
    pthread_mutex_lock(&sp->mu);
    size_t k = 0;
    for (size_t i = 0; i < sp->n && k < max; i++) {
        if (sp->v[i].acked)
            continue;
        jobs[k] = sp->v[i].job;
        attempts[k] = sp->v[i].attempt;
        k++;
    }
    pthread_mutex_unlock(&sp->mu);
    return k;
}

/* One of the spool's counters, read under mu; 0 for no spool. */
static uint64_t read_counter(sm_spool *sp, bool quarantined)
{
    if (!sp)
        return 0;
    pthread_mutex_lock(&sp->mu);
    uint64_t n = quarantined ? sp->quarantined : (uint64_t)sp->n;
    pthread_mutex_unlock(&sp->mu);
    return n;
}

size_t sm_spool_count(sm_spool *sp)
{
    return (size_t)read_counter(sp, false);
}

/* An open or read of an entry failed with e: a shortage that may pass is SM_ESYS, anything
 * else means the file itself is bad (SM_EPARSE), for the caller to quarantine. */
static int entry_error(sm_error *err, int e, const char *path, const char *step, const char *name)
{
    if (shortage(e))
        return sm_error_sys(err, e, "spool %s: %s %s", path, step, name);
    return sm_error_set(err, SM_EPARSE, "spool %s: %s %s: %s", path, step, name, strerror(e));
}

static int read_entry(int fd, const char *path, const char *name, char **data, size_t *len,
                      sm_error *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return entry_error(err, errno, path, "stat", name);
    if (!S_ISREG(st.st_mode) || (uintmax_t)st.st_size > MAX_ENTRY)
        return sm_error_set(err, SM_EPARSE,
                            "spool %s: %s is not a regular file of at most %zu bytes", path, name,
                            MAX_ENTRY);
    size_t size = (size_t)st.st_size, got = 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return sm_error_set(err, SM_ENOMEM, "spool: %zu bytes for %s", size + 1, name);
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int rc = entry_error(err, errno, path, "read", name);
            free(buf);
            return rc;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    *data = buf;
    *len = got;
    return 0;
}

int sm_spool_get(sm_spool *sp, uint64_t job, uint32_t attempt, char **data, size_t *len,
                 sm_error *err)
{
    char name[NAME_SIZE];
    if (!sp || !data || !len)
        return sm_error_set(err, SM_EINVAL, "spool get: no spool or no output");

    int rc = spool_lock_entry(sp, job, attempt, NULL, name, err);
    if (rc != 0)
        return rc;
    /* Opened under the lock, so a remove cannot unlink the file between the lookup and the
     * open; an open descriptor reads the whole file even if it is unlinked meanwhile. A link
     * or a FIFO put in the entry's place fails here or at the fstat, and never blocks. */
    int fd = open_retry(sp->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
    int open_errno = errno;
    pthread_mutex_unlock(&sp->mu);
    if (fd < 0)
        return entry_error(err, open_errno, sp->path, "open", name);
    rc = read_entry(fd, sp->path, name, data, len, err);
    close(fd);
    return rc;
}

int sm_spool_remove(sm_spool *sp, uint64_t job, uint32_t attempt, sm_error *err)
{
    char name[NAME_SIZE];
    if (!sp)
        return sm_error_set(err, SM_EINVAL, "spool remove: no spool");

    /* Removing what is not there is done already: the ack of a result sent twice. */
    size_t i = NOT_FOUND; /* set on a hit (gcc does not see it through the lookup) */
    if (spool_lock_entry(sp, job, attempt, &i, name, NULL) != 0)
        return 0;
    /* ENOENT: someone removed the file by hand; the index follows the disk. */
    if (unlinkat(sp->dirfd, name, 0) != 0 && errno != ENOENT) {
        int rc = sm_error_sys(err, errno, "spool %s: remove %s", sp->path, name);
        /* The coordinator has it: listed again, it would be sent with every poll for ever (a
         * spool remounted read-only made a loop of thousands of polls a second). */
        sp->v[i].acked = true;
        pthread_mutex_unlock(&sp->mu);
        return rc;
    }
    drop_entry(sp, i);
    pthread_mutex_unlock(&sp->mu);

    /* Outside the lock: if a crash undoes the unlink the result is only sent again and the
     * coordinator drops the duplicate; the sync keeps acked results from piling up again. */
    if (fsync_retry(sp->dirfd) != 0)
        return sm_error_sys(err, errno, "spool %s: fsync of the directory", sp->path);
    return 0;
}

uint64_t sm_spool_quarantined(sm_spool *sp)
{
    return read_counter(sp, true);
}
