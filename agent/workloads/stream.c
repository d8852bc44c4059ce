/* stream: one-way bulk from client to server, every byte verified at the receiver.
 *
 * Raw framing: the receiver accepts, takes t0 and sends one "go" byte; the sender starts on
 * it, so the interval [t0, last byte received] is on one clock, in local and pair scope alike,
 * and includes one wake-up of the sender. framing=lines is the 2010 protocol: the receiver's
 * clock runs from the end of "profile_start\r\n" to the end of "profile_end\r\n". */
#include "agent/workloads/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define START_LEN (sizeof SM_LINES_START - 1)
#define END_LEN   (sizeof SM_LINES_END - 1)

/* How many writes go between two looks at the clock in a duration run: the look is cheap
 * (vDSO) but not free next to a 128-byte write. A write of CLOCK_EACH_BYTES or more looks
 * every time: the look is then a fraction of a percent of the write, and a slow link would
 * otherwise hold the sender 16 writes past its duration (8 s for 64 KiB writes at 1 Mbit/s),
 * which the network rule would read as a disturbance. */
#define CLOCK_EVERY      16
#define CLOCK_EACH_BYTES 4096u

static int is_lines(const sm_params *p)
{
    return p->framing == SM_FRAMING_LINES;
}

/* Sends one chunk of the payload at stream offset off, applying an injected fault. */
static int send_chunk(sm_side *s, int fd, uint64_t off, size_t len, int *stop)
{
    const sm_job *job = s->job;
    const uint8_t *data = sm_pattern_at(job->pat, off);
    uint64_t half = sm_params_stream_total(job->p) / 2;
    if (job->fault != SM_FAULT_NONE && off >= half) {
        if (job->fault == SM_FAULT_CORRUPT && off - half < len) {
            uint8_t *bad = malloc(len);
            if (!bad)
                return sm_io_fail(s, SM_ENOMEM, "out of memory");
            memcpy(bad, data, len);
            bad[off - half] ^= 0x5a;
            int rc = sm_io_write_all(s, fd, bad, len);
            free(bad);
            return rc;
        }
        if (job->fault == SM_FAULT_SHORT || job->fault == SM_FAULT_STALL) {
            *stop = 1;
            return 0;
        }
    }
    return sm_io_write_all(s, fd, data, len);
}

/* A byte count without a fault, the common case: nothing but the write and its count in the
 * loop, the pattern's offset carried from one write to the next rather than recomputed (a
 * 64-bit division per write, and a call for the total, next to a 128-byte write's ~1 us). */
static int send_bytes(sm_side *s, int fd, uint64_t total)
{
    const sm_pattern *pt = s->job->pat;
    const size_t msg = s->job->p->msg_size;
    size_t at = (size_t)(s->bytes % pt->period);
    while (s->bytes < total) {
        size_t n = total - s->bytes < msg ? (size_t)(total - s->bytes) : msg;
        int rc = sm_io_write_all(s, fd, pt->buf + at, n);
        if (rc)
            return rc;
        s->bytes += n;
        s->msgs++;
        at += n;
        if (at >= pt->period)
            at %= pt->period;
    }
    return 0;
}

static int send_payload(sm_side *s, int fd)
{
    const sm_params *p = s->job->p;
    int rc = 0, stop = 0;
    if (is_lines(p)) {
        const uint64_t line = (uint64_t)p->msg_size + 2;
        for (uint64_t i = 0; i < p->count && !rc && !stop; i++) {
            rc = send_chunk(s, fd, i * line, (size_t)line, &stop);
            s->bytes += rc || stop ? 0 : line;
            s->msgs += rc || stop ? 0 : 1;
        }
        return rc;
    }
    if (p->duration_ms) {
        uint64_t end = sm_now_ns() + (uint64_t)p->duration_ms * 1000000u;
        const bool each = p->msg_size >= CLOCK_EACH_BYTES;
        for (uint64_t i = 0; !rc; i++) {
            if ((each || i % CLOCK_EVERY == 0) && sm_now_ns() >= end)
                break;
            rc = sm_io_write_all(s, fd, sm_pattern_at(s->job->pat, s->bytes), p->msg_size);
            if (!rc) {
                s->bytes += p->msg_size;
                s->msgs++;
            }
        }
        return rc;
    }
    const uint64_t total = sm_params_stream_total(p);
    if (s->job->fault == SM_FAULT_NONE)
        return send_bytes(s, fd, total);
    while (s->bytes < total && !rc && !stop) {
        size_t n = total - s->bytes < p->msg_size ? (size_t)(total - s->bytes) : p->msg_size;
        rc = send_chunk(s, fd, s->bytes, n, &stop);
        if (!rc && !stop) {
            s->bytes += n;
            s->msgs++;
        }
    }
    return rc;
}

/* A stalled sender keeps its connection open until the receiver gives up; the receiver
 * must be the one to see the time limit, so the sender waits past it (bounded). */
static void stall(sm_side *s)
{
    uint64_t give_up = s->job->deadline_ns + 10ull * SM_IO_TICK_MS * 1000000u;
    while (!atomic_load(&s->job->cancel) && sm_now_ns() < give_up)
        usleep(SM_IO_TICK_MS * 1000);
}

static int stream_client(sm_side *s)
{
    const sm_params *p = s->job->p;
    int fd = -1;
    char go;
    int rc = sm_io_connect(s, &fd);
    if (!rc)
        rc = sm_io_prepare(s, fd);
    if (!rc)
        rc = sm_io_read_exact(s, fd, &go, 1, "the start signal");
    if (!rc && is_lines(p))
        rc = sm_io_write_all(s, fd, SM_LINES_START, START_LEN);
    if (!rc)
        rc = send_payload(s, fd);
    if (!rc && s->job->fault == SM_FAULT_STALL)
        stall(s);
    else if (!rc && is_lines(p) && s->job->fault == SM_FAULT_NONE)
        rc = sm_io_write_all(s, fd, SM_LINES_END, END_LEN);
    if (!rc) {
        sm_io_record_info(s, fd);
        sm_error e;
        if (sm_net_shutdown_write(fd, &e))
            rc = sm_io_fail(s, SM_ESYS, "%s", e.msg);
    }
    sm_net_close(&fd);
    return rc;
}

/* Verifies data that sits at stream offset off of a framing=lines stream. */
static long check_lines(const sm_pattern *pt, uint64_t total, uint64_t off, const uint8_t *d,
                        size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint64_t at = off + i;
        size_t n;
        long bad;
        if (at < START_LEN) {
            n = (size_t)(START_LEN - at) < len - i ? (size_t)(START_LEN - at) : len - i;
            bad = memcmp(&SM_LINES_START[at], d + i, n) ? 0 : -1;
        } else if (at < total - END_LEN) {
            uint64_t body_end = total - END_LEN;
            n = body_end - at < len - i ? (size_t)(body_end - at) : len - i;
            bad = sm_pattern_check(pt, at - START_LEN, d + i, n);
        } else {
            n = len - i;
            bad = memcmp(&SM_LINES_END[at - (total - END_LEN)], d + i, n) ? 0 : -1;
        }
        if (bad >= 0) {
            /* Locate the exact byte for the report. */
            for (size_t k = 0; k < n; k++) {
                uint64_t a = at + k;
                uint8_t want = a < START_LEN         ? (uint8_t)SM_LINES_START[a]
                               : a < total - END_LEN ? *sm_pattern_at(pt, a - START_LEN)
                                                     : (uint8_t)SM_LINES_END[a - (total - END_LEN)];
                if (want != d[i + k])
                    return (long)(i + k);
            }
        }
        i += n;
    }
    return -1;
}

static int stream_server(sm_side *s, int lfd)
{
    const sm_job *job = s->job;
    const sm_params *p = job->p;
    const uint64_t total = sm_params_stream_total(p); /* 0: until the sender closes */
    const size_t rsize = sm_params_read_size(p);
    int fd = -1;
    uint8_t *buf = malloc(rsize);
    if (!buf)
        return sm_io_fail(s, SM_ENOMEM, "out of memory for a %zu-byte read buffer", rsize);
    int rc = sm_io_accept(s, lfd, 0, &fd);
    if (!rc)
        rc = sm_io_prepare(s, fd);
    if (!rc) {
        s->t0_ns = sm_now_ns();
        rc = sm_io_write_all(s, fd, "G", 1);
    }
    uint64_t off = 0;
    while (!rc && (total == 0 || off < total)) {
        size_t want = total && total - off < rsize ? (size_t)(total - off) : rsize;
        size_t got;
        if ((rc = sm_io_read_some(s, fd, buf, want, &got)))
            break;
        /* The clock only where the interval needs it: the last byte of a known total (or
         * every read of an open-ended stream, whose last byte shows only after it) and the
         * end of the start marker. A look per read costs ~1 % of a 128-byte stream. */
        bool last = total == 0 || off + got == total;
        bool start = is_lines(p) && off < START_LEN && off + got >= START_LEN;
        uint64_t now = last || start ? sm_now_ns() : 0;
        if (got == 0) {
            if (total == 0)
                break;
            rc = atomic_load(&job->cancel)
                     ? sm_error_set(&s->err, SM_ECANCELED, "cancelled: the other side failed")
                     : sm_io_fail(s, SM_ECLOSED,
                                  "peer closed after %llu of the %llu bytes it promised",
                                  (unsigned long long)off, (unsigned long long)total);
            break;
        }
        long bad = is_lines(p) ? check_lines(job->pat, total, off, buf, got)
                               : sm_pattern_check(job->pat, off, buf, got);
        if (bad >= 0) {
            rc = sm_io_fail(s, SM_EVERIFY, "byte %llu of the stream differs from what was sent",
                            (unsigned long long)(off + (uint64_t)bad));
            break;
        }
        if (start)
            s->t0_ns = now;
        off += got;
        if (last)
            s->t1_ns = now;
    }
    s->bytes = off;
    if (!rc && total)
        rc = sm_io_expect_eof(s, fd, "the last byte");
    if (!rc && is_lines(p))
        s->msgs = p->count;
    sm_net_close(&fd);
    free(buf);
    return rc;
}

/* What the sender wrote on the wire, counted as the receiver counts it: with framing=lines
 * the two markers too. */
static uint64_t bytes_sent(const sm_params *p, const sm_side *client)
{
    return is_lines(p) ? client->bytes + START_LEN + END_LEN : client->bytes;
}

/* The receiver's timing: bytes, seconds and throughput, and (lines) the line rate. */
static double put_receiver(const sm_params *p, const sm_side *server, sm_result *r)
{
    double secs = (double)(server->t1_ns - server->t0_ns) / 1e9;
    double bytes = (double)server->bytes;
    sm_result_set(r, SM_M_BYTES, bytes);
    sm_result_set(r, SM_M_SECONDS, secs);
    if (secs > 0) {
        sm_result_set(r, SM_M_THROUGHPUT, bytes / secs / 1e6);
        if (is_lines(p))
            sm_result_set(r, SM_M_MSGS_PER_S, (double)server->msgs / secs);
    }
    return secs;
}

static void stream_finish(const sm_job *job, const sm_side *server, const sm_side *client,
                          sm_result *r)
{
    const sm_params *p = job->p;
    uint64_t sent = bytes_sent(p, client);
    if (server->bytes != sent) {
        r->ok = false;
        snprintf(r->reason, sizeof r->reason, "the sender wrote %llu bytes, the receiver got %llu",
                 (unsigned long long)sent, (unsigned long long)server->bytes);
        return;
    }
    double secs = put_receiver(p, server, r);
    double bytes = (double)server->bytes;
    double cpu = client->cpu.user_s + client->cpu.sys_s + server->cpu.user_s + server->cpu.sys_s;
    /* Raw framing counts the sender's writes, which only a local job sees next to the
     * receiver's clock. */
    if (secs > 0 && !is_lines(p))
        sm_result_set(r, SM_M_MSGS_PER_S, (double)client->msgs / secs);
    sm_io_put_cpu(client, server, r);
    if (bytes > 0)
        sm_result_set(r, SM_M_CPU_S_PER_GB, cpu / (bytes / 1e9));
    sm_io_put_tcp_info(client, r);
}

/* The receiver times the job; the sender reports what it wrote (for sm_result_merge_pair to
 * compare), its CPU and TCP_INFO. */
static void stream_finish_side(const sm_job *job, const sm_side *s, int is_server, sm_result *r)
{
    if (is_server) {
        put_receiver(job->p, s, r);
    } else {
        sm_result_set(r, SM_M_BYTES, (double)bytes_sent(job->p, s));
        sm_io_put_tcp_info(s, r);
    }
    sm_io_put_cpu_side(s, is_server, r);
}

const sm_workload_ops sm_workload_stream = {SM_WL_STREAM,  "stream",      stream_server,
                                            stream_client, stream_finish, stream_finish_side};
