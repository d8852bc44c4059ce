/* A host's network fingerprint: every setting that can explain why one machine measures
 * differently (kernel, sysctls, qdiscs, offloads, CPUs, limits, library versions), as a flat,
 * versioned list of named items, so that two hosts compare item by item.
 *
 * JSON (version 1):
 *   {"version":1,"collected_ms":"1733068800000","collect_us":4210,
 *    "items":{"if.lo.qdisc":"noqueue","sysctl.net.ipv4.tcp_rmem":"4096 131072 6291456",
 *             "cpu.governor":{"unreadable":"ENOENT"},...},
 *    "omitted":{"interfaces":"12","reason":"..."}}
 * An item is a string value or {"unreadable":"ERRNO-NAME"}: what could not be read says why,
 * it is never silently absent. Items named "info.*" describe the host (its name, the raw kernel
 * command line) and are shown but never compared. "omitted" (optional) says how many interfaces
 * were left out to keep the document within SM_FP_MAX.
 *
 * Item names: [A-Za-z0-9._:/@+-], 1..SM_FP_KEY_MAX characters; values at most SM_FP_VALUE_MAX
 * bytes, with runs of whitespace turned into one space when set. docs/fingerprint.md lists the
 * items. */
#ifndef SM_PROTO_FINGERPRINT_H
#define SM_PROTO_FINGERPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"

#define SM_FP_VERSION    1
#define SM_FP_MAX        (48u * 1024u) /* the encoded document, bytes */
#define SM_FP_ITEMS_MAX  2048
#define SM_FP_KEY_MAX    128
#define SM_FP_VALUE_MAX  4096
#define SM_FP_ERRNO_MAX  31
#define SM_FP_REASON_MAX 128
#define SM_FP_HASH_HEX   16 /* the first 64 bits of the SHA-256 of the items, lowercase hex */

typedef struct sm_fp_item {
    char *key;                            /* owned */
    char *value;                          /* owned; NULL when unreadable */
    char unreadable[SM_FP_ERRNO_MAX + 1]; /* "EACCES", "ENOENT"...; "" when value is set */
} sm_fp_item;

typedef struct sm_fingerprint {
    uint32_t version;
    uint64_t collected_ms; /* wall clock, when the agent collected it */
    uint64_t collect_us;   /* how long collecting took (CLOCK_MONOTONIC) */
    sm_fp_item *items;     /* owned, sorted by key once sm_fp_sort ran (decode sorts) */
    size_t n, cap;
    uint32_t omitted_ifaces;                   /* interfaces left out for SM_FP_MAX; 0 none */
    char omitted_reason[SM_FP_REASON_MAX + 1]; /* "" when none */
} sm_fingerprint;

void sm_fp_init(sm_fingerprint *fp);
void sm_fp_fini(sm_fingerprint *fp); /* leaves *fp empty (initialised) */

/* Whether key is a valid item name. */
bool sm_fp_key_valid(const char *key);

/* Sets item key to value (whitespace runs become one space, leading and trailing space goes; a
 * value longer than SM_FP_VALUE_MAX is cut there and ends in "..."), replacing an item of that
 * name. SM_EINVAL for a bad name or when SM_FP_ITEMS_MAX items are set, SM_ENOMEM. */
int sm_fp_set(sm_fingerprint *fp, const char *key, const char *value, sm_error *err);
/* printf form of sm_fp_set. */
int sm_fp_setf(sm_fingerprint *fp, const char *key, sm_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Sets item key as unreadable for errnum (its name: "EACCES"; "E<number>" when unnamed). */
int sm_fp_set_unreadable(sm_fingerprint *fp, const char *key, int errnum, sm_error *err);
/* Removes the items whose name starts with prefix; returns how many. */
size_t sm_fp_remove_prefix(sm_fingerprint *fp, const char *prefix);

/* Sorts the items by name (strcmp); lookups after it are binary searches. */
void sm_fp_sort(sm_fingerprint *fp);
/* The item named key, or NULL. Needs sm_fp_sort after the last set (decode sorts). */
const sm_fp_item *sm_fp_get(const sm_fingerprint *fp, const char *key);

/* The item's value as text: its value, or "unreadable (EACCES)"; "(absent)" for NULL. */
const char *sm_fp_item_text(const sm_fp_item *it, char *buf, size_t len);

/* The errno name of errnum ("EACCES"), or NULL when it has none here. */
const char *sm_fp_errno_name(int errnum);

/* Hash of the items alone (names, values, unreadable reasons; not when or how fast they were
 * collected): equal hashes, equal settings. out gets SM_FP_HASH_HEX digits and a NUL. */
void sm_fp_hash(const sm_fingerprint *fp, char out[SM_FP_HASH_HEX + 1]);

/* Encodes fp (sorted first). SM_EINVAL when the text would exceed SM_FP_MAX. */
char *sm_fp_encode(sm_fingerprint *fp, size_t *len, sm_error *err);
/* fp's document as it is (its items in their order, no bound checked), compact or pretty:
 * the text to free(), or NULL with SM_ENOMEM (err may be NULL). */
char *sm_fp_text(const sm_fingerprint *fp, bool pretty, sm_error *err);
/* Decodes and validates a document (version 1, bounds, names, values); *out must be
 * initialised and is replaced. Leaves *out empty on error, with a reason naming the item. */
int sm_fp_decode(const char *json, size_t len, sm_fingerprint *out, sm_error *err);

/* The same as a cJSON tree, for the codecs that put a fingerprint inside a document of their
 * own and read it from one. Only the places that may use cJSON call them (docs/design.md,
 * "Where JSON is parsed"); they include <cjson/cJSON.h> or proto/json.h themselves. The tree
 * is the caller's to cJSON_Delete; NULL when out of memory. */
struct cJSON;
struct cJSON *sm_fp_to_cjson(const sm_fingerprint *fp);
int sm_fp_from_cjson(const struct cJSON *o, sm_fingerprint *out, sm_error *err);

#endif
