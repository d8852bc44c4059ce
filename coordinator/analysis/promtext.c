/* Prometheus text exposition format 0.0.4: families, samples, escaping. */
#include "coordinator/analysis/promtext.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"

void sm_prom_init(sm_prom *p)
{
    memset(p, 0, sizeof *p);
}

void sm_prom_fini(sm_prom *p)
{
    if (!p)
        return;
    free(p->buf);
    sm_prom_init(p);
}

static void put(sm_prom *p, const char *s, size_t n)
{
    if (p->oom)
        return;
    if (p->len + n + 1 > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (p->len + n + 1 > cap)
            cap *= 2;
        char *b = realloc(p->buf, cap);
        if (!b) {
            p->oom = true;
            return;
        }
        p->buf = b;
        p->cap = cap;
    }
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
}

static void puts_(sm_prom *p, const char *s)
{
    put(p, s, strlen(s));
}

void sm_prom_text(sm_prom *p, const char *text)
{
    if (text)
        puts_(p, text);
    else
        p->oom = true;
}

/* s escaped: backslash and newline always, the double quote in label values only (the
 * format's rule for HELP text leaves quotes as they are). */
static void put_escaped(sm_prom *p, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            put(p, "\\\\", 2);
        else if (*s == '\n')
            put(p, "\\n", 2);
        else if (*s == '"' && quote)
            put(p, "\\\"", 2);
        else
            put(p, s, 1);
    }
}

size_t sm_prom_escape(const char *v, char *out, size_t cap)
{
    sm_prom p;
    sm_prom_init(&p);
    put_escaped(&p, v, true);
    const size_t need = p.len;
    if (cap) {
        const size_t n = need < cap - 1 ? need : cap - 1;
        if (n && p.buf)
            memcpy(out, p.buf, n);
        out[n] = '\0';
    }
    sm_prom_fini(&p);
    return need;
}

static bool name_ok(const char *n)
{
    if (!*n || (*n >= '0' && *n <= '9'))
        return false;
    for (; *n; n++)
        if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || (*n >= '0' && *n <= '9') ||
              *n == '_' || *n == ':'))
            return false;
    return true;
}

int sm_prom_family(sm_prom *p, const char *name, const char *type, const char *help)
{
    if (!name_ok(name) || p->n_families == SM_PROM_FAMILIES_MAX)
        return SM_EINVAL;
    for (size_t i = 0; i < p->n_families; i++)
        if (strcmp(p->families[i], name) == 0)
            return SM_EINVAL;
    p->families[p->n_families++] = name;
    puts_(p, "# HELP ");
    puts_(p, name);
    put(p, " ", 1);
    put_escaped(p, help, false);
    puts_(p, "\n# TYPE ");
    puts_(p, name);
    put(p, " ", 1);
    puts_(p, type);
    put(p, "\n", 1);
    return 0;
}

static void put_value(sm_prom *p, double v)
{
    char num[40];
    if (isnan(v))
        snprintf(num, sizeof num, "NaN");
    else if (isinf(v))
        snprintf(num, sizeof num, "%s", v > 0 ? "+Inf" : "-Inf");
    else {
        snprintf(num, sizeof num, "%.15g", v);
        if (strtod(num, NULL) != v)
            snprintf(num, sizeof num, "%.17g", v);
    }
    puts_(p, num);
}

void sm_prom_sample(sm_prom *p, const char *name, const char *const *keys, const char *const *vals,
                    size_t n, double value)
{
    puts_(p, name);
    for (size_t i = 0; i < n; i++) {
        put(p, i ? "," : "{", 1);
        puts_(p, keys[i]);
        put(p, "=\"", 2);
        put_escaped(p, vals[i], true);
        put(p, "\"", 1);
    }
    if (n)
        put(p, "}", 1);
    put(p, " ", 1);
    put_value(p, value);
    put(p, "\n", 1);
}

void sm_prom_comment(sm_prom *p, const char *text)
{
    put(p, "# ", 2);
    for (; *text; text++)
        put(p, *text == '\n' ? " " : text, 1);
    put(p, "\n", 1);
}

char *sm_prom_take(sm_prom *p, size_t *len)
{
    char *out = NULL;
    if (!p->oom) {
        out = p->buf ? p->buf : strdup("");
        *len = p->buf ? p->len : 0;
        p->buf = NULL;
    }
    sm_prom_fini(p);
    return out;
}
