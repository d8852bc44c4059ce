/* A growing byte buffer that keeps its bytes NUL-terminated. */
#include "proto/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"

/* Large enough for most answers of the API in one allocation, small enough to waste little. */
#define FIRST_CAP 4096

void sm_buf_init(sm_buf *b)
{
    b->p = NULL;
    b->len = b->cap = 0;
}

void sm_buf_fini(sm_buf *b)
{
    free(b->p);
    sm_buf_init(b);
}

void sm_buf_clear(sm_buf *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
}

int sm_buf_append(sm_buf *b, const void *data, size_t n)
{
    /* len + n + 1 must not wrap: a wrapped size would look like room. */
    if (n >= SIZE_MAX - b->len)
        return SM_ENOMEM;
    size_t need = b->len + n + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : FIRST_CAP;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return SM_ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

int sm_hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
