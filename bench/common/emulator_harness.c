/*
 * bench/common/emulator_harness.c - links the test harness (tests/harness.c,
 * which starts the API emulator) into every benchmark program: CMake builds
 * each benchmark from its own file plus every file of bench/common, with
 * tests/ on the include path. Benchmarks include "harness.h" as tests do.
 */
#include "harness.c"
