// SPDX-License-Identifier: Apache-2.0
// An on-chip buffer of Depth rows of Elems bf16 values (the activation or the weight buffer):
// one write port with a per-element write enable, one read port with the row one cycle after the
// read (a plain synchronous RAM). Each element is a RAM of its own (as a RAM with per-element
// write enables is built): no loop over the elements inside a process, which Verilator cannot
// keep as a loop for a row of more than 64 elements (non-blocking writes into an array).
module tpu_accel_buf #(
  parameter int unsigned Depth = 2048,
  parameter int unsigned Elems = 16,
  localparam int unsigned AddrW = (Depth > 1) ? $clog2(Depth) : 1,
  localparam int unsigned W     = 16 * Elems
) (
  input  logic             clk_i,
  input  logic             we_i,
  input  logic [AddrW-1:0] waddr_i,
  input  logic [Elems-1:0] wen_i,     // element e written when wen_i[e]
  input  logic [W-1:0]     wdata_i,
  input  logic             re_i,
  input  logic [AddrW-1:0] raddr_i,
  output logic [W-1:0]     rdata_o
);

  for (genvar e = 0; e < Elems; e++) begin : gen_el
    logic [15:0] mem_q [Depth];
    always_ff @(posedge clk_i) begin
      if (we_i && wen_i[e]) mem_q[waddr_i] <= wdata_i[16*e +: 16];
      if (re_i) rdata_o[16*e +: 16] <= mem_q[raddr_i];
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // The decoder refuses rows beyond the buffer, so no access ever falls outside it.
  a_write_in_range: assert property (@(posedge clk_i) !(we_i && 32'(waddr_i) >= Depth))
    else $error("tpu_accel_buf: write address %0d beyond depth %0d", waddr_i, Depth);
  a_read_in_range: assert property (@(posedge clk_i) !(re_i && 32'(raddr_i) >= Depth))
    else $error("tpu_accel_buf: read address %0d beyond depth %0d", raddr_i, Depth);
`endif

endmodule
