/* Unit tests of the anomalies' explanations (coordinator/analysis/explain.c): which hosts, which
 * context, and what the JSON and the text carry. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/explain.h"
#include "coordinator/analysis/export.h"
#include "coordinator/analysis/table.h"
#include "proto/fingerprint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 3

typedef struct fleet {
    sm_fingerprint fp[N];
    sm_fp_host hosts[N];
} fleet;

static void set(sm_fingerprint *fp, const char *key, const char *value)
{
    sm_error err = {0};
    assert_int_equal(sm_fp_set(fp, key, value, &err), 0);
    sm_fp_sort(fp);
}

/* h1..h3, alike: lo noqueue, eth0 fq_codel (the data interface), tcp autocorking on. */
static void fleet_init(fleet *f)
{
    static const char *const names[N] = {"h1", "h2", "h3"};
    for (size_t i = 0; i < N; i++) {
        sm_fp_init(&f->fp[i]);
        set(&f->fp[i], "info.data_if", "eth0");
        set(&f->fp[i], "if.lo.qdisc", "noqueue");
        set(&f->fp[i], "if.eth0.qdisc", "fq_codel");
        set(&f->fp[i], "if.eth0.mtu", "1500");
        set(&f->fp[i], "sysctl.net.ipv4.tcp_autocorking", "1");
        set(&f->fp[i], "sysctl.net.unix.max_dgram_qlen", "512");
        f->hosts[i] = (sm_fp_host){names[i], &f->fp[i]};
    }
}

static void fleet_fini(fleet *f)
{
    for (size_t i = 0; i < N; i++)
        sm_fp_fini(&f->fp[i]);
}

static sm_anomaly anomaly(sm_anomaly_kind kind, const char *host, const char *test)
{
    sm_anomaly a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    snprintf(a.host, sizeof a.host, "%s", host);
    snprintf(a.test, sizeof a.test, "%s", test);
    snprintf(a.metric, sizeof a.metric, "seconds");
    snprintf(a.unit, sizeof a.unit, "x");
    snprintf(a.rule, sizeof a.rule, "|z| > 3.5 and >= 15%%");
    a.value = 3.59;
    a.reference = 2.1;
    a.z = 54.1;
    a.rel = 0.7;
    a.floor = 0.15;
    if (kind == SM_ANOMALY_SLOW_HOST)
        snprintf(a.role, sizeof a.role, "server");
    return a;
}

static void test_context_takes_transport_from_the_label_and_iface_from_the_scope(void **state)
{
    (void)state;
    static const struct {
        const char *label, *transport;
    } cases[] = {
        {"tcp/unix stream lines 128 B x 8192", "tcp"},
        {"stream tcp+nodelay lines 128 B x 8192", "tcp"},
        {"stream unix lines 128 B x 8192", "unix"},
        {"rr unix 1 B/1 B x 10000", "unix"},
        {"pair/loopback stream tcp 128 KiB x 2048", "tcp"},
        {"http thread 16 MiB x5", "http"},
        {"pool/thread http 16 MiB x5", "http"},
        {"user CPU pool/thread, http 16 MiB x5", "http"},
        {"something else", ""},
    };
    fleet f;
    fleet_init(&f);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sm_anomaly a = anomaly(SM_ANOMALY_FLEET, "h2", cases[i].label);
        sm_fp_context ctx;
        char tr[8];
        sm_explain_context(&a, &f.fp[1], &ctx, tr, sizeof tr);
        assert_string_equal(ctx.transport, cases[i].transport);
        assert_string_equal(ctx.iface, "lo");
        assert_false(ctx.link);
    }
    sm_anomaly a = anomaly(SM_ANOMALY_SLOW_LINK, "h1->h2", "stream tcp 1 GB");
    sm_fp_context ctx;
    char tr[8];
    sm_explain_context(&a, &f.fp[1], &ctx, tr, sizeof tr);
    assert_string_equal(ctx.iface, "eth0");
    assert_true(ctx.link);
    /* A pair without a known data interface. */
    sm_explain_context(&a, NULL, &ctx, tr, sizeof tr);
    assert_string_equal(ctx.iface, "");
    a = anomaly(SM_ANOMALY_REGRESSION, "h1", "stream tcp 1 GB");
    sm_explain_context(&a, &f.fp[0], &ctx, tr, sizeof tr);
    assert_string_equal(ctx.iface, "lo");
    fleet_fini(&f);
}

static void test_fleet_anomaly_carries_its_hosts_ranked_differences(void **state)
{
    (void)state;
    fleet f;
    fleet_init(&f);
    set(&f.fp[1], "if.lo.qdisc", "tbf rate 400Mbit burst 128Kb lat 50ms");
    set(&f.fp[1], "sysctl.net.ipv4.tcp_autocorking", "0");
    set(&f.fp[1], "if.eth0.mtu", "9000");
    sm_anomaly v[2] = {anomaly(SM_ANOMALY_FLEET, "h2", "tcp/unix stream lines 128 B x 8192"),
                       anomaly(SM_ANOMALY_FLEET, "h1", "stream tcp lines 128 B x 8192")};
    sm_anomalies an = {v, 2, 2};
    sm_explanation ex;
    sm_error err = {0};
    assert_int_equal(sm_explain_anomalies(&an, f.hosts, N, NULL, 0, &ex, &err), 0);
    assert_int_equal(ex.n, 2);
    assert_true(sm_explain_any(&ex, 0));
    assert_false(sm_explain_any(&ex, 1)); /* h1 is like the others: nothing to say */

    char *json = sm_explain_anomalies_json(7, "r", 0, NULL, &an, &ex, NULL);
    assert_non_null(json);
    cJSON *root = cJSON_Parse(json);
    cJSON *a0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "anomalies"), 0);
    cJSON *a1 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "anomalies"), 1);
    assert_string_equal(cJSON_GetObjectItem(a0, "host")->valuestring, "h2");
    cJSON *d = cJSON_GetObjectItem(a0, "differences");
    assert_int_equal(cJSON_GetArraySize(d), 3);
    char *first = cJSON_PrintUnformatted(cJSON_GetArrayItem(d, 0));
    assert_string_equal(first, "{\"item\":\"if.lo.qdisc\",\"label\":\"lo qdisc\",\"host_value\":"
                               "\"tbf rate 400Mbit burst 128Kb lat 50ms\",\"fleet_value\":"
                               "\"noqueue\",\"hosts_with_fleet_value\":2,\"fleet_hosts\":2,"
                               "\"host\":\"h2\"}");
    free(first);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(d, 1), "item")->valuestring,
                        "sysctl.net.ipv4.tcp_autocorking");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(d, 2), "item")->valuestring,
                        "if.eth0.mtu");
    assert_null(cJSON_GetObjectItem(a1, "differences"));
    assert_null(cJSON_GetObjectItem(a0, "changes"));
    cJSON_Delete(root);
    free(json);

    char text[2048];
    size_t at = 0;
    sm_explain_lines(&ex, 0, "  ", text, sizeof text, &at);
    assert_string_equal(text, "  h2: lo qdisc tbf rate 400Mbit burst 128Kb lat 50ms (fleet: "
                              "noqueue, 2 of 2 hosts)\n"
                              "  h2: net.ipv4.tcp_autocorking 0 (fleet: 1, 2 of 2 hosts)\n"
                              "  h2: eth0 mtu 9000 (fleet: 1500, 2 of 2 hosts)\n");
    assert_int_equal(at, strlen(text));
    size_t before = at;
    sm_explain_lines(&ex, 1, "  ", text, sizeof text, &at);
    assert_int_equal(at, before);
    char note[512];
    sm_explain_host_note(&ex, "h2", note, sizeof note);
    assert_string_equal(note, "h2: lo qdisc tbf rate 400Mbit burst 128Kb lat 50ms (fleet: "
                              "noqueue, 2 of 2 hosts); net.ipv4.tcp_autocorking 0 (fleet: 1, 2 "
                              "of 2 hosts); eth0 mtu 9000 (fleet: 1500, 2 of 2 hosts)");
    assert_int_equal(sm_explain_host_note(&ex, "h1", note, sizeof note), 0);
    assert_string_equal(note, "");
    sm_explanation_fini(&ex);
    fleet_fini(&f);
}

static void test_slow_link_names_both_hosts_data_interface_first(void **state)
{
    (void)state;
    fleet f;
    fleet_init(&f);
    set(&f.fp[0], "if.lo.qdisc", "tbf rate 1Gbit");
    set(&f.fp[2], "if.eth0.qdisc", "netem delay 5ms");
    set(&f.fp[2], "sysctl.net.ipv4.tcp_autocorking", "0");
    sm_anomaly v[1] = {anomaly(SM_ANOMALY_SLOW_LINK, "h1->h3", "stream tcp 1 GB")};
    sm_anomalies an = {v, 1, 1};
    sm_explanation ex;
    sm_error err = {0};
    assert_int_equal(sm_explain_anomalies(&an, f.hosts, N, NULL, 0, &ex, &err), 0);
    assert_string_equal(ex.v[0].host[0], "h1");
    assert_string_equal(ex.v[0].host[1], "h3");
    char text[2048];
    size_t at = 0;
    sm_explain_lines(&ex, 0, "", text, sizeof text, &at);
    assert_string_equal(text, "h3: eth0 qdisc netem delay 5ms (fleet: fq_codel, 2 of 2 hosts)\n"
                              "h3: net.ipv4.tcp_autocorking 0 (fleet: 1, 2 of 2 hosts)\n"
                              "h1: lo qdisc tbf rate 1Gbit (fleet: noqueue, 2 of 2 hosts)\n");
    sm_explanation_fini(&ex);
    fleet_fini(&f);
}

static void test_regression_carries_what_changed_on_its_host(void **state)
{
    (void)state;
    fleet now, base;
    fleet_init(&now);
    fleet_init(&base);
    set(&now.fp[1], "sysctl.net.ipv4.tcp_autocorking", "0");
    set(&now.fp[0], "if.lo.qdisc", "tbf rate 1Gbit"); /* h1 changed too, not flagged */
    sm_anomaly v[2] = {anomaly(SM_ANOMALY_REGRESSION, "h2", "stream tcp lines 128 B x 8192"),
                       anomaly(SM_ANOMALY_FLEET_MOVE, "fleet", "stream tcp lines 128 B x 8192")};
    v[1].row = SIZE_MAX;
    sm_anomalies an = {v, 2, 2};
    sm_explanation ex;
    sm_error err = {0};
    assert_int_equal(sm_explain_anomalies(&an, now.hosts, N, base.hosts, N, &ex, &err), 0);
    assert_true(ex.v[0].changes);
    assert_false(sm_explain_any(&ex, 1));
    char *json = sm_explain_anomalies_json(7, "r", 5, NULL, &an, &ex, NULL);
    cJSON *root = cJSON_Parse(json);
    cJSON *a0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "anomalies"), 0);
    assert_null(cJSON_GetObjectItem(a0, "differences"));
    char *c = cJSON_PrintUnformatted(cJSON_GetObjectItem(a0, "changes"));
    assert_string_equal(c, "[{\"item\":\"sysctl.net.ipv4.tcp_autocorking\",\"label\":\"net.ipv4."
                           "tcp_autocorking\",\"before\":\"1\",\"after\":\"0\",\"host\":\"h2\"}]");
    free(c);
    cJSON_Delete(root);
    free(json);
    char text[512];
    size_t at = 0;
    sm_explain_lines(&ex, 0, "", text, sizeof text, &at);
    assert_string_equal(text, "h2: net.ipv4.tcp_autocorking now 0 (was 1)\n");
    sm_explanation_fini(&ex);
    /* Without the baseline's fingerprints nothing is said. */
    assert_int_equal(sm_explain_anomalies(&an, now.hosts, N, NULL, 0, &ex, &err), 0);
    assert_false(sm_explain_any(&ex, 0));
    sm_explanation_fini(&ex);
    fleet_fini(&now);
    fleet_fini(&base);
}

static void test_without_fingerprints_the_json_is_as_before(void **state)
{
    (void)state;
    sm_anomaly v[1] = {anomaly(SM_ANOMALY_FLEET, "h2", "tcp/unix stream lines 128 B x 8192")};
    sm_anomalies an = {v, 1, 1};
    sm_explanation ex;
    sm_error err = {0};
    assert_int_equal(sm_explain_anomalies(&an, NULL, 0, NULL, 0, &ex, &err), 0);
    char *plain = sm_anomalies_json(7, "r", 0, NULL, &an);
    char *more = sm_explain_anomalies_json(7, "r", 0, NULL, &an, &ex, NULL);
    assert_string_equal(more, plain);
    assert_null(strstr(more, "differences"));
    free(plain);
    free(more);
    sm_explanation_fini(&ex);
    /* An empty explanation (never computed) says nothing either. */
    sm_explanation none = {0};
    more = sm_explain_anomalies_json(7, "r", 0, NULL, &an, &none, NULL);
    assert_null(strstr(more, "differences"));
    free(more);
    /* No explanation at all: the plain document, to the byte. */
    plain = sm_anomalies_json(7, "r", 0, NULL, &an);
    more = sm_explain_anomalies_json(7, "r", 0, NULL, &an, NULL, NULL);
    assert_string_equal(more, plain);
    free(plain);
    free(more);
}

/* "  <kind> <text>\n" of anomaly a, as the text form writes it. */
static void line_of(const sm_anomaly *a, char *buf, size_t cap)
{
    char text[512];
    sm_anomaly_text(a, text, sizeof text);
    snprintf(buf, cap, "  %-10s %s\n", sm_anomaly_kind_name(a->kind), text);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

#define QDISC_H2 "h2: lo qdisc tbf rate 400Mbit burst 128Kb lat 50ms (fleet: noqueue, 2 of 2 hosts)"
#define CORK_H2  "h2: net.ipv4.tcp_autocorking 0 (fleet: 1, 2 of 2 hosts)"
#define UNIX_H2  "h2: net.unix.max_dgram_qlen 10 (fleet: 512, 2 of 2 hosts)"
#define PAD      "             "

static void test_text_groups_a_hosts_flags_and_explains_the_host_once(void **state)
{
    (void)state;
    fleet f;
    fleet_init(&f);
    set(&f.fp[1], "if.lo.qdisc", "tbf rate 400Mbit burst 128Kb lat 50ms");
    set(&f.fp[1], "sysctl.net.ipv4.tcp_autocorking", "0");
    set(&f.fp[1], "sysctl.net.unix.max_dgram_qlen", "10");
    /* Column by column, as the analysis finds them: h2's flags between h3's. */
    sm_anomaly v[5] = {anomaly(SM_ANOMALY_FLEET, "h2", "stream tcp lines 128 B x 8192"),
                       anomaly(SM_ANOMALY_FLEET, "h3", "stream tcp lines 128 B x 8192"),
                       anomaly(SM_ANOMALY_FLEET, "h2", "stream unix lines 128 B x 8192"),
                       anomaly(SM_ANOMALY_FLEET, "h2", "tcp/unix stream lines 128 B x 8192"),
                       anomaly(SM_ANOMALY_FLEET, "h3", "tcp/unix stream lines 128 B x 8192")};
    sm_anomalies an = {v, 5, 5};
    sm_explanation ex;
    sm_error err = {0};
    assert_int_equal(sm_explain_anomalies(&an, f.hosts, N, NULL, 0, &ex, &err), 0);
    char text[8192], want[8192], line[5][600];
    for (size_t i = 0; i < 5; i++)
        line_of(&v[i], line[i], sizeof line[i]);
    size_t at = 0;
    assert_int_equal(sm_explain_text(&an, &ex, text, sizeof text, &at), 0);
    assert_int_equal(at, strlen(text));
    /* h2's three flags, then what sets h2 apart: its tcp flag's top lines and the unix
     * sysctl its unix flag ranks above the tcp one; then h3, like the others. */
    snprintf(want, sizeof want, "%s%s%s" PAD QDISC_H2 "\n" PAD CORK_H2 "\n" PAD UNIX_H2 "\n%s%s",
             line[0], line[2], line[3], line[1], line[4]);
    assert_string_equal(text, want);
    assert_int_equal(count(text, "lo qdisc"), 1);

    /* No explanation: the same lines in the same order, nothing under them. */
    at = 0;
    assert_int_equal(sm_explain_text(&an, NULL, text, sizeof text, &at), 0);
    snprintf(want, sizeof want, "%s%s%s%s%s", line[0], line[2], line[3], line[1], line[4]);
    assert_string_equal(text, want);
    /* Cut at cap, whole or not: never past it. */
    char small[40];
    at = 0;
    assert_int_equal(sm_explain_text(&an, &ex, small, sizeof small, &at), 0);
    assert_int_equal(at, sizeof small);
    assert_int_equal(strlen(small), sizeof small - 1);
    sm_explanation_fini(&ex);
    fleet_fini(&f);
}

static void test_text_explains_a_host_in_several_pair_rows_once(void **state)
{
    (void)state;
    fleet now, base;
    fleet_init(&now);
    fleet_init(&base);
    set(&now.fp[1], "sysctl.net.ipv4.tcp_autocorking", "0");
    /* Every pair with h2 in it regressed: h2 changed. */
    sm_anomaly v[3] = {anomaly(SM_ANOMALY_REGRESSION, "h1->h2", "stream tcp 1 GB"),
                       anomaly(SM_ANOMALY_REGRESSION, "h2->h3", "stream tcp 1 GB"),
                       anomaly(SM_ANOMALY_REGRESSION, "h3->h2", "stream tcp 1 GB")};
    sm_anomalies an = {v, 3, 3};
    sm_explanation ex;
    sm_error err = {0};
    assert_int_equal(sm_explain_anomalies(&an, now.hosts, N, base.hosts, N, &ex, &err), 0);
    assert_true(sm_explain_any(&ex, 2));
    char text[4096], want[4096], line[3][600];
    for (size_t i = 0; i < 3; i++)
        line_of(&v[i], line[i], sizeof line[i]);
    size_t at = 0;
    assert_int_equal(sm_explain_text(&an, &ex, text, sizeof text, &at), 0);
    snprintf(want, sizeof want, "%s" PAD "h2: net.ipv4.tcp_autocorking now 0 (was 1)\n%s%s",
             line[0], line[1], line[2]);
    assert_string_equal(text, want);
    sm_explanation_fini(&ex);
    fleet_fini(&now);
    fleet_fini(&base);
}

static void test_host_note_is_one_line_per_host_whatever_its_flags(void **state)
{
    (void)state;
    fleet f;
    fleet_init(&f);
    set(&f.fp[1], "if.lo.qdisc", "tbf rate 400Mbit burst 128Kb lat 50ms");
    set(&f.fp[1], "sysctl.net.ipv4.tcp_autocorking", "0");
    set(&f.fp[1], "sysctl.net.unix.max_dgram_qlen", "10");
    set(&f.fp[2], "if.eth0.qdisc", "netem delay 5ms");
    sm_anomaly v[4] = {anomaly(SM_ANOMALY_FLEET, "h2", "stream tcp lines 128 B x 8192"),
                       anomaly(SM_ANOMALY_FLEET, "h2", "stream unix lines 128 B x 8192"),
                       anomaly(SM_ANOMALY_SLOW_LINK, "h3->h2", "stream tcp 1 GB"),
                       anomaly(SM_ANOMALY_FLEET, "h1", "stream tcp lines 128 B x 8192")};
    sm_anomalies an = {v, 4, 4};
    sm_explanation ex;
    sm_error err = {0};
    assert_int_equal(sm_explain_anomalies(&an, f.hosts, N, NULL, 0, &ex, &err), 0);
    char note[2048];
    size_t len = sm_explain_host_note(&ex, "h2", note, sizeof note);
    assert_int_equal(len, strlen(note));
    /* Its flags' lines and the link's about h2, each once, h2 named once. */
    assert_string_equal(note, QDISC_H2 "; net.ipv4.tcp_autocorking 0 (fleet: 1, 2 of 2 hosts); "
                                       "net.unix.max_dgram_qlen 10 (fleet: 512, 2 of 2 hosts)");
    /* The link's other host, by itself. */
    static const char h3[] = "h3: eth0 qdisc netem delay 5ms (fleet: fq_codel, 2 of 2 hosts)";
    sm_explain_host_note(&ex, "h3", note, sizeof note);
    assert_string_equal(note, h3);
    assert_int_equal(sm_explain_host_note(&ex, "h1", note, sizeof note), 0);
    assert_string_equal(note, "");
    /* Cut as snprintf cuts, with the length it wanted. */
    char small[8];
    assert_int_equal(sm_explain_host_note(&ex, "h3", small, sizeof small), strlen(h3));
    assert_string_equal(small, "h3: eth");
    sm_explanation_fini(&ex);
    fleet_fini(&f);
}

/* The Markdown export's footnotes (export.c) are a presentation of the explanations: here, so
 * that a pair table's hosts can be explained without building one from results. */
static void test_markdown_gives_a_host_one_footnote_that_its_rows_share(void **state)
{
    (void)state;
    fleet now, base;
    fleet_init(&now);
    fleet_init(&base);
    set(&now.fp[0], "if.lo.qdisc", "tbf rate 1Gbit");
    set(&now.fp[2], "if.eth0.qdisc", "netem delay 5ms");
    sm_table t;
    assert_int_equal(sm_table_init(&t, 4, 1, 0), 0);
    t.pairs = true;
    static const char *const rows[] = {"h1->h2", "h1->h3", "h2->h3", "h3->h1"};
    for (size_t r = 0; r < 4; r++)
        snprintf(t.rows[r], sizeof t.rows[r], "%s", rows[r]);
    snprintf(t.cols[0].label, sizeof t.cols[0].label, "stream tcp 1 GB");
    snprintf(t.cols[0].unit, sizeof t.cols[0].unit, "MB/s");
    /* h3 a slow server (rows 1 and 2), a slow link h1->h2, and row 3 regressed: both of its
     * hosts changed since the baseline. */
    sm_anomaly v[3] = {anomaly(SM_ANOMALY_SLOW_HOST, "h3", "stream tcp 1 GB"),
                       anomaly(SM_ANOMALY_SLOW_LINK, "h1->h2", "stream tcp 1 GB"),
                       anomaly(SM_ANOMALY_REGRESSION, "h3->h1", "stream tcp 1 GB")};
    v[0].row = 1;
    v[1].row = 0;
    v[2].row = 3;
    sm_anomalies an = {v, 3, 3};
    sm_explanation ex;
    sm_error err = {0};
    assert_int_equal(sm_explain_anomalies(&an, now.hosts, N, base.hosts, N, &ex, &err), 0);
    sm_analysis_flag_table(&t, &an);
    char *md = sm_export_md(&t, &an, &ex);
    assert_non_null(md);
    static const char *const marks[] = {" [1]", " [2]", " [2]", " [1, 2]"};
    for (size_t r = 0; r < 4; r++) {
        size_t len = strlen(t.flags[r]), m = strlen(marks[r]);
        assert_true(len > m);
        assert_string_equal(t.flags[r] + len - m, marks[r]);
        assert_non_null(strstr(md, t.flags[r]));
    }
    /* One footnote per host: its differences from the fleet and what changed on it. */
    static const char notes[] =
        "\n\n[1] h1: lo qdisc tbf rate 1Gbit (fleet: noqueue, 2 of 2 hosts); lo qdisc now tbf "
        "rate 1Gbit (was noqueue)\n"
        "\n[2] h3: eth0 qdisc netem delay 5ms (fleet: fq_codel, 2 of 2 hosts); eth0 qdisc now "
        "netem delay 5ms (was fq_codel)\n";
    assert_true(strlen(md) > strlen(notes));
    assert_string_equal(md + strlen(md) - strlen(notes), notes);
    assert_null(strstr(md, "[3]"));
    free(md);
    sm_explanation_fini(&ex);
    sm_table_fini(&t);
    fleet_fini(&now);
    fleet_fini(&base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_takes_transport_from_the_label_and_iface_from_the_scope),
        cmocka_unit_test(test_fleet_anomaly_carries_its_hosts_ranked_differences),
        cmocka_unit_test(test_slow_link_names_both_hosts_data_interface_first),
        cmocka_unit_test(test_regression_carries_what_changed_on_its_host),
        cmocka_unit_test(test_without_fingerprints_the_json_is_as_before),
        cmocka_unit_test(test_text_groups_a_hosts_flags_and_explains_the_host_once),
        cmocka_unit_test(test_text_explains_a_host_in_several_pair_rows_once),
        cmocka_unit_test(test_host_note_is_one_line_per_host_whatever_its_flags),
        cmocka_unit_test(test_markdown_gives_a_host_one_footnote_that_its_rows_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
