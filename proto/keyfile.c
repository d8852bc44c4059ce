/* Key files (64 hex digits, mode 0600) and the agents' keys derived from the fleet key. */
#include "proto/envelope.h"
#include "proto/buf.h"
#include "proto/envelope_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#define KEY_HEX (2 * SM_KEY_LEN)

static const char *exposure(mode_t mode)
{
    if (mode & 044)
        return "readable";
    if (mode & 022)
        return "writable";
    return "accessible";
}

int sm_key_load(const char *path, uint8_t key[SM_KEY_LEN], sm_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sm_error_sys(err, errno, "cannot open key file %s", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return sm_error_sys(err, e, "cannot stat key file %s", path);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return sm_error_set(err, SM_EINVAL, "key file %s is not a regular file", path);
    }
    if (st.st_mode & 077) {
        close(fd);
        return sm_error_set(err, SM_EINVAL,
                            "key file %s is %s by group or others (mode %04o): chmod 600 %s", path,
                            exposure(st.st_mode), (unsigned)(st.st_mode & 07777), path);
    }
    /* One byte more than a valid file can hold, to tell "too long" from "just right". */
    char buf[KEY_HEX + 2];
    size_t n = 0;
    while (n < sizeof buf) {
        ssize_t got = read(fd, buf + n, sizeof buf - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            OPENSSL_cleanse(buf, sizeof buf);
            return sm_error_sys(err, e, "cannot read key file %s", path);
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    int rc = SM_OK;
    uint8_t tmp[SM_KEY_LEN];
    if (!(n == KEY_HEX || (n == KEY_HEX + 1 && buf[KEY_HEX] == '\n')))
        rc = SM_EPARSE;
    for (size_t i = 0; rc == SM_OK && i < SM_KEY_LEN; i++) {
        int hi = sm_hex_value(buf[2 * i]), lo = sm_hex_value(buf[2 * i + 1]);
        if (hi < 0 || lo < 0)
            rc = SM_EPARSE;
        else
            tmp[i] = (uint8_t)(hi << 4 | lo);
    }
    if (rc == SM_OK) {
        memcpy(key, tmp, SM_KEY_LEN);
        sm_error_clear(err);
    } else {
        sm_error_set(err, rc, "key file %s must hold %d hex digits and an optional newline", path,
                     KEY_HEX);
    }
    OPENSSL_cleanse(buf, sizeof buf);
    OPENSSL_cleanse(tmp, sizeof tmp);
    return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t put = write(fd, p, n);
        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0)
            return -1;
        p += put;
        n -= (size_t)put;
    }
    return 0;
}

int sm_key_generate(const char *path, sm_error *err)
{
    uint8_t raw[SM_KEY_LEN];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return sm_error_set(err, SM_ESYS, "RAND_bytes failed to make a key");
    int rc = sm_key_write(path, raw, err);
    OPENSSL_cleanse(raw, sizeof raw);
    return rc;
}

int sm_key_derive(const uint8_t fleet[SM_KEY_LEN], const char *name, uint8_t out[SM_KEY_LEN],
                  sm_error *err)
{
    if (!sm_name_valid(name) || sm_name_reserved(name))
        return sm_error_set(err, SM_EINVAL,
                            "'%.80s' is not an agent name (1..%d characters of [A-Za-z0-9._-], "
                            "not \"%s\")",
                            name ? name : "", SM_NAME_MAX, SM_COORDINATOR);
    char digest[] = "SHA256", salt[] = SM_KEY_SALT;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)fleet, SM_KEY_LEN),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt, strlen(salt)),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)name, strlen(name)),
        OSSL_PARAM_construct_end(),
    };
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    int ok = ctx != NULL && EVP_KDF_derive(ctx, out, SM_KEY_LEN, params) == 1;
    EVP_KDF_CTX_free(ctx);
    EVP_KDF_free(kdf);
    if (!ok)
        return sm_error_set(err, SM_ESYS, "HKDF-SHA256 failed to derive the key of %s", name);
    sm_error_clear(err);
    return SM_OK;
}

int sm_key_write(const char *path, const uint8_t key[SM_KEY_LEN], sm_error *err)
{
    char text[KEY_HEX + 2];
    sm_hex_encode(key, SM_KEY_LEN, text);
    text[KEY_HEX] = '\n';

    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        OPENSSL_cleanse(text, sizeof text);
        if (e == EEXIST)
            return sm_error_set(err, SM_EINVAL, "%s exists; refusing to overwrite a key", path);
        return sm_error_sys(err, e, "cannot create key file %s", path);
    }
    int rc = SM_OK;
    if (write_all(fd, text, KEY_HEX + 1) != 0)
        rc = sm_error_sys(err, errno, "cannot write key file %s", path);
    else if (fsync(fd) != 0)
        rc = sm_error_sys(err, errno, "cannot fsync key file %s", path);
    if (close(fd) != 0 && rc == SM_OK)
        rc = sm_error_sys(err, errno, "cannot close key file %s", path);
    OPENSSL_cleanse(text, sizeof text);
    /* A half-written key would block the next attempt (O_EXCL) and fail to load: remove it. */
    if (rc != SM_OK)
        unlink(path);
    else
        sm_error_clear(err);
    return rc;
}
