/* The HTTP API's query strings: name=value pairs, their percent escapes and their numbers. */
#include "coordinator/schema/query.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool sm_query_next(const char **cursor, sm_query_pair *p)
{
    const char *q = *cursor;
    if (!q || !*q)
        return false;
    const char *amp = strchr(q, '&');
    const size_t n = amp ? (size_t)(amp - q) : strlen(q);
    const char *eq = memchr(q, '=', n);
    p->key = q;
    p->klen = eq ? (size_t)(eq - q) : n;
    p->has_val = eq != NULL;
    p->val = eq ? eq + 1 : q + n;
    p->vlen = (size_t)(q + n - p->val);
    *cursor = amp ? amp + 1 : NULL;
    return true;
}

bool sm_query_find(const char *query, const char *name, const char **val, size_t *vlen)
{
    const size_t nl = strlen(name);
    sm_query_pair p;
    for (const char *c = query; sm_query_next(&c, &p);) {
        if (p.has_val && p.klen == nl && strncmp(p.key, name, nl) == 0) {
            *val = p.val;
            *vlen = p.vlen;
            return true;
        }
    }
    return false;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

int sm_query_decode(const char *v, size_t vlen, char *buf, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < vlen; i++) {
        int c = (unsigned char)v[i];
        if (c == '%') {
            const int hi = i + 2 < vlen ? hexval(v[i + 1]) : -1;
            const int lo = hi >= 0 ? hexval(v[i + 2]) : -1;
            if (lo < 0)
                return -1;
            c = hi * 16 + lo;
            i += 2;
        }
        if (c == 0 || o + 1 >= cap)
            return -1;
        buf[o++] = (char)c;
    }
    if (cap == 0)
        return -1;
    buf[o] = '\0';
    return 0;
}

int sm_query_get(const char *query, const char *name, char *buf, size_t cap)
{
    const char *v;
    size_t vlen;
    if (!sm_query_find(query, name, &v, &vlen))
        return 0;
    return sm_query_decode(v, vlen, buf, cap) == 0 ? 1 : -1;
}

bool sm_query_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    char *end;
    const long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool sm_query_id(const char *text, size_t len, uint64_t *id)
{
    /* Digits only: strtoull alone would take a sign, leading spaces, and saturate past
     * UINT64_MAX instead of refusing. */
    uint64_t v = 0;
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        const unsigned d = (unsigned)(text[i] - '0');
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *id = v;
    return true;
}
