/* RFC 4180 fields. */
#include "proto/csv.h"

#include <string.h>

void sm_csv_field(const char *s, size_t n, sm_csv_put *put, void *arg)
{
    if (memchr(s, ',', n) == NULL && memchr(s, '"', n) == NULL && memchr(s, '\r', n) == NULL &&
        memchr(s, '\n', n) == NULL) {
        put(arg, s, n);
        return;
    }
    put(arg, "\"", 1);
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') {
            /* Up to and with the quote, then the quote again. */
            put(arg, s + from, i + 1 - from);
            from = i;
        }
    }
    put(arg, s + from, n - from);
    put(arg, "\"", 1);
}
