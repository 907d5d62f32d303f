/*
 * tests/unit/test_residency.c - start-up's file pages given back
 * (kube/util/residency.h): a read-only private file mapping leaves the
 * process's resident set and reads the same bytes after; a mapping with a
 * copied-on-write page, even made read-only since (as RELRO does), keeps
 * its pages and its written byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kube/util/errors.h"
#include "kube/util/residency.h"

#define RES_PAGES 16

/* A temporary file of RES_PAGES pages, each filled with its index; the
 * file is unlinked at once, the descriptor returned (-1 on failure). */
static int make_file(size_t page)
{
    char path[] = "/tmp/stickyvm-residency-XXXXXX";
    int fd = mkstemp(path);
    unsigned char *b = malloc(page);

    if (fd < 0 || b == NULL) {
        free(b);
        return -1;
    }
    unlink(path);
    for (int i = 0; i < RES_PAGES; i++) {
        memset(b, 'a' + i, page);
        if (write(fd, b, page) != (ssize_t)page) {
            close(fd);
            fd = -1;
            break;
        }
    }
    free(b);
    return fd;
}

/* The Rss of the mapping that starts at addr, in KiB (-1 when not found),
 * from /proc/self/smaps. */
static long mapping_rss_kib(const void *addr)
{
    char *line = NULL, *end;
    size_t len = 0;
    long rss = -1;
    int in = 0;
    FILE *f = fopen("/proc/self/smaps", "re");

    if (f == NULL)
        return -1;
    while (getline(&line, &len, f) > 0) {
        /* a header starts "START-END " in hex, zero-padded or not */
        unsigned long long start = strtoull(line, &end, 16);
        if (end != line && *end == '-')
            in = start == (unsigned long long)(uintptr_t)addr;
        else if (in && strncmp(line, "Rss:", 4) == 0) {
            rss = strtol(line + 4, NULL, 10);
            break;
        }
    }
    free(line);
    fclose(f);
    return rss;
}

/* Touches every page; returns a sum so the reads are not optimised away. */
static unsigned touch(const unsigned char *p, size_t page)
{
    unsigned sum = 0;

    for (int i = 0; i < RES_PAGES; i++)
        sum += ((const volatile unsigned char *)p)[(size_t)i * page];
    return sum;
}

static void read_only_pages_leave_and_read_the_same(void **state)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), kib = 0;
    int fd = make_file(page);
    unsigned char *p;

    (void)state;
    assert_true(fd >= 0);
    p = mmap(NULL, page * RES_PAGES, PROT_READ, MAP_PRIVATE, fd, 0);
    assert_true(p != MAP_FAILED);
    touch(p, page);
    assert_int_equal(mapping_rss_kib(p), (long)(page * RES_PAGES / 1024));

    assert_int_equal(kube_residency_release_file_pages(&kib), KUBE_OK);
    assert_true(kib >= page * RES_PAGES / 1024);
    assert_int_equal(mapping_rss_kib(p), 0);
    for (int i = 0; i < RES_PAGES; i++) {
        assert_int_equal(p[(size_t)i * page], 'a' + i);
        assert_int_equal(p[(size_t)i * page + page - 1], 'a' + i);
    }
    munmap(p, page * RES_PAGES);
    close(fd);
}

static void copied_pages_stay_even_when_read_only(void **state)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int fd = make_file(page);
    unsigned char *p;

    (void)state;
    assert_true(fd >= 0);
    p = mmap(NULL, page * RES_PAGES, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    assert_true(p != MAP_FAILED);
    touch(p, page);
    p[3 * page] = 'Z'; /* a relocation, say */
    assert_int_equal(mprotect(p, page * RES_PAGES, PROT_READ), 0);

    assert_int_equal(kube_residency_release_file_pages(NULL), KUBE_OK);
    assert_int_equal(mapping_rss_kib(p), (long)(page * RES_PAGES / 1024));
    assert_int_equal(p[3 * page], 'Z');
    assert_int_equal(p[4 * page], 'a' + 4);
    munmap(p, page * RES_PAGES);
    close(fd);
}

static void anonymous_memory_is_untouched(void **state)
{
    size_t n = 1 << 20;
    unsigned char *heap = malloc(n);

    (void)state;
    assert_non_null(heap);
    memset(heap, 0x5a, n);
    assert_int_equal(kube_residency_release_file_pages(NULL), KUBE_OK);
    for (size_t i = 0; i < n; i += 4096)
        assert_int_equal(heap[i], 0x5a);
    free(heap);
}

int test_group_residency(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_only_pages_leave_and_read_the_same),
        cmocka_unit_test(copied_pages_stay_even_when_read_only),
        cmocka_unit_test(anonymous_memory_is_untouched),
    };
    return cmocka_run_group_tests_name("residency", tests, NULL, NULL);
}
