// SPDX-License-Identifier: Apache-2.0
// Store-path conversion: optional relu in the accumulator format, then rounding to the narrow
// format (round to nearest-even on the dropped bits, canonical NaN, FTZ rules of the contract).
module tpu_fp32_to_bf16 #(
  parameter int unsigned ExpBits     = tpu_pkg::Fp32ExpBits,
  parameter int unsigned WideManBits = tpu_pkg::Fp32ManBits,
  parameter int unsigned NarrowManBits = tpu_pkg::Bf16ManBits
) (
  input  logic                           ftz_i,
  input  logic                           relu_i,
  input  logic [ExpBits+WideManBits:0]   data_i,
  output logic [ExpBits+WideManBits:0]   act_o,   // after the activation, before conversion
  output logic [ExpBits+NarrowManBits:0] data_o
);

  localparam int unsigned WideW   = 1 + ExpBits + WideManBits;
  localparam int unsigned NarrowW = 1 + ExpBits + NarrowManBits;
  localparam int unsigned Drop    = WideManBits - NarrowManBits;
  localparam logic [WideW-1:0] WideQNaN = {1'b0, {ExpBits{1'b1}}, 1'b1, {(WideManBits-1){1'b0}}};
  localparam logic [NarrowW-1:0] NarrowQNaN =
      {1'b0, {ExpBits{1'b1}}, 1'b1, {(NarrowManBits-1){1'b0}}};

  if (NarrowManBits >= WideManBits) begin : gen_bad_formats
    $error("tpu_fp32_to_bf16: the narrow format must have fewer fraction bits");
  end

  logic             sign, exp_zero, exp_ones, man_zero, is_nan, positive;
  logic [WideW-1:0] x, flushed;
  logic             round_up;
  logic [NarrowW-1:0] rounded;
  logic [NarrowW-1:0] narrow;

  assign sign     = data_i[WideW-1];
  assign exp_zero = data_i[WideManBits +: ExpBits] == '0;
  assign exp_ones = &data_i[WideManBits +: ExpBits];
  assign man_zero = data_i[WideManBits-1:0] == '0;
  assign is_nan   = exp_ones & ~man_zero;
  assign positive = !sign && !(exp_zero && man_zero);

  // relu(x) = NaN ? qNaN : (x > 0 ? x : +0). A NaN is canonicalised on conversion either way.
  always_comb begin
    if (!relu_i)      x = data_i;
    else if (is_nan)  x = WideQNaN;
    else if (positive) x = data_i;
    else              x = '0;
  end
  assign act_o = x;

  // FTZ reads a subnormal input as a zero of its sign.
  assign flushed = (ftz_i && x[WideManBits +: ExpBits] == '0) ? {x[WideW-1], {(WideW-1){1'b0}}}
                                                              : x;

  // Nearest-even on the dropped bits; a carry moves into the exponent (the largest finite
  // values round to inf). NaN never reaches here.
  assign round_up = flushed[Drop-1] & (|flushed[Drop-2:0] | flushed[Drop]);
  assign rounded  = flushed[WideW-1:Drop] + NarrowW'(round_up);

  // FTZ needs no flush of the result: after the input flush the value is zero or normal, and
  // rounding a normal value to fewer fraction bits never lowers its exponent, so the result is
  // never subnormal (checked by the assertion below).
  assign narrow = is_nan ? NarrowQNaN : rounded;
  assign data_o = narrow;

`ifndef SYNTHESIS
  // Assertions
  always_comb begin
    if (ftz_i) begin
      a_ftz_no_subnormal: assert (!(narrow[NarrowManBits +: ExpBits] == '0
                                    && narrow[NarrowManBits-1:0] != '0))
        else $error("tpu_fp32_to_bf16: subnormal result in FTZ mode: %h", narrow);
    end
  end
`endif

endmodule
