/* The one name of a test, wherever it is shown: "stream tcp+nodelay lines 128 B x 8192". */
#include "coordinator/analysis/label.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "coordinator/analysis/table.h"

/* Appends to buf[0..cap) at *len; text that does not fit is cut, a label is only for people. */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t cap, size_t *len,
                                                         const char *fmt, ...)
{
    if (*len + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = (size_t)n < cap - *len ? *len + (size_t)n : cap - 1;
}

/* sep then "128 B", "64 KiB", "1 MiB": the binary suffixes the options accept. */
static void append_size(char *buf, size_t cap, size_t *len, const char *sep, uint64_t v)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
    unsigned u = 0;
    while (u + 1 < sizeof units / sizeof units[0] && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    append(buf, cap, len, "%s%" PRIu64 " %s", sep, v, units[u]);
}

/* A stream's or rr's message sizes: " lines 128 B", " 1 B/1 B"; nothing for other workloads. */
static void append_sizes(const sm_params *p, char *buf, size_t cap, size_t *len)
{
    if (p->workload == SM_WL_STREAM) {
        if (p->framing == SM_FRAMING_LINES)
            append(buf, cap, len, " lines");
        append_size(buf, cap, len, " ", p->msg_size);
    } else if (p->workload == SM_WL_RR) {
        append_size(buf, cap, len, " ", p->req_size);
        append_size(buf, cap, len, "/", p->resp_size);
    }
}

/* "tcp", "tcp+nodelay", "tcp+cork", "unix"; for http the client model: "multi+tls". */
static void transport_text(const sm_params *p, char *buf, size_t cap)
{
    size_t len = 0;
    if (p->workload == SM_WL_HTTP) {
        append(buf, cap, &len, "%s%s%s%s", sm_http_client_name(p->client), p->tls ? "+tls" : "",
               p->fresh_connect ? "+fresh" : "", p->http2 ? "+h2" : "");
        return;
    }
    append(buf, cap, &len, "%s%s%s", sm_transport_name(p->transport),
           p->transport == SM_TR_TCP && p->nodelay ? "+nodelay" : "",
           p->transport == SM_TR_TCP && p->cork ? "+cork" : "");
}

/* Everything after workload and transport, with a leading space: " lines 128 B x 8192",
 * " 1 B/1 B 1000 ms", " x 500". Optional socket settings appear only when set, so variants
 * that differ in them get different labels. */
static void params_text(const sm_params *p, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    if (p->workload == SM_WL_HTTP) {
        /* " 51711600 B x4", " 16 MiB x5 4 conns buffer 100 KiB", " http://h/f x5". */
        if (p->url[0])
            append(buf, cap, &len, " %.60s", p->url);
        if (p->bytes)
            append_size(buf, cap, &len, " ", p->bytes);
        append(buf, cap, &len, " x%" PRIu32, p->repeat);
        if (p->connections > 1)
            append(buf, cap, &len, " %" PRIu32 " conns", p->connections);
        if (p->buffer_size) {
            append(buf, cap, &len, " buffer");
            append_size(buf, cap, &len, " ", p->buffer_size);
        }
        if (p->treatment[0])
            append(buf, cap, &len, " treated %s", p->treatment);
        return;
    }
    append_sizes(p, buf, cap, &len);
    if (p->duration_ms != 0)
        append(buf, cap, &len, " %" PRIu32 " ms", p->duration_ms);
    else if (p->bytes != 0) {
        append_size(buf, cap, &len, " ", p->bytes);
        append(buf, cap, &len, " total");
    } else
        append(buf, cap, &len, " x %" PRIu64, p->count);
    if (p->sndbuf != 0) {
        append(buf, cap, &len, " sndbuf");
        append_size(buf, cap, &len, " ", p->sndbuf);
    }
    if (p->rcvbuf != 0) {
        append(buf, cap, &len, " rcvbuf");
        append_size(buf, cap, &len, " ", p->rcvbuf);
    }
    if (p->read_size != 0) {
        append(buf, cap, &len, " read");
        append_size(buf, cap, &len, " ", p->read_size);
    }
    /* An experiment's treated arm (proto/treatment.h) is a test of its own. */
    if (p->treatment[0])
        append(buf, cap, &len, " treated %s", p->treatment);
}

/* The part of params_text that tells the variants of one run apart at a glance: the sizes
 * (" lines 128 B", " 1 B/1 B", " 16 MiB"), without the amount and socket options. */
static void brief_text(const sm_params *p, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    if (p->workload == SM_WL_HTTP) {
        if (p->bytes)
            append_size(buf, cap, &len, " ", p->bytes);
        else if (p->url[0])
            append(buf, cap, &len, " %.40s", p->url);
    } else
        append_sizes(p, buf, cap, &len);
    if (p->treatment[0])
        append(buf, cap, &len, " treated");
}

void sm_export_label(const sm_params *p, sm_export_label_kind kind, bool brief, char *buf,
                     size_t cap)
{
    if (cap == 0)
        return;
    char transport[32], rest[SM_TABLE_LABEL_MAX];
    transport_text(p, transport, sizeof transport);
    if (brief)
        brief_text(p, rest, sizeof rest);
    else
        params_text(p, rest, sizeof rest);
    const char *wl = sm_workload_name(p->workload);
    size_t len = 0;
    buf[0] = '\0';
    switch (kind) {
    case SM_LABEL_RATIO:
        /* An http ratio compares user CPU, not the headline throughput: its name says so. */
        if (p->workload == SM_WL_HTTP)
            append(buf, cap, &len, "user CPU %s/thread%s %s%s", transport, brief ? "" : ",", wl,
                   rest);
        else
            append(buf, cap, &len, "%s/unix %s%s", transport, wl, rest);
        break;
    case SM_LABEL_LOOPBACK:
        append(buf, cap, &len, "pair/loopback %s %s%s", wl, transport, rest);
        break;
    default:
        append(buf, cap, &len, "%s %s%s", wl, transport, rest);
        break;
    }
}
