/* A job's treatment on this agent (treat.h). Host parts: a net.* sysctl is written under
 * /proc/sys/net of the agent's own network namespace; lo's root qdisc is set over netlink
 * (qdisc.c), removed for noqueue or replaced by a tbf of the fingerprint's text, and read back
 * in the fingerprint's own words (sm_fp_root_qdisc), so that "as it was" means what the
 * coordinator compares; lo's offloads by the ethtool ioctl the fingerprint reads them with
 * (offload.c). */
#include "agent/experiment/treat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/experiment/offload.h"
#include "agent/experiment/qdisc.h"
#include "agent/host/fingerprint.h"
#include "proto/fingerprint.h"
#include "proto/log.h"
#include "proto/treatment.h"

/* Hidden: the spool passes over dot names, and would move any other file it does not know
 * into its quarantine at open, the record of an undo still owed with it. */
#define JOURNAL ".treatment.journal"

/* One host change: what it was and what it is made; the journal's line, tab-separated (kind,
 * key, old, now, kept). */
typedef struct change {
    sm_treat_kind kind;
    char key[SM_TREAT_KEY_MAX + 1];
    char old[SM_FP_VALUE_MAX + 1];
    char now[SM_TREATMENT_MAX + 1];
    /* A qdisc as the kernel keeps it (sm_treat_qdisc_save), put back by undo; "" for a sysctl. */
    char kept[2 * SM_TREAT_QDISC_OPT_MAX + 32];
} change;

int sm_treat_allow_parse(const char *list, unsigned *allow, sm_error *err)
{
    *allow = 0;
    if (strcmp(list, "none") == 0)
        return 0;
    const char *at = list;
    while (*at) {
        const size_t n = strcspn(at, ",");
        if (n == 6 && strncmp(at, "sysctl", 6) == 0)
            *allow |= SM_ALLOW_SYSCTL;
        else if (n == 7 && strncmp(at, "offload", 7) == 0)
            *allow |= SM_ALLOW_OFFLOAD;
        else if (n == 5 && strncmp(at, "qdisc", 5) == 0)
            *allow |= SM_ALLOW_QDISC;
        else
            return sm_error_set(err, SM_EINVAL,
                                "--allow-experiment: '%.*s' is not sysctl, qdisc or offload (or "
                                "none)",
                                (int)n, at);
        at += n + (at[n] == ',');
    }
    if (*allow == 0)
        return sm_error_set(err, SM_EINVAL,
                            "--allow-experiment: give sysctl, qdisc, offload or none");
    return 0;
}

const char *sm_treat_allow_text(unsigned allow)
{
    static const char *const texts[] = {
        "none",    "sysctl",         "qdisc",         "qdisc,sysctl",
        "offload", "offload,sysctl", "offload,qdisc", "offload,qdisc,sysctl",
    };
    return texts[allow & 7u];
}

/* ---- reading and making one change ---- */

static void sysctl_path(const char *key, char *buf, size_t cap)
{
    snprintf(buf, cap, "/proc/sys/%s", key);
    for (char *c = buf + strlen("/proc/sys/"); *c; c++)
        if (*c == '.')
            *c = '/';
}

/* The text with every run of blanks one space, no blank at the ends: the kernel writes
 * tcp_rmem with tabs where it was given spaces. */
static void squeeze(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    bool blank = false;
    for (; *in && n + 1 < cap; in++) {
        if (*in == ' ' || *in == '\t' || *in == '\n') {
            blank = n > 0;
            continue;
        }
        if (blank && n + 2 < cap)
            out[n++] = ' ';
        blank = false;
        out[n++] = *in;
    }
    out[n] = '\0';
}

static int read_setting(const change *c, char *buf, size_t cap, sm_error *err)
{
    if (c->kind == SM_TREAT_SYSCTL) {
        char path[160], raw[SM_FP_VALUE_MAX + 1];
        sysctl_path(c->key, path, sizeof path);
        FILE *f = fopen(path, "r");
        if (!f)
            return sm_error_set(err, SM_ESYS, "treatment: sysctl %s: %s", c->key, strerror(errno));
        const size_t n = fread(raw, 1, sizeof raw - 1, f);
        fclose(f);
        raw[n] = '\0';
        squeeze(raw, buf, cap);
        return 0;
    }
    if (c->kind == SM_TREAT_OFFLOAD)
        return sm_treat_offload_get(c->key, buf, cap, err);
    /* The qdisc as the fingerprint reads it. */
    return sm_fp_root_qdisc(c->key, buf, cap, err);
}

/* Makes the setting read `value`: the sysctl written, or lo's root qdisc removed (noqueue) or
 * replaced by a tbf of the fingerprint's text ("tbf rate 133.243Mbit burst 131044b limit
 * 963839b"), with the bucket that reads back as that burst. */
static int write_setting(const change *c, const char *value, sm_error *err)
{
    if (c->kind == SM_TREAT_SYSCTL) {
        char path[160];
        sysctl_path(c->key, path, sizeof path);
        FILE *f = fopen(path, "w");
        if (!f)
            return sm_error_set(err, SM_ESYS, "treatment: sysctl %s: %s", c->key, strerror(errno));
        const bool ok = fputs(value, f) >= 0;
        if (fclose(f) != 0 || !ok)
            return sm_error_set(err, SM_ESYS, "treatment: sysctl %s=%s: %s", c->key, value,
                                strerror(errno));
        return 0;
    }
    if (c->kind == SM_TREAT_OFFLOAD)
        return sm_treat_offload_set(c->key, value, err);
    return sm_treat_qdisc_set(c->key, value, err);
}

/* Whether a setting reads as wanted: exactly, blanks aside (squeezed on both sides); or, for
 * a tbf a treatment set (near), with a burst as near as the kernel keeps it
 * (sm_treat_tbf_near). An undo is put back byte for byte, and must read back exactly. */
static bool reads_as(const change *c, const char *got, const char *want, bool near)
{
    if (strcmp(got, want) == 0)
        return true;
    return near && c->kind == SM_TREAT_QDISC && sm_treat_tbf_near(got, want);
}

/* ---- the journal ---- */

static void journal_path(const sm_treat_ctx *c, char *buf, size_t cap, const char *suffix)
{
    snprintf(buf, cap, "%s/" JOURNAL "%s", c->dir, suffix);
}

static int fsync_dir(const char *dir)
{
    const int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    const int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Writes changes[0..n) whole (tmp, fsync, rename, fsync of the folder); n 0 removes it. */
static int journal_write(const sm_treat_ctx *c, const change *v, size_t n, sm_error *err)
{
    char path[512], tmp[520];
    journal_path(c, path, sizeof path, "");
    if (n == 0) {
        if (unlink(path) != 0 && errno != ENOENT)
            return sm_error_set(err, SM_ESYS, "treatment: %s: %s", path, strerror(errno));
        fsync_dir(c->dir);
        return 0;
    }
    journal_path(c, tmp, sizeof tmp, ".tmp");
    FILE *f = fopen(tmp, "w");
    if (!f)
        return sm_error_set(err, SM_ESYS, "treatment: %s: %s", tmp, strerror(errno));
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        ok = ok && fprintf(f, "%s\t%s\t%s\t%s\t%s\n", sm_treat_kind_name(v[i].kind), v[i].key,
                           v[i].old, v[i].now, v[i].kept) > 0;
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0 || fsync_dir(c->dir) != 0) {
        unlink(tmp);
        return sm_error_set(err, SM_ESYS, "treatment: %s: %s", path, strerror(errno));
    }
    return 0;
}

/* Reads the journal into v (at most SM_TREATMENT_PARTS_MAX); *n 0 when there is none. */
static int journal_read(const sm_treat_ctx *c, change *v, size_t *n, sm_error *err)
{
    char path[512], line[2 * SM_FP_VALUE_MAX];
    journal_path(c, path, sizeof path, "");
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT
                   ? 0
                   : sm_error_set(err, SM_ESYS, "treatment: %s: %s", path, strerror(errno));
    while (*n < SM_TREATMENT_PARTS_MAX && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *f1 = line, *f2 = strchr(f1, '\t'), *f3 = f2 ? strchr(f2 + 1, '\t') : NULL;
        char *f4 = f3 ? strchr(f3 + 1, '\t') : NULL, *f5 = f4 ? strchr(f4 + 1, '\t') : NULL;
        if (!f4)
            continue;
        /* A line of four fields (an agent before "kept") is undone from its old text. */
        *f2++ = *f3++ = *f4++ = '\0';
        if (f5)
            *f5++ = '\0';
        change *x = &v[*n];
        x->kind = strcmp(f1, "qdisc") == 0     ? SM_TREAT_QDISC
                  : strcmp(f1, "offload") == 0 ? SM_TREAT_OFFLOAD
                                               : SM_TREAT_SYSCTL;
        snprintf(x->key, sizeof x->key, "%s", f2);
        snprintf(x->old, sizeof x->old, "%s", f3);
        snprintf(x->now, sizeof x->now, "%s", f4);
        snprintf(x->kept, sizeof x->kept, "%s", f5 ? f5 : "");
        (*n)++;
    }
    fclose(f);
    return 0;
}

/* ---- begin, end, recover ---- */

/* Undoes v[0..n) in reverse, each read back; the journal goes when all are as they were. */
static int undo(sm_treat_ctx *c, const change *v, size_t n, const char *how, sm_error *err)
{
    int ret = 0;
    for (size_t i = n; i-- > 0;) {
        char back[SM_FP_VALUE_MAX + 1];
        sm_error e = {0};
        /* A sysctl or an offload that reads as it was has nothing to undo: the change was
         * journalled and then refused (an offload lo's driver fixes refuses even its own value
         * again). A qdisc is always put back from the kernel's bytes. */
        if (!v[i].kept[0] && read_setting(&v[i], back, sizeof back, &e) == 0 &&
            reads_as(&v[i], back, v[i].old, false)) {
            sm_log(LOG_INFO, how, "%s %s is '%.100s' still, read back",
                   sm_treat_kind_name(v[i].kind), v[i].key, v[i].old);
            continue;
        }
        int rc = v[i].kept[0] ? sm_treat_qdisc_restore(v[i].key, v[i].kept, &e)
                              : write_setting(&v[i], v[i].old, &e);
        if (!rc)
            rc = read_setting(&v[i], back, sizeof back, &e);
        if (!rc && !reads_as(&v[i], back, v[i].old, false))
            rc = sm_error_set(&e, SM_ESYS, "treatment: %s %s reads '%.80s', not '%.80s'",
                              sm_treat_kind_name(v[i].kind), v[i].key, back, v[i].old);
        if (rc) {
            sm_log(LOG_ERR, "SM-TREAT-UNDO-FAILED", "%s %s back to '%.100s': %s",
                   sm_treat_kind_name(v[i].kind), v[i].key, v[i].old, e.msg);
            if (!ret)
                *err = e;
            ret = SM_ESYS;
            continue;
        }
        sm_log(LOG_NOTICE, how, "%s %s back to '%.100s' (was '%.100s'), read back",
               sm_treat_kind_name(v[i].kind), v[i].key, v[i].old, v[i].now);
    }
    if (ret == 0 && (ret = journal_write(c, NULL, 0, err)) == 0)
        c->active = false;
    return ret;
}

/* Undoes what the journal holds, each undo logged as tag. */
static int undo_journal(sm_treat_ctx *c, const char *tag, sm_error *err)
{
    change v[SM_TREATMENT_PARTS_MAX];
    size_t n = 0;
    int rc = journal_read(c, v, &n, err);
    if (rc || n == 0)
        return rc;
    c->active = true;
    return undo(c, v, n, tag, err);
}

int sm_treat_recover(sm_treat_ctx *c, sm_error *err)
{
    return undo_journal(c, "SM-TREAT-RESTORED", err);
}

/* ---- the host's fingerprint before and after ---- */

static void before_free(sm_treat_ctx *c)
{
    if (c->before) {
        sm_fp_fini(c->before);
        free(c->before);
        c->before = NULL;
    }
}

/* How many items differ between a and b (both sorted), info.* aside; the first in buf as
 * "KEY 'was' -> 'now'". */
static size_t fp_differences(const sm_fingerprint *a, const sm_fingerprint *b, char *buf,
                             size_t cap)
{
    size_t i = 0, j = 0, n = 0;
    buf[0] = '\0';
    while (i < a->n || j < b->n) {
        const int cmp = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->items[i].key, b->items[j].key);
        const sm_fp_item *x = cmp <= 0 ? &a->items[i] : NULL, *y = cmp >= 0 ? &b->items[j] : NULL;
        i += cmp <= 0;
        j += cmp >= 0;
        const char *key = x ? x->key : y->key;
        if (strncmp(key, "info.", 5) == 0)
            continue;
        char wbuf[64], nbuf[64]; /* for "unreadable (EACCES)"; a value is returned as it is */
        const char *was = sm_fp_item_text(x, wbuf, sizeof wbuf);
        const char *now = sm_fp_item_text(y, nbuf, sizeof nbuf);
        if (strcmp(was, now) == 0)
            continue;
        if (n++ == 0)
            snprintf(buf, cap, "%.100s '%.100s' -> '%.100s'", key, was, now);
    }
    return n;
}

/* The fingerprint once the treatment is undone, against the one before it was made: any
 * other difference (info.* aside) fails the job, logged SM-TREAT-FP-CHANGED. */
static int compare_after(sm_treat_ctx *c, sm_error *err)
{
    sm_fingerprint after;
    sm_fp_init(&after);
    int rc = sm_fp_collect(&after, "", err);
    if (rc == 0) {
        sm_fp_sort(&after);
        char first[400];
        const size_t n = fp_differences(c->before, &after, first, sizeof first);
        if (n > 0) {
            sm_log(LOG_ERR, "SM-TREAT-FP-CHANGED",
                   "the host's fingerprint differs after the undo in %zu item%s: %s%s", n,
                   n == 1 ? "" : "s", first, n > 1 ? " and more" : "");
            rc = sm_error_set(err, SM_ESYS,
                              "treatment: the host's fingerprint differs after the undo in %zu "
                              "item%s: %.300s",
                              n, n == 1 ? "" : "s", first);
        }
    }
    sm_fp_fini(&after);
    return rc;
}

int sm_treat_end(sm_treat_ctx *c, sm_error *err)
{
    if (!c->active) {
        before_free(c);
        return 0;
    }
    int rc = undo_journal(c, "SM-TREAT-UNDO", err);
    if (rc == 0 && c->before)
        rc = compare_after(c, err);
    before_free(c);
    return rc;
}

int sm_treat_begin(sm_treat_ctx *c, sm_params *p, sm_error *err)
{
    if (!p->treatment[0])
        return 0;
    sm_treatment t;
    int rc = sm_treatment_parse(p->treatment, &t, err);
    if (rc)
        return rc;
    sm_treatment_socket_apply(&t, p);
    /* A change an earlier job could not undo is tried again before any other is made. */
    if ((rc = undo_journal(c, "SM-TREAT-RESTORED", err)) != 0) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        return sm_error_set(err, SM_ESYS, "treatment: an earlier one is still being undone: %s",
                            why);
    }
    change v[SM_TREATMENT_PARTS_MAX];
    size_t n = 0;
    for (size_t i = 0; i < t.n && !rc; i++) {
        const sm_treat_part *part = &t.v[i];
        if (!sm_treat_part_host(part))
            continue;
        char text[SM_TREATMENT_MAX + 1];
        sm_treatment_part_text(part, text, sizeof text);
        const unsigned need = part->kind == SM_TREAT_SYSCTL  ? SM_ALLOW_SYSCTL
                              : part->kind == SM_TREAT_QDISC ? SM_ALLOW_QDISC
                                                             : SM_ALLOW_OFFLOAD;
        if (!(c->allow & need)) {
            rc = sm_error_set(err, SM_EINVAL,
                              "treatment: %s needs sockmatrix-agent --allow-experiment %s", text,
                              sm_treat_flag(part->kind));
            break;
        }
        const bool on_lo = part->kind == SM_TREAT_OFFLOAD ? strncmp(part->key, "lo ", 3) == 0
                                                          : strcmp(part->key, "lo") == 0;
        if (part->kind != SM_TREAT_SYSCTL && !on_lo) {
            rc = sm_error_set(err, SM_EINVAL,
                              "treatment: a local test runs over lo, not %.*s: %s is refused",
                              (int)strcspn(part->key, " "), part->key, text);
            break;
        }
        change *x = &v[n];
        memset(x, 0, sizeof *x);
        x->kind = part->kind;
        snprintf(x->key, sizeof x->key, "%s", part->key);
        snprintf(x->now, sizeof x->now, "%s", part->value);
        if ((rc = read_setting(x, x->old, sizeof x->old, err)) != 0)
            break;
        /* Only what is put back exactly is changed: the old qdisc kept in the kernel's own
         * words, and of a kind whose words the kernel takes back (noqueue, tbf). */
        if (x->kind == SM_TREAT_QDISC) {
            if ((rc = sm_treat_qdisc_save(x->key, x->kept, sizeof x->kept, err)) != 0)
                break;
            if (strncmp(x->kept, "noqueue:", 8) != 0 && strncmp(x->kept, "tbf:", 4) != 0) {
                rc = sm_error_set(err, SM_EINVAL,
                                  "treatment: %s: lo's root qdisc is '%.60s'; sockmatrix-agent "
                                  "changes only a noqueue or tbf root, which it puts back exactly",
                                  text, x->old);
                break;
            }
        }
        /* The host as it was, for the comparison once the treatment is undone. */
        if (c->before == NULL) {
            if ((c->before = malloc(sizeof *c->before)) == NULL) {
                rc = sm_error_set(err, SM_ENOMEM, "treatment: out of memory");
                break;
            }
            sm_fp_init(c->before);
            if ((rc = sm_fp_collect(c->before, "", err)) != 0)
                break;
            sm_fp_sort(c->before);
        }
        /* In the journal before it is made: a kill from here on leaves what to undo. */
        n++;
        c->active = true;
        if ((rc = journal_write(c, v, n, err)) != 0)
            break;
        char back[SM_FP_VALUE_MAX + 1], want[SM_TREATMENT_MAX + 1];
        rc = write_setting(x, x->now, err);
        if (!rc)
            rc = read_setting(x, back, sizeof back, err);
        squeeze(x->now, want, sizeof want);
        if (!rc && !reads_as(x, back, want, true))
            rc = sm_error_set(err, SM_EINVAL, "treatment: %s reads '%.80s' once made", text, back);
        if (!rc)
            sm_log(LOG_NOTICE, "SM-TREAT-APPLY", "%s (was '%.100s')", text, x->old);
    }
    if (rc && n > 0) {
        sm_error e = {0};
        undo(c, v, n, "SM-TREAT-UNDO", &e);
    }
    if (rc)
        before_free(c);
    return rc;
}
