// SPDX-License-Identifier: Apache-2.0
// Streams runs of buffer rows to a valid/ready port: jobs (first row, row count) are queued, the
// rows are read one per cycle from a synchronous-read buffer and held in a small queue in front of
// the port, so the port can take a row every cycle. Feeds the matrix unit's weight and activation
// ports from the weight and activation buffers.
//
// With Window, a job may instead read through a GEMM's convolution window (docs/isa.md, version
// 1.1; the job carries GEMM bytes 17-31): row m is output pixel (oh, ow), stepping ow over
// out_width from (out_row, out_col); it reads buffer row act + r·width + iw with r = oh·stride +
// dh - band_row and iw = ow·stride + dw, or sends a row of +0 without reading when r or iw falls
// outside the band (zero padding). The walk is incremental: per row ow + 1 and iw + stride, at the
// end of an output row ow = 0, iw = dw, r + stride and the row base + stride·width; the products
// are formed once, when the job starts.
`include "tpu_ff.svh"
module tpu_accel_stream #(
  parameter int unsigned AW        = 11,
  parameter int unsigned W         = 256,
  parameter int unsigned JobDepth  = 4,
  parameter int unsigned DataDepth = 4,
  parameter bit          Window    = 1'b0
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic          flush_i,
  input  logic          job_valid_i,
  input  logic [AW-1:0] job_addr_i,
  input  logic [15:0]   job_count_i,   // >= 1
  input  logic          job_win_i,     // through the window (Window only)
  input  logic [119:0]  job_wfields_i, // the GEMM's bytes 17-31 (Window only)
  output logic          job_full_o,
  output logic          busy_o,        // a job or a row still to deliver
  output logic          re_o,
  output logic [AW-1:0] raddr_o,
  input  logic [W-1:0]  rdata_i,
  output logic          out_valid_o,
  input  logic          out_ready_i,
  output logic [W-1:0]  out_data_o
);

  localparam int unsigned DCntW = $clog2(DataDepth + 1);
  localparam int unsigned JW    = AW + 16 + 1 + 120;

  logic [JW-1:0]  job;
  logic           job_empty, act_q, act_d, rd_q, rd_d, take, d_empty, step, pad, pad_q, pad_d;
  logic [AW-1:0]  addr_q, addr_d;
  logic [15:0]    left_q, left_d;
  logic [DCntW-1:0] d_cnt;

  tpu_fifo #(.Width(JW), .Depth(JobDepth)) u_jobs (
    .clk_i, .rst_ni, .flush_i,
    .push_i(job_valid_i), .data_i({job_addr_i, job_count_i, job_win_i, job_wfields_i}),
    .full_o(job_full_o),
    .pop_i (take), .data_o(job), .empty_o(job_empty), .count_o()
  );

  // The window walk (constant 0 without Window).
  logic               win_q, win_d;
  logic signed [31:0] r_q, r_d, iw_q, iw_d, dw_q, dw_d;
  logic [31:0]        base_q, base_d, sw_q, sw_d, waddr;
  logic [15:0]        ow_q, ow_d, ow_last_q, ow_last_d, width_q, width_d, band_rows_q, band_rows_d;
  logic [7:0]         stride_q, stride_d;
  logic               j_win;
  logic [255:0]       jf;  // the job's window fields at their place in a GEMM instruction
  logic [15:0]        j_act;
  logic signed [31:0] j_r, j_iw;
  assign j_win = Window && job[120];
  assign jf    = {job[119:0], 136'd0};
  assign j_act = 16'(job[JW-1 -: AW]);
  assign j_r   = $signed(32'(tpu_isa_pkg::gemm_out_row(jf)) * 32'(tpu_isa_pkg::gemm_stride(jf)))
                 + 32'($signed(tpu_isa_pkg::gemm_dh(jf)))
                 - $signed(32'(tpu_isa_pkg::gemm_band_row(jf)));
  assign j_iw  = $signed(32'(tpu_isa_pkg::gemm_out_col(jf)) * 32'(tpu_isa_pkg::gemm_stride(jf)))
                 + 32'($signed(tpu_isa_pkg::gemm_dw(jf)));
  assign waddr = base_q + 32'(iw_q);
  assign pad   = win_q && (r_q < 0 || r_q >= $signed(32'(band_rows_q)) || iw_q < 0 ||
                           iw_q >= $signed(32'(width_q)));

  // A row step may go out when the rows in flight and queued leave room for it; it reads the
  // buffer unless the row is padding.
  assign step    = act_q && (32'(d_cnt) + 32'(rd_q) < DataDepth);
  assign re_o    = step && !pad;
  assign raddr_o = win_q ? AW'(waddr) : addr_q;
  assign take    = !job_empty && (!act_q || (step && left_q == 16'd1));

  always_comb begin
    act_d       = act_q;
    rd_d        = rd_q;
    pad_d       = pad_q;
    addr_d      = addr_q;
    left_d      = left_q;
    win_d       = win_q;
    r_d         = r_q;
    iw_d        = iw_q;
    dw_d        = dw_q;
    base_d      = base_q;
    sw_d        = sw_q;
    ow_d        = ow_q;
    ow_last_d   = ow_last_q;
    width_d     = width_q;
    band_rows_d = band_rows_q;
    stride_d    = stride_q;
    if (flush_i) begin
      act_d = 1'b0;
      rd_d  = 1'b0;
      pad_d = 1'b0;
      win_d = 1'b0;
    end else begin
      rd_d  = step;
      pad_d = pad;
      if (take) begin
        act_d       = 1'b1;
        addr_d      = job[JW-1 -: AW];
        left_d      = job[JW-AW-1 -: 16];
        win_d       = j_win;
        r_d         = j_r;
        iw_d        = j_iw;
        dw_d        = 32'($signed(tpu_isa_pkg::gemm_dw(jf)));
        base_d      = 32'(j_act) + 32'(j_r) * 32'(tpu_isa_pkg::gemm_width(jf));
        sw_d        = 32'(tpu_isa_pkg::gemm_stride(jf)) * 32'(tpu_isa_pkg::gemm_width(jf));
        ow_d        = tpu_isa_pkg::gemm_out_col(jf);
        ow_last_d   = tpu_isa_pkg::gemm_out_width(jf) - 16'd1;
        width_d     = tpu_isa_pkg::gemm_width(jf);
        band_rows_d = tpu_isa_pkg::gemm_band_rows(jf);
        stride_d    = tpu_isa_pkg::gemm_stride(jf);
      end else if (step) begin
        addr_d = addr_q + 1'b1;
        left_d = left_q - 16'd1;
        if (left_q == 16'd1) act_d = 1'b0;
        if (ow_q == ow_last_q) begin
          ow_d   = '0;
          iw_d   = dw_q;
          r_d    = r_q + $signed(32'(stride_q));
          base_d = base_q + sw_q;
        end else begin
          ow_d = ow_q + 16'd1;
          iw_d = iw_q + $signed(32'(stride_q));
        end
      end
    end
  end
  `TPU_FF(act_q, act_d, 1'b0)
  `TPU_FF(rd_q, rd_d, 1'b0)
  `TPU_FF(pad_q, pad_d, 1'b0)
  `TPU_FF(addr_q, addr_d, '0)
  `TPU_FF(left_q, left_d, '0)
  `TPU_FF(win_q, win_d, 1'b0)
  `TPU_FF(r_q, r_d, '0)
  `TPU_FF(iw_q, iw_d, '0)
  `TPU_FF(dw_q, dw_d, '0)
  `TPU_FF(base_q, base_d, '0)
  `TPU_FF(sw_q, sw_d, '0)
  `TPU_FF(ow_q, ow_d, '0)
  `TPU_FF(ow_last_q, ow_last_d, '0)
  `TPU_FF(width_q, width_d, '0)
  `TPU_FF(band_rows_q, band_rows_d, '0)
  `TPU_FF(stride_q, stride_d, '0)

  tpu_fifo #(.Width(W), .Depth(DataDepth)) u_data (
    .clk_i, .rst_ni, .flush_i,
    .push_i(rd_q), .data_i(pad_q ? '0 : rdata_i), .full_o(),
    .pop_i (out_valid_o && out_ready_i), .data_o(out_data_o), .empty_o(d_empty), .count_o(d_cnt)
  );
  assign out_valid_o = !d_empty;
  assign busy_o      = act_q || !job_empty || rd_q || !d_empty;

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // Jobs of at least one row, only into room; a row shown to the port holds until taken; a read
  // goes out only with room for its row.
  a_job_rows: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               job_valid_i && !flush_i |-> job_count_i != '0 && !job_full_o)
    else $error("tpu_accel_stream: job of %0d rows (queue full: %b)", job_count_i, job_full_o);
  a_out_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               out_valid_o && !out_ready_i && !flush_i
                               |=> out_valid_o && $stable(out_data_o) || flush_i)
    else $error("tpu_accel_stream: the row changed while waiting");
  a_window_row: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                 re_o && win_q |-> (waddr >> AW) == 32'd0)
    else $error("tpu_accel_stream: window row %0d beyond the buffer", waddr);
  a_data_room: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                32'(d_cnt) + 32'(rd_q) <= DataDepth)
    else $error("tpu_accel_stream: %0d rows queued and %0d in flight, room for %0d", d_cnt,
                rd_q, DataDepth);
`endif

endmodule
