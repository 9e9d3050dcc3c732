// SPDX-License-Identifier: Apache-2.0
// One column's accumulator memory: Depth words of Width bits, one write port and two read
// ports (the partial-sum read for the array and the store path's read), each read registered.
module tpu_acc_mem #(
  parameter int unsigned Width = 32,
  parameter int unsigned Depth = 4096,
  localparam int unsigned AddrW = (Depth > 1) ? $clog2(Depth) : 1
) (
  input  logic             clk_i,
  input  logic             wr_en_i,
  input  logic [AddrW-1:0] wr_addr_i,
  input  logic [Width-1:0] wr_data_i,
  input  logic             rd0_en_i,
  input  logic [AddrW-1:0] rd0_addr_i,
  output logic [Width-1:0] rd0_data_o,
  input  logic             rd1_en_i,
  input  logic [AddrW-1:0] rd1_addr_i,
  output logic [Width-1:0] rd1_data_o
);

  logic [Width-1:0] mem_q [Depth];

  always_ff @(posedge clk_i) begin
    if (wr_en_i) mem_q[wr_addr_i] <= wr_data_i;
    if (rd0_en_i) rd0_data_o <= mem_q[rd0_addr_i];
    if (rd1_en_i) rd1_data_o <= mem_q[rd1_addr_i];
  end

`ifndef SYNTHESIS
  // Addresses in range (the memory has no reset: these hold from the first edge on).
  a_write_in_range: assert property (@(posedge clk_i) !(wr_en_i && 32'(wr_addr_i) >= Depth))
    else $error("tpu_acc_mem: write address %0d beyond depth %0d", wr_addr_i, Depth);
  a_read0_in_range: assert property (@(posedge clk_i) !(rd0_en_i && 32'(rd0_addr_i) >= Depth))
    else $error("tpu_acc_mem: read address %0d beyond depth %0d", rd0_addr_i, Depth);
  a_read1_in_range: assert property (@(posedge clk_i) !(rd1_en_i && 32'(rd1_addr_i) >= Depth))
    else $error("tpu_acc_mem: read address %0d beyond depth %0d", rd1_addr_i, Depth);
`endif

endmodule
