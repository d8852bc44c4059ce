/* Unit tests of a treatment's host parts (agent/experiment/treat.c) on a real kernel: in a
 * network namespace of the test's own (unshare), a sysctl and lo's offloads are changed for a
 * job, read back, undone after it (the host's fingerprint then as it was before), and undone
 * at the next start when the job's process was killed in between; what may not or cannot be changed
 * fails the job and leaves the host as it was. Needs root for the namespace: without it the test
 * says so and exits 77 (skipped), unless SM_REQUIRE_ROOT_TESTS=1 (make test as root), where that is
 * a failure. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/experiment/treat.h"
#include "proto/params.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEEPALIVE      "/proc/sys/net/ipv4/tcp_keepalive_time"
#define SOMAXCONN_PATH "/proc/sys/net/core/somaxconn"

static char dir[64];

/* The file's first line, without its newline. */
static const char *line_of(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, (int)cap, f));
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

static void write_file(const char *path, const char *v)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(v, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* lo's offload by the ethtool ioctl, read here on its own: 1, 0. */
static int offload(uint32_t cmd)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct ethtool_value ev = {.cmd = cmd, .data = 0};
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    ifr.ifr_data = (void *)&ev;
    assert_int_equal(ioctl(fd, SIOCETHTOOL, &ifr), 0);
    close(fd);
    return ev.data != 0;
}

static bool journal_exists(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/.treatment.journal", dir);
    return access(path, F_OK) == 0;
}

static int begin(sm_treat_ctx *c, const char *treatment, sm_error *err)
{
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    snprintf(p.treatment, sizeof p.treatment, "%s", treatment);
    return sm_treat_begin(c, &p, err);
}

static int setup(void **state)
{
    (void)state;
    char buf[32];
    write_file(KEEPALIVE, "7200");
    assert_string_equal(line_of(KEEPALIVE, buf, sizeof buf), "7200");
    assert_int_equal(offload(ETHTOOL_GGSO), 1);
    assert_int_equal(offload(ETHTOOL_GGRO), 1);
    assert_false(journal_exists());
    return 0;
}

static void test_a_sysctl_and_an_offload_are_made_and_undone(void **state)
{
    (void)state;
    sm_treat_ctx c = {.dir = dir, .allow = SM_ALLOW_SYSCTL | SM_ALLOW_OFFLOAD};
    sm_error err = {0};
    char buf[32];
    assert_int_equal(begin(&c, "sysctl net.ipv4.tcp_keepalive_time=7201; offload lo gso=off", &err),
                     0);
    assert_true(c.active);
    assert_string_equal(line_of(KEEPALIVE, buf, sizeof buf), "7201");
    assert_int_equal(offload(ETHTOOL_GGSO), 0);
    assert_int_equal(offload(ETHTOOL_GGRO), 1); /* only what the treatment names */
    assert_true(journal_exists());
    assert_int_equal(sm_treat_end(&c, &err), 0);
    assert_false(c.active);
    assert_string_equal(line_of(KEEPALIVE, buf, sizeof buf), "7200");
    assert_int_equal(offload(ETHTOOL_GGSO), 1);
    assert_false(journal_exists());
}

/* Something else changed the host while the treated job ran: the undo reads back, but the
 * fingerprint before and after differ, and the job fails naming what changed. */
static void test_a_host_that_changed_under_the_treatment_fails_the_job(void **state)
{
    (void)state;
    sm_treat_ctx c = {.dir = dir, .allow = SM_ALLOW_SYSCTL | SM_ALLOW_OFFLOAD};
    sm_error err = {0};
    char buf[32], old[32];
    snprintf(old, sizeof old, "%s", line_of(SOMAXCONN_PATH, buf, sizeof buf));
    assert_int_equal(begin(&c, "offload lo gso=off", &err), 0);
    assert_non_null(c.before);
    write_file(SOMAXCONN_PATH, strcmp(old, "1111") == 0 ? "1112" : "1111");
    assert_int_equal(sm_treat_end(&c, &err), SM_ESYS);
    assert_non_null(strstr(err.msg, "treatment: the host's fingerprint differs after the undo in "
                                    "1 item: sysctl.net.core.somaxconn '"));
    assert_null(c.before);
    assert_int_equal(offload(ETHTOOL_GGSO), 1); /* the treatment itself was undone */
    assert_false(journal_exists());
    write_file(SOMAXCONN_PATH, old);

    /* Left as it was, the same treatment ends cleanly. */
    assert_int_equal(begin(&c, "offload lo gso=off", &err), 0);
    assert_int_equal(sm_treat_end(&c, &err), 0);
    assert_null(c.before);
}

static void test_a_killed_job_is_undone_at_the_next_start(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sm_treat_ctx c = {.dir = dir, .allow = SM_ALLOW_SYSCTL | SM_ALLOW_OFFLOAD};
        sm_error err = {0};
        if (begin(&c, "offload lo gro=off; sysctl net.ipv4.tcp_keepalive_time=7201", &err) != 0)
            _exit(1);
        raise(SIGKILL); /* the job's process dies with the treatment in place */
        _exit(2);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    char buf[32];
    assert_string_equal(line_of(KEEPALIVE, buf, sizeof buf), "7201");
    assert_int_equal(offload(ETHTOOL_GGRO), 0);
    assert_true(journal_exists());

    sm_treat_ctx c = {.dir = dir, .allow = 0};
    sm_error err = {0};
    assert_int_equal(sm_treat_recover(&c, &err), 0); /* the undo needs no flag */
    assert_string_equal(line_of(KEEPALIVE, buf, sizeof buf), "7200");
    assert_int_equal(offload(ETHTOOL_GGRO), 1);
    assert_false(journal_exists());
    assert_int_equal(sm_treat_recover(&c, &err), 0); /* nothing left: nothing done */
}

static void test_what_may_not_or_cannot_change_fails_and_changes_nothing(void **state)
{
    (void)state;
    sm_treat_ctx c = {.dir = dir, .allow = SM_ALLOW_SYSCTL};
    sm_error err = {0};
    char buf[32];
    assert_int_equal(begin(&c, "offload lo gso=off", &err), SM_EINVAL);
    assert_string_equal(err.msg,
                        "treatment: offload lo gso=off needs sockmatrix-agent --allow-experiment "
                        "offload");
    assert_int_equal(offload(ETHTOOL_GGSO), 1);

    c.allow = SM_ALLOW_SYSCTL | SM_ALLOW_OFFLOAD;
    assert_int_equal(begin(&c, "offload eth0 gso=off", &err), SM_EINVAL);
    assert_string_equal(err.msg, "treatment: a local test runs over lo, not eth0: offload eth0 "
                                 "gso=off is refused");
    /* lo's driver fixes sg: the kernel refuses, and the sysctl made before it is undone. */
    assert_int_equal(begin(&c, "sysctl net.ipv4.tcp_keepalive_time=7201; offload lo sg=off", &err),
                     SM_EINVAL);
    assert_non_null(strstr(err.msg, "offload lo sg=off: lo's driver does not let it change sg"));
    assert_string_equal(line_of(KEEPALIVE, buf, sizeof buf), "7200");
    assert_int_equal(offload(ETHTOOL_GSG), 1);
    assert_false(c.active);
    assert_false(journal_exists());
}

static void test_allow_lists_parse_and_print_in_name_order(void **state)
{
    (void)state;
    unsigned a = 0;
    sm_error err = {0};
    assert_int_equal(sm_treat_allow_parse("sysctl,offload", &a, &err), 0);
    assert_int_equal(a, SM_ALLOW_SYSCTL | SM_ALLOW_OFFLOAD);
    assert_string_equal(sm_treat_allow_text(a), "offload,sysctl");
    assert_int_equal(sm_treat_allow_parse("qdisc,offload,sysctl", &a, &err), 0);
    assert_string_equal(sm_treat_allow_text(a), "offload,qdisc,sysctl");
    assert_int_equal(sm_treat_allow_parse("none", &a, &err), 0);
    assert_string_equal(sm_treat_allow_text(a), "none");
    assert_int_equal(sm_treat_allow_parse("ethtool", &a, &err), SM_EINVAL);
    assert_string_equal(err.msg,
                        "--allow-experiment: 'ethtool' is not sysctl, qdisc or offload (or none)");
}

/* lo up in a network namespace of this process's own. */
static int own_netns(void)
{
    if (unshare(CLONE_NEWNET) != 0)
        return errno;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int e = fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) != 0 ? errno : 0;
    ifr.ifr_flags |= IFF_UP;
    if (!e && ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
        e = errno;
    if (fd >= 0)
        close(fd);
    return e;
}

int main(void)
{
    const char *require = getenv("SM_REQUIRE_ROOT_TESTS");
    int e = geteuid() == 0 ? own_netns() : EPERM;
    if (e != 0) {
        const bool must = require != NULL && strcmp(require, "1") == 0;
        fprintf(stderr, "%s: test_treat_host needs root for a network namespace of its own: %s\n",
                must ? "failed" : "skipped", strerror(e));
        return must ? 1 : 77;
    }
    snprintf(dir, sizeof dir, "/tmp/sm-treat-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_sysctl_and_an_offload_are_made_and_undone, setup),
        cmocka_unit_test_setup(test_a_host_that_changed_under_the_treatment_fails_the_job, setup),
        cmocka_unit_test_setup(test_a_killed_job_is_undone_at_the_next_start, setup),
        cmocka_unit_test_setup(test_what_may_not_or_cannot_change_fails_and_changes_nothing, setup),
        cmocka_unit_test(test_allow_lists_parse_and_print_in_name_order),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char path[128];
    snprintf(path, sizeof path, "%s/.treatment.journal", dir);
    unlink(path); /* left only by a failure */
    rmdir(dir);
    return rc;
}
