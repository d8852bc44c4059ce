/* A store in a fresh temporary folder, for the store's unit tests (store_fixture.h). */
#include "store_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int store_fixture_setup_closed(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/sm_store_XXXXXX");
    if (mkdtemp(f->dir) == NULL) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/sm.db", f->dir);
    *state = f;
    return 0;
}

int store_fixture_setup(void **state)
{
    if (store_fixture_setup_closed(state) != 0)
        return -1;
    fixture *f = *state;
    sm_error err = {0};
    if (sm_store_open(&f->st, f->path, &err) != 0) {
        fprintf(stderr, "open: %s\n", err.msg);
        store_fixture_teardown(state);
        return -1;
    }
    return 0;
}

int store_fixture_teardown(void **state)
{
    fixture *f = *state;
    sm_store_close(f->st);
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char p[160];
        snprintf(p, sizeof p, "%s%s", f->path, suffixes[i]);
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    *state = NULL;
    return 0;
}
