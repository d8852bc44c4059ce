/* Unit tests of coordinator/server/tokenfile: the read-only tokens' file, each refusal naming
 * the file and the line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "coordinator/server/tokenfile.h"

#define A "read-token-aaaaaaaaaaaa"
#define B "read-token-bbbbbbbbbbbb"

static char dir[] = "/tmp/sm-tokenfile-XXXXXX";

static const char *file(const char *text, mode_t mode)
{
    static char path[64];
    snprintf(path, sizeof path, "%s/t", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

static void refused(const char *text, mode_t mode, const char *operate, const char *has)
{
    sm_token_list l;
    sm_error err = {0};
    assert_int_equal(sm_token_list_load(&l, file(text, mode), operate, &err), SM_EINVAL);
    if (!strstr(err.msg, has))
        fail_msg("'%s' does not say '%s'", err.msg, has);
    assert_int_equal(l.n, 0);
}

static void test_tokenfile_reads_one_token_a_line(void **state)
{
    (void)state;
    sm_token_list l;
    sm_error err = {0};
    assert_int_equal(sm_token_list_load(&l, file(A "\n\n" B "\r\n", 0600), "s3cret", &err), 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.ptr[0], A);
    assert_string_equal(l.ptr[1], B);
    assert_int_equal(sm_token_list_load(&l, file(A, 0400), NULL, &err), 0);
    assert_int_equal(l.n, 1);
    sm_token_list_wipe(&l);
    assert_int_equal(l.n, 0);
}

static void test_tokenfile_refuses_each_bad_file_naming_the_line(void **state)
{
    (void)state;
    char long_line[300];
    memset(long_line, 'x', 256);
    strcpy(long_line + 256, "\n");
    refused(A "\n", 0644, NULL, "readable by group or others: chmod 600 it");
    refused(A "\nshort\n", 0600, NULL, "line 2 of");
    refused(A "\nshort\n", 0600, NULL, "shorter than 16 characters");
    refused(long_line, 0600, NULL, "line 1 of");
    refused(long_line, 0600, NULL, "longer than 255 characters");
    refused("\n\n", 0600, NULL, "holds no token");
    refused(A "\n" A "\n", 0600, NULL, "line 2 of");
    refused(A "\n" A "\n", 0600, NULL, "there twice");
    refused(B "\n" A "\n", 0600, A, "is the operate token");
    sm_token_list l;
    sm_error err = {0};
    char missing[64];
    snprintf(missing, sizeof missing, "%s/none", dir);
    assert_int_equal(sm_token_list_load(&l, missing, NULL, &err), SM_ESYS);
    assert_non_null(strstr(err.msg, "cannot read the read-token file"));
}

static void test_tokenfile_refuses_more_than_the_cap(void **state)
{
    (void)state;
    char *text = calloc(SM_READ_TOKENS_MAX + 1, 32);
    assert_non_null(text);
    for (int i = 0; i <= SM_READ_TOKENS_MAX; i++)
        sprintf(text + strlen(text), "read-token-%08d\n", i);
    refused(text, 0600, NULL, "more than 64 read tokens");
    free(text);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "%s/t", dir);
    unlink(path);
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokenfile_reads_one_token_a_line),
        cmocka_unit_test(test_tokenfile_refuses_each_bad_file_naming_the_line),
        cmocka_unit_test(test_tokenfile_refuses_more_than_the_cap),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
