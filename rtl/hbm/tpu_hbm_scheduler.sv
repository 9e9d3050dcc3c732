// SPDX-License-Identifier: Apache-2.0
// The scheduler of one HBM2 pseudo-channel's controller (tpu_hbm_pc_ctrl): the mode (reads, or
// draining writes), the candidates of the active queue, and per cycle at most one row command and
// one column command for the channel's arbiter. FR-FCFS: the oldest ready row hit first, else the
// oldest ready ACT or PRE; a queue head past the age cap has its bank to itself; refresh's
// commands come before every other row command.
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
`include "tpu_channels.svh"

module tpu_hbm_scheduler #(
  parameter int unsigned RowBits        = 16,
  parameter int unsigned BgBits         = 2,
  parameter int unsigned BaBits         = 2,
  parameter int unsigned ColBits        = 5,
  parameter int unsigned RdQDepth       = 16,
  parameter int unsigned WrQDepth       = 16,
  parameter int unsigned PagePolicy     = 2,
  parameter int unsigned PerBankRefresh = 0,
  parameter int unsigned AgeCap         = 1024,
  parameter int unsigned AgeBits        = 11,
  parameter int unsigned TagBits        = 5,   // a read entry's payload (unused here)
  parameter int unsigned SlotBits       = 5,   // a write entry's payload (unused here)
  parameter int unsigned WrHigh         = 14,
  parameter int unsigned WrLow          = 2,
  localparam int unsigned BankBits = BgBits + BaBits,
  localparam int unsigned Banks    = 1 << BankBits,
  localparam int unsigned BlkBits  = ColBits - 1,
  localparam int unsigned RqBits   = $clog2(RdQDepth + 1),
  localparam int unsigned WqBits   = $clog2(WrQDepth + 1),
  localparam int unsigned RqIdx    = $clog2(RdQDepth),
  localparam int unsigned WqIdx    = $clog2(WrQDepth),
  localparam int unsigned QMax     = (RdQDepth > WrQDepth) ? RdQDepth : WrQDepth,
  localparam int unsigned SelBits  = $clog2(QMax),
  localparam int unsigned RqEntryW =
      `TPU_HBM_Q_ENTRY_W(BankBits, RowBits, BlkBits, TagBits, AgeBits),
  localparam int unsigned WqEntryW =
      `TPU_HBM_Q_ENTRY_W(BankBits, RowBits, BlkBits, SlotBits, AgeBits)
) (
  input  logic                                clk_i,
  input  logic                                rst_ni,
  // The queues' entries (tpu_hbm_req_queue's entries_o: hbm_q_entry, entry i at [i*W +: W]).
  input  logic [RdQDepth*RqEntryW-1:0]        rq_entries_i,
  input  logic [RqBits-1:0]                   rq_count_i,
  input  logic [WrQDepth*WqEntryW-1:0]        wq_entries_i,
  input  logic [WqBits-1:0]                   wq_count_i,
  // The banks (tpu_hbm_bank_timers) and refresh (tpu_hbm_refresh).
  input  logic [Banks-1:0]                    bank_open_i,
  input  logic [Banks*RowBits-1:0]            bank_row_i,
  input  logic [Banks-1:0]                    act_ok_i,
  input  logic [Banks-1:0]                    rd_ok_i,
  input  logic [Banks-1:0]                    wr_ok_i,
  input  logic [Banks-1:0]                    pre_ok_i,
  input  logic                                pre_all_ok_i,
  input  logic                                ref_ab_ok_i,
  input  logic                                ref_pb_ok_i,
  input  logic                                ref_want_i,
  input  logic                                ref_urgent_i,
  input  logic [BankBits-1:0]                 ref_bank_i,
  input  logic [Banks-1:0]                    act_block_i,
  input  logic [Banks-1:0]                    col_block_i,
  // Commands to the channel's arbiter.
  output logic                                row_req_o,
  output logic [tpu_pkg::HbmRowCmdBits-1:0]   row_cmd_o,
  output logic [BankBits-1:0]                 row_bank_o,
  output logic [RowBits-1:0]                  row_row_o,
  output logic                                col_req_o,
  output logic [tpu_pkg::HbmColCmdBits-1:0]   col_cmd_o,
  output logic [BankBits-1:0]                 col_bank_o,
  output logic [ColBits-1:0]                  col_col_o,
  input  logic                                col_gnt_i,
  // The column command's entry (of the active queue), its beat, whether it is the entry's last
  // beat, whether it auto-precharges; the mode (1: writes); the queue heads past the age cap.
  output logic [SelBits-1:0]                  col_sel_o,
  output logic                                col_beat_o,
  output logic                                col_last_o,
  output logic                                col_auto_o,
  output logic                                wr_mode_o,
  output logic                                rq_starved_o,
  output logic                                wq_starved_o
);

  if (WrLow >= WrHigh || WrHigh > WrQDepth) begin : gen_bad_wm
    $error("tpu_hbm_scheduler: watermarks need WrLow < WrHigh <= WrQDepth (%0d, %0d, %0d)",
           WrLow, WrHigh, WrQDepth);
  end
  if (AgeCap < 1) begin : gen_bad_age
    $error("tpu_hbm_scheduler: AgeCap must be >= 1");
  end
  if (PagePolicy > 2) begin : gen_bad_page
    $error("tpu_hbm_scheduler: PagePolicy must be 0 (open), 1 (close) or 2 (adaptive), got %0d",
           PagePolicy);
  end

  // The entries, one array element each.
  logic                rq_v    [RdQDepth];
  logic [BankBits-1:0] rq_bank [RdQDepth];
  logic [RowBits-1:0]  rq_row  [RdQDepth];
  logic [BlkBits-1:0]  rq_blk  [RdQDepth];
  logic [1:0]          rq_need [RdQDepth];
  logic                rq_dep  [RdQDepth];
  logic [AgeBits-1:0]  rq_age  [RdQDepth];
  logic                wq_v    [WrQDepth];
  logic [BankBits-1:0] wq_bank [WrQDepth];
  logic [RowBits-1:0]  wq_row  [WrQDepth];
  logic [BlkBits-1:0]  wq_blk  [WrQDepth];
  logic [1:0]          wq_need [WrQDepth];
  logic                wq_dep  [WrQDepth];
  logic [AgeBits-1:0]  wq_age  [WrQDepth];
  logic [RowBits-1:0]  bank_row[Banks];
  typedef `TPU_HBM_Q_ENTRY_T(BankBits, RowBits, BlkBits, TagBits, AgeBits) rq_entry_t;
  typedef `TPU_HBM_Q_ENTRY_T(BankBits, RowBits, BlkBits, SlotBits, AgeBits) wq_entry_t;
  // (One struct variable per queue, reused per entry: Yosys 0.23 cannot size a struct declared
  // inside a generate loop.)
  rq_entry_t re;
  wq_entry_t we;
  logic      unused;  // the payloads are the controller's business
  always_comb begin
    unused = 1'b0;
    for (int unsigned i = 0; i < RdQDepth; i++) begin
      re         = rq_entries_i[i*RqEntryW +: RqEntryW];
      rq_v[i]    = re.valid;
      rq_bank[i] = re.bank;
      rq_row[i]  = re.row;
      rq_blk[i]  = re.blk;
      rq_need[i] = re.need;
      rq_dep[i]  = re.dep;
      rq_age[i]  = re.age;
      unused     = unused ^ (^re.pay);
    end
    for (int unsigned i = 0; i < WrQDepth; i++) begin
      we         = wq_entries_i[i*WqEntryW +: WqEntryW];
      wq_v[i]    = we.valid;
      wq_bank[i] = we.bank;
      wq_row[i]  = we.row;
      wq_blk[i]  = we.blk;
      wq_need[i] = we.need;
      wq_dep[i]  = we.dep;
      wq_age[i]  = we.age;
      unused     = unused ^ (^we.pay);
    end
  end
  for (genvar b = 0; b < Banks; b++) begin : gen_bank_row
    assign bank_row[b] = bank_row_i[b*RowBits +: RowBits];
  end

  logic             wr_mode_q;
  logic [RqBits-1:0] rq_cnt;
  logic [WqBits-1:0] wq_cnt;
  logic [Banks-1:0] hit_pend;   // some request of the active queue hits the bank's open row
  logic [Banks-1:0] hit_pend_rq, hit_pend_wq;
  assign rq_cnt = rq_count_i;
  assign wq_cnt = wq_count_i;

  // Only the active queue's hits hold a row open: hits of the other queue must not block the
  // precharge a request of the active queue needs (that would stall the mode it is in).
  always_comb begin
    hit_pend_rq = '0;
    hit_pend_wq = '0;
    for (int unsigned i = 0; i < RdQDepth; i++) begin
      if (rq_v[i] && bank_open_i[rq_bank[i]] && bank_row[rq_bank[i]] == rq_row[i]) begin
        hit_pend_rq[rq_bank[i]] = 1'b1;
      end
    end
    for (int unsigned i = 0; i < WrQDepth; i++) begin
      if (wq_v[i] && bank_open_i[wq_bank[i]] && bank_row[wq_bank[i]] == wq_row[i]) begin
        hit_pend_wq[wq_bank[i]] = 1'b1;
      end
    end
    hit_pend = wr_mode_q ? hit_pend_wq : hit_pend_rq;
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
      hit  = bank_open_i[q_bank[i]] && bank_row[q_bank[i]] == q_row[i];
      miss_pend |= q_v[i] && !hit && !q_dep[i] && !act_block_i[q_bank[i]];
      // A starved head has its bank to itself; the others still get commands to other banks
      // (the head wins any tie as the oldest).
      live = q_v[i] && !q_dep[i] && (!starved || i == 0 || q_bank[i] != q_bank[0]);
      col_cand[i] = live && hit && (wr_mode_q ? wr_ok_i[q_bank[i]] : rd_ok_i[q_bank[i]]);
      row_cand[i] = live && !hit &&
                    ((!bank_open_i[q_bank[i]] && act_ok_i[q_bank[i]]) ||
                     (pre_ok_i[q_bank[i]] && (!hit_pend[q_bank[i]] || (starved && i == 0)) &&
                      !col_block_i[q_bank[i]]));
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
        if (rq_v[i] && rq_bank[i] == csel_bank && rq_row[i] == bank_row[csel_bank] &&
            !(!wr_mode_q && i == 32'(col_sel))) col_auto = 1'b0;
      end
      for (int unsigned i = 0; i < WrQDepth; i++) begin
        if (wq_v[i] && wq_bank[i] == csel_bank && wq_row[i] == bank_row[csel_bank] &&
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
  logic                ref_cmd_v;
  logic [2:0]          ref_cmd;
  always_comb begin
    ref_cmd_v = 1'b0; ref_cmd = tpu_pkg::HbmPre;
    if (ref_want_i) begin
      if (PerBankRefresh != 0) begin
        if (bank_open_i[ref_bank_i]) begin
          ref_cmd_v = pre_ok_i[ref_bank_i] && (!hit_pend[ref_bank_i] || ref_urgent_i);
        end else begin
          ref_cmd_v = ref_pb_ok_i;
          ref_cmd   = tpu_pkg::HbmRefPb;
        end
      end else begin
        if (bank_open_i != '0) begin
          ref_cmd_v = pre_all_ok_i;
          ref_cmd   = tpu_pkg::HbmPreA;
        end else begin
          ref_cmd_v = ref_ab_ok_i;
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
      row_bank_o = ref_bank_i;
    end else if (row_sel_v) begin
      row_req_o = 1'b1;
      row_cmd_o = bank_open_i[q_bank[row_sel]] ? tpu_pkg::HbmPre : tpu_pkg::HbmAct;
    end
  end

  logic head_done;  // the column command finishes the active queue's head
  assign head_done = col_req_o && col_gnt_i && col_last && col_sel == '0;

  // ----------------------------------------------------------------------------------------------
  // The mode and the starvation turn
  // ----------------------------------------------------------------------------------------------
  logic       starve_turn_d;
  logic [4:0] rq_empty_cnt_d;

  always_comb begin
    rq_empty_cnt_d = (rq_cnt != '0) ? 5'd0 : (rd_idle ? rq_empty_cnt_q : rq_empty_cnt_q + 5'd1);
    starve_turn_d  = starve_turn_q;
    if (!rq_starved && !wq_starved) starve_turn_d = 1'b0;  // a fresh contest starts with reads
    if (head_done && !wr_mode_q && rq_starved) starve_turn_d = 1'b1;
    if (head_done && wr_mode_q && wq_starved) starve_turn_d = 1'b0;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_mode_q      <= 1'b0;
      starve_turn_q  <= 1'b0;
      rq_empty_cnt_q <= '0;
    end else begin
      wr_mode_q      <= wr_mode_d;
      starve_turn_q  <= starve_turn_d;
      rq_empty_cnt_q <= rq_empty_cnt_d;
    end
  end

  assign col_sel_o    = col_sel;
  assign col_beat_o   = col_beat;
  assign col_last_o   = col_last;
  assign col_auto_o   = col_auto;
  assign wr_mode_o    = wr_mode_q;
  assign rq_starved_o = rq_starved;
  assign wq_starved_o = wq_starved;

endmodule
