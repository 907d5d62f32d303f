/*
 * kube/util/residency.h - gives back the file-backed pages a daemon touched
 * only while it started.
 *
 * Start-up runs code that never runs again: the dynamic loader, the
 * constructors of libraries pulled in only as libcurl's dependencies
 * (GnuTLS, p11-kit, Kerberos, LDAP), OpenSSL's configuration loading and
 * provider set-up, flag parsing and the configuration decoders. The kernel
 * maps such pages in 64 KB windows (fault-around), so at 5000 nodes about
 * 11 MB of the scheduler's peak RSS was file-backed library pages, 4 MB of
 * them libcrypto's, most untouched after start.
 *
 * kube_residency_release_file_pages() unmaps from this process the pages of
 * every PRIVATE, READ-ONLY file mapping that holds no anonymous (copied on
 * write) page: library code and read-only data. The pages stay in the page
 * cache; a page used again is mapped back by a minor fault, with its
 * window. Mappings that are writable, shared, or have a copied page (the
 * relocated data that RELRO made read-only) are left alone, so no content
 * can change: madvise(MADV_DONTNEED) on such a mapping only drops page
 * table entries, and the next access reads the same file bytes.
 *
 * Threads: /proc/self/smaps is read first, then each mapping released, so
 * no other thread may unmap a file mapping or load a library meanwhile
 * (dlopen, dlclose, a first getaddrinfo loading NSS modules, munmap of a
 * mapped file): an address could change hands in between. Call it once
 * start-up is done and before the first request goes out or any cache
 * grows, so that the peak never holds both.
 */
#ifndef KUBE_RESIDENCY_H
#define KUBE_RESIDENCY_H

#include <stddef.h>

/* Unmaps the resident pages of this process's private read-only file
 * mappings that have no anonymous page (above). *released_kib (may be NULL)
 * is set to the resident KiB those mappings held before. Returns KUBE_OK,
 * KUBE_EIO when /proc/self/smaps cannot be read or KUBE_ENOMEM (nothing
 * released then). A mapping madvise refuses is skipped. */
int kube_residency_release_file_pages(size_t *released_kib);

#endif
