// SPDX-License-Identifier: Apache-2.0
// The fp32->bf16 converter (with optional relu) against the golden model, both modes. The
// all-2^32 sweep is `make verify-exhaustive`.
#include <gtest/gtest.h>

#include <cstdint>

#include "Vcvt.h"
#include "test_support.h"
#include "tpu/numerics.h"
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

}  // namespace
}  // namespace tpu
