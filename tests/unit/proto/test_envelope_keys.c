/* Unit tests of the fleet's keys: HKDF derivation per agent, reserved and invalid names, and key
 * files written, loaded and generated. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "proto/envelope.h"
#include "tests/unit/proto/envelope_fixture.h"

static void test_key_derive_matches_hkdf_sha256_computed_by_openssl_kdf(void **state)
{
    (void)state;
    /* Expected values from the OpenSSL command line, independent of this code:
     * openssl kdf -keylen 32 -kdfopt digest:SHA256 -kdfopt hexkey:000102...1f
     *   -kdfopt salt:"sockmatrix/2 agent key" -kdfopt info:h1 HKDF */
    static const uint8_t h1[SM_KEY_LEN] = {
        0xDA, 0xC8, 0xEC, 0x4F, 0x75, 0x7E, 0x83, 0x06, 0xE2, 0xBE, 0x2B,
        0xF0, 0xF3, 0x87, 0x7F, 0x3B, 0x4C, 0x15, 0x10, 0x96, 0xEE, 0x7E,
        0x95, 0x87, 0x69, 0x5F, 0x77, 0x14, 0x36, 0xC6, 0x7F, 0xA7,
    };
    static const uint8_t h2[SM_KEY_LEN] = {
        0x1B, 0x98, 0xE6, 0xA3, 0x1E, 0xE6, 0x01, 0x40, 0xCB, 0x47, 0xBF,
        0x9A, 0xFE, 0x31, 0x8C, 0xA6, 0xE4, 0x29, 0x21, 0x52, 0x55, 0xC6,
        0x26, 0x3A, 0x47, 0x62, 0xC1, 0xFB, 0x69, 0x1C, 0x18, 0x76,
    };
    uint8_t out[SM_KEY_LEN];
    sm_error err;
    assert_int_equal(sm_key_derive(KEY, "h1", out, &err), 0);
    assert_memory_equal(out, h1, SM_KEY_LEN);
    assert_int_equal(sm_key_derive(KEY, "h2", out, &err), 0);
    assert_memory_equal(out, h2, SM_KEY_LEN);
    /* One agent's key does not open another's messages, nor does the fleet key. */
    uint8_t k1[SM_KEY_LEN];
    assert_int_equal(sm_key_derive(KEY, "h1", k1, &err), 0);
    size_t len;
    char *env = sm_env_seal(k1, SM_DIR_TO_COORDINATOR, "h1", T0, "{}", 2, &len, NULL, &err);
    assert_non_null(env);
    assert_int_equal(envelope_fixture_open_copy(k1, env, len, T0, NULL, &err), SM_REJ_NONE);
    assert_int_equal(envelope_fixture_open_copy(out, env, len, T0, NULL, &err), SM_REJ_MAC);
    assert_int_equal(envelope_fixture_open_copy(KEY, env, len, T0, NULL, &err), SM_REJ_MAC);
    free(env);
}

static void test_key_derive_refuses_reserved_and_invalid_names(void **state)
{
    (void)state;
    uint8_t out[SM_KEY_LEN];
    sm_error err;
    assert_int_equal(sm_key_derive(KEY, "coordinator", out, &err), SM_EINVAL);
    assert_contains(err.msg, "coordinator");
    assert_int_equal(sm_key_derive(KEY, "bad name", out, &err), SM_EINVAL);
    assert_int_equal(sm_key_derive(KEY, "", out, &err), SM_EINVAL);
    assert_true(sm_name_reserved("coordinator"));
    assert_false(sm_name_reserved("coordinator2"));
    assert_false(sm_name_reserved("h1"));
}

static void test_key_write_round_trips_through_key_load(void **state)
{
    (void)state;
    char dir[] = "/tmp/sm-keywrite-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/k", dir);
    uint8_t k1[SM_KEY_LEN], back[SM_KEY_LEN];
    sm_error err;
    assert_int_equal(sm_key_derive(KEY, "h1", k1, &err), 0);
    assert_int_equal(sm_key_write(path, k1, &err), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(sm_key_load(path, back, &err), 0);
    assert_memory_equal(back, k1, SM_KEY_LEN);
    assert_int_equal(sm_key_write(path, KEY, &err), SM_EINVAL); /* never overwrites */
    assert_int_equal(sm_key_load(path, back, &err), 0);
    assert_memory_equal(back, k1, SM_KEY_LEN);
    unlink(path);
    rmdir(dir);
}

static void test_name_valid_accepts_only_1_to_64_safe_characters(void **state)
{
    (void)state;
    char n64[66];
    memset(n64, 'a', 65);
    n64[64] = '\0';
    assert_true(sm_name_valid(n64));
    n64[64] = 'a';
    n64[65] = '\0';
    assert_false(sm_name_valid(n64));
    assert_true(sm_name_valid("a"));
    assert_true(sm_name_valid("coordinator"));
    assert_true(sm_name_valid("Node-01.rack_2"));
    assert_true(sm_name_valid("..."));
    assert_false(sm_name_valid(""));
    assert_false(sm_name_valid(NULL));
    assert_false(sm_name_valid("a b"));
    assert_false(sm_name_valid("a/b"));
    assert_false(sm_name_valid("a:b"));
    assert_false(sm_name_valid("a\"b"));
    assert_false(sm_name_valid("a\nb"));
    assert_false(sm_name_valid("caf\xc3\xa9"));
}

/* A fresh temporary folder for key files; removed with its contents by rm_dir. */
static void make_dir(char *dir)
{
    strcpy(dir, "/tmp/sm_env_keyXXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void rm_dir(const char *dir, const char *file)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    unlink(path);
    rmdir(dir);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

#define KEY_TEXT "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F"

static void test_key_load_reads_64_hex_digits_with_optional_newline(void **state)
{
    (void)state;
    char dir[32], path[64];
    make_dir(dir);
    snprintf(path, sizeof path, "%s/key", dir);
    uint8_t key[SM_KEY_LEN];
    sm_error err;
    write_file(path, KEY_TEXT "\n", 0600);
    assert_int_equal(sm_key_load(path, key, &err), SM_OK);
    assert_memory_equal(key, KEY, SM_KEY_LEN);
    write_file(path, KEY_TEXT, 0400);
    memset(key, 0, sizeof key);
    assert_int_equal(sm_key_load(path, key, &err), SM_OK);
    assert_memory_equal(key, KEY, SM_KEY_LEN);

    static const char *const bad[] = {
        (KEY_TEXT "\n\n"),
        (KEY_TEXT "0"),
        (KEY_TEXT " "),
        ("0" KEY_TEXT),
        "",
        "0g0102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(path, bad[i], 0600);
        assert_int_equal(sm_key_load(path, key, &err), SM_EPARSE);
        assert_contains(err.msg, "64 hex digits");
    }
    rm_dir(dir, "key");
    assert_int_equal(sm_key_load(path, key, &err), SM_ESYS);
}

static void test_key_load_refuses_a_file_group_or_others_can_read(void **state)
{
    (void)state;
    char dir[32], path[64];
    make_dir(dir);
    snprintf(path, sizeof path, "%s/key", dir);
    write_file(path, KEY_TEXT "\n", 0644);
    uint8_t key[SM_KEY_LEN];
    memset(key, 0xee, sizeof key);
    sm_error err;
    assert_int_equal(sm_key_load(path, key, &err), SM_EINVAL);
    assert_contains(err.msg, "readable by group or others");
    assert_contains(err.msg, "0644");
    assert_contains(err.msg, "chmod 600");
    assert_int_equal(key[0], 0xee);
    write_file(path, KEY_TEXT "\n", 0620);
    assert_int_equal(sm_key_load(path, key, &err), SM_EINVAL);
    assert_contains(err.msg, "0620");
    write_file(path, KEY_TEXT "\n", 0604);
    assert_int_equal(sm_key_load(path, key, &err), SM_EINVAL);
    assert_contains(err.msg, "0604");
    write_file(path, KEY_TEXT "\n", 0602);
    assert_int_equal(sm_key_load(path, key, &err), SM_EINVAL);
    assert_contains(err.msg, "writable by group or others");
    assert_int_equal(key[0], 0xee);
    rm_dir(dir, "key");
}

static void test_key_generate_writes_mode_0600_and_never_overwrites(void **state)
{
    (void)state;
    char dir[32], path[64];
    make_dir(dir);
    snprintf(path, sizeof path, "%s/key", dir);
    mode_t old = umask(0);
    sm_error err;
    int rc = sm_key_generate(path, &err);
    umask(old);
    assert_int_equal(rc, SM_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_size, 65);

    uint8_t k1[SM_KEY_LEN], k2[SM_KEY_LEN];
    assert_int_equal(sm_key_load(path, k1, &err), SM_OK);
    assert_int_equal(sm_key_generate(path, &err), SM_EINVAL);
    assert_contains(err.msg, "exists; refusing to overwrite a key");
    assert_int_equal(sm_key_load(path, k2, &err), SM_OK);
    assert_memory_equal(k1, k2, SM_KEY_LEN);

    char path2[64];
    snprintf(path2, sizeof path2, "%s/key2", dir);
    assert_int_equal(sm_key_generate(path2, &err), SM_OK);
    assert_int_equal(sm_key_load(path2, k2, &err), SM_OK);
    assert_memory_not_equal(k1, k2, SM_KEY_LEN);
    unlink(path2);
    rm_dir(dir, "key");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_derive_matches_hkdf_sha256_computed_by_openssl_kdf),
        cmocka_unit_test(test_key_derive_refuses_reserved_and_invalid_names),
        cmocka_unit_test(test_key_write_round_trips_through_key_load),
        cmocka_unit_test(test_name_valid_accepts_only_1_to_64_safe_characters),
        cmocka_unit_test(test_key_load_reads_64_hex_digits_with_optional_newline),
        cmocka_unit_test(test_key_load_refuses_a_file_group_or_others_can_read),
        cmocka_unit_test(test_key_generate_writes_mode_0600_and_never_overwrites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
