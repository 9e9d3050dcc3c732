// SPDX-License-Identifier: Apache-2.0
// One processing element of the weight-stationary array: psum_o = mac(act, w[tag], psum_i).
//
// Data moves through the PE in three directions, each entering a register first:
//   west → east    the activation, its valid bit and its weight-bank tag (one register)
//   north → south  the partial sum (one register, then the MAC's PipeRegs-1 cycles)
//   north → south  weight writes (PipeRegs transit registers, so they keep pace with the psums)
// Two weight banks: a write lands in the bank it names when its row index is this PE's row;
// the MAC reads the bank the activation's tag names. The tag travels with the activation, so
// the switch to a new weight tile moves through the array as a diagonal wavefront with the
// first row that uses it, and loading one bank never disturbs a computation on the other
// (the controller orders the two streams; see tpu_mxu_ctrl).
`include "tpu_assert.svh"

module tpu_pe #(
  parameter int unsigned ExpBits    = tpu_pkg::Bf16ExpBits,
  parameter int unsigned InManBits  = tpu_pkg::Bf16ManBits,
  parameter int unsigned AccManBits = tpu_pkg::Fp32ManBits,
  parameter int unsigned PipeRegs   = 1,   // MAC latency P, 1..3
  parameter int unsigned ModeSel    = tpu_pkg::ModeRuntime,
  parameter int unsigned RowW       = 4,   // width of a weight write's row index
  localparam int unsigned InW       = 1 + ExpBits + InManBits,
  localparam int unsigned AccW      = 1 + ExpBits + AccManBits
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic            ftz_i,
  input  logic [RowW-1:0] row_i,   // this PE's row (a constant; a port, not a parameter, so that
                                   // every PE of an array is the same module)
  // Activation, from the west neighbour (or the row skew) and on to the east
  input  logic            act_valid_i,
  input  logic            act_tag_i,
  input  logic [InW-1:0]  act_i,
  output logic            act_valid_o,
  output logic            act_tag_o,
  output logic [InW-1:0]  act_o,
  // Partial sum, from the north neighbour (or the accumulators) and on to the south
  input  logic            psum_valid_i,
  input  logic [AccW-1:0] psum_i,
  output logic            psum_valid_o,
  output logic [AccW-1:0] psum_o,
  // Weight writes, from the north and on to the south
  input  logic            w_valid_i,
  input  logic            w_bank_i,
  input  logic [RowW-1:0] w_row_i,
  input  logic [InW-1:0]  w_i,
  output logic            w_valid_o,
  output logic            w_bank_o,
  output logic [RowW-1:0] w_row_o,
  output logic [InW-1:0]  w_o
);

  if (PipeRegs < 1 || PipeRegs > 3) begin : gen_bad_pipe
    $error("tpu_pe: PipeRegs must be 1..3 (a combinational MAC would chain through the column)");
  end

  // ---------------------------------------------------------------------------------------------
  // Input registers: whatever enters the PE is registered first (the activation with its valid
  // bit and tag, the partial sum, the weight write), and the PE works on the registered values.
  // So an input of a PE, and of a tile of PEs, feeds flip-flops only, and every output comes
  // from this PE's registers (through the MAC for the partial sum).
  // ---------------------------------------------------------------------------------------------
  logic            act_valid_q, act_tag_q, psum_valid_q, wq_valid, wq_bank;
  logic [InW-1:0]  act_q, wq;
  logic [AccW-1:0] psum_q;
  logic [RowW-1:0] wq_row;

  tpu_pipe_reg #(.Width(1 + InW), .Enable(1'b1)) u_act (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .valid_i(act_valid_i),
    .data_i ({act_tag_i, act_i}),
    .valid_o(act_valid_q),
    .data_o ({act_tag_q, act_q})
  );

  tpu_pipe_reg #(.Width(AccW), .Enable(1'b1)) u_psum (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .valid_i(psum_valid_i),
    .data_i (psum_i),
    .valid_o(psum_valid_q),
    .data_o (psum_q)
  );

  tpu_pipe_reg #(.Width(1 + RowW + InW), .Enable(1'b1)) u_w (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .valid_i(w_valid_i),
    .data_i ({w_bank_i, w_row_i, w_i}),
    .valid_o(wq_valid),
    .data_o ({wq_bank, wq_row, wq})
  );

  // The partial sum's valid bit only loads its register: the MAC's valid is the activation's,
  // which arrives with it (a_act_meets_psum), so the registered copy goes unused.
  logic unused_psum_valid;
  assign unused_psum_valid = psum_valid_q;

  assign act_valid_o = act_valid_q;
  assign act_tag_o   = act_tag_q;
  assign act_o       = act_q;

  // ---------------------------------------------------------------------------------------------
  // Weight banks, and the rest of the weight write's transit (PipeRegs registers in all, so it
  // keeps pace with the partial sums)
  // ---------------------------------------------------------------------------------------------
  logic [InW-1:0] w0_q, w1_q;
  logic           w_hit;

  assign w_hit = wq_valid && (wq_row == row_i);

  always_ff @(posedge clk_i) begin
    if (w_hit && !wq_bank) w0_q <= wq;
    if (w_hit &&  wq_bank) w1_q <= wq;
  end

  tpu_delay #(.Width(1 + RowW + InW), .Depth(PipeRegs - 1)) u_w_transit (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .valid_i(wq_valid),
    .data_i ({wq_bank, wq_row, wq}),
    .valid_o(w_valid_o),
    .data_o ({w_bank_o, w_row_o, w_o})
  );

  // ---------------------------------------------------------------------------------------------
  // The MAC, on the registered activation and partial sum: its own registers take the other
  // P-1 of the P cycles, and its result leaves the PE as the partial sum (a simulator evaluates
  // each MAC as one combinational block when P = 1).
  // ---------------------------------------------------------------------------------------------
  tpu_mac #(
    .ExpBits   (ExpBits),
    .InManBits (InManBits),
    .AccManBits(AccManBits),
    .PipeRegs  (PipeRegs - 1),
    .ModeSel   (ModeSel)
  ) u_mac (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .in_valid_i (act_valid_q),
    .ftz_i      (ftz_i),
    .a_i        (act_q),
    .b_i        (act_tag_q ? w1_q : w0_q),
    .c_i        (psum_q),
    .out_valid_o(psum_valid_o),
    .res_o      (psum_o)
  );

  // ---------------------------------------------------------------------------------------------
  // Assertions (their messages name the row, not the instance: rtl/include/tpu_assert.svh)
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // Immediate assertions in a clocked block, not concurrent ones: they read the values before
  // the clock edge, as a concurrent assertion's sampled values are, but Verilator 5.006 keeps a
  // sampled copy of every signal a concurrent assertion reads, named after the instance, which
  // gives every PE its own copy of the code (docs/mac.md, "Simulation speed").
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // The skews line every activation up with its partial sum: a mismatch here means the
      // controller's or the array's timing is wrong, and the result would be silently garbage.
      a_act_meets_psum: assert (act_valid_i == psum_valid_i)
        else `TPU_FAIL($sformatf("tpu_pe row %0d: activation valid %0b but partial-sum valid %0b",
                                 row_i, act_valid_i, psum_valid_i))
      // A weight write never lands in the bank an activation reads in the same cycle: the
      // controller only rewrites a bank no issued-but-unfinished row uses.
      a_bank_not_busy: assert (!(w_hit && act_valid_q && (wq_bank == act_tag_q)))
        else `TPU_FAIL($sformatf(
                         "tpu_pe row %0d: weight bank %0b written while an activation reads it",
                         row_i, wq_bank))
    end
  end
`endif

endmodule
