/* GET and POST over libcurl, the answer in a growing buffer. */
#include "coordinator/cli/http.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <strings.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"

struct sm_http {
    CURL *curl;
    char *url;
    struct curl_slist *auth; /* the Authorization line, NULL without a token */
    char *cacert;            /* NULL: the system's CAs */
};

typedef struct body_buf {
    sm_buf b;
    bool too_big;
    bool no_memory;
} body_buf;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
    body_buf *b = arg;
    size_t n = size * nmemb;
    /* Anything but n makes curl stop with CURLE_WRITE_ERROR. */
    if (n > SM_HTTP_BODY_MAX - b->b.len) {
        b->too_big = true;
        return 0;
    }
    if (sm_buf_append(&b->b, ptr, n) != 0) {
        b->no_memory = true;
        return 0;
    }
    return n;
}

static bool host_is_loopback(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    char v6[INET6_ADDRSTRLEN + 2];
    size_t n = strlen(host);
    if (strcasecmp(host, "localhost") == 0)
        return true;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    /* curl hands an IPv6 host back in its brackets. */
    if (n < 2 || n - 2 >= sizeof v6 || host[0] != '[' || host[n - 1] != ']')
        return false;
    memcpy(v6, host + 1, n - 2);
    v6[n - 2] = '\0';
    return inet_pton(AF_INET6, v6, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

bool sm_http_url_in_clear(const char *url)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    /* What curl would connect to, parsed as curl parses it (user info, brackets, case). */
    bool clear = true;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
        clear = strcasecmp(scheme, "https") != 0 && !host_is_loopback(host);
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return clear;
}

int sm_http_open(sm_http **out, const char *base_url, const char *token, const char *cacert,
                 sm_error *err)
{
    sm_http *h = calloc(1, sizeof *h);
    if (!h)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    size_t n = strlen(base_url);
    while (n > 0 && base_url[n - 1] == '/')
        n--;
    h->url = strndup(base_url, n);
    h->curl = curl_easy_init();
    h->cacert = cacert ? strdup(cacert) : NULL;
    if (!h->url || !h->curl || (cacert && !h->cacert)) {
        sm_http_close(h);
        return sm_error_set(err, SM_ENOMEM, "cannot set up libcurl");
    }
    if (token) {
        char line[600];
        if ((size_t)snprintf(line, sizeof line, "Authorization: Bearer %s", token) >= sizeof line) {
            sm_http_close(h);
            return sm_error_set(err, SM_EINVAL, "the token is longer than %zu characters",
                                sizeof line - 23);
        }
        h->auth = curl_slist_append(NULL, line);
        /* The line held the token; do not leave it on the stack. */
        memset(line, 0, sizeof line);
        if (!h->auth) {
            sm_http_close(h);
            return sm_error_set(err, SM_ENOMEM, "out of memory");
        }
    }
    *out = h;
    return 0;
}

void sm_http_close(sm_http *h)
{
    if (!h)
        return;
    if (h->curl)
        curl_easy_cleanup(h->curl);
    curl_slist_free_all(h->auth);
    free(h->cacert);
    free(h->url);
    free(h);
}

const char *sm_http_url(const sm_http *h)
{
    return h->url;
}

/* Appends line to *list; on failure *list is left as it was. */
static bool add_header(struct curl_slist **list, const char *line)
{
    struct curl_slist *l = curl_slist_append(*list, line);
    if (!l)
        return false;
    *list = l;
    return true;
}

/* method NULL: GET, or POST when there is a body. */
static int perform(sm_http *h, const char *method, const char *path, const char *body, size_t len,
                   sm_http_resp *r, sm_error *err)
{
    size_t ulen = strlen(h->url) + strlen(path) + 1;
    char *url = malloc(ulen);
    if (!url)
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    snprintf(url, ulen, "%s%s", h->url, path);

    CURL *c = h->curl;
    body_buf b = {0};
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *headers = NULL;
    bool ok = !h->auth || add_header(&headers, h->auth->data);
    if (ok && body)
        ok = add_header(&headers, "Content-Type: application/json");
    /* Without this curl sends "Expect: 100-continue" before a large POST body and waits a
     * second for a server that does not answer it. */
    if (ok)
        ok = add_header(&headers, "Expect:");
    if (!ok) {
        curl_slist_free_all(headers);
        free(url);
        return sm_error_set(err, SM_ENOMEM, "out of memory");
    }

    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)SM_HTTP_TIMEOUT_S);
    /* Timeouts by signal would break in a process that handles its own signals. */
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "sockmatrix/" SM_VERSION);
    /* Verification is curl's default; said here so that no later change loses it. */
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (h->cacert)
        curl_easy_setopt(c, CURLOPT_CAINFO, h->cacert);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    if (method)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    CURLcode cc = curl_easy_perform(c);
    curl_slist_free_all(headers);
    free(url);

    int rc = 0;
    if (b.too_big)
        rc = sm_error_set(err, SM_EPROTO, "the coordinator's answer is larger than %u MiB",
                          SM_HTTP_BODY_MAX >> 20);
    else if (b.no_memory)
        rc = sm_error_set(err, SM_ENOMEM, "out of memory for the coordinator's answer");
    else if (cc == CURLE_PEER_FAILED_VERIFICATION)
        /* The advice first: err->msg has room for a line, and curl's reason may be long. */
        rc = sm_error_set(err, SM_ESYS,
                          "its TLS certificate was refused (give --cacert FILE: the CA that "
                          "signed it, or the certificate itself if self-signed): %s",
                          errbuf[0] ? errbuf : curl_easy_strerror(cc));
    else if (cc == CURLE_SSL_CACERT_BADFILE)
        rc = sm_error_set(err, SM_ESYS, "--cacert %s is not a readable PEM certificate file",
                          h->cacert ? h->cacert : "(the system's)");
    else if (cc != CURLE_OK)
        rc = sm_error_set(err, SM_ESYS, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
    /* An empty answer is "", not NULL: the append of nothing makes sure of it. */
    if (!rc && sm_buf_append(&b.b, "", 0) != 0)
        rc = sm_error_set(err, SM_ENOMEM, "out of memory");
    if (rc) {
        sm_buf_fini(&b.b);
        return rc;
    }
    r->status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    r->body = b.b.p;
    r->len = b.b.len;
    return 0;
}

int sm_http_get(sm_http *h, const char *path, sm_http_resp *r, sm_error *err)
{
    return perform(h, NULL, path, NULL, 0, r, err);
}

int sm_http_delete(sm_http *h, const char *path, sm_http_resp *r, sm_error *err)
{
    return perform(h, "DELETE", path, NULL, 0, r, err);
}

int sm_http_post(sm_http *h, const char *path, const char *body, size_t len, sm_http_resp *r,
                 sm_error *err)
{
    return perform(h, NULL, path, body ? body : "", body ? len : 0, r, err);
}

void sm_http_resp_fini(sm_http_resp *r)
{
    if (!r)
        return;
    free(r->body);
    r->body = NULL;
    r->len = 0;
}
