// SPDX-License-Identifier: Apache-2.0
// The HBM timing presets exist twice: in the RTL (tpu_hbm_pkg::timing, rtl/hbm/tpu_hbm_pkg.sv)
// and in the device model (hbm::Timing, models/src/hbm_device.cpp). This test reads every value
// of every preset out of the RTL (through the test-only module tb/rtl/tpu_hbm_timing_probe.sv)
// and compares it with the C++ table, value by value.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "Vhbm_timing.h"
#include "test_support.h"
#include "tpu/hbm/hbm_device.h"

namespace tpu {
namespace {

// The fields of hbm::Timing in the order of tpu_hbm_pkg's Timing* indices.
struct Field {
  const char* name;
  int hbm::Timing::*member;
};
constexpr std::array<Field, 22> kFields = {{
    {"nCL", &hbm::Timing::cl},         {"nCWL", &hbm::Timing::cwl},
    {"nBL", &hbm::Timing::bl},         {"nRCDRD", &hbm::Timing::rcdrd},
    {"nRCDWR", &hbm::Timing::rcdwr},   {"nRP", &hbm::Timing::rp},
    {"nRAS", &hbm::Timing::ras},       {"nRC", &hbm::Timing::rc},
    {"nCCDS", &hbm::Timing::ccds},     {"nCCDL", &hbm::Timing::ccdl},
    {"nRRDS", &hbm::Timing::rrds},     {"nRRDL", &hbm::Timing::rrdl},
    {"nFAW", &hbm::Timing::faw},       {"nWR", &hbm::Timing::wr},
    {"nRTP", &hbm::Timing::rtp},       {"nWTRS", &hbm::Timing::wtrs},
    {"nWTRL", &hbm::Timing::wtrl},     {"nRFC", &hbm::Timing::rfc},
    {"nRFCsb", &hbm::Timing::rfcsb},   {"nREFI", &hbm::Timing::refi},
    {"nREFIsb", &hbm::Timing::refisb}, {"nRREFD", &hbm::Timing::rrefd},
}};

// tpu_hbm_pkg's presets in order (Preset2000, Preset2400, PresetTest) and their C++ names.
struct Preset {
  const char* name;
  hbm::Timing timing;
};
const std::array<Preset, 3> kPresets = {{
    {"2000", hbm::Timing::Hbm2_2000()},
    {"2400", hbm::Timing::Hbm2_2400()},
    {"test", hbm::Timing::CheckerTest()},
}};

TEST(HbmTimingTest, RtlPresetsEqualTheDeviceModels) {
  tb::SimCtrl<Vhbm_timing> sim("hbm_timing", 1, test::TestTrace());
  Vhbm_timing& m = sim.dut();
  m.eval();
  ASSERT_EQ(m.num_presets_o, kPresets.size()) << "tpu_hbm_pkg::NumPresets";
  ASSERT_EQ(m.num_timings_o, kFields.size()) << "tpu_hbm_pkg::NumTimings";
  int compared = 0;
  for (size_t p = 0; p < kPresets.size(); ++p) {
    for (size_t f = 0; f < kFields.size(); ++f) {
      m.preset_i = static_cast<uint8_t>(p);
      m.field_i = static_cast<uint8_t>(f);
      m.eval();
      const int want = kPresets[p].timing.*kFields[f].member;
      EXPECT_EQ(static_cast<int>(m.value_o), want)
          << "preset " << kPresets[p].name << ", " << kFields[f].name
          << ": tpu_hbm_pkg::timing gives " << m.value_o << ", hbm::Timing " << want;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 66);
  // An index past the table reads 0, so a field added to the RTL without a C++ twin shows up
  // in NumTimings above rather than silently here.
  m.preset_i = 0;
  m.field_i = static_cast<uint8_t>(kFields.size());
  m.eval();
  EXPECT_EQ(m.value_o, 0u);
  EXPECT_FALSE(sim.AssertionFailed());
}

}  // namespace
}  // namespace tpu
