// SPDX-License-Identifier: Apache-2.0
// The HBM suite (hbm_suite.h) on the full stack: 8 channels = 16 pseudo-channels and ports, the
// default 16 + 16 queues, adaptive page, 2.0 Gb/s, with all-bank and with per-bank refresh (the
// bench's two models); random traffic spreads over every port. Long tier (`make test-long`).
#include "Vhbm_stack.h"
#include "Vhbm_stack_pb.h"
#include "hbm_suite.h"

namespace tpu {
namespace {

struct HbmStack {
  using Model = Vhbm_stack;
  static constexpr const char* kName = "hbm_stack";
  static tb::hbm::AddressMap Map() { return {8, 16, 5, 0}; }
  static hbm::Timing Timing() { return hbm::Timing::Preset2000(); }
  static constexpr bool kPerBank = false;
  static constexpr int kAgeCap = 1024;
};
struct HbmStackPb {
  using Model = Vhbm_stack_pb;
  static constexpr const char* kName = "hbm_stack_pb";
  static tb::hbm::AddressMap Map() { return {8, 16, 5, 0}; }
  static hbm::Timing Timing() { return hbm::Timing::Preset2000(); }
  static constexpr bool kPerBank = true;
  static constexpr int kAgeCap = 1024;
};

using StackConfigs = ::testing::Types<HbmStack, HbmStackPb>;

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Stack, HbmTest, StackConfigs, HbmConfigNames);

}  // namespace tpu
