/* A growing byte buffer that keeps its bytes NUL-terminated: HTTP bodies read in pieces. */
#ifndef SM_PROTO_BUF_H
#define SM_PROTO_BUF_H

#include <stddef.h>

/* Embedded by value. Callers read p and len and never write them; p is NULL until the first
 * append, and after it p[len] is always '\0' (p may hold NUL bytes of its own before it). All
 * zero is the same as sm_buf_init. Not thread-safe: one owner at a time. */
typedef struct sm_buf {
    char *p;
    size_t len, cap;
} sm_buf;

void sm_buf_init(sm_buf *b);
/* Frees the bytes and leaves b as sm_buf_init does. */
void sm_buf_fini(sm_buf *b);
/* Empties b (p[0] becomes '\0') but keeps its memory for the next bytes. */
void sm_buf_clear(sm_buf *b);
/* Appends data[0..n) and the terminating '\0'; n 0 only makes sure p is a string. The memory
 * doubles as it grows, so n bytes in pieces cost O(n). 0, or SM_ENOMEM with b unchanged. */
int sm_buf_append(sm_buf *b, const void *data, size_t n);

/* The value of hex digit c in either case, or -1 when it is not one. */
int sm_hex_value(char c);

#endif
