// SPDX-License-Identifier: Apache-2.0
// Formal only (make formal, docs/formal.md): the valid/ready rules of one channel of AXI4,
// AXI4-Lite or the project's streams. Once valid is up, it stays up until ready takes the beat,
// and the payload does not change meanwhile. Assume = 1 makes them assumptions (a channel the
// free environment drives: the master's AW, W, AR); Assume = 0 assertions (a channel the design
// drives: B, R). The previous cycle is kept in registers (reset low clears them).
module tpu_vr_check #(
  parameter int unsigned W      = 1,
  parameter bit          Assume = 1'b0
) (
  input logic         clk_i,
  input logic         rst_ni,
  input logic         valid_i,
  input logic         ready_i,
  input logic [W-1:0] data_i
);
  logic         waited_q;  // the previous cycle had valid without ready (out of reset)
  logic [W-1:0] data_q;    // the previous cycle's payload
  always_ff @(posedge clk_i) begin
    waited_q <= rst_ni && valid_i && !ready_i;
    data_q   <= data_i;
  end

  always_comb begin
    if (rst_ni && waited_q) begin
      if (Assume) begin
        m_valid_held: assume (valid_i);
        m_data_stable: assume (data_i == data_q);
      end else begin
        a_valid_held: assert (valid_i);
        a_data_stable: assert (data_i == data_q);
      end
    end
  end
endmodule
