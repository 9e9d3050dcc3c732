// SPDX-License-Identifier: Apache-2.0
// HBM2 pseudo-channel controller: read and write queues, FR-FCFS scheduling with an age cap,
// open- or close-page policy, timing counters for every rule of docs/hbm.md, write
// draining between two watermarks, all-bank or per-bank refresh, write data at WL, read data at
// RL, and reads served from the write queue when a queued write covers every byte they ask for.
//
// Requests are 64-byte blocks (two 32-byte bursts of one row, `beats` says which halves) already
// mapped to (bank, row, block) by the port in front (tpu_hbm_axi_port). Each cycle the controller
// proposes at most one row command and one column command; the channel's bus arbiter grants them
// (the two pseudo-channels of a channel share its command buses) and state changes only on a
// grant. The memory side is burst-level: a burst's 32 bytes travel as one word on the first of
// its nBL data cycles.
//
// Page policy: open (0) keeps a row open until a queued request needs another row of its bank;
// close (1) auto-precharges (RDA/WRA) on the last burst of a request when no other queued request
// hits that row; adaptive (2, default) does the same only when some queued request waits for a
// row command, i.e. when the channel's row bus is the scarce resource (random traffic), and
// otherwise behaves as open page (sequential streams keep their rows).
//
// Ordering: writes to one block issue in arrival order; a read waits for every queued write to
// its block unless the youngest of them covers all its bytes (then it is answered from the
// write queue at once). Reads and writes otherwise reorder freely (FR-FCFS: the oldest ready
// row hit first, else the oldest ready row command); a request whose age reaches AgeCap is served
// before any other of its queue.
`include "tpu_hbm_timing.svh"
`include "tpu_channels.svh"

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
  // Service bound of a head past the age cap: one refresh and two services (its own, and the
  // other queue's starved head's turn), each a precharge, an activate and a burst.
  localparam int unsigned StarveLimit =
      TRfc + 2 * (TRas + TRp + TRcdRd + TCwl + TBl + TWr + TCl + TBl + 2 - TCwl + TFaw) + 64;
  // Ages saturate here: no head may get this old (asserted), not even a read that waits for a
  // queued write behind up to WrQDepth starved writes.
  localparam int unsigned AgeMax   = AgeCap + (WrQDepth + 2) * StarveLimit;
  localparam int unsigned AgeBits  = $clog2(AgeMax + 1);
  localparam int unsigned CntW     = 10;
  localparam int unsigned Groups   = 1 << BgBits;
  localparam int unsigned TRtw     = TCl + TBl + 2 - TCwl;
  // Refresh due: per PC every nREFI (all-bank), or 16 per nREFI (per-bank), exactly: an
  // accumulator adds 1 (or Banks) per cycle and a refresh falls due each time it passes nREFI.
  // (nREFIsb = nREFI / 16 rounded would drift: 16 x 243 = 3888 < 3900.)
  localparam int unsigned RefAdd   = (PerBankRefresh != 0) ? (1 << (BgBits + BaBits)) : 1;
  localparam int unsigned RefIntW  = $clog2(TRefi + RefAdd + 1);

  if (RdQDepth < 2 || WrQDepth < 2) begin : gen_bad_depth
    $error("tpu_hbm_pc_ctrl: queue depths must be >= 2 (RdQDepth %0d, WrQDepth %0d)",
           RdQDepth, WrQDepth);
  end
  if (WrLow >= WrHigh || WrHigh > WrQDepth) begin : gen_bad_wm
    $error("tpu_hbm_pc_ctrl: watermarks need WrLow < WrHigh <= WrQDepth (%0d, %0d, %0d)",
           WrLow, WrHigh, WrQDepth);
  end
  if (RefUrgent < 1 || RefUrgent > 6) begin : gen_bad_urgent
    $error("tpu_hbm_pc_ctrl: RefUrgent must be 1..6 so the refresh debt stays below 8 (got %0d)",
           RefUrgent);
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
  if (AgeCap < 1) begin : gen_bad_age
    $error("tpu_hbm_pc_ctrl: AgeCap must be >= 1");
  end
  if (PagePolicy > 2) begin : gen_bad_page
    $error("tpu_hbm_pc_ctrl: PagePolicy must be 0 (open), 1 (close) or 2 (adaptive), got %0d",
           PagePolicy);
  end
  if (ColBits < 2) begin : gen_bad_col
    $error("tpu_hbm_pc_ctrl: ColBits must be >= 2 (a row holds at least two 64-byte blocks)");
  end

  function automatic logic [CntW-1:0] cmax(logic [CntW-1:0] a, logic [CntW-1:0] b);
    cmax = (a > b) ? a : b;
  endfunction

  // ----------------------------------------------------------------------------------------------
  // State
  // ----------------------------------------------------------------------------------------------
  // The read and write queues (tpu_hbm_req_queue, instantiated below), entry by entry; index 0
  // is the oldest. A write's data lives in a slot that stays put (wq_slot).
  logic                rq_v    [RdQDepth];
  logic [BankBits-1:0] rq_bank [RdQDepth];
  logic [RowBits-1:0]  rq_row  [RdQDepth];
  logic [BlkBits-1:0]  rq_blk  [RdQDepth];
  logic [1:0]          rq_need [RdQDepth];
  logic [TagBits-1:0]  rq_tag  [RdQDepth];
  logic                rq_dep  [RdQDepth];
  logic [AgeBits-1:0]  rq_age  [RdQDepth];
  logic [RqBits-1:0]   rq_cnt;
  logic                wq_v    [WrQDepth];
  logic [BankBits-1:0] wq_bank [WrQDepth];
  logic [RowBits-1:0]  wq_row  [WrQDepth];
  logic [BlkBits-1:0]  wq_blk  [WrQDepth];
  logic [1:0]          wq_need [WrQDepth];
  logic [SlotBits-1:0] wq_slot [WrQDepth];
  logic                wq_dep  [WrQDepth];
  logic [AgeBits-1:0]  wq_age  [WrQDepth];
  logic [WqBits-1:0]   wq_cnt;
  logic [511:0]        slot_data_q[Slots];
  logic [63:0]         slot_strb_q[Slots];
  logic [Slots-1:0]    slot_busy_q;
  // Banks.
  logic [Banks-1:0]    open_q;
  logic [RowBits-1:0]  open_row_q[Banks];
  logic [CntW-1:0]     c_act_q[Banks], c_rd_q[Banks], c_wr_q[Banks], c_pre_q[Banks];
  logic [CntW-1:0]     c_act_bg_q[Groups], c_col_bg_q[Groups], c_rdw_bg_q[Groups];
  logic [CntW-1:0]     c_act_any_q, c_col_any_q, c_rdw_any_q, c_wrr_any_q, c_ref_q;
  logic [CntW-1:0]     c_faw_q[4];
  // Refresh.
  logic [RefIntW-1:0]  ref_tick_q;
  logic [3:0]          ref_debt_q;
  logic [BankBits-1:0] ref_bank_q;
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
  // Bank readiness
  // ----------------------------------------------------------------------------------------------
  logic [Banks-1:0] hit_pend;   // some request of the active queue hits the bank's open row
  logic [Banks-1:0] hit_pend_rq, hit_pend_wq;
  logic [Banks-1:0] act_ok, rd_ok, wr_ok, pre_t_ok;
  logic [Banks-1:0] act_block, col_block;
  logic             faw_ok;
  logic             ref_want, ref_urgent;

  // Only the active queue's hits hold a row open: hits of the other queue must not block the
  // precharge a request of the active queue needs (that would stall the mode it is in).
  always_comb begin
    hit_pend_rq = '0;
    hit_pend_wq = '0;
    for (int unsigned i = 0; i < RdQDepth; i++) begin
      if (rq_v[i] && open_q[rq_bank[i]] && open_row_q[rq_bank[i]] == rq_row[i]) begin
        hit_pend_rq[rq_bank[i]] = 1'b1;
      end
    end
    for (int unsigned i = 0; i < WrQDepth; i++) begin
      if (wq_v[i] && open_q[wq_bank[i]] && open_row_q[wq_bank[i]] == wq_row[i]) begin
        hit_pend_wq[wq_bank[i]] = 1'b1;
      end
    end
    hit_pend = wr_mode_q ? hit_pend_wq : hit_pend_rq;
  end

  always_comb begin
    faw_ok = 1'b0;
    for (int unsigned k = 0; k < 4; k++) if (c_faw_q[k] == '0) faw_ok = 1'b1;
  end

  // Refresh wants the bank(s) when debt is due; urgent refresh also stops column commands.
  assign ref_want   = (ref_debt_q >= 4'(RefUrgent)) ||
                      (ref_debt_q != '0 &&
                       (PerBankRefresh != 0 || (rq_cnt == '0 && wq_cnt == '0)));
  assign ref_urgent = ref_debt_q >= 4'(RefUrgent);

  always_comb begin
    act_block = '0;
    col_block = '0;
    if (ref_want) begin
      if (PerBankRefresh != 0) begin
        act_block[ref_bank_q] = 1'b1;
        col_block[ref_bank_q] = ref_urgent;
      end else begin
        act_block = '1;
        col_block = '1;
      end
    end
  end

  always_comb begin
    for (int unsigned b = 0; b < Banks; b++) begin
      logic [BgBits-1:0] g;
      g = BgBits'(b >> BaBits);
      act_ok[b]   = !open_q[b] && c_act_q[b] == '0 && c_act_bg_q[g] == '0 && c_act_any_q == '0 &&
                    faw_ok && !act_block[b];
      rd_ok[b]    = open_q[b] && c_rd_q[b] == '0 && c_col_bg_q[g] == '0 && c_col_any_q == '0 &&
                    c_rdw_bg_q[g] == '0 && c_rdw_any_q == '0 && !col_block[b];
      wr_ok[b]    = open_q[b] && c_wr_q[b] == '0 && c_col_bg_q[g] == '0 && c_col_any_q == '0 &&
                    c_wrr_any_q == '0 && !col_block[b];
      pre_t_ok[b] = open_q[b] && c_pre_q[b] == '0;
    end
  end

  // ----------------------------------------------------------------------------------------------
  // Scheduler: mode, candidates, FR-FCFS pick
  // ----------------------------------------------------------------------------------------------
  logic rq_dep_any;
  logic rq_starved, wq_starved;
  always_comb begin
    rq_dep_any = 1'b0;
    for (int unsigned i = 0; i < RdQDepth; i++) rq_dep_any |= rq_v[i] && rq_dep[i];
  end
  // A starved head that waits for a write is handled by write mode (rq_dep_any) instead.
  assign rq_starved = rq_v[0] && rq_age[0] >= AgeBits'(AgeCap) && !rq_dep[0];
  assign wq_starved = wq_v[0] && wq_age[0] >= AgeBits'(AgeCap) && !wq_dep[0];

  // Mode: a queue head past the age cap wins (both queues' starved heads take turns); otherwise
  // drain writes from the high watermark down to the low one, when reads wait for queued writes,
  // when reads run out with at least half-way between the watermarks queued (a batch worth a bus
  // turnaround), or when no read has come for 31 cycles.
  logic wr_mode_d;
  logic starve_turn_q;  // with both heads starved: 0 serves the read, 1 the write
  logic [4:0] rq_empty_cnt_q;  // cycles the read queue has been empty (saturating)
  logic rd_idle;  // the read queue has been empty for 31 cycles or more
  assign rd_idle = rq_empty_cnt_q == 5'd31;
  always_comb begin
    if (rq_starved && wq_starved) begin
      wr_mode_d = starve_turn_q;
    end else if (rq_starved) begin
      wr_mode_d = 1'b0;
    end else if (wq_starved) begin
      wr_mode_d = 1'b1;
    end else if (!wr_mode_q) begin
      // With no reads queued, drain only a batch worth a bus turnaround, or when idle a while.
      wr_mode_d = wq_cnt >= WqBits'(WrHigh) || rq_dep_any ||
                  (rq_cnt == '0 && (wq_cnt >= WqBits'((WrHigh + WrLow) / 2) ||
                                    (wq_cnt != '0 && rd_idle)));
    end else begin
      wr_mode_d = !(wq_cnt == '0 ||
                    (wq_cnt <= WqBits'(WrLow) && rq_cnt != '0 && !rq_dep_any));
    end
  end

  // Candidates of the active queue (the write queue in write mode). Row hits take column
  // commands; misses take PRE (only when no queued request hits the open row) or ACT.
  localparam int unsigned QMax = (RdQDepth > WrQDepth) ? RdQDepth : WrQDepth;
  logic                q_v    [QMax];
  logic [BankBits-1:0] q_bank [QMax];
  logic [RowBits-1:0]  q_row  [QMax];
  logic [1:0]          q_need [QMax];
  logic                q_dep  [QMax];
  logic                starved;
  logic [QMax-1:0]     col_cand, row_cand;
  logic                miss_pend;  // a request of the active queue waits for a row command

  always_comb begin
    for (int unsigned i = 0; i < QMax; i++) begin
      q_v[i] = 1'b0; q_bank[i] = '0; q_row[i] = '0; q_need[i] = '0; q_dep[i] = 1'b0;
      if (wr_mode_q) begin
        if (i < WrQDepth) begin
          q_v[i] = wq_v[i]; q_bank[i] = wq_bank[i]; q_row[i] = wq_row[i];
          q_need[i] = wq_need[i]; q_dep[i] = wq_dep[i];
        end
      end else if (i < RdQDepth) begin
        q_v[i] = rq_v[i]; q_bank[i] = rq_bank[i]; q_row[i] = rq_row[i];
        q_need[i] = rq_need[i]; q_dep[i] = rq_dep[i];
      end
    end
    starved = wr_mode_q ? wq_starved : rq_starved;
    miss_pend = 1'b0;
    for (int unsigned i = 0; i < QMax; i++) begin
      logic hit, live;
      hit  = open_q[q_bank[i]] && open_row_q[q_bank[i]] == q_row[i];
      miss_pend |= q_v[i] && !hit && !q_dep[i] && !act_block[q_bank[i]];
      // A starved head has its bank to itself; the others still get commands to other banks
      // (the head wins any tie as the oldest).
      live = q_v[i] && !q_dep[i] && (!starved || i == 0 || q_bank[i] != q_bank[0]);
      col_cand[i] = live && hit && (wr_mode_q ? wr_ok[q_bank[i]] : rd_ok[q_bank[i]]);
      row_cand[i] = live && !hit &&
                    ((!open_q[q_bank[i]] && act_ok[q_bank[i]]) ||
                     (pre_t_ok[q_bank[i]] && (!hit_pend[q_bank[i]] || (starved && i == 0)) &&
                      !col_block[q_bank[i]]));
    end
  end

  // Oldest candidate of each kind.
  logic              col_sel_v, row_sel_v;
  logic [$clog2(QMax)-1:0] col_sel, row_sel;
  always_comb begin
    col_sel_v = 1'b0; col_sel = '0;
    row_sel_v = 1'b0; row_sel = '0;
    for (int i = QMax - 1; i >= 0; i--) begin
      if (col_cand[i]) begin col_sel_v = 1'b1; col_sel = ($clog2(QMax))'(i); end
      if (row_cand[i]) begin row_sel_v = 1'b1; row_sel = ($clog2(QMax))'(i); end
    end
  end

  // Column command: the lower needed beat of the picked entry; auto-precharge (close page) on its
  // last beat when no other queued request hits that row.
  logic             col_beat, col_last, col_auto;
  logic [BankBits-1:0] csel_bank;
  always_comb begin
    csel_bank = q_bank[col_sel];
    col_beat  = !q_need[col_sel][0];
    col_last  = q_need[col_sel] != 2'b11;
    col_auto  = 1'b0;
    if ((PagePolicy == 1 || (PagePolicy == 2 && miss_pend)) && col_last) begin
      col_auto = 1'b1;
      for (int unsigned i = 0; i < RdQDepth; i++) begin
        if (rq_v[i] && rq_bank[i] == csel_bank && rq_row[i] == open_row_q[csel_bank] &&
            !(!wr_mode_q && i == 32'(col_sel))) col_auto = 1'b0;
      end
      for (int unsigned i = 0; i < WrQDepth; i++) begin
        if (wq_v[i] && wq_bank[i] == csel_bank && wq_row[i] == open_row_q[csel_bank] &&
            !(wr_mode_q && i == 32'(col_sel))) col_auto = 1'b0;
      end
    end
  end

  assign col_req_o  = col_sel_v;
  assign col_bank_o = csel_bank;
  assign col_col_o  = {(wr_mode_q ? wq_blk[WqIdx'(col_sel)] : rq_blk[RqIdx'(col_sel)]),
                       col_beat};
  assign col_cmd_o  = wr_mode_q ? (col_auto ? tpu_pkg::HbmWra : tpu_pkg::HbmWr)
                                : (col_auto ? tpu_pkg::HbmRda : tpu_pkg::HbmRd);

  // Row command: refresh first, then the oldest ready ACT/PRE.
  logic pre_all_ready, act_all_idle;  // PREA may close every open bank; no bank waits for ACT
  always_comb begin
    pre_all_ready = 1'b1;
    act_all_idle  = 1'b1;
    for (int unsigned b = 0; b < Banks; b++) begin
      if (open_q[b] && c_pre_q[b] != '0) pre_all_ready = 1'b0;
      if (c_act_q[b] != '0) act_all_idle = 1'b0;
    end
  end
  logic                ref_cmd_v;
  logic [2:0]          ref_cmd;
  always_comb begin
    ref_cmd_v = 1'b0; ref_cmd = tpu_pkg::HbmPre;
    if (ref_want) begin
      if (PerBankRefresh != 0) begin
        if (open_q[ref_bank_q]) begin
          ref_cmd_v = pre_t_ok[ref_bank_q] && (!hit_pend[ref_bank_q] || ref_urgent);
        end else begin
          ref_cmd_v = c_act_q[ref_bank_q] == '0 && c_act_any_q == '0 && c_ref_q == '0;
          ref_cmd   = tpu_pkg::HbmRefPb;
        end
      end else begin
        if (open_q != '0) begin
          ref_cmd_v = pre_all_ready;
          ref_cmd   = tpu_pkg::HbmPreA;
        end else begin
          ref_cmd_v = act_all_idle && c_ref_q == '0;
          ref_cmd   = tpu_pkg::HbmRefAb;
        end
      end
    end
  end

  always_comb begin
    row_req_o  = 1'b0;
    row_cmd_o  = tpu_pkg::HbmAct;
    row_bank_o = q_bank[row_sel];
    row_row_o  = q_row[row_sel];
    if (ref_cmd_v) begin
      row_req_o  = 1'b1;
      row_cmd_o  = ref_cmd;
      row_bank_o = ref_bank_q;
    end else if (row_sel_v) begin
      row_req_o = 1'b1;
      row_cmd_o = open_q[q_bank[row_sel]] ? tpu_pkg::HbmPre : tpu_pkg::HbmAct;
    end
  end

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
  logic [RdQDepth-1:0]          rq_valid_all, rq_dep_all;
  logic [RdQDepth*BankBits-1:0] rq_bank_all;
  logic [RdQDepth*RowBits-1:0]  rq_row_all;
  logic [RdQDepth*BlkBits-1:0]  rq_blk_all;
  logic [RdQDepth*2-1:0]        rq_need_all;
  logic [RdQDepth*TagBits-1:0]  rq_tag_all;
  logic [RdQDepth*AgeBits-1:0]  rq_age_all;

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
    .count_o(rq_cnt), .valid_o(rq_valid_all), .bank_o(rq_bank_all), .row_o(rq_row_all),
    .blk_o(rq_blk_all), .need_o(rq_need_all), .pay_o(rq_tag_all), .dep_o(rq_dep_all),
    .age_o(rq_age_all)
  );

  for (genvar i = 0; i < RdQDepth; i++) begin : gen_read_entry
    assign rq_v[i]     = rq_valid_all[i];
    assign rq_bank[i]  = rq_bank_all[i*BankBits +: BankBits];
    assign rq_row[i]   = rq_row_all[i*RowBits +: RowBits];
    assign rq_blk[i]   = rq_blk_all[i*BlkBits +: BlkBits];
    assign rq_need[i]  = rq_need_all[i*2 +: 2];
    assign rq_tag[i]   = rq_tag_all[i*TagBits +: TagBits];
    assign rq_dep[i]   = rq_dep_all[i];
    assign rq_age[i]   = rq_age_all[i*AgeBits +: AgeBits];
  end

  logic [WrQDepth-1:0]          wq_valid_all, wq_dep_all;
  logic [WrQDepth*BankBits-1:0] wq_bank_all;
  logic [WrQDepth*RowBits-1:0]  wq_row_all;
  logic [WrQDepth*BlkBits-1:0]  wq_blk_all;
  logic [WrQDepth*2-1:0]        wq_need_all;
  logic [WrQDepth*SlotBits-1:0] wq_slot_all;
  logic [WrQDepth*AgeBits-1:0]  wq_age_all;

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
    .count_o(wq_cnt), .valid_o(wq_valid_all), .bank_o(wq_bank_all), .row_o(wq_row_all),
    .blk_o(wq_blk_all), .need_o(wq_need_all), .pay_o(wq_slot_all), .dep_o(wq_dep_all),
    .age_o(wq_age_all)
  );

  for (genvar i = 0; i < WrQDepth; i++) begin : gen_write_entry
    assign wq_v[i]     = wq_valid_all[i];
    assign wq_bank[i]  = wq_bank_all[i*BankBits +: BankBits];
    assign wq_row[i]   = wq_row_all[i*RowBits +: RowBits];
    assign wq_blk[i]   = wq_blk_all[i*BlkBits +: BlkBits];
    assign wq_need[i]  = wq_need_all[i*2 +: 2];
    assign wq_slot[i]  = wq_slot_all[i*SlotBits +: SlotBits];
    assign wq_dep[i]   = wq_dep_all[i];
    assign wq_age[i]   = wq_age_all[i*AgeBits +: AgeBits];
  end

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
  // Bank state and timing counters: each counter holds the cycles still to wait before a command
  // of its kind; it counts down to 0 and a command raises it to the wait that command imposes.
  // ----------------------------------------------------------------------------------------------
  function automatic logic [CntW-1:0] dec(logic [CntW-1:0] c);
    dec = (c == '0) ? c : c - 1'b1;
  endfunction

  // The wait before an ACT after an auto-precharge: the precharge starts once `after` cycles and
  // the bank's pending precharge wait (nRAS) have passed, then nRP.
  function automatic logic [CntW-1:0] auto_pre_act(logic [CntW-1:0] pre_wait, int unsigned after);
    auto_pre_act = CntW'(((32'(pre_wait) > after) ? 32'(pre_wait) : after) + TRp - 1);
  endfunction

  logic [Banks-1:0]  open_d;
  logic [CntW-1:0]   c_act_d[Banks], c_rd_d[Banks], c_wr_d[Banks], c_pre_d[Banks];
  logic [CntW-1:0]   c_act_bg_d[Groups], c_col_bg_d[Groups], c_rdw_bg_d[Groups];
  logic [CntW-1:0]   c_faw_d[4];
  logic [CntW-1:0]   c_act_any_d, c_col_any_d, c_rdw_any_d, c_wrr_any_d, c_ref_d;
  logic [BgBits-1:0] row_group, col_group;
  logic              faw_loaded;

  always_comb begin
    row_group = row_bank_o[BankBits-1:BaBits];
    col_group = col_bank_o[BankBits-1:BaBits];
    for (int unsigned b = 0; b < Banks; b++) begin
      c_act_d[b] = dec(c_act_q[b]);
      c_rd_d[b]  = dec(c_rd_q[b]);
      c_wr_d[b]  = dec(c_wr_q[b]);
      c_pre_d[b] = dec(c_pre_q[b]);
    end
    for (int unsigned g = 0; g < Groups; g++) begin
      c_act_bg_d[g] = dec(c_act_bg_q[g]);
      c_col_bg_d[g] = dec(c_col_bg_q[g]);
      c_rdw_bg_d[g] = dec(c_rdw_bg_q[g]);
    end
    for (int unsigned k = 0; k < 4; k++) c_faw_d[k] = dec(c_faw_q[k]);
    c_act_any_d = dec(c_act_any_q);
    c_col_any_d = dec(c_col_any_q);
    c_rdw_any_d = dec(c_rdw_any_q);
    c_wrr_any_d = dec(c_wrr_any_q);
    c_ref_d     = dec(c_ref_q);
    open_d      = open_q;
    faw_loaded  = 1'b0;

    if (row_fire) begin
      unique case (row_cmd_o)
        tpu_pkg::HbmAct: begin
          open_d[row_bank_o]    = 1'b1;
          c_act_d[row_bank_o]   = cmax(c_act_d[row_bank_o], CntW'(TRc - 1));
          c_rd_d[row_bank_o]    = cmax(c_rd_d[row_bank_o], CntW'(TRcdRd - 1));
          c_wr_d[row_bank_o]    = cmax(c_wr_d[row_bank_o], CntW'(TRcdWr - 1));
          c_pre_d[row_bank_o]   = cmax(c_pre_d[row_bank_o], CntW'(TRas - 1));
          c_act_any_d           = cmax(c_act_any_d, CntW'(TRrdS - 1));
          c_act_bg_d[row_group] = cmax(c_act_bg_d[row_group], CntW'(TRrdL - 1));
          for (int unsigned k = 0; k < 4; k++) begin
            if (!faw_loaded && c_faw_q[k] == '0) begin
              c_faw_d[k] = CntW'(TFaw - 1);
              faw_loaded = 1'b1;
            end
          end
        end
        tpu_pkg::HbmPre: begin
          open_d[row_bank_o]  = 1'b0;
          c_act_d[row_bank_o] = cmax(c_act_d[row_bank_o], CntW'(TRp - 1));
        end
        tpu_pkg::HbmPreA: begin
          open_d = '0;
          for (int unsigned b = 0; b < Banks; b++) c_act_d[b] = cmax(c_act_d[b], CntW'(TRp - 1));
        end
        tpu_pkg::HbmRefAb: begin
          for (int unsigned b = 0; b < Banks; b++) c_act_d[b] = cmax(c_act_d[b], CntW'(TRfc - 1));
          c_ref_d = cmax(c_ref_d, CntW'(TRfc - 1));
        end
        tpu_pkg::HbmRefPb: begin
          for (int unsigned b = 0; b < Banks; b++) begin
            c_act_d[b] = cmax(c_act_d[b],
                              CntW'((BankBits'(b) == row_bank_o) ? TRfcSb - 1 : TRrefd - 1));
          end
          c_ref_d = cmax(c_ref_d, CntW'(TRrefd - 1));
        end
        /*verilator coverage_off*/ default: ; /*verilator coverage_on*/  // row commands are 0..4
      endcase
    end

    if (col_fire) begin
      c_col_any_d           = cmax(c_col_any_d, CntW'(TCcdS - 1));
      c_col_bg_d[col_group] = cmax(c_col_bg_d[col_group], CntW'(TCcdL - 1));
      if (!wr_mode_q) begin
        c_pre_d[col_bank_o] = cmax(c_pre_d[col_bank_o], CntW'(TRtp - 1));
        c_wrr_any_d         = cmax(c_wrr_any_d, CntW'(TRtw - 1));
        if (col_auto) begin
          open_d[col_bank_o]  = 1'b0;
          c_act_d[col_bank_o] = cmax(c_act_d[col_bank_o], auto_pre_act(c_pre_q[col_bank_o], TRtp));
        end
      end else begin
        c_pre_d[col_bank_o]   = cmax(c_pre_d[col_bank_o], CntW'(TCwl + TBl + TWr - 1));
        c_rdw_any_d           = cmax(c_rdw_any_d, CntW'(TCwl + TBl + TWtrS - 1));
        c_rdw_bg_d[col_group] = cmax(c_rdw_bg_d[col_group], CntW'(TCwl + TBl + TWtrL - 1));
        if (col_auto) begin
          open_d[col_bank_o]  = 1'b0;
          c_act_d[col_bank_o] = cmax(c_act_d[col_bank_o],
                                     auto_pre_act(c_pre_q[col_bank_o], TCwl + TBl + TWr));
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      open_q      <= '0;
      c_act_any_q <= '0;
      c_col_any_q <= '0;
      c_rdw_any_q <= '0;
      c_wrr_any_q <= '0;
      c_ref_q     <= '0;
      for (int unsigned b = 0; b < Banks; b++) begin
        open_row_q[b] <= '0;
        c_act_q[b]    <= '0;
        c_rd_q[b]     <= '0;
        c_wr_q[b]     <= '0;
        c_pre_q[b]    <= '0;
      end
      for (int unsigned g = 0; g < Groups; g++) begin
        c_act_bg_q[g] <= '0;
        c_col_bg_q[g] <= '0;
        c_rdw_bg_q[g] <= '0;
      end
      for (int unsigned k = 0; k < 4; k++) c_faw_q[k] <= '0;
    end else begin
      open_q      <= open_d;
      c_act_any_q <= c_act_any_d;
      c_col_any_q <= c_col_any_d;
      c_rdw_any_q <= c_rdw_any_d;
      c_wrr_any_q <= c_wrr_any_d;
      c_ref_q     <= c_ref_d;
      if (row_fire && row_cmd_o == tpu_pkg::HbmAct) open_row_q[row_bank_o] <= row_row_o;
      for (int unsigned b = 0; b < Banks; b++) begin
        c_act_q[b] <= c_act_d[b];
        c_rd_q[b]  <= c_rd_d[b];
        c_wr_q[b]  <= c_wr_d[b];
        c_pre_q[b] <= c_pre_d[b];
      end
      for (int unsigned g = 0; g < Groups; g++) begin
        c_act_bg_q[g] <= c_act_bg_d[g];
        c_col_bg_q[g] <= c_col_bg_d[g];
        c_rdw_bg_q[g] <= c_rdw_bg_d[g];
      end
      for (int unsigned k = 0; k < 4; k++) c_faw_q[k] <= c_faw_d[k];
    end
  end

  // ----------------------------------------------------------------------------------------------
  // Refresh debt: +1 per refresh due (every nREFI, or 16 per nREFI), -1 per refresh; the mode
  // and the starvation turn
  // ----------------------------------------------------------------------------------------------
  logic                ref_done, ref_tick, starve_turn_d;
  logic [RefIntW-1:0]  ref_acc, ref_tick_d;
  logic [3:0]          ref_debt_d;
  logic [BankBits-1:0] ref_bank_d;
  logic [4:0]          rq_empty_cnt_d;

  always_comb begin
    ref_done   = row_fire && (row_cmd_o == tpu_pkg::HbmRefAb || row_cmd_o == tpu_pkg::HbmRefPb);
    ref_acc    = ref_tick_q + RefIntW'(RefAdd);
    ref_tick   = ref_acc >= RefIntW'(TRefi);
    ref_tick_d = ref_tick ? ref_acc - RefIntW'(TRefi) : ref_acc;
    ref_debt_d = ref_debt_q + (ref_tick ? 4'd1 : 4'd0) - (ref_done ? 4'd1 : 4'd0);
    ref_bank_d = ref_done ? ref_bank_q + 1'b1 : ref_bank_q;
    rq_empty_cnt_d = (rq_cnt != '0) ? 5'd0 : (rd_idle ? rq_empty_cnt_q : rq_empty_cnt_q + 5'd1);
    starve_turn_d  = starve_turn_q;
    if (!rq_starved && !wq_starved) starve_turn_d = 1'b0;  // a fresh contest starts with reads
    if (rq_rm_v && rq_rm == '0 && rq_starved) starve_turn_d = 1'b1;
    if (wq_rm_v && wq_rm == '0 && wq_starved) starve_turn_d = 1'b0;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ref_tick_q     <= '0;
      ref_debt_q     <= '0;
      ref_bank_q     <= '0;
      wr_mode_q      <= 1'b0;
      starve_turn_q  <= 1'b0;
      rq_empty_cnt_q <= '0;
    end else begin
      ref_tick_q     <= ref_tick_d;
      ref_debt_q     <= ref_debt_d;
      ref_bank_q     <= ref_bank_d;
      wr_mode_q      <= wr_mode_d;
      starve_turn_q  <= starve_turn_d;
      rq_empty_cnt_q <= rq_empty_cnt_d;
    end
  end

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
  assign ref_debt_o = ref_debt_q;
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
  // Refresh debt never reaches the spec's bound.
  a_refresh_debt: assert property (@(posedge clk_i) disable iff (!rst_ni) ref_debt_q < 4'd8)
    else $error("tpu_hbm_pc_ctrl: refresh debt %0d", ref_debt_q);
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
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) row_busy_q <= 1'b0;
    else         row_busy_q <= row_fire && row_cmd_o == tpu_pkg::HbmAct;
  end
  a_act_holds_row_bus: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                        row_busy_q |-> !row_gnt_i)
    else $error("tpu_hbm_pc_ctrl: row command granted in an ACT's second cycle");
  // No request stays past the age cap for long: once a queue's head reaches it, it is served
  // within StarveLimit. (A read that waits for a queued write to its block is bounded by the
  // writes ahead of it instead: no head reaches AgeMax.)
  int unsigned rq_starve_cnt, wq_starve_cnt;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rq_starve_cnt <= 0;
      wq_starve_cnt <= 0;
    end else begin
      // Counts per request: restarts when the head leaves.
      rq_starve_cnt <= (rq_starved && !(rq_rm_v && rq_rm == '0)) ? rq_starve_cnt + 1 : 0;
      wq_starve_cnt <= (wq_starved && !(wq_rm_v && wq_rm == '0)) ? wq_starve_cnt + 1 : 0;
    end
  end
  a_starved_served: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                     rq_starve_cnt < StarveLimit && wq_starve_cnt < StarveLimit)
    else $error({"tpu_hbm_pc_ctrl: a %s older than the age cap (%0d) waited %0d more cycles ",
                 "(mode %s, %0d reads and %0d writes queued, head ages %0d / %0d, ",
                 "refresh debt %0d)"},
                rq_starve_cnt >= StarveLimit ? "read" : "write", AgeCap,
                rq_starve_cnt > wq_starve_cnt ? rq_starve_cnt : wq_starve_cnt,
                wr_mode_q ? "write" : "read", rq_cnt, wq_cnt, rq_age[0], wq_age[0],
                ref_debt_q);
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
