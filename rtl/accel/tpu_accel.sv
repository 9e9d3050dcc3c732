// SPDX-License-Identifier: Apache-2.0
// The accelerator: command processor, load / compute / store modules with their token queues,
// activation and weight buffers, the matrix unit (tpu_mxu: systolic array and accumulators) and
// the HBM2 subsystem behind one AXI4 port (tpu_hbm_single), on one clock.
//
//   host ──AXI4-Lite──► regs ──► command processor ──fetch──┐
//                                  │ dispatch                │
//            ┌─────────────────────┼───────────────┐         │
//            ▼                     ▼               ▼         │
//          load ──► act/wgt ──► compute ──► mxu ◄── store    │
//            │       buffers      │ acc LOAD  st port │      │
//            └──── reads ─────────┴──── reads         writes │
//                   └──────── DMA (tpu_accel_dma) ◄──┘◄─────┘
//                                  │  one AXI4 port per pseudo-channel
//                            tpu_hbm_subsys (Channels x 32 B/cycle) ──► HBM2 device(s)
//
// The DMA moves Lanes = min(Channels, beats of the widest row) 32-byte beats a cycle each way;
// with one channel that is one beat, as a single port carries.
// Performance counters: tpu_accel_counters.
`include "tpu_axi.svh"
`include "tpu_hbm_mem.svh"
`include "tpu_channels.svh"
`include "tpu_ff.svh"
module tpu_accel #(
  parameter int unsigned Rows           = 16,
  parameter int unsigned Cols           = 16,
  parameter int unsigned PipeRegs       = 1,
  parameter int unsigned ActDepth       = 2048,
  parameter int unsigned WgtDepth       = 2048,
  parameter int unsigned AccDepth       = 4096,
  parameter int unsigned QueueDepth     = 32,
  parameter int unsigned Channels       = 1,
  parameter int unsigned Preset         = 0,
  parameter int unsigned PerBankRefresh = 1,
  parameter int unsigned RdQDepth       = 16,
  parameter int unsigned WrQDepth       = 16,
  parameter int unsigned RetDepth       = 64,
  parameter int unsigned WrHigh         = 14,
  parameter int unsigned WrLow          = 2,
  parameter int unsigned HbmOutstanding = 128,  // DMA bursts in flight per direction (the
                                                // whole stack needs 128: 32 KB in 64)
  parameter int unsigned DmaPieces      = 16,   // DMA: 64-byte pieces queued per port
  parameter int unsigned DmaBeats       = 16,   // DMA: R and W beats queued per port
  parameter int unsigned LoadDepth      = 16,   // LOADs in flight in the load module
  parameter int unsigned FetchDepth     = 128,  // instructions fetched ahead
  parameter int unsigned VmemDepth      = 0,    // vector-memory rows (0: no vector unit)
  localparam int unsigned Ports         = 2 * Channels,
  localparam int unsigned RowBits       = 16,
  localparam int unsigned ColBits       = 5,
  // The address space behind the port: 2^(5+ColBits+4+RowBits) bytes per pseudo-channel.
  localparam int unsigned PortAddrBits  = 5 + ColBits + 4 + RowBits,
  localparam int unsigned HbmAddrBits   = PortAddrBits + $clog2(Ports),
  localparam int unsigned NCnt          = tpu_isa_pkg::NumCounters,
  // Beats of the widest row a client moves: an fp32 accumulator row or a bf16 buffer row.
  localparam int unsigned RowBeatsA     = (Cols * 4 + 31) / 32,
  localparam int unsigned RowBeatsB     = (Rows * 2 + 31) / 32,
  localparam int unsigned RowBeats      = (RowBeatsA > RowBeatsB) ? RowBeatsA : RowBeatsB,
  localparam int unsigned Lanes         = (Channels < RowBeats) ? Channels : RowBeats,
  localparam int unsigned LCntW         = $clog2(Lanes + 1),
  // Read clients of the DMA: fetch, load, accumulator loads, and the vector unit's loads.
  localparam int unsigned NCli          = (VmemDepth > 0) ? 4 : 3
) (
  input  logic                                        clk_i,
  input  logic                                        rst_ni,
  // Host: AXI4-Lite (tpu_axi.svh)
  `TPU_AXIL_SLAVE_PORTS(s_),
  output logic                                        irq_o,   // done (level, until start)
  output logic                                        hbm_busy_o,  // requests still queued in
                                                                   // the HBM controllers
  // Memory side, per channel (see tpu_hbm_subsys)
  `TPU_HBM_MEM_PORTS(Channels, RowBits, ColBits)
);

  localparam int unsigned AW     = HbmAddrBits;
  localparam int unsigned ActAW  = (ActDepth > 1) ? $clog2(ActDepth) : 1;
  localparam int unsigned WgtAW  = (WgtDepth > 1) ? $clog2(WgtDepth) : 1;
  localparam int unsigned AccAW  = (AccDepth > 1) ? $clog2(AccDepth) : 1;
  localparam int unsigned CntW   = $clog2(AccDepth + 1);
  localparam int unsigned KvW    = $clog2(Rows + 1);
  localparam int unsigned NvW    = $clog2(Cols + 1);
  localparam int unsigned IdBits = 6;

  if (Rows < 1 || Rows > 128 || Cols < 1 || Cols > 128) begin : gen_bad_shape
    $error("tpu_accel: Rows and Cols must be in 1..128");
  end
  if (ActDepth > 65535 || WgtDepth > 65535 || AccDepth > 65535 || VmemDepth > 65535 ||
      QueueDepth < 1) begin : gen_bad
    $error("tpu_accel: depths must be in 1..65535 (VmemDepth 0..65535), QueueDepth at least 1");
  end

  // ---------------------------------------------------------------------------------------------
  // Registers and command processor
  // ---------------------------------------------------------------------------------------------
  logic              start, ftz, perf_clear, busy, done, halt, flush, instr;
  logic [63:0]       prog_addr;
  logic [31:0]       prog_len, err_pc;
  logic [3:0]        err_code;
  logic [NCnt*64-1:0] counters;
  logic [31:0]       tok_end_q;

  tpu_accel_regs #(.Rows(Rows), .Cols(Cols), .Channels(Channels), .NCnt(NCnt)) u_regs (
    .clk_i, .rst_ni,
    `TPU_AXIL_SLAVE_TO(, s_),
    .start_o(start), .ftz_o(ftz), .perf_clear_o(perf_clear), .prog_addr_o(prog_addr),
    .prog_len_o(prog_len), .busy_i(busy), .done_i(done), .err_code_i(err_code),
    .err_pc_i(err_pc), .tokens_i(tok_end_q), .counters_i(counters)
  );
  assign irq_o = done;

  // Read clients of the DMA: 0 fetch, 1 load, 2 accumulator loads, 3 (with the vector unit) the
  // vector memory's loads (their bursts and beats: dma_burst, dma_rd_beats in rtl/channels.json).
  localparam int unsigned DmaBurstW   = `TPU_DMA_BURST_W(AW);
  localparam int unsigned DmaRdBeatsW = `TPU_DMA_RD_BEATS_W(LCntW, Lanes);
  localparam int unsigned DmaWrBeatsW = `TPU_DMA_WR_BEATS_W(LCntW, Lanes);
  typedef `TPU_DMA_RD_BEATS_T(LCntW, Lanes) dma_rd_beats_t;
  typedef `TPU_DMA_WR_BEATS_T(LCntW, Lanes) dma_wr_beats_t;
  logic [NCli-1:0]           c_ar_valid, c_ar_ready, c_r_valid;
  logic [NCli*DmaBurstW-1:0] c_ar;
  logic [NCli*LCntW-1:0]     c_r_take;
  logic [DmaRdBeatsW-1:0] r_beats, r_beats_c;
  dma_rd_beats_t          r, r_c;
  logic [LCntW-1:0]       r_count;
  assign r       = r_beats;
  assign r_count = r.count;

  // Lane caps, a verification hook: no logic writes lane_rd_q or lane_wr_q, so they hold Lanes
  // from reset and synthesis keeps constants (no cap). The tests write them through Verilator's
  // public access (rtl/sim.vlt; Verilator 5.006 has no `forceable`) to hold DMA lanes back one
  // by one: the read clients see at most lane_rd_q of the delivered beats (none, the fetch
  // included, while it is 0), so the DMA sees a client take any prefix of what it offers; the
  // store offers at most lane_wr_q beats a cycle (none while it is 0).
  logic [LCntW-1:0] lane_rd_q, lane_wr_q, r_count_c;
  logic [NCli-1:0]  c_r_valid_c;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      lane_rd_q <= LCntW'(Lanes);
      lane_wr_q <= LCntW'(Lanes);
    end else begin
      lane_rd_q <= lane_rd_q;
      lane_wr_q <= lane_wr_q;
    end
  end
  assign r_count_c   = (r_count > lane_rd_q) ? lane_rd_q : r_count;
  assign c_r_valid_c = (lane_rd_q == '0) ? '0 : c_r_valid;
  assign r_c.count   = r_count_c;
  assign r_c.data    = r.data;
  assign r_c.err     = r.err;
  assign r_beats_c   = r_c;

  logic [2:0]   q_push, q_full, q_empty, q_pop, fin, stuck, blocked;
  logic [287:0] q_data;
  logic [863:0] q_head;
  logic [95:0]  head_pc;
  logic         rt_err;
  logic [3:0]   rt_code;
  logic [31:0]  rt_pc;

  tpu_accel_cmd #(
    .Rows(Rows), .Cols(Cols), .ActDepth(ActDepth), .WgtDepth(WgtDepth), .AccDepth(AccDepth),
    .VmemDepth(VmemDepth), .HbmAddrBits(AW), .FetchDepth(FetchDepth)
  ) u_cmd (
    .clk_i, .rst_ni,
    .start_i(start), .prog_addr_i(prog_addr), .count_i(prog_len),
    .busy_o(busy), .done_o(done), .err_code_o(err_code), .err_pc_o(err_pc),
    .halt_o(halt), .flush_o(flush), .instr_o(instr),
    .ar_valid_o(c_ar_valid[0]), .ar_ready_i(c_ar_ready[0]), .ar_o(c_ar[0 +: DmaBurstW]),
    .r_valid_i(c_r_valid_c[0]), .r_data_i(r.data[255:0]), .r_resp_err_i(r.err[0]),
    .queue_push_o(q_push), .queue_data_o(q_data), .queue_full_i(q_full),
    .fin_i(fin), .stuck_i(stuck), .blocked_i(blocked), .head_pc_i(head_pc),
    .rt_err_i(rt_err), .rt_code_i(rt_code), .rt_pc_i(rt_pc)
  );
  // The fetch takes one beat a cycle (it has room for every beat it asked for).
  assign c_r_take[0 +: LCntW] = LCntW'(c_r_valid_c[0]);


  for (genvar m = 0; m < 3; m++) begin : gen_queue
    tpu_fifo #(.Width(288), .Depth(QueueDepth)) u_q (
      .clk_i, .rst_ni, .flush_i(flush),
      .push_i(q_push[m]), .data_i(q_data), .full_o(q_full[m]),
      .pop_i (q_pop[m]), .data_o(q_head[288*m +: 288]), .empty_o(q_empty[m]), .count_o()
    );
  end

  // ---------------------------------------------------------------------------------------------
  // Token queues: 0 load->compute, 1 compute->load, 2 compute->store, 3 store->compute
  // ---------------------------------------------------------------------------------------------
  logic [3:0]   tok_push, tok_pop, tok_avail, tok_over;
  logic [127:0] tok_pc;
  logic [31:0]  tok_cnt_q, tok_cnt_d;

  logic        ld_pop_next, ld_push_next, cp_pop_prev, cp_pop_next, cp_push_prev, cp_push_next;
  logic        st_pop_prev, st_push_prev;
  logic [31:0] ld_push_pc, cp_push_pc, st_push_pc;
  assign tok_push = {st_push_prev, cp_push_next, cp_push_prev, ld_push_next};
  assign tok_pop  = {cp_pop_next, st_pop_prev, ld_pop_next, cp_pop_prev};
  assign tok_pc   = {st_push_pc, cp_push_pc, cp_push_pc, ld_push_pc};

  // What the queues held when the last run ended (register TOKENS): taken as they are flushed.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)     tok_end_q <= '0;
    else if (start)  tok_end_q <= '0;
    else if (flush)  tok_end_q <= tok_cnt_q;
  end

  for (genvar t = 0; t < 4; t++) begin : gen_tok
    logic [7:0] cnt;
    assign cnt          = tok_cnt_q[8*t +: 8];
    assign tok_avail[t] = cnt != 8'd0;
    assign tok_over[t]  = tok_push[t] && !tok_pop[t] && cnt == 8'd255;
    assign tok_cnt_d[8*t +: 8] = flush       ? '0  :
                                 tok_over[t] ? cnt : cnt + 8'(tok_push[t]) - 8'(tok_pop[t]);
  end
  `TPU_FF(tok_cnt_q, tok_cnt_d, '0)

  // The modules' status (accel_status: rtl/channels.json), load, compute, store.
  localparam int unsigned StatusW = `TPU_ACCEL_STATUS_W(32);
  typedef `TPU_ACCEL_STATUS_T(32) accel_status_t;
  logic [3*StatusW-1:0] status;
  accel_status_t        ld_status, cp_status, st_status;
  logic [2:0]           mod_err;
  logic [95:0]          mod_err_pc;
  // (Three variables, not a generate loop: Yosys 0.23 cannot resolve a struct declared in one.)
  assign {st_status, cp_status, ld_status} = status;
  assign fin        = {st_status.fin, cp_status.fin, ld_status.fin};
  assign stuck      = {st_status.stuck, cp_status.stuck, ld_status.stuck};
  assign blocked    = {st_status.blocked, cp_status.blocked, ld_status.blocked};
  assign head_pc    = {st_status.head_pc, cp_status.head_pc, ld_status.head_pc};
  assign mod_err    = {st_status.err, cp_status.err, ld_status.err};
  assign mod_err_pc = {st_status.err_pc, cp_status.err_pc, ld_status.err_pc};

  // Runtime errors this cycle: the lowest pc wins.
  always_comb begin
    rt_err  = 1'b0;
    rt_code = tpu_isa_pkg::ErrOk;
    rt_pc   = 32'hFFFF_FFFF;
    for (int unsigned t = 0; t < 4; t++) begin
      if (tok_over[t] && tok_pc[32*t +: 32] <= rt_pc) begin
        rt_err  = 1'b1;
        rt_code = tpu_isa_pkg::ErrTokenOverflow;
        rt_pc   = tok_pc[32*t +: 32];
      end
    end
    // Coverage waiver: unreachable, the HBM never answers these DMAs with an error (the decoder
    // checks every LOAD/STORE range and alignment, tpu_accel_burst splits at 4 KB).
    /*verilator coverage_off*/
    for (int unsigned m = 0; m < 3; m++) begin
      if (mod_err[m] && mod_err_pc[32*m +: 32] <= rt_pc) begin
        rt_err = 1'b1; rt_code = tpu_isa_pkg::ErrHbm; rt_pc = mod_err_pc[32*m +: 32];
      end
    end
    /*verilator coverage_on*/
  end

  // ---------------------------------------------------------------------------------------------
  // Buffers
  // ---------------------------------------------------------------------------------------------
  logic                act_we, act_re, wgt_we, wgt_re;
  logic [ActAW-1:0]    act_waddr, act_raddr;
  logic [WgtAW-1:0]    wgt_waddr, wgt_raddr;
  logic [Rows-1:0]     act_wen;
  logic [Cols-1:0]     wgt_wen;
  logic [Rows*16-1:0]  act_wdata, act_rdata;
  logic [Cols*16-1:0]  wgt_wdata, wgt_rdata;

  tpu_accel_buf #(.Depth(ActDepth), .Elems(Rows)) u_act (
    .clk_i, .we_i(act_we), .waddr_i(act_waddr), .wen_i(act_wen), .wdata_i(act_wdata),
    .re_i(act_re), .raddr_i(act_raddr), .rdata_o(act_rdata)
  );
  tpu_accel_buf #(.Depth(WgtDepth), .Elems(Cols)) u_wgt (
    .clk_i, .we_i(wgt_we), .waddr_i(wgt_waddr), .wen_i(wgt_wen), .wdata_i(wgt_wdata),
    .re_i(wgt_re), .raddr_i(wgt_raddr), .rdata_o(wgt_rdata)
  );

  // ---------------------------------------------------------------------------------------------
  // The three modules
  // ---------------------------------------------------------------------------------------------
  tpu_accel_load #(
    .Rows(Rows), .Cols(Cols), .ActDepth(ActDepth), .WgtDepth(WgtDepth), .AddrW(AW),
    .DescDepth(LoadDepth), .Lanes(Lanes)
  ) u_load (
    .clk_i, .rst_ni, .flush_i(flush), .halt_i(halt),
    .head_valid_i(!q_empty[0]), .head_instr_i(q_head[0 +: 256]), .head_pc_i(q_head[256 +: 32]),
    .head_pop_o(q_pop[0]),
    .tok_next_i(tok_avail[1]), .pop_next_o(ld_pop_next), .push_next_o(ld_push_next),
    .push_pc_o(ld_push_pc),
    .status_o(status[0 +: StatusW]),
    .ar_valid_o(c_ar_valid[1]), .ar_ready_i(c_ar_ready[1]), .ar_o(c_ar[DmaBurstW +: DmaBurstW]),
    .r_valid_i(c_r_valid_c[1]), .r_i(r_beats_c), .r_take_o(c_r_take[LCntW +: LCntW]),
    .act_we_o(act_we), .act_waddr_o(act_waddr), .act_wen_o(act_wen), .act_wdata_o(act_wdata),
    .wgt_we_o(wgt_we), .wgt_waddr_o(wgt_waddr), .wgt_wen_o(wgt_wen), .wgt_wdata_o(wgt_wdata)
  );

  logic                mxu_cmd_valid, mxu_cmd_ready;
  logic [`TPU_MXU_CMD_W(CntW, KvW, NvW, AccAW)-1:0] mxu_cmd;
  logic [AccAW-1:0]    mxu_ld_addr, mxu_st_addr;
  logic                mxu_w_valid, mxu_w_ready, mxu_a_valid, mxu_a_ready;
  logic [Cols*16-1:0]  mxu_w_data;
  logic [Rows*16-1:0]  mxu_a_data;
  logic                mxu_ld_valid, mxu_ld_ready, mxu_st_valid, mxu_st_rvalid;
  logic [Cols*32-1:0]  mxu_ld_data, mxu_st_data;
  logic                mxu_done, mxu_idle;
  logic [2:0]          mxu_class;
  logic [63:0]         mxu_macs;
  logic                cp_wait_load, cp_wait_store, cp_head_loadw, cp_acc_load;

  tpu_accel_compute #(
    .Rows(Rows), .Cols(Cols), .ActDepth(ActDepth), .WgtDepth(WgtDepth), .AccDepth(AccDepth),
    .AddrW(AW), .Lanes(Lanes)
  ) u_compute (
    .clk_i, .rst_ni, .flush_i(flush), .halt_i(halt), .ftz_i(ftz),
    .head_valid_i(!q_empty[1]), .head_instr_i(q_head[288 +: 256]), .head_pc_i(q_head[544 +: 32]),
    .head_pop_o(q_pop[1]),
    .tok_prev_i(tok_avail[0]), .tok_next_i(tok_avail[3]),
    .pop_prev_o(cp_pop_prev), .pop_next_o(cp_pop_next),
    .push_prev_o(cp_push_prev), .push_next_o(cp_push_next), .push_pc_o(cp_push_pc),
    .status_o(status[StatusW +: StatusW]),
    .wait_load_o(cp_wait_load), .wait_store_o(cp_wait_store), .head_loadw_o(cp_head_loadw),
    .acc_load_o(cp_acc_load),
    .ar_valid_o(c_ar_valid[2]), .ar_ready_i(c_ar_ready[2]),
    .ar_o(c_ar[2*DmaBurstW +: DmaBurstW]),
    .r_valid_i(c_r_valid_c[2]), .r_i(r_beats_c), .r_take_o(c_r_take[2*LCntW +: LCntW]),
    .act_re_o(act_re), .act_raddr_o(act_raddr), .act_rdata_i(act_rdata),
    .wgt_re_o(wgt_re), .wgt_raddr_o(wgt_raddr), .wgt_rdata_i(wgt_rdata),
    .mxu_cmd_valid_o(mxu_cmd_valid), .mxu_cmd_ready_i(mxu_cmd_ready),
    .mxu_cmd_o(mxu_cmd),
    .mxu_w_valid_o(mxu_w_valid), .mxu_w_ready_i(mxu_w_ready), .mxu_w_data_o(mxu_w_data),
    .mxu_a_valid_o(mxu_a_valid), .mxu_a_ready_i(mxu_a_ready), .mxu_a_data_o(mxu_a_data),
    .mxu_ld_valid_o(mxu_ld_valid), .mxu_ld_ready_i(mxu_ld_ready), .mxu_ld_addr_o(mxu_ld_addr),
    .mxu_ld_data_o(mxu_ld_data),
    .mxu_done_i(mxu_done), .mxu_idle_i(mxu_idle)
  );

  // Write path (store module only).
  logic                   aw_valid, aw_ready, w_valid, w_ready, b_valid, b_err, w_fire;
  logic [DmaBurstW-1:0]   aw;
  logic [DmaWrBeatsW-1:0] w_beats;
  dma_wr_beats_t          w;
  logic [LCntW-1:0]       w_count;
  assign w       = w_beats;
  assign w_count = w.count;

  // The vector unit's DMA client (client 3; a dangling one without the vector unit).
  logic                   v_ar_valid, v_ar_ready, v_r_valid, vop_busy;
  logic [DmaBurstW-1:0]   v_ar;
  logic [LCntW-1:0]       v_r_take;
  if (VmemDepth > 0) begin : gen_vcli
    assign c_ar_valid[3]                 = v_ar_valid;
    assign c_ar[3*DmaBurstW +: DmaBurstW] = v_ar;
    assign c_r_take[3*LCntW +: LCntW]    = v_r_take;
    assign v_ar_ready                    = c_ar_ready[3];
    assign v_r_valid                     = c_r_valid_c[3];
  end else begin : gen_no_vcli
    assign v_ar_ready = 1'b0;
    assign v_r_valid  = 1'b0;
    logic unused_vcli;
    assign unused_vcli = ^{v_ar_valid, v_ar, v_r_take};
  end

  tpu_accel_store #(
    .Cols(Cols), .AccDepth(AccDepth), .AddrW(AW), .Lanes(Lanes), .VmemDepth(VmemDepth)
  ) u_store (
    .clk_i, .rst_ni, .flush_i(flush), .halt_i(halt), .ftz_i(ftz),
    .head_valid_i(!q_empty[2]), .head_instr_i(q_head[576 +: 256]), .head_pc_i(q_head[832 +: 32]),
    .head_pop_o(q_pop[2]),
    .tok_prev_i(tok_avail[2]), .pop_prev_o(st_pop_prev), .push_prev_o(st_push_prev),
    .push_pc_o(st_push_pc),
    .status_o(status[2*StatusW +: StatusW]),
    .aw_valid_o(aw_valid), .aw_ready_i(aw_ready), .aw_o(aw),
    .w_valid_o(w_valid), .w_ready_i(w_ready), .w_o(w_beats),
    .w_lanes_i(lane_wr_q), .b_valid_i(b_valid), .b_resp_err_i(b_err),
    .ar_valid_o(v_ar_valid), .ar_ready_i(v_ar_ready), .ar_o(v_ar),
    .r_valid_i(v_r_valid), .r_i(r_beats_c), .r_take_o(v_r_take),
    .st_valid_o(mxu_st_valid), .st_addr_o(mxu_st_addr), .st_valid_i(mxu_st_rvalid),
    .st_data_i(mxu_st_data), .w_fire_o(w_fire), .vop_busy_o(vop_busy)
  );

  // ---------------------------------------------------------------------------------------------
  // The matrix unit
  // ---------------------------------------------------------------------------------------------
  tpu_mxu #(
    .Rows(Rows), .Cols(Cols), .PipeRegs(PipeRegs), .AccDepth(AccDepth),
    .ModeSel(tpu_pkg::ModeRuntime)
  ) u_mxu (
    .clk_i, .rst_ni, .ftz_i(ftz),
    .cmd_valid_i(mxu_cmd_valid), .cmd_ready_o(mxu_cmd_ready), .cmd_i(mxu_cmd),
    .w_valid_i(mxu_w_valid), .w_ready_o(mxu_w_ready), .w_data_i(mxu_w_data),
    .a_valid_i(mxu_a_valid), .a_ready_o(mxu_a_ready), .a_data_i(mxu_a_data),
    .ld_valid_i(mxu_ld_valid), .ld_ready_o(mxu_ld_ready), .ld_addr_i(mxu_ld_addr),
    .ld_data_i(mxu_ld_data),
    .st_valid_i(mxu_st_valid), .st_addr_i(mxu_st_addr), .st_valid_o(mxu_st_rvalid),
    .st_data_o(mxu_st_data),
    .done_o(mxu_done), .idle_o(mxu_idle), .err_o(),
    .perf_clear_i(perf_clear), .perf_cycles_o(), .perf_busy_o(), .perf_macs_o(mxu_macs),
    .perf_wstall_o(), .perf_starve_o(), .perf_hazard_o(), .perf_drain_o(),
    .perf_class_o(mxu_class)
  );

  // ---------------------------------------------------------------------------------------------
  // The DMA and the HBM2 subsystem, one AXI4 port per pseudo-channel
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned MAddrBits = (PortAddrBits > 32) ? PortAddrBits : 32;
  `TPU_AXI_SIGNALS(p_, Ports, IdBits, MAddrBits)

  tpu_accel_dma #(
    .Ports(Ports), .Lanes(Lanes), .Clients(NCli), .AddrW(AW), .MAddrBits(MAddrBits),
    .IdBits(IdBits), .TrackDepth(HbmOutstanding), .BeatDepth(DmaBeats), .PieceDepth(DmaPieces)
  ) u_dma (
    .clk_i, .rst_ni,
    .ar_valid_i(c_ar_valid), .ar_ready_o(c_ar_ready), .ar_i(c_ar),
    .r_valid_o(c_r_valid), .r_o(r_beats), .r_take_i(c_r_take),
    .aw_valid_i(aw_valid), .aw_ready_o(aw_ready), .aw_i(aw),
    .w_valid_i(w_valid), .w_ready_o(w_ready), .w_i(w_beats), .b_valid_o(b_valid), .b_err_o(b_err),
    `TPU_AXI_MASTER_TO(m_, p_)
  );

  logic [Ports*8-1:0] rq_count, wq_count;
  logic [Ports*4-1:0] ref_debt;
  logic [Ports-1:0]   wr_mode;

  tpu_hbm_subsys #(
    .Channels(Channels), .Preset(Preset), .AddrBits(MAddrBits), .IdBits(IdBits),
    .RowBits(RowBits), .ColBits(ColBits), .RdQDepth(RdQDepth), .WrQDepth(WrQDepth),
    .RetDepth(RetDepth), .PerBankRefresh(PerBankRefresh), .WrHigh(WrHigh), .WrLow(WrLow)
  ) u_hbm (
    .clk_i(clk_i), .rst_ni(rst_ni),
    `TPU_AXI_SLAVE_TO(, p_),
    `TPU_HBM_MEM_PASS,
    .rq_count_o(rq_count), .wq_count_o(wq_count), .ref_debt_o(ref_debt), .wr_mode_o(wr_mode)
  );

  // ---------------------------------------------------------------------------------------------
  // Performance counters
  // ---------------------------------------------------------------------------------------------
  tpu_accel_counters #(.Lanes(Lanes), .Clients(NCli)) u_counters (
    .clk_i, .rst_ni, .clear_i(perf_clear), .busy_i(busy), .mxu_class_i(mxu_class),
    .wait_store_i(cp_wait_store), .wait_load_i(cp_wait_load), .head_loadw_i(cp_head_loadw),
    .acc_load_i(cp_acc_load), .r_take_i(c_r_take), .w_fire_i(w_fire), .w_count_i(w_count),
    .instr_i(instr), .pop_i(q_pop), .vop_busy_i(vop_busy), .macs_i(mxu_macs),
    .counters_o(counters)
  );

  assign hbm_busy_o = (rq_count != '0) || (wq_count != '0);

  logic unused;
  assign unused = ^{ref_debt, wr_mode, w.data, w.strb};  // w: its count is counted

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // A token queue never goes below zero (a pop takes an available token) and a push into a
  // full one is the token-overflow error, never a wrap.
  for (genvar t = 0; t < 4; t++) begin : gen_tok_assert
    a_pop_available: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                      tok_pop[t] |-> tok_avail[t])
      else $error("tpu_accel: token queue %0d popped while empty", t);
    a_no_wrap: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                tok_push[t] && !tok_pop[t] && tok_cnt_q[8*t +: 8] == 8'd255
                                |-> tok_over[t])
      else $error("tpu_accel: token queue %0d would wrap", t);
  end
  // The DMA port: write requests and data hold while they wait.
  a_aw_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                              aw_valid && !aw_ready |=> aw_valid && $stable(aw))
    else $error("tpu_accel: the store DMA changed AW while waiting");
  a_w_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                             w_valid && !w_ready |=> w_valid && $stable(w_beats))
    else $error("tpu_accel: the store DMA changed W while waiting");
`endif

endmodule
