/* Run specs (DESIGN section 7): which tests, on which hosts and pairs, how often. A list value
 * in a test is a matrix axis; decoding expands every test into its variants. Presets are specs
 * that ship with sockmatrix. */
#ifndef SM_COORD_SPEC_H
#define SM_COORD_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/envelope.h"
#include "proto/err.h"
#include "proto/params.h"
#include "proto/reps.h"

/* Room for an agent name and its NUL. */
#define SM_NAME_LEN (SM_NAME_MAX + 1)

#define SM_SPEC_TESTS_MAX    32
#define SM_SPEC_VARIANTS_MAX 64   /* per test, after expansion */
#define SM_SPEC_HOSTS_MAX    1024 /* names in "hosts" or hosts in "pairs" lists */
#define SM_SPEC_REPS_MAX     100
#define SM_SPEC_WARMUP_MAX   10
#define SM_SPEC_NAME_MAX     64

typedef enum sm_hosts_kind { SM_HOSTS_ALL = 0, SM_HOSTS_LIST, SM_HOSTS_LABEL } sm_hosts_kind;
typedef enum sm_pairs_kind {
    SM_PAIRS_MESH = 0, /* every ordered pair of the selected hosts */
    SM_PAIRS_RING,     /* h[i] -> h[i+1], and the last to the first, in name order */
    SM_PAIRS_STAR,     /* every other host <-> the star, both directions */
    SM_PAIRS_LIST,     /* the ordered pairs given: [["h1","h2"], ...] (client, server) */
} sm_pairs_kind;

typedef struct sm_spec_test {
    sm_params variants[SM_SPEC_VARIANTS_MAX];
    size_t n_variants;
    /* "hosts": the spec's listed hosts this local test runs on (owned); NULL, 0: all the
     * run's hosts. */
    char (*hosts)[SM_NAME_LEN];
    size_t n_hosts;
} sm_spec_test;

typedef struct sm_spec {
    char name[SM_SPEC_NAME_MAX + 1];
    sm_hosts_kind hosts;
    char (*host_names)[SM_NAME_LEN]; /* SM_HOSTS_LIST; owned */
    size_t n_host_names;
    char label_key[33]; /* SM_HOSTS_LABEL: {"label": "rack=2"} */
    char label_value[65];
    sm_pairs_kind pairs;
    char star[SM_NAME_LEN];            /* SM_PAIRS_STAR */
    char (*pair_list)[2][SM_NAME_LEN]; /* SM_PAIRS_LIST: (client, server); owned */
    size_t n_pairs;
    uint32_t repetitions; /* 1..SM_SPEC_REPS_MAX, default 5 */
    uint32_t warmup;      /* 0..SM_SPEC_WARMUP_MAX, default 1 */
    bool parallel;        /* default true: local jobs of different hosts run side by side */
    bool parallel_given;  /* the spec said "parallel"; else the coordinator may choose (it runs
                             hosts that share one machine one job at a time) */
    sm_spec_test *tests;  /* owned */
    size_t n_tests;
    /* "repetitions" as an object (or "auto"): each cell starts with reps.min interleaved
     * repetitions (repetitions is set to it) and gets more rounds until its CI is tight or
     * reps.max (proto/reps.h). reps.remeasure is unused: sm_spec_rule has the run's. */
    bool adaptive;
    sm_reps_rule reps;
    /* "remeasure": extra measured repetitions a cell may get while disturbed samples keep it
     * short, 0..SM_SPEC_REPS_MAX; default as many again as asked (repetitions, or reps.max). */
    uint32_t remeasure;
    bool remeasure_given; /* the spec said "remeasure"; a default one yields to the job bound
                             (sm_plan_remeasure) */
} sm_spec;

/* Decodes and validates a spec:
 *   {"name":"tcp-vs-unix","hosts":"all"|["h1","h2"]|{"label":"rack=2"},
 *    "pairs":"mesh"|"ring"|{"star":"h1"}|[["h1","h2"],...],
 *    "repetitions":5 | "auto" | {"min":5,"max":30,"ci_rel":0.05},"remeasure":5,
 *    "warmup":1,"parallel":true,
 *    "tests":[{"workload":"stream","scope":"local","transport":["tcp","unix"],
 *              "msg_size":[128,131072],"count":8192}, ...]}
 * Every field of a test is a params field (proto/codec's names) whose value may be a list; the
 * Cartesian product of the lists gives the test's variants, each validated by
 * sm_params_validate. TCP-only options (nodelay, cork) are forced false for transport unix
 * and the duplicates that leaves are dropped, so ["tcp","unix"] x nodelay [false,true] gives
 * three variants, not an error. Only name and tests are required; pairs is required when a
 * test has scope pair. The object form of repetitions may leave out any member (min 5 or the
 * given max if lower, max 30 or the given min if higher, ci_rel 0.05) and "auto" is all
 * defaults; each bound is checked (1 <= min <= max <= SM_SPEC_REPS_MAX, 0 < ci_rel < 1) with
 * the member as the field ("repetitions.min"). "remeasure" (0..SM_SPEC_REPS_MAX, field
 * "remeasure") is how many measured repetitions past its repetitions (past max when adaptive) a
 * cell may get when some of its samples were disturbed and it is short of clean ones
 * (sm_reps_decide); it defaults to as many again (repetitions, or max), and 0 turns it off.
 * On error: SM_EPARSE/SM_EINVAL, err->msg names the field and the bound, and err->field gets
 * its path (e.g. "tests[1].msg_size[2]"; "" on success and when no field is at fault).
 * *out is left empty on error and must be sm_spec_fini'd on success. */
int sm_spec_decode(const char *json, size_t len, sm_spec *out, sm_error *err);
void sm_spec_fini(sm_spec *s);

/* The repetitions rule a run of s follows (proto/reps.h): reps with s->remeasure when
 * adaptive; else {repetitions, repetitions, 0, remeasure}, a fixed count that only remeasuring
 * adds to. */
sm_reps_rule sm_spec_rule(const sm_spec *s);

/* Whether a run of s may get rounds its plan does not have: adaptive repetitions, or
 * remeasure > 0. */
bool sm_spec_adds_rounds(const sm_spec *s);

/* Whether any test of the spec has scope pair / local. */
bool sm_spec_has_scope(const sm_spec *s, sm_scope scope);

/* Presets: the spec texts that ship with sockmatrix. */
typedef struct sm_preset {
    const char *name;
    const char *description;
    const char *spec_json; /* a valid spec, "hosts":"all" */
} sm_preset;
/* The presets (seed-tcp-unix, quick, full), NULL-terminated. */
const sm_preset *sm_presets(void);
const sm_preset *sm_preset_find(const char *name);
/* {"presets":[{"name","description","spec":{...}}]} */
char *sm_presets_encode(void);

#endif
