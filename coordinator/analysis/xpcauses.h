/* What an experiment's answer adds to the anomalies it explains (xpcauses.c): its headline
 * and proven cause joined to the anomaly of its host and test, in the anomalies' JSON, their
 * text, or a Markdown table's end. Pure. */
#ifndef SM_COORD_XPCAUSES_H
#define SM_COORD_XPCAUSES_H

#include <stddef.h>
#include <stdint.h>

/* One ended experiment's answer: its run, host and test, and its JSON as GET
 * /api/runs/ID/experiment answers it (sm_xp_report_json). */
typedef struct sm_xp_answer {
    uint64_t run;
    const char *host, *test;
    const char *json;
    size_t len;
} sm_xp_answer;

typedef enum { SM_XP_JSON, SM_XP_TEXT, SM_XP_MD } sm_xp_form;

/* text (owned; NULL passes through) with v[0..n) added: for SM_XP_JSON, the anomalies' JSON
 * whose fleet and regression anomalies of an answer's host and test get "experiment"
 * ({"run","summary","cause"}, the newest answer) and, where it proved one, "cause" (its cause
 * plus "experiment": its run); for SM_XP_TEXT a line per answer after the anomalies' text, for
 * SM_XP_MD a paragraph per answer after a Markdown table. The text as it came on any failure
 * (an answer that does not parse is left out). */
char *sm_xp_causes_add(char *text, const sm_xp_answer *v, size_t n, sm_xp_form form);

#endif
