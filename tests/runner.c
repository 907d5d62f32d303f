/*
 * tests/runner.c - runs the groups of tests/test_list.h: all of them, or
 * those named on the command line. Exits non-zero if any test failed or a
 * named group does not exist.
 */
#include <stdio.h>
#include <string.h>

#include "test_list.h"

#define DECLARE(name) int test_group_##name(void);
TEST_LIST(DECLARE, DECLARE)
#undef DECLARE

typedef struct {
    const char *name;
    int (*run)(void);
} test_group;

#define ENTRY(name) {#name, test_group_##name},
static const test_group groups[] = {TEST_LIST(ENTRY, ENTRY)};
#undef ENTRY

static const size_t n_groups = sizeof(groups) / sizeof(groups[0]);

static int run_named(const char *name)
{
    for (size_t i = 0; i < n_groups; i++)
        if (strcmp(groups[i].name, name) == 0)
            return groups[i].run();
    fprintf(stderr, "no test group named '%s'\n", name);
    return 1;
}

int main(int argc, char **argv)
{
    int failed = 0;

    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            failed += run_named(argv[i]);
        return failed ? 1 : 0;
    }
    for (size_t i = 0; i < n_groups; i++)
        failed += groups[i].run();
    return failed ? 1 : 0;
}
