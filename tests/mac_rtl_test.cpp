// SPDX-License-Identifier: Apache-2.0
// The MAC RTL against the golden model, bit for bit, in both modes: the TestFloat-style directed
// families, the contract's named cases, random triples, and the pipelined configurations checked
// in order on the same vectors. The 2^32 sweeps are `make verify-exhaustive`.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "Vmac_p0.h"
#include "Vmac_p1.h"
#include "Vmac_p2.h"
#include "Vmac_p3.h"
#include "test_support.h"
#include "tpu/numerics.h"
#include "tpu/tb/fcov.h"
#include "tpu/tb/mac_harness.h"
#include "tpu/tb/mac_vectors.h"

namespace tpu {
namespace {

using num::Mode;
using tb::MacVector;
constexpr Mode kModes[] = {Mode::kIeee, Mode::kFtz};

class MacTest : public ::testing::TestWithParam<Mode> {
 protected:
  MacTest() : sim_("mac_p0", 1, test::TestTrace()) {}
  void TearDown() override { EXPECT_FALSE(sim_.AssertionFailed()) << "an RTL assertion failed"; }

  uint32_t Run(const MacVector& v) { return tb::EvalMac(sim_, v.a, v.b, v.c, GetParam()); }
  void Check(tb::Scoreboard& sb, uint64_t i, const MacVector& v) {
    const uint32_t r = Run(v);
    sb.Check(i, tb::DescribeMac(v, GetParam()), num::Mac(v.a, v.b, v.c, GetParam()), r);
    // Every NaN the design returns is the canonical one (also implied by the golden compare).
    if (num::IsNaN32(r)) {
      EXPECT_EQ(r, num::kFp32CanonicalNaN) << tb::DescribeMac(v, GetParam());
    }
  }
  template <class Family>
  void RunFamily(const char* what, Family family) {
    tb::Scoreboard sb(what);
    uint64_t i = 0;
    family([&](const MacVector& v) { Check(sb, i++, v); });
    EXPECT_GT(sb.checked(), 0u);
    EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
  }

  tb::SimCtrl<Vmac_p0> sim_;
};

TEST_P(MacTest, SpecialValueCrossProduct) {
  RunFamily("specials over a×b×c", [](const tb::MacEmit& e) { tb::CornerCross(e); });
}

TEST_P(MacTest, AddendExponentSweep) {
  tb::Rng rng(test::TestSeed());
  RunFamily("c exponent from pe-80 to pe+80",
            [&](const tb::MacEmit& e) { tb::ExponentSweep(rng, 400, e); });
}

TEST_P(MacTest, Cancellations) {
  tb::Rng rng(test::TestSeed());
  RunFamily("exact and near cancellation",
            [&](const tb::MacEmit& e) { tb::Cancellations(rng, 50000, e); });
}

TEST_P(MacTest, RoundingTies) {
  tb::Rng rng(test::TestSeed());
  RunFamily("ties to even and odd", [&](const tb::MacEmit& e) { tb::RoundingTies(rng, 50000, e); });
}

TEST_P(MacTest, SubnormalBoundary) {
  tb::Rng rng(test::TestSeed());
  RunFamily("results near 2^-126",
            [&](const tb::MacEmit& e) { tb::SubnormalBoundary(rng, 50000, e); });
}

TEST_P(MacTest, RandomTriples) {
  tb::Rng rng(test::TestSeed());
  tb::Scoreboard sb("random triples");
  const uint64_t n = test::Scaled(10'000'000);
  const tb::CPolicy policies[] = {tb::CPolicy::kUniform, tb::CPolicy::kMatter,
                                  tb::CPolicy::kUniform, tb::CPolicy::kCancel};
  for (uint64_t i = 0; i < n; ++i) {
    const uint16_t a = rng.U16();
    const uint16_t b = rng.U16();
    Check(sb, i, {a, b, tb::DrawC(rng, a, b, policies[i % 4])});
  }
  EXPECT_EQ(sb.checked(), n);
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

INSTANTIATE_TEST_SUITE_P(Modes, MacTest, ::testing::ValuesIn(kModes),
                         [](const auto& info) { return std::string(num::ModeName(info.param)); });

// The contract's named cases, expected bits written out, on the RTL.
TEST(MacDirectedTest, FusedNotUnfused) {
  tb::SimCtrl<Vmac_p0> sim("mac_p0", 1, test::TestTrace());
  EXPECT_EQ(tb::EvalMac(sim, 0x1A01, 0x1A81, 0x01000000, Mode::kIeee), 0x01000001u);
  EXPECT_EQ(tb::EvalMac(sim, 0x5F80, 0x5F80, 0xFF7FFFFF, Mode::kIeee), 0x73800000u);
  EXPECT_EQ(tb::EvalMac(sim, 0x1C80, 0x1C80, 0x00800000, Mode::kFtz), 0x00800200u);
  EXPECT_EQ(tb::EvalMac(sim, 0x1D81, 0x9D83, 0x00802101, Mode::kFtz), 0x00800000u);
  EXPECT_EQ(tb::EvalMac(sim, 0x8001, 0x0001, 0x00000000, Mode::kIeee), 0x80000000u);
  EXPECT_EQ(tb::EvalMac(sim, 0x0000, 0xC040, 0x80000000, Mode::kIeee), 0x80000000u);
  EXPECT_EQ(tb::EvalMac(sim, 0x3F80, 0x3F80, 0xBF800000, Mode::kIeee), 0x00000000u);
  // A product just under half an ulp of c, at the edge of the "far above" alignment, where
  // the spacing below c = -1 halves.
  EXPECT_EQ(tb::EvalMac(sim, 0x3940, 0x3940, 0xBF800000, Mode::kIeee), 0xBF7FFFFFu);
  EXPECT_EQ(tb::EvalMac(sim, 0x7F80, 0x0001, 0x00000000, Mode::kFtz), num::kFp32CanonicalNaN);
  EXPECT_EQ(tb::EvalMac(sim, 0xFFC1, 0x3F80, 0x00000000, Mode::kIeee), num::kFp32CanonicalNaN);
  EXPECT_FALSE(sim.AssertionFailed());
}

// Pipelined configurations: the same kind of vectors, streamed with random gaps, checked in
// order at the configured latency (PipeRegs cycles).
template <class M>
void RunPipelined(const char* name, unsigned latency) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  tb::SimCtrl<M> sim(name, 100'000'000, test::TestTrace());
  tb::Scoreboard sb(name);
  tb::MacPipeChecker<M> checker(sim, latency, seed ^ 1, sb);
  std::vector<MacVector> vs;
  const auto keep = [&](const MacVector& v) { vs.push_back(v); };
  tb::CornerCross(keep);
  tb::FusedDirected(keep);
  tb::Cancellations(rng, 5000, keep);
  tb::SubnormalBoundary(rng, 5000, keep);
  for (uint64_t i = 0; i < test::Scaled(1'000'000); ++i) {
    const uint16_t a = rng.U16();
    const uint16_t b = rng.U16();
    vs.push_back({a, b, tb::DrawC(rng, a, b, tb::CPolicy::kMatter)});
  }
  for (size_t i = 0; i < vs.size(); ++i) checker.Push(vs[i], rng.Bit() ? Mode::kFtz : Mode::kIeee);
  checker.Finish();
  EXPECT_EQ(checker.errors(), "");
  EXPECT_EQ(sb.checked(), vs.size());
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

TEST(MacPipelineTest, Comb) {
  RunPipelined<Vmac_p0>("mac_p0", 0);
}
TEST(MacPipelineTest, OneStage) {
  RunPipelined<Vmac_p1>("mac_p1", 1);
}
TEST(MacPipelineTest, TwoStages) {
  RunPipelined<Vmac_p2>("mac_p2", 2);
}
TEST(MacPipelineTest, ThreeStages) {
  RunPipelined<Vmac_p3>("mac_p3", 3);
}

// Functional coverage (tpu/tb/fcov.h, mac.round.*): every rounding case of both modes on named
// vectors, so that each bin is hit whatever the seed. The RTL must give the expected bits and the
// golden model's side channel the named case (it is what the coverage counts).
TEST(MacRoundingCaseTest, EveryCaseInBothModes) {
  using num::RoundCase;
  struct Case {
    uint16_t a, b;
    uint32_t c;
    Mode mode;
    uint32_t want;
    RoundCase how;
  };
  const Case cases[] = {
      {0x7F80, 0x3F80, 0x00000000, Mode::kIeee, 0x7F800000, RoundCase::kSpecial},  // inf · 1
      {0x3F80, 0x3F80, 0x00000000, Mode::kIeee, 0x3F800000, RoundCase::kExact},    // 1 · 1 + 0
      {0x3F80, 0x3300, 0x3F800000, Mode::kIeee, 0x3F800000, RoundCase::kDown},     // 1 + 2^-25
      {0x3F80, 0x33C0, 0x3F800000, Mode::kIeee, 0x3F800001, RoundCase::kUp},       // 1 + 1.5·2^-24
      {0x3F80, 0x3380, 0x3F800000, Mode::kIeee, 0x3F800000, RoundCase::kTieEvenDown},
      {0x3F80, 0x3380, 0x3F800001, Mode::kIeee, 0x3F800002, RoundCase::kTieEvenUp},
      {0x7F7F, 0x4000, 0x00000000, Mode::kIeee, 0x7F800000, RoundCase::kOverflow},  // max · 2
      {0x00FF, 0x3580, 0x00000000, Mode::kIeee, 0x00000010, RoundCase::kUnderflowSubnormal},
      {0x8080, 0x0080, 0x00000000, Mode::kIeee, 0x80000000, RoundCase::kUnderflowZero},
      {0xFFC1, 0x3F80, 0x00000000, Mode::kFtz, 0x7FC00000, RoundCase::kSpecial},  // NaN
      {0x0001, 0x3F80, 0x3F800000, Mode::kFtz, 0x3F800000, RoundCase::kExact},    // daz(a) = 0
      {0x3F80, 0x3300, 0x3F800000, Mode::kFtz, 0x3F800000, RoundCase::kDown},
      {0x3F80, 0x33C0, 0x3F800000, Mode::kFtz, 0x3F800001, RoundCase::kUp},
      {0x3F80, 0x3380, 0x3F800000, Mode::kFtz, 0x3F800000, RoundCase::kTieEvenDown},
      {0x3F80, 0x3380, 0x3F800001, Mode::kFtz, 0x3F800002, RoundCase::kTieEvenUp},
      {0xFF7F, 0x4000, 0x00000000, Mode::kFtz, 0xFF800000, RoundCase::kOverflow},
      {0x0080, 0x0080, 0x00000000, Mode::kFtz, 0x00000000, RoundCase::kUnderflowZero},
      {0x1C80, 0x1C80, 0x00000000, Mode::kFtz, 0x00000000, RoundCase::kFtzFlush},  // 2^-140
      {0x00FF, 0x3580, 0x00000000, Mode::kFtz, 0x00000000, RoundCase::kFtzFlush},  // inexact too
  };
  tb::SimCtrl<Vmac_p0> sim("mac_p0", 1, test::TestTrace());
  int seen[2][num::kNumRoundCases] = {};
  for (const Case& k : cases) {
    const MacVector v{k.a, k.b, k.c};
    SCOPED_TRACE(tb::DescribeMac(v, k.mode));
    RoundCase how = RoundCase::kSpecial;
    EXPECT_EQ(num::Mac(k.a, k.b, k.c, k.mode, &how), k.want);
    EXPECT_STREQ(num::RoundCaseName(how), num::RoundCaseName(k.how));
    EXPECT_EQ(tb::EvalMac(sim, k.a, k.b, k.c, k.mode), k.want);
    ++seen[tb::fcov::ModeIndex(k.mode)][static_cast<int>(k.how)];
  }
  // The list has one vector for every bin of both groups.
  for (int m = 0; m < 2; ++m) {
    const tb::fcov::Group& g = *tb::fcov::Groups().mac_round[m];
    for (const std::string& bin : g.bins()) {
      bool listed = false;
      for (int h = 0; h < num::kNumRoundCases; ++h) {
        listed = listed || (seen[m][h] > 0 && bin == num::RoundCaseName(RoundCase(h)));
      }
      EXPECT_TRUE(listed) << g.name() << " / " << bin << " has no directed vector";
    }
  }
  EXPECT_FALSE(sim.AssertionFailed());
}

// The rounding case that the coverage counts against the host's directed roundings (IEEE mode,
// random triples): an exact result is the same rounded up and down; a result rounded away from
// zero differs from the one rounded toward zero, one rounded toward zero does not (ties are
// checked above); an overflow is an infinity; an underflow is a subnormal or zero.
TEST(MacRoundingCaseTest, AgreesWithHostDirectedRounding) {
  struct RoundingGuard {
    ~RoundingGuard() { std::fesetround(FE_TONEAREST); }
  } guard;
  const auto fma_in = [](int mode, uint16_t a, uint16_t b, uint32_t c) {
    std::fesetround(mode);
    volatile float x = 0, y = 0, z = 0;  // never folded across the rounding-mode change
    float f;
    const uint32_t ab = num::Bf16ToFp32(a), bb = num::Bf16ToFp32(b);
    std::memcpy(&f, &ab, 4), x = f;
    std::memcpy(&f, &bb, 4), y = f;
    std::memcpy(&f, &c, 4), z = f;
    const float r = std::fmaf(x, y, z);
    std::fesetround(FE_TONEAREST);
    uint32_t bits;
    std::memcpy(&bits, &r, 4);
    return bits;
  };
  tb::Rng rng(test::TestSeed());
  const tb::CPolicy policies[] = {tb::CPolicy::kZero, tb::CPolicy::kUniform, tb::CPolicy::kMatter,
                                  tb::CPolicy::kCancel};
  uint64_t checked = 0;
  const uint64_t n = test::Scaled(200'000);
  for (uint64_t i = 0; i < n; ++i) {
    const uint16_t a = rng.U16(), b = rng.U16();
    const uint32_t c = tb::DrawC(rng, a, b, policies[i % 4]);
    num::RoundCase how = num::RoundCase::kSpecial;
    const uint32_t r = num::Mac(a, b, c, Mode::kIeee, &how);
    if (how == num::RoundCase::kSpecial) continue;
    const uint32_t rz = fma_in(FE_TOWARDZERO, a, b, c), rd = fma_in(FE_DOWNWARD, a, b, c);
    const uint32_t ru = fma_in(FE_UPWARD, a, b, c);
    // (An exact zero sum is -0 when rounded downward, +0 otherwise.)
    const bool exact = rd == ru || ((rd | ru) & 0x7FFFFFFFu) == 0, away = r != rz;
    const bool tiny = (r & 0x7F800000u) == 0;
    bool ok = false;
    switch (how) {
      case num::RoundCase::kExact: ok = exact; break;
      case num::RoundCase::kDown:
      case num::RoundCase::kTieEvenDown: ok = !exact && !away && !tiny; break;
      case num::RoundCase::kUp:
      case num::RoundCase::kTieEvenUp: ok = !exact && away && !tiny; break;
      case num::RoundCase::kOverflow: ok = !exact && (r & 0x7FFFFFFFu) == 0x7F800000u; break;
      case num::RoundCase::kUnderflowSubnormal:
        ok = !exact && tiny && (r & 0x7FFFFFFFu) != 0;
        break;
      case num::RoundCase::kUnderflowZero: ok = !exact && (r & 0x7FFFFFFFu) == 0; break;
      default: ok = false;
    }
    ++checked;
    ASSERT_TRUE(ok) << tb::DescribeMac({a, b, c}, Mode::kIeee) << ": case "
                    << num::RoundCaseName(how) << ", result " << num::FormatFp32(r)
                    << ", host toward zero " << num::FormatFp32(rz) << ", down "
                    << num::FormatFp32(rd) << ", up " << num::FormatFp32(ru);
  }
  EXPECT_GT(checked, n / 2);
}

}  // namespace
}  // namespace tpu
