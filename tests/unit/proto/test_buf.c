/* proto/buf: the growing NUL-terminated buffer the HTTP clients read bodies into. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/buf.h"
#include "proto/err.h"

/* The out-of-memory case asks for 8 EiB: under ASan the allocator must answer NULL, as libc's
 * does, rather than end the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

static void test_buf_starts_empty_without_memory(void **state)
{
    (void)state;
    sm_buf b;
    sm_buf_init(&b);
    assert_null(b.p);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    sm_buf_fini(&b); /* nothing to free */
    assert_null(b.p);
}

static void test_buf_append_keeps_the_bytes_nul_terminated(void **state)
{
    (void)state;
    sm_buf b = {0};
    assert_int_equal(sm_buf_append(&b, "{\"a\":", 5), 0);
    assert_int_equal(sm_buf_append(&b, "1}", 2), 0);
    assert_int_equal(b.len, 7);
    assert_string_equal(b.p, "{\"a\":1}");
    assert_int_equal(b.cap, 4096);
    sm_buf_fini(&b);
    assert_null(b.p);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
}

static void test_buf_append_of_nothing_makes_an_empty_string(void **state)
{
    (void)state;
    sm_buf b = {0};
    assert_int_equal(sm_buf_append(&b, NULL, 0), 0);
    assert_non_null(b.p);
    assert_string_equal(b.p, "");
    assert_int_equal(b.len, 0);
    sm_buf_fini(&b);
}

static void test_buf_keeps_nul_bytes_of_its_own(void **state)
{
    (void)state;
    sm_buf b = {0};
    assert_int_equal(sm_buf_append(&b, "a\0b", 3), 0);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.p, "a\0b\0", 4);
    sm_buf_fini(&b);
}

static void test_buf_grows_by_doubling_across_many_pieces(void **state)
{
    (void)state;
    sm_buf b = {0};
    for (int i = 0; i < 10000; i++)
        assert_int_equal(sm_buf_append(&b, "abc", 3), 0);
    assert_int_equal(b.len, 30000);
    assert_int_equal(b.cap, 32768);
    assert_int_equal(b.p[30000], '\0');
    for (size_t i = 0; i < b.len; i += 3)
        assert_memory_equal(b.p + i, "abc", 3);
    sm_buf_fini(&b);
}

static void test_buf_clear_empties_but_keeps_the_memory(void **state)
{
    (void)state;
    sm_buf b = {0};
    sm_buf_clear(&b); /* no memory yet: nothing to terminate */
    assert_null(b.p);
    assert_int_equal(sm_buf_append(&b, "first answer", 12), 0);
    char *p = b.p;
    sm_buf_clear(&b);
    assert_int_equal(b.len, 0);
    assert_ptr_equal(b.p, p);
    assert_string_equal(b.p, "");
    assert_int_equal(sm_buf_append(&b, "2nd", 3), 0);
    assert_ptr_equal(b.p, p);
    assert_string_equal(b.p, "2nd");
    sm_buf_fini(&b);
}

static void test_buf_append_that_would_wrap_the_size_fails_and_changes_nothing(void **state)
{
    (void)state;
    char mem[16] = "abc";
    sm_buf b = {mem, SIZE_MAX - 1, sizeof mem};
    assert_int_equal(sm_buf_append(&b, "x", 1), SM_ENOMEM);
    assert_ptr_equal(b.p, mem);
    assert_int_equal(b.len, SIZE_MAX - 1);
    assert_int_equal(b.cap, sizeof mem);
    assert_string_equal(mem, "abc");
}

static void test_buf_append_out_of_memory_fails_and_changes_nothing(void **state)
{
    (void)state;
    sm_buf b = {0};
    assert_int_equal(sm_buf_append(&b, "kept", 4), 0);
    char *p = b.p;
    assert_int_equal(sm_buf_append(&b, "x", SIZE_MAX / 2), SM_ENOMEM);
    assert_ptr_equal(b.p, p);
    assert_int_equal(b.len, 4);
    assert_int_equal(b.cap, 4096);
    assert_string_equal(b.p, "kept");
    sm_buf_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_starts_empty_without_memory),
        cmocka_unit_test(test_buf_append_keeps_the_bytes_nul_terminated),
        cmocka_unit_test(test_buf_append_of_nothing_makes_an_empty_string),
        cmocka_unit_test(test_buf_keeps_nul_bytes_of_its_own),
        cmocka_unit_test(test_buf_grows_by_doubling_across_many_pieces),
        cmocka_unit_test(test_buf_clear_empties_but_keeps_the_memory),
        cmocka_unit_test(test_buf_append_that_would_wrap_the_size_fails_and_changes_nothing),
        cmocka_unit_test(test_buf_append_out_of_memory_fails_and_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
