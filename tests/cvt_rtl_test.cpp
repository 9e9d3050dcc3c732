// SPDX-License-Identifier: Apache-2.0
// The fp32->bf16 converter (with optional relu) against the golden model, both modes. The
// all-2^32 sweep is `make verify-exhaustive`.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "Vcvt.h"
#include "test_support.h"
#include "tpu/numerics.h"
#include "tpu/tb/fcov.h"
#include "tpu/tb/mac_harness.h"
#include "tpu/tb/mac_vectors.h"

namespace tpu {
namespace {

using num::Mode;

struct CvtCase {
  Mode mode;
  bool relu;
};

class ConverterTest : public ::testing::TestWithParam<CvtCase> {
 protected:
  ConverterTest() : sim_("cvt", 1, test::TestTrace()) {}
  void TearDown() override { EXPECT_FALSE(sim_.AssertionFailed()) << "an RTL assertion failed"; }
  void Check(tb::Scoreboard& sb, uint64_t i, uint32_t x) {
    const auto [mode, relu] = GetParam();
    const uint16_t r = tb::EvalCvt(sim_, x, relu, mode);
    sb.Check(i, num::FormatFp32(x), num::StoreBf16(x, relu, mode), r, /*fp32=*/false);
    // The fp32 activation output is relu(x) (or x).
    if (sim_.dut().act_o != (relu ? num::Relu(x) : x)) {
      ADD_FAILURE() << "act_o for " << num::FormatFp32(x) << ": "
                    << num::FormatFp32(sim_.dut().act_o);
    }
  }
  tb::SimCtrl<Vcvt> sim_;
};

TEST_P(ConverterTest, StructuredAndRandom) {
  tb::Rng rng(test::TestSeed());
  tb::Scoreboard sb("converter");
  uint64_t i = 0;
  tb::ConverterStructured(rng, [&](uint32_t x) { Check(sb, i++, x); });
  for (uint32_t x : tb::Fp32Specials()) Check(sb, i++, x);
  for (uint64_t k = 0; k < test::Scaled(4'000'000); ++k) Check(sb, i++, rng.U32());
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

TEST(ConverterDirectedTest, NamedCases) {
  tb::SimCtrl<Vcvt> sim("cvt", 1, test::TestTrace());
  EXPECT_EQ(tb::EvalCvt(sim, 0x007FFFFF, false, Mode::kIeee), 0x0080);
  EXPECT_EQ(tb::EvalCvt(sim, 0x007FFFFF, false, Mode::kFtz), 0x0000);
  EXPECT_EQ(tb::EvalCvt(sim, 0x7F7FFFFF, false, Mode::kIeee), 0x7F80);
  EXPECT_EQ(tb::EvalCvt(sim, 0xFF800001, false, Mode::kIeee), 0x7FC0);
  EXPECT_EQ(tb::EvalCvt(sim, 0xFF800001, true, Mode::kIeee), 0x7FC0);
  EXPECT_EQ(tb::EvalCvt(sim, 0x80000000, true, Mode::kIeee), 0x0000);  // relu(-0) = +0
  EXPECT_EQ(tb::EvalCvt(sim, 0xC0000000, true, Mode::kIeee), 0x0000);
  EXPECT_EQ(tb::EvalCvt(sim, 0xC0000000, false, Mode::kIeee), 0xC000);
  EXPECT_EQ(tb::EvalCvt(sim, 0x3F818000, false, Mode::kIeee), 0x3F82);
}

INSTANTIATE_TEST_SUITE_P(Cases, ConverterTest,
                         ::testing::Values(CvtCase{Mode::kIeee, false}, CvtCase{Mode::kIeee, true},
                                           CvtCase{Mode::kFtz, false}, CvtCase{Mode::kFtz, true}),
                         [](const auto& info) {
                           return std::string(num::ModeName(info.param.mode)) +
                                  (info.param.relu ? "_relu" : "");
                         });

// Functional coverage (tpu/tb/fcov.h, cvt.round.*, cvt.relu): every rounding case of both modes
// and every relu input class on named inputs, so that each bin is hit whatever the seed. The RTL
// must give the expected bits and the golden model's side channel the named case.
TEST(ConverterRoundingCaseTest, EveryCaseInBothModes) {
  using num::RoundCase;
  struct Case {
    uint32_t x;
    bool relu;
    Mode mode;
    uint16_t want;
    RoundCase how;
  };
  const Case cases[] = {
      {0xFF800000, false, Mode::kIeee, 0xFF80, RoundCase::kSpecial},  // -inf
      {0x3F800000, false, Mode::kIeee, 0x3F80, RoundCase::kExact},
      {0x3F801234, false, Mode::kIeee, 0x3F80, RoundCase::kDown},
      {0xBF80C000, false, Mode::kIeee, 0xBF81, RoundCase::kUp},
      {0x3F808000, false, Mode::kIeee, 0x3F80, RoundCase::kTieEvenDown},
      {0x3F818000, false, Mode::kIeee, 0x3F82, RoundCase::kTieEvenUp},
      {0x7F7FFFFF, false, Mode::kIeee, 0x7F80, RoundCase::kOverflow},
      {0x00012345, false, Mode::kIeee, 0x0001, RoundCase::kUnderflowSubnormal},
      {0x80008000, false, Mode::kIeee, 0x8000, RoundCase::kUnderflowZero},  // a tie, to -0
      {0x7FC00001, true, Mode::kFtz, 0x7FC0, RoundCase::kSpecial},          // relu(NaN)
      {0x80000000, true, Mode::kFtz, 0x0000, RoundCase::kExact},            // relu(-0) = +0
      {0x00000000, true, Mode::kFtz, 0x0000, RoundCase::kExact},            // relu(+0) = +0
      {0xC0000000, true, Mode::kFtz, 0x0000, RoundCase::kExact},            // relu(-2) = +0
      {0x3F801234, true, Mode::kFtz, 0x3F80, RoundCase::kDown},
      {0x3F80C000, false, Mode::kFtz, 0x3F81, RoundCase::kUp},
      {0x3F808000, false, Mode::kFtz, 0x3F80, RoundCase::kTieEvenDown},
      {0x3F818000, false, Mode::kFtz, 0x3F82, RoundCase::kTieEvenUp},
      {0xFF7FFFFF, false, Mode::kFtz, 0xFF80, RoundCase::kOverflow},
      {0x007FFFFF, false, Mode::kFtz, 0x0000, RoundCase::kFtzFlush},  // 0x0080 in IEEE mode
  };
  tb::SimCtrl<Vcvt> sim("cvt", 1, test::TestTrace());
  int seen[2][num::kNumRoundCases] = {};
  for (const Case& k : cases) {
    SCOPED_TRACE(
        fmt::format("{}{} {}", num::FormatFp32(k.x), k.relu ? " relu" : "", num::ModeName(k.mode)));
    RoundCase how = RoundCase::kSpecial;
    EXPECT_EQ(num::Fp32ToBf16(k.relu ? num::Relu(k.x) : k.x, k.mode, &how), k.want);
    EXPECT_STREQ(num::RoundCaseName(how), num::RoundCaseName(k.how));
    EXPECT_EQ(tb::EvalCvt(sim, k.x, k.relu, k.mode), k.want);
    ++seen[tb::fcov::ModeIndex(k.mode)][static_cast<int>(k.how)];
  }
  EXPECT_EQ(tb::EvalCvt(sim, 0x40490FDB, true, Mode::kIeee), 0x4049);  // relu(pi): kept
  for (int m = 0; m < 2; ++m) {
    const tb::fcov::Group& g = *tb::fcov::Groups().cvt_round[m];
    for (const std::string& bin : g.bins()) {
      bool listed = false;
      for (int h = 0; h < num::kNumRoundCases; ++h) {
        listed = listed || (seen[m][h] > 0 && bin == num::RoundCaseName(RoundCase(h)));
      }
      EXPECT_TRUE(listed) << g.name() << " / " << bin << " has no directed input";
    }
  }
  EXPECT_FALSE(sim.AssertionFailed());
}

}  // namespace
}  // namespace tpu
