// SPDX-License-Identifier: Apache-2.0
// A valid-qualified delay line of Depth registers (Depth = 0: wires). The array's skew and
// de-skew buffers and the weight transit registers are built from it.
module tpu_delay #(
  parameter int unsigned Width = 1,
  parameter int unsigned Depth = 1
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             valid_i,
  input  logic [Width-1:0] data_i,
  output logic             valid_o,
  output logic [Width-1:0] data_o
);

  // Stage s holds the input delayed by s cycles; stage 0 is the input itself. (split_var: each
  // stage reads the one before it in the same vector, which Verilator would otherwise treat as
  // a combinational loop when its DFG pass does not untangle it.)
  logic [Depth:0]             valid_s /* verilator split_var */;
  logic [(Depth+1)*Width-1:0] data_s  /* verilator split_var */;

  assign valid_s[0]         = valid_i;
  assign data_s[Width-1:0] = data_i;

  for (genvar s = 0; s < Depth; s++) begin : gen_stage
    tpu_pipe_reg #(.Width(Width), .Enable(1'b1)) u_reg (
      .clk_i  (clk_i),
      .rst_ni (rst_ni),
      .valid_i(valid_s[s]),
      .data_i (data_s[s*Width +: Width]),
      .valid_o(valid_s[s+1]),
      .data_o (data_s[(s+1)*Width +: Width])
    );
  end

  assign valid_o = valid_s[Depth];
  assign data_o  = data_s[Depth*Width +: Width];

endmodule
