/* A job's treatment: host or socket settings given for one job (an experiment's treated arm),
 * as the text the job's params carry in "treatment", parsed into its parts. */
#ifndef SM_PROTO_TREATMENT_H
#define SM_PROTO_TREATMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/err.h"

#define SM_TREATMENT_MAX        255 /* bytes of a treatment text, without the NUL */
#define SM_TREATMENT_PARTS_MAX  4
#define SM_TREAT_KEY_MAX        64  /* bytes of a sysctl key, an interface or a socket option */
#define SM_TREAT_VALUE_MAX      128 /* bytes of a sysctl's or a qdisc's value */
#define SM_TREAT_IFACE_MAX      15  /* IFNAMSIZ - 1 */
#define SM_TREAT_CONGESTION_MAX 15  /* TCP_CA_NAME_MAX - 1 */

typedef enum sm_treat_kind {
    SM_TREAT_SYSCTL = 0,
    SM_TREAT_QDISC,
    SM_TREAT_SOCKET,
    SM_TREAT_OFFLOAD
} sm_treat_kind;

/* One part: sysctl (key "net.ipv4.tcp_rmem", value as written to /proc/sys), qdisc (key the
 * interface, value the root qdisc as the fingerprint's if.<iface>.qdisc reads), socket (key
 * "rcvbuf", "sndbuf" or "nodelay", value its decimal number), offload (key "IFACE NAME", the
 * interface and the offload as the fingerprint's if.<iface>.offload.<name> names it, value "on"
 * or "off"). */
typedef struct sm_treat_part {
    sm_treat_kind kind;
    char key[65];
    char value[SM_TREATMENT_MAX + 1];
} sm_treat_part;

typedef struct sm_treatment {
    sm_treat_part v[SM_TREATMENT_PARTS_MAX];
    size_t n;
} sm_treatment;

/* Parses a treatment text: parts joined by "; " (at most SM_TREATMENT_PARTS_MAX), each one of
 *   sysctl KEY=VALUE   KEY "net." then [a-z0-9_.] with no empty component, at most 64 bytes;
 *                      VALUE 1..128 bytes of printable ASCII or tab, no ';', no space or tab
 *                      at either end
 *   qdisc IFACE VALUE  IFACE [A-Za-z0-9_.-]{1,15}; VALUE as a sysctl's (any qdisc kind
 *                      parses; which ones an agent can set is the agent's business)
 *   socket rcvbuf=N, socket sndbuf=N (SM_SOCKBUF_MIN..SM_SOCKBUF_MAX), socket nodelay=0|1,
 *   socket cork=0|1, socket congestion=NAME ([a-z0-9_], 1..15 bytes),
 *   socket notsent_lowat=N (1..4294967295)
 *   offload IFACE NAME=on|off  IFACE as a qdisc's; NAME gso, gro, tso, tx_csum, rx_csum or sg
 * and no setting twice. "" is no treatment (n = 0). Returns 0 with *out filled, or SM_EINVAL
 * with err->msg starting "treatment: " and naming the part and what is wrong, e.g.
 * "treatment: part 2: sysctl key 'net..x' has an empty component". *out is undefined then. */
int sm_treatment_parse(const char *text, sm_treatment *out, sm_error *err);

/* The --allow-experiment word that lets an agent change this kind: "sysctl", "qdisc",
 * "offload"; NULL for socket, which changes nothing but the job's own sockets. */
const char *sm_treat_flag(sm_treat_kind k);

/* "sysctl", "qdisc", "socket", "offload"; "unknown" for another value. */
const char *sm_treat_kind_name(sm_treat_kind k);

/* Whether the part changes the host (sysctl, qdisc, offload) rather than the job's sockets. */
static inline bool sm_treat_part_host(const sm_treat_part *p)
{
    return p->kind != SM_TREAT_SOCKET;
}

/* The part as it reads in a treatment text ("qdisc lo noqueue", "offload lo gso=on"), into buf
 * (NUL-terminated, cut to len - 1 bytes). Returns buf. */
const char *sm_treatment_part_text(const sm_treat_part *p, char *buf, size_t len);

struct sm_params;
/* Sets the job's socket options the socket parts give (rcvbuf, sndbuf, nodelay, cork,
 * congestion, notsent_lowat); the other parts are left to the agent. */
void sm_treatment_socket_apply(const sm_treatment *t, struct sm_params *p);

#endif
