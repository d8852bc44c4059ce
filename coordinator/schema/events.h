/* The dashboard's live events over the WebSocket /ws (DESIGN section 11): built from the HTTP
 * API's own JSON, so a page sees the same objects either way, and the check of what a browser
 * may send. */
#ifndef SM_COORD_EVENTS_H
#define SM_COORD_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#define SM_EVENT_CLIENT_MAX 4096 /* bytes of one message from a browser */

/* {"type":"snapshot","agents":[...],"runs":[...]} from the bodies of GET /api/agents
 * ({"agents":[...]}) and GET /api/runs ({"runs":[...]}). malloc'd, or NULL when either is not
 * such a body or memory runs out. */
char *sm_event_snapshot(const char *agents_json, const char *runs_json);

/* {"type":"anomaly","run":"ID","anomaly":{...}} for each item of the body of GET
 * /api/runs/ID/anomalies ({"anomalies":[...],...}), in its order: an array of *n malloc'd
 * texts, or NULL when it is not such a body or memory runs out. Free with
 * sm_event_anomalies_free. */
char **sm_event_anomalies(const char *anomalies_json, uint64_t run_id, size_t *n);
void sm_event_anomalies_free(char **msgs, size_t n);

/* {"type":TYPE,FIELD:ITEM} or, with run_id != 0, {"type":TYPE,"run":"ID",FIELD:ITEM}; ITEM is
 * JSON text (an object). malloc'd, or NULL when ITEM does not parse. */
char *sm_event_wrap(const char *type, const char *field, const char *item_json, uint64_t run_id);

/* {"type":"job","job":{"id":"12","run":"3","host":"h1","peer":"","state":"done","reason":"",
 *  "summary":{"metric":"throughput_MBps","value":1234.5,"unit":"MB/s"}}}; no summary when
 * metric is NULL or the value is not finite. A job whose host was disturbed while it ran
 * (disturbed: its reason, NULL or "" when clean) adds "disturbed":"<reason>" to the summary. */
char *sm_event_job(uint64_t id, uint64_t run_id, const char *host, const char *peer,
                   const char *state, const char *reason, const char *metric, double value,
                   const char *unit, const char *disturbed);

/* What a browser sent: 1 for {"type":"ping"} (answer {"type":"pong"}), or a negative SM_E code
 * with a reason: over SM_EVENT_CLIENT_MAX (SM_EINVAL), not JSON or not an object (SM_EPARSE),
 * an unknown type (SM_EINVAL). The text need not be NUL-terminated. */
struct sm_error;
int sm_event_client_check(const char *data, size_t len, struct sm_error *err);

#endif
