// SPDX-License-Identifier: Apache-2.0
// Project-wide types and constants: the number formats, kept as data (conventions rule 6).
package tpu_pkg;

  // bfloat16: operands of the MAC, activations and weights.
  localparam int unsigned Bf16ExpBits = 8;
  localparam int unsigned Bf16ManBits = 7;

  // binary32: accumulators and partial sums.
  localparam int unsigned Fp32ExpBits = 8;
  localparam int unsigned Fp32ManBits = 23;

  // Arithmetic mode selection of a numerics unit: decided at run time by its ftz_i input, or
  // fixed at build time (the unit then ignores ftz_i and synthesizes only that mode's logic).
  localparam int unsigned ModeRuntime = 0;
  localparam int unsigned ModeIeee    = 1;
  localparam int unsigned ModeFtz     = 2;

  // The matrix unit's cycle classes (tpu_mxu perf_class_o): what the unit did in a cycle.
  localparam int unsigned MxuClassBits       = 3;
  localparam logic [2:0]  MxuClassInactive   = 3'd0;  // idle: nothing queued or in flight
  localparam logic [2:0]  MxuClassBusy       = 3'd1;  // a row issued
  localparam logic [2:0]  MxuClassWeightLoad = 3'd2;  // no row ready: a weight tile is loading
  localparam logic [2:0]  MxuClassStarved    = 3'd3;  // a row ready, no activation beat
  localparam logic [2:0]  MxuClassHazard     = 3'd4;  // a row waits for an accumulator write
  localparam logic [2:0]  MxuClassDrain      = 3'd5;  // nothing left to issue, results in flight

  // The accumulators' banks (tpu_accumulators): rows 0 .. acc_bank_rows(depth) - 1 and the rest,
  // each with its own write port, so that a load into one bank is written beside the array's
  // results in the other (the host's double-buffered halves). A depth of 1 is one bank.
  function automatic int unsigned acc_bank_rows(input int unsigned depth);
    acc_bank_rows = (depth >= 2) ? depth / 2 : depth;
  endfunction

  // HBM2 memory-side commands (tpu_hbm_* modules). Row bus: ACT, PRE, PREA, REFab, REFpb;
  // column bus: RD, RDA, WR, WRA. Plain constants (not an enum) so Yosys 0.23 reads them.
  localparam int unsigned HbmRowCmdBits = 3;
  localparam logic [2:0] HbmAct   = 3'd0;
  localparam logic [2:0] HbmPre   = 3'd1;
  localparam logic [2:0] HbmPreA  = 3'd2;
  localparam logic [2:0] HbmRefAb = 3'd3;
  localparam logic [2:0] HbmRefPb = 3'd4;
  localparam int unsigned HbmColCmdBits = 2;
  localparam logic [1:0] HbmRd    = 2'd0;
  localparam logic [1:0] HbmRda   = 2'd1;
  localparam logic [1:0] HbmWr    = 2'd2;
  localparam logic [1:0] HbmWra   = 2'd3;

  // AXI4 burst types and responses.
  localparam logic [1:0] AxiBurstFixed = 2'b00;
  localparam logic [1:0] AxiBurstIncr  = 2'b01;
  localparam logic [1:0] AxiBurstWrap  = 2'b10;
  localparam logic [1:0] AxiRespOkay   = 2'b00;
  localparam logic [1:0] AxiRespSlvErr = 2'b10;

endpackage
