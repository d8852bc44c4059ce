/* The check of a webhook URL a user gives (webhook_url.h). */
#include "coordinator/schema/webhook_url.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

int sm_webhook_url_check(const char *url, sm_error *err)
{
    sm_error_field(err, "webhook");
    if (!url || !*url)
        return sm_error_set(err, SM_EINVAL, "webhook: empty; give an http:// or https:// URL");
    const size_t len = strlen(url);
    if (len >= SM_WEBHOOK_URL_MAX)
        return sm_error_set(err, SM_EINVAL, "webhook: %zu bytes, at most %d", len,
                            SM_WEBHOOK_URL_MAX - 1);
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)url[i];
        if (c <= 0x20 || c == 0x7f)
            return sm_error_set(err, SM_EINVAL,
                                "webhook: a space or control character at byte %zu; "
                                "percent-encode it",
                                i + 1);
    }
    size_t skip;
    if (strncasecmp(url, "http://", 7) == 0)
        skip = 7;
    else if (strncasecmp(url, "https://", 8) == 0)
        skip = 8;
    else
        return sm_error_set(err, SM_EINVAL, "webhook: only http:// and https:// URLs");
    const char *host = url + skip;
    /* userinfo would put a password in the store and in every listing */
    const size_t auth_end = strcspn(host, "/?#");
    if (memchr(host, '@', auth_end))
        return sm_error_set(err, SM_EINVAL, "webhook: no user or password in the URL");
    if (auth_end == 0 || host[0] == ':')
        return sm_error_set(err, SM_EINVAL, "webhook: no host after the scheme");
    return 0;
}

int sm_webhook_url_host(const char *url, char *host, size_t cap)
{
    const char *h = strstr(url, "://");
    h = h ? h + 3 : url;
    size_t n = strcspn(h, "/?#");
    if (h[0] == '[') {
        const char *close = memchr(h, ']', n);
        if (!close)
            return SM_EINVAL;
        h++;
        n = (size_t)(close - h);
    } else {
        const char *colon = memchr(h, ':', n);
        if (colon)
            n = (size_t)(colon - h);
    }
    if (n == 0 || n >= cap)
        return SM_EINVAL;
    memcpy(host, h, n);
    host[n] = '\0';
    return 0;
}

void sm_webhook_policy_init(sm_addr_policy *p)
{
    *p = (sm_addr_policy){.refuse = SM_ADDR_PRIVATE, .option = "--webhook-allow"};
}

int sm_webhook_url_allowed(const char *url, const sm_addr_policy *policy, sm_error *err)
{
    char host[256];
    unsigned char raw[16];
    sm_error_field(err, "webhook");
    if (sm_webhook_url_host(url, host, sizeof host) != 0)
        return sm_error_set(err, SM_EINVAL, "webhook: no host this coordinator can read");
    /* A name is resolved, and what it resolves to checked, when a delivery connects. */
    if (inet_pton(AF_INET, host, raw) != 1 && inet_pton(AF_INET6, host, raw) != 1)
        return 0;
    sm_error why = {0};
    if (sm_addr_policy_check(policy, host, &why) != 0)
        return sm_error_set(err, SM_EINVAL, "webhook: %s", why.msg);
    return 0;
}
