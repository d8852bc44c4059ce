/* Unit tests of sockmatrix-agent's option parsing: every bad option is named in one line. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "agent/fleet/daemon.h"
#include "agent/fleet/opts.h"
#include "agent/once/opts.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof *(a)) - 1)

static int parse(char **argv, int argc, sm_once_opts *o, sm_error *err)
{
    memset(err, 0, sizeof *err);
    return sm_opts_parse(argc, argv, o, err);
}

static void assert_fails_naming(char **argv, int argc, const char *needle)
{
    sm_once_opts o;
    sm_error err;
    assert_int_equal(parse(argv, argc, &o, &err), SM_EINVAL);
    if (!strstr(err.msg, needle))
        fail_msg("error '%s' does not name '%s'", err.msg, needle);
    assert_null(strchr(err.msg, '\n'));
}

static void test_opts_defaults_compare_tcp_and_unix_stream(void **state)
{
    (void)state;
    char *argv[] = {"a", "--once", NULL};
    sm_once_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_true(o.once);
    assert_int_equal(o.base.workload, SM_WL_STREAM);
    assert_int_equal(o.n_transports, 2);
    assert_int_equal(o.transports[0], SM_TR_TCP);
    assert_int_equal(o.transports[1], SM_TR_UNIX);
    assert_int_equal(o.n_nodelay, 1);
    assert_false(o.nodelay_order[0]);
    assert_int_equal(o.repetitions, 7);
    assert_int_equal(o.warmup, 1);
    assert_int_equal(o.format, SM_FMT_TABLE);
}

static void test_opts_seed_preset_is_the_2010_test_with_and_without_nodelay(void **state)
{
    (void)state;
    char *argv[] = {"a", "--once", "--preset", "seed-tcp-unix", NULL};
    sm_once_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.base.framing, SM_FRAMING_LINES);
    assert_int_equal(o.base.msg_size, 128);
    assert_int_equal(o.base.count, 8192);
    assert_int_equal(o.n_nodelay, 2);
    assert_false(o.nodelay_order[0]);
    assert_true(o.nodelay_order[1]);
    assert_int_equal(o.repetitions, 10);
    assert_int_equal(o.warmup, 2);
}

static void test_opts_explicit_options_override_the_preset_and_keep_the_rest(void **state)
{
    (void)state;
    char *argv[] = {"a",           "--repetitions", "3", "--once", "--preset", "seed-tcp-unix",
                    "--transport", "unix",          NULL};
    sm_once_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.repetitions, 3);
    assert_int_equal(o.warmup, 2);
    assert_int_equal(o.n_transports, 1);
    assert_int_equal(o.transports[0], SM_TR_UNIX);
    assert_int_equal(o.base.count, 8192);
}

static void test_opts_repetitions_auto_starts_at_min_with_the_preset_kept(void **state)
{
    (void)state;
    char *argv[] = {"a", "--once", "--preset", "seed-tcp-unix", "--repetitions", "auto", NULL};
    sm_once_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_true(o.reps_auto);
    assert_int_equal(o.reps.min, 5);
    assert_int_equal(o.reps.max, 30);
    assert_true(o.reps.ci_rel == 0.05);
    assert_int_equal(o.repetitions, 5);
    assert_int_equal(o.warmup, 2); /* the preset's */
    assert_int_equal(o.base.count, 8192);

    char *tuned[] = {"a", "--once",   "--repetitions", "auto", "--max-repetitions",
                     "3", "--ci-rel", "0.2",           NULL};
    assert_int_equal(parse(tuned, ARGC(tuned), &o, &err), 0);
    assert_int_equal(o.reps.min, 3);
    assert_int_equal(o.reps.max, 3);
    assert_true(o.reps.ci_rel == 0.2);
    assert_int_equal(o.repetitions, 3);

    char *fixed[] = {"a", "--once", "--repetitions", "4", NULL};
    assert_int_equal(parse(fixed, ARGC(fixed), &o, &err), 0);
    assert_false(o.reps_auto);
    assert_int_equal(o.repetitions, 4);

    char *alone[] = {"a", "--once", "--max-repetitions", "9", NULL};
    assert_fails_naming(alone, ARGC(alone), "go with --repetitions auto");
    char *bad_ci[] = {"a", "--once", "--repetitions", "auto", "--ci-rel", "0", NULL};
    assert_fails_naming(bad_ci, ARGC(bad_ci), "--ci-rel: '0'");
    char *bad_max[] = {"a", "--once", "--repetitions", "auto", "--max-repetitions", "1001", NULL};
    assert_fails_naming(bad_max, ARGC(bad_max), "--max-repetitions");
}

static void test_opts_bytes_replaces_the_default_count(void **state)
{
    (void)state;
    char *argv[] = {"a", "--once", "--bytes", "64M", "--msg-size", "1K", NULL};
    sm_once_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.base.bytes, 64u << 20);
    assert_int_equal(o.base.count, 0);
    assert_int_equal(o.base.msg_size, 1024);
}

static void test_opts_rr_takes_its_sizes_and_a_duration(void **state)
{
    (void)state;
    char *argv[] = {"a",           "--once", "--workload",    "rr",  "--req-size", "64",
                    "--resp-size", "2K",     "--duration-ms", "500", NULL};
    sm_once_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.base.workload, SM_WL_RR);
    assert_int_equal(o.base.req_size, 64);
    assert_int_equal(o.base.resp_size, 2048);
    assert_int_equal(o.base.duration_ms, 500);
    assert_int_equal(o.base.count, 0);
    assert_int_equal(o.base.time_limit_ms, 0); /* derived per variant at validation */
}

static void test_opts_transport_and_nodelay_lists_keep_their_order(void **state)
{
    (void)state;
    char *argv[] = {"a", "--once", "--transport", "unix,tcp", "--nodelay=on,off", NULL};
    sm_once_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.transports[0], SM_TR_UNIX);
    assert_int_equal(o.transports[1], SM_TR_TCP);
    assert_int_equal(o.n_nodelay, 2);
    assert_true(o.nodelay_order[0]);
    assert_false(o.nodelay_order[1]);
    sm_params p;
    sm_opts_variant(&o, SM_TR_UNIX, true, &p);
    assert_false(p.nodelay);
    sm_opts_variant(&o, SM_TR_TCP, true, &p);
    assert_true(p.nodelay);
}

static void test_opts_disturbed_samples_are_left_out_unless_included(void **state)
{
    (void)state;
    sm_once_opts o;
    sm_error err;
    char *plain[] = {"a", "--once", NULL};
    assert_int_equal(parse(plain, ARGC(plain), &o, &err), 0);
    assert_false(o.include_disturbed);
    char *inc[] = {"a", "--once", "--preset", "seed-tcp-unix", "--disturbed", "include", NULL};
    assert_int_equal(parse(inc, ARGC(inc), &o, &err), 0);
    assert_true(o.include_disturbed);
    char *exc[] = {"a", "--once", "--disturbed", "exclude", NULL};
    assert_int_equal(parse(exc, ARGC(exc), &o, &err), 0);
    assert_false(o.include_disturbed);
    char *bad[] = {"a", "--once", "--disturbed", "all", NULL};
    assert_fails_naming(bad, ARGC(bad), "--disturbed");
}

static void test_opts_bad_options_are_named(void **state)
{
    (void)state;
    char *unknown[] = {"a", "--once", "--frobnicate", NULL};
    assert_fails_naming(unknown, ARGC(unknown), "--frobnicate");
    char *missing[] = {"a", "--once", "--count", NULL};
    assert_fails_naming(missing, ARGC(missing), "--count");
    char *badsize[] = {"a", "--once", "--msg-size", "12Q", NULL};
    assert_fails_naming(badsize, ARGC(badsize), "--msg-size");
    char *zero[] = {"a", "--once", "--msg-size", "0", NULL};
    assert_fails_naming(zero, ARGC(zero), "--msg-size: 0 is below the minimum 1");
    char *toobig[] = {"a", "--once", "--msg-size", "1G", NULL};
    assert_fails_naming(toobig, ARGC(toobig), "--msg-size");
    char *reps0[] = {"a", "--once", "--repetitions", "0", NULL};
    assert_fails_naming(reps0, ARGC(reps0), "--repetitions");
    char *reps[] = {"a", "--once", "--repetitions", "1001", NULL};
    assert_fails_naming(reps, ARGC(reps), "--repetitions");
    char *wl[] = {"a", "--once", "--workload", "udp", NULL};
    assert_fails_naming(wl, ARGC(wl), "--workload");
    char *dup[] = {"a", "--once", "--transport", "tcp,tcp", NULL};
    assert_fails_naming(dup, ARGC(dup), "--transport");
    char *nd[] = {"a", "--once", "--nodelay=maybe", NULL};
    assert_fails_naming(nd, ARGC(nd), "--nodelay");
    char *ndunix[] = {"a", "--once", "--transport", "unix", "--nodelay", NULL};
    assert_fails_naming(ndunix, ARGC(ndunix), "--nodelay");
    char *two[] = {"a", "--once", "--count", "5", "--duration-ms", "100", NULL};
    assert_fails_naming(two, ARGC(two), "--duration-ms");
    char *lines[] = {"a", "--once", "--framing", "lines", "--bytes", "1M", NULL};
    assert_fails_naming(lines, ARGC(lines), "--bytes");
    char *fmt[] = {"a", "--once", "--format", "xml", NULL};
    assert_fails_naming(fmt, ARGC(fmt), "--format");
    char *preset[] = {"a", "--once", "--preset", "nope", NULL};
    assert_fails_naming(preset, ARGC(preset), "--preset");
    char *fault[] = {"a", "--once", "--workload", "rr", "--test-fault", "corrupt", NULL};
    assert_fails_naming(fault, ARGC(fault), "--test-fault");
    char *extra[] = {"a", "--once", "stray", NULL};
    assert_fails_naming(extra, ARGC(extra), "stray");
}

static void test_opts_http_variants_are_client_models_in_order_over_tcp(void **state)
{
    (void)state;
    char *argv[] = {"a",        "--once", "--workload", "http",       "--client", "multi,thread",
                    "--repeat", "3",      "--url",      "http://h/f", "--verify", "--connections",
                    "4",        NULL};
    sm_once_opts o;
    sm_error err;
    if (parse(argv, ARGC(argv), &o, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(o.base.workload, SM_WL_HTTP);
    assert_int_equal(o.n_clients, 2);
    assert_int_equal(o.clients[0], SM_HTTP_MULTI);
    assert_int_equal(o.clients[1], SM_HTTP_THREAD);
    assert_int_equal(o.n_transports, 1);
    assert_int_equal(o.transports[0], SM_TR_TCP);
    assert_int_equal(o.base.repeat, 3);
    assert_int_equal(o.base.connections, 4);
    assert_true(o.base.verify);
    assert_string_equal(o.base.url, "http://h/f");
    assert_int_equal(o.base.bytes, 0); /* a url's body is whatever size it is */
    sm_params p;
    sm_opts_http_variant(&o, SM_HTTP_POOL, &p);
    assert_int_equal(p.client, SM_HTTP_POOL);
    assert_string_equal(p.url, "http://h/f");
}

static void test_opts_seed_http_preset_is_the_2009_test(void **state)
{
    (void)state;
    char *argv[] = {"a", "--once", "--preset", "seed-http", "--client", "pool", NULL};
    sm_once_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.base.workload, SM_WL_HTTP);
    assert_int_equal(o.base.bytes, 51711600);
    assert_int_equal(o.base.repeat, 11);
    assert_int_equal(o.base.time_limit_ms, 120000);
    assert_int_equal(o.base.connections, 1);
    assert_int_equal(o.n_clients, 1); /* --client overrides the preset's three */
    assert_int_equal(o.clients[0], SM_HTTP_POOL);
}

static void test_opts_http_bad_options_are_named(void **state)
{
    (void)state;
    char *client[] = {"a", "--once", "--workload", "http", "--client", "fibers", NULL};
    assert_fails_naming(client, ARGC(client), "--client: 'fibers'");
    char *twice[] = {"a", "--once", "--workload", "http", "--client", "pool,pool", NULL};
    assert_fails_naming(twice, ARGC(twice), "--client: pool is listed twice");
    char *stream[] = {"a", "--once", "--client", "pool", NULL};
    assert_fails_naming(stream, ARGC(stream), "--client: applies to workload http only");
    char *unix_[] = {"a", "--once", "--workload", "http", "--transport", "unix", NULL};
    assert_fails_naming(unix_, ARGC(unix_), "--transport");
    char *nd[] = {"a", "--once", "--workload", "http", "--nodelay", NULL};
    assert_fails_naming(nd, ARGC(nd), "--nodelay");
    char *buf[] = {"a", "--once", "--workload", "http", "--buffer-size", "512", NULL};
    assert_fails_naming(buf, ARGC(buf), "--buffer-size: 512 is below the minimum 1024");
    char *pin[] = {"a", "--once", "--workload", "http", "--test-fault", "wrong-pin", NULL};
    assert_fails_naming(pin, ARGC(pin), "--test-fault");
    char *stall[] = {"a",         "--once",       "--workload", "http", "--url",
                     "http://h/", "--test-fault", "stall",      NULL};
    assert_fails_naming(stall, ARGC(stall), "--test-fault");
}

static void test_dopts_allow_http_matches_prefixes_at_a_boundary(void **state)
{
    (void)state;
    static sm_daemon_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    snprintf(cfg.allow_http[0], sizeof cfg.allow_http[0], "http://lab1");
    snprintf(cfg.allow_http[1], sizeof cfg.allow_http[1], "https://web.lab:8443/files/");
    cfg.n_allow_http = 2;
    assert_true(sm_daemon_url_allowed(&cfg, "http://lab1"));
    assert_true(sm_daemon_url_allowed(&cfg, "http://lab1/f"));
    assert_true(sm_daemon_url_allowed(&cfg, "http://lab1?x=1"));
    assert_false(sm_daemon_url_allowed(&cfg, "http://lab10/f"));
    assert_false(sm_daemon_url_allowed(&cfg, "http://lab1.example.com/f"));
    assert_false(sm_daemon_url_allowed(&cfg, "http://lab1:8080/f"));
    assert_false(sm_daemon_url_allowed(&cfg, "https://lab1/f"));
    assert_true(sm_daemon_url_allowed(&cfg, "https://web.lab:8443/files/big"));
    assert_false(sm_daemon_url_allowed(&cfg, "https://web.lab:8443/other"));
    cfg.n_allow_http = 0;
    assert_false(sm_daemon_url_allowed(&cfg, "http://lab1/f"));

    static sm_daemon_cfg parsed;
    sm_error err;
    bool help;
    char *scheme[] = {"a", "--coordinator", "tcp://c:1", "--allow-http", "ftp://lab1/", NULL};
    assert_int_equal(sm_dopts_parse(ARGC(scheme), scheme, &parsed, &help, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "--allow-http: 'ftp://lab1/'"));
    char *cpu[] = {"a", "--coordinator", "tcp://c:1", "--affinity", "0,4096", NULL};
    assert_int_equal(sm_dopts_parse(ARGC(cpu), cpu, &parsed, &help, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "--affinity: CPU 4096 is not one this process may run on"));
    char *bare[] = {"a", "--coordinator", "tcp://c:1", "--allow-http", "https://", NULL};
    assert_int_equal(sm_dopts_parse(ARGC(bare), bare, &parsed, &help, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "with a host"));
}

static void test_dopts_refuse_the_reserved_name_and_a_bad_data_addr_allow(void **state)
{
    (void)state;
    static sm_daemon_cfg parsed;
    sm_error err;
    bool help;
    char *name[] = {"a", "--coordinator", "tcp://c:1", "--name", "coordinator", NULL};
    assert_int_equal(sm_dopts_parse(ARGC(name), name, &parsed, &help, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "'coordinator' is reserved for the coordinator"));
    char *allow[] = {"a", "--coordinator", "tcp://c:1", "--data-addr-allow", "loopback,lan", NULL};
    assert_int_equal(sm_dopts_parse(ARGC(allow), allow, &parsed, &help, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "--data-addr-allow: 'lan'"));
}

static void test_opts_parse_can_run_twice_in_one_process(void **state)
{
    (void)state;
    char *first[] = {"a", "--once", "--count", "9", NULL};
    char *second[] = {"a", "--once", "--count", "11", NULL};
    sm_once_opts o;
    sm_error err;
    assert_int_equal(parse(first, ARGC(first), &o, &err), 0);
    assert_int_equal(parse(second, ARGC(second), &o, &err), 0);
    assert_int_equal(o.base.count, 11);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opts_defaults_compare_tcp_and_unix_stream),
        cmocka_unit_test(test_opts_seed_preset_is_the_2010_test_with_and_without_nodelay),
        cmocka_unit_test(test_opts_explicit_options_override_the_preset_and_keep_the_rest),
        cmocka_unit_test(test_opts_repetitions_auto_starts_at_min_with_the_preset_kept),
        cmocka_unit_test(test_opts_bytes_replaces_the_default_count),
        cmocka_unit_test(test_opts_rr_takes_its_sizes_and_a_duration),
        cmocka_unit_test(test_opts_transport_and_nodelay_lists_keep_their_order),
        cmocka_unit_test(test_opts_bad_options_are_named),
        cmocka_unit_test(test_opts_disturbed_samples_are_left_out_unless_included),
        cmocka_unit_test(test_opts_http_variants_are_client_models_in_order_over_tcp),
        cmocka_unit_test(test_opts_seed_http_preset_is_the_2009_test),
        cmocka_unit_test(test_opts_http_bad_options_are_named),
        cmocka_unit_test(test_dopts_allow_http_matches_prefixes_at_a_boundary),
        cmocka_unit_test(test_dopts_refuse_the_reserved_name_and_a_bad_data_addr_allow),
        cmocka_unit_test(test_opts_parse_can_run_twice_in_one_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
