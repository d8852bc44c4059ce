/* The fingerprint's items: reading a file into one, writing one, and the bound on the document's
 * size (whole interfaces kept or left out). What the collectors (fingerprint.c, system.c,
 * network.c, cmdline.c) build on. */
#include "agent/host/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sm_fpc_read(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    size_t at = 0;
    while (at + 1 < len) {
        ssize_t n = read(fd, buf + at, len - 1 - at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return e;
        }
        if (n == 0)
            break;
        at += (size_t)n;
    }
    close(fd);
    buf[at] = '\0';
    if (at > 0 && buf[at - 1] == '\n')
        buf[at - 1] = '\0';
    return 0;
}

/* Only SM_ENOMEM fails the collection; a refused name (SM_EINVAL) leaves the item out. */
static int only_nomem(int rc)
{
    return rc == SM_ENOMEM ? rc : 0;
}

int sm_fpc_put(sm_fingerprint *fp, const char *key, const char *value, sm_error *err)
{
    sm_error e = {0};
    int rc = only_nomem(sm_fp_set(fp, key, value, &e));
    if (rc && err)
        *err = e;
    return rc;
}

int sm_fpc_putf(sm_fingerprint *fp, const char *key, sm_error *err, const char *fmt, ...)
{
    char buf[SM_FP_VALUE_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return sm_fpc_put(fp, key, buf, err);
}

int sm_fpc_unreadable(sm_fingerprint *fp, const char *key, int errnum, sm_error *err)
{
    sm_error e = {0};
    int rc = only_nomem(sm_fp_set_unreadable(fp, key, errnum, &e));
    if (rc && err)
        *err = e;
    return rc;
}

int sm_fpc_file(sm_fingerprint *fp, const char *key, const char *path, sm_error *err)
{
    char buf[SM_FP_VALUE_MAX + 1];
    int e = sm_fpc_read(path, buf, sizeof buf);
    return e ? sm_fpc_unreadable(fp, key, e, err) : sm_fpc_put(fp, key, buf, err);
}

/* ---- the bound: whole interfaces, in the order of their importance ---- */
/* 0: always kept (lo, the data interface); 1: up; 2: down. */
static int iface_rank(const sm_fp_iface *f, const char *keep_if)
{
    if (strcmp(f->name, "lo") == 0 || (keep_if && keep_if[0] && strcmp(f->name, keep_if) == 0))
        return 0;
    return f->up ? 1 : 2;
}

static int iface_cmp(const void *a, const void *b, void *keep_if)
{
    const sm_fp_iface *x = a, *y = b;
    int rx = iface_rank(x, keep_if), ry = iface_rank(y, keep_if);
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* An upper bound on the bytes s takes in the compact JSON: an escaped character counts 6. */
static size_t json_str_cost(const char *s)
{
    size_t n = 2;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        n += (*c < 0x20 || *c == '"' || *c == '\\') ? 6 : 1;
    return n;
}

/* An upper bound on the bytes one item adds to the document: "key":"value", or
 * "key":{"unreadable":"E..."}, */
static size_t item_cost(const sm_fp_item *it)
{
    size_t n = json_str_cost(it->key) + 2;
    return n + (it->value ? json_str_cost(it->value) : json_str_cost(it->unreadable) + 16);
}

static size_t doc_size(const sm_fingerprint *fp)
{
    char *text = sm_fp_text(fp, false, NULL);
    size_t n = text ? strlen(text) : SIZE_MAX;
    free(text);
    return n;
}

/* Appends copies of from's items: an interface's names are its own, so none is in fp yet, and
 * copying keeps each item as it is (an unreadable reason such as "E135" included). */
static int copy_items(sm_fingerprint *fp, const sm_fingerprint *from, sm_error *err)
{
    if (fp->n + from->n > fp->cap) {
        size_t cap = fp->cap ? fp->cap : 64;
        while (cap < fp->n + from->n)
            cap *= 2;
        sm_fp_item *v = realloc(fp->items, cap * sizeof *v);
        if (v == NULL)
            return sm_error_set(err, SM_ENOMEM, "fingerprint: out of memory");
        fp->items = v;
        fp->cap = cap;
    }
    for (size_t i = 0; i < from->n; i++) {
        const sm_fp_item *it = &from->items[i];
        sm_fp_item *dst = &fp->items[fp->n];
        memset(dst, 0, sizeof *dst);
        dst->key = strdup(it->key);
        dst->value = it->value ? strdup(it->value) : NULL;
        memcpy(dst->unreadable, it->unreadable, sizeof dst->unreadable);
        if (dst->key == NULL || (it->value && dst->value == NULL)) {
            free(dst->key);
            free(dst->value);
            return sm_error_set(err, SM_ENOMEM, "fingerprint: out of memory");
        }
        fp->n++;
    }
    return 0;
}

int sm_fp_add_ifaces(sm_fingerprint *fp, sm_fp_iface *ifs, size_t n, const char *keep_if,
                     sm_error *err)
{
    qsort_r(ifs, n, sizeof *ifs, iface_cmp, (void *)keep_if);
    size_t size = doc_size(fp);
    if (size == SIZE_MAX)
        return sm_error_set(err, SM_ENOMEM, "fingerprint: out of memory");
    /* room for "omitted", and for collect_us growing by some digits */
    size += sizeof ",\"omitted\":{\"interfaces\":\"4294967295\",\"reason\":\"\"}" +
            SM_FP_REASON_MAX + 16;
    uint32_t omitted = 0;
    bool full = false;
    for (size_t i = 0; i < n; i++) {
        size_t cost = 0;
        for (size_t k = 0; k < ifs[i].items.n; k++)
            cost += item_cost(&ifs[i].items.items[k]);
        bool count_ok = fp->n + ifs[i].items.n <= SM_FP_ITEMS_MAX;
        /* lo and the data interface come first and stay unless the item count forbids */
        full = full || size + cost > SM_FP_MAX || !count_ok;
        if (full && (iface_rank(&ifs[i], keep_if) != 0 || !count_ok)) {
            omitted++;
            continue;
        }
        int rc = copy_items(fp, &ifs[i].items, err);
        if (rc)
            return rc;
        size += cost;
    }
    fp->omitted_ifaces = omitted;
    fp->omitted_reason[0] = '\0';
    if (omitted > 0)
        snprintf(fp->omitted_reason, sizeof fp->omitted_reason,
                 "%u interfaces left out to stay within %u bytes (kept first: lo, the data "
                 "interface, up ones by name)",
                 omitted, SM_FP_MAX);
    return 0;
}
