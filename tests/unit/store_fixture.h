/* A store in a fresh temporary folder, for the store's unit tests (cmocka setup/teardown). */
#ifndef SM_TESTS_UNIT_STORE_FIXTURE_H
#define SM_TESTS_UNIT_STORE_FIXTURE_H

#include "coordinator/store/store.h"

typedef struct fixture {
    char dir[64];   /* a mkdtemp folder under /tmp */
    char path[128]; /* dir/sm.db */
    sm_store *st;
} fixture;

/* *state = a new fixture with its folder made and the store not opened (st NULL); -1 when
 * the folder cannot be made. */
int store_fixture_setup_closed(void **state);

/* As store_fixture_setup_closed, then the store opened at path; -1 when it does not open. */
int store_fixture_setup(void **state);

/* Closes the store (if open), removes the database with its -wal, -shm and -journal files
 * and the folder, and frees the fixture. */
int store_fixture_teardown(void **state);

#endif
