/* Unit tests of the cJSON helpers (proto/json.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proto/json.h"

#include <stdlib.h>
#include <string.h>

/* The compact text of a one-member object built by put, freed by the caller. */
static char *one(bool (*put)(cJSON *, const char *, uint64_t), uint64_t v)
{
    cJSON *o = cJSON_CreateObject();
    assert_non_null(o);
    assert_true(put(o, "v", v));
    sm_error err = {0};
    char *text = sm_json_finish(o, true, 0, "t", &err);
    assert_non_null(text);
    return text;
}

static void test_json_u64_is_a_raw_number_up_to_2p53_minus_1_then_a_string(void **state)
{
    (void)state;
    char *t = one(sm_json_put_u64, 9007199254740991ull);
    assert_string_equal(t, "{\"v\":9007199254740991}");
    free(t);
    t = one(sm_json_put_u64, 9007199254740992ull);
    assert_string_equal(t, "{\"v\":\"9007199254740992\"}");
    free(t);
}

static void test_json_exact_numbers_prints_a_parsed_document_to_the_last_digit(void **state)
{
    (void)state;
    static const char doc[] = "{\"a\":276.76068227043396,\"b\":[1,0.1,{\"c\":-2.5e-300}],"
                              "\"d\":\"x\",\"e\":9007199254740991,\"f\":null}";
    cJSON *o = cJSON_Parse(doc);
    assert_non_null(o);
    char *cut = cJSON_PrintUnformatted(o);
    assert_non_null(strstr(cut, "\"a\":276.760682270434,")); /* what cJSON alone writes */
    free(cut);
    assert_true(sm_json_exact_numbers(o));
    char *text = cJSON_PrintUnformatted(o);
    assert_string_equal(text, doc);
    free(text);
    cJSON_Delete(o);
    assert_true(sm_json_exact_numbers(NULL));
}

static void test_json_u64_str_is_always_a_decimal_string(void **state)
{
    (void)state;
    char *t = one(sm_json_put_u64_str, 7);
    assert_string_equal(t, "{\"v\":\"7\"}");
    free(t);
    t = one(sm_json_put_u64_str, UINT64_MAX);
    assert_string_equal(t, "{\"v\":\"18446744073709551615\"}");
    free(t);
}

static void test_json_put_of_a_null_item_fails(void **state)
{
    (void)state;
    cJSON *o = cJSON_CreateObject();
    assert_false(sm_json_put(o, "k", NULL));
    assert_null(o->child);
    sm_error err = {0};
    assert_null(sm_json_finish(o, false, 0, "thing", &err));
    assert_int_equal(err.code, SM_ENOMEM);
    assert_string_equal(err.msg, "thing: out of memory while encoding");
}

static void test_json_get_string_and_array_name_what_and_field(void **state)
{
    (void)state;
    const char text[] = "{\"s\":\"x\",\"n\":1,\"a\":[1,2,3]}";
    cJSON *o = NULL;
    sm_error err = {0};
    assert_int_equal(sm_json_parse_object(text, sizeof text - 1, "msg", &o, &err), 0);
    const char *s = NULL;
    assert_int_equal(sm_json_get_string(o, "msg", "s", &s, &err), 0);
    assert_string_equal(s, "x");
    assert_int_equal(sm_json_get_string(o, "msg", "n", &s, &err), SM_EPARSE);
    assert_string_equal(err.msg, "msg: n: expected a string");
    const cJSON *a = NULL;
    assert_int_equal(sm_json_get_array(o, "msg", "a", 3, &a, &err), 0);
    assert_int_equal(cJSON_GetArraySize(a), 3);
    a = NULL;
    assert_int_equal(sm_json_get_array(o, "msg", "a", 2, &a, &err), SM_EINVAL);
    assert_string_equal(err.msg, "msg: a: 3 entries is above the maximum 2");
    assert_null(a);
    assert_int_equal(sm_json_get_array(o, "msg", "s", 2, &a, &err), SM_EPARSE);
    assert_string_equal(err.msg, "msg: s: expected an array");
    cJSON_Delete(o);
}

static void test_json_parse_object_refuses_junk_after_the_value(void **state)
{
    (void)state;
    cJSON *o = NULL;
    sm_error err = {0};
    assert_int_equal(sm_json_parse_object("{} x", 4, "spec", &o, &err), SM_EPARSE);
    assert_string_equal(err.msg, "spec: junk after the JSON value at byte 3");
    assert_null(o);
    assert_int_equal(sm_json_parse_object("[]", 2, "spec", &o, &err), SM_EPARSE);
    assert_string_equal(err.msg, "spec: expected a JSON object");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_u64_is_a_raw_number_up_to_2p53_minus_1_then_a_string),
        cmocka_unit_test(test_json_u64_str_is_always_a_decimal_string),
        cmocka_unit_test(test_json_exact_numbers_prints_a_parsed_document_to_the_last_digit),
        cmocka_unit_test(test_json_put_of_a_null_item_fails),
        cmocka_unit_test(test_json_get_string_and_array_name_what_and_field),
        cmocka_unit_test(test_json_parse_object_refuses_junk_after_the_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
