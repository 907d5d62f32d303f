/*
 * apiserver/options_testing.h - the test hooks of options.h: entry points
 * only the tests call, never the daemon (which parses through kube/util/cli.h).
 */
#ifndef APIS_OPTIONS_TESTING_H
#define APIS_OPTIONS_TESTING_H

#include "apiserver/options.h"

/* Defaults, then argv[1..argc) over the flag sets, then validation. On a
 * bad flag returns KUBE_ECONFIG with a message naming it in err. */
int apis_options_parse(int argc, char *const *argv, apis_options *o, char *err, size_t errlen);

#endif
