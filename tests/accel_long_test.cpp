// SPDX-License-Identifier: Apache-2.0
// The accelerator suite of accel_suite.h (random workloads bit-exact against the golden model
// with zero HBM timing violations and consistent counters; every error code with the golden
// model's code and pc and a recovery; legal edge programs) on the default configuration: a 16x16
// array with the default buffers and queues (act 2048, wgt 2048, acc 4096, QueueDepth 32) and one
// HBM2 channel, the engine tpusim runs as 16x16_1ch (rtl/builds.json), with larger shapes and
// more iterations; and the same suite on the TPU-class machine, the 128x128 array on the whole
// 8-channel stack (the engine 128x128_8ch, a hierarchical build; the DMA moves 8 beats a cycle
// over 16 ports), with GEMMs over several 128-wide tiles; and the same suite gate by gate, on the
// Yosys netlist of the synthesis configuration accel_4x4 (gl_accel_4x4). Long tier only
// (`make test-long`).
#include "Vaccel_128x128_8ch.h"
#include "Vaccel_16x16_1ch.h"
#include "Vgl_accel_4x4.h"
#include "accel_suite.h"

namespace tpu {
namespace accel_suite {
namespace {

struct Accel16x16 : Build<Accel16x16, Vaccel_16x16_1ch> {
  static constexpr const char* kName = "accel_16x16_1ch";
  static Config MakeConfig() { return accel::ConfigFromName("16x16_1ch"); }
  // GEMMs up to 300 x 200 x 200 (several K- and N-tiles, M blocks), convolutions up to 16x16
  // inputs with 24 channels, MLPs with hidden layers up to 96.
  static Limits TestLimits() { return {60, 300, 200, 200, 16, 24, 96}; }
};

struct Accel128x128 : Build<Accel128x128, Vaccel_128x128_8ch, 3> {
  static constexpr const char* kName = "accel_128x128_8ch";
  static Config MakeConfig() { return accel::ConfigFromName("128x128_8ch"); }
  // One round of every kind (about 1,000 cycles/s here): GEMMs up to 300 x 300 x 300 (K- and
  // N-tiles of 128 with ragged edges), convolutions up to 12x12 inputs with 16 channels, MLPs
  // with hidden layers up to 160.
  static Limits TestLimits() { return {1, 300, 300, 300, 12, 16, 160}; }
};

// Synthesis checked by simulation: the accelerator's Yosys netlist (`make synth`'s accel_4x4: a
// 4x4 array, 16-row buffers and accumulators, dispatch queues of 2, one HBM channel with shallow
// queues), Verilated gate by gate, runs the whole suite against the golden model, whose results
// the RTL's equal bit for bit (accel_test). Issue 13 found a Yosys mis-sizing that only a
// warning revealed; a netlist that computes, stalls or reports differently fails here. The
// on-chip comparison is skipped (a netlist has no memories to read: OnChip::missing).
struct GateLevel4x4 : Build<GateLevel4x4, Vgl_accel_4x4, 0> {
  static constexpr const char* kName = "gl_accel_4x4";
  static Limits TestLimits() { return {2, 40, 24, 24, 6, 6, 16}; }
};

using DefaultConfig = ::testing::Types<Accel16x16, Accel128x128, GateLevel4x4>;

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Default, AccelTest, DefaultConfig, ConfigNames);

}  // namespace accel_suite
}  // namespace tpu
