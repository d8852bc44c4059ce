/* Comparison tables set by hand, for the analysis's unit tests. */
#ifndef SM_TESTS_UNIT_ANALYSIS_FIXTURE_H
#define SM_TESTS_UNIT_ANALYSIS_FIXTURE_H

#include <stddef.h>

#include "coordinator/analysis/table.h"

/* A summary set by hand: n samples, the given CV, a CI of +-2% around the median. */
void analysis_fixture_set_cell(sm_table_cell *c, double median, size_t n, double cv);
/* Column c labelled label, of metric in unit. */
void analysis_fixture_set_col(sm_table_col *c, const char *label, const char *metric,
                              const char *unit);

/* n hosts, one "seconds" column near 1.0 (+-0.2% jitter), every cell n = 5 with the given CV. */
void analysis_fixture_table_fleet(sm_table *t, size_t n, size_t cols, double cv);

#endif
