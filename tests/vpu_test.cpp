// SPDX-License-Identifier: Apache-2.0
// The vector unit's operations in the golden model (tpu/vpu.h; docs/numerics.md, "The vector
// unit"): each against the same algorithm run on the host's fmaf (bits), and against the exact
// function (its error bound). The 2^32 sweeps are tpu_sweep's vpu-* (make verify-exhaustive).
#include "tpu/vpu.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

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

// Every 4099th fp32 pattern from a seeded offset (about a million inputs, every binade), in both
// modes: the golden exp equals the host-fma run bit for bit, and in IEEE mode its error is within
// the contract's bound.
TEST(VpuExpTest, SampledInputs) {
  tb::Rng rng(test::TestSeed());
  const uint32_t start = rng.U32() % 4099;
  double worst = 0;
  uint32_t worst_x = 0;
  uint64_t bad = 0, checked = 0;
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    for (uint64_t i = start; i <= 0xFFFFFFFFu; i += 4099) {
      const auto x = static_cast<uint32_t>(i);
      const uint32_t g = vpu::Exp(x, m);
      const uint32_t h = HostExp(x, m);
      ++checked;
      if (g != h && bad++ < 5) {
        ADD_FAILURE() << fmt::format("exp({:#010x}) {}: golden {:#010x}, host fma {:#010x}", x,
                                     num::ModeName(m), g, h);
      }
      if (m == Mode::kIeee && !num::IsNaN32(x)) {
        const double err = tb::ExpUlpError(x, g);
        if (err > worst) worst = err, worst_x = x;
      }
    }
  }
  fmt::print("exp: {} inputs, worst error {:.4f} ulp at {:#010x} (bound {})\n", checked, worst,
             worst_x, vpu::kExpMaxUlp);
  EXPECT_EQ(bad, 0u);
  EXPECT_LE(worst, vpu::kExpMaxUlp) << fmt::format("at x = {:#010x}", worst_x);
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

}  // namespace
}  // namespace tpu
