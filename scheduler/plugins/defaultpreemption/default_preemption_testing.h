/*
 * scheduler/plugins/defaultpreemption/default_preemption_testing.h - the
 * test hooks of default_preemption.h: entry points the tests and benchmarks
 * use and the daemons never call.
 */
#ifndef SCHEDULER_PLUGINS_DEFAULTPREEMPTION_DEFAULT_PREEMPTION_TESTING_H
#define SCHEDULER_PLUGINS_DEFAULTPREEMPTION_DEFAULT_PREEMPTION_TESTING_H

#include "plugins/defaultpreemption/default_preemption.h"

/* DefaultPreemption's create() with PDBs read from pdbs (kube_pdb_codec
 * objects; borrowed, must outlive the instance; NULL: no PDB). args as
 * default_args output. Destroy with the descriptor's destroy. */
int plugin_default_preemption_new(const cJSON *args, fw_handle *h, struct kube_store *pdbs,
                                  void **self, char *err, size_t errlen);

/* Makes GetOffsetAndNumCandidates' random offset a constant (tests);
 * offset < 0 restores randomness. */
void plugin_default_preemption_fix_offset(void *self, int32_t offset);

#endif
