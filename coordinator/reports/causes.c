/* A run's anomalies with what the experiments that explain them proved (internal.h): each ended
 * experiment of the run is answered as GET /api/runs/ID/experiment answers it (experiment.c),
 * and analysis/xpcauses.c joins its answer to the anomaly of its host and test. */
#include "coordinator/analysis/xpcauses.h"
#include "coordinator/reports/internal.h"
#include "coordinator/reports/reports.h"

#include <stdlib.h>

char *report_add_causes(sm_reports *r, uint64_t id, char *text, report_form form)
{
    sm_experiment_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (!text || sm_store_experiments_of(r->st, id, &rows, &n, &err) != 0 || n == 0) {
        sm_store_experiments_free(rows, n);
        return text;
    }
    sm_xp_answer *v = calloc(n, sizeof *v);
    sm_run_report *reps = calloc(n, sizeof *reps);
    size_t k = 0;
    for (size_t i = 0; v && reps && i < n; i++) {
        sm_run_row run;
        if (sm_store_run_get(r->st, rows[i].run_id, &run, &err) != 0)
            continue;
        const bool done = run.state == SM_RUN_DONE;
        sm_run_row_fini(&run);
        /* Only a done experiment has an answer to give; a running one moves. */
        if (!done)
            continue;
        if (sm_reports_experiment(r, rows[i].run_id, &reps[k]) != SM_REPORT_OK) {
            sm_run_report_fini(&reps[k]);
            continue;
        }
        v[k] =
            (sm_xp_answer){rows[i].run_id, rows[i].host, rows[i].test, reps[k].body, reps[k].len};
        k++;
    }
    text = sm_xp_causes_add(text, v, k,
                            form == REPORT_JSON   ? SM_XP_JSON
                            : form == REPORT_TEXT ? SM_XP_TEXT
                                                  : SM_XP_MD);
    for (size_t i = 0; reps && i < k; i++)
        sm_run_report_fini(&reps[i]);
    free(reps);
    free(v);
    sm_store_experiments_free(rows, n);
    return text;
}
