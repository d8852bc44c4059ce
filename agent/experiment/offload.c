/* An interface's offload as treatments set it (offload.h): the fingerprint's own table of
 * offloads and its ethtool ioctl (agent/host/fingerprint.h). */
#include "agent/experiment/offload.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/host/fingerprint.h"

/* Splits "IFACE NAME" into iface and the offload's entry; NULL when it is not one. */
static const sm_fp_offload *split(const char *key, char iface[IFNAMSIZ])
{
    const char *sp = strchr(key, ' ');
    if (sp == NULL || sp == key || (size_t)(sp - key) >= IFNAMSIZ)
        return NULL;
    memcpy(iface, key, (size_t)(sp - key));
    iface[sp - key] = '\0';
    for (size_t i = 0; i < sm_fp_n_offloads; i++)
        if (strcmp(sp + 1, sm_fp_offloads[i].name) == 0)
            return &sm_fp_offloads[i];
    return NULL;
}

/* One ethtool_value command on iface, over a socket of this namespace; 0 or its errno. */
static int ethtool_value(const char *iface, uint32_t cmd, uint32_t *data)
{
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    struct ethtool_value ev = {.cmd = cmd, .data = *data};
    const int e = sm_fp_ethtool(fd, iface, &ev);
    close(fd);
    *data = ev.data;
    return e;
}

int sm_treat_offload_get(const char *key, char *buf, size_t cap, sm_error *err)
{
    char iface[IFNAMSIZ];
    const sm_fp_offload *o = split(key, iface);
    if (o == NULL)
        return sm_error_set(err, SM_EINVAL, "treatment: '%.40s' is no interface and offload", key);
    uint32_t v = 0;
    const int e = ethtool_value(iface, o->get, &v);
    if (e != 0)
        return sm_error_set(err, SM_ESYS, "treatment: offload %s: %s", key, strerror(e));
    snprintf(buf, cap, "%s", v ? "on" : "off");
    return 0;
}

int sm_treat_offload_set(const char *key, const char *value, sm_error *err)
{
    char iface[IFNAMSIZ];
    const sm_fp_offload *o = split(key, iface);
    if (o == NULL)
        return sm_error_set(err, SM_EINVAL, "treatment: '%.40s' is no interface and offload", key);
    uint32_t v = strcmp(value, "on") == 0;
    const int e = ethtool_value(iface, o->set, &v);
    if (e == EOPNOTSUPP)
        return sm_error_set(err, SM_EINVAL,
                            "treatment: offload %s=%s: %s's driver does not let it change %s (%s)",
                            key, value, iface, o->name, strerror(e));
    if (e != 0)
        return sm_error_set(err, SM_ESYS, "treatment: offload %s=%s: %s", key, value, strerror(e));
    return 0;
}
