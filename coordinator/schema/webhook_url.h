/* The webhook URL a user gives a schedule: its size limit and its check, apart from the
 * delivery thread (recurring/webhook.h) so that the schedules' validation and the CLI need no
 * libcurl. */
#ifndef SM_COORD_WEBHOOK_URL_H
#define SM_COORD_WEBHOOK_URL_H

#include "proto/err.h"

#define SM_WEBHOOK_URL_MAX 512 /* a schedule's webhook URL, bytes */

/* Checks a URL a user gave: http:// or https://, a host, at most SM_WEBHOOK_URL_MAX - 1 bytes,
 * no spaces or control characters. Returns 0 or SM_EINVAL with err saying what is wrong. */
int sm_webhook_url_check(const char *url, sm_error *err);

#endif
