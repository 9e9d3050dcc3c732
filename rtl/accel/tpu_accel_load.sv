// SPDX-License-Identifier: Apache-2.0
// The load module: executes LOAD to the activation (buffer 0) and weight (buffer 1) buffers.
//
// An instruction starts when its tokens are there (pop_next: a compute->load token) and the
// burst generator is free: it pops the tokens and queues a descriptor, and the generator issues
// the read bursts (a read client of tpu_accel_dma). Read data returns in order, 1..Lanes beats a
// cycle, of which the module takes those of one row (a burst may span rows); each 32-byte beat is
// one chunk of 16 elements of a buffer row,
// elements at or beyond `elems` become +0. When the
// instruction's last beat is written it is complete and pushes its token (push_next). So the
// reads of the next LOAD go out while the data of this one still arrives.
//
// A transposing LOAD (version 1.3) writes its rows into a tile of the transposer instead (two
// tiles: one fills while the other drains); once its last beat is in, the tile drains a column a
// cycle into buffer rows dst .. dst + elems - 1 (element i of a column is source row i, elements
// at or beyond `rows` +0), and the LOAD is complete with its last column. The buffers' write
// port goes to the draining tile first: a plain LOAD's beats wait while a tile is full or
// draining, so buffer writes and tokens stay in instruction order.
`include "tpu_channels.svh"
`include "tpu_ff.svh"
module tpu_accel_load #(
  parameter int unsigned Rows     = 16,
  parameter int unsigned Cols     = 16,
  parameter int unsigned ActDepth = 2048,
  parameter int unsigned WgtDepth = 2048,
  parameter int unsigned AddrW    = 31,
  parameter int unsigned DescDepth = 4,
  parameter int unsigned Lanes    = 1,
  localparam int unsigned CntW    = $clog2(Lanes + 1),
  localparam int unsigned Side    = (Rows > Cols) ? Rows : Cols,   // the transposer's tiles
  localparam int unsigned IdxW    = (Side > 1) ? $clog2(Side) : 1,
  localparam int unsigned ActAW   = (ActDepth > 1) ? $clog2(ActDepth) : 1,
  localparam int unsigned WgtAW   = (WgtDepth > 1) ? $clog2(WgtDepth) : 1,
  localparam int unsigned DmaBurstW   = `TPU_DMA_BURST_W(AddrW),
  localparam int unsigned DmaRdBeatsW = `TPU_DMA_RD_BEATS_W(CntW, Lanes)
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                flush_i,
  input  logic                halt_i,       // start no instruction
  // Instruction queue head
  input  logic                head_valid_i,
  input  logic [255:0]        head_instr_i,
  input  logic [31:0]         head_pc_i,
  output logic                head_pop_o,
  // Tokens
  input  logic                tok_next_i,   // compute->load holds a token
  output logic                pop_next_o,
  output logic                push_next_o,
  output logic [31:0]         push_pc_o,
  // Status for the command processor (accel_status: rtl/channels.json)
  output logic [`TPU_ACCEL_STATUS_W(32)-1:0] status_o,
  // Read client of tpu_accel_dma (takes the offered beats up to the row's end)
  // (dma_burst, dma_rd_beats: rtl/channels.json)
  output logic                ar_valid_o,
  input  logic                ar_ready_i,
  output logic [DmaBurstW-1:0] ar_o,
  input  logic                r_valid_i,
  input  logic [DmaRdBeatsW-1:0] r_i,
  output logic [CntW-1:0]     r_take_o,
  // Buffer write ports
  output logic                act_we_o,
  output logic [ActAW-1:0]    act_waddr_o,
  output logic [Rows-1:0]     act_wen_o,
  output logic [Rows*16-1:0]  act_wdata_o,
  output logic                wgt_we_o,
  output logic [WgtAW-1:0]    wgt_waddr_o,
  output logic [Cols-1:0]     wgt_wen_o,
  output logic [Cols*16-1:0]  wgt_wdata_o
);

  `TPU_DMA_TYPEDEFS(AddrW, CntW, Lanes)
  dma_rd_beats_t r;
  dma_burst_t    ar;  // by field in the waves
  assign r    = r_i;
  assign ar_o = ar;

  // ---------------------------------------------------------------------------------------------
  // Head: start an instruction
  // ---------------------------------------------------------------------------------------------
  logic [7:0]  op;
  logic        is_end, need_tok, gen_busy, desc_full, desc_empty, start, drain_idle;
  logic [15:0] rows, elems, dst;
  logic [3:0]  bpr;
  logic        fin_q;

  assign op       = tpu_isa_pkg::instr_opcode(head_instr_i);
  assign is_end   = op == tpu_isa_pkg::OpEnd;
  assign need_tok = head_instr_i[tpu_isa_pkg::FlagPopNext];
  assign dst      = tpu_isa_pkg::load_dst(head_instr_i);
  assign rows     = tpu_isa_pkg::load_rows(head_instr_i);
  assign elems    = tpu_isa_pkg::load_elems(head_instr_i);
  assign bpr      = 4'((17'(elems) * 17'd2 + 17'd31) >> 5);

  assign start = head_valid_i && !is_end && !halt_i && !fin_q && !gen_busy && !desc_full &&
                 (!need_tok || tok_next_i);
  logic end_go;
  assign end_go = head_valid_i && is_end && !halt_i && !fin_q && !gen_busy && desc_empty &&
                  drain_idle;

  assign head_pop_o    = start || end_go;
  assign pop_next_o = start && need_tok;
  typedef `TPU_ACCEL_STATUS_T(32) accel_status_t;
  accel_status_t status;
  assign status_o = status;
  assign status.fin     = fin_q;
  assign status.head_pc = head_pc_i;
  logic blocked;  // the head waits for its token
  assign blocked        = head_valid_i && !is_end && need_tok && !tok_next_i;
  assign status.blocked = blocked;
  assign status.stuck   = !gen_busy && desc_empty && drain_idle &&
                          (!head_valid_i || blocked || halt_i || fin_q);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)       fin_q <= 1'b0;
    else if (flush_i)  fin_q <= 1'b0;
    else if (end_go)   fin_q <= 1'b1;
  end

  tpu_accel_burst #(.AddrW(AddrW)) u_burst (
    .clk_i, .rst_ni, .flush_i,
    .start_i   (start),
    .addr_i    (AddrW'(tpu_isa_pkg::load_hbm_addr(head_instr_i))),
    .stride_i  (tpu_isa_pkg::load_hbm_stride(head_instr_i)),
    .rows_i    (rows),
    .bpr_i     (5'(bpr)),
    .once_i    (1'b0),
    .busy_o    (gen_busy),
    .req_valid_o(ar_valid_o),
    .req_ready_i(ar_ready_i),
    .req_o     (ar),
    .req_last_o()
  );

  // ---------------------------------------------------------------------------------------------
  // Descriptors: what the returning beats are for
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned DescW = 1 + 1 + 16 + 16 + 16 + 4 + 1 + 32;
  logic [DescW-1:0] desc_in, desc;
  logic             d_tr, d_buf, d_push;
  logic [15:0]      d_dst, d_rows, d_elems;
  logic [3:0]       d_bpr;
  logic [31:0]      d_pc;
  logic             beat, last_beat;

  assign desc_in = {head_instr_i[tpu_isa_pkg::LoadTransposeBit],
                     tpu_isa_pkg::load_buffer(head_instr_i) == tpu_isa_pkg::BufWgt, dst, rows,
                     elems, bpr, head_instr_i[tpu_isa_pkg::FlagPushNext], head_pc_i};
  assign {d_tr, d_buf, d_dst, d_rows, d_elems, d_bpr, d_push, d_pc} = desc;

  tpu_fifo #(.Width(DescW), .Depth(DescDepth)) u_desc (
    .clk_i, .rst_ni, .flush_i,
    .push_i (start), .data_i(desc_in), .full_o(desc_full),
    .pop_i  (beat && last_beat), .data_o(desc), .empty_o(desc_empty), .count_o()
  );

  // ---------------------------------------------------------------------------------------------
  // Returning beats -> buffer rows
  // ---------------------------------------------------------------------------------------------
  logic [15:0] row_q, row_d;     // row of the instruction
  logic [3:0]  chunk_q, chunk_d;   // first beat of the row arriving now
  logic [4:0]  chunk_end; // one past the last
  logic [4:0]  row_left;
  logic        last_chunk;

  // The module takes beats (up to the row's end) unless the transposer is in the way: a
  // transposing LOAD needs its tile free, a plain one needs both tiles empty and the write port.
  logic       fset_q, fset_d, dset_q, dset_d, dv_q, dv_d;
  logic [1:0] full_q, full_d;
  assign drain_idle = full_q == 2'b00 && !dv_q;
  assign beat       = r_valid_i && (d_tr ? !full_q[fset_q] : drain_idle);
  assign row_left   = 5'(d_bpr) - 5'(chunk_q);
  assign r_take_o   = !beat ? '0 : (5'(r.count) > row_left) ? CntW'(row_left) : r.count;
  assign chunk_end  = 5'(chunk_q) + 5'(r_take_o);
  assign last_chunk = chunk_end == 5'(d_bpr);
  assign last_beat  = last_chunk && (row_q == d_rows - 16'd1);

  always_comb begin
    row_d   = row_q;
    chunk_d = chunk_q;
    if (flush_i) begin
      row_d   = '0;
      chunk_d = '0;
    end else if (beat) begin
      if (last_beat) begin
        row_d   = '0;
        chunk_d = '0;
      end else if (last_chunk) begin
        row_d   = row_q + 16'd1;
        chunk_d = '0;
      end else begin
        chunk_d = 4'(chunk_end);
      end
    end
  end
  `TPU_FF(row_q, row_d, '0)
  `TPU_FF(chunk_q, chunk_d, '0)

  // Element e of a row comes from beat e/16 (lane e/16 - chunk_q of this cycle), element e%16 of
  // it; it is written by that beat, and with the row's last beat when e lies beyond it (those
  // become +0), so every element of the row is set.
  logic [Side-1:0]    el_wen;
  logic [Side*16-1:0] el_wd;
  for (genvar e = 0; e < Side; e++) begin : gen_el
    logic       here;
    logic [4:0] lane;
    assign lane = 5'(e / 16) - 5'(chunk_q);
    assign here = 32'(chunk_q) <= e / 16 && e / 16 < 32'(chunk_end);
    assign el_wen[e] = here || (last_chunk && 32'(chunk_end) <= e / 16);
    logic [15:0] v;
    always_comb begin
      v = 16'd0;
      for (int unsigned l = 0; l < Lanes; l++) begin
        if (lane == 5'(l)) v = r.data[256*l + 16*(e%16) +: 16];
      end
    end
    assign el_wd[16*e +: 16] = (here && e < 32'(d_elems)) ? v : 16'd0;
  end
  logic [Rows-1:0]    a_wen;
  logic [Cols-1:0]    w_wen;
  logic [Rows*16-1:0] a_wd;
  logic [Cols*16-1:0] w_wd;
  assign a_wen = el_wen[Rows-1:0];
  assign a_wd  = el_wd[Rows*16-1:0];
  assign w_wen = el_wen[Cols-1:0];
  assign w_wd  = el_wd[Cols*16-1:0];

  // ---------------------------------------------------------------------------------------------
  // Transposing LOADs: fill a tile (fset_q), drain the full tiles in order (dset_q)
  // ---------------------------------------------------------------------------------------------
  logic            t_buf [2], t_push [2];
  logic [15:0]     t_dst [2], t_rows [2], t_elems [2];
  logic [31:0]     t_pc [2];
  logic [15:0]     de_q, de_d;                 // the column read now
  logic            rd_go, rd_last;
  logic            dlast_q, dset2_q;     // the column written now: its tile and whether last
  logic [15:0]     dcol_q;
  logic [Side*16-1:0] col_data, col_wd;

  assign rd_go   = full_q[dset_q];
  assign rd_last = de_q == t_elems[dset_q] - 16'd1;

  always_comb begin
    full_d = full_q;
    fset_d = fset_q;
    dset_d = dset_q;
    de_d   = de_q;
    dv_d   = dv_q;
    if (flush_i) begin
      full_d = '0;
      fset_d = 1'b0;
      dset_d = 1'b0;
      de_d   = '0;
      dv_d   = 1'b0;
    end else begin
      dv_d = rd_go;
      if (rd_go) begin
        de_d = rd_last ? 16'd0 : de_q + 16'd1;
        if (rd_last) begin
          full_d[dset_q] = 1'b0;
          dset_d         = !dset_q;
        end
      end
      if (beat && last_beat && d_tr) begin
        full_d[fset_q] = 1'b1;
        fset_d         = !fset_q;
      end
    end
  end
  `TPU_FF(full_q, full_d, '0)
  `TPU_FF(fset_q, fset_d, 1'b0)
  `TPU_FF(dset_q, dset_d, 1'b0)
  `TPU_FF(de_q, de_d, '0)
  `TPU_FF(dv_q, dv_d, 1'b0)
  always_ff @(posedge clk_i) begin
    if (beat && last_beat && d_tr) begin
      t_buf[fset_q]   <= d_buf;
      t_push[fset_q]  <= d_push;
      t_dst[fset_q]   <= d_dst;
      t_rows[fset_q]  <= d_rows;
      t_elems[fset_q] <= d_elems;
      t_pc[fset_q]    <= d_pc;
    end
    if (rd_go) begin
      dcol_q  <= de_q;
      dset2_q <= dset_q;
      dlast_q <= rd_last;
    end
  end

  tpu_accel_transpose #(.Side(Side)) u_transpose (
    .clk_i,
    .we_i     (beat && d_tr),
    .wr_set_i (fset_q),
    .wr_row_i (IdxW'(row_q)),
    .wr_en_i  (el_wen),
    .wr_data_i(el_wd),
    .re_i     (rd_go),
    .rd_set_i (dset_q),
    .rd_col_i (IdxW'(de_q)),
    .rd_data_o(col_data)
  );
  // Element i of the column written now: source row i, +0 at or beyond the LOAD's rows.
  for (genvar i = 0; i < Side; i++) begin : gen_col
    assign col_wd[16*i +: 16] = (32'(i) < 32'(t_rows[dset2_q])) ? col_data[16*i +: 16] : 16'd0;
  end

  logic        w_drain;
  assign w_drain = dv_q;

  assign act_we_o    = w_drain ? !t_buf[dset2_q] : beat && !d_tr && !d_buf;
  assign act_waddr_o = w_drain ? ActAW'(t_dst[dset2_q] + dcol_q) : ActAW'(d_dst + row_q);
  assign act_wen_o   = w_drain ? '1 : a_wen;
  assign act_wdata_o = w_drain ? col_wd[Rows*16-1:0] : a_wd;
  assign wgt_we_o    = w_drain ? t_buf[dset2_q] : beat && !d_tr && d_buf;
  assign wgt_waddr_o = w_drain ? WgtAW'(t_dst[dset2_q] + dcol_q) : WgtAW'(d_dst + row_q);
  assign wgt_wen_o   = w_drain ? '1 : w_wen;
  assign wgt_wdata_o = w_drain ? col_wd[Cols*16-1:0] : w_wd;

  assign push_next_o = w_drain ? dlast_q && t_push[dset2_q] : beat && last_beat && !d_tr && d_push;
  assign push_pc_o   = w_drain ? t_pc[dset2_q] : d_pc;
  logic [Lanes-1:0] lane_on;
  for (genvar i = 0; i < Lanes; i++) begin : gen_lane_on
    assign lane_on[i] = CntW'(i) < r_take_o;
  end
  assign status.err    = beat && |(r.err & lane_on);
  assign status.err_pc = d_pc;

`ifndef SYNTHESIS
  a_beat_expected: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    r_valid_i |-> !desc_empty)
    else $error("tpu_accel_load: a read beat with no LOAD waiting for it");
`endif

endmodule
