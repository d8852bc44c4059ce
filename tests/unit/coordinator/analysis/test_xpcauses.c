/* Unit tests of an experiment's answer joined to the anomalies it explains
 * (coordinator/analysis/xpcauses.c): the anomaly of the answer's host and test gets it, the
 * newest answer wins, other anomalies and kinds are left alone, the text and Markdown forms
 * add a line, and an answer that does not parse changes nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/xpcauses.h"
#include "proto/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ANOMALIES[] =
    "{\"run\":\"1\",\"anomalies\":["
    "{\"kind\":\"fleet\",\"host\":\"h2\",\"test\":\"stream tcp\",\"z\":-0.9622539857283882},"
    "{\"kind\":\"fleet\",\"host\":\"h2\",\"test\":\"stream unix\"},"
    "{\"kind\":\"slow-link\",\"host\":\"h2\",\"test\":\"stream tcp\"},"
    "{\"kind\":\"fleet\",\"host\":\"h1\",\"test\":\"stream tcp\"}]}";

static const char PROVEN[] =
    "{\"run\":\"5\",\"summary\":\"h2: lo qdisc is the cause: closes 96% of the gap\","
    "\"cause\":{\"item\":\"if.lo.qdisc\",\"share\":0.96,\"lo\":0.9622539857283882,"
    "\"hi\":0.98}}";
static const char NONE[] = "{\"run\":\"3\",\"summary\":\"h2: no suspect closes the gap\","
                           "\"cause\":null}";

static char *dup(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    assert_non_null(d);
    return strcpy(d, s);
}

static cJSON *anomaly(cJSON *doc, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "anomalies"), i);
}

static const char *str(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static void test_xpcauses_the_newest_answer_joins_its_hosts_anomaly_of_its_test(void **state)
{
    (void)state;
    const sm_xp_answer v[] = {{3, "h2", "stream tcp", NONE, strlen(NONE)},
                              {5, "h2", "stream tcp", PROVEN, strlen(PROVEN)}};
    char *out = sm_xp_causes_add(dup(ANOMALIES), v, 2, SM_XP_JSON);
    cJSON *doc = cJSON_Parse(out);
    assert_non_null(doc);
    const cJSON *a = anomaly(doc, 0);
    const cJSON *xp = cJSON_GetObjectItemCaseSensitive(a, "experiment");
    assert_string_equal(str(xp, "run"), "5");
    assert_string_equal(str(xp, "summary"), "h2: lo qdisc is the cause: closes 96% of the gap");
    const cJSON *cause = cJSON_GetObjectItemCaseSensitive(a, "cause");
    assert_string_equal(str(cause, "item"), "if.lo.qdisc");
    assert_string_equal(str(cause, "experiment"), "5");
    assert_true(cJSON_GetObjectItemCaseSensitive(cause, "lo")->valuedouble == 0.9622539857283882);
    /* Every figure as it came, to the last digit: the cause's and the anomaly's own. */
    assert_non_null(strstr(out, "\"lo\":0.9622539857283882"));
    assert_non_null(strstr(out, "\"z\":-0.9622539857283882"));
    /* Another test of the host, another kind, another host: as they were. */
    for (int i = 1; i < 4; i++) {
        assert_null(cJSON_GetObjectItemCaseSensitive(anomaly(doc, i), "experiment"));
        assert_null(cJSON_GetObjectItemCaseSensitive(anomaly(doc, i), "cause"));
    }
    cJSON_Delete(doc);
    free(out);
}

static void test_xpcauses_an_answer_without_a_cause_is_told_but_proves_nothing(void **state)
{
    (void)state;
    const sm_xp_answer v[] = {{3, "h2", "stream unix", NONE, strlen(NONE)}};
    char *out = sm_xp_causes_add(dup(ANOMALIES), v, 1, SM_XP_JSON);
    cJSON *doc = cJSON_Parse(out);
    const cJSON *a = anomaly(doc, 1);
    const cJSON *xp = cJSON_GetObjectItemCaseSensitive(a, "experiment");
    assert_string_equal(str(xp, "run"), "3");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(xp, "cause")));
    assert_null(cJSON_GetObjectItemCaseSensitive(a, "cause"));
    cJSON_Delete(doc);
    free(out);
}

static void test_xpcauses_text_and_markdown_add_a_line_per_answer(void **state)
{
    (void)state;
    const sm_xp_answer v[] = {{5, "h2", "stream tcp", PROVEN, strlen(PROVEN)},
                              {3, "h2", "stream unix", NONE, strlen(NONE)}};
    char *text = sm_xp_causes_add(dup("run 1: flagged\n"), v, 2, SM_XP_TEXT);
    assert_string_equal(text, "run 1: flagged\n"
                              "  cause        h2: lo qdisc is the cause: closes 96% of the gap "
                              "(experiment run 5 of stream tcp)\n"
                              "  tested       h2: no suspect closes the gap "
                              "(experiment run 3 of stream unix)\n");
    free(text);
    char *md = sm_xp_causes_add(dup("| host |\n"), v, 1, SM_XP_MD);
    assert_string_equal(md, "| host |\n\nProven by experiment run 5 (stream tcp): h2: lo qdisc "
                            "is the cause: closes 96% of the gap\n");
    free(md);
}

static void test_xpcauses_what_does_not_parse_changes_nothing(void **state)
{
    (void)state;
    const sm_xp_answer bad[] = {{5, "h2", "stream tcp", "{\"run\":", 7}};
    char *out = sm_xp_causes_add(dup(ANOMALIES), bad, 1, SM_XP_JSON);
    assert_string_equal(out, ANOMALIES);
    free(out);
    const sm_xp_answer v[] = {{5, "h2", "stream tcp", PROVEN, strlen(PROVEN)}};
    out = sm_xp_causes_add(dup("not json"), v, 1, SM_XP_JSON);
    assert_string_equal(out, "not json");
    free(out);
    assert_null(sm_xp_causes_add(NULL, v, 1, SM_XP_TEXT));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xpcauses_the_newest_answer_joins_its_hosts_anomaly_of_its_test),
        cmocka_unit_test(test_xpcauses_an_answer_without_a_cause_is_told_but_proves_nothing),
        cmocka_unit_test(test_xpcauses_text_and_markdown_add_a_line_per_answer),
        cmocka_unit_test(test_xpcauses_what_does_not_parse_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
