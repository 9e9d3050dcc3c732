// SPDX-License-Identifier: Apache-2.0
// The compute module: executes GEMM on the matrix unit and LOAD to the accumulators (buffer 2).
//
// GEMM: starts when its tokens are there (pop_prev: load->compute, pop_next: store->compute) and
// the matrix unit takes the command; the weight rows (load_weights) and the activation rows are
// queued as stream jobs that feed the unit's ports from the buffers. The unit works on one command
// while it loads the next tile, so GEMMs run back to back. A GEMM is complete at the unit's done
// pulse (its last result row written); then it pushes its tokens (push_prev: compute->load, the
// weight and activation slots are free; push_next: compute->store, the results are there).
//
// LOAD to the accumulators: waits until every earlier GEMM that uses its accumulator bank is
// complete (program order on the accumulators; the banks are tpu_pkg::acc_bank_rows' halves, each
// with its own write port), so that it runs beside GEMMs in the other bank; a LOAD that pushes a
// token waits for every earlier GEMM and LOAD, and a GEMM waits for a LOAD still writing its bank,
// or any running LOAD when it pushes a compute->store token. Up to 1 + LdQueue LOADs run at once:
// a LOAD starts once the one before has requested its bursts (the DMA answers in request order),
// queues behind the one writing rows, and writes its own when that one is complete; no LOAD
// starts beside one that pushes a token. A GEMM uses the banks of its rows and of
// its broadcast row; a hold LOAD none. It reads the rows (a read client of tpu_accel_dma,
// 1..Lanes beats a cycle), assembles each row of Cols fp32 values (elements at or beyond `elems`
// +0) and writes it through the unit's load port. With
// hbm_stride 0 the row is read once and written `rows` times (a bias broadcast over rows).
// Residual adds (version 1.5): a LOAD with `hold` keeps its one row in the held row instead of
// writing it; a LOAD with `add` writes every row read plus the held row, element by element (the
// vector unit's add, fma32(x, 1, held): one fp32 FMA per element of the beats taken in a cycle).
// The held row is +0 after reset and after every run (flush).
`include "tpu_channels.svh"
`include "tpu_ff.svh"
module tpu_accel_compute #(
  parameter int unsigned Rows     = 16,
  parameter int unsigned Cols     = 16,
  parameter int unsigned ActDepth = 2048,
  parameter int unsigned WgtDepth = 2048,
  parameter int unsigned AccDepth = 4096,
  parameter int unsigned AddrW    = 31,
  parameter int unsigned DoneDepth = 16,  // GEMMs in flight (short ones: ~400 cycles latency)
  parameter int unsigned Lanes    = 1,
  localparam int unsigned LCntW   = $clog2(Lanes + 1),
  localparam int unsigned ActAW   = (ActDepth > 1) ? $clog2(ActDepth) : 1,
  localparam int unsigned WgtAW   = (WgtDepth > 1) ? $clog2(WgtDepth) : 1,
  localparam int unsigned AccAW   = (AccDepth > 1) ? $clog2(AccDepth) : 1,
  localparam int unsigned CntW    = $clog2(AccDepth + 1),
  localparam int unsigned KvW     = $clog2(Rows + 1),
  localparam int unsigned NvW     = $clog2(Cols + 1),
  localparam int unsigned CmdW    = `TPU_MXU_CMD_W(CntW, KvW, NvW, AccAW),
  localparam int unsigned DmaBurstW   = `TPU_DMA_BURST_W(AddrW),
  localparam int unsigned DmaRdBeatsW = `TPU_DMA_RD_BEATS_W(LCntW, Lanes)
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                flush_i,
  input  logic                halt_i,
  input  logic                ftz_i,         // FTZ mode (a LOAD's add)
  // Instruction queue head
  input  logic                head_valid_i,
  input  logic [255:0]        head_instr_i,
  input  logic [31:0]         head_pc_i,
  output logic                head_pop_o,
  // Tokens
  input  logic                tok_prev_i,    // load->compute holds a token
  input  logic                tok_next_i,    // store->compute holds a token
  output logic                pop_prev_o,
  output logic                pop_next_o,
  output logic                push_prev_o,
  output logic                push_next_o,
  output logic [31:0]         push_pc_o,
  // Status for the command processor (accel_status: rtl/channels.json)
  output logic [`TPU_ACCEL_STATUS_W(32)-1:0] status_o,
  // For the stall breakdown
  output logic                wait_load_o,   // the head waits for a load->compute token
  output logic                wait_store_o,  // the head waits for a store->compute token
  output logic                head_loadw_o,  // the head is a GEMM that loads weights
  output logic                acc_load_o,    // a LOAD to the accumulators is running
  // Read client of tpu_accel_dma (accumulator loads)
  // (dma_burst, dma_rd_beats: rtl/channels.json)
  output logic                ar_valid_o,
  input  logic                ar_ready_i,
  output logic [DmaBurstW-1:0] ar_o,
  input  logic                r_valid_i,
  input  logic [DmaRdBeatsW-1:0] r_i,
  output logic [LCntW-1:0]    r_take_o,
  // Buffer read ports
  output logic                act_re_o,
  output logic [ActAW-1:0]    act_raddr_o,
  input  logic [Rows*16-1:0]  act_rdata_i,
  output logic                wgt_re_o,
  output logic [WgtAW-1:0]    wgt_raddr_o,
  input  logic [Cols*16-1:0]  wgt_rdata_i,
  // The matrix unit
  output logic                mxu_cmd_valid_o,
  input  logic                mxu_cmd_ready_i,
  output logic [CmdW-1:0]     mxu_cmd_o,        // mxu_cmd (rtl/channels.json)
  output logic                mxu_w_valid_o,
  input  logic                mxu_w_ready_i,
  output logic [Cols*16-1:0]  mxu_w_data_o,
  output logic                mxu_a_valid_o,
  input  logic                mxu_a_ready_i,
  output logic [Rows*16-1:0]  mxu_a_data_o,
  output logic                mxu_ld_valid_o,
  input  logic                mxu_ld_ready_i,
  output logic [AccAW-1:0]    mxu_ld_addr_o,
  output logic [Cols*32-1:0]  mxu_ld_data_o,
  input  logic                mxu_done_i,
  input  logic                mxu_idle_i
);

  `TPU_DMA_TYPEDEFS(AddrW, LCntW, Lanes)
  dma_rd_beats_t r;
  dma_burst_t    ar;  // by field in the waves
  assign r    = r_i;
  assign ar_o = ar;

  // ---------------------------------------------------------------------------------------------
  // Head
  // ---------------------------------------------------------------------------------------------
  logic [7:0]  op;
  logic        is_gemm, is_accld, is_end, need_prev, need_next, toks_ok, loadw;
  logic        fin_q, done_full, done_empty, wjob_full, ajob_full, wbusy, abusy;
  logic        acc_busy_q, acc_busy_d, in_flight, gemm_go, accld_go, end_go;
  logic [15:0] g_act, g_wgt, g_acc, g_rows, g_kv, g_nv;

  assign op        = tpu_isa_pkg::instr_opcode(head_instr_i);
  assign is_gemm   = op == tpu_isa_pkg::OpGemm;
  assign is_accld  = op == tpu_isa_pkg::OpLoad;  // the dispatcher sends only accumulator LOADs here
  assign is_end    = op == tpu_isa_pkg::OpEnd;
  assign need_prev = head_instr_i[tpu_isa_pkg::FlagPopPrev];
  assign need_next = head_instr_i[tpu_isa_pkg::FlagPopNext];
  assign toks_ok   = (!need_prev || tok_prev_i) && (!need_next || tok_next_i);
  assign loadw     = head_instr_i[tpu_isa_pkg::GemmLoadWeightsBit];
  assign g_act     = tpu_isa_pkg::gemm_act(head_instr_i);
  assign g_wgt     = tpu_isa_pkg::gemm_wgt(head_instr_i);
  assign g_acc     = tpu_isa_pkg::gemm_acc(head_instr_i);
  assign g_rows    = tpu_isa_pkg::gemm_rows(head_instr_i);
  assign g_kv      = tpu_isa_pkg::gemm_kv(head_instr_i);
  assign g_nv      = tpu_isa_pkg::gemm_nv(head_instr_i);

  assign in_flight = !done_empty || acc_busy_q || !mxu_idle_i || wbusy || abusy;
  logic can_start;
  assign can_start = head_valid_i && !halt_i && !fin_q;

  // The accumulator banks (tpu_accumulators) an instruction uses: the banks of rows lo .. lo+n-1.
  localparam int unsigned Banks     = (AccDepth >= 2) ? 2 : 1;
  localparam int unsigned Bank0Rows = tpu_pkg::acc_bank_rows(AccDepth);
  localparam int unsigned GemmsW    = $clog2(DoneDepth + 1);
  function automatic logic [1:0] banks_of(input logic [15:0] lo, input logic [15:0] n);
    banks_of = {Banks == 2 && 32'(lo) + 32'(n) > Bank0Rows, 32'(lo) < Bank0Rows};
  endfunction
  logic [1:0] g_banks, l_banks, l_banks_q, done_banks, busy_banks;
  logic       l_pushes;
  assign g_banks  = banks_of(g_acc, g_rows) |
                    (head_instr_i[tpu_isa_pkg::GemmBroadcastBit]
                         ? banks_of(tpu_isa_pkg::gemm_init_row(head_instr_i), 16'd1) : 2'b00);
  assign l_banks  = head_instr_i[tpu_isa_pkg::LoadHoldBit]
                        ? 2'b00 : banks_of(tpu_isa_pkg::load_dst(head_instr_i),
                                           tpu_isa_pkg::load_rows(head_instr_i));
  assign l_pushes = head_instr_i[tpu_isa_pkg::FlagPushPrev] ||
                    head_instr_i[tpu_isa_pkg::FlagPushNext];

  // GEMMs in flight (issued, done pulse not yet seen) per bank.
  logic [2*GemmsW-1:0] bank_gemms_q, bank_gemms_d;
  always_comb begin
    bank_gemms_d = bank_gemms_q;
    for (int unsigned k = 0; k < 2; k++) begin
      if (gemm_go && g_banks[k])
        bank_gemms_d[k*GemmsW +: GemmsW] = bank_gemms_d[k*GemmsW +: GemmsW] + GemmsW'(1);
      if (mxu_done_i && done_banks[k])
        bank_gemms_d[k*GemmsW +: GemmsW] = bank_gemms_d[k*GemmsW +: GemmsW] - GemmsW'(1);
    end
    if (flush_i) bank_gemms_d = '0;
  end
  `TPU_FF(bank_gemms_q, bank_gemms_d, '0)
  assign busy_banks = {bank_gemms_q[GemmsW +: GemmsW] != '0, bank_gemms_q[0 +: GemmsW] != '0};

  logic              l_once_q, l_once_d, l_pprev_q, l_pprev_d, l_pnext_q, l_pnext_d;
  // A GEMM that pushes a compute->store token waits for a running LOAD too: the store module may
  // then read the LOAD's rows or write the HBM bytes it reads. A compute->load token orders only
  // buffer writes and HBM reads after the GEMM, which an accumulator LOAD does not conflict with,
  // unless that LOAD pushes a token itself (a barrier's): then the GEMM's would come first, or in
  // the same cycle, and the later module would count one (tokens keep program order).
  logic g_pushes, l_wait;
  assign g_pushes = head_instr_i[tpu_isa_pkg::FlagPushNext] ||
                    (head_instr_i[tpu_isa_pkg::FlagPushPrev] && (l_pprev_q || l_pnext_q));
  logic [1:0] ld_banks;  // the banks of the running and queued LOADs
  logic       burst_busy, pend_full, pend_empty;
  assign l_wait   = acc_busy_q && (g_pushes || |(g_banks & ld_banks));
  assign gemm_go  = can_start && is_gemm && toks_ok && !l_wait && mxu_cmd_ready_i && !done_full &&
                    !ajob_full && (!loadw || !wjob_full);
  assign accld_go = can_start && is_accld && toks_ok && !burst_busy &&
                    (!acc_busy_q || (!pend_full && !l_pprev_q && !l_pnext_q)) &&
                    (l_pushes ? !in_flight : !(|(l_banks & busy_banks)));
  assign end_go   = can_start && is_end && !in_flight;

  assign head_pop_o    = gemm_go || accld_go || end_go;
  assign pop_prev_o = (gemm_go || accld_go) && need_prev;
  assign pop_next_o = (gemm_go || accld_go) && need_next;
  typedef `TPU_ACCEL_STATUS_T(32) accel_status_t;
  accel_status_t status;
  assign status_o = status;
  assign status.fin     = fin_q;
  assign status.head_pc = head_pc_i;
  logic blocked;  // the head waits for its token
  assign blocked        = head_valid_i && !is_end && !toks_ok;
  assign status.blocked = blocked;
  assign status.stuck   = !in_flight && (!head_valid_i || blocked || halt_i || fin_q);

  assign wait_load_o  = head_valid_i && !is_end && need_prev && !tok_prev_i;
  assign wait_store_o = head_valid_i && !is_end && need_next && !tok_next_i;
  assign head_loadw_o = head_valid_i && is_gemm && loadw;
  assign acc_load_o   = acc_busy_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)      fin_q <= 1'b0;
    else if (flush_i) fin_q <= 1'b0;
    else if (end_go)  fin_q <= 1'b1;
  end

  // ---------------------------------------------------------------------------------------------
  // GEMM: the command, the streams, completion
  // ---------------------------------------------------------------------------------------------
  typedef `TPU_MXU_CMD_T(CntW, KvW, NvW, AccAW) mxu_cmd_t;
  mxu_cmd_t mxu_cmd;
  always_comb begin
    mxu_cmd        = '0;
    mxu_cmd.rows   = CntW'(g_rows);
    mxu_cmd.kv     = KvW'(g_kv);
    mxu_cmd.nv     = NvW'(g_nv);
    mxu_cmd.addr   = AccAW'(g_acc);
    mxu_cmd.acc    = head_instr_i[tpu_isa_pkg::GemmAccumulateBit];
    mxu_cmd.bcast  = head_instr_i[tpu_isa_pkg::GemmBroadcastBit];
    mxu_cmd.src    = AccAW'(tpu_isa_pkg::gemm_init_row(head_instr_i));
    mxu_cmd.load_w = loadw;
  end
  assign mxu_cmd_valid_o = gemm_go;
  assign mxu_cmd_o       = mxu_cmd;

  tpu_accel_stream #(.AW(WgtAW), .W(Cols * 16)) u_wstream (
    .clk_i, .rst_ni, .flush_i,
    .job_valid_i(gemm_go && loadw), .job_addr_i(WgtAW'(g_wgt)), .job_count_i(g_kv),
    .job_win_i  (1'b0), .job_wfields_i('0),
    .job_full_o (wjob_full), .busy_o(wbusy),
    .re_o(wgt_re_o), .raddr_o(wgt_raddr_o), .rdata_i(wgt_rdata_i),
    .out_valid_o(mxu_w_valid_o), .out_ready_i(mxu_w_ready_i), .out_data_o(mxu_w_data_o)
  );

  // Activation rows: consecutive buffer rows, or through the GEMM's window (version 1.1).
  tpu_accel_stream #(.AW(ActAW), .W(Rows * 16), .Window(1'b1)) u_astream (
    .clk_i, .rst_ni, .flush_i,
    .job_valid_i(gemm_go), .job_addr_i(ActAW'(g_act)), .job_count_i(g_rows),
    .job_win_i  (head_instr_i[tpu_isa_pkg::GemmWindowBit]), .job_wfields_i(head_instr_i[255:136]),
    .job_full_o (ajob_full), .busy_o(abusy),
    .re_o(act_re_o), .raddr_o(act_raddr_o), .rdata_i(act_rdata_i),
    .out_valid_o(mxu_a_valid_o), .out_ready_i(mxu_a_ready_i), .out_data_o(mxu_a_data_o)
  );

  logic [35:0] done_head;
  tpu_fifo #(.Width(36), .Depth(DoneDepth)) u_done (
    .clk_i, .rst_ni, .flush_i,
    .push_i(gemm_go),
    .data_i({g_banks, head_instr_i[tpu_isa_pkg::FlagPushPrev],
             head_instr_i[tpu_isa_pkg::FlagPushNext], head_pc_i}),
    .full_o(done_full),
    .pop_i (mxu_done_i), .data_o(done_head), .empty_o(done_empty), .count_o()
  );
  assign done_banks = done_head[35:34];

  // ---------------------------------------------------------------------------------------------
  // LOAD to the accumulators
  // ---------------------------------------------------------------------------------------------
  logic [15:0]       l_dst_q, l_dst_d, l_rows_q, l_rows_d, l_elems_q, l_elems_d, l_row_q, l_row_d;
  logic [4:0]        l_bpr_q, l_bpr_d, l_chunk_q, l_chunk_d, bpr;  // an fp32 row of 128: 16 beats
  logic [4:0]        l_chunk_end;
  logic              l_hold_q, l_hold_d, l_add_q, l_add_d;
  logic              row_full_q, row_full_d, beat, l_last_chunk, ld_fire;
  logic [31:0]       l_pc_q, l_pc_d;
  logic [1:0]        l_banks_d;  // the running LOAD's banks
  logic [Cols*32-1:0] row_q;
  logic              accld_done;

  // LOADs that have requested (or are requesting) their bursts and wait for the running one:
  // their fields as the running LOAD's registers hold them.
  localparam int unsigned LdQueue = 3;
  localparam int unsigned LdW     = 16 * 3 + 5 + 5 + 32 + 2;
  localparam int unsigned LdCntW  = $clog2(LdQueue + 2);
  logic [LdW-1:0] ld_new, ld_head;
  logic           take_new, take_pend, pend_push;
  assign ld_new = {tpu_isa_pkg::load_dst(head_instr_i), tpu_isa_pkg::load_rows(head_instr_i),
                   tpu_isa_pkg::load_elems(head_instr_i), bpr,
                   tpu_isa_pkg::load_hbm_stride(head_instr_i) == 32'd0,
                   head_instr_i[tpu_isa_pkg::FlagPushPrev], head_instr_i[tpu_isa_pkg::FlagPushNext],
                   head_instr_i[tpu_isa_pkg::LoadHoldBit], head_instr_i[tpu_isa_pkg::LoadAddBit],
                   head_pc_i, l_banks};
  // The running LOAD's registers take the next one: the queue's head when the running one is
  // complete, or a starting LOAD when none runs or none waits.
  assign take_pend = accld_done && !pend_empty;
  assign take_new  = accld_go && (!acc_busy_q || (accld_done && pend_empty));
  assign pend_push = accld_go && !take_new;
  tpu_fifo #(.Width(LdW), .Depth(LdQueue)) u_ldq (
    .clk_i, .rst_ni, .flush_i,
    .push_i(pend_push), .data_i(ld_new), .full_o(pend_full),
    .pop_i (take_pend), .data_o(ld_head), .empty_o(pend_empty), .count_o()
  );

  // LOADs running or queued per bank.
  logic [2*LdCntW-1:0] ld_cnt_q, ld_cnt_d;
  always_comb begin
    ld_cnt_d = ld_cnt_q;
    for (int unsigned k = 0; k < 2; k++) begin
      if (accld_go && l_banks[k])
        ld_cnt_d[k*LdCntW +: LdCntW] = ld_cnt_d[k*LdCntW +: LdCntW] + LdCntW'(1);
      if (accld_done && l_banks_q[k])
        ld_cnt_d[k*LdCntW +: LdCntW] = ld_cnt_d[k*LdCntW +: LdCntW] - LdCntW'(1);
    end
    if (flush_i) ld_cnt_d = '0;
  end
  `TPU_FF(ld_cnt_q, ld_cnt_d, '0)
  assign ld_banks = {ld_cnt_q[LdCntW +: LdCntW] != '0, ld_cnt_q[0 +: LdCntW] != '0};

  assign bpr = 5'((17'(tpu_isa_pkg::load_elems(head_instr_i)) * 17'd4 + 17'd31) >> 5);

  tpu_accel_burst #(.AddrW(AddrW)) u_burst (
    .clk_i, .rst_ni, .flush_i,
    .start_i   (accld_go),
    .addr_i    (AddrW'(tpu_isa_pkg::load_hbm_addr(head_instr_i))),
    .stride_i  (tpu_isa_pkg::load_hbm_stride(head_instr_i)),
    .rows_i    (tpu_isa_pkg::load_rows(head_instr_i)),
    .bpr_i     (bpr),
    .once_i    (tpu_isa_pkg::load_hbm_stride(head_instr_i) == 32'd0),
    .busy_o    (burst_busy),
    .req_valid_o(ar_valid_o),
    .req_ready_i(ar_ready_i),
    .req_o     (ar),
    .req_last_o()
  );

  // Take the offered beats up to the row's end (a burst may span rows).
  logic [4:0] l_row_left;
  assign l_row_left    = l_bpr_q - l_chunk_q;
  assign beat          = r_valid_i && !row_full_q;
  assign r_take_o      = !beat ? '0 : (5'(r.count) > l_row_left) ? LCntW'(l_row_left)
                                                                     : r.count;
  assign l_chunk_end   = l_chunk_q + 5'(r_take_o);
  assign l_last_chunk  = l_chunk_end == l_bpr_q;
  // A held row goes to held_q, not to the accumulators.
  assign ld_fire       = row_full_q && (l_hold_q || mxu_ld_ready_i);
  assign accld_done    = ld_fire && (l_row_q == l_rows_q - 16'd1);

  assign mxu_ld_valid_o = row_full_q && !l_hold_q;
  assign mxu_ld_addr_o  = AccAW'(l_dst_q + l_row_q);
  assign mxu_ld_data_o  = row_q;

  always_comb begin
    acc_busy_d = acc_busy_q;
    row_full_d = row_full_q;
    l_dst_d    = l_dst_q;
    l_rows_d   = l_rows_q;
    l_elems_d  = l_elems_q;
    l_row_d    = l_row_q;
    l_bpr_d    = l_bpr_q;
    l_chunk_d  = l_chunk_q;
    l_once_d   = l_once_q;
    l_pprev_d  = l_pprev_q;
    l_pnext_d  = l_pnext_q;
    l_hold_d   = l_hold_q;
    l_add_d    = l_add_q;
    l_pc_d     = l_pc_q;
    l_banks_d  = l_banks_q;
    if (flush_i) begin
      acc_busy_d = 1'b0;
      row_full_d = 1'b0;
      l_row_d    = '0;
      l_chunk_d  = '0;
    end else begin
      if (beat) begin
        l_chunk_d = l_last_chunk ? 5'd0 : l_chunk_end;
        if (l_last_chunk) row_full_d = 1'b1;
      end
      if (ld_fire) begin
        l_row_d = l_row_q + 16'd1;
        if (!l_once_q || accld_done) row_full_d = 1'b0;
      end
      if (accld_done) acc_busy_d = 1'b0;
      if (take_new || take_pend) begin
        acc_busy_d = 1'b1;
        {l_dst_d, l_rows_d, l_elems_d, l_bpr_d, l_once_d, l_pprev_d, l_pnext_d, l_hold_d, l_add_d,
         l_pc_d, l_banks_d} = take_pend ? ld_head : ld_new;
        l_row_d    = '0;
        l_chunk_d  = '0;
      end
    end
  end
  `TPU_FF(acc_busy_q, acc_busy_d, 1'b0)
  `TPU_FF(row_full_q, row_full_d, 1'b0)
  `TPU_FF(l_dst_q, l_dst_d, '0)
  `TPU_FF(l_rows_q, l_rows_d, '0)
  `TPU_FF(l_elems_q, l_elems_d, '0)
  `TPU_FF(l_row_q, l_row_d, '0)
  `TPU_FF(l_bpr_q, l_bpr_d, '0)
  `TPU_FF(l_chunk_q, l_chunk_d, '0)
  `TPU_FF(l_once_q, l_once_d, 1'b0)
  `TPU_FF(l_pprev_q, l_pprev_d, 1'b0)
  `TPU_FF(l_pnext_q, l_pnext_d, 1'b0)
  `TPU_FF(l_hold_q, l_hold_d, 1'b0)
  `TPU_FF(l_add_q, l_add_d, 1'b0)
  `TPU_FF(l_pc_q, l_pc_d, '0)
  `TPU_FF(l_banks_q, l_banks_d, '0)

  // The held row (hold): +0 after reset and after every run.
  logic [Cols*32-1:0] held_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)                  held_q <= '0;
    else if (flush_i)             held_q <= '0;
    else if (ld_fire && l_hold_q) held_q <= row_q;
  end

  // add: beat l's element k is row element (l_chunk_q + l)·8 + k; its sum with the held row's
  // element there, fma32(x, 1, held) (tpu_mac with fp32 operands, combinational), for the lanes a
  // row can use (a row of Cols fp32 is ceil(Cols / 8) beats).
  localparam int unsigned RowBeats = (Cols + 7) / 8;
  localparam int unsigned AddLanes = (Lanes < RowBeats) ? Lanes : RowBeats;
  logic [AddLanes*256-1:0] sum;
  for (genvar l = 0; l < AddLanes; l++) begin : gen_add_lane
    for (genvar k = 0; k < 8; k++) begin : gen_add_elem
      // The held row's element c·8 + k for each chunk c (+0 past the row), then this cycle's.
      logic [RowBeats*32-1:0] cand;
      for (genvar c = 0; c < RowBeats; c++) begin : gen_cand
        if (c * 8 + k < Cols) begin : gen_in
          assign cand[32*c +: 32] = held_q[32*(c*8 + k) +: 32];
        end else begin : gen_out
          assign cand[32*c +: 32] = 32'd0;
        end
      end
      logic [31:0] h;
      always_comb begin
        h = 32'd0;
        for (int unsigned c = 0; c < RowBeats; c++) begin
          if (32'(l_chunk_q) + l == c) h = cand[32*c +: 32];
        end
      end
      tpu_mac #(.ExpBits(8), .InManBits(23), .AccManBits(23), .PipeRegs(0),
                .ModeSel(tpu_pkg::ModeRuntime)) u_add (
        .clk_i, .rst_ni,
        .in_valid_i (1'b1),
        .ftz_i,
        .a_i        (r.data[256*l + 32*k +: 32]),
        .b_i        (32'h3F80_0000),
        .c_i        (h),
        .out_valid_o(),
        .res_o      (sum[256*l + 32*k +: 32])
      );
    end
  end

  // Element e of the row comes from beat e/8 (lane e/8 - l_chunk_q of this cycle), element e%8
  // of it; the row's first beats clear the rest.
  for (genvar e = 0; e < Cols; e++) begin : gen_row
    logic [4:0]  lane;
    logic [31:0] v;
    assign lane = 5'(e / 8) - l_chunk_q;
    always_comb begin
      v = 32'd0;
      for (int unsigned l = 0; l < Lanes; l++) begin
        if (lane == 5'(l)) v = r.data[256*l + 32*(e%8) +: 32];
      end
      for (int unsigned l = 0; l < AddLanes; l++) begin
        if (l_add_q && lane == 5'(l)) v = sum[256*l + 32*(e%8) +: 32];
      end
    end
    logic here, wen;
    assign here = 32'(l_chunk_q) <= e / 8 && e / 8 < 32'(l_chunk_end);
    assign wen  = beat && (here || l_chunk_q == 5'd0);
    always_ff @(posedge clk_i) begin
      if (wen) row_q[32*e +: 32] <= (here && e < 32'(l_elems_q)) ? v : 32'd0;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Completion: tokens and errors
  // ---------------------------------------------------------------------------------------------
  assign push_prev_o = (mxu_done_i && done_head[33]) || (accld_done && l_pprev_q);
  assign push_next_o = (mxu_done_i && done_head[32]) || (accld_done && l_pnext_q);
  assign push_pc_o   = (mxu_done_i && |done_head[33:32]) ? done_head[31:0] : l_pc_q;
  logic [Lanes-1:0] lane_on;
  for (genvar i = 0; i < Lanes; i++) begin : gen_lane_on
    assign lane_on[i] = LCntW'(i) < r_take_o;
  end
  assign status.err    = beat && |(r.err & lane_on);
  assign status.err_pc = l_pc_q;

`ifndef SYNTHESIS
  a_done_expected: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    mxu_done_i |-> !done_empty)
    else $error("tpu_accel_compute: a done pulse with no GEMM in flight");
  a_one_completion: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                     !(mxu_done_i && |done_head[33:32] && accld_done &&
                                       (l_pprev_q || l_pnext_q)))
    else $error("tpu_accel_compute: a GEMM and an accumulator LOAD push tokens together");
  // Tokens in program order: no GEMM that started beside a LOAD that pushes pushes before it.
  a_token_order: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                  !(mxu_done_i && |done_head[33:32] && acc_busy_q && !accld_done &&
                                    (l_pprev_q || l_pnext_q)))
    else $error("tpu_accel_compute: a GEMM pushes a token before the accumulator LOAD before it");
  // A LOAD beside GEMMs never shares a bank with one in flight, nor a GEMM with a running LOAD.
  a_load_bank_free: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                     !(|(ld_banks & busy_banks)))
    else $error("tpu_accel_compute: an accumulator LOAD and a GEMM in flight share a bank");
  // LOADs queue only behind a running one that pushes no token; the bank counts follow them.
  a_queue_behind: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                   !pend_empty |-> acc_busy_q && !l_pprev_q && !l_pnext_q)
    else $error("tpu_accel_compute: an accumulator LOAD queued behind none or one that pushes");
  a_loads_counted: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    !acc_busy_q |-> ld_cnt_q == '0)
    else $error("tpu_accel_compute: no LOAD running but the bank counts are %h", ld_cnt_q);
  a_beats_for_a_load: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                       r_valid_i |-> acc_busy_q)
    else $error("tpu_accel_compute: read data with no accumulator LOAD running");
  a_gemms_counted: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    done_empty |-> bank_gemms_q == '0)
    else $error("tpu_accel_compute: no GEMM in flight but the bank counts are %h", bank_gemms_q);
`endif

endmodule
