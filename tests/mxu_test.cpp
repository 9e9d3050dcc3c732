// SPDX-License-Identifier: Apache-2.0
// The matrix unit (tpu_mxu) against the golden GEMM, bit for bit: the numerics contract's
// directed zero-sign cases, random shapes and data (special values included) with random gaps
// on every port, accumulation across calls, weight reuse, accumulator hazards, illegal
// commands, the performance counters, and the invariance of results across array shapes.
// Fast tier: 4×4, 8×16, 16×4 (P = 3), 1×2 and 3×5 (P = 2) arrays with shallow accumulators.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "Vmxu_16x4_p3.h"
#include "Vmxu_1x2.h"
#include "Vmxu_3x5_p2.h"
#include "Vmxu_4x4.h"
#include "Vmxu_8x16.h"
#include "mxu_suite.h"

namespace tpu {
namespace {

struct Mxu4x4 {
  using Model = Vmxu_4x4;
  static constexpr const char* kName = "mxu_4x4";
  static tb::ArrayConfig Config() { return {4, 4, 1, 64}; }
};
struct Mxu8x16 {
  using Model = Vmxu_8x16;
  static constexpr const char* kName = "mxu_8x16";
  static tb::ArrayConfig Config() { return {8, 16, 1, 128}; }
};
// Odd sizes: a single row (1-bit row and kv fields, no row skew), and nothing a power of two.
struct Mxu1x2 {
  using Model = Vmxu_1x2;
  static constexpr const char* kName = "mxu_1x2";
  static tb::ArrayConfig Config() { return {1, 2, 1, 10}; }
};
struct Mxu3x5P2 {
  using Model = Vmxu_3x5_p2;
  static constexpr const char* kName = "mxu_3x5_p2";
  static tb::ArrayConfig Config() { return {3, 5, 2, 24}; }
};
struct Mxu16x4P3 {
  using Model = Vmxu_16x4_p3;
  static constexpr const char* kName = "mxu_16x4_p3";
  static tb::ArrayConfig Config() { return {16, 4, 3, 64}; }
};

}  // namespace

namespace test {
using SmallConfigs = ::testing::Types<Mxu4x4, Mxu8x16, Mxu16x4P3, Mxu1x2, Mxu3x5P2>;
INSTANTIATE_TYPED_TEST_SUITE_P(Small, MxuTest, SmallConfigs);
}  // namespace test
}  // namespace tpu

namespace tpu {
namespace {

// The same GEMM on every array shape of this suite gives identical bits (the numerics
// contract's order of accumulation makes the result independent of the array).
TEST(MxuInvarianceTest, SameBitsOnEveryShape) {
  tb::Rng rng(test::TestSeed());
  const gemm::Shape s{37, 45, 41};
  const auto g = tb::RandomGemm(rng, s, tb::GemmData::kSpecials, true);
  for (const num::Mode mode : {num::Mode::kIeee, num::Mode::kFtz}) {
    const auto golden = gemm::Gemm(s, g.a, g.b, g.c0, mode);
    const auto run = [&](auto tag) {
      using Cfg = decltype(tag);
      tb::SimCtrl<typename Cfg::Model> sim(Cfg::kName, 10'000'000);
      sim.Reset();
      tb::MxuRunner<typename Cfg::Model> runner(sim, Cfg::Config());
      const auto plan = tb::PlanGemm(s, Cfg::Config(), tb::Init::kPreload);
      auto r = runner.Run(plan, g.a, g.b, g.c0, mode).c;
      EXPECT_FALSE(sim.AssertionFailed());
      return r;
    };
    const auto r1 = run(Mxu4x4{});
    const auto r2 = run(Mxu8x16{});
    const auto r3 = run(Mxu16x4P3{});
    test::ExpectBitsEqual(s, golden, r1, "4x4 vs golden");
    test::ExpectBitsEqual(s, r1, r2, "8x16 vs 4x4");
    test::ExpectBitsEqual(s, r1, r3, "16x4 P=3 vs 4x4");
  }
}

}  // namespace
}  // namespace tpu
