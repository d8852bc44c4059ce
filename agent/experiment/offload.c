/* An interface's offload as treatments set it (offload.h). */
#include "agent/experiment/offload.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static const struct {
    const char *name;
    uint32_t get, set;
} features[] = {
    {"gso", ETHTOOL_GGSO, ETHTOOL_SGSO},           {"gro", ETHTOOL_GGRO, ETHTOOL_SGRO},
    {"tso", ETHTOOL_GTSO, ETHTOOL_STSO},           {"tx_csum", ETHTOOL_GTXCSUM, ETHTOOL_STXCSUM},
    {"rx_csum", ETHTOOL_GRXCSUM, ETHTOOL_SRXCSUM}, {"sg", ETHTOOL_GSG, ETHTOOL_SSG},
};
#define N_FEATURES (sizeof features / sizeof features[0])

/* Splits "IFACE NAME" into iface and the feature's index; false when it is not one. */
static bool split(const char *key, char iface[IFNAMSIZ], size_t *at)
{
    const char *sp = strchr(key, ' ');
    if (sp == NULL || sp == key || (size_t)(sp - key) >= IFNAMSIZ)
        return false;
    memcpy(iface, key, (size_t)(sp - key));
    iface[sp - key] = '\0';
    for (*at = 0; *at < N_FEATURES; (*at)++)
        if (strcmp(sp + 1, features[*at].name) == 0)
            return true;
    return false;
}

/* One ethtool_value command on iface; 0 or its errno. */
static int ethtool_value(const char *iface, uint32_t cmd, uint32_t *data)
{
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    struct ethtool_value ev = {.cmd = cmd, .data = *data};
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", iface);
    ifr.ifr_data = (void *)&ev;
    const int e = ioctl(fd, SIOCETHTOOL, &ifr) == 0 ? 0 : errno;
    close(fd);
    *data = ev.data;
    return e;
}

int sm_treat_offload_get(const char *key, char *buf, size_t cap, sm_error *err)
{
    char iface[IFNAMSIZ];
    size_t at;
    if (!split(key, iface, &at))
        return sm_error_set(err, SM_EINVAL, "treatment: '%.40s' is no interface and offload", key);
    uint32_t v = 0;
    const int e = ethtool_value(iface, features[at].get, &v);
    if (e != 0)
        return sm_error_set(err, SM_ESYS, "treatment: offload %s: %s", key, strerror(e));
    snprintf(buf, cap, "%s", v ? "on" : "off");
    return 0;
}

int sm_treat_offload_set(const char *key, const char *value, sm_error *err)
{
    char iface[IFNAMSIZ];
    size_t at;
    if (!split(key, iface, &at))
        return sm_error_set(err, SM_EINVAL, "treatment: '%.40s' is no interface and offload", key);
    uint32_t v = strcmp(value, "on") == 0;
    const int e = ethtool_value(iface, features[at].set, &v);
    if (e == EOPNOTSUPP)
        return sm_error_set(err, SM_EINVAL,
                            "treatment: offload %s=%s: %s's driver does not let it change %s (%s)",
                            key, value, iface, features[at].name, strerror(e));
    if (e != 0)
        return sm_error_set(err, SM_ESYS, "treatment: offload %s=%s: %s", key, value, strerror(e));
    return 0;
}
