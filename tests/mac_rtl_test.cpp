// SPDX-License-Identifier: Apache-2.0
// The MAC RTL against the golden model, bit for bit, in both modes: the TestFloat-style directed
// families, the contract's named cases, random triples, and the pipelined configurations checked
// in order on the same vectors. The 2^32 sweeps are `make verify-exhaustive`. The same module
// with fp32 operands (InManBits = 23, the vector unit's fma32) against num::Fma32, at the end.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "Vfma32_p0.h"
#include "Vfma32_p3.h"
#include "Vmac_p0.h"
#include "Vmac_p1.h"
#include "Vmac_p2.h"
#include "Vmac_p3.h"
#include "test_support.h"
#include "tpu/numerics.h"
#include "tpu/tb/fcov.h"
#include "tpu/tb/mac_harness.h"
#include "tpu/tb/mac_vectors.h"
#include "tpu/tb/oracles.h"

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
template <class M, class V, class Fill>
void RunPipelinedOn(const char* name, unsigned latency, Fill fill) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  tb::SimCtrl<M> sim(name, 100'000'000, test::TestTrace());
  tb::Scoreboard sb(name);
  tb::MacPipeChecker<M, V> checker(sim, latency, seed ^ 1, sb);
  std::vector<V> vs;
  fill(rng, vs);
  for (size_t i = 0; i < vs.size(); ++i) checker.Push(vs[i], rng.Bit() ? Mode::kFtz : Mode::kIeee);
  checker.Finish();
  EXPECT_EQ(checker.errors(), "");
  EXPECT_EQ(sb.checked(), vs.size());
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

template <class M>
void RunPipelined(const char* name, unsigned latency) {
  RunPipelinedOn<M, MacVector>(name, latency, [](tb::Rng& rng, std::vector<MacVector>& vs) {
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
  });
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

// Every bin of a rounding-case group pair (IEEE, FTZ) has a named vector: seen[mode][case] counts
// the list's vectors of that case.
void ExpectEveryBinListed(const tb::fcov::Group* const (&groups)[2],
                          const int (&seen)[2][num::kNumRoundCases]) {
  for (int m = 0; m < 2; ++m) {
    const tb::fcov::Group& g = *groups[m];
    for (const std::string& bin : g.bins()) {
      bool listed = false;
      for (int h = 0; h < num::kNumRoundCases; ++h) {
        listed = listed || (seen[m][h] > 0 && bin == num::RoundCaseName(num::RoundCase(h)));
      }
      EXPECT_TRUE(listed) << g.name() << " / " << bin << " has no directed vector";
    }
  }
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
  ExpectEveryBinListed(tb::fcov::Groups().mac_round, seen);
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

// ---------------------------------------------------------------------------------------------
// The fp32 FMA (tpu_mac with InManBits = 23: the vector unit's fma32) against num::Fma32.

using tb::Fma32Vector;

class Fma32Test : public ::testing::TestWithParam<Mode> {
 protected:
  Fma32Test() : sim_("fma32_p0", 1, test::TestTrace()) {}
  void TearDown() override { EXPECT_FALSE(sim_.AssertionFailed()) << "an RTL assertion failed"; }

  void Check(tb::Scoreboard& sb, uint64_t i, const Fma32Vector& v) {
    const uint32_t r = tb::EvalFma32(sim_, v.a, v.b, v.c, GetParam());
    sb.Check(i, tb::DescribeFma32(v, GetParam()), num::Fma32(v.a, v.b, v.c, GetParam()), r);
  }
  template <class Family>
  void RunFamily(const char* what, uint64_t at_least, Family family) {
    tb::Scoreboard sb(what);
    uint64_t i = 0;
    family([&](const Fma32Vector& v) { Check(sb, i++, v); });
    EXPECT_GE(sb.checked(), at_least);
    EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
  }

  tb::SimCtrl<Vfma32_p0> sim_;
};

TEST_P(Fma32Test, SpecialValueCrossProduct) {
  RunFamily("fp32 specials over a×b×c", 17 * 17 * 17,
            [](const tb::Fma32Emit& e) { tb::Fma32Cross(e); });
}

TEST_P(Fma32Test, RandomTriples) {
  tb::Rng rng(test::TestSeed());
  const uint64_t n = test::Scaled(4'000'000);
  RunFamily("random fp32 triples", n, [&](const tb::Fma32Emit& e) { tb::Fma32Random(rng, n, e); });
}

TEST_P(Fma32Test, FarAddendTies) {
  tb::Rng rng(test::TestSeed());
  RunFamily("ties and exact products, far addends", 200'000,
            [&](const tb::Fma32Emit& e) { tb::Fma32FarAddendTies(rng, 200'000, e); });
}

TEST_P(Fma32Test, TiesAgainstJams) {
  tb::Rng rng(test::TestSeed());
  RunFamily("ties decided by a tiny addend's jam, every alignment", 20'000,
            [&](const tb::Fma32Emit& e) { tb::Fma32TiesAgainstJams(rng, 600, e); });
}

TEST_P(Fma32Test, Cancellations) {
  tb::Rng rng(test::TestSeed());
  RunFamily("exact and near cancellation of 48-bit products", 150'000,
            [&](const tb::Fma32Emit& e) { tb::Fma32Cancellations(rng, 50'000, e); });
}

TEST_P(Fma32Test, RoundingTies) {
  tb::Rng rng(test::TestSeed());
  RunFamily("ties to even and odd", 50'000,
            [&](const tb::Fma32Emit& e) { tb::Fma32RoundingTies(rng, 50'000, e); });
}

TEST_P(Fma32Test, SubnormalBoundary) {
  tb::Rng rng(test::TestSeed());
  RunFamily("results near 2^-126, subnormal operands", 100'000,
            [&](const tb::Fma32Emit& e) { tb::Fma32SubnormalBoundary(rng, 50'000, e); });
}

TEST_P(Fma32Test, MacFamiliesOnWidenedOperands) {
  tb::Rng rng(test::TestSeed());
  RunFamily("the MAC's families, bf16 operands widened", 50'000,
            [&](const tb::Fma32Emit& e) { tb::Fma32FromMac(rng, 20'000, e); });
}

INSTANTIATE_TEST_SUITE_P(Modes, Fma32Test, ::testing::ValuesIn(kModes),
                         [](const auto& info) { return std::string(num::ModeName(info.param)); });

// Named cases, expected bits written out: where fused and unfused differ, every rounding case of
// both modes (each bin of fma32.round.*), and the ones the window layout of a 48-bit product
// must get right.
TEST(Fma32DirectedTest, EveryRoundingCaseAndNamedCases) {
  using num::RoundCase;
  struct Case {
    uint32_t a, b, c;
    Mode mode;
    uint32_t want;
    RoundCase how;
  };
  const Case cases[] = {
      // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24 fused (unfused: the product's tie rounds to even,
      // 2^-11).
      {0x3F800800, 0x3F800800, 0xBF800000, Mode::kIeee, 0x3A000400, RoundCase::kExact},
      {0x7F800000, 0x3F800000, 0x00000000, Mode::kIeee, 0x7F800000, RoundCase::kSpecial},
      {0x3F800000, 0x3F800000, 0x00000000, Mode::kIeee, 0x3F800000, RoundCase::kExact},
      {0x3F800000, 0x33000000, 0x3F800000, Mode::kIeee, 0x3F800000, RoundCase::kDown},
      {0x3F800000, 0x33C00000, 0x3F800000, Mode::kIeee, 0x3F800001, RoundCase::kUp},
      {0x3F800000, 0x33800000, 0x3F800000, Mode::kIeee, 0x3F800000, RoundCase::kTieEvenDown},
      {0x3F800000, 0x33800000, 0x3F800001, Mode::kIeee, 0x3F800002, RoundCase::kTieEvenUp},
      {0x7F7FFFFF, 0x40000000, 0x00000000, Mode::kIeee, 0x7F800000, RoundCase::kOverflow},
      // (2^24 - 1)·2^-152 = 2097151.875 · 2^-149, rounded up to 2^-128.
      {0x00FFFFFF, 0x3E000000, 0x00000000, Mode::kIeee, 0x00200000, RoundCase::kUnderflowSubnormal},
      {0x80800000, 0x00800000, 0x00000000, Mode::kIeee, 0x80000000, RoundCase::kUnderflowZero},
      // Subnormal operands, normalised inside: 2^-149 · 2^127 is 2^-22 exactly (the operand's
      // 22 leading zeros counted), and (2^-149)·(2^-149) + 2^-126 keeps c.
      {0x00000001, 0x7F000000, 0x00000000, Mode::kIeee, 0x34800000, RoundCase::kExact},
      {0x00000001, 0x00000001, 0x00800000, Mode::kIeee, 0x00800000, RoundCase::kDown},
      // The product's lowest bit decides a tie: (1 + 2^-23)(1 + 2^-23) - (1 + 2^-22) = 2^-46.
      {0x3F800001, 0x3F800001, 0xBF800002, Mode::kIeee, 0x28800000, RoundCase::kExact},
      // A product far below 1 decides whether 1 - tiny rounds below 1, where the spacing halves
      // (rounded up in magnitude: "up" is away from zero).
      {0x26800000, 0x3F800000, 0x3F800000, Mode::kIeee, 0x3F800000, RoundCase::kDown},
      {0xA6800000, 0x3F800000, 0x3F800000, Mode::kIeee, 0x3F800000, RoundCase::kUp},
      {0xB3000001, 0x3F800000, 0x3F800000, Mode::kIeee, 0x3F7FFFFF, RoundCase::kDown},
      {0xFFC10000, 0x3F800000, 0x00000000, Mode::kFtz, 0x7FC00000, RoundCase::kSpecial},
      {0x00000001, 0x3F800000, 0x3F800000, Mode::kFtz, 0x3F800000, RoundCase::kExact},
      {0x3F800000, 0x33000000, 0x3F800000, Mode::kFtz, 0x3F800000, RoundCase::kDown},
      {0x3F800000, 0x33C00000, 0x3F800000, Mode::kFtz, 0x3F800001, RoundCase::kUp},
      {0x3F800000, 0x33800000, 0x3F800000, Mode::kFtz, 0x3F800000, RoundCase::kTieEvenDown},
      {0x3F800000, 0x33800000, 0x3F800001, Mode::kFtz, 0x3F800002, RoundCase::kTieEvenUp},
      {0xFF7FFFFF, 0x40000000, 0x00000000, Mode::kFtz, 0xFF800000, RoundCase::kOverflow},
      {0x00800000, 0x00800000, 0x00000000, Mode::kFtz, 0x00000000, RoundCase::kUnderflowZero},
      {0x1C800000, 0x1C800000, 0x00000000, Mode::kFtz, 0x00000000, RoundCase::kFtzFlush},
      {0x00FFFFFF, 0x3E000000, 0x00000000, Mode::kFtz, 0x00000000, RoundCase::kFtzFlush},
  };
  tb::SimCtrl<Vfma32_p0> sim("fma32_p0", 1, test::TestTrace());
  int seen[2][num::kNumRoundCases] = {};
  for (const Case& k : cases) {
    const Fma32Vector v{k.a, k.b, k.c};
    SCOPED_TRACE(tb::DescribeFma32(v, k.mode));
    RoundCase how = RoundCase::kSpecial;
    EXPECT_EQ(num::Fma32(k.a, k.b, k.c, k.mode, &how), k.want);
    EXPECT_STREQ(num::RoundCaseName(how), num::RoundCaseName(k.how));
    const uint32_t host = tb::HostFma32(k.a, k.b, k.c, k.mode);
    EXPECT_EQ(num::IsNaN32(host) ? num::kFp32CanonicalNaN : host, k.want);
    EXPECT_EQ(tb::EvalFma32(sim, k.a, k.b, k.c, k.mode), k.want);
    ++seen[tb::fcov::ModeIndex(k.mode)][static_cast<int>(k.how)];
  }
  ExpectEveryBinListed(tb::fcov::Groups().fma32_round, seen);
  EXPECT_FALSE(sim.AssertionFailed());
}

// The three-stage fp32 FMA (the vector unit's): its families streamed with random gaps, checked
// in order at a latency of 3.
TEST(Fma32PipelineTest, ThreeStages) {
  RunPipelinedOn<Vfma32_p3, Fma32Vector>(
      "fma32_p3", 3, [](tb::Rng& rng, std::vector<Fma32Vector>& vs) {
        const auto keep = [&](const Fma32Vector& v) { vs.push_back(v); };
        tb::Fma32Cross(keep);
        tb::Fma32Cancellations(rng, 5000, keep);
        tb::Fma32TiesAgainstJams(rng, 60, keep);
        tb::Fma32SubnormalBoundary(rng, 5000, keep);
        tb::Fma32FarAddendTies(rng, 5000, keep);
        tb::Fma32Random(rng, test::Scaled(500'000), keep);
      });
}

}  // namespace
}  // namespace tpu
