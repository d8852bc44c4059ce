/* Unit tests of coordinator/schema/events: the encoders of the dashboard's events, and the check of
 * what a browser may send. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coordinator/schema/events.h"
#include "proto/err.h"

static void test_events_snapshot_joins_the_agents_and_runs_bodies(void **state)
{
    (void)state;
    char *s = sm_event_snapshot("{\"agents\":[{\"name\":\"h1\",\"status\":\"online\"}]}",
                                "{\"runs\":[{\"id\":\"3\",\"state\":\"done\"}]}");
    assert_string_equal(s, "{\"type\":\"snapshot\",\"agents\":[{\"name\":\"h1\",\"status\":"
                           "\"online\"}],\"runs\":[{\"id\":\"3\",\"state\":\"done\"}]}");
    free(s);
    assert_null(sm_event_snapshot("{\"agents\":{}}", "{\"runs\":[]}"));
    assert_null(sm_event_snapshot("not json", "{\"runs\":[]}"));
}

static void test_events_anomalies_wrap_each_item_in_order(void **state)
{
    (void)state;
    size_t n = 9;
    char **m = sm_event_anomalies("{\"run\":\"5\",\"anomalies\":[{\"host\":\"h2\",\"x\":1.5},"
                                  "{\"host\":\"h1\"}],\"baseline\":\"\"}",
                                  5, &n);
    assert_non_null(m);
    assert_int_equal(n, 2);
    assert_string_equal(m[0], "{\"type\":\"anomaly\",\"run\":\"5\",\"anomaly\":{\"host\":"
                              "\"h2\",\"x\":1.5}}");
    assert_string_equal(m[1], "{\"type\":\"anomaly\",\"run\":\"5\",\"anomaly\":{\"host\":"
                              "\"h1\"}}");
    sm_event_anomalies_free(m, n);
    m = sm_event_anomalies("{\"anomalies\":[]}", 5, &n);
    assert_non_null(m);
    assert_int_equal(n, 0);
    sm_event_anomalies_free(m, n);
    assert_null(sm_event_anomalies("{\"anomalies\":3}", 5, &n));
    assert_null(sm_event_anomalies("{broken", 5, &n));
}

static void test_events_wrap_and_job_are_exact(void **state)
{
    (void)state;
    char *w = sm_event_wrap("anomaly", "anomaly", "{\"host\":\"h2\"}", 7);
    assert_string_equal(w, "{\"type\":\"anomaly\",\"run\":\"7\",\"anomaly\":{\"host\":\"h2\"}}");
    free(w);
    w = sm_event_wrap("run", "run", "{\"id\":\"1\"}", 0);
    assert_string_equal(w, "{\"type\":\"run\",\"run\":{\"id\":\"1\"}}");
    free(w);
    assert_null(sm_event_wrap("run", "run", "{broken", 0));
    char *j =
        sm_event_job(12, 3, "h1", "", "failed", "time limit \"60000\" ms", NULL, 0, NULL, NULL);
    assert_string_equal(j, "{\"type\":\"job\",\"job\":{\"id\":\"12\",\"run\":\"3\",\"host\":\"h1\","
                           "\"peer\":\"\",\"state\":\"failed\",\"reason\":\"time limit "
                           "\\\"60000\\\" ms\"}}");
    free(j);
    j = sm_event_job(13, 3, "h1", "h2", "done", "", "throughput_MBps", 1234.5, "MB/s", "");
    assert_string_equal(j, "{\"type\":\"job\",\"job\":{\"id\":\"13\",\"run\":\"3\",\"host\":\"h1\","
                           "\"peer\":\"h2\",\"state\":\"done\",\"reason\":\"\",\"summary\":{"
                           "\"metric\":\"throughput_MBps\",\"value\":1234.5,\"unit\":\"MB/s\"}}}");
    free(j);
    j = sm_event_job(14, 3, "h1", "", "done", "", "seconds", 0.02, "s", "tx thread waited");
    assert_string_equal(j, "{\"type\":\"job\",\"job\":{\"id\":\"14\",\"run\":\"3\",\"host\":\"h1\","
                           "\"peer\":\"\",\"state\":\"done\",\"reason\":\"\",\"summary\":{"
                           "\"metric\":\"seconds\",\"value\":0.02,\"unit\":\"s\","
                           "\"disturbed\":\"tx thread waited\"}}}");
    free(j);
}

static void test_events_a_browser_may_send_a_ping_and_nothing_else(void **state)
{
    (void)state;
    sm_error err;
    assert_int_equal(sm_event_client_check("{\"type\":\"ping\"}", 15, &err), 1);
    /* Only the given length counts: the text need not end there. */
    assert_int_equal(sm_event_client_check("{\"type\":\"ping\"}garbage", 15, &err), 1);
    assert_int_equal(sm_event_client_check("{\"type\":\"launch\"}", 17, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "unknown message type"));
    assert_int_equal(sm_event_client_check("[1,2]", 5, &err), SM_EPARSE);
    assert_int_equal(sm_event_client_check("nope", 4, &err), SM_EPARSE);
    char *big = calloc(1, SM_EVENT_CLIENT_MAX + 2);
    assert_non_null(big);
    memset(big, ' ', SM_EVENT_CLIENT_MAX + 1);
    assert_int_equal(sm_event_client_check(big, SM_EVENT_CLIENT_MAX + 1, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "above"));
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_snapshot_joins_the_agents_and_runs_bodies),
        cmocka_unit_test(test_events_anomalies_wrap_each_item_in_order),
        cmocka_unit_test(test_events_wrap_and_job_are_exact),
        cmocka_unit_test(test_events_a_browser_may_send_a_ping_and_nothing_else),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
