/*
 * kube/util/version.h - the version both daemons print for --version, as
 * kube's binaries print "Kubernetes v1.28.0": "stickyvm-scheduler
 * v0.4.0-12-gabcdef0". It is stamped at build time from `git describe
 * --tags --always --dirty` (cmake/version_stamp.cmake writes
 * build/generated/version_stamp.c), or CMake's STICKYVM_FALLBACK_VERSION
 * outside a git checkout.
 *
 * Threads: pure. Memory: static strings.
 */
#ifndef KUBE_VERSION_H
#define KUBE_VERSION_H

#include <stdio.h>

/* The stamped version ("v0.4.0-12-gabcdef0"). Static storage. */
const char *kube_version(void);
/* Writes "<program> <version>\n" to f. */
void kube_version_print(FILE *f, const char *program);

#endif
