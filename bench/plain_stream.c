/* sm-bench-plain: a bulk stream with the least code, the yardstick of the stream workload.
 *
 * One sender thread (CPU 0) writes a fixed pattern in W-byte writes; the receiver (this
 * thread, CPU 1) reads it in R-byte reads and checks every byte as our receiver does: the
 * same xorshift64 pattern with the same prime period (agent/workloads/pattern.c), one memcmp
 * per read against a buffer that holds a period and a window. The receiver takes t0 with
 * CLOCK_MONOTONIC, sends one "go" byte, and t1 after the last byte: the interval our stream
 * workload reports. Nothing of the agent is linked: the yardstick must not share the code it
 * measures.
 *
 *   sm-bench-plain --transport unix|tcp --msg-size W --bytes N [--read-size R] [--no-check]
 *                  [--tick-ms T]
 *
 * --tick-ms sets SO_RCVTIMEO and SO_SNDTIMEO as the agent's io tick does (a diagnostic: what
 * a blocking call with a timeout costs against one without).
 *
 * Prints one JSON object: bytes, seconds, throughput_MBps (10^6 bytes/s), CPU of each thread. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PERIOD       65521u /* SM_PATTERN_RAW_PERIOD */
#define SENDER_CPU   0
#define RECEIVER_CPU 1

typedef struct plain {
    int tcp;
    int check;
    int tick_ms; /* SO_RCVTIMEO/SO_SNDTIMEO on both ends, as the agent's io tick; 0 none */
    size_t msg_size, read_size;
    uint64_t total;
    uint8_t *pat; /* PERIOD + window bytes: pat[i] == pat[i % PERIOD] */
    int tx_fd, rx_fd;
    int tx_rc;
    double tx_cpu_s;
} plain;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double thread_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* The agent's raw pattern: xorshift64 from the same seed, the same byte of each state. */
static uint8_t *make_pattern(size_t window)
{
    uint8_t *p = malloc(PERIOD + window);
    if (!p)
        return NULL;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < PERIOD; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)(x >> 24);
    }
    for (size_t i = PERIOD; i < PERIOD + window; i++)
        p[i] = p[i - PERIOD];
    return p;
}

static void *sender(void *arg)
{
    plain *pl = arg;
    char go;
    pl->tx_rc = 1;
    if (pin(SENDER_CPU) != 0 || read(pl->tx_fd, &go, 1) != 1)
        return NULL;
    double cpu0 = thread_cpu_s();
    uint64_t off = 0;
    while (off < pl->total) {
        size_t n = pl->total - off < pl->msg_size ? (size_t)(pl->total - off) : pl->msg_size;
        ssize_t w = send(pl->tx_fd, pl->pat + off % PERIOD, n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w <= 0) {
            perror("sm-bench-plain: send");
            return NULL;
        }
        off += (uint64_t)w;
    }
    shutdown(pl->tx_fd, SHUT_WR);
    pl->tx_cpu_s = thread_cpu_s() - cpu0;
    pl->tx_rc = 0;
    return NULL;
}

/* A connected pair: socketpair for unix, a loopback connection through a listener for tcp. */
static int connect_pair(plain *pl)
{
    int sv[2];
    if (!pl->tcp) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
            return -1;
        pl->tx_fd = sv[0];
        pl->rx_fd = sv[1];
        return 0;
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &len) != 0)
        return -1;
    pl->tx_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (pl->tx_fd < 0 || connect(pl->tx_fd, (struct sockaddr *)&a, sizeof a) != 0)
        return -1;
    pl->rx_fd = accept(l, NULL, NULL);
    close(l);
    return pl->rx_fd < 0 ? -1 : 0;
}

static int set_tick(int fd, int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) ||
           setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int receive(plain *pl, uint8_t *buf, uint64_t *got_total, uint64_t *t0, uint64_t *t1)
{
    uint64_t off = 0;
    *t0 = now_ns();
    if (write(pl->rx_fd, "G", 1) != 1)
        return -1;
    for (;;) {
        ssize_t n = read(pl->rx_fd, buf, pl->read_size);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        if (pl->check && memcmp(pl->pat + off % PERIOD, buf, (size_t)n) != 0) {
            fprintf(stderr, "sm-bench-plain: a byte differs in [%llu, %llu)\n",
                    (unsigned long long)off, (unsigned long long)(off + (uint64_t)n));
            return -1;
        }
        off += (uint64_t)n;
        if (off == pl->total)
            *t1 = now_ns();
    }
    *got_total = off;
    return 0;
}

static uint64_t size_arg(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    switch (*end) {
    case 'K':
        return v << 10;
    case 'M':
        return v << 20;
    case 'G':
        return v << 30;
    default:
        return v;
    }
}

int main(int argc, char **argv)
{
    plain pl = {.check = 1, .msg_size = 128u << 10, .total = 1ull << 30};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(argv[i], "--no-check"))
            pl.check = 0;
        else if (!strcmp(argv[i], "--transport") && ++i)
            pl.tcp = !strcmp(v, "tcp");
        else if (!strcmp(argv[i], "--msg-size") && ++i)
            pl.msg_size = (size_t)size_arg(v);
        else if (!strcmp(argv[i], "--read-size") && ++i)
            pl.read_size = (size_t)size_arg(v);
        else if (!strcmp(argv[i], "--tick-ms") && ++i)
            pl.tick_ms = atoi(v);
        else if (!strcmp(argv[i], "--bytes") && ++i)
            pl.total = size_arg(v);
        else {
            fprintf(stderr, "usage: sm-bench-plain --transport unix|tcp --msg-size W --bytes N "
                            "[--read-size R] [--no-check] [--tick-ms T]\n");
            return 2;
        }
    }
    /* The agent's default read size: 128 KiB, or the write size when larger. */
    if (!pl.read_size)
        pl.read_size = pl.msg_size > (128u << 10) ? pl.msg_size : 128u << 10;
    if (!pl.msg_size || !pl.total)
        return 2;
    size_t window = pl.msg_size > pl.read_size ? pl.msg_size : pl.read_size;
    uint8_t *buf = malloc(pl.read_size);
    pl.pat = make_pattern(window);
    if (!buf || !pl.pat || pin(RECEIVER_CPU) != 0 || connect_pair(&pl) != 0 ||
        (pl.tick_ms && (set_tick(pl.tx_fd, pl.tick_ms) || set_tick(pl.rx_fd, pl.tick_ms)))) {
        perror("sm-bench-plain: setup");
        return 1;
    }
    pthread_t th;
    if (pthread_create(&th, NULL, sender, &pl) != 0)
        return 1;
    uint64_t got = 0, t0 = 0, t1 = 0;
    double cpu0 = thread_cpu_s();
    int rc = receive(&pl, buf, &got, &t0, &t1);
    double rx_cpu = thread_cpu_s() - cpu0;
    pthread_join(th, NULL);
    if (rc != 0 || pl.tx_rc != 0 || got != pl.total) {
        fprintf(stderr, "sm-bench-plain: failed after %llu of %llu bytes\n",
                (unsigned long long)got, (unsigned long long)pl.total);
        return 1;
    }
    double secs = (double)(t1 - t0) / 1e9;
    printf("{\"transport\": \"%s\", \"check\": %s, \"msg_size\": %zu, \"read_size\": %zu, "
           "\"bytes\": %llu, \"seconds\": %.9f, \"throughput_MBps\": %.3f, "
           "\"tx_cpu_s\": %.6f, \"rx_cpu_s\": %.6f}\n",
           pl.tcp ? "tcp" : "unix", pl.check ? "true" : "false", pl.msg_size, pl.read_size,
           (unsigned long long)got, secs, (double)got / secs / 1e6, pl.tx_cpu_s, rx_cpu);
    close(pl.tx_fd);
    close(pl.rx_fd);
    free(pl.pat);
    free(buf);
    return 0;
}
