// SPDX-License-Identifier: Apache-2.0
// The vector unit's micro-programs (rtl/vpu/ucode.json) run by the interpreter tpu/tb/vpu_ucode.h
// against the golden model's operations (tpu/vpu.h), bit for bit, in both modes: every 4099th
// fp32 pattern and the specials for the functions, random operands drawn to matter for the
// elementwise operations. Every program of the ROM must have its golden counterpart here.
#include "tpu/tb/vpu_ucode.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"
#include "tpu/tb/mac_vectors.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/vpu_ops.h"
#include "tpu/vpu.h"

namespace tpu {
namespace {

using num::Mode;
using tb::ucode::Golden;
using tb::ucode::Unary;

// The ROM's programs are the instruction set's vector operations, in its order: VOP's op is the
// program's number in the sequencer (scripts/gen_ucode.py refuses another order too).
TEST(VpuUcodeTest, ProgramsAreTheVectorOpsInOrder) {
  ASSERT_EQ(std::size(tb::ucode::kPrograms), size_t(isa::kNumVectorOps));
  for (int i = 0; i < isa::kNumVectorOps; ++i) {
    EXPECT_STREQ(tb::ucode::kPrograms[i].name, isa::kVectorOps[size_t(i)].name) << i;
  }
}

class VpuUcodeProgramTest : public ::testing::TestWithParam<std::string> {};

TEST_P(VpuUcodeProgramTest, MatchesTheGoldenModel) {
  const std::string name = GetParam();
  const tb::ucode::Program& prog = tb::ucode::FindProgram(name);
  const Golden golden = tb::ucode::GoldenOf(name);
  tb::Rng rng(test::TestSeed());
  uint64_t checked = 0, bad = 0;
  const auto check = [&](uint32_t a, uint32_t b, uint32_t c, Mode m) {
    ++checked;
    const uint32_t want = golden(a, b, c, m), got = tb::ucode::Run(prog, a, b, c, m);
    if (want != got && bad++ < 5) {
      ADD_FAILURE() << fmt::format(
          "{}({:#010x}, {:#010x}, {:#010x}) {}: micro-program {:#010x}, "
          "golden {:#010x}",
          name, a, b, c, num::ModeName(m), got, want);
    }
  };
  for (Mode m : {Mode::kIeee, Mode::kFtz}) {
    for (uint32_t a : tb::Fp32Specials()) {
      for (uint32_t b : tb::Fp32Specials()) {
        for (uint32_t c : tb::Fp32Specials()) check(a, b, c, m);
      }
    }
    if (Unary(name)) {
      for (uint64_t x = rng.U32() % 4099; x <= 0xFFFFFFFFu; x += 4099) {
        check(static_cast<uint32_t>(x), rng.U32(), rng.U32(), m);
      }
    } else {
      for (uint64_t i = 0; i < test::Scaled(300'000); ++i) {
        const int center = 1 + static_cast<int>(rng.U32() % 254);
        const uint32_t a = tb::DrawFp32(rng, center), b = tb::DrawFp32(rng, center);
        const uint32_t c = i % 3 == 0 ? (rng.Bit() ? a : b) : tb::DrawFp32(rng, center);
        check(a, i % 5 == 0 ? a : b, c, m);  // equal operands made common
      }
    }
  }
  fmt::print("{}: {} micro-ops, {} inputs checked\n", name, prog.length, checked);
  EXPECT_EQ(bad, 0u);
}

std::vector<std::string> ProgramNames() {
  std::vector<std::string> v;
  for (const tb::ucode::Program& p : tb::ucode::kPrograms) v.emplace_back(p.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Programs, VpuUcodeProgramTest, ::testing::ValuesIn(ProgramNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tpu
