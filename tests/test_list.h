/*
 * tests/test_list.h - every test group of the project, in one list
 * (libuv style). A UNIT group is pure and fast; an INTEGRATION group starts
 * the API emulator (tests/harness.h). Each group NAME is a function
 * `int test_group_NAME(void)` that runs a cmocka group and returns the
 * number of failures. CMake reads this file and registers one ctest per
 * group, so adding a line here is all it takes.
 */
#define TEST_LIST(UNIT, INTEGRATION) \
    UNIT(errors)                     \
    UNIT(buf)                        \
    UNIT(containers)                 \
    UNIT(tls)                        \
    UNIT(leader)                     \
    UNIT(recorder)                   \
    UNIT(informer)                   \
    UNIT(config)                     \
    UNIT(client)                     \
    UNIT(ratelimit)                  \
    UNIT(quantity)                   \
    UNIT(selector)                   \
    UNIT(decode)                     \
    UNIT(httpreq)                    \
    UNIT(apiserver_request)          \
    UNIT(apiserver_status)           \
    UNIT(apiserver_authn)            \
    UNIT(framework)                  \
    INTEGRATION(leader_integration)  \
    INTEGRATION(recorder_integration) \
    UNIT(sched_config)               \
    INTEGRATION(informer_integration) \
    INTEGRATION(emulator)            \
    INTEGRATION(apiserver_integration) \
    INTEGRATION(server_hardening)   \
    UNIT(apiserver_exchange)         \
    UNIT(apiserver_misc)             \
    INTEGRATION(client_integration)  \
    UNIT(pin)                        \
    INTEGRATION(pin_integration)     \
    UNIT(plugin_priority_sort)       \
    UNIT(plugin_scheduling_gates)    \
    UNIT(plugin_node_unschedulable)  \
    UNIT(plugin_node_name)           \
    UNIT(plugin_taint_toleration)    \
    UNIT(plugin_node_ports)          \
    UNIT(plugin_stickyvm)            \
    UNIT(queue)                      \
    UNIT(cache)                      \
    UNIT(metrics)              \
    INTEGRATION(scheduler_integration) \
    UNIT(plugin_node_affinity)       \
    INTEGRATION(stickyvm_integration) \
    UNIT(plugin_node_resources_fit)  \
    UNIT(plugin_node_resources_balanced_allocation) \
    UNIT(plugin_image_locality)      \
    UNIT(plugin_default_binder)      \
    UNIT(plugin_pod_topology_spread) \
    UNIT(plugin_inter_pod_affinity) \
    UNIT(plugin_default_profile)     \
    UNIT(plugin_volume_binding)      \
    UNIT(plugin_volume_restrictions) \
    UNIT(plugin_volume_zone)         \
    UNIT(plugin_node_volume_limits)  \
    UNIT(plugin_non_csi_limits)      \
    UNIT(storage_decode)             \
    UNIT(plugin_default_preemption)  \
    INTEGRATION(volumes_preemption_integration) \
    UNIT(intern)                     \
    INTEGRATION(topology_integration) \
    INTEGRATION(emulator_rbac)       \
    INTEGRATION(emulator_h2)         \
    UNIT(workload)                   \
    /* add groups above this line */
