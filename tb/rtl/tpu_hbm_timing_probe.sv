// SPDX-License-Identifier: Apache-2.0
// Test-only module: reads the HBM timing presets of tpu_hbm_pkg out at run time, so that
// tests/hbm_timing_test.cpp can compare them with the C++ table (hbm::Timing).
module tpu_hbm_timing_probe (
  input  logic [7:0]  preset_i,
  input  logic [7:0]  field_i,
  output logic [31:0] value_o,
  output logic [7:0]  num_presets_o,
  output logic [7:0]  num_timings_o
);
  assign value_o       = tpu_hbm_pkg::timing(32'(preset_i), 32'(field_i));
  assign num_presets_o = 8'(tpu_hbm_pkg::NumPresets);
  assign num_timings_o = 8'(tpu_hbm_pkg::NumTimings);
endmodule
