/* The webhook URL a user gives a schedule: its size limit and its check, apart from the
 * delivery thread (recurring/webhook.h) so that the schedules' validation and the CLI need no
 * libcurl. */
#ifndef SM_COORD_WEBHOOK_URL_H
#define SM_COORD_WEBHOOK_URL_H

#include <stddef.h>

#include "proto/addrpolicy.h"
#include "proto/err.h"

#define SM_WEBHOOK_URL_MAX 512 /* a schedule's webhook URL, bytes */

/* Checks a URL a user gave: http:// or https://, a host, at most SM_WEBHOOK_URL_MAX - 1 bytes,
 * no spaces or control characters. Returns 0 or SM_EINVAL with err saying what is wrong. */
int sm_webhook_url_check(const char *url, sm_error *err);

/* The host of a URL that passed sm_webhook_url_check, into host (cap bytes): an IPv6 literal
 * without its brackets, a name or IPv4 literal as written. 0, or SM_EINVAL when it does not
 * fit. */
int sm_webhook_url_host(const char *url, char *host, size_t cap);

/* The default destination policy into *p: public addresses only; loopback, link-local,
 * multicast and private ranges refused unless --webhook-allow (sm_addr_policy_parse) allows
 * them, errors naming that option. */
void sm_webhook_policy_init(sm_addr_policy *p);

/* The destination policy at the time a user gives the URL: SM_EINVAL (field "webhook") when
 * url's host is an IP literal that policy refuses, the message naming the address and the
 * option that would allow it. A name passes here: what it resolves to is checked on each
 * connection (recurring/webhook.h). url must have passed sm_webhook_url_check. */
int sm_webhook_url_allowed(const char *url, const sm_addr_policy *policy, sm_error *err);

#endif
