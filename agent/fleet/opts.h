/* Options of sockmatrix-agent's fleet mode (--coordinator ...). */
#ifndef SM_AGENT_FLEET_OPTS_H
#define SM_AGENT_FLEET_OPTS_H

#include <stdbool.h>

#include "agent/fleet/daemon.h"
#include "proto/err.h"

/* Whether argv asks for fleet mode (has --coordinator). */
bool sm_dopts_wanted(int argc, char **argv);

/* Parses fleet-mode options into *cfg and loads the key. Returns 0, or SM_EINVAL with one line
 * naming the option. *help is set for --help. */
int sm_dopts_parse(int argc, char **argv, sm_daemon_cfg *cfg, bool *help, sm_error *err);

const char *sm_dopts_usage(void);

#endif
