/* Unit tests of the host fingerprint's items, hash and JSON codec (proto/fingerprint.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proto/err.h"
#include "proto/fingerprint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sample(sm_fingerprint *fp, bool reverse)
{
    static const char *const kv[][2] = {
        {"kernel.release", "6.1.0-18-amd64"},
        {"if.lo.qdisc", "noqueue"},
        {"sysctl.net.ipv4.tcp_rmem", "4096 131072 6291456"},
        {"info.hostname", "h1"},
    };
    sm_error err = {0};
    sm_fp_init(fp);
    fp->collected_ms = 1733068800000ull;
    fp->collect_us = 4210;
    for (size_t k = 0; k < 4; k++) {
        size_t i = reverse ? 3 - k : k;
        assert_int_equal(sm_fp_set(fp, kv[i][0], kv[i][1], &err), 0);
    }
    assert_int_equal(sm_fp_set_unreadable(fp, "cpu.governor", ENOENT, &err), 0);
}

static void test_round_trip_keeps_items_and_hash(void **state)
{
    (void)state;
    sm_fingerprint a, b;
    sample(&a, false);
    sm_error err = {0};
    size_t len = 0;
    char *text = sm_fp_encode(&a, &len, &err);
    assert_non_null(text);
    assert_int_equal(len, strlen(text));
    sm_fp_init(&b);
    assert_int_equal(sm_fp_decode(text, len, &b, &err), 0);
    assert_int_equal(b.n, 5);
    assert_int_equal(b.collected_ms, 1733068800000ull);
    assert_int_equal(b.collect_us, 4210);
    assert_string_equal(sm_fp_get(&b, "if.lo.qdisc")->value, "noqueue");
    const sm_fp_item *gov = sm_fp_get(&b, "cpu.governor");
    assert_null(gov->value);
    assert_string_equal(gov->unreadable, "ENOENT");
    char buf[64];
    assert_string_equal(sm_fp_item_text(gov, buf, sizeof buf), "unreadable (ENOENT)");
    assert_string_equal(sm_fp_item_text(NULL, buf, sizeof buf), "(absent)");
    char ha[SM_FP_HASH_HEX + 1], hb[SM_FP_HASH_HEX + 1];
    sm_fp_hash(&a, ha);
    sm_fp_hash(&b, hb);
    assert_int_equal(strlen(ha), SM_FP_HASH_HEX);
    assert_string_equal(ha, hb);
    /* Encoding the decoded document gives the same text. */
    char *again = sm_fp_encode(&b, NULL, &err);
    assert_string_equal(again, text);
    free(again);
    free(text);
    sm_fp_fini(&a);
    sm_fp_fini(&b);
}

static void test_hash_ignores_order_and_time_but_not_values(void **state)
{
    (void)state;
    sm_fingerprint a, b;
    sample(&a, false);
    sample(&b, true);
    b.collected_ms += 60000;
    b.collect_us = 1;
    char ha[SM_FP_HASH_HEX + 1], hb[SM_FP_HASH_HEX + 1];
    sm_fp_hash(&a, ha);
    sm_fp_hash(&b, hb);
    assert_string_equal(ha, hb);
    sm_error err = {0};
    assert_int_equal(sm_fp_set(&b, "if.lo.qdisc", "tbf rate 400Mbit", &err), 0);
    sm_fp_hash(&b, hb);
    assert_string_not_equal(ha, hb);
    /* An unreadable reason is part of the settings too. */
    sm_fp_fini(&b);
    sample(&b, false);
    assert_int_equal(sm_fp_set_unreadable(&b, "cpu.governor", EACCES, &err), 0);
    sm_fp_hash(&b, hb);
    assert_string_not_equal(ha, hb);
    sm_fp_fini(&a);
    sm_fp_fini(&b);
}

static void test_set_normalises_whitespace_and_replaces(void **state)
{
    (void)state;
    sm_fingerprint fp;
    sm_fp_init(&fp);
    sm_error err = {0};
    assert_int_equal(sm_fp_set(&fp, "sysctl.net.ipv4.tcp_wmem", "  4096\t16384 \n 4194304 ", &err),
                     0);
    assert_int_equal(sm_fp_setf(&fp, "if.lo.mtu", &err, "%d", 65536), 0);
    assert_int_equal(sm_fp_set(&fp, "if.lo.mtu", "1500", &err), 0);
    assert_int_equal(sm_fp_set_unreadable(&fp, "cpu.x", 4000, &err), 0);
    sm_fp_sort(&fp);
    assert_int_equal(fp.n, 3);
    assert_string_equal(sm_fp_get(&fp, "sysctl.net.ipv4.tcp_wmem")->value, "4096 16384 4194304");
    assert_string_equal(sm_fp_get(&fp, "if.lo.mtu")->value, "1500");
    assert_string_equal(sm_fp_get(&fp, "cpu.x")->unreadable, "E4000");
    assert_null(sm_fp_get(&fp, "cpu.y"));
    /* A value too long is cut, and says so. */
    char *big = malloc(SM_FP_VALUE_MAX + 100);
    memset(big, 'v', SM_FP_VALUE_MAX + 99);
    big[SM_FP_VALUE_MAX + 99] = '\0';
    assert_int_equal(sm_fp_set(&fp, "kernel.cmdline", big, &err), 0);
    sm_fp_sort(&fp);
    const char *v = sm_fp_get(&fp, "kernel.cmdline")->value;
    assert_int_equal(strlen(v), SM_FP_VALUE_MAX);
    assert_string_equal(v + SM_FP_VALUE_MAX - 3, "...");
    free(big);
    assert_int_equal(sm_fp_remove_prefix(&fp, "if."), 1);
    assert_int_equal(fp.n, 3);
    sm_fp_fini(&fp);
}

static void test_bad_item_names_are_refused(void **state)
{
    (void)state;
    sm_fingerprint fp;
    sm_fp_init(&fp);
    sm_error err = {0};
    char longname[SM_FP_KEY_MAX + 2];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_false(sm_fp_key_valid(""));
    assert_false(sm_fp_key_valid("if.lo qdisc"));
    assert_false(sm_fp_key_valid("a\"b"));
    assert_false(sm_fp_key_valid(longname));
    longname[SM_FP_KEY_MAX] = '\0';
    assert_true(sm_fp_key_valid(longname));
    assert_true(sm_fp_key_valid("if.veth0@if2.class.1:10/x+y-z"));
    assert_int_equal(sm_fp_set(&fp, "bad name", "1", &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "invalid item name 'bad name'"));
    assert_int_equal(fp.n, 0);
    sm_fp_fini(&fp);
}

/* Decodes text and expects code, with want in the reason. */
static void refused(const char *text, int code, const char *want)
{
    sm_fingerprint fp;
    sm_fp_init(&fp);
    sm_error err = {0};
    assert_int_equal(sm_fp_decode(text, strlen(text), &fp, &err), code);
    if (strstr(err.msg, want) == NULL)
        fail_msg("reason '%s' lacks '%s'", err.msg, want);
    assert_int_equal(fp.n, 0);
    sm_fp_fini(&fp);
}

#define HEAD "{\"version\":1,\"collected_ms\":\"1\",\"collect_us\":2,"

static void test_decode_refuses_bad_documents_with_clear_reasons(void **state)
{
    (void)state;
    refused(HEAD "\"items\":{\"bad name\":\"1\"}}", SM_EINVAL, "invalid item name 'bad name'");
    refused(HEAD "\"items\":{\"a\":{\"unreadable\":\"eacces\"}}}", SM_EINVAL,
            "a: bad unreadable reason");
    refused(HEAD "\"items\":{\"a\":{\"unreadable\":\"\"}}}", SM_EINVAL, "a: bad unreadable reason");
    refused(HEAD "\"items\":{\"a\":{\"unreadable\":\"EACCES\",\"x\":1}}}", SM_EPARSE,
            "a: expected a string or {\"unreadable\":\"ERRNO\"}");
    refused(HEAD "\"items\":{\"a\":7}}", SM_EPARSE, "a: expected a string");
    refused(HEAD "\"items\":{\"a\":\"1\",\"b\":\"2\",\"a\":\"3\"}}", SM_EPARSE, "item 'a' twice");
    refused(HEAD "\"items\":{},\"extra\":1}", SM_EPARSE, "unknown field 'extra'");
    refused("{\"version\":2,\"collected_ms\":\"1\",\"collect_us\":2,\"items\":{}}", SM_EINVAL,
            "version 2 is not 1");
    refused(HEAD "\"items\":[]}", SM_EPARSE, "items: expected an object");
    refused("{\"version\":1,\"items\":{}", SM_EPARSE, "fingerprint");
}

/* A document of exactly size bytes: items "iNN" of 4000 bytes, the last one shorter to end the
 * document at size. Each item is "\"iNN\":\"" (7 bytes), its value, a quote and a comma. */
static char *document_of(size_t size)
{
    char *doc = malloc(size + 1);
    assert_non_null(doc);
    size_t at = (size_t)snprintf(doc, size + 1, HEAD "\"items\":{");
    size_t full = (size - at - 2 - 8) / (8 + 4000 + 1);
    size_t last = size - at - 2 - full * (8 + 4000 + 1) - 8;
    assert_true(last <= SM_FP_VALUE_MAX);
    for (size_t i = 0; i <= full; i++) {
        size_t n = i < full ? 4000 : last;
        at += (size_t)snprintf(doc + at, size + 1 - at, "\"i%02zu\":\"", i);
        memset(doc + at, 'x', n);
        at += n;
        doc[at++] = '"';
        if (i < full)
            doc[at++] = ',';
    }
    memcpy(doc + at, "}}", 2);
    at += 2;
    assert_int_equal(at, size);
    doc[size] = '\0';
    return doc;
}

static void test_size_limit_is_exact(void **state)
{
    (void)state;
    sm_fingerprint fp;
    sm_fp_init(&fp);
    sm_error err = {0};
    char *doc = document_of(SM_FP_MAX);
    assert_int_equal(strlen(doc), SM_FP_MAX);
    assert_int_equal(sm_fp_decode(doc, SM_FP_MAX, &fp, &err), 0);
    assert_true(fp.n > 10);
    /* Its own encoding is that size too, so the encoder takes it. */
    size_t len = 0;
    char *text = sm_fp_encode(&fp, &len, &err);
    assert_non_null(text);
    assert_int_equal(len, SM_FP_MAX);
    free(text);
    free(doc);

    doc = document_of(SM_FP_MAX + 1);
    assert_int_equal(sm_fp_decode(doc, SM_FP_MAX + 1, &fp, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "above the maximum"));
    assert_int_equal(fp.n, 0);
    free(doc);

    /* The encoder refuses what the decoder would. */
    assert_int_equal(sm_fp_set(&fp, "big", "y", &err), 0);
    for (int i = 0; i < 13; i++) {
        char key[16], val[4001];
        memset(val, 'z', 4000);
        val[4000] = '\0';
        snprintf(key, sizeof key, "k%d", i);
        assert_int_equal(sm_fp_set(&fp, key, val, &err), 0);
    }
    assert_null(sm_fp_encode(&fp, &len, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_non_null(strstr(err.msg, "above the maximum"));
    sm_fp_fini(&fp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_keeps_items_and_hash),
        cmocka_unit_test(test_hash_ignores_order_and_time_but_not_values),
        cmocka_unit_test(test_set_normalises_whitespace_and_replaces),
        cmocka_unit_test(test_bad_item_names_are_refused),
        cmocka_unit_test(test_decode_refuses_bad_documents_with_clear_reasons),
        cmocka_unit_test(test_size_limit_is_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
