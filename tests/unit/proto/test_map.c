/* Unit tests of proto/map: string keys and uint64 keys (grow, replace, delete, iterate). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/map.h"

#define N_IDS 5000 /* enough for several doublings from 64 slots */

/* Ids far apart in value and alike in their low bits, which a poor hash puts in one slot. */
static uint64_t id_of(size_t i)
{
    return ((uint64_t)i << 40) | 0x7;
}

static void test_string_keys_put_get_replace_del(void **state)
{
    (void)state;
    sm_map *m = sm_map_new();
    assert_non_null(m);
    int a = 1, b = 2;
    assert_int_equal(sm_map_put(m, "alpha", &a), 0);
    assert_int_equal(sm_map_put(m, "beta", &b), 0);
    assert_ptr_equal(sm_map_get(m, "alpha"), &a);
    assert_int_equal(sm_map_put(m, "alpha", &b), 0); /* replaces */
    assert_ptr_equal(sm_map_get(m, "alpha"), &b);
    assert_int_equal(sm_map_size(m), 2);
    assert_ptr_equal(sm_map_del(m, "alpha"), &b);
    assert_null(sm_map_get(m, "alpha"));
    assert_null(sm_map_del(m, "alpha"));
    assert_int_equal(sm_map_size(m), 1);
    sm_map_free(m, NULL);
    sm_map_free(NULL, NULL);
}

static void test_id_keys_grow_and_keep_every_entry(void **state)
{
    (void)state;
    sm_map *m = sm_map_new();
    assert_non_null(m);
    static int vals[N_IDS];
    for (size_t i = 0; i < N_IDS; i++)
        assert_int_equal(sm_map_put_id(m, id_of(i), &vals[i]), 0);
    assert_int_equal(sm_map_size(m), N_IDS);
    for (size_t i = 0; i < N_IDS; i++)
        assert_ptr_equal(sm_map_get_id(m, id_of(i)), &vals[i]);
    assert_null(sm_map_get_id(m, id_of(N_IDS)));
    assert_null(sm_map_get_id(m, 0));
    /* Replacing keeps the size. */
    assert_int_equal(sm_map_put_id(m, id_of(3), &vals[4]), 0);
    assert_ptr_equal(sm_map_get_id(m, id_of(3)), &vals[4]);
    assert_int_equal(sm_map_size(m), N_IDS);
    sm_map_free(m, NULL);
}

static void test_id_keys_delete(void **state)
{
    (void)state;
    sm_map *m = sm_map_new();
    static int vals[N_IDS];
    for (size_t i = 0; i < N_IDS; i++)
        assert_int_equal(sm_map_put_id(m, id_of(i), &vals[i]), 0);
    for (size_t i = 0; i < N_IDS; i += 2)
        assert_ptr_equal(sm_map_del_id(m, id_of(i)), &vals[i]);
    assert_null(sm_map_del_id(m, id_of(0))); /* already gone */
    assert_int_equal(sm_map_size(m), N_IDS / 2);
    for (size_t i = 0; i < N_IDS; i++) {
        if (i % 2)
            assert_ptr_equal(sm_map_get_id(m, id_of(i)), &vals[i]);
        else
            assert_null(sm_map_get_id(m, id_of(i)));
    }
    /* Id 0 and UINT64_MAX are keys like any other. */
    assert_int_equal(sm_map_put_id(m, 0, &vals[0]), 0);
    assert_int_equal(sm_map_put_id(m, UINT64_MAX, &vals[1]), 0);
    assert_ptr_equal(sm_map_get_id(m, 0), &vals[0]);
    assert_ptr_equal(sm_map_del_id(m, UINT64_MAX), &vals[1]);
    assert_int_equal(sm_map_size(m), N_IDS / 2 + 1);
    sm_map_free(m, NULL);
}

static void test_id_keys_iterate_each_entry_once(void **state)
{
    (void)state;
    sm_map *m = sm_map_new();
    static int vals[N_IDS];
    for (size_t i = 0; i < N_IDS; i++)
        assert_int_equal(sm_map_put_id(m, id_of(i), &vals[i]), 0);
    for (size_t i = 0; i < N_IDS; i += 3)
        sm_map_del_id(m, id_of(i));
    unsigned char *seen = calloc(N_IDS, 1);
    assert_non_null(seen);
    size_t cur = 0, n = 0;
    uint64_t id;
    void *val;
    while (sm_map_next_id(m, &cur, &id, &val)) {
        size_t i = (size_t)(id >> 40);
        assert_true(i < N_IDS);
        assert_int_equal(id, id_of(i));
        assert_ptr_equal(val, &vals[i]);
        assert_int_not_equal(i % 3, 0);
        assert_int_equal(seen[i], 0);
        seen[i] = 1;
        n++;
    }
    assert_int_equal(n, sm_map_size(m));
    assert_int_equal(n, N_IDS - (N_IDS + 2) / 3);
    free(seen);
    sm_map_free(m, NULL);
}

static void test_free_calls_free_val_on_every_value(void **state)
{
    (void)state;
    sm_map *m = sm_map_new();
    for (uint64_t i = 0; i < 100; i++) {
        char *v = malloc(8);
        assert_non_null(v);
        assert_int_equal(sm_map_put_id(m, i, v), 0);
    }
    sm_map_free(m, free); /* ASan's leak check proves every value was freed */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_keys_put_get_replace_del),
        cmocka_unit_test(test_id_keys_grow_and_keep_every_entry),
        cmocka_unit_test(test_id_keys_delete),
        cmocka_unit_test(test_id_keys_iterate_each_entry_once),
        cmocka_unit_test(test_free_calls_free_val_on_every_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
