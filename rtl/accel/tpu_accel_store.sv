// SPDX-License-Identifier: Apache-2.0
// The store module: executes STORE, accumulator rows to HBM.
//
// An instruction starts when its token is there (pop_prev: compute->store) and the burst
// generator is free; it issues the write bursts (AW) and queues what the data side needs. The
// data side reads the instruction's accumulator rows through the matrix unit's store port, one
// per cycle while its row queue has room, applies relu and the output format per the numerics
// contract (tpu_fp32_to_bf16: relu in fp32, then round to bf16, or fp32 as it is), packs the whole
// row and sends its `elems` values from element `col` (version 1.6; a multiple of 32 bytes) as
// ceil(bytes/32) beats with the strobes of those bytes only, up to Lanes beats a cycle (never
// past the row's or the burst's end). The instruction is complete when every burst's write
// response is back; then it pushes its token (push_prev: store->compute, the accumulators may be
// overwritten).
//
// With VmemDepth > 0 the module also holds the vector unit (tpu_accel_vec: the vector memory,
// VOP, LOAD into the vector memory) and STORE may read the vector memory (source 1). A vector
// instruction starts only when nothing else is in flight here, and nothing else starts while it
// runs: instructions of this module touch the vector memory in program order.
`include "tpu_channels.svh"
`include "tpu_ff.svh"
module tpu_accel_store #(
  parameter int unsigned Cols     = 16,
  parameter int unsigned AccDepth = 4096,
  parameter int unsigned AddrW    = 31,
  parameter int unsigned DescDepth = 4,
  parameter int unsigned RowDepth = 4,
  parameter int unsigned Lanes    = 1,
  parameter int unsigned VmemDepth = 0,     // 0: no vector unit
  localparam int unsigned LCntW   = $clog2(Lanes + 1),
  localparam int unsigned AccAW   = (AccDepth > 1) ? $clog2(AccDepth) : 1,
  localparam int unsigned VmAW    = (VmemDepth > 1) ? $clog2(VmemDepth) : 1,
  localparam int unsigned RowBeats = (Cols * 32 + 255) / 256,   // beats of a full fp32 row
  localparam int unsigned PackW   = RowBeats * 256,
  localparam int unsigned DmaBurstW   = `TPU_DMA_BURST_W(AddrW),
  localparam int unsigned DmaWrBeatsW = `TPU_DMA_WR_BEATS_W(LCntW, Lanes),
  localparam int unsigned DmaRdBeatsW = `TPU_DMA_RD_BEATS_W(LCntW, Lanes)
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                flush_i,
  input  logic                halt_i,
  input  logic                ftz_i,
  // Instruction queue head
  input  logic                head_valid_i,
  input  logic [255:0]        head_instr_i,
  input  logic [31:0]         head_pc_i,
  output logic                head_pop_o,
  // Tokens
  input  logic                tok_prev_i,
  output logic                pop_prev_o,
  output logic                push_prev_o,
  output logic [31:0]         push_pc_o,
  // Status for the command processor (accel_status: rtl/channels.json)
  output logic [`TPU_ACCEL_STATUS_W(32)-1:0] status_o,
  // The write client of tpu_accel_dma
  // (dma_burst, dma_wr_beats: rtl/channels.json)
  output logic                aw_valid_o,
  input  logic                aw_ready_i,
  output logic [DmaBurstW-1:0] aw_o,
  output logic                w_valid_o,
  input  logic                w_ready_i,
  output logic [DmaWrBeatsW-1:0] w_o,
  input  logic [LCntW-1:0]    w_lanes_i,   // offer at most this many beats a cycle (0: none)
  input  logic                b_valid_i,
  input  logic                b_resp_err_i,
  // The vector unit's read client of tpu_accel_dma (VmemDepth > 0)
  output logic                ar_valid_o,
  input  logic                ar_ready_i,
  output logic [DmaBurstW-1:0] ar_o,
  input  logic                r_valid_i,
  input  logic [DmaRdBeatsW-1:0] r_i,
  output logic [LCntW-1:0]    r_take_o,
  // The accumulators' store port
  output logic                st_valid_o,
  output logic [AccAW-1:0]    st_addr_o,
  input  logic                st_valid_i,
  input  logic [Cols*32-1:0]  st_data_i,
  // W beats taken this cycle (w_o's count of them), for the counters
  output logic                w_fire_o,
  output logic                vop_busy_o    // a VOP runs in the vector unit (a counter)
);

  `TPU_DMA_TYPEDEFS(AddrW, LCntW, Lanes)
  dma_wr_beats_t w;

  // ---------------------------------------------------------------------------------------------
  // Head
  // ---------------------------------------------------------------------------------------------
  logic [7:0]  op;
  logic        is_end, need_tok, gen_busy, bdesc_full, bdesc_empty, wdesc_full, wdesc_empty;
  logic        start, end_go, fin_q, wside_busy, blen_full, blen_empty, gen_last;
  logic [15:0] rows, elems;
  logic [9:0]  row_bytes;  // up to 512 (an fp32 row of 128)
  logic [4:0]  bpr;
  logic        bf16;

  logic        is_vec, vec_busy, vec_go, vec_done, vec_push, vec_err;
  logic [31:0] vec_pc;
  assign op        = tpu_isa_pkg::instr_opcode(head_instr_i);
  assign is_end    = op == tpu_isa_pkg::OpEnd;
  // VOP and LOAD (to the vector memory: the only LOAD this module gets).
  assign is_vec    = op == tpu_isa_pkg::OpVop || op == tpu_isa_pkg::OpLoad;
  assign need_tok  = head_instr_i[tpu_isa_pkg::FlagPopPrev];
  assign bf16      = tpu_isa_pkg::store_format(head_instr_i) == tpu_isa_pkg::FmtBf16;
  assign rows      = tpu_isa_pkg::store_rows(head_instr_i);
  assign elems     = tpu_isa_pkg::store_elems(head_instr_i);
  assign row_bytes = bf16 ? 10'(elems) * 10'd2 : 10'(elems) * 10'd4;
  assign bpr       = 5'((row_bytes + 10'd31) >> 5);

  logic in_flight;
  assign in_flight = gen_busy || !bdesc_empty || !wdesc_empty || wside_busy;

  assign start  = head_valid_i && !is_end && !is_vec && !halt_i && !fin_q && !gen_busy &&
                  !bdesc_full && !wdesc_full && !vec_busy && (!need_tok || tok_prev_i);
  assign vec_go = head_valid_i && is_vec && !halt_i && !fin_q && !in_flight && !vec_busy &&
                  (!need_tok || tok_prev_i);
  assign end_go = head_valid_i && is_end && !halt_i && !fin_q && !in_flight && !vec_busy;

  assign head_pop_o    = start || vec_go || end_go;
  assign pop_prev_o = (start || vec_go) && need_tok;
  typedef `TPU_ACCEL_STATUS_T(32) accel_status_t;
  accel_status_t status;
  assign status_o = status;
  assign status.fin     = fin_q;
  assign status.head_pc = head_pc_i;
  logic blocked;  // the head waits for its token
  assign blocked        = head_valid_i && !is_end && need_tok && !tok_prev_i;
  assign status.blocked = blocked;
  assign status.stuck   = !in_flight && !vec_busy &&
                          (!head_valid_i || blocked || halt_i || fin_q);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)      fin_q <= 1'b0;
    else if (flush_i) fin_q <= 1'b0;
    else if (end_go)  fin_q <= 1'b1;
  end

  // ---------------------------------------------------------------------------------------------
  // Address side: bursts, their lengths for WLAST, and the responses to wait for
  // ---------------------------------------------------------------------------------------------
  logic gen_valid;
  tpu_accel_burst #(.AddrW(AddrW)) u_burst (
    .clk_i, .rst_ni, .flush_i,
    .start_i   (start),
    .addr_i    (AddrW'(tpu_isa_pkg::store_hbm_addr(head_instr_i))),
    .stride_i  (tpu_isa_pkg::store_hbm_stride(head_instr_i)),
    .rows_i    (rows),
    .bpr_i     (bpr),
    .once_i    (1'b0),
    .busy_o    (gen_busy),
    .req_valid_o(gen_valid),
    .req_ready_i(aw_ready_i && !blen_full),
    .req_o     (aw_o),
    .req_last_o(gen_last)
  );
  assign aw_valid_o = gen_valid && !blen_full;
  dma_burst_t aw;
  logic       unused;
  assign aw     = aw_o;
  assign unused = ^aw.addr;

  logic aw_fire;
  assign aw_fire = aw_valid_o && aw_ready_i;

  // Write responses come back in order. Bursts are numbered as they go out; an instruction's
  // descriptor (token flag, pc, the number of its last burst) is queued with its last burst, and
  // the instruction is complete at that burst's response.
  logic [31:0] aw_seq_q, aw_seq_d, b_seq_q, b_seq_d;
  logic        cur_push_q, cur_push_d;
  logic [31:0] cur_pc_q, cur_pc_d;
  always_comb begin
    aw_seq_d   = aw_seq_q;
    b_seq_d    = b_seq_q;
    cur_push_d = cur_push_q;
    cur_pc_d   = cur_pc_q;
    if (flush_i) begin
      aw_seq_d = '0;
      b_seq_d  = '0;
    end else begin
      if (start) begin
        cur_push_d = head_instr_i[tpu_isa_pkg::FlagPushPrev];
        cur_pc_d   = head_pc_i;
      end
      if (aw_fire)   aw_seq_d = aw_seq_q + 32'd1;
      if (b_valid_i) b_seq_d  = b_seq_q + 32'd1;
    end
  end
  `TPU_FF(aw_seq_q, aw_seq_d, '0)
  `TPU_FF(b_seq_q, b_seq_d, '0)
  `TPU_FF(cur_push_q, cur_push_d, 1'b0)
  `TPU_FF(cur_pc_q, cur_pc_d, '0)

  logic [64:0] bdesc;
  logic        b_last;
  tpu_fifo #(.Width(65), .Depth(DescDepth)) u_bdesc (
    .clk_i, .rst_ni, .flush_i,
    .push_i(aw_fire && gen_last), .data_i({cur_push_q, aw_seq_q, cur_pc_q}),
    .full_o(bdesc_full),
    .pop_i (b_valid_i && b_last), .data_o(bdesc), .empty_o(bdesc_empty), .count_o()
  );
  assign b_last      = !bdesc_empty && (b_seq_q == bdesc[63:32]);
  // A vector instruction completes only while no STORE is in flight (it started so), so its
  // token never meets a write response's.
  assign push_prev_o = (b_valid_i && b_last && bdesc[64]) || (vec_done && vec_push);
  assign push_pc_o   = vec_done ? vec_pc : bdesc[31:0];
  assign status.err    = (b_valid_i && b_resp_err_i) || vec_err;
  assign status.err_pc = vec_err ? vec_pc : bdesc_empty ? cur_pc_q : bdesc[31:0];

  logic [7:0] blen;
  logic       w_fire, w_burst_end;
  logic [7:0] wbeat_q, wbeat_d;
  tpu_fifo #(.Width(8), .Depth(8)) u_blen (
    .clk_i, .rst_ni, .flush_i,
    .push_i(aw_fire), .data_i(aw.len), .full_o(blen_full),
    .pop_i (w_fire && w_burst_end), .data_o(blen), .empty_o(blen_empty), .count_o()
  );
  assign w_burst_end = 9'(wbeat_q) + 9'(w.count) == 9'(blen) + 9'd1;
  assign wbeat_d = (flush_i || w_burst_end) ? 8'd0 : wbeat_q + 8'(w.count);
  `TPU_FFL(wbeat_q, wbeat_d, flush_i || w_fire, '0)

  // ---------------------------------------------------------------------------------------------
  // Data side: accumulator rows -> converted, packed rows -> beats
  // ---------------------------------------------------------------------------------------------
  // Per instruction: first accumulator row, rows, elems, the first beat of the packed row
  // (version 1.6: col's bytes / 32; col + elems <= Cols, so under RowBeats), format, relu.
  localparam int unsigned WDescW = 16 + 16 + 16 + 5 + 1 + 1 + 1;
  logic [WDescW-1:0] wdesc;
  logic [15:0]       s_acc, s_rows, s_elems;
  logic [4:0]        s_cbeat, cbeat;
  logic              s_bf16, s_relu, s_vmem, rd_take;
  logic [15:0]       col;
  assign col   = tpu_isa_pkg::store_col(head_instr_i);
  assign cbeat = bf16 ? 5'(col >> 4) : 5'(col >> 3);
  tpu_fifo #(.Width(WDescW), .Depth(DescDepth)) u_wdesc (
    .clk_i, .rst_ni, .flush_i,
    .push_i(start), .data_i({tpu_isa_pkg::store_acc(head_instr_i), rows, elems, cbeat, bf16,
                                   tpu_isa_pkg::store_activation(head_instr_i) != 8'd0,
                                   VmemDepth > 0 && tpu_isa_pkg::store_source(head_instr_i) ==
                                                    tpu_isa_pkg::SrcVmem}),
    .full_o(wdesc_full),
    .pop_i (rd_take), .data_o(wdesc), .empty_o(wdesc_empty), .count_o()
  );
  assign {s_acc, s_rows, s_elems, s_cbeat, s_bf16, s_relu, s_vmem} = wdesc;

  // Row reads: one per cycle while the row queue has room for it.
  localparam int unsigned RCntW = $clog2(RowDepth + 1);
  logic [15:0]      s_row_q, s_row_d;
  logic             rd_pending_q, rd_pending_d, rfifo_empty;
  logic [RCntW-1:0] rcnt;
  logic             rd_bf16_q, rd_bf16_d, rd_relu_q, rd_relu_d;
  logic [9:0]       rd_bytes_q, rd_bytes_d;  // the row's end: (col + elems) x size
  logic [4:0]       rd_cbeat_q, rd_cbeat_d;  // its first beat

  // A row read from the accumulators or (source 1) the vector memory, one cycle after its read.
  logic rd_go, vm_re, rd_vm_q, rd_vm_d, row_valid;
  logic [Cols*32-1:0] vm_data, row_data;
  logic             vec_acc_re;
  logic [AccAW-1:0] vec_acc_addr;
  assign rd_go      = !wdesc_empty && (32'(rcnt) + 32'(rd_pending_q) < RowDepth);
  assign st_valid_o = (rd_go && !s_vmem) || vec_acc_re;
  assign st_addr_o  = vec_busy ? vec_acc_addr : AccAW'(s_acc + s_row_q);
  assign vm_re      = rd_go && s_vmem;
  assign rd_take    = rd_go && (s_row_q == s_rows - 16'd1);
  assign row_valid  = rd_pending_q;
  assign row_data   = rd_vm_q ? vm_data : st_data_i;

  always_comb begin
    s_row_d      = s_row_q;
    rd_pending_d = rd_pending_q;
    rd_bf16_d    = rd_bf16_q;
    rd_relu_d    = rd_relu_q;
    rd_bytes_d   = rd_bytes_q;
    rd_cbeat_d   = rd_cbeat_q;
    rd_vm_d      = rd_vm_q;
    if (flush_i) begin
      s_row_d      = '0;
      rd_pending_d = 1'b0;
    end else begin
      rd_pending_d = rd_go;
      if (rd_go) begin
        s_row_d    = rd_take ? 16'd0 : s_row_q + 16'd1;
        rd_vm_d    = s_vmem;
        rd_bf16_d  = s_bf16;
        rd_relu_d  = s_relu;
        rd_bytes_d = 10'({5'd0, s_cbeat} << 5) +
                     (s_bf16 ? 10'(s_elems) * 10'd2 : 10'(s_elems) * 10'd4);
        rd_cbeat_d = s_cbeat;
      end
    end
  end
  `TPU_FF(s_row_q, s_row_d, '0)
  `TPU_FF(rd_pending_q, rd_pending_d, 1'b0)
  `TPU_FF(rd_bf16_q, rd_bf16_d, 1'b0)
  `TPU_FF(rd_relu_q, rd_relu_d, 1'b0)
  `TPU_FF(rd_bytes_q, rd_bytes_d, '0)
  `TPU_FF(rd_cbeat_q, rd_cbeat_d, '0)
  `TPU_FF(rd_vm_q, rd_vm_d, 1'b0)

  // Conversion of the row that arrives (st_valid_i, one cycle after its read).
  logic [Cols*32-1:0] relu_row;
  logic [Cols*16-1:0] bf16_row;
  for (genvar c = 0; c < Cols; c++) begin : gen_cvt
    tpu_fp32_to_bf16 u_cvt (
      .ftz_i (ftz_i),
      .relu_i(rd_relu_q),
      .data_i(row_data[32*c +: 32]),
      .act_o (relu_row[32*c +: 32]),
      .data_o(bf16_row[16*c +: 16])
    );
  end
  logic [PackW-1:0] packed_row;
  assign packed_row = rd_bf16_q ? PackW'(bf16_row) : PackW'(relu_row);

  logic [PackW+15-1:0] rhead;
  logic               r_pop;
  tpu_fifo #(.Width(PackW + 15), .Depth(RowDepth)) u_rows (
    .clk_i, .rst_ni, .flush_i,
    .push_i(row_valid), .data_i({rd_cbeat_q, rd_bytes_q, packed_row}), .full_o(),
    .pop_i (r_pop), .data_o(rhead), .empty_o(rfifo_empty), .count_o(rcnt)
  );

  // Beats of the head row: as many as the lanes, the row and the burst allow (a burst may hold
  // several rows, a row may be cut into bursts at 4 KB). Its beats start at its first one
  // (col's); rbeat_q counts those sent.
  logic [3:0]  rbeat_q, rbeat_d;
  logic [4:0]  rfirst, rbeat;
  logic [9:0]  rbytes;
  logic        row_last_beat;
  logic [10:0] beat_off;
  logic [4:0]  row_left, burst_left, n;
  assign rbytes        = rhead[PackW +: 10];
  assign rfirst        = rhead[PackW + 10 +: 5];
  assign rbeat         = rfirst + 5'(rbeat_q);
  assign beat_off      = {1'b0, rbeat, 5'd0};
  assign row_left      = 5'((11'(rbytes) + 11'd31 - beat_off) >> 5);
  assign burst_left    = 5'(9'(blen) + 9'd1 - 9'(wbeat_q));
  always_comb begin
    n = 5'(w_lanes_i);
    if (row_left < n)   n = row_left;
    if (burst_left < n) n = burst_left;
  end
  assign w.count       = LCntW'(n);
  assign row_last_beat = n == row_left;
  assign w_valid_o     = !rfifo_empty && !blen_empty && w_lanes_i != '0;
  assign w_fire        = w_valid_o && w_ready_i;
  assign r_pop         = w_fire && row_last_beat;
  assign w_fire_o      = w_fire;

  logic [PackW+Lanes*256-1:0] shifted;
  assign shifted  = {{(Lanes*256){1'b0}}, rhead[PackW-1:0]} >> {rbeat, 8'd0};
  logic [Lanes*32-1:0] strb;
  for (genvar b = 0; b < Lanes * 32; b++) begin : gen_strb
    assign strb[b] = (beat_off + 11'(b)) < 11'(rbytes);
  end
  assign w.data = shifted[Lanes*256-1:0];
  assign w.strb = strb;
  assign w_o    = w;

  assign rbeat_d = (flush_i || row_last_beat) ? 4'd0 : rbeat_q + 4'(n);
  `TPU_FFL(rbeat_q, rbeat_d, flush_i || w_fire, '0)

  assign wside_busy = rd_pending_q || !rfifo_empty;

  // ---------------------------------------------------------------------------------------------
  // The vector unit
  // ---------------------------------------------------------------------------------------------
  if (VmemDepth > 0) begin : gen_vec
    tpu_accel_vec #(
      .Cols(Cols), .AccDepth(AccDepth), .VmemDepth(VmemDepth), .AddrW(AddrW), .Lanes(Lanes)
    ) u_vec (
      .clk_i, .rst_ni, .flush_i, .ftz_i,
      .start_i(vec_go), .instr_i(head_instr_i), .pc_i(head_pc_i),
      .busy_o(vec_busy), .vop_o(vop_busy_o), .done_o(vec_done), .push_o(vec_push),
      .pc_o(vec_pc), .err_o(vec_err),
      .ar_valid_o, .ar_ready_i, .ar_o, .r_valid_i, .r_i, .r_take_o,
      .acc_re_o(vec_acc_re), .acc_addr_o(vec_acc_addr), .acc_data_i(st_data_i),
      .st_re_i(vm_re), .st_addr_i(VmAW'(s_acc + s_row_q)), .st_data_o(vm_data)
    );
  end else begin : gen_no_vec
    // Version 1.3: the decoder sends this module no vector instruction.
    assign vec_busy     = 1'b0;
    assign vop_busy_o   = 1'b0;
    assign vec_done     = 1'b0;
    assign vec_push     = 1'b0;
    assign vec_pc       = '0;
    assign vec_err      = 1'b0;
    assign vec_acc_re   = 1'b0;
    assign vec_acc_addr = '0;
    assign vm_data      = '0;
    assign ar_valid_o   = 1'b0;
    assign ar_o         = '0;
    assign r_take_o     = '0;
    logic unused_vec;
    assign unused_vec = ^{ar_ready_i, r_valid_i, r_i, vm_re, vec_go};
  end

`ifndef SYNTHESIS
  a_resp_expected: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    b_valid_i |-> b_seq_q != aw_seq_q)
    else $error("tpu_accel_store: a write response with no burst waiting for it");
  a_row_room: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               row_valid |-> 32'(rcnt) < RowDepth || r_pop)
    else $error("tpu_accel_store: a row arrives with its queue full");
  // The accumulators answer every read a cycle later; STORE's reads and the vector unit's never
  // share a cycle.
  a_acc_answer: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                 rd_pending_q && !rd_vm_q |-> st_valid_i)
    else $error("tpu_accel_store: an accumulator row did not come a cycle after its read");
  a_one_acc_reader: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                     !(vec_acc_re && rd_go))
    else $error("tpu_accel_store: STORE and the vector unit read the accumulators together");
  // STORE's col (version 1.6): a queued row starts inside the packed row, before its end.
  a_first_beat: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                 !rfifo_empty |-> 32'(rfirst) < RowBeats &&
                                                  11'(rbytes) > {1'b0, rfirst, 5'd0})
    else $error("tpu_accel_store: a row's first beat (col) at or past its end");
  a_one_token: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                !(vec_done && b_valid_i))
    else $error("tpu_accel_store: a vector instruction completes beside a write response");
`endif

endmodule
