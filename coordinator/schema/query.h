/* The HTTP API's query strings and path ids: name=value pairs, their percent escapes and their
 * numbers. Pure; the coordinator's routes and their tests use it. */
#ifndef SM_COORD_QUERY_H
#define SM_COORD_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A decimal id in text[0..len), digits only: false when empty, signed, spaced, past UINT64_MAX
 * or not a number (*id untouched then). */
bool sm_query_id(const char *text, size_t len, uint64_t *id);

/* One piece of a query string between '&'s: key[0..klen), and when the piece has an '=',
 * val[0..vlen) after it (raw, not decoded); without one, val is empty and has_val false. */
typedef struct sm_query_pair {
    const char *key, *val;
    size_t klen, vlen;
    bool has_val;
} sm_query_pair;

/* The pair at *cursor (a query string, or NULL) into *p and *cursor past it; false at the
 * end. Empty pieces ("a=1&&b=2") come as pairs with an empty key. */
bool sm_query_next(const char **cursor, sm_query_pair *p);

/* The raw value of the first name=... in query (may be NULL): true with val[0..vlen), which
 * may be empty; false when absent (a bare "name" without '=' is absent). */
bool sm_query_find(const char *query, const char *name, const char **val, size_t *vlen);

/* v[0..vlen) percent-decoded into buf, NUL-terminated; '+' stays '+' (test labels hold it,
 * as in "tcp+nodelay"). 0, or -1 when badly escaped, holding a NUL (%00) or longer than
 * cap - 1. */
int sm_query_decode(const char *v, size_t vlen, char *buf, size_t cap);

/* The first name=... of query, decoded into buf: 1 when present (perhaps ""), 0 when absent,
 * -1 when it does not decode (sm_query_decode). */
int sm_query_get(const char *query, const char *name, char *buf, size_t cap);

/* s as a decimal integer in [lo, hi]: digits only (no sign, no space), nothing after. */
bool sm_query_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

#endif
