/* Unit tests of a data socket's options (agent/net/socket.c) on a real loopback connection:
 * what a treatment's socket parts set (TCP_CONGESTION and TCP_NOTSENT_LOWAT on both ends,
 * TCP_CORK on the sender) reads back from the kernel, and a congestion control the kernel
 * does not have fails the connection, naming it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/net/socket.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int get_int(int fd, int name)
{
    int v = -1;
    socklen_t len = sizeof v;
    assert_int_equal(getsockopt(fd, IPPROTO_TCP, name, &v, &len), 0);
    return v;
}

static const char *get_cc(int fd, char buf[16])
{
    socklen_t len = 16;
    memset(buf, 0, 16);
    assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, buf, &len), 0);
    return buf;
}

/* A connection with o on both ends: the listener, the client and the accepted socket. */
static int connect_pair(const sm_sockopts *o, int fds[3], sm_error *err)
{
    uint16_t port = 0;
    int rc = sm_net_tcp_listen("127.0.0.1", 0, o, &fds[0], &port, err);
    if (rc)
        return rc;
    rc = sm_net_tcp_connect("127.0.0.1", port, o, 2000, &fds[1], err);
    if (rc) {
        close(fds[0]);
        return rc;
    }
    rc = sm_net_accept(fds[0], true, o, 2000, &fds[2], err);
    if (rc) {
        close(fds[0]);
        close(fds[1]);
    }
    return rc;
}

static void test_a_treatments_socket_options_read_back_on_both_ends(void **state)
{
    (void)state;
    char cc[16];
    int fds[3];
    sm_error err = {0};
    /* The kernel's own first, so that the treated ones are seen to change it. */
    const sm_sockopts plain = {0};
    assert_int_equal(connect_pair(&plain, fds, &err), 0);
    char deflt[16];
    get_cc(fds[1], deflt);
    const char *other = strcmp(deflt, "reno") == 0 ? "cubic" : "reno";
    const int lowat = get_int(fds[1], TCP_NOTSENT_LOWAT);
    assert_int_not_equal(lowat, 16384);
    for (int i = 0; i < 3; i++)
        close(fds[i]);

    const sm_sockopts o = {
        .nodelay = true, .cork = true, .congestion = other, .notsent_lowat = 16384};
    if (connect_pair(&o, fds, &err) != 0)
        fail_msg("%s", err.msg);
    for (int i = 1; i < 3; i++) {
        assert_string_equal(get_cc(fds[i], cc), other);
        assert_int_equal(get_int(fds[i], TCP_NOTSENT_LOWAT), 16384);
        assert_int_equal(get_int(fds[i], TCP_NODELAY), 1);
    }
    assert_int_equal(get_int(fds[1], TCP_CORK), 1); /* the sender's alone */
    assert_int_equal(get_int(fds[2], TCP_CORK), 0);
    for (int i = 0; i < 3; i++)
        close(fds[i]);
}

static void test_a_congestion_control_the_kernel_lacks_fails_naming_it(void **state)
{
    (void)state;
    int fds[3];
    sm_error err = {0};
    const sm_sockopts o = {.congestion = "nosuch_cc"};
    assert_int_not_equal(connect_pair(&o, fds, &err), 0);
    assert_non_null(strstr(err.msg, "setsockopt TCP_CONGESTION=nosuch_cc"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_treatments_socket_options_read_back_on_both_ends),
        cmocka_unit_test(test_a_congestion_control_the_kernel_lacks_fails_naming_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
