/* CSV as RFC 4180 writes it, shared by the agent's --once output and the coordinator's
 * comparison tables. */
#ifndef SM_PROTO_CSV_H
#define SM_PROTO_CSV_H

#include <stddef.h>

/* Where a field's bytes go: put(arg, p, n) appends p[0..n); it keeps its own error state. */
typedef void sm_csv_put(void *arg, const char *p, size_t n);

/* Writes s[0..n) (no NUL needed) as one field: as it is, or between double quotes with each
 * inner quote doubled when it holds a comma, a double quote, CR or LF. No separator. */
void sm_csv_field(const char *s, size_t n, sm_csv_put *put, void *arg);

#endif
