// SPDX-License-Identifier: Apache-2.0
// The project's one FIFO: a synchronous first-in first-out queue with a fall-through head (data_o
// shows the oldest entry while empty_o is low). Pushing into a full queue or popping an empty one
// is a caller error (asserted). flush_i empties the queue.
`include "tpu_ff.svh"
module tpu_fifo #(
  parameter int unsigned Width = 8,
  parameter int unsigned Depth = 4,
  localparam int unsigned PtrW = (Depth > 1) ? $clog2(Depth) : 1,
  localparam int unsigned CntW = $clog2(Depth + 1)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             flush_i,
  input  logic             push_i,
  input  logic [Width-1:0] data_i,
  output logic             full_o,
  input  logic             pop_i,
  output logic [Width-1:0] data_o,
  output logic             empty_o,
  output logic [CntW-1:0]  count_o
);

  logic [Width-1:0] mem_q [Depth];
  logic [PtrW-1:0]  wr_q, wr_d, rd_q, rd_d;
  logic [CntW-1:0]  cnt_q, cnt_d;

  function automatic logic [PtrW-1:0] next_ptr(input logic [PtrW-1:0] p);
    next_ptr = (32'(p) == Depth - 1) ? '0 : p + 1'b1;
  endfunction

  assign full_o  = 32'(cnt_q) == Depth;
  assign empty_o = cnt_q == '0;
  assign count_o = cnt_q;
  assign data_o  = mem_q[rd_q];

  always_comb begin
    wr_d  = wr_q;
    rd_d  = rd_q;
    cnt_d = cnt_q + CntW'(push_i) - CntW'(pop_i);
    if (push_i) wr_d = next_ptr(wr_q);
    if (pop_i)  rd_d = next_ptr(rd_q);
    if (flush_i) begin
      wr_d  = '0;
      rd_d  = '0;
      cnt_d = '0;
    end
  end
  `TPU_FF(wr_q, wr_d, '0)
  `TPU_FF(rd_q, rd_d, '0)
  `TPU_FF(cnt_q, cnt_d, '0)

  always_ff @(posedge clk_i) begin
    if (push_i && !flush_i) mem_q[wr_q] <= data_i;
  end

`ifndef SYNTHESIS
  a_no_overflow: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                  push_i && !flush_i |-> !full_o || pop_i)
    else $error("tpu_fifo: push into a full queue");
  a_no_underflow: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                   pop_i && !flush_i |-> !empty_o)
    else $error("tpu_fifo: pop from an empty queue");
`endif

endmodule
