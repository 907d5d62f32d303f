/*
 * kube/util/version.c - the build's version (version.h); the string itself
 * is in the generated version_stamp.c.
 */
#include "kube/util/version.h"

extern const char kube_version_stamp[];

const char *kube_version(void)
{
    return kube_version_stamp;
}

void kube_version_print(FILE *f, const char *program)
{
    fprintf(f, "%s %s\n", program, kube_version_stamp);
}
