// SPDX-License-Identifier: Apache-2.0
// The golden numerics model against the host's independent oracles (fast tier), and the
// contract's directed cases. The 2^32 sweeps of the same comparisons are `make verify-exhaustive`.
#include "tpu/numerics.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "test_support.h"
#include "tpu/tb/mac_harness.h"
#include "tpu/tb/mac_vectors.h"
#include "tpu/tb/oracles.h"

namespace tpu {
namespace {

using num::Mode;
using tb::MacVector;
constexpr Mode kModes[] = {Mode::kIeee, Mode::kFtz};

class GoldenVsHostTest : public ::testing::TestWithParam<Mode> {
 protected:
  // Golden vs host for one vector; NaN-ness against the host, and canonical NaN bits always.
  void Check(tb::Scoreboard& sb, uint64_t i, const MacVector& v) {
    const uint32_t g = num::Mac(v.a, v.b, v.c, GetParam());
    const uint32_t h = tb::HostMac(v.a, v.b, v.c, GetParam());
    const uint32_t expect = num::IsNaN32(h) ? num::kFp32CanonicalNaN : h;
    sb.Check(i, tb::DescribeMac(v, GetParam()), expect, g);
  }
};

TEST_P(GoldenVsHostTest, RandomTriples) {
  tb::Rng rng(test::TestSeed());
  tb::Scoreboard sb("golden MAC vs fmaf");
  const uint64_t n = test::Scaled(10'000'000);
  const tb::CPolicy policies[] = {tb::CPolicy::kZero, tb::CPolicy::kUniform, tb::CPolicy::kMatter,
                                  tb::CPolicy::kCancel};
  for (uint64_t i = 0; i < n; ++i) {
    const uint16_t a = rng.U16();
    const uint16_t b = rng.U16();
    Check(sb, i, {a, b, tb::DrawC(rng, a, b, policies[i % 4])});
  }
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

TEST_P(GoldenVsHostTest, DirectedFamilies) {
  tb::Rng rng(test::TestSeed());
  tb::Scoreboard sb("golden MAC vs fmaf");
  uint64_t i = 0;
  const auto emit = [&](const MacVector& v) { Check(sb, i++, v); };
  tb::CornerCross(emit);
  tb::ExponentSweep(rng, 200, emit);
  tb::Cancellations(rng, 20000, emit);
  tb::RoundingTies(rng, 20000, emit);
  tb::SubnormalBoundary(rng, 20000, emit);
  tb::FusedDirected(emit);
  EXPECT_GT(sb.checked(), 100000u);
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

TEST_P(GoldenVsHostTest, ConverterStructuredAndRandom) {
  tb::Rng rng(test::TestSeed());
  tb::Scoreboard sb("golden fp32->bf16 vs Eigen::bfloat16");
  uint64_t i = 0;
  const auto check = [&](uint32_t x) {
    const uint16_t g = num::Fp32ToBf16(x, GetParam());
    const uint16_t h = tb::HostFp32ToBf16(x, GetParam());
    const uint16_t expect = num::IsNaN16(h) ? num::kBf16CanonicalNaN : h;
    sb.Check(i++, num::FormatFp32(x), expect, g, /*fp32=*/false);
  };
  tb::ConverterStructured(rng, check);
  for (uint64_t k = 0; k < test::Scaled(2'000'000); ++k) check(rng.U32());
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

INSTANTIATE_TEST_SUITE_P(Modes, GoldenVsHostTest, ::testing::ValuesIn(kModes),
                         [](const auto& info) { return std::string(num::ModeName(info.param)); });

// The contract's named cases, with their expected bits written out.
TEST(GoldenDirectedTest, FusedNotUnfused) {
  EXPECT_EQ(num::Mac(0x1A01, 0x1A81, 0x01000000, Mode::kIeee), 0x01000001u);
  EXPECT_EQ(num::Mac(0x5F80, 0x5F80, 0xFF7FFFFF, Mode::kIeee), 0x73800000u);  // 2^104
  EXPECT_EQ(num::Mac(0x1C80, 0x1C80, 0x00800000, Mode::kFtz), 0x00800200u);
  EXPECT_EQ(num::Mac(0x1D81, 0x9D83, 0x00802101, Mode::kFtz), 0x00800000u);
  EXPECT_EQ(num::Mac(0x3940, 0x3940, 0xBF800000, Mode::kIeee), 0xBF7FFFFFu);
}

TEST(GoldenDirectedTest, ZeroSigns) {
  EXPECT_EQ(num::Mac(0x0000, 0xC040, 0x80000000, Mode::kIeee), 0x80000000u);  // (+0)(-3)+(-0)
  EXPECT_EQ(num::Mac(0x0000, 0xC040, 0x00000000, Mode::kIeee), 0x00000000u);
  EXPECT_EQ(num::Mac(0x8000, 0x3F80, 0x80000000, Mode::kIeee), 0x80000000u);
  EXPECT_EQ(num::Mac(0x3F80, 0x3F80, 0xBF800000, Mode::kIeee), 0x00000000u);  // exact cancel
  EXPECT_EQ(num::Mac(0x3F80, 0x3F80, 0xBF800000, Mode::kFtz), 0x00000000u);
  EXPECT_EQ(num::Mac(0x8001, 0x0001, 0x00000000, Mode::kIeee), 0x80000000u);  // rounds to -0
  EXPECT_EQ(num::Mac(0x8001, 0x0001, 0x00000000, Mode::kFtz), 0x00000000u);   // -0 · +0 + +0
  // x + (-0) = x for every x, zeros included (the ragged-tile padding rule).
  for (uint32_t c : {0x00000000u, 0x80000000u, 0x3F800000u, 0x00000001u}) {
    EXPECT_EQ(num::Mac(0x8000, 0x0000, c, Mode::kIeee), c) << num::FormatFp32(c);
  }
}

TEST(GoldenDirectedTest, NaNsAreCanonical) {
  EXPECT_EQ(num::Mac(0x7F80, 0x0000, 0, Mode::kIeee), num::kFp32CanonicalNaN);  // inf·0
  EXPECT_EQ(num::Mac(0x7F80, 0x0001, 0, Mode::kFtz), num::kFp32CanonicalNaN);   // inf·daz(sub)
  EXPECT_NE(num::Mac(0x7F80, 0x0001, 0, Mode::kIeee), num::kFp32CanonicalNaN);  // inf·sub = inf
  EXPECT_EQ(num::Mac(0x7F80, 0x3F80, 0xFF800000, Mode::kIeee), num::kFp32CanonicalNaN);
  EXPECT_EQ(num::Mac(0xFFC1, 0x3F80, 0, Mode::kIeee), num::kFp32CanonicalNaN);
  EXPECT_EQ(num::Mac(0x3F80, 0x3F80, 0xFFFFFFFF, Mode::kIeee), num::kFp32CanonicalNaN);
  EXPECT_EQ(num::Fp32ToBf16(0xFF800001, Mode::kIeee), num::kBf16CanonicalNaN);
}

TEST(GoldenDirectedTest, ConversionAndRelu) {
  EXPECT_EQ(num::Fp32ToBf16(0x007FFFFF, Mode::kIeee), 0x0080);
  EXPECT_EQ(num::Fp32ToBf16(0x007FFFFF, Mode::kFtz), 0x0000);
  EXPECT_EQ(num::Fp32ToBf16(0x807FFFFF, Mode::kFtz), 0x8000);
  EXPECT_EQ(num::Fp32ToBf16(0x7F7FFFFF, Mode::kIeee), 0x7F80);  // rounds to inf
  EXPECT_EQ(num::Fp32ToBf16(0x3F808000, Mode::kIeee), 0x3F80);  // tie to even (down)
  EXPECT_EQ(num::Fp32ToBf16(0x3F818000, Mode::kIeee), 0x3F82);  // tie to even (up)
  EXPECT_EQ(num::Relu(0x80000000), 0x00000000u);
  EXPECT_EQ(num::Relu(0xBF800000), 0x00000000u);
  EXPECT_EQ(num::Relu(0x3F800000), 0x3F800000u);
  EXPECT_EQ(num::Relu(0xFFC00001), num::kFp32CanonicalNaN);
  EXPECT_EQ(num::StoreBf16(0xC0000000, true, Mode::kIeee), 0x0000);
}

TEST(GoldenDirectedTest, ClassifyAndFormat) {
  EXPECT_EQ(num::Classify32(0x00000000), num::FpClass::kZero);
  EXPECT_EQ(num::Classify32(0x00000001), num::FpClass::kSubnormal);
  EXPECT_EQ(num::Classify32(0x00800000), num::FpClass::kNormal);
  EXPECT_EQ(num::Classify32(0xFF800000), num::FpClass::kInf);
  EXPECT_EQ(num::Classify32(0x7F800001), num::FpClass::kNaN);
  EXPECT_EQ(num::Classify16(0x0001), num::FpClass::kSubnormal);
  EXPECT_EQ(num::Classify16(0x7FC0), num::FpClass::kNaN);
  EXPECT_STREQ(num::FpClassName(num::FpClass::kSubnormal), "subnormal");
  EXPECT_EQ(num::FormatBf16(0x3F80), "0x3F80 (1)");
  EXPECT_EQ(num::FormatFp32(0xC0490FDB), "0xC0490FDB (-3.14159274)");
  EXPECT_EQ(num::FormatFp32(0x7FC00000), "0x7FC00000 (nan)");
  EXPECT_EQ(num::FormatFp32(0xFF800000), "0xFF800000 (-inf)");
}

}  // namespace
}  // namespace tpu
