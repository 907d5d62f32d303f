/*
 * apiserver/app_testing.h - the test hooks of app.h: entry points only the
 * tests and benchmarks call, never the daemons.
 */
#ifndef APISERVER_APP_TESTING_H
#define APISERVER_APP_TESTING_H

#include "apiserver/app.h"

/* The app's metrics registry and delegated-auth source (owned by the app). */
apis_metrics *apis_app_metrics(apis_app *a);
kube_authn_source *apis_app_authn_source(apis_app *a);

#endif
