// SPDX-License-Identifier: Apache-2.0
// Long tier (`make test-long`): the matrix-unit suite on the full-size arrays, 16×16, 32×32,
// 64×64 and 128×128 with 4096-row accumulators (the configurations `make bench` measures; the
// last two are built hierarchically, one model per 16×16 tile), and the invariance of results
// over 4×4 … 128×128 on larger GEMMs.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "Vmxu_b128.h"
#include "Vmxu_b16.h"
#include "Vmxu_b32.h"
#include "Vmxu_b4.h"
#include "Vmxu_b64.h"
#include "Vmxu_b8.h"
#include "mxu_suite.h"

namespace tpu {
namespace {

template <class V, int N>
struct Square {
  using Model = V;
  static constexpr const char* kName = N == 4    ? "mxu_b4"
                                       : N == 8  ? "mxu_b8"
                                       : N == 16 ? "mxu_b16"
                                       : N == 32 ? "mxu_b32"
                                       : N == 64 ? "mxu_b64"
                                                 : "mxu_b128";
  static tb::ArrayConfig Config() { return {N, N, 1, 4096}; }
};
using Mxu16 = Square<Vmxu_b16, 16>;
using Mxu32 = Square<Vmxu_b32, 32>;
using Mxu64 = Square<Vmxu_b64, 64>;
using Mxu128 = Square<Vmxu_b128, 128>;

template <class Cfg>
std::vector<uint32_t> RunOn(const gemm::Shape& s, const tb::GemmOperands& g, num::Mode mode,
                            const tb::Stimulus& st) {
  tb::SimCtrl<typename Cfg::Model> sim(Cfg::kName, 1ull << 34);
  sim.Reset();
  tb::MxuRunner<typename Cfg::Model> runner(sim, Cfg::Config());
  const auto plan = tb::PlanGemm(s, Cfg::Config(), tb::Init::kPreload);
  auto r = runner.Run(plan, g.a, g.b, g.c0, mode, st).c;
  EXPECT_FALSE(sim.AssertionFailed()) << Cfg::kName;
  return r;
}

// The same GEMMs on every square array give identical bits, equal to the golden model's.
TEST(MxuLongInvarianceTest, SameBitsOnEveryArray) {
  tb::Rng rng(test::TestSeed());
  for (const gemm::Shape s : {gemm::Shape{131, 257, 97}, gemm::Shape{200, 64, 300}}) {
    const auto g = tb::RandomGemm(rng, s, tb::GemmData::kSpecials, true);
    for (const num::Mode mode : {num::Mode::kIeee, num::Mode::kFtz}) {
      SCOPED_TRACE(
          fmt::format("{} {}", tb::ShapeName(s), mode == num::Mode::kFtz ? "FTZ" : "IEEE"));
      const auto golden = gemm::Gemm(s, g.a, g.b, g.c0, mode);
      const auto st = tb::Stimulus::Random(0.1, rng.Next());
      test::ExpectBitsEqual(s, golden, RunOn<Square<Vmxu_b4, 4>>(s, g, mode, st), "4x4");
      test::ExpectBitsEqual(s, golden, RunOn<Square<Vmxu_b8, 8>>(s, g, mode, st), "8x8");
      test::ExpectBitsEqual(s, golden, RunOn<Mxu16>(s, g, mode, st), "16x16");
      test::ExpectBitsEqual(s, golden, RunOn<Mxu32>(s, g, mode, st), "32x32");
      test::ExpectBitsEqual(s, golden, RunOn<Mxu64>(s, g, mode, st), "64x64");
      test::ExpectBitsEqual(s, golden, RunOn<Mxu128>(s, g, mode, st), "128x128");
    }
  }
}

}  // namespace

namespace test {
using LargeConfigs = ::testing::Types<Mxu16, Mxu32, Mxu64, Mxu128>;
INSTANTIATE_TYPED_TEST_SUITE_P(Large, MxuTest, LargeConfigs);
}  // namespace test
}  // namespace tpu
