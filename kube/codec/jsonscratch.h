/*
 * kube/codec/jsonscratch.h - cJSON trees parsed into a per-thread scratch arena.
 *
 * The informer parses every list item and watch event into a cJSON tree,
 * decodes it into a kube_object and drops the tree: one malloc per node and
 * per string, then as many frees, were a large part of the cost of an
 * event. kube_jsonscratch_parse() takes the tree's memory from an arena
 * owned by the calling thread instead, and kube_jsonscratch_release() gives
 * it back at once.
 *
 * The arena is routed through cJSON's allocation hooks, installed for the
 * whole process when the program starts: outside kube_jsonscratch_parse()
 * they allocate with malloc, and they free with free anything the calling
 * thread's arena does not hold, so every other cJSON use is unchanged.
 *
 * One scratch tree per thread at a time: a parse while the thread's tree is
 * still held falls back to an ordinary heap tree (released the same way).
 *
 * Memory: the tree is borrowed from the calling thread's arena until
 * kube_jsonscratch_release(root), on the same thread, which must be called
 * before the next kube_jsonscratch_parse() on that thread can use the arena
 * again. Nothing of the tree may be kept after the release (decoders copy
 * what they need). cJSON_Delete() on a scratch tree is harmless (its frees
 * are no-ops), but the arena is only reused after the release. The arena
 * keeps one small block between trees and is freed when its thread exits.
 */
#ifndef KUBE_JSONSCRATCH_H
#define KUBE_JSONSCRATCH_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* cJSON_ParseWithLength(text, len) into the calling thread's arena. NULL
 * when text is not JSON or memory runs out. Release with
 * kube_jsonscratch_release(). */
cJSON *kube_jsonscratch_parse(const char *text, size_t len);

/* Ends the tree root returned by kube_jsonscratch_parse() on this thread
 * (a heap tree is deleted). NULL-safe. */
void kube_jsonscratch_release(cJSON *root);

#endif
