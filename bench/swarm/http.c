/* sm-swarm: the parent's HTTP client of the coordinator's API, and the bits of its answers
 * the phases read. */
#include "bench/swarm/swarm.h"

__attribute__((format(printf, 2, 3))) static int buf_printf(sm_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return SM_EINVAL;
    return sm_buf_append(b, tmp, (size_t)n);
}

size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    return sm_buf_append(arg, data, size * nmemb) == 0 ? size * nmemb : 0;
}

/* GET (body NULL) or POST path; the response body is left in c->resp. */
int http(ctx *c, const char *path, const sm_buf *body, long want_status)
{
    char url[512];
    snprintf(url, sizeof url, "%s%s", c->o->http_url, path);
    sm_buf_clear(&c->resp);
    curl_easy_setopt(c->curl, CURLOPT_URL, url);
    if (body) {
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body->p);
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
    } else {
        curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
    }
    CURLcode rc = curl_easy_perform(c->curl);
    if (rc != CURLE_OK) {
        say("%s %s: %s", body ? "POST" : "GET", url, curl_easy_strerror(rc));
        return SM_ESYS;
    }
    long status = 0;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status != want_status) {
        say("%s %s: status %ld: %.300s", body ? "POST" : "GET", url, status,
            c->resp.p ? c->resp.p : "");
        return SM_EPROTO;
    }
    return 0;
}

/* The number after "key": in a JSON text we trust (the coordinator's own /healthz). */
static int json_number(const char *json, const char *key, uint64_t *out)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = json ? strstr(json, pat) : NULL;
    if (!p)
        return SM_EPARSE;
    char *end;
    double v = strtod(p + strlen(pat), &end);
    if (end == p + strlen(pat) || v < 0)
        return SM_EPARSE;
    *out = (uint64_t)v;
    return 0;
}

int get_health(ctx *c, health *h)
{
    int rc = http(c, "/healthz", NULL, 200);
    if (rc)
        return rc;
    const char *j = c->resp.p;
    if (json_number(j, "agents_online", &h->agents_online) ||
        json_number(j, "results", &h->results) || json_number(j, "polls", &h->polls) ||
        json_number(j, "jobs_dispatched", &h->dispatched) ||
        json_number(j, "results_duplicate", &h->duplicate) ||
        json_number(j, "results_orphan", &h->orphan) || json_number(j, "total", &h->rejected) ||
        json_number(j, "hold_ms", &h->hold_ms)) {
        say("/healthz: unexpected answer: %.300s", j ? j : "");
        return SM_EPARSE;
    }
    return 0;
}

/* The ids of {"jobs":["12","13"]}, which must be exactly n. */
int job_ids(const char *json, uint64_t *ids, size_t n)
{
    const char *p = json ? strstr(json, "\"jobs\":[") : NULL;
    if (!p)
        return SM_EPARSE;
    p += strlen("\"jobs\":[");
    for (size_t i = 0; i < n; i++) {
        if (*p != '"')
            return SM_EPARSE;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p + 1, &end, 10);
        if (errno || end == p + 1 || *end != '"' || v == 0)
            return SM_EPARSE;
        ids[i] = v;
        p = end + 1;
        if (*p != (i + 1 < n ? ',' : ']'))
            return SM_EPARSE;
        p++;
    }
    return 0;
}

int add_job(sm_buf *b, size_t index, bool first, bool rr)
{
    if (rr)
        return buf_printf(b,
                          "%s{\"host\":\"swarm-%05zu\",\"params\":{\"workload\":\"rr\","
                          "\"transport\":\"tcp\",\"count\":20000}}",
                          first ? "" : ",", index);
    return buf_printf(b,
                      "%s{\"host\":\"swarm-%05zu\",\"params\":{\"workload\":\"stream\","
                      "\"transport\":\"tcp\",\"count\":1,\"msg_size\":1}}",
                      first ? "" : ",", index);
}
