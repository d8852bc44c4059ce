/* The Prometheus text exposition format (version 0.0.4), written into a growing buffer: one
 * "# HELP" and "# TYPE" per family, samples with escaped label values. Pure, no I/O. */
#ifndef SM_COORD_PROMTEXT_H
#define SM_COORD_PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>

#define SM_PROM_CTYPE "text/plain; version=0.0.4; charset=utf-8"

/* Families one text may declare (sm_prom_family refuses more). */
#define SM_PROM_FAMILIES_MAX 64

typedef struct sm_prom {
    char *buf; /* NUL-terminated; owned until sm_prom_take */
    size_t len, cap;
    bool oom;                                   /* an append failed: sm_prom_take gives NULL */
    const char *families[SM_PROM_FAMILIES_MAX]; /* names declared (static strings) */
    size_t n_families;
} sm_prom;

void sm_prom_init(sm_prom *p);
void sm_prom_fini(sm_prom *p);

/* Declares family name (a static string, [a-zA-Z_:][a-zA-Z0-9_:]*) of type "counter" or
 * "gauge" with its help text (escaped: backslash, newline). SM_EINVAL when name was declared
 * before, is not a valid name or is one too many; 0 otherwise (out of memory is noted in
 * p->oom). Its samples follow. */
int sm_prom_family(sm_prom *p, const char *name, const char *type, const char *help);

/* One sample of the family last declared: name{k0="v0",...} value. keys[i] are valid label
 * names; vals[i] any text, escaped (backslash, double quote, newline). NaN is "NaN", the
 * infinities "+Inf" and "-Inf", other values the shortest of %.15g and %.17g that reads back
 * as value. */
void sm_prom_sample(sm_prom *p, const char *name, const char *const *keys, const char *const *vals,
                    size_t n, double value);

/* A comment line "# text" (newlines in text become spaces). */
void sm_prom_comment(sm_prom *p, const char *text);

/* Appends text written by another sm_prom (its families then unknown to p) as it is; NULL
 * counts as out of memory. */
void sm_prom_text(sm_prom *p, const char *text);

/* The text (malloc'd, the caller frees it) and its length; NULL when memory ran out. p is
 * left empty. */
char *sm_prom_take(sm_prom *p, size_t *len);

/* Writes v escaped as a label value into out (cap bytes, truncated, NUL-terminated); returns
 * the length the whole escaped text needs. */
size_t sm_prom_escape(const char *v, char *out, size_t cap);

#endif
