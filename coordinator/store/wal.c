/* The store's look at a database's -wal file before SQLite opens it (sm_store_wal_check). */
#include "coordinator/store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the WAL, as SQLite lays it out (https://sqlite.org/fileformat2.html#walformat) ---- */

#define WAL_HEADER       32
#define WAL_FRAME_HEADER 24
#define WAL_MAGIC_LE     0x377f0682u /* checksums over little-endian words */
#define WAL_MAGIC_BE     0x377f0683u

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* SQLite's WAL checksum, continued from s[0], s[1] over n bytes (a multiple of 8). */
static void wal_cksum(bool big, const uint8_t *p, size_t n, uint32_t s[2])
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        s[0] += (big ? be32(p + i) : le32(p + i)) + s[1];
        s[1] += (big ? be32(p + i + 4) : le32(p + i + 4)) + s[0];
    }
}

static int pread_all(int fd, uint8_t *buf, size_t n, off_t at)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, at + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Walks the frames of the log the header starts, as SQLite's recovery does: a frame counts
 * while its salts are the header's and its checksum continues the chain. */
static int wal_walk(int fd, const uint8_t hdr[WAL_HEADER], sm_wal_check *c, const char *name,
                    sm_error *err)
{
    const bool big = be32(hdr) == WAL_MAGIC_BE;
    uint32_t sum[2] = {0, 0};
    wal_cksum(big, hdr, 24, sum);
    if (sum[0] != be32(hdr + 24) || sum[1] != be32(hdr + 28))
        return 0; /* SQLite ignores such a log: no frame of it is valid */
    const size_t fsize = WAL_FRAME_HEADER + (size_t)c->page_size;
    uint8_t *frame = malloc(fsize);
    if (!frame)
        return sm_error_set(err, SM_ENOMEM, "%s: out of memory", name);
    int rc = 0;
    for (uint64_t i = 0; i < c->frames; i++) {
        if (pread_all(fd, frame, fsize, (off_t)(WAL_HEADER + i * fsize)) != 0) {
            rc = sm_error_set(err, SM_ESYS, "%s: read frame %" PRIu64 ": %s", name, i + 1,
                              errno ? strerror(errno) : "short read");
            break;
        }
        if (memcmp(frame + 8, hdr + 16, 8) != 0)
            break;
        wal_cksum(big, frame, 8, sum);
        wal_cksum(big, frame + WAL_FRAME_HEADER, c->page_size, sum);
        if (sum[0] != be32(frame + 16) || sum[1] != be32(frame + 20))
            break;
        c->valid = i + 1;
        if (be32(frame + 4) != 0) /* the database size after a commit: this frame ends one */
            c->kept = i + 1;
    }
    free(frame);
    return rc;
}

int sm_store_wal_check(const char *db_path, sm_wal_check *out, sm_error *err)
{
    sm_wal_check c;
    memset(&c, 0, sizeof c);
    char name[4096];
    if ((size_t)snprintf(name, sizeof name, "%s-wal", db_path) >= sizeof name)
        return sm_error_set(err, SM_EINVAL, "%s: path too long", db_path);
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            *out = c;
            return 0;
        }
        return sm_error_set(err, SM_ESYS, "%s: open: %s", name, strerror(errno));
    }
    struct stat sb;
    uint8_t hdr[WAL_HEADER];
    int rc = 0;
    if (fstat(fd, &sb) != 0) {
        rc = sm_error_set(err, SM_ESYS, "%s: stat: %s", name, strerror(errno));
        goto out;
    }
    c.size = (uint64_t)sb.st_size;
    c.present = c.size > 0;
    if (!c.present)
        goto out;
    if (c.size < WAL_HEADER) {
        /* Not even the header: SQLite ignores the whole log. */
        c.cut = true;
        c.partial = c.size;
        goto out;
    }
    if (pread_all(fd, hdr, sizeof hdr, 0) != 0) {
        rc = sm_error_set(err, SM_ESYS, "%s: read header: %s", name,
                          errno ? strerror(errno) : "short read");
        goto out;
    }
    const uint32_t magic = be32(hdr), ps = be32(hdr + 8);
    const uint32_t page = ps == 1 ? 65536u : ps;
    if ((magic != WAL_MAGIC_LE && magic != WAL_MAGIC_BE) || page < 512 || page > 65536 ||
        (page & (page - 1)) != 0)
        goto out; /* not a log SQLite would read */
    c.page_size = page;
    c.frames = (c.size - WAL_HEADER) / (WAL_FRAME_HEADER + page);
    c.partial = (c.size - WAL_HEADER) % (WAL_FRAME_HEADER + page);
    rc = wal_walk(fd, hdr, &c, name, err);
    /* Bytes past the whole frames are a cut only where the current log reached them: after a
     * checkpoint SQLite writes the next log from the start, over an older and longer one. */
    c.cut = rc == 0 && c.partial > 0 && c.valid == c.frames;
out:
    close(fd);
    if (rc == 0)
        *out = c;
    return rc;
}
