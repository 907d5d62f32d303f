/*
 * tests/test_list.h - every test group of the project, in one list
 * (libuv style). A UNIT group is pure and fast; an INTEGRATION group starts
 * the API emulator (tests/harness.h). Each group NAME is a function
 * `int test_group_NAME(void)` that runs a cmocka group and returns the
 * number of failures. CMake reads this file and registers one ctest per
 * group, so adding a line here is all it takes. Groups are listed by
 * subsystem (libuv's test-list.h): kube, emulator, framework, plugins,
 * scheduler, apiserver, then the secure ports under hostile clients.
 */
#define TEST_LIST(UNIT, INTEGRATION)                          \
    /* kube: the client library */                            \
    UNIT(errors)                                              \
    UNIT(buf)                                                 \
    UNIT(containers)                                          \
    UNIT(flags)                                               \
    UNIT(log)                                                 \
    UNIT(cli)                                                 \
    UNIT(serving_options)                                     \
    UNIT(tls)                                                 \
    UNIT(config)                                              \
    UNIT(client)                                              \
    UNIT(poller)                                              \
    UNIT(ratelimit)                                           \
    UNIT(quantity)                                            \
    UNIT(selector)                                            \
    UNIT(decode)                                              \
    UNIT(storage_decode)                                      \
    UNIT(workload)                                            \
    UNIT(intern)                                              \
    UNIT(residency)                                           \
    UNIT(informer)                                            \
    UNIT(factory)                                             \
    UNIT(leader)                                              \
    UNIT(recorder)                                            \
    UNIT(metrics)                                             \
    UNIT(workqueue)                                           \
    UNIT(pin)                                                 \
    UNIT(localvolumes)                                        \
    /* kube/serving: what both secure ports share */          \
    UNIT(httpreq)                                             \
    UNIT(query)                                               \
    UNIT(healthz)                                             \
    UNIT(authn)                                               \
    UNIT(exchange)                                            \
    UNIT(serving_cache)                                       \
    UNIT(certs)                                               \
    UNIT(authsource)                                          \
    UNIT(pool)                                                \
    UNIT(delegate)                                            \
    INTEGRATION(client_integration)                           \
    INTEGRATION(informer_integration)                         \
    INTEGRATION(leader_integration)                           \
    INTEGRATION(recorder_integration)                         \
    INTEGRATION(pin_integration)                              \
    /* emulator: the API emulator itself */                   \
    INTEGRATION(emulator)                                     \
    INTEGRATION(emulator_rbac)                                \
    INTEGRATION(emulator_h2)                                  \
    INTEGRATION(emulator_kubectl_tables)                      \
    INTEGRATION(emulator_kubectl_writes)                      \
    /* framework: extension points, configuration */          \
    UNIT(framework)                                           \
    UNIT(sched_config)                                        \
    UNIT(sched_options)                                       \
    UNIT(extender_config)                                     \
    /* plugins: one group per plugin, tables from upstream */ \
    UNIT(plugin_priority_sort)                                \
    UNIT(plugin_scheduling_gates)                             \
    UNIT(plugin_node_unschedulable)                           \
    UNIT(plugin_node_name)                                    \
    UNIT(plugin_taint_toleration)                             \
    UNIT(plugin_node_ports)                                   \
    UNIT(plugin_node_affinity)                                \
    UNIT(plugin_node_resources_fit)                           \
    UNIT(plugin_node_resources_balanced_allocation)           \
    UNIT(plugin_image_locality)                               \
    UNIT(plugin_default_binder)                               \
    UNIT(plugin_pod_topology_spread)                          \
    UNIT(plugin_inter_pod_affinity)                           \
    UNIT(plugin_default_profile)                              \
    UNIT(plugin_volume_binding)                               \
    UNIT(plugin_volume_restrictions)                          \
    UNIT(plugin_volume_zone)                                  \
    UNIT(plugin_node_volume_limits)                           \
    UNIT(plugin_non_csi_limits)                               \
    UNIT(plugin_default_preemption)                           \
    UNIT(plugin_stickyvm)                                     \
    /* scheduler: queue, cache, the daemon */                 \
    UNIT(queue)                                               \
    UNIT(cache)                                               \
    UNIT(node_tree)                                           \
    UNIT(cache_debugger)                                      \
    UNIT(binders)                                             \
    UNIT(pins_status)                                         \
    UNIT(launcher_index)                                      \
    INTEGRATION(scheduler_integration)                        \
    INTEGRATION(scheduler_secure_port)                        \
    INTEGRATION(fence_integration)                            \
    INTEGRATION(stickyvm_integration)                         \
    INTEGRATION(pins_nodeloss_integration)                    \
    INTEGRATION(pin_ordering_integration)                     \
    INTEGRATION(topology_integration)                         \
    INTEGRATION(volumes_preemption_integration)               \
    INTEGRATION(cli_integration)                              \
    INTEGRATION(feature_gates_integration)                    \
    INTEGRATION(extender_integration)                         \
    /* apiserver: stickyvm-apiserver */                       \
    UNIT(apiserver_request)                                   \
    UNIT(apiserver_status)                                    \
    UNIT(apiserver_options)                                   \
    UNIT(apiserver_metrics)                                   \
    UNIT(apiserver_pin)                                       \
    UNIT(apiserver_vmpins)                                    \
    INTEGRATION(apiserver_integration)                        \
    UNIT(kubectl_plugin)                                      \
    INTEGRATION(kubectl_plugin_integration)                   \
    INTEGRATION(kubectl_evacuate_integration)                 \
    /* both secure ports under hostile clients */             \
    INTEGRATION(server_hardening)                             \
    /* a new group goes in the block of its subsystem */
