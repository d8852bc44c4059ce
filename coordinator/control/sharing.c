/* Hosts that share one machine, found from their agents' boot ids and machine ids. */
#include "coordinator/control/sharing.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names shown per machine before "and N more": a lab of 100 namespaces stays one line. */
#define NAMES_SHOWN_MAX 8
/* Enough of an id to tell machines apart in a note; the whole id is in /api/agents. */
#define ID_SHOWN 8

static bool known(const char *s)
{
    return s != NULL && s[0] != '\0';
}

static bool same_machine(const sm_sharing_host *a, const sm_sharing_host *b)
{
    if (known(a->boot_id) && known(b->boot_id))
        return strcmp(a->boot_id, b->boot_id) == 0;
    return known(a->machine_id) && known(b->machine_id) &&
           strcmp(a->machine_id, b->machine_id) == 0;
}

/* A note written up to its end; what does not fit is cut and the note ends in "...". */
typedef struct note_out {
    char *s;
    size_t len, used;
    bool full;
} note_out;

static void put(note_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(note_out *o, const char *fmt, ...)
{
    if (o->full)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->s + o->used, o->len - o->used, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < o->len - o->used) {
        o->used += (size_t)n;
        return;
    }
    o->full = true;
    if (o->len >= 4)
        memcpy(o->s + o->len - 4, "...", 4);
}

int sm_sharing_find(const sm_sharing_host *hosts, size_t n, size_t *sharing, char *note, size_t len,
                    sm_error *err)
{
    /* root[i]: the first host of i's machine. O(n^2) comparisons, once per run started: a
     * million for the largest fleet a spec can name. */
    size_t *root = calloc(n ? n : 1, sizeof *root);
    size_t *members = calloc(n ? n : 1, sizeof *members);
    if (!root || !members) {
        free(root);
        free(members);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }
    size_t shared = 0;
    for (size_t i = 0; i < n; i++) {
        root[i] = i;
        for (size_t j = 0; j < i; j++)
            if (root[j] == j && same_machine(&hosts[j], &hosts[i])) {
                root[i] = j;
                break;
            }
        members[root[i]]++;
    }
    note_out o = {note, len, 0, false};
    note[0] = '\0';
    for (size_t r = 0; r < n; r++) {
        if (root[r] != r || members[r] < 2)
            continue;
        shared += members[r];
        put(&o, "%s", o.used ? "; " : "");
        size_t shown = 0;
        for (size_t i = r; i < n && shown < NAMES_SHOWN_MAX; i++)
            if (root[i] == r)
                put(&o, "%s%s", shown++ ? ", " : "", hosts[i].name);
        if (members[r] > shown)
            put(&o, " and %zu more", members[r] - shown);
        const bool by_boot = known(hosts[r].boot_id);
        put(&o, " share one machine (%s id %.*s)", by_boot ? "boot" : "machine", ID_SHOWN,
            by_boot ? hosts[r].boot_id : hosts[r].machine_id);
    }
    free(root);
    free(members);
    *sharing = shared;
    return 0;
}
