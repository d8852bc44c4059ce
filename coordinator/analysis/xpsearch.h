/* Narrowing a combination down: when no single suspect of an experiment closes the gap but the
 * combination of its first ones does, delta debugging (xpdd.h) over those suspects, one stage
 * of subsets after another, each stage an experiment of its own whose suspects are the stage's
 * subsets. This is the search's bookkeeping: which suspects it runs over, the mask of a
 * stage's treatment, its outcomes, and the plan of its next stage. Pure. docs/analysis.md,
 * "Narrowing a combination down". */
#ifndef SM_COORD_XPSEARCH_H
#define SM_COORD_XPSEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/experiment.h"
#include "coordinator/analysis/xpdd.h"
#include "proto/err.h"

typedef struct sm_xp_search {
    size_t k;                 /* the suspects searched over: the combination's parts */
    size_t idx[SM_XP_DD_MAX]; /* their indexes in the first experiment's plan, in order */
    sm_xp_dd_outcome known[1u << SM_XP_DD_MAX];
} sm_xp_search;

/* The outcome a verdict gives a subset: cause closes; part of it and not the cause do not;
 * inconclusive and could not be tested are unresolved. */
sm_xp_dd_outcome sm_xp_search_outcome(sm_xp_verdict v);

/* Starts the search of the first experiment's plan head and its estimates est (head->n): its
 * suspects are the singles whose treatments make up the combination (the plan's last suspect,
 * item ""), each single's outcome and the combination's known. False when there is no search
 * to make: no combination with a treatment, a part that is no single's treatment, a single
 * that is the cause itself (nothing to narrow), or the combination not the cause. */
bool sm_xp_search_start(sm_xp_search *s, const sm_xp_plan *head, const sm_xp_estimate *est);

/* The mask over the search's suspects of treatment (parts joined by "; "): each part one
 * suspect's treatment, each at most once, in the suspects' order; 0 when it is not such. */
uint32_t sm_xp_search_mask(const sm_xp_search *s, const sm_xp_plan *head, const char *treatment);

/* Records the verdict of a stage's suspect whose treatment is treatment: its mask's outcome,
 * unless the mask is 0 or already known. True when it was recorded. */
bool sm_xp_search_record(sm_xp_search *s, const sm_xp_plan *head, const char *treatment,
                         sm_xp_verdict v);

/* The plan of a stage: one suspect per arm (a mask), in order, each the arm's suspects
 * together as the plan's combination is (item "", label "lo qdisc + net.core.somaxconn",
 * host and fleet values each suspect's label and value joined by "; ", treatments joined
 * by "; "). SM_EINVAL for an empty or zero arm, or a treatment over the 255 bytes one takes;
 * SM_ENOMEM. *out set on success only. */
int sm_xp_search_stage_plan(const sm_xp_search *s, const sm_xp_plan *head, const uint32_t *arms,
                            size_t n, sm_xp_plan *out, sm_error *err);

/* The labels of mask's suspects joined by " + " into buf (len bytes, cut with "..."). */
void sm_xp_search_label(const sm_xp_search *s, const sm_xp_plan *head, uint32_t mask, char *buf,
                        size_t len);

#endif
