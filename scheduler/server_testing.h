/*
 * scheduler/server_testing.h - the test hooks of server.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef SCHEDULER_SERVER_TESTING_H
#define SCHEDULER_SERVER_TESTING_H

#include "server.h"

/* The port listened on. */
int sched_server_port(const sched_server *s);

#endif
