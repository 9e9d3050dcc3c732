// SPDX-License-Identifier: Apache-2.0
// Streams runs of consecutive buffer rows to a valid/ready port: jobs (first row, row count) are
// queued, the rows are read one per cycle from a synchronous-read buffer and held in a small
// queue in front of the port, so the port can take a row every cycle. Feeds the matrix unit's
// weight and activation ports from the weight and activation buffers.
module tpu_accel_stream #(
  parameter int unsigned AW        = 11,
  parameter int unsigned W         = 256,
  parameter int unsigned JobDepth  = 4,
  parameter int unsigned DataDepth = 4
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic          flush_i,
  input  logic          job_valid_i,
  input  logic [AW-1:0] job_addr_i,
  input  logic [15:0]   job_count_i,   // >= 1
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

  logic [AW+15:0] job;
  logic           job_empty, act_q, rd_q, take, d_empty;
  logic [AW-1:0]  addr_q;
  logic [15:0]    left_q;
  logic [DCntW-1:0] d_cnt;

  tpu_fifo #(.Width(AW + 16), .Depth(JobDepth)) u_jobs (
    .clk_i, .rst_ni, .flush_i,
    .push_i(job_valid_i), .data_i({job_addr_i, job_count_i}), .full_o(job_full_o),
    .pop_i (take), .data_o(job), .empty_o(job_empty), .count_o()
  );

  // A read may go out when the rows in flight and queued leave room for it.
  assign re_o    = act_q && (32'(d_cnt) + 32'(rd_q) < DataDepth);
  assign raddr_o = addr_q;
  assign take    = !job_empty && (!act_q || (re_o && left_q == 16'd1));

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      act_q  <= 1'b0;
      rd_q   <= 1'b0;
      addr_q <= '0;
      left_q <= '0;
    end else if (flush_i) begin
      act_q <= 1'b0;
      rd_q  <= 1'b0;
    end else begin
      rd_q <= re_o;
      if (take) begin
        act_q  <= 1'b1;
        addr_q <= job[AW+15:16];
        left_q <= job[15:0];
      end else if (re_o) begin
        addr_q <= addr_q + 1'b1;
        left_q <= left_q - 16'd1;
        if (left_q == 16'd1) act_q <= 1'b0;
      end
    end
  end

  tpu_fifo #(.Width(W), .Depth(DataDepth)) u_data (
    .clk_i, .rst_ni, .flush_i,
    .push_i(rd_q), .data_i(rdata_i), .full_o(),
    .pop_i (out_valid_o && out_ready_i), .data_o(out_data_o), .empty_o(d_empty), .count_o(d_cnt)
  );
  assign out_valid_o = !d_empty;
  assign busy_o      = act_q || !job_empty || rd_q || !d_empty;

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // verilator lint_off SYNCASYNCNET
  // Jobs of at least one row, only into room; a row shown to the port holds until taken; a read
  // goes out only with room for its row.
  a_job_rows: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               job_valid_i && !flush_i |-> job_count_i != '0 && !job_full_o)
    else $error("tpu_accel_stream: job of %0d rows (queue full: %b)", job_count_i, job_full_o);
  a_out_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               out_valid_o && !out_ready_i && !flush_i
                               |=> out_valid_o && $stable(out_data_o) || flush_i)
    else $error("tpu_accel_stream: the row changed while waiting");
  a_data_room: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                32'(d_cnt) + 32'(rd_q) <= DataDepth)
    else $error("tpu_accel_stream: %0d rows queued and %0d in flight, room for %0d", d_cnt,
                rd_q, DataDepth);
  // verilator lint_on SYNCASYNCNET
`endif

endmodule
