/* The built-in source's reading of a request head: GET /bytes/N over HTTP/1.x, strictly. */
#include "agent/workloads/http_request.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "proto/params.h"

static bool ieq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* Lines end in CRLF, or a bare LF as RFC 9112 lets a server accept. */
size_t sm_http_head_end(const char *buf, size_t len)
{
    for (const char *p = buf; (p = memchr(p, '\n', len - (size_t)(p - buf))) != NULL; p++) {
        size_t at = (size_t)(p - buf) + 1;
        if (at < len && buf[at] == '\n')
            return at + 1;
        if (at + 1 < len && buf[at] == '\r' && buf[at + 1] == '\n')
            return at + 2;
    }
    return 0;
}

/* The next line of [*p, end) without its line end; advances *p past it. */
static size_t next_line(const char **p, const char *end, const char **line)
{
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    size_t n = (size_t)(nl - *p);
    *line = *p;
    *p = nl + 1;
    return n > 0 && (*line)[n - 1] == '\r' ? n - 1 : n;
}

static bool is_tchar(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

static const char *trim(const char *s, size_t *n)
{
    while (*n > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        (*n)--;
    }
    while (*n > 0 && (s[*n - 1] == ' ' || s[*n - 1] == '\t'))
        (*n)--;
    return s;
}

/* "/bytes/N": 200 with *size, 404 for another path or N out of 1..SM_HTTP_SIZE_MAX, 400 for
 * an N that is not decimal digits. */
static int parse_target(const char *t, size_t n, uint64_t *size, const char **why)
{
    static const char prefix[] = "/bytes/";
    const size_t plen = sizeof prefix - 1;
    if (n < plen || memcmp(t, prefix, plen) != 0) {
        *why = "no such path";
        return 404;
    }
    if (n == plen) {
        *why = "no size after /bytes/";
        return 400;
    }
    uint64_t v = 0;
    bool over = false;
    for (size_t i = plen; i < n; i++) {
        if (t[i] < '0' || t[i] > '9') {
            *why = "the size in /bytes/N is not a decimal number";
            return 400;
        }
        over = over || v > (SM_HTTP_SIZE_MAX - (uint64_t)(t[i] - '0')) / 10;
        if (!over)
            v = v * 10 + (uint64_t)(t[i] - '0');
    }
    if (over || v == 0) {
        *why = "the size in /bytes/N is out of 1..16 GiB";
        return 404;
    }
    *size = v;
    return 200;
}

/* The Connection header's options we act on. */
static void parse_connection(const char *v, size_t n, bool *close, bool *keep_alive)
{
    while (n > 0) {
        const char *comma = memchr(v, ',', n);
        size_t len = comma ? (size_t)(comma - v) : n;
        size_t tl = len;
        const char *tok = trim(v, &tl);
        if (ieq(tok, tl, "close"))
            *close = true;
        else if (ieq(tok, tl, "keep-alive"))
            *keep_alive = true;
        v += comma ? len + 1 : len;
        n -= comma ? len + 1 : len;
    }
}

/* Syntax first (400), then the method (405), then the path. */
int sm_http_parse_head(const char *buf, size_t len, sm_http_request *rq, const char **why)
{
    const char *p = buf, *end = buf + len, *line;
    size_t n = next_line(&p, end, &line);
    const char *sp1 = memchr(line, ' ', n);
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - line)) : NULL;
    *why = "malformed request line";
    if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1)
        return 400;
    for (const char *m = line; m < sp1; m++)
        if (!is_tchar(*m))
            return 400;
    const char *method = line, *target = sp1 + 1, *version = sp2 + 1;
    size_t mlen = (size_t)(sp1 - line);
    size_t tlen = (size_t)(sp2 - target), vlen = n - (size_t)(version - line);
    if (target[0] != '/' || memchr(target, ' ', tlen) || memchr(target, '\t', tlen))
        return 400;
    /* The version is case-sensitive (RFC 9112 2.3). */
    if (vlen != 8 || memcmp(version, "HTTP/1.", 7) != 0 || (version[7] != '0' && version[7] != '1'))
        return 400;
    rq->http10 = version[7] == '0';

    bool close = false, keep_alive = false;
    while (p < end) {
        n = next_line(&p, end, &line);
        if (n == 0)
            break;
        const char *colon = memchr(line, ':', n);
        *why = "malformed header line";
        if (!colon || colon == line)
            return 400;
        for (const char *m = line; m < colon; m++)
            if (!is_tchar(*m))
                return 400; /* also obs-fold and a space before the colon (RFC 9112 5.1) */
        size_t nlen = (size_t)(colon - line), vn = n - nlen - 1;
        const char *v = trim(colon + 1, &vn);
        if (ieq(line, nlen, "connection")) {
            parse_connection(v, vn, &close, &keep_alive);
        } else if (ieq(line, nlen, "transfer-encoding") ||
                   (ieq(line, nlen, "content-length") && !(vn == 1 && v[0] == '0'))) {
            /* A GET with a body: the source would have to read and drop it. */
            *why = "a request body";
            return 400;
        }
    }
    rq->close = close || (rq->http10 && !keep_alive);

    if (mlen != 3 || memcmp(method, "GET", 3) != 0) {
        *why = "only GET is served";
        return 405;
    }
    return parse_target(target, tlen, &rq->size, why);
}

const char *sm_http_reason_phrase(int status)
{
    switch (status) {
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 431:
        return "Request Header Fields Too Large";
    default:
        return "Bad Request";
    }
}
