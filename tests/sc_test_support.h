// SPDX-License-Identifier: Apache-2.0
// What a SystemC test binary needs besides GoogleTest (hbm_sc_test, accel_sc_test): include it
// once, in the binary's one test file.
#pragma once

#include <cstdint>

// libsystemc.so defines main(), which calls sc_main(); this binary uses GoogleTest's main()
// (test_main.cpp) and calls sc_start itself, so sc_main only satisfies the library's reference.
int sc_main(int, char**) {
  return 0;
}

// test_support.h is not included: it includes verilated.h, which after <systemc> assumes a
// SystemC build (VM_SC=1) and would not compile (nor match verilated_rt, built with VM_SC=0).
namespace tpu::test {
uint64_t TestSeed();  // test_main.cpp: the test's seed, printed with how to reproduce it
}  // namespace tpu::test
