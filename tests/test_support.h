// SPDX-License-Identifier: Apache-2.0
// Per-test seeds and wave options for the GoogleTest suites (see test_main.cpp for the flags).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tpu/tb/rng.h"
#include "tpu/tb/sim_ctrl.h"

namespace tpu::test {

// The current test's seed, derived from the run seed and the test's name, and printed with the
// command line that reproduces it.
uint64_t TestSeed();

// waves/<Suite>_<Test>.fst when the run was given --trace (empty path otherwise).
tb::TraceOptions TestTrace();

// Number of random vectors for a test: `base`, scaled by TPU_TEST_SCALE (default 1).
uint64_t Scaled(uint64_t base);

}  // namespace tpu::test
