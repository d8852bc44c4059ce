/* Rejection accounting: a counter per reason, and the rate-limited SM-REJECT log line, with
 * the peers it has heard from in a bounded proto/map. */
#include "proto/envelope.h"
#include "proto/envelope_int.h"
#include "proto/log.h"
#include "proto/map.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REJECT_LOG_INTERVAL_MS 60000u
#define PEERS_MAX              4096
#define PEER_NAME_MAX          63

typedef struct peer {
    struct peer *prev, *next; /* by time of last log line, oldest first */
    uint64_t last_log_ms;
    uint64_t suppressed;
    char name[PEER_NAME_MAX + 1];
} peer;

struct sm_rejects {
    uint64_t counts[SM_REJ__COUNT];
    uint64_t total;
    sm_map *peers; /* name -> peer, at most PEERS_MAX */
    peer *oldest, *newest;
};

sm_rejects *sm_rejects_new(void)
{
    sm_rejects *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->peers = sm_map_new();
    if (r->peers == NULL) {
        free(r);
        return NULL;
    }
    return r;
}

void sm_rejects_free(sm_rejects *r)
{
    if (r == NULL)
        return;
    sm_map_free(r->peers, free);
    free(r);
}

uint64_t sm_rejects_count(const sm_rejects *r, sm_reject why)
{
    if (r == NULL || (int)why < 0 || why >= SM_REJ__COUNT)
        return 0;
    return r->counts[why];
}

void sm_rejects_add(sm_rejects *r, sm_reject why, uint64_t n)
{
    if (r == NULL || (int)why < 0 || why >= SM_REJ__COUNT)
        return;
    r->counts[why] += n;
    r->total += n;
}

uint64_t sm_rejects_total(const sm_rejects *r)
{
    return r ? r->total : 0;
}

static void order_remove(sm_rejects *r, peer *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        r->oldest = p->next;
    if (p->next)
        p->next->prev = p->prev;
    else
        r->newest = p->prev;
    p->prev = p->next = NULL;
}

static void order_append(sm_rejects *r, peer *p)
{
    p->prev = r->newest;
    p->next = NULL;
    if (r->newest)
        r->newest->next = p;
    else
        r->oldest = p;
    r->newest = p;
}

/* Finds or adds the peer; NULL only when out of memory with nothing to evict. The map is
 * bounded because peer names can come from the network: the peer logged longest ago goes
 * first, losing only its suppressed count (the per-reason counters keep every rejection). */
static peer *peer_get(sm_rejects *r, const char *name, bool *fresh)
{
    peer *p = sm_map_get(r->peers, name);
    if (p != NULL) {
        *fresh = false;
        return p;
    }
    if (sm_map_size(r->peers) < PEERS_MAX)
        p = malloc(sizeof *p);
    if (p == NULL) {
        p = r->oldest;
        if (p == NULL)
            return NULL;
        order_remove(r, p);
        sm_map_del(r->peers, p->name);
    }
    memset(p, 0, sizeof *p);
    memcpy(p->name, name, strlen(name) + 1);
    if (sm_map_put(r->peers, p->name, p) != 0) {
        free(p);
        return NULL;
    }
    order_append(r, p);
    *fresh = true;
    return p;
}

int sm_rejects_note(sm_rejects *r, sm_reject why, const char *peer_name, uint64_t now_ms,
                    const char *detail)
{
    if ((int)why >= 0 && why < SM_REJ__COUNT)
        r->counts[why]++;
    r->total++;

    char name[PEER_NAME_MAX + 1];
    sm_excerpt(name, sizeof name, peer_name ? peer_name : "unknown");
    bool fresh = false;
    peer *p = peer_get(r, name, &fresh);
    uint64_t suppressed = 0;
    if (p != NULL) {
        /* After the clock steps back, restart the interval instead of logging every message. */
        if (p->last_log_ms > now_ms)
            p->last_log_ms = now_ms;
        if (!fresh && now_ms - p->last_log_ms < REJECT_LOG_INTERVAL_MS) {
            p->suppressed++;
            return 0;
        }
        suppressed = p->suppressed;
        p->suppressed = 0;
        p->last_log_ms = now_ms;
        order_remove(r, p);
        order_append(r, p);
    }
    char more[64] = "";
    if (suppressed > 0)
        snprintf(more, sizeof more, " (%" PRIu64 " more from this peer since the last line)",
                 suppressed);
    sm_log(LOG_WARNING, "SM-REJECT", "rejected a message from %s: %s%s%s%s", name,
           sm_reject_name(why), detail ? ": " : "", detail ? detail : "", more);
    return 1;
}
