/* Collects the host facts that explain a measurement. */
#ifndef SM_AGENT_FACTS_H
#define SM_AGENT_FACTS_H

#include "proto/facts.h"

/* Fills *f from uname, /proc and sysctl files; a fact that cannot be read is "unknown" or 0
 * (the boot id and machine id ""), never an error. */
void sm_facts_collect(sm_facts *f);

#endif
