/* The HTTP listener's checks on a request head: Host, Origin and Sec-Fetch-Site, media type,
 * a WebSocket's token. */
#include "coordinator/server/guard.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

bool sm_guard_is_loopback(const char *addr)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, addr, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    return inet_pton(AF_INET6, addr, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

bool sm_guard_is_wildcard(const char *addr)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, addr, &a4) == 1)
        return a4.s_addr == INADDR_ANY;
    return inet_pton(AF_INET6, addr, &a6) == 1 && IN6_IS_ADDR_UNSPECIFIED(&a6);
}

/* The name part of a Host value: "[v6]:port" -> "v6", "name:port" -> "name". */
static bool host_name(const char *host, char *out, size_t cap)
{
    const char *start = host, *end;
    if (host[0] == '[') {
        start = host + 1;
        end = strchr(start, ']');
        if (!end || (end[1] != '\0' && end[1] != ':'))
            return false;
    } else {
        end = strchr(host, ':');
        if (!end)
            end = host + strlen(host);
    }
    size_t n = (size_t)(end - start);
    if (n == 0 || n >= cap)
        return false;
    memcpy(out, start, n);
    out[n] = '\0';
    return true;
}

bool sm_guard_host_ok(const sm_guard *g, const char *host)
{
    char name[256];
    if (!host || !host_name(host, name, sizeof name))
        return false;
    for (size_t i = 0; i < g->n_names; i++)
        if (strcasecmp(name, g->names[i]) == 0)
            return true;
    if (g->loopback && strcasecmp(name, "localhost") == 0)
        return true;
    struct in_addr a4;
    struct in6_addr a6, l6;
    const bool v4 = inet_pton(AF_INET, name, &a4) == 1, v6 = inet_pton(AF_INET6, name, &a6) == 1;
    if (!v4 && !v6)
        return false; /* a DNS name the operator did not allow: a rebinding page's, say */
    if (g->wildcard)
        return true; /* any address of this machine may reach it */
    if (v4)
        return inet_pton(AF_INET, g->addr, &l6) == 1 && memcmp(&a4, &l6, sizeof a4) == 0;
    return inet_pton(AF_INET6, g->addr, &l6) == 1 && memcmp(&a6, &l6, sizeof a6) == 0;
}

bool sm_guard_origin_ok(const char *origin, const char *host)
{
    if (!origin || !host)
        return false;
    const char *rest = NULL;
    if (strncasecmp(origin, "http://", 7) == 0)
        rest = origin + 7;
    else if (strncasecmp(origin, "https://", 8) == 0)
        rest = origin + 8;
    return rest && *rest && strcasecmp(rest, host) == 0;
}

bool sm_guard_fetch_ok(const char *origin, const char *fetch_site, const char *host)
{
    const bool has_origin = origin && *origin, own = has_origin && sm_guard_origin_ok(origin, host);
    if (has_origin && !own)
        return false;
    if (fetch_site && strcasecmp(fetch_site, "cross-site") == 0)
        return false;
    if (fetch_site && strcasecmp(fetch_site, "same-site") == 0)
        return own;
    return true;
}

bool sm_guard_is_json(const char *ctype)
{
    static const char json[] = "application/json";
    if (!ctype)
        return false;
    while (*ctype == ' ')
        ctype++;
    if (strncasecmp(ctype, json, sizeof json - 1) != 0)
        return false;
    const char c = ctype[sizeof json - 1];
    return c == '\0' || c == ';' || c == ' ';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int sm_guard_ws_token(const char *protocols, char *out, size_t cap)
{
    static const char tag[] = "sm-token.";
    if (!protocols)
        return 0;
    for (const char *p = protocols; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t n = strcspn(p, ", ");
        if (n > sizeof tag - 1 && strncmp(p, tag, sizeof tag - 1) == 0) {
            size_t k = 0;
            for (size_t i = sizeof tag - 1; i < n; i++) {
                int c = (unsigned char)p[i];
                if (c == '%') {
                    int hi = i + 2 < n ? hexval(p[i + 1]) : -1,
                        lo = i + 2 < n ? hexval(p[i + 2]) : -1;
                    if (hi < 0 || lo < 0)
                        return -1;
                    c = hi * 16 + lo;
                    i += 2;
                }
                if (k + 1 >= cap || k >= SM_TOKEN_MAX)
                    return -1;
                out[k++] = (char)c;
            }
            out[k] = '\0';
            return 1;
        }
        p += n;
    }
    return 0;
}
