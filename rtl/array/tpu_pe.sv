// SPDX-License-Identifier: Apache-2.0
// One processing element of the weight-stationary array: psum_o = mac(act, w[tag], psum_i).
//
// Data moves through the PE in three directions:
//   west → east    the activation, its valid bit and its weight-bank tag (one register)
//   north → south  the partial sum (the MAC's PipeRegs cycles)
//   north → south  weight writes (PipeRegs transit registers, so they keep pace with the psums)
// Two weight banks: a write lands in the bank it names when its row index is this PE's row;
// the MAC reads the bank the activation's tag names. The tag travels with the activation, so
// the switch to a new weight tile moves through the array as a diagonal wavefront with the
// first row that uses it, and loading one bank never disturbs a computation on the other
// (the controller orders the two streams; see tpu_mxu_ctrl).
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
  // Weight banks
  // ---------------------------------------------------------------------------------------------
  logic [InW-1:0] w0_q, w1_q;
  logic           w_hit;

  assign w_hit = w_valid_i && (w_row_i == row_i);

  always_ff @(posedge clk_i) begin
    if (w_hit && !w_bank_i) w0_q <= w_i;
    if (w_hit &&  w_bank_i) w1_q <= w_i;
  end

  tpu_delay #(.Width(1 + RowW + InW), .Depth(PipeRegs)) u_w_transit (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .valid_i(w_valid_i),
    .data_i ({w_bank_i, w_row_i, w_i}),
    .valid_o(w_valid_o),
    .data_o ({w_bank_o, w_row_o, w_o})
  );

  // ---------------------------------------------------------------------------------------------
  // MAC and the activation register
  // ---------------------------------------------------------------------------------------------
  // The MAC's own registers take P-1 of the P cycles; the last is a register on its fp32 result,
  // so the partial sum moves between PEs as 32 bits (and a simulator evaluates each MAC as one
  // combinational block when P = 1).
  logic            mac_valid;
  logic [AccW-1:0] mac_res;

  tpu_mac #(
    .ExpBits   (ExpBits),
    .InManBits (InManBits),
    .AccManBits(AccManBits),
    .PipeRegs  (PipeRegs - 1),
    .ModeSel   (ModeSel)
  ) u_mac (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .in_valid_i (act_valid_i),
    .ftz_i      (ftz_i),
    .a_i        (act_i),
    .b_i        (act_tag_i ? w1_q : w0_q),
    .c_i        (psum_i),
    .out_valid_o(mac_valid),
    .res_o      (mac_res)
  );

  tpu_pipe_reg #(.Width(AccW), .Enable(1'b1)) u_psum (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .valid_i(mac_valid),
    .data_i (mac_res),
    .valid_o(psum_valid_o),
    .data_o (psum_o)
  );

  tpu_pipe_reg #(.Width(1 + InW), .Enable(1'b1)) u_act (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .valid_i(act_valid_i),
    .data_i ({act_tag_i, act_i}),
    .valid_o(act_valid_o),
    .data_o ({act_tag_o, act_o})
  );

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // The skews line every activation up with its partial sum: a mismatch here means the
  // controller's or the array's timing is wrong, and the result would be silently garbage.
  a_act_meets_psum: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                     act_valid_i == psum_valid_i)
    else $error("tpu_pe row %0d: activation valid %0b but partial-sum valid %0b",
                row_i, act_valid_i, psum_valid_i);
  // A weight write never lands in the bank an activation reads in the same cycle: the
  // controller only rewrites a bank no issued-but-unfinished row uses.
  a_bank_not_busy: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    !(w_hit && act_valid_i && (w_bank_i == act_tag_i)))
    else $error("tpu_pe row %0d: weight bank %0b written while an activation reads it",
                row_i, w_bank_i);
`endif

endmodule
