// SPDX-License-Identifier: Apache-2.0
// The project's one stream register: a valid/ready pipeline register. It takes a new item when it
// is empty or its item leaves in the same cycle (in_ready_o = !out_valid_o || out_ready_i), so a
// stream passes at one item per cycle with one cycle of latency; what it shows holds until taken.
// The data register is reset too, so nothing undefined ever shows on out_data_o.
module tpu_stream_reg #(
  parameter int unsigned Width = 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             in_valid_i,
  output logic             in_ready_o,
  input  logic [Width-1:0] in_data_i,
  output logic             out_valid_o,
  input  logic             out_ready_i,
  output logic [Width-1:0] out_data_o
);

  logic             valid_q;
  logic [Width-1:0] data_q;

  assign in_ready_o  = !valid_q || out_ready_i;
  assign out_valid_o = valid_q;
  assign out_data_o  = data_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= 1'b0;
      data_q  <= '0;
    end else if (in_ready_o) begin
      valid_q <= in_valid_i;
      if (in_valid_i) data_q <= in_data_i;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  a_out_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               out_valid_o && !out_ready_i |=> out_valid_o && $stable(out_data_o))
    else $error("tpu_stream_reg: the item changed while waiting");
`endif

endmodule
