/* Unit tests of the http workload's built-in source and the agent's TLS identity: the source
 * on a loopback listener, driven by raw sockets and an OpenSSL client. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "agent/net/socket.h"
#include "agent/workloads/tls.h"
#include "agent/workloads/http.h"

#define WINDOW  (256u * 1024u)
#define OK_HEAD "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: "
#define CLIENT_S                                                                                   \
    5000 /* the test client's own read timeout, so a broken source fails, not hangs                \
          */

/* The source on its own thread, with everything its job points to. */
typedef struct source_run {
    sm_params p;
    sm_pattern pat;
    sm_job job;
    sm_side side;
    int lfd;
    pthread_t thread;
    int rc;
} source_run;

static void *source_main(void *arg)
{
    source_run *r = arg;
    r->rc = sm_http_source_serve(&r->side, r->lfd);
    return NULL;
}

/* What a test may change before the source starts. */
typedef struct run_opts {
    uint32_t time_limit_ms;
    sm_fault fault;
    bool alone;
    uint32_t connections, repeat;
    const sm_tls_id *tls;
} run_opts;

/* The inode of the TCP socket from local port lport to remote port rport (here, the source's
 * end of the test client's connection), from /proc/net/tcp; 0 when there is none yet (an
 * accept queue's sockets have no inode until accepted). */
static unsigned long tcp_inode(unsigned lport, unsigned rport)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    assert_non_null(f);
    char line[512];
    unsigned long inode = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned lp, rp;
        unsigned long ino;
        if (sscanf(line, " %*u: %*x:%x %*x:%x %*x %*x:%*x %*x:%*x %*x %*u %*u %lu", &lp, &rp,
                   &ino) == 3 &&
            lp == lport && rp == rport) {
            inode = ino;
            break;
        }
    }
    fclose(f);
    return inode;
}

/* Whether a file descriptor of this process holds the socket with this inode. */
static bool socket_open(unsigned long inode)
{
    char want[64], path[300], link[64];
    snprintf(want, sizeof want, "socket:[%lu]", inode);
    DIR *dir = opendir("/proc/self/fd");
    assert_non_null(dir);
    bool open = false;
    struct dirent *e;
    while (!open && (e = readdir(dir))) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n > 0) {
            link[n] = '\0';
            open = strcmp(link, want) == 0;
        }
    }
    closedir(dir);
    return open;
}

/* The source's end of the client's connection fd: its socket's inode, waited for (bounded) until
 * the source has accepted it. */
static unsigned long source_end(const source_run *r, int fd)
{
    struct sockaddr_in me;
    socklen_t len = sizeof me;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &len), 0);
    unsigned long inode = 0;
    for (int i = 0; i < CLIENT_S / 10 && !inode; i++) {
        inode = tcp_inode(r->job.ep.port, ntohs(me.sin_port));
        if (!inode)
            nanosleep(&(struct timespec){0, 10 * 1000000L}, NULL);
    }
    assert_int_not_equal(inode, 0);
    return inode;
}

/* Waits (bounded by CLIENT_S ms) until the source has closed the socket with this inode. */
static void wait_source_closed(unsigned long inode)
{
    for (int i = 0; i < CLIENT_S / 10 && socket_open(inode); i++)
        nanosleep(&(struct timespec){0, 10 * 1000000L}, NULL);
    if (socket_open(inode))
        fail_msg("the source kept socket %lu open for %d ms after the client left", inode,
                 CLIENT_S);
}

static source_run *source_start(const run_opts *o)
{
    source_run *r = calloc(1, sizeof *r);
    sm_error err;
    assert_non_null(r);
    sm_params_init(&r->p, SM_WL_HTTP);
    r->p.time_limit_ms = o->time_limit_ms ? o->time_limit_ms : 10000;
    r->p.connections = o->connections ? o->connections : 1;
    r->p.repeat = o->repeat ? o->repeat : 1;
    r->p.tls = o->tls != NULL;
    assert_int_equal(sm_pattern_init_raw(&r->pat, WINDOW), 0);
    r->job.p = &r->p;
    r->job.tr = sm_transport_get(SM_TR_TCP);
    r->job.pat = &r->pat;
    r->job.fault = o->fault;
    r->job.alone = o->alone;
    r->job.tls = o->tls;
    snprintf(r->job.ep.host, sizeof r->job.ep.host, "127.0.0.1");
    assert_int_equal(r->job.tr->listen(&r->job.ep, &r->job.server_opts, &r->lfd, &err), 0);
    assert_int_not_equal(r->job.ep.port, 0);
    r->job.deadline_ns = sm_now_ns() + (uint64_t)r->p.time_limit_ms * 1000000u;
    r->side.job = &r->job;
    assert_int_equal(pthread_create(&r->thread, NULL, source_main, r), 0);
    return r;
}

/* Waits for the source to return, telling it first that the client is done (unless alone). */
static int source_join(source_run *r)
{
    if (!r->job.alone)
        atomic_store(&r->job.client_done, 1);
    assert_int_equal(pthread_join(r->thread, NULL), 0);
    return r->rc;
}

static void source_free(source_run *r)
{
    r->job.tr->unlisten(&r->job.ep, &r->lfd);
    sm_pattern_fini(&r->pat);
    free(r);
}

static int client_connect(const source_run *r)
{
    sm_sockopts o = {0};
    sm_error err;
    int fd = -1;
    assert_int_equal(sm_net_tcp_connect("127.0.0.1", r->job.ep.port, &o, 2000, &fd, &err), 0);
    assert_int_equal(sm_net_set_io_tick(fd, CLIENT_S, &err), 0);
    return fd;
}

static void send_str(int fd, const char *s)
{
    size_t len = strlen(s);
    while (len > 0) {
        ssize_t n = send(fd, s, len, MSG_NOSIGNAL);
        assert_true(n > 0);
        s += n;
        len -= (size_t)n;
    }
}

/* Reads a response head (through its empty line) into buf as a string. */
static void read_head(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n < 4 || memcmp(buf + n - 4, "\r\n\r\n", 4) != 0) {
        assert_true(n + 1 < cap);
        assert_int_equal(recv(fd, buf + n, 1, 0), 1);
        n++;
    }
    buf[n] = '\0';
}

static void read_exact(int fd, uint8_t *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = recv(fd, buf, len, 0);
        assert_true(n > 0);
        buf += n;
        len -= (size_t)n;
    }
}

static void assert_eof(int fd)
{
    char c;
    assert_int_equal(recv(fd, &c, 1, 0), 0);
}

static void assert_ok_head(const char *head, uint64_t size, const char *extra)
{
    char want[256];
    snprintf(want, sizeof want, OK_HEAD "%llu\r\n%s\r\n", (unsigned long long)size, extra);
    assert_string_equal(head, want);
}

/* Reads a 200 with exactly the source's headers and a body of size pattern bytes. */
static void read_ok_body(const source_run *r, int fd, uint64_t size, const char *extra)
{
    char head[512];
    read_head(fd, head, sizeof head);
    assert_ok_head(head, size, extra);
    uint8_t *body = malloc(size);
    assert_non_null(body);
    read_exact(fd, body, size);
    assert_int_equal(sm_pattern_check(&r->pat, 0, body, size), -1);
    free(body);
}

static void get(int fd, uint64_t size, const char *headers)
{
    char req[256];
    snprintf(req, sizeof req, "GET /bytes/%llu HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n",
             (unsigned long long)size, headers);
    send_str(fd, req);
}

static void test_http_source_get_answers_exact_headers_and_pattern_body(void **state)
{
    (void)state;
    run_opts o = {0};
    source_run *r = source_start(&o);
    int fd = client_connect(r);
    get(fd, 1000, "");
    char head[512];
    uint8_t body[1000];
    read_head(fd, head, sizeof head);
    assert_string_equal(head, OK_HEAD "1000\r\n\r\n");
    read_exact(fd, body, sizeof body);
    assert_memory_equal(body, sm_pattern_at(&r->pat, 0), sizeof body);
    close(fd);
    assert_int_equal(source_join(r), 0);
    assert_int_equal(r->side.msgs, 1);
    assert_int_equal(r->side.bytes, 1000);
    source_free(r);
}

static void test_http_source_keeps_the_connection_for_a_second_request(void **state)
{
    (void)state;
    run_opts o = {0};
    source_run *r = source_start(&o);
    int fd = client_connect(r);
    get(fd, 1000, "");
    read_ok_body(r, fd, 1000, "");
    /* Larger than the pattern's window: the body goes out in several writes. */
    get(fd, 3 * WINDOW + 7, "");
    read_ok_body(r, fd, 3 * WINDOW + 7, "");
    close(fd);
    assert_int_equal(source_join(r), 0);
    assert_int_equal(r->side.msgs, 2);
    assert_int_equal(r->side.bytes, 1000 + 3 * WINDOW + 7);
    source_free(r);
}

static void test_http_source_answers_pipelined_requests_in_order(void **state)
{
    (void)state;
    run_opts o = {0};
    source_run *r = source_start(&o);
    int fd = client_connect(r);
    send_str(fd,
             "GET /bytes/10 HTTP/1.1\r\nHost: a\r\n\r\nGET /bytes/20 HTTP/1.1\r\nHost: a\r\n\r\n"
             "GET /bytes/30 HTTP/1.1\n\n");
    read_ok_body(r, fd, 10, "");
    read_ok_body(r, fd, 20, "");
    read_ok_body(r, fd, 30, "");
    close(fd);
    assert_int_equal(source_join(r), 0);
    assert_int_equal(r->side.msgs, 3);
    assert_int_equal(r->side.bytes, 60);
    source_free(r);
}

static void test_http_source_closes_after_the_body_on_connection_close(void **state)
{
    (void)state;
    run_opts o = {0};
    source_run *r = source_start(&o);
    int fd = client_connect(r);
    get(fd, 500, "Connection: Close\r\n");
    read_ok_body(r, fd, 500, "Connection: close\r\n");
    assert_eof(fd);
    close(fd);
    /* HTTP/1.0 closes unless the client asks to keep the connection. */
    fd = client_connect(r);
    send_str(fd, "GET /bytes/5 HTTP/1.0\r\n\r\n");
    read_ok_body(r, fd, 5, "Connection: close\r\n");
    assert_eof(fd);
    close(fd);
    fd = client_connect(r);
    send_str(fd, "GET /bytes/6 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    read_ok_body(r, fd, 6, "Connection: keep-alive\r\n");
    get(fd, 7, "");
    read_ok_body(r, fd, 7, "");
    close(fd);
    assert_int_equal(source_join(r), 0);
    assert_int_equal(r->side.msgs, 4);
    source_free(r);
}

/* Sends req and expects `status` with Connection: close, its body, then the close. */
static void expect_bad(const source_run *r, const char *req, int status)
{
    char head[512], want[32];
    int fd = client_connect(r);
    send_str(fd, req);
    read_head(fd, head, sizeof head);
    snprintf(want, sizeof want, "HTTP/1.1 %d ", status);
    assert_memory_equal(head, want, strlen(want));
    assert_non_null(strstr(head, "\r\nConnection: close\r\n"));
    const char *cl = strstr(head, "\r\nContent-Length: ");
    assert_non_null(cl);
    size_t len = strtoul(cl + 18, NULL, 10);
    uint8_t body[256];
    assert_true(len > 0 && len <= sizeof body);
    read_exact(fd, body, len);
    assert_eof(fd);
    close(fd);
}

static void test_http_source_answers_bad_requests_and_closes(void **state)
{
    (void)state;
    run_opts o = {0};
    source_run *r = source_start(&o);
    expect_bad(r, "POST /bytes/10 HTTP/1.1\r\nHost: a\r\n\r\n", 405);
    expect_bad(r, "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n", 404);
    expect_bad(r, "GET /bytes/0 HTTP/1.1\r\nHost: a\r\n\r\n", 404);
    expect_bad(r, "GET /bytes/17179869185 HTTP/1.1\r\nHost: a\r\n\r\n", 404);
    expect_bad(r, "GET /bytes/abc HTTP/1.1\r\nHost: a\r\n\r\n", 400);
    expect_bad(r, "GET /bytes/10 HTTP/2.0\r\nHost: a\r\n\r\n", 400);
    expect_bad(r, "GET /bytes/10 HTTP/1.1\r\nno colon here\r\n\r\n", 400);
    expect_bad(r, "GET /bytes/10 HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 400);
    size_t big = 9 * 1024;
    char *req = malloc(big + 64);
    assert_non_null(req);
    int n = snprintf(req, big + 64, "GET /bytes/10 HTTP/1.1\r\nHost: a\r\nX-Big: ");
    memset(req + n, 'a', big);
    memcpy(req + n + big, "\r\n\r\n", 5);
    expect_bad(r, req, 431);
    free(req);
    /* A bad request ends its connection, not the job. */
    int fd = client_connect(r);
    get(fd, 10, "");
    read_ok_body(r, fd, 10, "");
    close(fd);
    assert_int_equal(source_join(r), 0);
    assert_int_equal(r->side.msgs, 1);
    assert_int_equal(r->side.bytes, 10);
    source_free(r);
}

/* "sha256//" + base64 of the SHA-256 of the DER public key, computed apart from agent/workloads/tls.c. */
static void pin_of_cert(X509 *cert, char *out, size_t cap)
{
    unsigned char *der = NULL, md[32];
    unsigned int mdlen = 0;
    int len = i2d_PUBKEY(X509_get0_pubkey(cert), &der);
    assert_true(len > 0);
    assert_int_equal(EVP_Digest(der, (size_t)len, md, &mdlen, EVP_sha256(), NULL), 1);
    OPENSSL_free(der);
    assert_int_equal(mdlen, 32);
    assert_true(cap >= 8 + 45);
    memcpy(out, "sha256//", 8);
    assert_int_equal(EVP_EncodeBlock((unsigned char *)out + 8, md, 32), 44);
}

static SSL *tls_connect(SSL_CTX *ctx, int fd)
{
    SSL *ssl = SSL_new(ctx);
    assert_non_null(ssl);
    assert_int_equal(SSL_set_fd(ssl, fd), 1);
    assert_int_equal(SSL_set_alpn_protos(ssl, (const unsigned char *)"\x02h2\x08http/1.1", 12), 0);
    assert_int_equal(SSL_connect(ssl), 1);
    return ssl;
}

static SSL_CTX *client_ctx(void)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(ctx);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    return ctx;
}

static void tls_read_exact(SSL *ssl, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        int n = SSL_read(ssl, p, (int)len);
        assert_true(n > 0);
        p += n;
        len -= (size_t)n;
    }
}

static void test_http_source_serves_over_tls_with_the_pinned_key(void **state)
{
    (void)state;
    sm_tls_id *id = NULL;
    sm_error err;
    assert_int_equal(sm_tls_id_new(&id, &err), 0);
    run_opts o = {.tls = id};
    source_run *r = source_start(&o);
    SSL_CTX *ctx = client_ctx();
    int fd = client_connect(r);
    SSL *ssl = tls_connect(ctx, fd);

    const unsigned char *alpn = NULL;
    unsigned int alpn_len = 0;
    SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
    assert_int_equal(alpn_len, 8);
    assert_memory_equal(alpn, "http/1.1", 8);
    assert_true(SSL_version(ssl) >= TLS1_2_VERSION);
    X509 *cert = SSL_get1_peer_certificate(ssl);
    assert_non_null(cert);
    char pin[SM_PIN_MAX + 1] = {0};
    pin_of_cert(cert, pin, sizeof pin);
    assert_string_equal(pin, sm_tls_id_pin(id));
    char cn[64];
    assert_true(
        X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn) > 0);
    assert_string_equal(cn, "sockmatrix-agent");
    assert_int_equal(X509_check_issued(cert, cert), X509_V_OK);
    X509_free(cert);

    for (int i = 0; i < 2; i++) {
        const char req[] = "GET /bytes/300000 HTTP/1.1\r\nHost: a\r\n\r\n";
        assert_int_equal(SSL_write(ssl, req, (int)strlen(req)), (int)strlen(req));
        char head[sizeof OK_HEAD + 16];
        tls_read_exact(ssl, head, sizeof OK_HEAD - 1 + 10);
        head[sizeof OK_HEAD - 1 + 10] = '\0';
        assert_string_equal(head, OK_HEAD "300000\r\n\r\n");
        uint8_t *body = malloc(300000);
        assert_non_null(body);
        tls_read_exact(ssl, body, 300000);
        assert_int_equal(sm_pattern_check(&r->pat, 0, body, 300000), -1);
        free(body);
    }
    SSL_shutdown(ssl);
    SSL_free(ssl);
    close(fd);
    SSL_CTX_free(ctx);
    assert_int_equal(source_join(r), 0);
    assert_int_equal(r->side.msgs, 2);
    assert_int_equal(r->side.bytes, 600000);
    source_free(r);
    sm_tls_id_free(id);
}

/* A client that closes with most of a body unread gets a reset; the source's next write then
 * fails with EPIPE, which must neither raise SIGPIPE (this test process keeps its default
 * action, which would kill it) nor fail the job. */
static void vanish_mid_body(const sm_tls_id *id)
{
    run_opts o = {.tls = id};
    source_run *r = source_start(&o);
    SSL_CTX *ctx = id ? client_ctx() : NULL;
    int fd = client_connect(r);
    SSL *ssl = id ? tls_connect(ctx, fd) : NULL;
    const char req[] = "GET /bytes/100000000 HTTP/1.1\r\nHost: a\r\n\r\n";
    uint8_t buf[4096];
    if (ssl) {
        assert_int_equal(SSL_write(ssl, req, (int)strlen(req)), (int)strlen(req));
        tls_read_exact(ssl, buf, sizeof buf);
        SSL_free(ssl);
    } else {
        send_str(fd, req);
        read_exact(fd, buf, sizeof buf);
    }
    close(fd);
    /* The source serves the next client as if nothing happened. */
    fd = client_connect(r);
    ssl = id ? tls_connect(ctx, fd) : NULL;
    if (ssl) {
        const char req2[] = "GET /bytes/10 HTTP/1.1\r\nHost: a\r\n\r\n";
        assert_int_equal(SSL_write(ssl, req2, (int)strlen(req2)), (int)strlen(req2));
        char head[sizeof OK_HEAD + 6];
        tls_read_exact(ssl, head, sizeof OK_HEAD - 1 + 6);
        head[sizeof OK_HEAD - 1 + 6] = '\0';
        assert_string_equal(head, OK_HEAD "10\r\n\r\n");
        SSL_free(ssl);
    } else {
        get(fd, 10, "");
        read_ok_body(r, fd, 10, "");
    }
    close(fd);
    SSL_CTX_free(ctx);
    assert_int_equal(source_join(r), 0);
    assert_int_equal(r->side.msgs, 1);
    assert_true(r->side.bytes < 100000000);
    source_free(r);
}

static void test_http_source_survives_a_client_that_vanishes_mid_body(void **state)
{
    (void)state;
    sm_tls_id *id = NULL;
    sm_error err;
    vanish_mid_body(NULL);
    assert_int_equal(sm_tls_id_new(&id, &err), 0);
    vanish_mid_body(id);
    sm_tls_id_free(id);
}

static void test_http_source_stall_fault_times_out_while_the_client_waits(void **state)
{
    (void)state;
    run_opts o = {.time_limit_ms = 300, .fault = SM_FAULT_STALL};
    source_run *r = source_start(&o);
    uint64_t t0 = sm_now_ns();
    int fd = client_connect(r);
    get(fd, 100000, "");
    char head[512];
    uint8_t *body = malloc(50000);
    assert_non_null(body);
    read_head(fd, head, sizeof head);
    assert_ok_head(head, 100000, "");
    read_exact(fd, body, 50000);
    assert_int_equal(sm_pattern_check(&r->pat, 0, body, 50000), -1);
    free(body);
    /* The client holds the connection; the source must give up by itself. */
    assert_int_equal(pthread_join(r->thread, NULL), 0);
    uint64_t ms = (sm_now_ns() - t0) / 1000000u;
    assert_int_equal(r->rc, SM_ETIMEDOUT);
    assert_int_equal(r->side.err.code, SM_ETIMEDOUT);
    assert_non_null(strstr(r->side.err.msg, "time limit of 300 ms reached while"));
    assert_true(ms < 1500);
    assert_int_equal(atomic_load(&r->job.cancel), 1);
    assert_int_equal(r->side.bytes, 50000);
    assert_int_equal(r->side.msgs, 0);
    close(fd);
    source_free(r);
}

/* A reset seen while the body stalls (recv takes the error, so the next write meets EPIPE): the
 * source's TLS close_notify must not raise SIGPIPE in this process. */
static void test_http_source_stalled_tls_connection_survives_a_reset(void **state)
{
    (void)state;
    sm_tls_id *id = NULL;
    sm_error err;
    assert_int_equal(sm_tls_id_new(&id, &err), 0);
    run_opts o = {.fault = SM_FAULT_STALL, .tls = id};
    source_run *r = source_start(&o);
    SSL_CTX *ctx = client_ctx();
    int fd = client_connect(r);
    SSL *ssl = tls_connect(ctx, fd);
    const char req[] = "GET /bytes/100000 HTTP/1.1\r\nHost: a\r\n\r\n";
    char head[sizeof OK_HEAD + 10];
    uint8_t *body = malloc(50000);
    assert_non_null(body);
    assert_int_equal(SSL_write(ssl, req, (int)strlen(req)), (int)strlen(req));
    tls_read_exact(ssl, head, sizeof OK_HEAD - 1 + 10);
    tls_read_exact(ssl, body, 50000);
    assert_int_equal(sm_pattern_check(&r->pat, 0, body, 50000), -1);
    free(body);
    SSL_free(ssl);
    const unsigned long source_fd = source_end(r, fd);
    /* Every byte of the half body is in; now a reset rather than a FIN. */
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
    close(fd);
    /* The stalled connection sees the reset and closes (within a few ticks) before the join,
     * which would otherwise end it first. */
    wait_source_closed(source_fd);
    SSL_CTX_free(ctx);
    assert_int_equal(source_join(r), 0);
    assert_int_equal(r->side.msgs, 0);
    assert_int_equal(r->side.bytes, 50000);
    source_free(r);
    sm_tls_id_free(id);
}

static void test_http_source_short_fault_closes_after_half_the_body(void **state)
{
    (void)state;
    run_opts o = {.fault = SM_FAULT_SHORT};
    source_run *r = source_start(&o);
    int fd = client_connect(r);
    get(fd, 1001, "");
    char head[512];
    uint8_t body[600];
    read_head(fd, head, sizeof head);
    assert_ok_head(head, 1001, "");
    read_exact(fd, body, 500);
    assert_memory_equal(body, sm_pattern_at(&r->pat, 0), 500);
    assert_eof(fd);
    close(fd);
    assert_int_equal(source_join(r), 0);
    assert_int_equal(r->side.bytes, 500);
    source_free(r);
}

static void test_http_source_corrupt_fault_flips_the_middle_byte(void **state)
{
    (void)state;
    run_opts o = {.fault = SM_FAULT_CORRUPT};
    source_run *r = source_start(&o);
    int fd = client_connect(r);
    get(fd, 3 * WINDOW, "");
    char head[512];
    uint8_t *body = malloc(3 * WINDOW);
    assert_non_null(body);
    read_head(fd, head, sizeof head);
    assert_ok_head(head, 3 * WINDOW, "");
    read_exact(fd, body, 3 * WINDOW);
    assert_int_equal(sm_pattern_check(&r->pat, 0, body, 3 * WINDOW), 3 * WINDOW / 2);
    body[3 * WINDOW / 2] ^= 0x5a;
    assert_int_equal(sm_pattern_check(&r->pat, 0, body, 3 * WINDOW), -1);
    free(body);
    close(fd);
    assert_int_equal(source_join(r), 0);
    assert_int_equal(r->side.bytes, 3 * WINDOW);
    source_free(r);
}

static void test_http_source_ends_cancelled_when_the_other_side_fails(void **state)
{
    (void)state;
    run_opts o = {0};
    source_run *r = source_start(&o);
    int fd = client_connect(r);
    get(fd, 10, "");
    read_ok_body(r, fd, 10, "");
    atomic_store(&r->job.cancel, 1);
    assert_int_equal(pthread_join(r->thread, NULL), 0);
    assert_int_equal(r->rc, SM_ECANCELED);
    assert_non_null(strstr(r->side.err.msg, "the other side failed"));
    close(fd);
    source_free(r);
}

static void test_http_source_alone_ends_after_connections_times_repeat(void **state)
{
    (void)state;
    run_opts o = {.alone = true, .connections = 1, .repeat = 2, .time_limit_ms = 5000};
    source_run *r = source_start(&o);
    int fd = client_connect(r);
    get(fd, 4321, "");
    read_ok_body(r, fd, 4321, "");
    get(fd, 4321, "");
    read_ok_body(r, fd, 4321, "");
    close(fd);
    /* No client_done in a pair job: the source must end by itself, before its time limit. */
    uint64_t t0 = sm_now_ns();
    assert_int_equal(source_join(r), 0);
    assert_true(sm_now_ns() - t0 < 2000000000ull);
    assert_int_equal(r->side.msgs, 2);
    assert_int_equal(r->side.bytes, 2 * 4321);
    source_free(r);
}

static void test_tls_pin_of_the_written_pem_equals_the_identity_pin(void **state)
{
    (void)state;
    sm_tls_id *id = NULL;
    sm_error err;
    char dir[] = "/tmp/sm-test-tls-XXXXXX", path[64], pin[SM_PIN_MAX + 1];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/cert.pem", dir);
    assert_int_equal(sm_tls_id_new(&id, &err), 0);
    assert_int_equal(sm_tls_id_write_pem(id, path, &err), 0);

    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char pem[4096];
    size_t len = fread(pem, 1, sizeof pem, f);
    fclose(f);
    assert_true(len > 0 && len < sizeof pem);
    pem[len] = '\0';
    assert_non_null(strstr(pem, "-----BEGIN CERTIFICATE-----"));
    assert_null(strstr(pem, "PRIVATE KEY"));
    assert_int_equal(sm_tls_pin_of_pem(pem, len, pin, &err), 0);
    assert_string_equal(pin, sm_tls_id_pin(id));
    assert_int_equal(strlen(pin), 8 + 44);
    assert_memory_equal(pin, "sha256//", 8);

    /* Another identity has another key. */
    sm_tls_id *other = NULL;
    assert_int_equal(sm_tls_id_new(&other, &err), 0);
    assert_string_not_equal(sm_tls_id_pin(other), sm_tls_id_pin(id));
    sm_tls_id_free(other);

    assert_int_equal(sm_tls_pin_of_pem("not a certificate", 17, pin, &err), SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    assert_string_equal(pin, "");
    sm_tls_id_free(id);
    sm_tls_id_free(NULL);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_source_get_answers_exact_headers_and_pattern_body),
        cmocka_unit_test(test_http_source_keeps_the_connection_for_a_second_request),
        cmocka_unit_test(test_http_source_answers_pipelined_requests_in_order),
        cmocka_unit_test(test_http_source_closes_after_the_body_on_connection_close),
        cmocka_unit_test(test_http_source_answers_bad_requests_and_closes),
        cmocka_unit_test(test_http_source_serves_over_tls_with_the_pinned_key),
        cmocka_unit_test(test_http_source_survives_a_client_that_vanishes_mid_body),
        cmocka_unit_test(test_http_source_stall_fault_times_out_while_the_client_waits),
        cmocka_unit_test(test_http_source_stalled_tls_connection_survives_a_reset),
        cmocka_unit_test(test_http_source_short_fault_closes_after_half_the_body),
        cmocka_unit_test(test_http_source_corrupt_fault_flips_the_middle_byte),
        cmocka_unit_test(test_http_source_ends_cancelled_when_the_other_side_fails),
        cmocka_unit_test(test_http_source_alone_ends_after_connections_times_repeat),
        cmocka_unit_test(test_tls_pin_of_the_written_pem_equals_the_identity_pin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
