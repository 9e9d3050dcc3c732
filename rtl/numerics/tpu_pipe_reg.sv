// SPDX-License-Identifier: Apache-2.0
// Optional pipeline register: a valid bit with reset and a payload loaded on valid, or wires.
module tpu_pipe_reg #(
  parameter int unsigned Width = 1,
  parameter bit          Enable = 1'b1
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             valid_i,
  input  logic [Width-1:0] data_i,
  output logic             valid_o,
  output logic [Width-1:0] data_o
);

  if (Enable) begin : gen_reg
    logic             valid_q;
    logic [Width-1:0] data_q;

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) valid_q <= 1'b0;
      else         valid_q <= valid_i;
    end

    // The payload has no reset: it is qualified by valid and only loads with it.
    always_ff @(posedge clk_i) begin
      if (valid_i) data_q <= data_i;
    end

    assign valid_o = valid_q;
    assign data_o  = data_q;
  end else begin : gen_wire
    assign valid_o = valid_i;
    assign data_o  = data_i;
  end

endmodule
