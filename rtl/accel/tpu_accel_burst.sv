// SPDX-License-Identifier: Apache-2.0
// Cuts a 2-D transfer (rows of bpr 32-byte beats, row i at addr + i*stride) into AXI4 INCR bursts
// of at most MaxBurst beats that never cross a 4 KB boundary. Rows that follow each other in
// memory (stride = bpr*32, or a single row) form one region and share bursts, so a tiled tensor
// streams in long bursts; other strides give one region per row. once_i moves only the first row
// (the accumulator path re-uses it for a broadcast, stride 0).
`include "tpu_channels.svh"
`include "tpu_ff.svh"
module tpu_accel_burst #(
  parameter int unsigned AddrW    = 31,
  parameter int unsigned MaxBurst = 16,
  localparam int unsigned ReqW    = `TPU_DMA_BURST_W(AddrW)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             flush_i,
  input  logic             start_i,     // takes the transfer below (only while !busy_o)
  input  logic [AddrW-1:0] addr_i,
  input  logic [31:0]      stride_i,
  input  logic [15:0]      rows_i,
  input  logic [4:0]       bpr_i,       // beats per row, 1..16 (an fp32 row of 128)
  input  logic             once_i,
  output logic             busy_o,
  output logic             req_valid_o,
  input  logic             req_ready_i,
  output logic [ReqW-1:0]  req_o,       // dma_burst (rtl/channels.json)
  output logic             req_last_o   // the transfer's last burst
);

  logic             busy_q, busy_d;
  logic [AddrW-1:0] cur_q, cur_d, base_q, base_d;
  logic [31:0]      stride_q, stride_d;
  logic [19:0]      left_q, left_d;      // beats left in the current region
  logic [15:0]      regions_q, regions_d;   // regions left, the current one included
  logic [4:0]       bpr_q, bpr_d;
  logic [8:0]       to_4k, len;
  typedef `TPU_DMA_BURST_T(AddrW) dma_burst_t;
  dma_burst_t       req;

  assign to_4k = 9'((13'd4096 - 13'(cur_q[11:0])) >> 5);
  always_comb begin
    len = 9'(MaxBurst);
    if (20'(len) > left_q) len = 9'(left_q);
    if (len > to_4k) len = to_4k;
  end

  assign busy_o      = busy_q;
  assign req_valid_o = busy_q;
  assign req.addr    = cur_q;
  assign req.len     = 8'(len - 9'd1);
  assign req_o       = req;
  assign req_last_o  = (20'(len) == left_q) && (regions_q == 16'd1);

  always_comb begin
    busy_d    = busy_q;
    cur_d     = cur_q;
    base_d    = base_q;
    stride_d  = stride_q;
    left_d    = left_q;
    regions_d = regions_q;
    bpr_d     = bpr_q;
    if (flush_i) begin
      busy_d = 1'b0;
    end else if (start_i && !busy_q) begin
      busy_d   = 1'b1;
      cur_d    = addr_i;
      base_d   = addr_i;
      stride_d = stride_i;
      bpr_d    = bpr_i;
      if (once_i) begin
        left_d    = 20'(bpr_i);
        regions_d = 16'd1;
      end else if (rows_i == 16'd1 || stride_i == 32'(bpr_i) * 32'd32) begin
        left_d    = 20'(rows_i) * 20'(bpr_i);
        regions_d = 16'd1;
      end else begin
        left_d    = 20'(bpr_i);
        regions_d = rows_i;
      end
    end else if (busy_q && req_ready_i) begin
      if (20'(len) != left_q) begin
        cur_d  = cur_q + AddrW'({len, 5'd0});
        left_d = left_q - 20'(len);
      end else if (regions_q != 16'd1) begin
        base_d    = base_q + AddrW'(stride_q);
        cur_d     = base_q + AddrW'(stride_q);
        left_d    = 20'(bpr_q);
        regions_d = regions_q - 16'd1;
      end else begin
        busy_d = 1'b0;
      end
    end
  end
  `TPU_FF(busy_q, busy_d, 1'b0)
  `TPU_FF(cur_q, cur_d, '0)
  `TPU_FF(base_q, base_d, '0)
  `TPU_FF(stride_q, stride_d, '0)
  `TPU_FF(left_q, left_d, '0)
  `TPU_FF(regions_q, regions_d, '0)
  `TPU_FF(bpr_q, bpr_d, '0)

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // A burst request holds while it waits; no burst crosses 4 KB or exceeds MaxBurst.
  a_req_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               req_valid_o && !req_ready_i && !flush_i
                               |=> req_valid_o && $stable(req_o))
    else $error("tpu_accel_burst: a burst changed while waiting for ready");
  logic [13:0] req_end;  // one past the burst's last byte, within its 4 KB page
  assign req_end = 14'(req.addr[11:0]) + (14'(req.len) + 14'd1) * 14'd32;
  a_req_in_4k: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                req_valid_o |-> req_end <= 14'd4096 && 32'(req.len) < MaxBurst)
    else $error("tpu_accel_burst: burst at 0x%0h of %0d beats crosses 4 KB or is too long",
                req.addr, req.len + 8'd1);
  a_start_idle: assert property (@(posedge clk_i) disable iff (!rst_ni) start_i |-> !busy_o)
    else $error("tpu_accel_burst: a transfer started while busy");
`endif

endmodule
