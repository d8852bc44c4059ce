/* Unit tests of the spec's presets: each decodes, with the documented sizes and client models, and
 * their list encodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coordinator/model/spec.h"

/* ---- presets ---- */

static void test_spec_every_preset_decodes(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        size_t n_tests;
        size_t variants[3];
    } want[] = {
        {"seed-tcp-unix", 1, {3}},
        {"seed-http", 2, {3, 12}},
        {"quick", 3, {2, 2, 2}},
        {"full", 3, {9, 4, 2}},
    };
    const sm_preset *p = sm_presets();
    size_t n = 0;
    for (; p[n].name != NULL; n++) {
        assert_true(n < sizeof want / sizeof want[0]);
        assert_string_equal(p[n].name, want[n].name);
        assert_non_null(p[n].description);
        assert_null(strchr(p[n].description, '\n'));
        assert_ptr_equal(sm_preset_find(p[n].name), &p[n]);
        sm_spec s;
        sm_error err;
        if (sm_spec_decode(p[n].spec_json, strlen(p[n].spec_json), &s, &err) != 0)
            fail_msg("%s: %s (%s)", p[n].name, err.msg, err.field);
        assert_string_equal(s.name, p[n].name);
        assert_int_equal(s.hosts, SM_HOSTS_ALL);
        assert_false(sm_spec_has_scope(&s, SM_SCOPE_PAIR));
        assert_int_equal(s.n_tests, want[n].n_tests);
        for (size_t i = 0; i < s.n_tests; i++)
            assert_int_equal(s.tests[i].n_variants, want[n].variants[i]);
        sm_spec_fini(&s);
    }
    assert_int_equal(n, 4);
    assert_null(sm_preset_find("seed-udp"));
    assert_null(sm_preset_find(NULL));
}

static void test_spec_seed_http_alternates_the_client_models(void **state)
{
    (void)state;
    sm_spec s;
    sm_error err;
    const sm_preset *h = sm_preset_find("seed-http");
    assert_int_equal(sm_spec_decode(h->spec_json, strlen(h->spec_json), &s, &err), 0);
    /* The 2009 test itself: the seed's body, eleven rounds, one connection, plain HTTP. */
    for (size_t i = 0; i < 3; i++) {
        const sm_params *v = &s.tests[0].variants[i];
        assert_int_equal(v->workload, SM_WL_HTTP);
        assert_int_equal(v->client, (sm_http_client)i);
        assert_int_equal(v->connections, 1);
        assert_false(v->tls);
        assert_int_equal(v->bytes, 51711600);
        assert_int_equal(v->repeat, 11);
        assert_int_equal(v->time_limit_ms, 120000);
    }
    /* The follow-ups: client, then connections, then tls (the last axis varies fastest), on
     * a quarter of the body, so that 4 connections x 5 rounds of it with TLS end in time on a
     * host 100x slower than the machine the preset was sized on. */
    for (size_t i = 0; i < 12; i++) {
        const sm_params *v = &s.tests[1].variants[i];
        assert_int_equal(v->workload, SM_WL_HTTP);
        assert_int_equal(v->client, (sm_http_client)(i / 4));
        assert_int_equal(v->connections, (i / 2) % 2 ? 4 : 1);
        assert_int_equal(v->tls, i % 2 == 1);
        assert_int_equal(v->bytes, 51711600 / 4);
        assert_int_equal(v->repeat, 5);
        assert_int_equal(v->time_limit_ms, 120000);
        assert_true((uint64_t)v->connections * v->repeat * v->bytes <= 5ull * 51711600);
    }
    sm_spec_fini(&s);
}

static void test_spec_quick_and_full_presets_use_the_documented_sizes(void **state)
{
    (void)state;
    sm_spec s;
    sm_error err;
    const sm_preset *q = sm_preset_find("quick");
    assert_int_equal(sm_spec_decode(q->spec_json, strlen(q->spec_json), &s, &err), 0);
    assert_int_equal(s.repetitions, 3);
    assert_int_equal(s.warmup, 1);
    assert_int_equal(s.tests[0].variants[1].msg_size, 131072);
    assert_int_equal(s.tests[0].variants[1].count, 256);
    assert_int_equal(s.tests[1].variants[0].workload, SM_WL_RR);
    assert_int_equal(s.tests[1].variants[0].duration_ms, 1000);
    assert_int_equal(s.tests[2].variants[1].transport, SM_TR_UNIX);
    assert_int_equal(s.tests[2].variants[1].count, 500);
    sm_spec_fini(&s);

    const sm_preset *f = sm_preset_find("full");
    assert_int_equal(sm_spec_decode(f->spec_json, strlen(f->spec_json), &s, &err), 0);
    assert_int_equal(s.repetitions, 5);
    /* tcp: 3 sizes x nodelay off/on, then unix: 3 sizes. */
    static const uint32_t sizes[] = {128, 128, 4096, 4096, 131072, 131072, 128, 4096, 131072};
    for (size_t i = 0; i < 9; i++) {
        assert_int_equal(s.tests[0].variants[i].msg_size, sizes[i]);
        assert_int_equal(s.tests[0].variants[i].bytes, 64ull << 20);
        assert_int_equal(s.tests[0].variants[i].nodelay, i < 6 && i % 2 == 1);
        assert_int_equal(s.tests[0].variants[i].transport, i < 6 ? SM_TR_TCP : SM_TR_UNIX);
    }
    assert_int_equal(s.tests[1].variants[3].req_size, 1024);
    assert_int_equal(s.tests[1].variants[3].duration_ms, 2000);
    assert_int_equal(s.tests[2].variants[0].count, 2000);
    sm_spec_fini(&s);
}

static void test_spec_presets_encode_lists_every_preset_with_its_spec(void **state)
{
    (void)state;
    char *text = sm_presets_encode();
    assert_non_null(text);
    assert_true(strncmp(text, "{\"presets\":[{\"name\":\"seed-tcp-unix\",\"description\":", 49) ==
                0);
    assert_non_null(strstr(text, "\"spec\":{\"name\":\"seed-tcp-unix\",\"hosts\":\"all\""));
    assert_non_null(strstr(text, "\"name\":\"quick\""));
    assert_non_null(strstr(text, "\"spec\":{\"name\":\"full\""));
    assert_non_null(strstr(text, "\"nodelay\":[false,true]"));
    assert_non_null(strstr(text, "\"msg_size\":[128,4096,131072]"));
    assert_non_null(strstr(text, sm_preset_find("quick")->description));
    /* Each spec comes back as an object the decoder accepts: cut it out and decode it. */
    for (const sm_preset *p = sm_presets(); p->name != NULL; p++) {
        char key[96];
        snprintf(key, sizeof key, "\"spec\":{\"name\":\"%s\"", p->name);
        const char *at = strstr(text, key);
        assert_non_null(at);
        at += strlen("\"spec\":");
        size_t len = strlen(p->spec_json);
        assert_memory_equal(at, p->spec_json, len);
        sm_spec s;
        sm_error err;
        assert_int_equal(sm_spec_decode(at, len, &s, &err), 0);
        sm_spec_fini(&s);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_every_preset_decodes),
        cmocka_unit_test(test_spec_seed_http_alternates_the_client_models),
        cmocka_unit_test(test_spec_quick_and_full_presets_use_the_documented_sizes),
        cmocka_unit_test(test_spec_presets_encode_lists_every_preset_with_its_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
