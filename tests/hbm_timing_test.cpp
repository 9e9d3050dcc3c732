// SPDX-License-Identifier: Apache-2.0
// The HBM timing presets are one table (rtl/hbm/hbm_presets.json) written twice by
// scripts/gen_hbm.py: for the RTL (tpu_hbm_pkg::timing, rtl/hbm/tpu_hbm_pkg.sv) and for C++
// (hbm::Timing and hbm::kPresets, tpu/hbm/hbm_presets.h). This test reads every value of every
// preset out of the Verilated RTL (through the test-only module tb/rtl/tpu_hbm_timing_probe.sv)
// and compares it with what hbm::Timing::Preset gives, value by value.
#include <gtest/gtest.h>

#include <cstdint>

#include "Vhbm_timing.h"
#include "test_support.h"
#include "tpu/hbm/hbm_device.h"

namespace tpu {
namespace {

TEST(HbmTimingTest, RtlPresetsEqualTheDeviceModels) {
  tb::SimCtrl<Vhbm_timing> sim("hbm_timing", 1, test::TestTrace());
  Vhbm_timing& m = sim.dut();
  m.eval();
  ASSERT_EQ(m.num_presets_o, hbm::kNumPresets) << "tpu_hbm_pkg::NumPresets";
  ASSERT_EQ(m.num_timings_o, hbm::kNumTimingFields) << "tpu_hbm_pkg::NumTimings";
  int compared = 0;
  for (int p = 0; p < hbm::kNumPresets; ++p) {
    const hbm::Timing t = hbm::Timing::Preset(p);
    EXPECT_EQ(hbm::Timing::ByName(hbm::kPresets[p].name).rc, t.rc);
    for (int f = 0; f < hbm::kNumTimingFields; ++f) {
      m.preset_i = static_cast<uint8_t>(p);
      m.field_i = static_cast<uint8_t>(f);
      m.eval();
      const int want = t.*hbm::kTimingFields[f];
      EXPECT_EQ(static_cast<int>(m.value_o), want)
          << "preset " << hbm::kPresets[p].name << ", " << hbm::kTimingFieldNames[f]
          << ": tpu_hbm_pkg::timing gives " << m.value_o << ", hbm::Timing " << want;
      ++compared;
    }
  }
  EXPECT_EQ(compared, hbm::kNumPresets * hbm::kNumTimingFields);
  // The speed bins' values that the spec and Ramulator give, as a check of the table itself.
  EXPECT_EQ(hbm::Timing::Preset2000().rc, 48);
  EXPECT_EQ(hbm::Timing::Preset2400().refi, 4682);
  EXPECT_EQ(hbm::Timing::PresetTest().faw, 24);
  // An index past the table reads 0, so a field added to the RTL without a C++ twin shows up
  // in NumTimings above rather than silently here.
  m.preset_i = 0;
  m.field_i = static_cast<uint8_t>(hbm::kNumTimingFields);
  m.eval();
  EXPECT_EQ(m.value_o, 0u);
  EXPECT_FALSE(sim.AssertionFailed());
}

}  // namespace
}  // namespace tpu
