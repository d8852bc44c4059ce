/* lo's root qdisc as treatments set it, over libnl-route-3 (qdisc.c): noqueue (the root deleted)
 * or a tbf parsed from the fingerprint's own text, so that the old value a journal keeps is set
 * back exactly by the same code that set the treatment. In the calling thread's namespace. */
#ifndef SM_AGENT_EXPERIMENT_QDISC_H
#define SM_AGENT_EXPERIMENT_QDISC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"

/* A tbf root qdisc as the fingerprint writes it: "tbf rate R burst B limit L", R in bits per
 * second as sm_fp_rate_text writes it, B and L in bytes as sm_fp_size_text does. */
typedef struct sm_tbf {
    uint32_t rate;  /* bytes per second */
    uint32_t burst; /* bytes, as read back (libnl's bucket) */
    uint32_t limit; /* bytes */
} sm_tbf;

/* Parses text into *out: 0, or SM_EINVAL with err saying why ("sockmatrix-agent sets only
 * noqueue and tbf root qdiscs" for another kind or a tbf with a peak rate; a text the
 * fingerprint would not write, such as "rate 100mbit", names the spelling it would). */
int sm_treat_tbf_parse(const char *text, sm_tbf *out, sm_error *err);

/* The bucket to give libnl (rtnl_qdisc_tbf_set_rate) so that the tbf reads back with burst b
 * at rate r: the kernel keeps the bucket as a time in clock ticks, and libnl rounds down on
 * the way there and back, so the bucket given is a few bytes larger. -1 when none does. */
int64_t sm_treat_tbf_bucket(uint32_t rate, uint32_t burst);

/* The bytes a tbf's burst may read back off by when a treatment sets it: the burst the
 * kernel can keep at rate r in whole clock ticks is not every byte count (at 12.5 bytes a
 * microsecond about 1 in 8 is never read back), and the fingerprint's rate is rounded to 6
 * digits. One microsecond's worth of bytes at r, and 2 more. */
uint32_t sm_treat_tbf_slack(uint32_t rate);

/* sm_treat_tbf_bucket, or when no bucket reads back as burst exactly, the one whose read-back
 * is nearest to it within sm_treat_tbf_slack (the smaller bucket on a tie); *reads gets what
 * it reads back as. -1 when none is that near. */
int64_t sm_treat_tbf_bucket_near(uint32_t rate, uint32_t burst, uint32_t *reads);

/* Whether tbf texts got and want (as the fingerprint writes them) have the same rate and limit
 * and bursts within sm_treat_tbf_slack of each other: a tbf a treatment set reads as its text. */
bool sm_treat_tbf_near(const char *got, const char *want);

/* Sets the root qdisc of iface to value ("noqueue": the root qdisc deleted, the default
 * noqueue of lo taking its place; "tbf ...": added or replaced). 0 or an SM_E code. */
int sm_treat_qdisc_set(const char *iface, const char *value, sm_error *err);

/* The longest options of a root qdisc kept (a tbf's are about 60 bytes). */
#define SM_TREAT_QDISC_OPT_MAX 512

/* The root qdisc of iface in the kernel's own words, into out as "KIND:HEX" (its TCA_OPTIONS,
 * as the kernel dumps them): what sm_treat_qdisc_restore puts back exactly, where the
 * fingerprint's text would give a tbf's burst back rounded to the microsecond. */
int sm_treat_qdisc_save(const char *iface, char *out, size_t len, sm_error *err);

/* Puts back a root qdisc kept by sm_treat_qdisc_save ("noqueue:" deletes the root). 0, or an
 * SM_E code with err saying what the kernel refused. */
int sm_treat_qdisc_restore(const char *iface, const char *kept, sm_error *err);

#endif
