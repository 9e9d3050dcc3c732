// SPDX-License-Identifier: Apache-2.0
// Unpacks a binary floating-point operand (ExpBits/ManBits) into class flags, a significand with
// its hidden bit, and its exponent as the biased field value (1 for a subnormal) minus a
// normalisation count; optionally normalises subnormal significands so that their MSB is set.
// The value is sig_o · 2^(eeff_o - lz_o - Bias - ManBits).
module tpu_fp_unpack #(
  parameter int unsigned ExpBits   = tpu_pkg::Bf16ExpBits,
  parameter int unsigned ManBits   = tpu_pkg::Bf16ManBits,
  parameter bit          Normalize = 1'b1,
  parameter int unsigned LzBits    = $clog2(ManBits + 1)
) (
  input  logic [ExpBits+ManBits:0] x_i,
  input  logic                     ftz_i,   // read a subnormal as a zero of its sign
  output logic                     sign_o,
  output logic                     zero_o,  // zero, or subnormal flushed by ftz_i
  output logic                     inf_o,
  output logic                     nan_o,
  output logic [ManBits:0]         sig_o,   // hidden bit and fraction (normalised if asked)
  output logic [ExpBits-1:0]       eeff_o,  // exponent field, 1 for a subnormal
  output logic [LzBits-1:0]        lz_o     // left shift applied to sig_o
);


  logic [ExpBits-1:0] exp;
  logic [ManBits-1:0] man;
  logic               exp_zero, exp_ones;
  logic [ManBits:0]   sig;

  assign sign_o   = x_i[ExpBits+ManBits];
  assign exp      = x_i[ManBits +: ExpBits];
  assign man      = x_i[ManBits-1:0];
  assign exp_zero = (exp == '0);
  assign exp_ones = &exp;
  assign zero_o   = exp_zero & (~|man | ftz_i);
  assign inf_o    = exp_ones & ~|man;
  assign nan_o    = exp_ones & |man;
  assign sig      = {~exp_zero, man};

  if (Normalize) begin : gen_norm
    // Only subnormals have leading zeros (a zero's count is don't-care: its product bypasses),
    // so the count runs for them only.
    tpu_normalize #(
      .Width  (ManBits + 1),
      .CntBits(LzBits)
    ) u_norm (
      .data_i(sig),
      .stop_i('0),
      .en_i  (exp_zero),
      .cnt_o (lz_o),
      .data_o(sig_o)
    );
  end else begin : gen_raw
    assign lz_o  = '0;
    assign sig_o = sig;
  end

  // A subnormal has the exponent of the smallest normal (field value 1).
  assign eeff_o = {exp[ExpBits-1:1], exp[0] | exp_zero};

endmodule
