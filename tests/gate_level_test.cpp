// SPDX-License-Identifier: Apache-2.0
// Gate-level check: the Yosys netlists of the MAC (combinational and 3-stage) simulated against
// the RTL on the same vectors, bit for bit, both modes.
#include <gtest/gtest.h>

#include <cstdint>

#include "Vgl_mac_p0.h"
#include "Vgl_mac_p3.h"
#include "Vmac_p0.h"
#include "Vmac_p3.h"
#include "test_support.h"
#include "tpu/numerics.h"
#include "tpu/tb/mac_harness.h"
#include "tpu/tb/mac_vectors.h"

namespace tpu {
namespace {

using num::Mode;
using tb::MacVector;

// Streams the same vectors (with the same valid gaps) into the RTL and the netlist and compares
// their outputs cycle by cycle.
template <class Rtl, class Gl>
void CompareNetlist(const char* name) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  tb::SimCtrl<Rtl> rtl(std::string(name) + "_rtl", 100'000'000);
  tb::SimCtrl<Gl> gl(std::string(name) + "_gl", 100'000'000, test::TestTrace());
  rtl.Reset();
  gl.Reset();
  tb::Scoreboard sb(std::string(name) + " netlist vs RTL");
  std::vector<MacVector> vs;
  tb::CornerCross([&](const MacVector& v) { vs.push_back(v); });
  tb::FusedDirected([&](const MacVector& v) { vs.push_back(v); });
  for (uint64_t i = 0; i < test::Scaled(1'000'000); ++i) {
    const uint16_t a = rng.U16();
    const uint16_t b = rng.U16();
    vs.push_back({a, b, tb::DrawC(rng, a, b, i % 2 ? tb::CPolicy::kMatter : tb::CPolicy::kCancel)});
  }
  uint64_t valid_out = 0;
  for (size_t i = 0; i < vs.size() + 8; ++i) {
    const bool valid = i < vs.size() && rng.Range(0, 7) != 0;
    const MacVector v = i < vs.size() ? vs[i] : MacVector{0, 0, 0};
    const bool ftz = rng.Bit();
    rtl.dut().in_valid_i = gl.dut().in_valid_i = valid;
    rtl.dut().a_i = gl.dut().a_i = v.a;
    rtl.dut().b_i = gl.dut().b_i = v.b;
    rtl.dut().c_i = gl.dut().c_i = v.c;
    rtl.dut().ftz_i = gl.dut().ftz_i = ftz;
    rtl.RisingEdge();
    gl.RisingEdge();
    ASSERT_EQ(rtl.dut().out_valid_o, gl.dut().out_valid_o) << "cycle " << rtl.cycle();
    if (rtl.dut().out_valid_o) {
      ++valid_out;
      sb.Check(i, fmt::format("cycle {}", rtl.cycle()), rtl.dut().res_o, gl.dut().res_o);
    }
    rtl.FallingEdge();
    gl.FallingEdge();
  }
  EXPECT_GT(valid_out, vs.size() / 2);
  EXPECT_EQ(sb.mismatches(), 0u) << sb.Summary();
}

TEST(GateLevelTest, CombinationalNetlist) {
  CompareNetlist<Vmac_p0, Vgl_mac_p0>("mac_p0");
}
TEST(GateLevelTest, ThreeStageNetlist) {
  CompareNetlist<Vmac_p3, Vgl_mac_p3>("mac_p3");
}

}  // namespace
}  // namespace tpu
