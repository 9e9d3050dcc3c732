// SPDX-License-Identifier: Apache-2.0
// The golden numerics model against the host's independent oracles (fast tier), and the
// contract's directed cases. The 2^32 sweeps of the same comparisons are `make verify-exhaustive`.
#include "tpu/numerics.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "test_support.h"
#include "tpu/gemm.h"
#include "tpu/tb/gemm_data.h"
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
  // The golden fp32 FMA vs fmaf for one triple, under the same rules.
  void CheckFma32(tb::Scoreboard& sb, uint64_t i, uint32_t a, uint32_t b, uint32_t c) {
    const uint32_t g = num::Fma32(a, b, c, GetParam());
    const uint32_t h = tb::HostFma32(a, b, c, GetParam());
    sb.Check(
        i,
        fmt::format("fma32({:#010x}, {:#010x}, {:#010x}) {}", a, b, c, num::ModeName(GetParam())),
        num::IsNaN32(h) ? num::kFp32CanonicalNaN : h, g);
  }
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

// The vector unit's fp32 FMA (num::Fma32) against fmaf: operands drawn from every class and from
// exponents near each other (cancellation, ties), near the subnormal boundary and far apart (the
// aligned sum's 64-bit, 128-bit and stand-in paths), with random fractions (tb::Fma32Random).
TEST_P(GoldenVsHostTest, Fma32RandomTriples) {
  tb::Rng rng(test::TestSeed());
  tb::Scoreboard sb("golden fp32 FMA vs fmaf");
  uint64_t i = 0;
  tb::Fma32Random(rng, test::Scaled(4'000'000),
                  [&](const tb::Fma32Vector& v) { CheckFma32(sb, i++, v.a, v.b, v.c); });
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

// Products that land on a rounding tie or on an exact value (short significands), with an addend
// 2^-25 .. 2^-140 of their size and of either sign: only the addend's sign decides the rounding.
// This is where the aligned sum's 128-bit path and its far-addend stand-in must keep the sign.
TEST_P(GoldenVsHostTest, Fma32TiesDecidedByAFarAddend) {
  tb::Rng rng(test::TestSeed());
  tb::Scoreboard sb("golden fp32 FMA vs fmaf, far addends");
  uint64_t i = 0;
  tb::Fma32FarAddendTies(rng, static_cast<int>(test::Scaled(400'000)),
                         [&](const tb::Fma32Vector& v) { CheckFma32(sb, i++, v.a, v.b, v.c); });
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

// The other fp32 families (cancellation of 48-bit products, ties, the subnormal boundary with
// subnormal operands), which the RTL's test runs too.
TEST_P(GoldenVsHostTest, Fma32DirectedFamilies) {
  tb::Rng rng(test::TestSeed());
  tb::Scoreboard sb("golden fp32 FMA vs fmaf, directed");
  uint64_t i = 0;
  const auto emit = [&](const tb::Fma32Vector& v) { CheckFma32(sb, i++, v.a, v.b, v.c); };
  tb::Fma32Cross(emit);
  tb::Fma32TiesAgainstJams(rng, 300, emit);
  tb::Fma32Cancellations(rng, 20'000, emit);
  tb::Fma32RoundingTies(rng, 20'000, emit);
  tb::Fma32SubnormalBoundary(rng, 20'000, emit);
  EXPECT_GT(sb.checked(), 100'000u);
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

// The contract defines add, subtract and multiply through fma32 (docs/numerics.md, "The vector
// unit"): fma32(a, +1, b), fma32(b, -1, a) and fma32(a, b, -0) are binary32 a + b, a - b and a * b,
// zero signs included (FTZ: on flushed operands, the result flushed).
TEST_P(GoldenVsHostTest, AddSubMulThroughFma32) {
  tb::Rng rng(test::TestSeed());
  tb::Scoreboard sb("add/sub/mul via fma32 vs the host's");
  const uint64_t n = test::Scaled(1'000'000);
  const Mode m = GetParam();
  const auto in = [&](uint32_t x) { return tb::AsFloat(m == Mode::kFtz ? num::Flush32(x) : x); };
  const auto out = [&](float f) {
    const uint32_t x = tb::AsBits(f);
    return num::IsNaN32(x) ? num::kFp32CanonicalNaN : m == Mode::kFtz ? num::Flush32(x) : x;
  };
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t a = tb::DrawFp32(rng, 1 + static_cast<int>(rng.U32() % 254));
    const uint32_t b = tb::DrawFp32(rng, static_cast<int>((a >> 23) & 0xFFu));
    const std::string d = fmt::format("a {:#010x} b {:#010x} {}", a, b, num::ModeName(m));
    sb.Check(3 * i, "add " + d, out(in(a) + in(b)), num::Fma32(a, 0x3F800000u, b, m));
    sb.Check(3 * i + 1, "sub " + d, out(in(a)-in(b)), num::Fma32(b, 0xBF800000u, a, m));
    sb.Check(3 * i + 2, "mul " + d, out(in(a)*in(b)), num::Fma32(a, b, 0x80000000u, m));
  }
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

// mac(a, b, c) is fma32(fp32(a), fp32(b), c): the MAC is the vector unit's FMA on bf16 operands.
TEST_P(GoldenVsHostTest, MacIsFma32OfWidenedOperands) {
  tb::Rng rng(test::TestSeed());
  tb::Scoreboard sb("mac vs fma32");
  const uint64_t n = test::Scaled(1'000'000);
  for (uint64_t i = 0; i < n; ++i) {
    const uint16_t a = rng.U16(), b = rng.U16();
    const uint32_t c = tb::DrawC(rng, a, b, tb::CPolicy::kMatter);
    sb.Check(i, tb::DescribeMac({a, b, c}, GetParam()),
             num::Fma32(num::Bf16ToFp32(a), num::Bf16ToFp32(b), c, GetParam()),
             num::Mac(a, b, c, GetParam()));
  }
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

// ---------------------------------------------------------------------------------------------
// The fast GEMM kernels (host FMA, vectorised) against the exact one (num::Mac per MAC), on every
// kernel this CPU has, in both modes.

struct KernelMode {
  gemm::Kernel kernel;
  Mode mode;
};

std::vector<KernelMode> FastKernelModes() {
  std::vector<KernelMode> out;
  for (gemm::Kernel k : gemm::AvailableKernels())
    if (k != gemm::Kernel::kExact)
      for (Mode m : kModes) out.push_back({k, m});
  return out;
}

class FastGemmTest : public ::testing::TestWithParam<KernelMode> {
 protected:
  void SetUp() override { gemm::SetKernel(GetParam().kernel); }
  void TearDown() override { gemm::SetKernel(gemm::Kernel::kAuto); }
  Mode mode() const { return GetParam().mode; }
  // One MacRows call on the fast kernel and on the exact one; the C rows compared bit for bit.
  void Compare(const char* what, int rows, int k, int n, const std::vector<uint16_t>& a,
               const std::vector<uint16_t>& b, const std::vector<uint32_t>& c0,
               const std::vector<bool>& zero_rows = {}) {
    std::vector<uint32_t> fast = c0, exact = c0;
    std::vector<const uint16_t*> ar(static_cast<size_t>(rows));
    std::vector<uint32_t*> fr(static_cast<size_t>(rows)), er(fr.size());
    for (int i = 0; i < rows; ++i) {
      const bool zero = !zero_rows.empty() && zero_rows[size_t(i)];
      ar[size_t(i)] = zero ? nullptr : &a[size_t(i) * k];
      fr[size_t(i)] = &fast[size_t(i) * n];
      er[size_t(i)] = &exact[size_t(i) * n];
    }
    gemm::MacRows(rows, k, n, ar.data(), b.data(), size_t(n), fr.data(), mode());
    gemm::SetKernel(gemm::Kernel::kExact);
    gemm::MacRows(rows, k, n, ar.data(), b.data(), size_t(n), er.data(), mode());
    gemm::SetKernel(GetParam().kernel);
    size_t bad = 0;
    for (size_t i = 0; i < fast.size(); ++i) {
      if (fast[i] == exact[i]) continue;
      if (++bad <= 5) {
        ADD_FAILURE() << fmt::format("{} {}x{}x{}: C[{}][{}] = {}, the exact kernel's {}", what,
                                     rows, k, n, i / size_t(n), i % size_t(n),
                                     num::FormatFp32(fast[i]), num::FormatFp32(exact[i]));
      }
    }
    EXPECT_EQ(bad, 0u) << what << ": mismatching elements";
    ++compared_;
  }
  int compared_ = 0;
};

// Every single MAC of the directed families (specials crossed, exponent sweeps, cancellations,
// ties, the subnormal boundary, the contract's named cases) as a 1×1×1 product, then the same
// triples in rows of 37 lanes (a vector and a tail) with K = 1.
TEST_P(FastGemmTest, EverySpecialClassAsOneMac) {
  tb::Rng rng(test::TestSeed());
  std::vector<MacVector> v;
  const auto emit = [&](const MacVector& x) { v.push_back(x); };
  tb::CornerCross(emit);
  tb::ExponentSweep(rng, 20, emit);
  tb::Cancellations(rng, 2000, emit);
  tb::RoundingTies(rng, 2000, emit);
  tb::SubnormalBoundary(rng, 2000, emit);
  tb::FusedDirected(emit);
  size_t bad = 0;
  for (const MacVector& x : v) {
    uint32_t c = x.c;
    const uint16_t* a = &x.a;
    uint32_t* cp = &c;
    gemm::MacRows(1, 1, 1, &a, &x.b, 1, &cp, mode());
    if (c != num::Mac(x.a, x.b, x.c, mode()) && ++bad <= 5)
      ADD_FAILURE() << tb::DescribeMac(x, mode()) << ": " << num::FormatFp32(c);
  }
  EXPECT_EQ(bad, 0u) << "of " << v.size() << " single MACs";
  // Rows of the a values against one B row of b values, C drawn to matter for each pair.
  const int n = 37;
  for (size_t start = 0; start + n <= v.size(); start += 4 * n) {
    std::vector<uint16_t> a(n), b(n);
    std::vector<uint32_t> c(size_t(n) * n);
    for (int i = 0; i < n; ++i)
      a[size_t(i)] = v[start + size_t(i)].a, b[size_t(i)] = v[start + size_t(i)].b;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        c[size_t(i) * n + j] = tb::DrawC(rng, a[size_t(i)], b[size_t(j)], tb::CPolicy::kMatter);
    Compare("crossed triples", n, 1, n, a, b, c);
  }
}

// Whole chains: random shapes whose edges fall on and off every kernel's vector, block and
// panel sizes, on each kind of data, with and without C0 (C0 with specials: NaN payloads,
// subnormals, infinities), and rows of +0 (a null A row).
TEST_P(FastGemmTest, RandomChainsMatchTheExactKernel) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  const int dims[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 97, 130};
  const tb::GemmData kinds[] = {tb::GemmData::kModerate, tb::GemmData::kSpecials,
                                tb::GemmData::kTiny};
  const int cases = int(test::Scaled(60));
  for (int t = 0; t < cases; ++t) {
    const gemm::Shape s{dims[rng.Range(0, 17)], dims[rng.Range(0, 17)], dims[rng.Range(0, 17)]};
    const tb::GemmData kind = kinds[t % 3];
    const tb::GemmOperands ops = tb::RandomGemm(rng, s, kind, t % 2 == 0);
    std::vector<uint32_t> c0 = ops.c0;
    if (c0.empty()) c0.assign(size_t(s.m) * s.n, 0u);
    for (auto& x : c0) {
      const int r = rng.Range(0, 49);
      if (r == 0) x = 0x7F800001u | rng.U32();  // a NaN with a payload, either sign
      if (r == 1) x = rng.U32() & 0x807FFFFFu;  // a subnormal or zero
      if (r == 2) x = rng.Bit() ? 0x7F800000u : 0xFF800000u;
    }
    std::vector<bool> zero_rows(static_cast<size_t>(s.m));
    for (int i = 0; i < s.m; ++i) zero_rows[size_t(i)] = rng.Range(0, 15) == 0;
    Compare(fmt::format("{} {} seed {}", tb::GemmDataName(kind), tb::ShapeName(s), seed).c_str(),
            s.m, s.k, s.n, ops.a, ops.b, c0, zero_rows);
  }
  EXPECT_EQ(compared_, cases);
}

// gemm::Gemm is MacRows from C0 (or +0), whatever kernel runs it; a K of 3000 crosses no limit.
TEST_P(FastGemmTest, GemmOfALongChain) {
  tb::Rng rng(test::TestSeed());
  const gemm::Shape s{5, 3000, 19};
  const tb::GemmOperands ops = tb::RandomGemm(rng, s, tb::GemmData::kModerate, true);
  const std::vector<uint32_t> fast = gemm::Gemm(s, ops.a, ops.b, ops.c0, mode());
  gemm::SetKernel(gemm::Kernel::kExact);
  const std::vector<uint32_t> exact = gemm::Gemm(s, ops.a, ops.b, ops.c0, mode());
  EXPECT_EQ(fast, exact);
}

#if defined(__x86_64__)
// The caller's FPU control word (FTZ and DAZ on, rounding toward zero) changes no bit, and is
// the caller's again after the call.
TEST_P(FastGemmTest, CallersFpuModesChangeNothing) {
  tb::Rng rng(test::TestSeed());
  const gemm::Shape s{9, 40, 70};
  const tb::GemmOperands ops = tb::RandomGemm(rng, s, tb::GemmData::kTiny, true);
  const std::vector<uint32_t> want = gemm::Gemm(s, ops.a, ops.b, ops.c0, mode());
  const unsigned saved = _mm_getcsr();
  const unsigned odd = 0x1F80u | 0x8000u | 0x0040u | 0x6000u;  // FTZ, DAZ, toward zero
  _mm_setcsr(odd);
  const std::vector<uint32_t> got = gemm::Gemm(s, ops.a, ops.b, ops.c0, mode());
  const unsigned after = _mm_getcsr();
  _mm_setcsr(saved);
  EXPECT_EQ(got, want);
  EXPECT_EQ(after & ~0x3Fu, odd) << "the control word was not restored";
}
#endif

INSTANTIATE_TEST_SUITE_P(Kernels, FastGemmTest, ::testing::ValuesIn(FastKernelModes()),
                         [](const auto& info) {
                           return std::string(gemm::KernelName(info.param.kernel)) + "_" +
                                  num::ModeName(info.param.mode);
                         });

TEST(FastGemmKernelTest, NamesAndChoice) {
  EXPECT_EQ(gemm::ParseKernel("avx2"), gemm::Kernel::kAvx2);
  EXPECT_EQ(gemm::ParseKernel("exact"), gemm::Kernel::kExact);
  EXPECT_EQ(gemm::ParseKernel("auto"), gemm::Kernel::kAuto);
  try {
    gemm::ParseKernel("sse9");
    ADD_FAILURE() << "an unknown kernel name was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown GEMM kernel 'sse9' (auto, exact, scalar, avx2 or avx512)");
  }
  const auto avail = gemm::AvailableKernels();
  ASSERT_GE(avail.size(), 2u);
  EXPECT_EQ(avail[0], gemm::Kernel::kExact);
  EXPECT_EQ(avail[1], gemm::Kernel::kScalar);
  // The default is the fastest the CPU has (unless TPU_GEMM_KERNEL says otherwise).
  if (std::getenv("TPU_GEMM_KERNEL") == nullptr) {
    EXPECT_EQ(gemm::ActiveKernel(), avail.back());
  }
  for (gemm::Kernel k : {gemm::Kernel::kAvx2, gemm::Kernel::kAvx512}) {
    if (gemm::KernelAvailable(k)) continue;
    EXPECT_THROW(gemm::SetKernel(k), std::invalid_argument) << gemm::KernelName(k);
  }
}
}  // namespace
}  // namespace tpu
