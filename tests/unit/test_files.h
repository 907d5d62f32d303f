/*
 * tests/unit/test_files.h - temporary folders and files for the unit tests
 * that read files (serving certificates, the authentication settings):
 * static helpers, asserting with cmocka on the test's thread.
 */
#ifndef TEST_FILES_H
#define TEST_FILES_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"

static inline void make_tmp(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/stickyvm-unit-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static inline void remove_tree(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static inline void bump_mtime(const char *path)
{
    struct stat st;
    struct timespec times[2];

    assert_int_equal(stat(path, &st), 0);
    times[0] = st.st_atim;
    times[1] = st.st_mtim;
    times[1].tv_sec += 10;
    assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

static inline void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static inline char *file_text(const char *path)
{
    char *t = NULL;
    size_t n;
    assert_int_equal(kube_read_file(path, &t, &n), KUBE_OK);
    return t;
}

#endif
