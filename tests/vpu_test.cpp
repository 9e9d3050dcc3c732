// SPDX-License-Identifier: Apache-2.0
// The vector unit's operations in the golden model (tpu/vpu.h; docs/numerics.md, "The vector
// unit"): each against the same algorithm run on the host's fmaf (bits), and against the exact
// function (its error bound). The 2^32 sweeps are tpu_sweep's vpu-* (make verify-exhaustive).
#include "tpu/vpu.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "test_support.h"
#include "tpu/tb/oracles.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/vpu_error.h"

namespace tpu {
namespace {

using num::Mode;

uint32_t HostExp(uint32_t x, Mode m) {
  return vpu::ExpWith(x, m, tb::HostFma32);
}
uint32_t HostRecip(uint32_t x, Mode m) {
  return vpu::RecipWith(x, m, tb::HostFma32);
}
uint32_t HostRsqrt(uint32_t x, Mode m) {
  return vpu::RsqrtWith(x, m, tb::HostFma32);
}
uint32_t HostSqrt(uint32_t x, Mode m) {
  return vpu::SqrtWith(x, m, tb::HostFma32);
}
uint32_t HostSigmoid(uint32_t x, Mode m) {
  return vpu::SigmoidWith(x, m, tb::HostFma32);
}
uint32_t HostTanh(uint32_t x, Mode m) {
  return vpu::TanhWith(x, m, tb::HostFma32);
}
uint32_t HostLog(uint32_t x, Mode m) {
  return vpu::LogWith(x, m, tb::HostFma32);
}
uint32_t HostErf(uint32_t x, Mode m) {
  return vpu::ErfWith(x, m, tb::HostFma32);
}

// Every 4099th fp32 pattern from a seeded offset (about a million inputs, every binade), in both
// modes: the golden function equals the host-fma run bit for bit, and in IEEE mode its error is
// within the contract's bound.
void CheckSampled(const char* name, uint32_t (*golden)(uint32_t, Mode),
                  uint32_t (*host)(uint32_t, Mode), double (*error)(uint32_t, uint32_t),
                  double bound) {
  tb::Rng rng(test::TestSeed());
  const uint32_t start = rng.U32() % 4099;
  double worst = 0;
  uint32_t worst_x = 0;
  uint64_t bad = 0, checked = 0;
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    for (uint64_t i = start; i <= 0xFFFFFFFFu; i += 4099) {
      const auto x = static_cast<uint32_t>(i);
      const uint32_t g = golden(x, m);
      const uint32_t h = host(x, m);
      ++checked;
      if (g != h && bad++ < 5) {
        ADD_FAILURE() << fmt::format("{}({:#010x}) {}: golden {:#010x}, host fma {:#010x}", name, x,
                                     num::ModeName(m), g, h);
      }
      if (m == Mode::kIeee && !num::IsNaN32(x)) {
        const double err = error(x, g);
        if (err > worst) worst = err, worst_x = x;
      }
    }
  }
  fmt::print("{}: {} inputs, worst error {:.4f} ulp at {:#010x} (bound {})\n", name, checked, worst,
             worst_x, bound);
  EXPECT_EQ(bad, 0u);
  EXPECT_LE(worst, bound) << fmt::format("at x = {:#010x}", worst_x);
}

TEST(VpuExpTest, SampledInputs) {
  CheckSampled("exp", vpu::Exp, HostExp, tb::ExpUlpError, vpu::kExpMaxUlp);
}

TEST(VpuRecipTest, SampledInputs) {
  CheckSampled("recip", vpu::Recip, HostRecip, tb::RecipUlpError, vpu::kRecipMaxUlp);
}

TEST(VpuRsqrtTest, SampledInputs) {
  CheckSampled("rsqrt", vpu::Rsqrt, HostRsqrt, tb::RsqrtUlpError, vpu::kRsqrtMaxUlp);
}

TEST(VpuSqrtTest, SampledInputs) {
  CheckSampled("sqrt", vpu::Sqrt, HostSqrt, tb::SqrtUlpError, vpu::kSqrtMaxUlp);
}

TEST(VpuSigmoidTest, SampledInputs) {
  CheckSampled("sigmoid", vpu::Sigmoid, HostSigmoid, tb::SigmoidUlpError, vpu::kSigmoidMaxUlp);
}

// The specials, both branches and both ends: 1/2 at the zeros (and at a subnormal x in FTZ), 1
// from x = 17 (1 - 2^-25 and above round to 1), exp(x) itself far to the left, 0 from -104.
TEST(VpuSigmoidTest, Directed) {
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    SCOPED_TRACE(num::ModeName(m));
    EXPECT_EQ(vpu::Sigmoid(0u, m), 0x3F000000u);
    EXPECT_EQ(vpu::Sigmoid(0x80000000u, m), 0x3F000000u);
    EXPECT_EQ(vpu::Sigmoid(0x7F800000u, m), vpu::kOne);
    EXPECT_EQ(vpu::Sigmoid(0xFF800000u, m), 0u);
    EXPECT_EQ(vpu::Sigmoid(0x41880000u, m), vpu::kOne);  // 17
    EXPECT_EQ(vpu::Sigmoid(0xC2D00000u, m), 0u);         // -104
    EXPECT_EQ(vpu::Sigmoid(0x7FC00001u, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Sigmoid(0xC2A00000u, m), vpu::Exp(0xC2A00000u, m));  // -80: e/(1+e) = e
  }
  EXPECT_EQ(vpu::Sigmoid(0x00000001u, Mode::kFtz), 0x3F000000u);
}

TEST(VpuLogTest, SampledInputs) {
  CheckSampled("log", vpu::Log, HostLog, tb::LogUlpError, vpu::kLogMaxUlp);
}

// The specials, the domain, log(1) = +0, both sides of the sqrt(2) switch, powers of two
// (k*ln2 alone), the subnormal scaling and FTZ; values are binary64's rounded to fp32.
TEST(VpuLogTest, Directed) {
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    SCOPED_TRACE(num::ModeName(m));
    EXPECT_EQ(vpu::Log(vpu::kOne, m), 0u);
    EXPECT_EQ(vpu::Log(0u, m), 0xFF800000u);
    EXPECT_EQ(vpu::Log(0x80000000u, m), 0xFF800000u);
    EXPECT_EQ(vpu::Log(0x7F800000u, m), vpu::kPlusInf);
    EXPECT_EQ(vpu::Log(0xFF800000u, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Log(vpu::kMinusOne, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Log(0x7FC00001u, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Log(0x40000000u, m), 0x3F317218u);  // ln 2
    EXPECT_EQ(vpu::Log(0x402DF854u, m), 0x3F800000u);  // ln(e as fp32) rounds to 1
    for (uint32_t x : {vpu::kLogSqrt2, vpu::kLogSqrt2 + 1, 0x7F7FFFFFu, 0x00800000u}) {
      EXPECT_LE(tb::LogUlpError(x, vpu::Log(x, Mode::kIeee)), vpu::kLogMaxUlp) << x;
    }
  }
  EXPECT_LE(tb::LogUlpError(1u, vpu::Log(1u, Mode::kIeee)), vpu::kLogMaxUlp);  // 2^-149
  EXPECT_EQ(vpu::Log(1u, Mode::kFtz), 0xFF800000u);                            // read as +0
}

TEST(VpuErfTest, SampledInputs) {
  CheckSampled("erf", vpu::Erf, HostErf, tb::ErfUlpError, vpu::kErfMaxUlp);
}

// The specials, oddness bit for bit, both sides of the switch at 1 and of the clamp at 4, where
// erf rounds to 1, and the subnormals (erf(x) = 2x/sqrt(pi) rounded; FTZ reads them as zeros).
TEST(VpuErfTest, Directed) {
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    SCOPED_TRACE(num::ModeName(m));
    EXPECT_EQ(vpu::Erf(0u, m), 0u);
    EXPECT_EQ(vpu::Erf(0x80000000u, m), 0x80000000u);
    EXPECT_EQ(vpu::Erf(0x7F800000u, m), vpu::kOne);
    EXPECT_EQ(vpu::Erf(0xFF800000u, m), vpu::kMinusOne);
    EXPECT_EQ(vpu::Erf(0x7F7FFFFFu, m), vpu::kOne);
    EXPECT_EQ(vpu::Erf(0x7FC00001u, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Erf(0xFFFFFFFFu, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Erf(0x407B0000u, m), vpu::kOne);    // 3.92: 1 - 2.7e-8 rounds to 1
    EXPECT_EQ(vpu::Erf(0x3F800000u, m), 0x3F57BB3Du);  // erf(1) = 0.842700793 rounded
    for (uint32_t x = 1; x < 0x7F800000u; x += 0x000F4243u) {
      ASSERT_EQ(vpu::Erf(x | num::kFp32SignMask, m), vpu::Erf(x, m) ^ num::kFp32SignMask) << x;
    }
    for (uint32_t x : {vpu::kErfSwitch - 1, vpu::kErfSwitch, vpu::kErfClamp - 1, vpu::kErfClamp,
                       0x3F882E68u /* 1.0639, the largest error of the fit */}) {
      EXPECT_LE(tb::ErfUlpError(x, vpu::Erf(x, Mode::kIeee)), vpu::kErfMaxUlp) << x;
      EXPECT_EQ(vpu::Erf(x, m), HostErf(x, m)) << x;
    }
  }
  EXPECT_EQ(vpu::Erf(0x00000001u, Mode::kIeee), 0x00000001u);  // 1.128 * 2^-149 rounds to 2^-149
  EXPECT_EQ(vpu::Erf(0x00000002u, Mode::kIeee), 0x00000002u);  // 2.257 * 2^-149: 2
  EXPECT_EQ(vpu::Erf(0x00000004u, Mode::kIeee), 0x00000005u);  // 4.51 * 2^-149: 5 (5 of 4.51)
  EXPECT_EQ(vpu::Erf(0x80400000u, Mode::kIeee), 0x8048375Du);  // -2^-127 * 1.128...
  EXPECT_EQ(vpu::Erf(0x00400000u, Mode::kFtz), 0u);
}

// 2^20 pairs per mode from the seed (any patterns, and half with b's exponent near a's): the
// golden quotient equals the host-fma run, and in IEEE mode it is within the bound of a/b (NaN
// where the quotient is one); nearly all equal the host's correctly rounded division.
TEST(VpuDivTest, SampledPairs) {
  tb::Rng rng(test::TestSeed());
  double worst = 0;
  uint64_t not_nearest = 0, bad = 0, n = 0;
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    for (int i = 0; i < (1 << 20); ++i) {
      const uint32_t a = rng.U32();
      uint32_t b = rng.U32();
      if (b & 1u) {
        const int e = static_cast<int>((a >> 23) & 0xFF) + rng.Range(-2, 2);
        b = (b & 0x807FFFFFu) | (static_cast<uint32_t>(std::clamp(e, 0, 254)) << 23);
      }
      const uint32_t g = vpu::Div(a, b, m);
      if (g != vpu::DivWith(a, b, m, tb::HostFma32) && bad++ < 5) {
        ADD_FAILURE() << fmt::format("{:#010x} / {:#010x} {}: golden {:#010x}, host fma differs", a,
                                     b, num::ModeName(m), g);
      }
      if (m != Mode::kIeee) continue;
      const double exact = double(tb::AsFloat(a)) / double(tb::AsFloat(b));
      if (std::isnan(exact)) {
        EXPECT_EQ(g, num::kFp32CanonicalNaN) << a << " / " << b;
        continue;
      }
      const double err = tb::ResultError(g, exact);
      worst = std::max(worst, err);
      EXPECT_LE(err, vpu::kDivMaxUlp) << fmt::format("{:#010x} / {:#010x}", a, b);
      not_nearest += tb::AsBits(tb::AsFloat(a) / tb::AsFloat(b)) != g;
      ++n;
    }
  }
  fmt::print("div: {} IEEE pairs, worst error {:.4f} ulp, {} not the correctly rounded quotient\n",
             n, worst, not_nearest);
  EXPECT_EQ(bad, 0u);
  EXPECT_LT(not_nearest, n / 1000);  // Markstein's step: almost every quotient correctly rounded
}

// IEEE 754's special quotients, exact ones, and GELU's x / sqrt(2) (as PyTorch exports it) equal to
// the correctly rounded division over a range of x.
TEST(VpuDivTest, Directed) {
  constexpr uint32_t kNaN = num::kFp32CanonicalNaN, kInf = vpu::kPlusInf, kS = num::kFp32SignMask;
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    SCOPED_TRACE(num::ModeName(m));
    EXPECT_EQ(vpu::Div(0u, 0u, m), kNaN);
    EXPECT_EQ(vpu::Div(kInf, kInf | kS, m), kNaN);
    EXPECT_EQ(vpu::Div(0x7FC00001u, vpu::kOne, m), kNaN);
    EXPECT_EQ(vpu::Div(vpu::kOne, 0xFFFFFFFFu, m), kNaN);
    EXPECT_EQ(vpu::Div(vpu::kOne, 0u, m), kInf);
    EXPECT_EQ(vpu::Div(vpu::kOne, kS, m), kInf | kS);
    EXPECT_EQ(vpu::Div(vpu::kMinusOne, 0u, m), kInf | kS);
    EXPECT_EQ(vpu::Div(0u, 0x40A00000u, m), 0u);                    // 0 / 5
    EXPECT_EQ(vpu::Div(kS, 0x40A00000u, m), kS);                    // -0 / 5
    EXPECT_EQ(vpu::Div(0u, 0xC0A00000u, m), kS);                    // 0 / -5
    EXPECT_EQ(vpu::Div(kInf, 0x40000000u, m), kInf);                // inf / 2
    EXPECT_EQ(vpu::Div(0x40000000u, kInf | kS, m), kS);             // 2 / -inf
    EXPECT_EQ(vpu::Div(0x40C00000u, 0x40400000u, m), 0x40000000u);  // 6 / 3
    EXPECT_EQ(vpu::Div(vpu::kOne, 0x40400000u, m), 0x3EAAAAABu);    // 1 / 3
    EXPECT_EQ(vpu::Div(0x7F7FFFFFu, 0x3F000000u, m), kInf);         // FLT_MAX / 0.5
  }
  const uint32_t sqrt2 = 0x3FB504F3u;
  for (uint32_t x = 0x33000000u; x < 0x42000000u; x += 0x1357u) {
    for (uint32_t v : {x, x | num::kFp32SignMask}) {
      ASSERT_EQ(vpu::Div(v, sqrt2, Mode::kIeee), tb::AsBits(tb::AsFloat(v) / tb::AsFloat(sqrt2)))
          << fmt::format("{:#010x} / sqrt(2)", v);
    }
  }
  EXPECT_EQ(vpu::Div(0x00400000u, vpu::kOne, Mode::kFtz), 0u);  // a subnormal read as +0
  EXPECT_EQ(vpu::Div(0x00400000u, 0x40000000u, Mode::kIeee), 0x00200000u);  // 2^-127 / 2
}

TEST(VpuTanhTest, SampledInputs) {
  CheckSampled("tanh", vpu::Tanh, HostTanh, tb::TanhUlpError, vpu::kTanhMaxUlp);
}

// The specials, odd symmetry bit for bit, both forms at their switch, x itself below 2^-12 and
// for subnormals, +-1 far out.
TEST(VpuTanhTest, Directed) {
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    SCOPED_TRACE(num::ModeName(m));
    EXPECT_EQ(vpu::Tanh(0u, m), 0u);
    EXPECT_EQ(vpu::Tanh(0x80000000u, m), 0x80000000u);
    EXPECT_EQ(vpu::Tanh(0x7F800000u, m), vpu::kOne);
    EXPECT_EQ(vpu::Tanh(0xFF800000u, m), vpu::kOne | num::kFp32SignMask);
    EXPECT_EQ(vpu::Tanh(0x41200000u, m), vpu::kOne);    // 10
    EXPECT_EQ(vpu::Tanh(0x39000000u, m), 0x39000000u);  // 2^-13: x
    EXPECT_EQ(vpu::Tanh(0x7FC00001u, m), num::kFp32CanonicalNaN);
    tb::Rng rng(test::TestSeed());
    for (int i = 0; i < 10000; ++i) {
      const uint32_t x = rng.U32() & 0x7FFFFFFFu;
      if (num::IsNaN32(x)) continue;
      ASSERT_EQ(vpu::Tanh(x | num::kFp32SignMask, m), vpu::Tanh(x, m) ^ num::kFp32SignMask)
          << fmt::format("x = {:#010x}", x);
    }
    for (uint32_t x : {vpu::kTanhSwitch - 1, vpu::kTanhSwitch}) {  // both sides of 0.55
      EXPECT_LE(tb::TanhUlpError(x, vpu::Tanh(x, Mode::kIeee)), vpu::kTanhMaxUlp);
    }
  }
  EXPECT_EQ(vpu::Tanh(0x00000001u, Mode::kIeee), 0x00000001u);
  EXPECT_EQ(vpu::Tanh(0x80400000u, Mode::kIeee), 0x80400000u);
  EXPECT_EQ(vpu::Tanh(0x00400000u, Mode::kFtz), 0u);
}

// The specials, the domain (a negative x is NaN, -0 is not negative), both reductions (even and
// odd exponents), the subnormal scaling and FTZ; the values are binary64's rounded to fp32.
TEST(VpuRsqrtTest, Directed) {
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    SCOPED_TRACE(num::ModeName(m));
    EXPECT_EQ(vpu::Rsqrt(0x3F800000u, m), 0x3F800000u);  // 1
    EXPECT_EQ(vpu::Rsqrt(0x40800000u, m), 0x3F000000u);  // 4 -> 1/2
    EXPECT_EQ(vpu::Rsqrt(0x3E800000u, m), 0x40000000u);  // 1/4 -> 2
    EXPECT_EQ(vpu::Rsqrt(0x40000000u, m), 0x3F3504F3u);  // 2 -> 0.707106769
    EXPECT_EQ(vpu::Rsqrt(0x40400000u, m), 0x3F13CD3Au);  // 3 -> 0.577350259
    EXPECT_EQ(vpu::Rsqrt(0x7F7FFFFFu, m), 0x1F800000u);  // FLT_MAX -> 2^-64
    EXPECT_EQ(vpu::Rsqrt(0u, m), vpu::kPlusInf);
    EXPECT_EQ(vpu::Rsqrt(0x80000000u, m), 0xFF800000u);  // -0 -> -inf
    EXPECT_EQ(vpu::Rsqrt(0x7F800000u, m), 0u);           // +inf -> +0
    EXPECT_EQ(vpu::Rsqrt(0xFF800000u, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Rsqrt(0xBF800000u, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Rsqrt(0xFFC00001u, m), num::kFp32CanonicalNaN);
  }
  EXPECT_EQ(vpu::Rsqrt(0x00000001u, Mode::kIeee), 0x64B504F3u);  // 2^-149 -> 2^74.5
  EXPECT_EQ(vpu::Rsqrt(0x00000001u, Mode::kFtz), vpu::kPlusInf);
  EXPECT_EQ(vpu::Rsqrt(0x80000001u, Mode::kIeee), num::kFp32CanonicalNaN);
  EXPECT_EQ(vpu::Rsqrt(0x80000001u, Mode::kFtz), 0xFF800000u);  // read as -0
}

TEST(VpuSqrtTest, Directed) {
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    SCOPED_TRACE(num::ModeName(m));
    EXPECT_EQ(vpu::Sqrt(0x3F800000u, m), 0x3F800000u);
    EXPECT_EQ(vpu::Sqrt(0x40800000u, m), 0x40000000u);
    EXPECT_EQ(vpu::Sqrt(0x3E800000u, m), 0x3F000000u);
    EXPECT_EQ(vpu::Sqrt(0x40000000u, m), 0x3FB504F3u);  // sqrt(2), correctly rounded
    EXPECT_EQ(vpu::Sqrt(0x40400000u, m), 0x3FDDB3D7u);
    EXPECT_EQ(vpu::Sqrt(0x7F7FFFFFu, m), 0x5F7FFFFFu);
    EXPECT_EQ(vpu::Sqrt(0u, m), 0u);
    EXPECT_EQ(vpu::Sqrt(0x80000000u, m), 0x80000000u);  // -0 -> -0 (IEEE)
    EXPECT_EQ(vpu::Sqrt(0x7F800000u, m), vpu::kPlusInf);
    EXPECT_EQ(vpu::Sqrt(0xFF800000u, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Sqrt(0xBF800000u, m), num::kFp32CanonicalNaN);
  }
  EXPECT_EQ(vpu::Sqrt(0x00000001u, Mode::kIeee), 0x1A3504F3u);  // 2^-149 -> 2^-74.5
  EXPECT_EQ(vpu::Sqrt(0x00000001u, Mode::kFtz), 0u);
  EXPECT_EQ(vpu::Sqrt(0x80000001u, Mode::kFtz), 0x80000000u);
}

TEST(VpuRecipTest, Directed) {
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    SCOPED_TRACE(num::ModeName(m));
    EXPECT_EQ(vpu::Recip(0x3F800000u, m), 0x3F800000u);  // 1
    EXPECT_EQ(vpu::Recip(0xC0000000u, m), 0xBF000000u);  // -2 -> -0.5
    EXPECT_EQ(vpu::Recip(0x40400000u, m), 0x3EAAAAABu);  // 1/3, correctly rounded
    EXPECT_EQ(vpu::Recip(0u, m), vpu::kPlusInf);         // +0 -> +inf
    EXPECT_EQ(vpu::Recip(0x80000000u, m), 0xFF800000u);  // -0 -> -inf
    EXPECT_EQ(vpu::Recip(0xFF800000u, m), 0x80000000u);  // -inf -> -0
    EXPECT_EQ(vpu::Recip(0x7FC00001u, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Recip(0x7F000000u, m), m == Mode::kFtz ? 0u : 0x00400000u);  // 1/2^127
  }
  EXPECT_EQ(vpu::Recip(0x00400000u, Mode::kIeee), 0x7F000000u);    // 1/2^-127 = 2^127
  EXPECT_EQ(vpu::Recip(0x00200000u, Mode::kIeee), vpu::kPlusInf);  // 1/2^-128 overflows
  EXPECT_EQ(vpu::Recip(0x00000001u, Mode::kIeee), vpu::kPlusInf);  // 1/2^-149 overflows
  EXPECT_EQ(vpu::Recip(0x80000001u, Mode::kFtz), 0xFF800000u);     // read as -0
}

TEST(VpuExpTest, Directed) {
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    SCOPED_TRACE(num::ModeName(m));
    EXPECT_EQ(vpu::Exp(0x00000000u, m), vpu::kOne);
    EXPECT_EQ(vpu::Exp(0x80000000u, m), vpu::kOne);
    EXPECT_EQ(vpu::Exp(0x7FC00000u, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Exp(0xFF800001u, m), num::kFp32CanonicalNaN);  // a NaN with a payload
    EXPECT_EQ(vpu::Exp(0x7F800000u, m), vpu::kPlusInf);
    EXPECT_EQ(vpu::Exp(0xFF800000u, m), 0u);
    EXPECT_EQ(vpu::Exp(vpu::kExpOverflow, m), vpu::kPlusInf);
    EXPECT_EQ(vpu::Exp(vpu::kExpOverflow - 1, m), 0x7F7FFF84u);  // 88.7228317: finite
    EXPECT_EQ(vpu::Exp(0xC2D00000u, m), 0u);                     // -104
    EXPECT_EQ(vpu::Exp(0x3F800000u, m), 0x402DF854u);            // e, correctly rounded
    EXPECT_EQ(vpu::Exp(0xBF800000u, m), 0x3EBC5AB2u);            // 1/e, correctly rounded
  }
  // The subnormal range: exp(-88) = 6.05e-39 is subnormal (IEEE) and flushed to +0 (FTZ); a
  // subnormal input is 0 in FTZ mode (exp = 1) and just below 1 or 1 in IEEE mode.
  EXPECT_TRUE(num::IsSubnormal32(vpu::Exp(0xC2B00000u, Mode::kIeee)));
  EXPECT_EQ(vpu::Exp(0xC2B00000u, Mode::kFtz), 0u);
  EXPECT_EQ(vpu::Exp(0x00000001u, Mode::kFtz), vpu::kOne);
  EXPECT_EQ(vpu::Exp(0x80400000u, Mode::kIeee), vpu::kOne);
  // The last input before -104 still gives the smallest subnormal or zero, never garbage.
  EXPECT_LE(vpu::Exp(0xC2CFFFFFu, Mode::kIeee), 1u);
}

// Random fp32 patterns with the classes the order rules turn on made common: zeros of both
// signs, subnormals, infinities, NaNs, equal values and values one apart.
uint32_t Draw(tb::Rng& rng, uint32_t other) {
  switch (rng.U32() % 8) {
    case 0: return rng.U32() & 0x80000000u;                              // +-0
    case 1: return (rng.U32() & 0x80000000u) | (rng.U32() & 0x7FFFFFu);  // subnormal
    case 2: return (rng.U32() & 0x80000000u) | 0x7F800000u;              // +-inf
    case 3: return 0x7F800000u | rng.U32();                              // NaN or inf
    case 4: return other;                                                // equal
    case 5: return other + 1;                                            // one apart
    default: return rng.U32();
  }
}

// The host's reading of the same rules, written apart: NaN-ness, then numeric comparison of
// floats, zeros of both signs ordered by their sign bit.
uint32_t HostMax(uint32_t a, uint32_t b, Mode m, bool max) {
  if (m == Mode::kFtz) a = num::Flush32(a), b = num::Flush32(b);
  const float fa = tb::AsFloat(a), fb = tb::AsFloat(b);
  if (std::isnan(fa) || std::isnan(fb)) return num::kFp32CanonicalNaN;
  if (fa == fb) {  // equal values: only the zeros' signs can differ
    return (std::signbit(fa) == max) ? b : a;
  }
  return (fa > fb) == max ? a : b;
}

TEST(VpuTest, MaxMinReluClipAgainstTheHostsReading) {
  tb::Rng rng(test::TestSeed());
  uint64_t bad = 0;
  const uint64_t n = test::Scaled(1'000'000);
  for (uint64_t i = 0; i < n; ++i) {
    const Mode m = i % 2 ? Mode::kFtz : Mode::kIeee;
    const uint32_t a = rng.U32(), b = Draw(rng, a), c = Draw(rng, b);
    const auto check = [&](const char* what, uint32_t got, uint32_t want) {
      if (got != want && bad++ < 5) {
        ADD_FAILURE() << fmt::format("{}({:#010x}, {:#010x}, {:#010x}) {}: {:#010x}, want {:#010x}",
                                     what, a, b, c, num::ModeName(m), got, want);
      }
    };
    check("max", vpu::Max(a, b, m), HostMax(a, b, m, true));
    check("min", vpu::Min(a, b, m), HostMax(a, b, m, false));
    check("relu", vpu::Relu(a, m), HostMax(a, 0u, m, true));
    check("clip", vpu::Clip(a, b, c, m), HostMax(HostMax(a, b, m, true), c, m, false));
    // IEEE mode: the vector unit's relu is the store path's.
    if (m == Mode::kIeee) check("relu vs num::Relu", vpu::Relu(a, m), num::Relu(a));
  }
  EXPECT_EQ(bad, 0u);
}

// The comparisons against the host's float comparisons of the operands as read (false with a
// NaN, -0 == +0), and select against its rule, on random operands with equal, adjacent and
// special values made common.
TEST(VpuTest, CompareAndSelectAgainstTheHostsReading) {
  tb::Rng rng(test::TestSeed());
  uint64_t bad = 0;
  const uint64_t n = test::Scaled(1'000'000);
  for (uint64_t i = 0; i < n; ++i) {
    const Mode m = i % 2 ? Mode::kFtz : Mode::kIeee;
    const uint32_t a = rng.U32(), b = Draw(rng, a), c = Draw(rng, b);
    const float fa = tb::AsFloat(vpu::Operand(a, m)), fb = tb::AsFloat(vpu::Operand(b, m));
    const auto check = [&](const char* what, uint32_t got, bool want) {
      if (got != (want ? vpu::kOne : 0u) && bad++ < 5) {
        ADD_FAILURE() << fmt::format("{}({:#010x}, {:#010x}) {}: {:#010x}", what, a, b,
                                     num::ModeName(m), got);
      }
    };
    check("gt", vpu::Gt(a, b, m), fa > fb);
    check("ge", vpu::Ge(a, b, m), fa >= fb);
    check("eq", vpu::Eq(a, b, m), fa == fb);
    const float fc = tb::AsFloat(vpu::Operand(c, m));
    const uint32_t want = (fc != 0.0f || std::isnan(fc)) ? a : b;
    if (vpu::Select(c, a, b, m) != want && bad++ < 5) {
      ADD_FAILURE() << fmt::format("select({:#010x}, {:#010x}, {:#010x}) {}", c, a, b,
                                   num::ModeName(m));
    }
  }
  EXPECT_EQ(bad, 0u);
}

// Lane reductions: the pairwise order (a case where it differs from left to right), sums of
// small integers (exact in any order) against their integer sum, the maximum against the host's
// over the same lanes, identities (a lane of -0, -inf, NaN), and the lane counts 1 .. 128.
TEST(VpuTest, LaneReductions) {
  // 1 + 2^-24 + 2^-24 + 2^-24: pairwise (1 + 2^-24) + (2^-24 + 2^-24) = 1 + 2^-23; left to right
  // every step rounds back to 1.
  const uint32_t tie[4] = {vpu::kOne, 0x33800000u, 0x33800000u, 0x33800000u};
  EXPECT_EQ(vpu::ReduceSum(tie, 4, Mode::kIeee), 0x3F800001u);
  // (1 + 2^-24) + (-1 + 2^-24) = 1 - (1 - 2^-24) = 2^-24; lanes 0 and 2 first would give 2^-23.
  const uint32_t pairs[4] = {vpu::kOne, 0x33800000u, vpu::kMinusOne, 0x33800000u};
  EXPECT_EQ(vpu::ReduceSum(pairs, 4, Mode::kIeee), 0x33800000u);
  const uint32_t zeros[3] = {0x80000000u, 0x80000000u, 0x80000000u};
  EXPECT_EQ(vpu::ReduceSum(zeros, 3, Mode::kIeee), 0x80000000u);  // -0 padding keeps -0
  EXPECT_EQ(vpu::ReduceMax(zeros, 3, Mode::kIeee), 0x80000000u);
  const uint32_t with_nan[3] = {vpu::kOne, 0x7FC00001u, 0xFF800000u};
  EXPECT_EQ(vpu::ReduceMax(with_nan, 3, Mode::kIeee), num::kFp32CanonicalNaN);
  EXPECT_EQ(vpu::ReduceSum(with_nan, 3, Mode::kIeee), num::kFp32CanonicalNaN);
  const uint32_t ninf[1] = {0xFF800000u};
  EXPECT_EQ(vpu::ReduceMax(ninf, 1, Mode::kIeee), 0xFF800000u);
  EXPECT_THROW(vpu::ReduceSum(ninf, 0, Mode::kIeee), std::invalid_argument);
  tb::Rng rng(test::TestSeed());
  for (int n = 1; n <= 128; ++n) {
    for (Mode m : {Mode::kIeee, Mode::kFtz}) {
      uint32_t ints[128], any[128];
      int64_t sum = 0;
      float host_max = -INFINITY;
      for (int i = 0; i < n; ++i) {
        const int v = rng.Range(-1000, 1000);
        ints[i] = tb::AsBits(static_cast<float>(v));
        sum += v;
        any[i] = rng.U32() & 0xBFFFFFFFu;  // no NaN or infinity
        host_max = std::max(host_max, tb::AsFloat(vpu::Operand(any[i], m)));
      }
      const uint32_t want_sum = sum == 0 ? 0u : tb::AsBits(static_cast<float>(sum));
      EXPECT_EQ(vpu::ReduceSum(ints, n, m), want_sum) << n;
      const uint32_t got = vpu::ReduceMax(any, n, m);
      EXPECT_EQ(tb::AsFloat(got), host_max) << n;  // a zero's sign: checked above
    }
  }
}

TEST(VpuTest, MaxMinZerosAndNaNs) {
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    EXPECT_EQ(vpu::Max(0x80000000u, 0u, m), 0u);
    EXPECT_EQ(vpu::Max(0u, 0x80000000u, m), 0u);
    EXPECT_EQ(vpu::Min(0x80000000u, 0u, m), 0x80000000u);
    EXPECT_EQ(vpu::Min(0u, 0x80000000u, m), 0x80000000u);
    EXPECT_EQ(vpu::Max(0x7FC00001u, 0x3F800000u, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Min(0x3F800000u, 0xFFC00000u, m), num::kFp32CanonicalNaN);
    EXPECT_EQ(vpu::Relu(0x80000000u, m), 0u);
    EXPECT_EQ(vpu::Clip(0x40C00000u, 0u, 0x40C00000u, m), 0x40C00000u);  // relu6(6) = 6
    EXPECT_EQ(vpu::Clip(0x40E00000u, 0u, 0x40C00000u, m), 0x40C00000u);  // relu6(7) = 6
  }
  // A subnormal is itself in IEEE mode and a zero of its sign in FTZ mode.
  EXPECT_EQ(vpu::Max(0x00000001u, 0u, Mode::kIeee), 0x00000001u);
  EXPECT_EQ(vpu::Max(0x00000001u, 0x80000000u, Mode::kFtz), 0u);
  EXPECT_EQ(vpu::Min(0x80000001u, 0u, Mode::kFtz), 0x80000000u);
}

// leaky_relu against the host: x < 0 ? fmaf(x, alpha, -0) : x on the operands as read.
TEST(VpuTest, LeakyRelu) {
  tb::Rng rng(test::TestSeed());
  uint64_t bad = 0;
  const uint64_t n = test::Scaled(1'000'000);
  for (uint64_t i = 0; i < n; ++i) {
    const Mode m = i % 2 ? Mode::kFtz : Mode::kIeee;
    const uint32_t x = Draw(rng, rng.U32()), alpha = i % 3 ? 0x3C23D70Au /* 0.01 */ : rng.U32();
    const uint32_t xr = m == Mode::kFtz ? num::Flush32(x) : x;
    const float fx = tb::AsFloat(xr);
    uint32_t want = std::isnan(fx) ? num::kFp32CanonicalNaN
                    : fx < 0       ? tb::HostFma32(xr, alpha, 0x80000000u, m)
                                   : xr;
    if (num::IsNaN32(want)) want = num::kFp32CanonicalNaN;
    const uint32_t got = vpu::LeakyRelu(x, alpha, m);
    if (got != want && bad++ < 5) {
      ADD_FAILURE() << fmt::format("leaky_relu({:#010x}, {:#010x}) {}: {:#010x}, want {:#010x}", x,
                                   alpha, num::ModeName(m), got, want);
    }
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(vpu::LeakyRelu(0x80000000u, 0x3C23D70Au, Mode::kIeee), 0x80000000u);  // -0 stays
  EXPECT_EQ(vpu::LeakyRelu(0xC2C80000u, 0x3C23D70Au, Mode::kIeee), 0xBF800000u);  // -100 -> -1
}

}  // namespace
}  // namespace tpu
