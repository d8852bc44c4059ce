/* Narrowing a combination down by delta debugging (xpsearch.h). */
#include "coordinator/analysis/xpsearch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEP "; "

sm_xp_dd_outcome sm_xp_search_outcome(sm_xp_verdict v)
{
    switch (v) {
    case SM_XP_CAUSE:
        return SM_XP_DD_CLOSES;
    case SM_XP_PART:
    case SM_XP_NOT:
        return SM_XP_DD_NOT;
    case SM_XP_INCONCLUSIVE:
    case SM_XP_UNTESTED:
        break;
    }
    return SM_XP_DD_UNRESOLVED;
}

/* The index in head of the single whose treatment is the n bytes at part; SIZE_MAX none. */
static size_t single_of(const sm_xp_plan *head, const char *part, size_t n)
{
    for (size_t i = 0; i < head->n; i++) {
        const sm_xp_suspect *x = &head->v[i];
        if (x->item[0] && strlen(x->treatment) == n && strncmp(x->treatment, part, n) == 0)
            return i;
    }
    return SIZE_MAX;
}

bool sm_xp_search_start(sm_xp_search *s, const sm_xp_plan *head, const sm_xp_estimate *est)
{
    memset(s, 0, sizeof *s);
    if (head == NULL || est == NULL || head->n == 0)
        return false;
    const size_t c = head->n - 1;
    const sm_xp_suspect *combo = &head->v[c];
    if (combo->item[0] || !combo->treatment[0] || est[c].verdict != SM_XP_CAUSE)
        return false;
    for (const char *p = combo->treatment; *p;) {
        const char *end = strstr(p, SEP);
        const size_t n = end ? (size_t)(end - p) : strlen(p);
        const size_t i = single_of(head, p, n);
        if (i == SIZE_MAX || s->k == SM_XP_DD_MAX)
            return false;
        s->idx[s->k++] = i;
        p += n + (end ? strlen(SEP) : 0);
    }
    if (s->k < 2)
        return false;
    for (size_t b = 0; b < s->k; b++) {
        if (est[s->idx[b]].verdict == SM_XP_CAUSE)
            return false;
        s->known[1u << b] = sm_xp_search_outcome(est[s->idx[b]].verdict);
    }
    s->known[(1u << s->k) - 1] = SM_XP_DD_CLOSES;
    return true;
}

uint32_t sm_xp_search_mask(const sm_xp_search *s, const sm_xp_plan *head, const char *treatment)
{
    uint32_t mask = 0;
    for (const char *p = treatment; p && *p;) {
        const char *end = strstr(p, SEP);
        const size_t n = end ? (size_t)(end - p) : strlen(p);
        const size_t i = single_of(head, p, n);
        size_t b = 0;
        while (b < s->k && s->idx[b] != i)
            b++;
        if (i == SIZE_MAX || b == s->k || (mask & 1u << b))
            return 0;
        mask |= 1u << b;
        p += n + (end ? strlen(SEP) : 0);
    }
    return mask;
}

bool sm_xp_search_record(sm_xp_search *s, const sm_xp_plan *head, const char *treatment,
                         sm_xp_verdict v)
{
    const uint32_t m = sm_xp_search_mask(s, head, treatment);
    if (m == 0 || s->known[m] != SM_XP_DD_UNKNOWN)
        return false;
    s->known[m] = sm_xp_search_outcome(v);
    return true;
}

/* Appends "; " (unless first) and src to dst[cap] at *at, cut with "..." when it does not fit;
 * false then. */
static bool join(char *dst, size_t cap, size_t *at, const char *sep, const char *src)
{
    const int n = snprintf(dst + *at, cap - *at, "%s%s", *at ? sep : "", src);
    if (n < 0 || (size_t)n >= cap - *at) {
        if (cap > 4)
            memcpy(dst + cap - 4, "...", 4);
        *at = cap - 1;
        return false;
    }
    *at += (size_t)n;
    return true;
}

void sm_xp_search_label(const sm_xp_search *s, const sm_xp_plan *head, uint32_t mask, char *buf,
                        size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t b = 0; b < s->k && at + 1 < len; b++)
        if (mask & 1u << b)
            join(buf, len, &at, " + ", head->v[s->idx[b]].label);
}

int sm_xp_search_stage_plan(const sm_xp_search *s, const sm_xp_plan *head, const uint32_t *arms,
                            size_t n, sm_xp_plan *out, sm_error *err)
{
    if (n == 0 || arms == NULL)
        return sm_error_set(err, SM_EINVAL, "search stage: no arms");
    sm_xp_plan p = {calloc(n, sizeof *p.v), 0, 0};
    if (p.v == NULL)
        return sm_error_set(err, SM_ENOMEM, "search stage: out of memory");
    for (size_t a = 0; a < n; a++) {
        const uint32_t m = arms[a];
        if (m == 0 || m >> s->k) {
            sm_xp_plan_fini(&p);
            return sm_error_set(err, SM_EINVAL, "search stage: arm %zu is no subset", a);
        }
        sm_xp_suspect *x = &p.v[p.n++];
        sm_xp_search_label(s, head, m, x->label, sizeof x->label);
        size_t th = 0, tf = 0, tt = 0;
        bool fits = true;
        for (size_t b = 0; b < s->k; b++) {
            if (!(m & 1u << b))
                continue;
            const sm_xp_suspect *y = &head->v[s->idx[b]];
            char part[sizeof y->label + sizeof y->host_value + 1];
            snprintf(part, sizeof part, "%s %s", y->label, y->host_value);
            join(x->host_value, sizeof x->host_value, &th, SEP, part);
            snprintf(part, sizeof part, "%s %s", y->label, y->fleet_value);
            join(x->fleet_value, sizeof x->fleet_value, &tf, SEP, part);
            fits = fits && join(x->treatment, sizeof x->treatment, &tt, SEP, y->treatment);
        }
        if (!fits) {
            sm_xp_plan_fini(&p);
            return sm_error_set(err, SM_EINVAL,
                                "search stage: arm %zu's treatments together are longer than the "
                                "%zu bytes a treatment takes",
                                a, sizeof x->treatment - 1);
        }
        p.tested++;
    }
    *out = p;
    return 0;
}
