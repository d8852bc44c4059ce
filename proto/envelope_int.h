/* Helpers the envelope's modules (envelope.c, rejects.c, keyfile.c) share; not for callers. */
#ifndef SM_PROTO_ENVELOPE_INT_H
#define SM_PROTO_ENVELOPE_INT_H

#include <stddef.h>
#include <stdint.h>

/* in[0..n) as lowercase hex into out (2n digits and a NUL). */
void sm_hex_encode(const uint8_t *in, size_t n, char *out);
/* A short, printable copy of untrusted text for a reason or a log line: cut to cap - 1 bytes
 * ("..." at the end when cut), anything but printable ASCII, '"' and '\\' as '?'. */
void sm_excerpt(char *dst, size_t cap, const char *src);

#endif
