// SPDX-License-Identifier: Apache-2.0
// HBM2 facts shared by the HBM modules: the timing presets (the one table of them in the RTL;
// models/src/hbm_device.cpp holds the C++ one, and hbm_timing_test checks the two equal).
package tpu_hbm_pkg;

  // Presets (the `Preset` parameter of tpu_hbm_subsys, _channel, _pc_ctrl, _single, tpu_accel).
  localparam int unsigned Preset2000 = 0;  // the 2.0 Gb/s speed bin (default)
  localparam int unsigned Preset2400 = 1;  // the 2.4 Gb/s speed bin
  localparam int unsigned PresetTest = 2;  // 2.0 Gb/s with the implied rules pulled apart
  localparam int unsigned NumPresets = 3;

  // Timing values, in cycles of tCK: the field argument of timing(). The order is the order of
  // the table below and of the C++ check (tests/hbm_timing_test.cpp).
  localparam int unsigned TimingCl     = 0;   // RD to first read data (RL)
  localparam int unsigned TimingCwl    = 1;   // WR to first write data (WL)
  localparam int unsigned TimingBl     = 2;   // data-bus cycles per burst
  localparam int unsigned TimingRcdRd  = 3;   // ACT to RD, same bank
  localparam int unsigned TimingRcdWr  = 4;   // ACT to WR, same bank
  localparam int unsigned TimingRp     = 5;   // PRE to ACT, same bank
  localparam int unsigned TimingRas    = 6;   // ACT to PRE, same bank
  localparam int unsigned TimingRc     = 7;   // ACT to ACT, same bank
  localparam int unsigned TimingCcdS   = 8;   // column to column, other bank group
  localparam int unsigned TimingCcdL   = 9;   // column to column, same bank group
  localparam int unsigned TimingRrdS   = 10;  // ACT to ACT, other bank group
  localparam int unsigned TimingRrdL   = 11;  // ACT to ACT, same bank group
  localparam int unsigned TimingFaw    = 12;  // four-activate window
  localparam int unsigned TimingWr     = 13;  // end of write data to PRE
  localparam int unsigned TimingRtp    = 14;  // RD to PRE
  localparam int unsigned TimingWtrS   = 15;  // end of write data to RD, other bank group
  localparam int unsigned TimingWtrL   = 16;  // end of write data to RD, same bank group
  localparam int unsigned TimingRfc    = 17;  // REFab to ACT or REF
  localparam int unsigned TimingRfcSb  = 18;  // REFpb to ACT of that bank
  localparam int unsigned TimingRefi   = 19;  // average REFab interval
  localparam int unsigned TimingRefiSb = 20;  // average REFpb interval (nREFI / 16)
  localparam int unsigned TimingRrefd  = 21;  // REFpb to REFpb or to ACT of another bank
  localparam int unsigned NumTimings   = 22;

  // One value of each preset, chosen by the preset.
  function automatic int unsigned pick(input int unsigned preset, input int unsigned v2000,
                                       input int unsigned v2400, input int unsigned vtest);
    pick = (preset == Preset2400) ? v2400 : (preset == PresetTest) ? vtest : v2000;
  endfunction

  // The presets: value `field` of preset `preset` (0 for an unknown field).
  function automatic int unsigned timing(input int unsigned preset, input int unsigned field);
    case (field)
      //                            2000  2400  test
      TimingCl:     timing = pick(preset,   14,   17,   14);
      TimingCwl:    timing = pick(preset,    5,    6,    5);
      TimingBl:     timing = pick(preset,    2,    2,    2);
      TimingRcdRd:  timing = pick(preset,   14,   17,   14);
      TimingRcdWr:  timing = pick(preset,   12,   14,   12);
      TimingRp:     timing = pick(preset,   14,   17,   14);
      TimingRas:    timing = pick(preset,   34,   40,   34);
      TimingRc:     timing = pick(preset,   48,   57,   52);
      TimingCcdS:   timing = pick(preset,    2,    2,    2);
      TimingCcdL:   timing = pick(preset,    4,    4,    4);
      TimingRrdS:   timing = pick(preset,    4,    5,    4);
      TimingRrdL:   timing = pick(preset,    4,    5,    6);
      TimingFaw:    timing = pick(preset,   15,   19,   24);
      TimingWr:     timing = pick(preset,   16,   19,   16);
      TimingRtp:    timing = pick(preset,    5,    6,    5);
      TimingWtrS:   timing = pick(preset,    6,    8,    6);
      TimingWtrL:   timing = pick(preset,    8,   10,    8);
      TimingRfc:    timing = pick(preset,  350,  421,  350);
      TimingRfcSb:  timing = pick(preset,  160,  193,  160);
      TimingRefi:   timing = pick(preset, 3900, 4682, 3900);
      TimingRefiSb: timing = pick(preset,  243,  292,  243);
      TimingRrefd:  timing = pick(preset,    8,   10,    8);
      default:      timing = 0;
    endcase
  endfunction

endpackage
