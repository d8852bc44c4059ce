/* Job results: the metric table (names, units, which way is better) and the result record. */
#include "proto/result.h"

#include <math.h>
#include <string.h>

_Static_assert(SM_M__COUNT <= 64, "sm_result.have holds one bit per metric");

static const struct metric_info {
    const char *name;
    const char *unit;
    sm_metric_sense sense;
} metrics[SM_M__COUNT] = {
    [SM_M_BYTES] = {"bytes", "B", SM_SENSE_NONE},
    [SM_M_SECONDS] = {"seconds", "s", SM_SENSE_LOWER},
    [SM_M_THROUGHPUT] = {"throughput_MBps", "MB/s", SM_SENSE_HIGHER},
    [SM_M_MSGS_PER_S] = {"msgs_per_s", "1/s", SM_SENSE_HIGHER},
    [SM_M_TX_USER_S] = {"tx_user_s", "s", SM_SENSE_LOWER},
    [SM_M_TX_SYS_S] = {"tx_sys_s", "s", SM_SENSE_LOWER},
    [SM_M_RX_USER_S] = {"rx_user_s", "s", SM_SENSE_LOWER},
    [SM_M_RX_SYS_S] = {"rx_sys_s", "s", SM_SENSE_LOWER},
    [SM_M_CPU_S_PER_GB] = {"cpu_s_per_GB", "s/GB", SM_SENSE_LOWER},
    [SM_M_TCP_RETRANS] = {"tcp_retrans", "count", SM_SENSE_LOWER},
    [SM_M_TCP_RTT_US] = {"tcp_rtt_us", "us", SM_SENSE_LOWER},
    [SM_M_RTT_P50_US] = {"rtt_p50_us", "us", SM_SENSE_LOWER},
    [SM_M_RTT_P90_US] = {"rtt_p90_us", "us", SM_SENSE_LOWER},
    [SM_M_RTT_P99_US] = {"rtt_p99_us", "us", SM_SENSE_LOWER},
    [SM_M_RTT_P999_US] = {"rtt_p999_us", "us", SM_SENSE_LOWER},
    [SM_M_RTT_MAX_US] = {"rtt_max_us", "us", SM_SENSE_LOWER},
    [SM_M_RT_PER_S] = {"rt_per_s", "1/s", SM_SENSE_HIGHER},
    [SM_M_CONNECTS_PER_S] = {"connects_per_s", "1/s", SM_SENSE_HIGHER},
    [SM_M_CONNECT_P50_US] = {"connect_p50_us", "us", SM_SENSE_LOWER},
};

static bool valid(sm_metric m)
{
    return (unsigned)m < SM_M__COUNT;
}

/* Out-of-range metrics get a placeholder rather than NULL so callers can print blindly. */
const char *sm_metric_name(sm_metric m)
{
    return valid(m) ? metrics[m].name : "unknown";
}

const char *sm_metric_unit(sm_metric m)
{
    return valid(m) ? metrics[m].unit : "";
}

sm_metric_sense sm_metric_sense_of(sm_metric m)
{
    return valid(m) ? metrics[m].sense : SM_SENSE_NONE;
}

int sm_metric_lookup(const char *name, sm_metric *out)
{
    if (name == NULL)
        return SM_EINVAL;
    for (unsigned i = 0; i < SM_M__COUNT; i++) {
        if (strcmp(name, metrics[i].name) == 0) {
            *out = (sm_metric)i;
            return 0;
        }
    }
    return SM_EINVAL;
}

/* ok starts false: only the job runner, once both sides finished, may declare success. */
void sm_result_init(sm_result *r)
{
    memset(r, 0, sizeof *r);
    r->ok = false;
    r->hist = NULL;
    r->tx_cpu = -1;
    r->rx_cpu = -1;
}

void sm_result_fini(sm_result *r)
{
    sm_hist_free(r->hist);
    sm_result_init(r);
}

void sm_result_set(sm_result *r, sm_metric m, double value)
{
    if (!valid(m))
        return;
    r->v[m] = value;
    r->have |= 1ull << m;
}

bool sm_result_has(const sm_result *r, sm_metric m)
{
    return valid(m) && (r->have & (1ull << m)) != 0;
}

double sm_result_get(const sm_result *r, sm_metric m)
{
    return sm_result_has(r, m) ? r->v[m] : NAN;
}
