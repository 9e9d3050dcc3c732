// SPDX-License-Identifier: Apache-2.0
// HBM2 pseudo-channel controller: read and write queues, FR-FCFS scheduling with an age cap, page
// policies, timing counters for every rule of docs/hbm.md, write draining between watermarks,
// refresh, write data at WL, read data at RL, and reads answered from the write queue.
//
// Requests are 64-byte blocks (two 32-byte bursts of one row, `beats` says which halves) already
// mapped to (bank, row, block) by the port in front (tpu_hbm_axi_port). Each cycle the controller
// proposes at most one row command and one column command; the channel's bus arbiter grants them
// (the two pseudo-channels of a channel share its command buses) and state changes only on a
// grant. The memory side is burst-level: a burst's 32 bytes travel as one word on the first of
// its nBL data cycles.
//
// Page policy (PagePolicy) and ordering: tpu_hbm_scheduler. Writes to one block issue in arrival
// order; a read waits for every queued write to its block unless the youngest of them covers all
// its bytes (then it is answered from the write queue at once).
//
// Inside: tpu_hbm_req_queue (the read and write queues), tpu_hbm_scheduler (the mode and the
// commands), tpu_hbm_bank_timers (the banks' state and timing counters), tpu_hbm_refresh (the
// refresh debt); this module takes the requests in, keeps the write data and moves the data.
`include "tpu_hbm_timing.svh"
`include "tpu_channels.svh"

`include "tpu_ff.svh"
module tpu_hbm_pc_ctrl #(
  parameter int unsigned RowBits        = 16,
  parameter int unsigned BgBits         = 2,   // bank groups = 2^BgBits
  parameter int unsigned BaBits         = 2,   // banks per group = 2^BaBits
  parameter int unsigned ColBits        = 5,   // 32-byte columns per row = 2^ColBits
  parameter int unsigned RdQDepth       = 16,  // per PC: 32 per channel, as Ramulator 2.1
  parameter int unsigned WrQDepth       = 16,
  parameter int unsigned TagBits        = 5,   // read tags (the port's return-buffer slots)
  parameter int unsigned PagePolicy     = 2,   // 0 open, 1 close, 2 adaptive (see below)
  parameter int unsigned PerBankRefresh = 0,   // 0: REFab every nREFI; 1: 16 REFpb per nREFI
  parameter int unsigned AgeCap         = 1024,
  parameter int unsigned WrHigh         = 14,  // enter write drain at this many queued writes
  parameter int unsigned WrLow          = 2,   // leave it at this many (if reads wait)
  parameter int unsigned RefUrgent      = 2,   // refresh debt at which refresh preempts traffic
  // Timing, cycles: every value defaults to the preset (tpu_hbm_pkg).
  parameter int unsigned Preset         = tpu_hbm_pkg::Preset2000,
  `TPU_HBM_TIMING_PARAMS(Preset),
  localparam int unsigned BankBits = BgBits + BaBits,
  localparam int unsigned Banks    = 1 << BankBits,
  localparam int unsigned BlkBits  = ColBits - 1,
  localparam int unsigned RqBits   = $clog2(RdQDepth + 1),
  localparam int unsigned WqBits   = $clog2(WrQDepth + 1),
  `TPU_HBM_PORT_WIDTHS(BankBits, RowBits, BlkBits, TagBits)
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  // Read and write requests from the port (hbm_rd_req, hbm_wr_req: rtl/channels.json).
  input  logic                rd_valid_i,
  output logic                rd_ready_o,
  input  logic [HbmRdReqW-1:0] rd_req_i,
  input  logic                wr_valid_i,
  output logic                wr_ready_o,
  input  logic [HbmWrReqW-1:0] wr_req_i,
  // Read data to the port: from memory one burst per cycle (hbm_rdata) and whole blocks
  // answered from the write queue in the cycle the read is accepted (hbm_fwd).
  output logic                rdata_valid_o,
  output logic [HbmRdataW-1:0] rdata_o,
  output logic                fwd_valid_o,
  output logic [HbmFwdW-1:0]  fwd_o,
  // Command-bus requests to the channel's arbiter.
  output logic                                row_req_o,
  output logic [tpu_pkg::HbmRowCmdBits-1:0]   row_cmd_o,
  output logic [BankBits-1:0]                 row_bank_o,
  output logic [RowBits-1:0]                  row_row_o,
  input  logic                                row_gnt_i,
  output logic                                col_req_o,
  output logic [tpu_pkg::HbmColCmdBits-1:0]   col_cmd_o,
  output logic [BankBits-1:0]                 col_bank_o,
  output logic [ColBits-1:0]                  col_col_o,
  input  logic                                col_gnt_i,
  // Memory data bus of this pseudo-channel.
  output logic                wdata_valid_o,
  output logic [255:0]        wdata_o,
  output logic [31:0]         wstrb_o,
  input  logic                rdata_valid_i,
  input  logic [255:0]        rdata_i,
  // Status.
  output logic [RqBits-1:0]   rq_count_o,
  output logic [WqBits-1:0]   wq_count_o,
  output logic [3:0]          ref_debt_o,
  output logic                wr_mode_o
);

  `TPU_HBM_PORT_TYPEDEFS(BankBits, RowBits, BlkBits, TagBits)
  hbm_rd_req_t rd_req;
  hbm_wr_req_t wr_req;
  hbm_rdata_t  rdata;
  hbm_fwd_t    fwd;
  assign rd_req = rd_req_i;
  assign wr_req = wr_req_i;

  // ----------------------------------------------------------------------------------------------
  // Parameter checks
  // ----------------------------------------------------------------------------------------------
  // Write data outlives its queue entry by nCWL: the bursts issued in that time need slots too.
  localparam int unsigned Slots    = WrQDepth + (TCwl + TCcdS) / TCcdS + 1;
  localparam int unsigned SlotBits = $clog2(Slots);
  localparam int unsigned RqIdx    = $clog2(RdQDepth);
  localparam int unsigned WqIdx    = $clog2(WrQDepth);
  localparam int unsigned SelBits  = $clog2((RdQDepth > WrQDepth) ? RdQDepth : WrQDepth);
  // Service bound of a head past the age cap: one refresh and two services (its own, and the
  // other queue's starved head's turn), each a precharge, an activate and a burst.
  localparam int unsigned StarveLimit =
      TRfc + 2 * (TRas + TRp + TRcdRd + TCwl + TBl + TWr + TCl + TBl + 2 - TCwl + TFaw) + 64;
  // Ages saturate here: no head may get this old (asserted), not even a read that waits for a
  // queued write behind up to WrQDepth starved writes.
  localparam int unsigned AgeMax   = AgeCap + (WrQDepth + 2) * StarveLimit;
  localparam int unsigned AgeBits  = $clog2(AgeMax + 1);
  localparam int unsigned CntW     = 10;

  if (RdQDepth < 2 || WrQDepth < 2) begin : gen_bad_depth
    $error("tpu_hbm_pc_ctrl: queue depths must be >= 2 (RdQDepth %0d, WrQDepth %0d)",
           RdQDepth, WrQDepth);
  end
  if (TCl < 2 || TCwl < 1 || TCl > 63 || TCwl > 31 || TRfc >= (1 << CntW) - 64 ||
      TCl + TBl + 2 <= TCwl) begin : gen_bad_t
    $error({"tpu_hbm_pc_ctrl: timing out of the supported range ",
            "(nCL 2..63, nCWL 1..31, nRFC < 960)"});
  end
  if (TRcdRd == 0 || TRcdWr == 0 || TRp == 0 || TRas == 0 || TRc == 0 || TCcdS == 0 ||
      TCcdL == 0 || TRrdS == 0 || TRrdL == 0 || TFaw == 0 || TWr == 0 || TRtp == 0 ||
      TWtrS == 0 || TWtrL == 0 || TRfcSb == 0 || TRefi < 16 || TRrefd == 0 ||
      TBl == 0) begin : gen_zero_t
    $error("tpu_hbm_pc_ctrl: every timing value must be >= 1 (and nREFI >= 16)");
  end
  // nREFIsb is implied (16 REFpb per nREFI, exactly: see the refresh accumulator); a value that
  // disagrees would be silently ignored, so it is refused.
  if (TRefiSb != TRefi / (1 << (BgBits + BaBits))) begin : gen_bad_refisb
    $error("tpu_hbm_pc_ctrl: TRefiSb (%0d) must be TRefi / banks (%0d)", TRefiSb,
           TRefi / (1 << (BgBits + BaBits)));
  end
  if (ColBits < 2) begin : gen_bad_col
    $error("tpu_hbm_pc_ctrl: ColBits must be >= 2 (a row holds at least two 64-byte blocks)");
  end

  // ----------------------------------------------------------------------------------------------
  // State
  // ----------------------------------------------------------------------------------------------
  // The read and write queues (tpu_hbm_req_queue, instantiated below), entry by entry; index 0
  // is the oldest. A write's data lives in a slot that stays put (wq_slot).
  logic                rq_v    [RdQDepth];
  logic [TagBits-1:0]  rq_tag  [RdQDepth];
  logic [AgeBits-1:0]  rq_age  [RdQDepth];
  logic [RqBits-1:0]   rq_cnt;
  logic                wq_v    [WrQDepth];
  logic [BankBits-1:0] wq_bank [WrQDepth];
  logic [RowBits-1:0]  wq_row  [WrQDepth];
  logic [BlkBits-1:0]  wq_blk  [WrQDepth];
  logic [SlotBits-1:0] wq_slot [WrQDepth];
  logic [AgeBits-1:0]  wq_age  [WrQDepth];
  logic [WqBits-1:0]   wq_cnt;
  logic [511:0]        slot_data_q[Slots];
  logic [63:0]         slot_strb_q[Slots];
  logic [Slots-1:0]    slot_busy_q;
  // Banks (tpu_hbm_bank_timers): open or not.
  logic [Banks-1:0]    bank_open;
  // Scheduling mode.
  logic                wr_mode_q;
  // Write-data and read-data delay lines.
  logic                wd_v_q   [TCwl];
  logic [SlotBits-1:0] wd_slot_q[TCwl];
  logic                wd_beat_q[TCwl];
  logic                wd_last_q[TCwl];
  logic                rd_v_q   [TCl];
  logic [TagBits-1:0]  rd_tag_q [TCl];
  logic                rd_beat_q[TCl];

  // ----------------------------------------------------------------------------------------------
  // Scheduler (tpu_hbm_scheduler), the banks' readiness (tpu_hbm_bank_timers) and refresh
  // (tpu_hbm_refresh)
  // ----------------------------------------------------------------------------------------------
  logic [Banks-1:0]             act_ok, rd_ok, wr_ok, pre_t_ok, act_block, col_block;
  logic                         pre_all_ok, ref_ab_ok, ref_pb_ok, ref_want, ref_urgent;
  logic [BankBits-1:0]          ref_bank;
  logic [3:0]                   ref_debt;
  logic [Banks*RowBits-1:0]     bank_row_all;
  // The queues' entries (hbm_q_entry each: rtl/channels.json), entry i at [i*W +: W].
  localparam int unsigned RqEntryW =
      `TPU_HBM_Q_ENTRY_W(BankBits, RowBits, BlkBits, TagBits, AgeBits);
  localparam int unsigned WqEntryW =
      `TPU_HBM_Q_ENTRY_W(BankBits, RowBits, BlkBits, SlotBits, AgeBits);
  typedef `TPU_HBM_Q_ENTRY_T(BankBits, RowBits, BlkBits, TagBits, AgeBits) rq_entry_t;
  typedef `TPU_HBM_Q_ENTRY_T(BankBits, RowBits, BlkBits, SlotBits, AgeBits) wq_entry_t;
  logic [RdQDepth*RqEntryW-1:0] rq_entries;
  logic [WrQDepth*WqEntryW-1:0] wq_entries;
  logic [SelBits-1:0]           col_sel;
  logic                         col_beat, col_last, col_auto, rq_starved, wq_starved;

  tpu_hbm_scheduler #(
    .RowBits(RowBits), .BgBits(BgBits), .BaBits(BaBits), .ColBits(ColBits), .RdQDepth(RdQDepth),
    .WrQDepth(WrQDepth), .PagePolicy(PagePolicy), .PerBankRefresh(PerBankRefresh),
    .AgeCap(AgeCap), .AgeBits(AgeBits), .TagBits(TagBits), .SlotBits(SlotBits), .WrHigh(WrHigh),
    .WrLow(WrLow)
  ) u_sched (
    .clk_i, .rst_ni,
    .rq_entries_i(rq_entries), .rq_count_i(rq_cnt), .wq_entries_i(wq_entries),
    .wq_count_i(wq_cnt),
    .bank_open_i(bank_open), .bank_row_i(bank_row_all), .act_ok_i(act_ok), .rd_ok_i(rd_ok),
    .wr_ok_i(wr_ok), .pre_ok_i(pre_t_ok), .pre_all_ok_i(pre_all_ok),
    .ref_ab_ok_i(ref_ab_ok), .ref_pb_ok_i(ref_pb_ok), .ref_want_i(ref_want),
    .ref_urgent_i(ref_urgent), .ref_bank_i(ref_bank), .act_block_i(act_block),
    .col_block_i(col_block),
    .row_req_o, .row_cmd_o, .row_bank_o, .row_row_o, .col_req_o, .col_cmd_o, .col_bank_o,
    .col_col_o, .col_gnt_i, .col_sel_o(col_sel), .col_beat_o(col_beat), .col_last_o(col_last),
    .col_auto_o(col_auto), .wr_mode_o(wr_mode_q), .rq_starved_o(rq_starved),
    .wq_starved_o(wq_starved)
  );

  logic row_fire, col_fire;
  assign row_fire = row_req_o && row_gnt_i;
  assign col_fire = col_req_o && col_gnt_i;

  // ----------------------------------------------------------------------------------------------
  // Request intake: write-queue look-up for reads (forwarding, dependencies) and for writes
  // ----------------------------------------------------------------------------------------------
  // The write entry whose last beat issues this cycle leaves the queue: it is not matched.
  logic                wq_rm_v;
  logic [WqIdx-1:0]    wq_rm;
  logic [SlotBits-1:0] wq_rm_slot;
  logic                rq_rm_v;
  logic [RqIdx-1:0]    rq_rm;
  assign wq_rm_v    = col_fire && wr_mode_q && col_last;
  assign wq_rm      = WqIdx'(col_sel);
  assign wq_rm_slot = wq_slot[wq_rm];
  assign rq_rm_v    = col_fire && !wr_mode_q && col_last;
  assign rq_rm      = RqIdx'(col_sel);

  logic                rd_m_v, wr_m_v;
  logic [SlotBits-1:0] rd_m_slot, wr_m_slot;
  always_comb begin
    rd_m_v = 1'b0; rd_m_slot = '0;
    wr_m_v = 1'b0; wr_m_slot = '0;
    for (int unsigned i = 0; i < WrQDepth; i++) begin  // the youngest match wins
      if (wq_v[i] && !(wq_rm_v && i == 32'(wq_rm))) begin
        if (wq_bank[i] == rd_req.bank && wq_row[i] == rd_req.row &&
            wq_blk[i] == rd_req.blk) begin
          rd_m_v = 1'b1; rd_m_slot = wq_slot[i];
        end
        if (wq_bank[i] == wr_req.bank && wq_row[i] == wr_req.row &&
            wq_blk[i] == wr_req.blk) begin
          wr_m_v = 1'b1; wr_m_slot = wq_slot[i];
        end
      end
    end
  end

  logic rd_cover;
  assign rd_cover = rd_m_v &&
                    (!rd_req.beats[0] || &slot_strb_q[rd_m_slot][31:0]) &&
                    (!rd_req.beats[1] || &slot_strb_q[rd_m_slot][63:32]);

  logic                slot_free_v;
  logic [SlotBits-1:0] slot_free;
  always_comb begin
    slot_free_v = 1'b0; slot_free = '0;
    for (int i = Slots - 1; i >= 0; i--) begin
      if (!slot_busy_q[i]) begin slot_free_v = 1'b1; slot_free = SlotBits'(i); end
    end
  end

  assign rd_ready_o = rq_cnt != RqBits'(RdQDepth);
  assign wr_ready_o = wq_cnt != WqBits'(WrQDepth) && slot_free_v;

  logic rd_fire, wr_fire, rd_push, wr_push;
  logic [1:0] wr_beats;
  assign rd_fire  = rd_valid_i && rd_ready_o;
  assign wr_fire  = wr_valid_i && wr_ready_o;
  assign rd_push  = rd_fire && !rd_cover;
  assign wr_beats = {|wr_req.strb[63:32], |wr_req.strb[31:0]};
  assign wr_push  = wr_fire && wr_beats != 2'b00;

  assign fwd.tag     = rd_req.tag;
  assign fwd.data    = slot_data_q[rd_m_slot];
  assign fwd_valid_o = rd_fire && rd_cover;
  assign fwd_o       = fwd;

  // ----------------------------------------------------------------------------------------------
  // The queues: a column command clears its beat, an entry leaves with its last beat (the queue
  // collapses over it), a write's dependants are released when its last beat issues, ages grow,
  // a new request is appended.
  // ----------------------------------------------------------------------------------------------
  tpu_hbm_req_queue #(
    .Depth(RdQDepth), .BankBits(BankBits), .RowBits(RowBits), .BlkBits(BlkBits),
    .PayBits(TagBits), .SlotBits(SlotBits), .AgeBits(AgeBits), .AgeMax(AgeMax)
  ) u_read_queue (
    .clk_i, .rst_ni,
    .push_i(rd_push), .push_bank_i(rd_req.bank), .push_row_i(rd_req.row),
    .push_blk_i(rd_req.blk),
    .push_need_i(rd_req.beats), .push_pay_i(rd_req.tag), .push_dep_i(rd_m_v),
    .push_dslot_i(rd_m_slot),
    .col_i(col_fire && !wr_mode_q), .col_idx_i(RqIdx'(col_sel)), .col_beat_i(col_beat),
    .rm_i(rq_rm_v), .rm_idx_i(rq_rm),
    .release_i(wq_rm_v), .release_slot_i(wq_rm_slot),
    .count_o(rq_cnt), .entries_o(rq_entries)
  );

  // (One struct variable per queue, reused per entry: Yosys 0.23 cannot size a struct declared
  // inside a generate loop.) Bank, row, block, need and dep are the scheduler's.
  rq_entry_t re;
  wq_entry_t we;
  logic      unused;
  always_comb begin
    unused = 1'b0;
    for (int unsigned i = 0; i < RdQDepth; i++) begin
      re        = rq_entries[i*RqEntryW +: RqEntryW];
      rq_v[i]   = re.valid;
      rq_tag[i] = re.pay;
      rq_age[i] = re.age;
      unused    = unused ^ (^{re.dep, re.need, re.bank, re.row, re.blk});
    end
    for (int unsigned i = 0; i < WrQDepth; i++) begin
      we         = wq_entries[i*WqEntryW +: WqEntryW];
      wq_v[i]    = we.valid;
      wq_bank[i] = we.bank;
      wq_row[i]  = we.row;
      wq_blk[i]  = we.blk;
      wq_slot[i] = we.pay;
      wq_age[i]  = we.age;
      unused     = unused ^ (^{we.dep, we.need});
    end
  end

  tpu_hbm_req_queue #(
    .Depth(WrQDepth), .BankBits(BankBits), .RowBits(RowBits), .BlkBits(BlkBits),
    .PayBits(SlotBits), .SlotBits(SlotBits), .AgeBits(AgeBits), .AgeMax(AgeMax)
  ) u_write_queue (
    .clk_i, .rst_ni,
    .push_i(wr_push), .push_bank_i(wr_req.bank), .push_row_i(wr_req.row),
    .push_blk_i(wr_req.blk),
    .push_need_i(wr_beats), .push_pay_i(slot_free), .push_dep_i(wr_m_v),
    .push_dslot_i(wr_m_slot),
    .col_i(col_fire && wr_mode_q), .col_idx_i(WqIdx'(col_sel)), .col_beat_i(col_beat),
    .rm_i(wq_rm_v), .rm_idx_i(wq_rm),
    .release_i(wq_rm_v), .release_slot_i(wq_rm_slot),
    .count_o(wq_cnt), .entries_o(wq_entries)
  );


  // Write-data slots: filled on intake, freed when the last burst's data has gone out.
  logic wd_out_v, wd_out_last;
  logic [SlotBits-1:0] wd_out_slot;
  logic wd_out_beat;
  assign wd_out_v    = wd_v_q[TCwl-1];
  assign wd_out_slot = wd_slot_q[TCwl-1];
  assign wd_out_beat = wd_beat_q[TCwl-1];
  assign wd_out_last = wd_last_q[TCwl-1];

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      slot_busy_q <= '0;
    end else begin
      if (wd_out_v && wd_out_last) slot_busy_q[wd_out_slot] <= 1'b0;
      if (wr_push) slot_busy_q[slot_free] <= 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (wr_push) begin
      slot_data_q[slot_free] <= wr_req.data;
      slot_strb_q[slot_free] <= wr_req.strb;
    end
  end

  // ----------------------------------------------------------------------------------------------
  // The banks: state and timing counters; refresh
  // ----------------------------------------------------------------------------------------------
  tpu_hbm_bank_timers #(
    .RowBits(RowBits), .BgBits(BgBits), .BaBits(BaBits), .CntW(CntW), .Preset(Preset),
    `TPU_HBM_TIMING_PASS
  ) u_banks (
    .clk_i, .rst_ni,
    .row_fire_i(row_fire), .row_cmd_i(row_cmd_o), .row_bank_i(row_bank_o), .row_row_i(row_row_o),
    .col_fire_i(col_fire), .col_write_i(wr_mode_q), .col_auto_i(col_auto),
    .col_bank_i(col_bank_o), .act_block_i(act_block), .col_block_i(col_block),
    .ref_bank_i(ref_bank), .open_o(bank_open), .open_row_o(bank_row_all), .act_ok_o(act_ok),
    .rd_ok_o(rd_ok), .wr_ok_o(wr_ok), .pre_ok_o(pre_t_ok), .pre_all_ok_o(pre_all_ok),
    .ref_ab_ok_o(ref_ab_ok), .ref_pb_ok_o(ref_pb_ok)
  );

  tpu_hbm_refresh #(
    .BgBits(BgBits), .BaBits(BaBits), .PerBankRefresh(PerBankRefresh), .RefUrgent(RefUrgent),
    .TRefi(TRefi)
  ) u_refresh (
    .clk_i, .rst_ni, .row_fire_i(row_fire), .row_cmd_i(row_cmd_o),
    .idle_i(rq_cnt == '0 && wq_cnt == '0), .want_o(ref_want), .urgent_o(ref_urgent),
    .bank_o(ref_bank), .act_block_o(act_block), .col_block_o(col_block), .debt_o(ref_debt)
  );

  // ----------------------------------------------------------------------------------------------
  // Data: write bursts at WL, read bursts at RL
  // ----------------------------------------------------------------------------------------------
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int unsigned k = 0; k < TCwl; k++) begin
        wd_v_q[k] <= 1'b0; wd_slot_q[k] <= '0; wd_beat_q[k] <= 1'b0; wd_last_q[k] <= 1'b0;
      end
      for (int unsigned k = 0; k < TCl; k++) begin
        rd_v_q[k] <= 1'b0; rd_tag_q[k] <= '0; rd_beat_q[k] <= 1'b0;
      end
    end else begin
      wd_v_q[0]    <= col_fire && wr_mode_q;
      wd_slot_q[0] <= wq_slot[WqIdx'(col_sel)];
      wd_beat_q[0] <= col_beat;
      wd_last_q[0] <= col_last;
      for (int unsigned k = 1; k < TCwl; k++) begin
        wd_v_q[k] <= wd_v_q[k-1]; wd_slot_q[k] <= wd_slot_q[k-1];
        wd_beat_q[k] <= wd_beat_q[k-1]; wd_last_q[k] <= wd_last_q[k-1];
      end
      rd_v_q[0]    <= col_fire && !wr_mode_q;
      rd_tag_q[0]  <= rq_tag[RqIdx'(col_sel)];
      rd_beat_q[0] <= col_beat;
      for (int unsigned k = 1; k < TCl; k++) begin
        rd_v_q[k] <= rd_v_q[k-1]; rd_tag_q[k] <= rd_tag_q[k-1]; rd_beat_q[k] <= rd_beat_q[k-1];
      end
    end
  end

  assign wdata_valid_o = wd_out_v;
  assign wdata_o       = wd_out_beat ? slot_data_q[wd_out_slot][511:256]
                                     : slot_data_q[wd_out_slot][255:0];
  assign wstrb_o       = wd_out_beat ? slot_strb_q[wd_out_slot][63:32]
                                     : slot_strb_q[wd_out_slot][31:0];

  assign rdata.tag     = rd_tag_q[TCl-1];
  assign rdata.beat    = rd_beat_q[TCl-1];
  assign rdata.data    = rdata_i;
  assign rdata_valid_o = rd_v_q[TCl-1];
  assign rdata_o       = rdata;

  assign rq_count_o = rq_cnt;
  assign wq_count_o = wq_cnt;
  assign ref_debt_o = ref_debt;
  assign wr_mode_o  = wr_mode_q;

  // ----------------------------------------------------------------------------------------------
  // Assertions
  // ----------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // Read data comes back exactly nCL after its RD.
  a_read_data_at_rl: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                      rdata_valid_i == rdata_valid_o)
    else $error("tpu_hbm_pc_ctrl: read data %s at RL",
                rdata_valid_i ? "without a read" : "missing");
  // Requests hold while waiting.
  a_read_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                rd_valid_i && !rd_ready_o |=> rd_valid_i && $stable(rd_req_i))
    else $error("tpu_hbm_pc_ctrl: read request changed while waiting");
  a_write_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                 wr_valid_i && !wr_ready_o |=> wr_valid_i && $stable(wr_req_i))
    else $error("tpu_hbm_pc_ctrl: write request changed while waiting");
  // A granted command is one that was asked for; the row bus stays free in an ACT's second cycle.
  a_grant_requested: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                      !(row_gnt_i && !row_req_o) && !(col_gnt_i && !col_req_o))
    else $error("tpu_hbm_pc_ctrl: grant without a request");
  logic row_busy_q;  // second cycle of an ACT this PC issued
  `TPU_FF(row_busy_q, row_fire && row_cmd_o == tpu_pkg::HbmAct, 1'b0)
  a_act_holds_row_bus: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                        row_busy_q |-> !row_gnt_i)
    else $error("tpu_hbm_pc_ctrl: row command granted in an ACT's second cycle");
  // No request stays past the age cap for long: once a queue's head reaches it, it is served
  // within StarveLimit. (A read that waits for a queued write to its block is bounded by the
  // writes ahead of it instead: no head reaches AgeMax.)
  // Counts per request: restarts when the head leaves.
  int unsigned rq_starve_cnt, wq_starve_cnt, rq_starve_d, wq_starve_d;
  assign rq_starve_d = (rq_starved && !(rq_rm_v && rq_rm == '0)) ? rq_starve_cnt + 1 : 0;
  assign wq_starve_d = (wq_starved && !(wq_rm_v && wq_rm == '0)) ? wq_starve_cnt + 1 : 0;
  `TPU_FF(rq_starve_cnt, rq_starve_d, 0)
  `TPU_FF(wq_starve_cnt, wq_starve_d, 0)
  a_starved_served: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                     rq_starve_cnt < StarveLimit && wq_starve_cnt < StarveLimit)
    else $error({"tpu_hbm_pc_ctrl: a %s older than the age cap (%0d) waited %0d more cycles ",
                 "(mode %s, %0d reads and %0d writes queued, head ages %0d / %0d, ",
                 "refresh debt %0d)"},
                rq_starve_cnt >= StarveLimit ? "read" : "write", AgeCap,
                rq_starve_cnt > wq_starve_cnt ? rq_starve_cnt : wq_starve_cnt,
                wr_mode_q ? "write" : "read", rq_cnt, wq_cnt, rq_age[0], wq_age[0],
                ref_debt);
  logic head_too_old;  // (Verilator 5.006 cannot take unpacked-array selects in an assertion)
  assign head_too_old = (rq_v[0] && rq_age[0] == AgeBits'(AgeMax)) ||
                        (wq_v[0] && wq_age[0] == AgeBits'(AgeMax));
  a_age_bounded: assert property (@(posedge clk_i) disable iff (!rst_ni) !head_too_old)
    else $error("tpu_hbm_pc_ctrl: a request waited %0d cycles (the age cap is %0d)", AgeMax,
                AgeCap);
  // A read request asks for at least one beat.
  a_read_has_beats: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                     rd_fire |-> rd_req.beats != 2'b00)
    else $error("tpu_hbm_pc_ctrl: read request for no beat");
`endif

endmodule
