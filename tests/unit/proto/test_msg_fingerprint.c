/* The fingerprint on the wire: in the agent's poll (bounded by SM_FP_MAX, within the poll's
 * budget) and the coordinator's ask for one in its reply. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/envelope.h"
#include "proto/fingerprint.h"
#include "proto/msg.h"

#define BOOT  "0123456789abcdef0123456789abcdef"
#define NONCE "00112233445566778899aabbccddeeff"

static void base_poll(sm_poll *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->agent, sizeof p->agent, "h2");
    snprintf(p->boot, sizeof p->boot, "%s", BOOT);
    p->seq = 3;
}

static void must(int rc, const sm_error *err)
{
    if (rc != 0)
        fail_msg("%s", err->msg);
}

/* A fingerprint whose encoded text is exactly `size` bytes (size well above 200). */
static void fp_of_size(sm_fingerprint *fp, size_t size)
{
    sm_error err = {0};
    sm_fp_init(fp);
    fp->collected_ms = 1733068800000ull;
    fp->collect_us = 4210;
    char value[1001];
    memset(value, 'v', 1000);
    value[1000] = '\0';
    size_t len = 0;
    char *text = NULL;
    for (unsigned i = 0;; i++) {
        char key[32];
        snprintf(key, sizeof key, "sysctl.net.core.k%04u", i);
        must(sm_fp_set(fp, key, value, &err), &err);
        text = sm_fp_encode(fp, &len, &err);
        assert_non_null(text);
        free(text);
        if (len + 1100 > size)
            break;
    }
    /* One more item, its value sized to land on the byte. */
    must(sm_fp_set(fp, "sysctl.net.core.last", "", &err), &err);
    text = sm_fp_encode(fp, &len, &err);
    assert_non_null(text);
    free(text);
    assert_true(len <= size);
    char *pad = malloc(size - len + 1);
    assert_non_null(pad);
    memset(pad, 'p', size - len);
    pad[size - len] = '\0';
    must(sm_fp_set(fp, "sysctl.net.core.last", pad, &err), &err);
    free(pad);
}

static void test_a_poll_carries_a_fingerprint_whole(void **state)
{
    (void)state;
    static sm_poll p, back;
    sm_error err = {0};
    base_poll(&p);
    sm_fingerprint fp;
    sm_fp_init(&fp);
    fp.collected_ms = 1733068800123ull;
    fp.collect_us = 3999;
    must(sm_fp_set(&fp, "if.lo.qdisc", "tbf rate 57Mbit burst 4000b lat 50ms", &err), &err);
    must(sm_fp_set(&fp, "sysctl.net.ipv4.tcp_rmem", "4096\t131072  6291456\n", &err), &err);
    must(sm_fp_set_unreadable(&fp, "cpu.governor", 2 /* ENOENT */, &err), &err);
    fp.omitted_ifaces = 3;
    snprintf(fp.omitted_reason, sizeof fp.omitted_reason, "size limit");
    p.fingerprint = &fp;
    size_t len = 0;
    char *json = sm_msg_poll_encode(&p, &len, &err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"cpu.governor\":{\"unreadable\":\"ENOENT\"}"));
    assert_non_null(strstr(json, "\"sysctl.net.ipv4.tcp_rmem\":\"4096 131072 6291456\""));
    must(sm_msg_poll_decode(json, len, &back, &err), &err);
    assert_non_null(back.fingerprint);
    assert_int_equal(back.fingerprint->n, 3);
    assert_int_equal(back.fingerprint->collected_ms, 1733068800123ull);
    assert_int_equal(back.fingerprint->collect_us, 3999);
    assert_int_equal(back.fingerprint->omitted_ifaces, 3);
    assert_string_equal(sm_fp_get(back.fingerprint, "if.lo.qdisc")->value,
                        "tbf rate 57Mbit burst 4000b lat 50ms");
    assert_string_equal(sm_fp_get(back.fingerprint, "cpu.governor")->unreadable, "ENOENT");
    char h1[SM_FP_HASH_HEX + 1], h2[SM_FP_HASH_HEX + 1];
    sm_fp_hash(&fp, h1);
    sm_fp_hash(back.fingerprint, h2);
    assert_string_equal(h1, h2);
    sm_msg_poll_fini(&back);
    assert_null(back.fingerprint);
    free(json);
    sm_fp_fini(&fp);

    /* Without one, the poll keeps its shape. */
    base_poll(&p);
    json = sm_msg_poll_encode(&p, &len, &err);
    assert_non_null(json);
    assert_null(strstr(json, "fingerprint"));
    must(sm_msg_poll_decode(json, len, &back, &err), &err);
    assert_null(back.fingerprint);
    sm_msg_poll_fini(&back);
    free(json);
}

static void test_a_fingerprint_at_the_limit_passes_and_one_byte_more_is_refused(void **state)
{
    (void)state;
    static sm_poll p, back;
    sm_error err = {0};
    sm_fingerprint fp;
    fp_of_size(&fp, SM_FP_MAX);
    size_t len = 0;
    char *text = sm_fp_encode(&fp, &len, &err);
    assert_non_null(text);
    assert_int_equal(len, SM_FP_MAX);
    free(text);
    base_poll(&p);
    p.fingerprint = &fp;
    char *json = sm_msg_poll_encode(&p, &len, &err);
    assert_non_null(json);
    must(sm_msg_poll_decode(json, len, &back, &err), &err);
    assert_non_null(back.fingerprint);
    sm_msg_poll_fini(&back);
    free(json);

    /* One byte more: the agent cannot encode it, and a poll that carries it anyway is
     * refused whole, naming the fingerprint. */
    must(sm_fp_set(&fp, "sysctl.net.core.zz", "", &err), &err);
    sm_fp_fini(&fp);
    fp_of_size(&fp, SM_FP_MAX + 1);
    assert_null(sm_fp_encode(&fp, &len, &err));
    assert_non_null(strstr(err.msg, "above the maximum"));
    json = sm_msg_poll_encode(&p, &len, &err);
    assert_non_null(json);
    memset(&back, 0, sizeof back);
    assert_int_equal(sm_msg_poll_decode(json, len, &back, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "poll: fingerprint"));
    assert_null(back.fingerprint);
    free(json);
    sm_fp_fini(&fp);
}

/* The agent gives a poll's results SM_MSG_MAX less 64 KiB less the fingerprint it carries:
 * everything else, at its largest, must fit in those 64 KiB with the envelope around it. */
static void test_the_largest_poll_besides_its_results_fits_the_budget(void **state)
{
    (void)state;
    static sm_poll p;
    sm_error err = {0};
    base_poll(&p);
    p.state = SM_AGENT_BUSY;
    p.job = UINT64_MAX;
    p.attempt = UINT32_MAX;
    memset(p.data_addr, '1', SM_ADDR_MAX);
    memcpy(p.data_addr, "fd00:", 5);
    snprintf(p.data_addr, sizeof p.data_addr, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255");
    for (size_t i = 0; i < SM_LABELS_MAX; i++) {
        memset(p.labels[i].key, 'k', SM_LABEL_KEY_MAX);
        p.labels[i].key[0] = (char)('a' + i);
        memset(p.labels[i].value, 'v', SM_LABEL_VALUE_MAX);
    }
    p.n_labels = SM_LABELS_MAX;
    p.have_facts = true;
    memset(p.facts.hostname, 'h', sizeof p.facts.hostname - 1);
    memset(p.facts.kernel, 'k', sizeof p.facts.kernel - 1);
    memset(p.facts.cpu_model, 'c', sizeof p.facts.cpu_model - 1);
    memset(p.facts.congestion, 'g', sizeof p.facts.congestion - 1);
    for (size_t i = 0; i < SM_POLL_ACKS_MAX; i++)
        memset(p.acks[i], 'c', SM_CMD_ID_MAX);
    p.n_acks = SM_POLL_ACKS_MAX;
    for (size_t i = 0; i < SM_POLL_READY_MAX; i++)
        p.ready[i] = (sm_ready){UINT64_MAX, UINT32_MAX, 65535, ""};
    p.n_ready = SM_POLL_READY_MAX;
    p.quarantined = UINT64_MAX;
    sm_fingerprint fp;
    fp_of_size(&fp, SM_FP_MAX);
    p.fingerprint = &fp;
    size_t len = 0;
    char *json = sm_msg_poll_encode(&p, &len, &err);
    assert_non_null(json);
    uint8_t key[SM_KEY_LEN] = {0};
    size_t env_len = 0;
    char *env =
        sm_env_seal(key, SM_DIR_TO_COORDINATOR, p.agent, 1, json, len, &env_len, NULL, &err);
    assert_non_null(env);
    /* What remains for the results: the 192 KiB the agent gives them, less the fingerprint. */
    assert_true(env_len - SM_FP_MAX <= 64u * 1024u - SM_FP_MAX);
    free(env);
    free(json);
    sm_fp_fini(&fp);
}

static void test_a_reply_asks_for_a_fingerprint_only_when_it_wants_one(void **state)
{
    (void)state;
    sm_poll_reply r, back;
    sm_error err = {0};
    memset(&r, 0, sizeof r);
    snprintf(r.to, sizeof r.to, "h2");
    snprintf(r.poll, sizeof r.poll, NONCE);
    size_t len = 0;
    char *json = sm_msg_reply_encode(&r, &len, &err);
    assert_non_null(json);
    assert_null(strstr(json, "want_fingerprint"));
    free(json);
    r.want_fingerprint = true;
    json = sm_msg_reply_encode(&r, &len, &err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"want_fingerprint\":true"));
    must(sm_msg_reply_decode(json, len, &back, &err), &err);
    assert_true(back.want_fingerprint);
    free(json);
    static const char bad[] = "{\"to\":\"h2\",\"poll\":\"" NONCE "\",\"acks\":[],\"commands\":[],"
                              "\"want_facts\":false,\"want_fingerprint\":1}";
    assert_int_equal(sm_msg_reply_decode(bad, strlen(bad), &back, &err), SM_EPARSE);
    assert_non_null(strstr(err.msg, "want_fingerprint"));
}

static void test_a_poll_with_a_malformed_fingerprint_is_refused_naming_it(void **state)
{
    (void)state;
    static sm_poll back;
    sm_error err = {0};
    static const char *const bad[] = {
        "{\"version\":2,\"collected_ms\":\"1\",\"collect_us\":1,\"items\":{}}",
        "{\"version\":1,\"collected_ms\":\"1\",\"collect_us\":1,\"items\":{\"a b\":\"x\"}}",
        "{\"version\":1,\"collected_ms\":\"1\",\"collect_us\":1,\"items\":{\"a\":1}}",
        "{\"version\":1,\"collected_ms\":\"1\",\"collect_us\":1,\"items\":{\"a\":"
        "{\"unreadable\":\"eacces\"}}}",
        "{\"version\":1,\"collected_ms\":\"1\",\"collect_us\":1,\"items\":{\"a\":\"x\",\"a\":\"y\"}"
        "}",
        "{\"version\":1,\"collected_ms\":\"1\",\"collect_us\":1,\"items\":{},\"extra\":1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"agent\":\"h2\",\"boot\":\"" BOOT "\",\"seq\":\"1\",\"state\":\"idle\","
                 "\"acks\":[],\"results\":[],\"fingerprint\":%s}",
                 bad[i]);
        memset(&back, 0, sizeof back);
        int rc = sm_msg_poll_decode(json, strlen(json), &back, &err);
        if (rc == 0)
            fail_msg("accepted: %s", bad[i]);
        assert_non_null(strstr(err.msg, "fingerprint"));
        assert_null(back.fingerprint);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_poll_carries_a_fingerprint_whole),
        cmocka_unit_test(test_a_fingerprint_at_the_limit_passes_and_one_byte_more_is_refused),
        cmocka_unit_test(test_the_largest_poll_besides_its_results_fits_the_budget),
        cmocka_unit_test(test_a_reply_asks_for_a_fingerprint_only_when_it_wants_one),
        cmocka_unit_test(test_a_poll_with_a_malformed_fingerprint_is_refused_naming_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
