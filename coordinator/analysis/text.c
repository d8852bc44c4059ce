/* Anomalies as text: one line for people, and the short flags of a table's rows. */
#include "coordinator/analysis/internal.h"

#include "proto/result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- text ---- */

/* A number with its unit: "3.594x" for a ratio, "0.23 s" otherwise. digits significant
 * digits, except that a whole number too long for them is written out ("1000", not "1e+03"),
 * as throughputs and rates often are. */
static void quantity(char *buf, size_t len, int digits, double v, const char *unit)
{
    const char *sep = unit[0] == '\0' || strcmp(unit, "x") == 0 ? "" : " ";
    if (fabs(v) >= pow(10, digits) && fabs(v) < 1e9)
        snprintf(buf, len, "%.0f%s%s", v, sep, unit);
    else
        snprintf(buf, len, "%.*g%s%s", digits, v, sep, unit);
}

static const char *reference_word(sm_anomaly_kind k)
{
    switch (k) {
    case SM_ANOMALY_FLEET:
        return "fleet";
    case SM_ANOMALY_SLOW_HOST:
        return "overall";
    case SM_ANOMALY_SLOW_LINK:
        return "expected";
    case SM_ANOMALY_REGRESSION:
    case SM_ANOMALY_FLEET_MOVE:
        return "baseline";
    }
    return "reference";
}

/* The value of an anomaly; for a host at its time limit, the bound it passed: "> 60 s",
 * "< 0.5 MB/s", or "> limit" when the column's metric has no bound. */
static void limit_value(char *buf, size_t len, int digits, const sm_anomaly *a)
{
    char unit[sizeof a->unit];
    COPY_FIXED(unit, a->unit);
    if (!a->at_limit) {
        quantity(buf, len, digits, a->value, unit);
        return;
    }
    if (!isfinite(a->value)) {
        snprintf(buf, len, "> limit");
        return;
    }
    char q[48];
    quantity(q, sizeof q, digits, a->value, unit);
    /* The bound is on the slow side: below it for a metric where higher is better. */
    bool lower = sm_analysis_direction(a->metric, sizeof a->metric, 1, 0) == SM_DIR_FASTER;
    snprintf(buf, len, "%s %s", lower ? "<" : ">", q);
}

/* How the text names the column's metric: "ratio" for a ratio column (its label says of
 * what), else as the table's header does, by its unit, with what the unit does not say
 * ("us, p50"); a metric this build does not know by its unit, or its name when it has none. */
static void metric_heading(const sm_anomaly *a, char *buf, size_t len)
{
    char unit[sizeof a->unit], name[sizeof a->metric];
    COPY_FIXED(unit, a->unit);
    COPY_FIXED(name, a->metric);
    sm_metric m;
    const char *detail = sm_metric_lookup(name, &m) == 0 ? sm_metric_detail(m) : "";
    if (a->ratio)
        snprintf(buf, len, "ratio");
    else if (unit[0] == '\0')
        snprintf(buf, len, "%s", detail[0] ? detail : name);
    else
        snprintf(buf, len, "%s%s%s", unit, detail[0] ? ", " : "", detail);
}

/* The change an anomaly shows: within 2x either way the percentage its floor was tested on
 * (rel: "+73%", "-49%"), beyond it how many times the value is the reference, with the
 * direction ("315x slower", "2.0x faster", "3.1x higher"). A factor when value / reference is
 * at least 2 or at most 0.5 (1 + rel when the two make no positive ratio); one decimal below
 * 10, none above. rel is value / reference - 1 but for a slow link (its residual over the
 * overall, its reference what its two hosts predict) and a fleet move (the median of the hosts'
 * moves): a factor is always the one the line's two numbers show. A fall to 0 (rel -1) has no
 * factor and stays a percentage. At the time limit the value is a bound and so is the change:
 * "> 3.0x slower", "> +45%", "< -20%". Returns true when it wrote a factor (which says the
 * direction); "" when rel is not finite. */
static bool change_text(const sm_anomaly *a, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!isfinite(a->rel))
        return false;
    double q = a->value / a->reference;
    if (!isfinite(q) || q <= 0)
        q = 1 + a->rel;
    if (q >= 2 || (q > 0 && q <= 0.5)) {
        double f = q >= 1 ? q : 1 / q;
        /* 9.96 would print "10.0x", with a decimal the larger factors do not have. */
        snprintf(buf, len, "%s%.*fx %s", a->at_limit ? "> " : "", f < 9.95 ? 1 : 0, f,
                 sm_anomaly_dir_name(a->dir));
        return true;
    }
    snprintf(buf, len, "%s%+.0f%%", !a->at_limit ? "" : a->rel > 0 ? "> " : "< ", a->rel * 100);
    return false;
}

/* The z cut of the rule that fired, as the rule prints it ("|z| > 3.5 and >= 15%": 3.5); NaN
 * when the rule has none (MAD 0, CIs apart, the time limit). */
static double rule_cut(const sm_anomaly *a)
{
    char rule[sizeof a->rule + 1];
    COPY_FIXED(rule, a->rule);
    const char *at = strstr(rule, "|z| > ");
    if (at == NULL)
        return NAN;
    char *end;
    double cut = strtod(at + 6, &end);
    return end == at + 6 ? NAN : cut;
}

/* z with one decimal, or with as many more (up to 3) as it takes for the printed |z| to pass
 * the printed cut: -3.503 against "|z| > 3.5" is "-3.503", where "-3.5" would read as if it had
 * not passed. "-" when NaN. */
static void z_text(const sm_anomaly *a, char *buf, size_t len)
{
    if (isnan(a->z)) {
        snprintf(buf, len, "-");
        return;
    }
    double cut = rule_cut(a);
    for (int digits = 1; digits <= 3; digits++) {
        snprintf(buf, len, "%.*f", digits, a->z);
        /* Written so that no cut (NaN) keeps the first. */
        if (!(fabs(strtod(buf, NULL)) <= cut))
            return;
    }
}

int sm_anomaly_text(const sm_anomaly *a, char *buf, size_t len)
{
    char host[sizeof a->host + sizeof a->role + 4], value[64], ref[64], z[32];
    char unit[sizeof a->unit], heading[sizeof a->unit + 32], test[sizeof a->test];
    COPY_FIXED(unit, a->unit);
    COPY_FIXED(test, a->test);
    metric_heading(a, heading, sizeof heading);
    if (a->kind == SM_ANOMALY_SLOW_HOST)
        snprintf(host, sizeof host, "%.*s (%.*s)", (int)strnlen(a->host, sizeof a->host), a->host,
                 (int)strnlen(a->role, sizeof a->role), a->role);
    else
        COPY_FIXED(host, a->host);
    limit_value(value, sizeof value, 4, a);
    quantity(ref, sizeof ref, 4, a->reference, unit);
    z_text(a, z, sizeof z);
    /* The direction is said once: in a factor ("315x slower"), else after z. */
    char change[48], dir[16] = "";
    bool factor = change_text(a, change, sizeof change);
    if (!factor)
        snprintf(dir, sizeof dir, ", %s", sm_anomaly_dir_name(a->dir));
    return snprintf(buf, len, "%s: %s (%s) %s vs %s %s, %s%sz %s%s [%.*s]", host, test, heading,
                    value, reference_word(a->kind), ref, change, change[0] ? ", " : "", z, dir,
                    (int)strnlen(a->rule, sizeof a->rule), a->rule);
}

/* The short form of an anomaly for a table's flag column. */
static void flag_text(const sm_anomaly *a, char *buf, size_t len)
{
    char unit[sizeof a->unit], test[sizeof a->test], value[64], ref[64], tail[48], change[48];
    COPY_FIXED(unit, a->unit);
    COPY_FIXED(test, a->test);
    /* Three digits: the flag column is narrow and the full text has four. */
    limit_value(value, sizeof value, 3, a);
    quantity(ref, sizeof ref, 3, a->reference, unit);
    bool apart = strncmp(a->rule, "CI beyond", 9) == 0;
    char z[32];
    z_text(a, z, sizeof z);
    if (a->at_limit)
        snprintf(tail, sizeof tail, "(time limit)");
    else if (apart && isnan(a->z))
        snprintf(tail, sizeof tail, "(CI apart)");
    else if (apart)
        snprintf(tail, sizeof tail, "(CI apart, z %s)", z);
    else if (isnan(a->z))
        snprintf(tail, sizeof tail, "(MAD 0)");
    else
        snprintf(tail, sizeof tail, "(z %s)", z);
    switch (a->kind) {
    case SM_ANOMALY_FLEET_MOVE:
        change_text(a, change, sizeof change);
        snprintf(buf, len, "fleet moved: %s %s", test, change);
        break;
    case SM_ANOMALY_REGRESSION:
        snprintf(buf, len, "regression: %s %s (was %s)", test, value, ref);
        break;
    case SM_ANOMALY_SLOW_HOST:
        snprintf(buf, len, "slow host: %.*s (%.*s) %s %s vs %s %s",
                 (int)strnlen(a->host, sizeof a->host), a->host,
                 (int)strnlen(a->role, sizeof a->role), a->role, test, value, ref, tail);
        break;
    case SM_ANOMALY_SLOW_LINK:
        snprintf(buf, len, "slow link: %s %s vs %s %s", test, value, ref, tail);
        break;
    default:
        snprintf(buf, len, "%s %s vs %s %s", test, value, ref, tail);
        break;
    }
}

/* Whether anomaly a belongs on row r of t: its own row, or for a slow host every row in which
 * the host has the role that was found slow. */
bool sm_analysis_flags_row(const sm_table *t, const sm_anomaly *a, size_t r)
{
    if (a->kind != SM_ANOMALY_SLOW_HOST)
        return a->row == r;
    const char *label = t->rows[r];
    size_t len = strnlen(label, sizeof t->rows[r]);
    const char *gt = memchr(label, '>', len);
    if (gt == NULL || gt == label || gt[-1] != '-')
        return false;
    bool server = strcmp(a->role, "server") == 0;
    const char *name = server ? gt + 1 : label;
    size_t n = server ? (size_t)(label + len - gt - 1) : (size_t)(gt - 1 - label);
    return strnlen(a->host, sizeof a->host) == n && memcmp(a->host, name, n) == 0;
}

void sm_analysis_flag_table(sm_table *t, const sm_anomalies *a)
{
    for (size_t r = 0; r < t->n_rows; r++) {
        char *f = t->flags[r];
        size_t cap = sizeof t->flags[r], len = 0, total = 0, done = 0;
        f[0] = '\0';
        for (size_t i = 0; i < a->n; i++)
            total += sm_analysis_flags_row(t, &a->v[i], r);
        for (size_t i = 0; i < a->n && done < total; i++) {
            if (!sm_analysis_flags_row(t, &a->v[i], r))
                continue;
            char entry[512], more[32] = "";
            flag_text(&a->v[i], entry, sizeof entry);
            size_t rest = total - done - 1;
            /* An entry is kept only when the " (+N more)" its successors would need still fits
             * behind it; so when an entry does not fit, the suffix for it and those after it
             * fits where it would have gone. Only whole entries are ever written. */
            if (rest > 0)
                snprintf(more, sizeof more, " (+%zu more)", rest);
            size_t sep = len > 0 ? 2 : 0;
            if (len + sep + strlen(entry) + strlen(more) < cap) {
                len += (size_t)snprintf(f + len, cap - len, "%s%s", sep ? "; " : "", entry);
                done++;
                continue;
            }
            snprintf(f + len, cap - len, "%s(+%zu more)", len > 0 ? " " : "", rest + 1);
            break;
        }
    }
}
