// SPDX-License-Identifier: Apache-2.0
// Formal only (make formal, docs/formal.md): the HBM pseudo-channel controller
// (rtl/hbm/tpu_hbm_pc_ctrl.sv) from reset on a reduced configuration (4 banks in 2 bank groups,
// 2 rows, 2 blocks a row, two-entry queues, small timing values that still pull every rule
// apart), for any request stream the port may send (held and stable until taken; any bank, row,
// block, beats, strobes none/partial/full per half) and any grant pattern of the channel's
// arbiter (a grant only for a request, no row grant in the second cycle of an ACT).
//
// The checker below is written from the device model's rules (models/src/hbm_device.cpp,
// docs/hbm.md), not from the controller's counters: it keeps, per bank, bank group and
// pseudo-channel, the cycles since each event a rule is measured from and the bank states, and
// asserts at every granted command every rule the device model checks for it:
//   state      ACT to a closed bank only; RD/WR to an open bank (not after its auto-precharge);
//              REFab with every bank closed; REFpb to a closed bank; no column command to a bank
//              a row command of the same cycle touches (a rule breaks when the device takes
//              the row command first, as the testbenches pass them)
//   ACT        nRC, nRP (after PRE or auto-precharge), nRRDL, nRRDS, nFAW, nRFC, nRFCsb, nRREFD
//   PRE/PREA   nRAS, nRTP, nWR for each bank it closes
//   REFab      nRP, nRFCsb, nRFC;   REFpb: nRP, nRC, nRRDS, nRFC, nRFCsb, nRREFD
//   RD/WR      nRCDRD/nRCDWR, nCCDL, nCCDS; RD: nWTRL, nWTRS; WR: nRTW
//   data       write data exactly nCWL after each WR/WRA, read data exactly nCL after each RD/RDA
// Not here: the refresh debt (the depth covers under two nREFI), the data itself (zero: the
// strobes are kept, they decide forwarding).
`include "tpu_hbm_timing.svh"

`include "tpu_channels.svh"
module hbm_pc_formal #(
  parameter int unsigned RowBits        = 1,
  parameter int unsigned BgBits         = 1,
  parameter int unsigned BaBits         = 1,
  parameter int unsigned ColBits        = 2,
  parameter int unsigned RdQDepth       = 2,
  parameter int unsigned WrQDepth       = 2,
  parameter int unsigned TagBits        = 1,
  parameter int unsigned PagePolicy     = 2,
  parameter int unsigned PerBankRefresh = 0,
  parameter int unsigned AgeCap         = 6,
  parameter int unsigned WrHigh         = 2,
  parameter int unsigned WrLow          = 1,
  parameter int unsigned RefUrgent      = 1,
  parameter int unsigned TCl     = 3,
  parameter int unsigned TCwl    = 2,
  parameter int unsigned TBl     = 2,
  parameter int unsigned TRcdRd  = 3,
  parameter int unsigned TRcdWr  = 2,
  parameter int unsigned TRp     = 2,
  parameter int unsigned TRas    = 6,   // > nRCDRD + nRTP: it can delay an RDA's precharge
  parameter int unsigned TRc     = 9,   // > nRAS + nRP
  parameter int unsigned TCcdS   = 2,
  parameter int unsigned TCcdL   = 3,
  parameter int unsigned TRrdS   = 3,   // > 2: an ACT holds the row bus 2 cycles, so 2 cannot break
  parameter int unsigned TRrdL   = 4,
  parameter int unsigned TFaw    = 13,  // > 4 nRRDS
  parameter int unsigned TWr     = 2,
  parameter int unsigned TRtp    = 2,
  parameter int unsigned TWtrS   = 2,
  parameter int unsigned TWtrL   = 3,
  parameter int unsigned TRfc    = 6,   // > nRFCsb > nRREFD
  parameter int unsigned TRfcSb  = 4,
  parameter int unsigned TRefi   = 16,  // the controller's least
  parameter int unsigned TRrefd  = 2,
  localparam int unsigned BankBits = BgBits + BaBits,
  localparam int unsigned Banks    = 1 << BankBits,
  localparam int unsigned TRefiSb  = TRefi / Banks,        // implied (the controller checks)
  localparam int unsigned Groups   = 1 << BgBits,
  localparam int unsigned BlkBits  = ColBits - 1,
  localparam int unsigned TRtw     = TCl + TBl + 2 - TCwl,  // RD to WR (the device model's)
  localparam int unsigned WrEnd    = TCwl + TBl,            // WR to the end of its data
  localparam int unsigned SW       = 5,                     // cycles-since counters
  localparam logic [SW-1:0] Sat    = 5'd31,                 // "never" (and every longer wait)
  localparam int unsigned RdReqW   = `TPU_HBM_RD_REQ_W(BankBits, RowBits, BlkBits, TagBits)
) (
  input logic                clk_i,
  input logic                rst_ni,
  input logic                rd_valid_i,
  input logic [RdReqW-1:0]   rd_req_i,
  input logic                wr_valid_i,
  input logic [BankBits-1:0] wr_bank_i,
  input logic [RowBits-1:0]  wr_row_i,
  input logic [BlkBits-1:0]  wr_blk_i,
  input logic [1:0]          wr_any_i,   // per half: some byte strobed ...
  input logic [1:0]          wr_full_i,  // ... every byte strobed
  input logic                row_gnt_i,
  input logic                col_gnt_i
);
  typedef `TPU_HBM_RD_REQ_T(BankBits, RowBits, BlkBits, TagBits) rd_req_t;
  typedef `TPU_HBM_WR_REQ_T(BankBits, RowBits, BlkBits) wr_req_t;
  rd_req_t rd_req;
  wr_req_t wr_req;
  assign rd_req      = rd_req_i;
  assign wr_req.bank = wr_bank_i;
  assign wr_req.row  = wr_row_i;
  assign wr_req.blk  = wr_blk_i;
  assign wr_req.data = '0;
  assign wr_req.strb = {{31{wr_full_i[1]}}, wr_full_i[1] | wr_any_i[1],
                        {31{wr_full_i[0]}}, wr_full_i[0] | wr_any_i[0]};

  logic                              rd_ready, wr_ready;
  logic                              row_req, col_req;
  logic [tpu_pkg::HbmRowCmdBits-1:0] row_cmd;
  logic [tpu_pkg::HbmColCmdBits-1:0] col_cmd;
  logic [BankBits-1:0]               row_bank, col_bank;
  logic [RowBits-1:0]                row_row;
  logic [ColBits-1:0]                col_col;
  logic                              wdata_valid, rdata_valid;

  tpu_hbm_pc_ctrl #(
    .RowBits(RowBits), .BgBits(BgBits), .BaBits(BaBits), .ColBits(ColBits),
    .RdQDepth(RdQDepth), .WrQDepth(WrQDepth), .TagBits(TagBits), .PagePolicy(PagePolicy),
    .PerBankRefresh(PerBankRefresh), .AgeCap(AgeCap), .WrHigh(WrHigh), .WrLow(WrLow),
    .RefUrgent(RefUrgent),
    `TPU_HBM_TIMING_PASS
  ) u_dut (
    .clk_i, .rst_ni,
    .rd_valid_i, .rd_ready_o(rd_ready), .rd_req_i,
    .wr_valid_i, .wr_ready_o(wr_ready), .wr_req_i(wr_req),
    .rdata_valid_o(rdata_valid), .rdata_o(), .fwd_valid_o(), .fwd_o(),
    .row_req_o(row_req), .row_cmd_o(row_cmd), .row_bank_o(row_bank), .row_row_o(row_row),
    .row_gnt_i,
    .col_req_o(col_req), .col_cmd_o(col_cmd), .col_bank_o(col_bank), .col_col_o(col_col),
    .col_gnt_i,
    .wdata_valid_o(wdata_valid), .wdata_o(), .wstrb_o(),
    .rdata_valid_i(1'b0), .rdata_i('0),
    .rq_count_o(), .wq_count_o(), .ref_debt_o(), .wr_mode_o()
  );

  logic init_q = 1'b1;
  always_ff @(posedge clk_i) init_q <= 1'b0;
  always_comb m_reset: assume (rst_ni == !init_q);

  // ---------------------------------------------------------------------------------------------
  // Environment: the port's requests, the arbiter's grants
  // ---------------------------------------------------------------------------------------------
  tpu_vr_check #(.W(RdReqW), .Assume(1)) u_rd (
    .clk_i, .rst_ni, .valid_i(rd_valid_i), .ready_i(rd_ready), .data_i(rd_req_i));
  tpu_vr_check #(.W(BankBits + RowBits + BlkBits + 4), .Assume(1)) u_wr (
    .clk_i, .rst_ni, .valid_i(wr_valid_i), .ready_i(wr_ready),
    .data_i({wr_bank_i, wr_row_i, wr_blk_i, wr_any_i, wr_full_i}));

  logic row_fire, col_fire, act_busy_q;
  assign row_fire = row_req && row_gnt_i;
  assign col_fire = col_req && col_gnt_i;
  always_ff @(posedge clk_i) act_busy_q <= rst_ni && row_fire && row_cmd == tpu_pkg::HbmAct;

  always_comb begin
    if (rst_ni) begin
      m_read_has_beats: assume (!rd_valid_i || rd_req.beats != 2'b00);
      m_row_gnt_asked: assume (!row_gnt_i || row_req);
      m_col_gnt_asked: assume (!col_gnt_i || col_req);
      m_act_two_cycles: assume (!(act_busy_q && row_gnt_i));
    end
  end

  // ---------------------------------------------------------------------------------------------
  // The checker's state: cycles since each event (Sat: never, or longer than any rule), banks
  // ---------------------------------------------------------------------------------------------
  function automatic logic [SW-1:0] inc(logic [SW-1:0] s);
    inc = (s == Sat) ? s : s + 1'b1;
  endfunction
  function automatic logic lt(logic [SW-1:0] s, int unsigned t);  // s cycles is short of t
    lt = 32'(s) < t;
  endfunction

  logic [Banks-1:0]           open_q, apend_q;          // open; auto-precharge not yet started
  logic [SW-1:0]              aleft_q[Banks];           // cycles until it starts
  logic [SW-1:0]              s_act_q[Banks], s_pre_q[Banks], s_rd_q[Banks], s_wr_q[Banks];
  logic [SW-1:0]              s_refpb_q[Banks];
  logic [SW-1:0]              s_col_g_q[Groups], s_wr_g_q[Groups];
  logic [SW-1:0]              s_rd_any_q, s_refab_q;
  logic [SW-1:0]              s_faw_q[4];               // the last four ACTs, newest first
  logic [TCwl-1:0]            wd_pipe_q;                // WR/WRA n cycles ago
  logic [TCl-1:0]             rd_pipe_q;                // RD/RDA n cycles ago

  logic              is_act, is_pre, is_prea, is_refab, is_refpb, is_rd, is_wr, is_ap;
  logic [BgBits-1:0] rg, cg;
  assign is_act   = row_fire && row_cmd == tpu_pkg::HbmAct;
  assign is_pre   = row_fire && row_cmd == tpu_pkg::HbmPre;
  assign is_prea  = row_fire && row_cmd == tpu_pkg::HbmPreA;
  assign is_refab = row_fire && row_cmd == tpu_pkg::HbmRefAb;
  assign is_refpb = row_fire && row_cmd == tpu_pkg::HbmRefPb;
  assign is_rd    = col_fire && (col_cmd == tpu_pkg::HbmRd || col_cmd == tpu_pkg::HbmRda);
  assign is_wr    = col_fire && (col_cmd == tpu_pkg::HbmWr || col_cmd == tpu_pkg::HbmWra);
  assign is_ap    = col_fire && (col_cmd == tpu_pkg::HbmRda || col_cmd == tpu_pkg::HbmWra);
  assign rg       = row_bank[BankBits-1:BaBits];
  assign cg       = col_bank[BankBits-1:BaBits];

  // ---------------------------------------------------------------------------------------------
  // The rules, at each granted command (violation flags named after the device model's rules)
  // ---------------------------------------------------------------------------------------------
  logic v_row_cmd, v_act_state, v_act_rc, v_act_rp, v_act_rrdl, v_act_rrds, v_act_faw, v_act_rfc;
  logic v_act_rfcsb, v_act_rrefd, v_pre_ras, v_pre_rtp, v_pre_wr, v_refab_state, v_refab_rp;
  logic v_refab_rfcsb, v_refab_rfc, v_refpb_state, v_refpb_rp, v_refpb_rc, v_refpb_rrds;
  logic v_refpb_rfc, v_refpb_rfcsb, v_refpb_rrefd, v_col_state, v_col_rcd, v_col_ccdl;
  logic v_col_ccds, v_rd_wtrl, v_rd_wtrs, v_wr_rtw, v_same_cycle;
  logic [Banks-1:0] closes;  // banks a PRE or PREA of this cycle closes

  always_comb begin
    v_row_cmd = row_fire && row_cmd > tpu_pkg::HbmRefPb;
    v_act_state = 1'b0; v_act_rc = 1'b0; v_act_rp = 1'b0; v_act_rrdl = 1'b0; v_act_rrds = 1'b0;
    v_act_faw = 1'b0; v_act_rfc = 1'b0; v_act_rfcsb = 1'b0; v_act_rrefd = 1'b0;
    v_pre_ras = 1'b0; v_pre_rtp = 1'b0; v_pre_wr = 1'b0;
    v_refab_state = 1'b0; v_refab_rp = 1'b0; v_refab_rfcsb = 1'b0; v_refab_rfc = 1'b0;
    v_refpb_state = 1'b0; v_refpb_rp = 1'b0; v_refpb_rc = 1'b0; v_refpb_rrds = 1'b0;
    v_refpb_rfc = 1'b0; v_refpb_rfcsb = 1'b0; v_refpb_rrefd = 1'b0;
    v_col_state = 1'b0; v_col_rcd = 1'b0; v_col_ccdl = 1'b0; v_col_ccds = 1'b0;
    v_rd_wtrl = 1'b0; v_rd_wtrs = 1'b0; v_wr_rtw = 1'b0; v_same_cycle = 1'b0;
    closes = '0;
    if (is_act) begin
      v_act_state = open_q[row_bank];
      v_act_rc    = lt(s_act_q[row_bank], TRc);
      v_act_rp    = lt(s_pre_q[row_bank], TRp) || apend_q[row_bank];
      v_act_faw   = lt(s_faw_q[3], TFaw);
      v_act_rfc   = lt(s_refab_q, TRfc);
      v_act_rfcsb = lt(s_refpb_q[row_bank], TRfcSb);
      for (int unsigned k = 0; k < Banks; k++) begin
        if (BankBits'(k) != row_bank) begin
          if (BgBits'(k >> BaBits) == rg) v_act_rrdl |= lt(s_act_q[k], TRrdL);
          else                            v_act_rrds |= lt(s_act_q[k], TRrdS);
          v_act_rrefd |= lt(s_refpb_q[k], TRrefd);
        end
      end
    end
    if (is_pre) closes[row_bank] = open_q[row_bank];  // PRE to a closed bank: a legal no-op
    if (is_prea) closes = open_q;
    for (int unsigned k = 0; k < Banks; k++) begin
      if (closes[k]) begin
        v_pre_ras |= lt(s_act_q[k], TRas);
        v_pre_rtp |= lt(s_rd_q[k], TRtp);
        v_pre_wr  |= lt(s_wr_q[k], WrEnd + TWr);
      end
    end
    if (is_refab) begin
      v_refab_state = open_q != '0;
      v_refab_rfc   = lt(s_refab_q, TRfc);
      for (int unsigned k = 0; k < Banks; k++) begin
        v_refab_rp    |= lt(s_pre_q[k], TRp) || apend_q[k];
        v_refab_rfcsb |= lt(s_refpb_q[k], TRfcSb);
      end
    end
    if (is_refpb) begin
      v_refpb_state = open_q[row_bank];
      v_refpb_rp    = lt(s_pre_q[row_bank], TRp) || apend_q[row_bank];
      v_refpb_rc    = lt(s_act_q[row_bank], TRc);
      v_refpb_rfc   = lt(s_refab_q, TRfc);
      v_refpb_rfcsb = lt(s_refpb_q[row_bank], TRfcSb);
      for (int unsigned k = 0; k < Banks; k++) begin
        if (BankBits'(k) != row_bank) begin
          v_refpb_rrds  |= lt(s_act_q[k], TRrdS);
          v_refpb_rrefd |= lt(s_refpb_q[k], TRrefd);
        end
      end
    end
    if (col_fire) begin
      v_col_state = !open_q[col_bank];
      v_col_rcd   = lt(s_act_q[col_bank], is_rd ? TRcdRd : TRcdWr);
      v_col_ccdl  = lt(s_col_g_q[cg], TCcdL);
      for (int unsigned g = 0; g < Groups; g++) begin
        if (BgBits'(g) != cg) begin
          v_col_ccds |= lt(s_col_g_q[g], TCcdS);
          if (is_rd) v_rd_wtrs |= lt(s_wr_g_q[g], WrEnd + TWtrS);
        end
      end
      if (is_rd) v_rd_wtrl = lt(s_wr_g_q[cg], WrEnd + TWtrL);
      else       v_wr_rtw  = lt(s_rd_any_q, TRtw);
      // A row command of the same cycle that touches the bank breaks a rule when the device
      // takes the row command first (as tb/ passes them to the device model).
      v_same_cycle = row_fire && (row_cmd == tpu_pkg::HbmPreA || row_cmd == tpu_pkg::HbmRefAb ||
                                  row_bank == col_bank);
    end
  end

  always_comb begin
    if (rst_ni) begin
      a_row_command: assert (!v_row_cmd);
      a_act_state: assert (!v_act_state);
      a_act_nRC: assert (!v_act_rc);
      a_act_nRP: assert (!v_act_rp);
      a_act_nRRDL: assert (!v_act_rrdl);
      a_act_nRRDS: assert (!v_act_rrds);
      a_act_nFAW: assert (!v_act_faw);
      a_act_nRFC: assert (!v_act_rfc);
      a_act_nRFCsb: assert (!v_act_rfcsb);
      a_act_nRREFD: assert (!v_act_rrefd);
      a_pre_nRAS: assert (!v_pre_ras);
      a_pre_nRTP: assert (!v_pre_rtp);
      a_pre_nWR: assert (!v_pre_wr);
      a_refab_state: assert (!v_refab_state);
      a_refab_nRP: assert (!v_refab_rp);
      a_refab_nRFCsb: assert (!v_refab_rfcsb);
      a_refab_nRFC: assert (!v_refab_rfc);
      a_refpb_state: assert (!v_refpb_state);
      a_refpb_nRP: assert (!v_refpb_rp);
      a_refpb_nRC: assert (!v_refpb_rc);
      a_refpb_nRRDS: assert (!v_refpb_rrds);
      a_refpb_nRFC: assert (!v_refpb_rfc);
      a_refpb_nRFCsb: assert (!v_refpb_rfcsb);
      a_refpb_nRREFD: assert (!v_refpb_rrefd);
      a_col_state: assert (!v_col_state);
      a_col_nRCD: assert (!v_col_rcd);
      a_col_nCCDL: assert (!v_col_ccdl);
      a_col_nCCDS: assert (!v_col_ccds);
      a_rd_nWTRL: assert (!v_rd_wtrl);
      a_rd_nWTRS: assert (!v_rd_wtrs);
      a_wr_nRTW: assert (!v_wr_rtw);
      a_same_cycle: assert (!v_same_cycle);
      a_write_data_at_wl: assert (wdata_valid == wd_pipe_q[TCwl-1]);
      a_read_data_at_rl: assert (rdata_valid == rd_pipe_q[TCl-1]);
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Next state: an event sets its counter to 1 for the next cycle; the rest count up
  // ---------------------------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      open_q     <= '0;
      apend_q    <= '0;
      for (int unsigned k = 0; k < Banks; k++) begin
        aleft_q[k]   <= '0;
        s_act_q[k]   <= Sat;
        s_pre_q[k]   <= Sat;
        s_rd_q[k]    <= Sat;
        s_wr_q[k]    <= Sat;
        s_refpb_q[k] <= Sat;
      end
      for (int unsigned g = 0; g < Groups; g++) begin
        s_col_g_q[g] <= Sat;
        s_wr_g_q[g]  <= Sat;
      end
      for (int unsigned k = 0; k < 4; k++) s_faw_q[k] <= Sat;
      s_rd_any_q <= Sat;
      s_refab_q  <= Sat;
      wd_pipe_q  <= '0;
      rd_pipe_q  <= '0;
    end else begin
      for (int unsigned k = 0; k < Banks; k++) begin
        s_act_q[k]   <= (is_act && row_bank == BankBits'(k)) ? SW'(1) : inc(s_act_q[k]);
        s_refpb_q[k] <= (is_refpb && row_bank == BankBits'(k)) ? SW'(1) : inc(s_refpb_q[k]);
        s_rd_q[k]    <= (is_rd && col_bank == BankBits'(k)) ? SW'(1) : inc(s_rd_q[k]);
        s_wr_q[k]    <= (is_wr && col_bank == BankBits'(k)) ? SW'(1) : inc(s_wr_q[k]);
        // A precharge starts: PRE/PREA of an open bank, or an auto-precharge's time comes.
        s_pre_q[k]   <= (closes[k] || (apend_q[k] && aleft_q[k] == '0)) ? SW'(1)
                                                                         : inc(s_pre_q[k]);
        if (apend_q[k]) begin
          if (aleft_q[k] == '0) apend_q[k] <= 1'b0;
          else                  aleft_q[k] <= aleft_q[k] - 1'b1;
        end
        if (is_act && row_bank == BankBits'(k)) open_q[k] <= 1'b1;
        if (closes[k]) open_q[k] <= 1'b0;
        if (is_ap && col_bank == BankBits'(k) && open_q[k]) begin
          // RDA: the precharge starts at max(ACT + nRAS, RD + nRTP); WRA: at max(ACT + nRAS,
          // end of write data + nWR). aleft counts from the next cycle.
          int unsigned ras_left, after;
          ras_left = lt(s_act_q[k], TRas) ? TRas - 32'(s_act_q[k]) : 0;
          after    = is_rd ? TRtp : WrEnd + TWr;
          open_q[k]  <= 1'b0;
          apend_q[k] <= 1'b1;
          aleft_q[k] <= SW'(((ras_left > after) ? ras_left : after) - 1);
        end
      end
      for (int unsigned g = 0; g < Groups; g++) begin
        s_col_g_q[g] <= (col_fire && cg == BgBits'(g)) ? SW'(1) : inc(s_col_g_q[g]);
        s_wr_g_q[g]  <= (is_wr && cg == BgBits'(g)) ? SW'(1) : inc(s_wr_g_q[g]);
      end
      s_rd_any_q <= is_rd ? SW'(1) : inc(s_rd_any_q);
      s_refab_q  <= is_refab ? SW'(1) : inc(s_refab_q);
      for (int unsigned k = 0; k < 4; k++) begin
        if (!is_act)     s_faw_q[k] <= inc(s_faw_q[k]);
        else if (k == 0) s_faw_q[k] <= SW'(1);
        else             s_faw_q[k] <= inc(s_faw_q[k-1]);
      end
      wd_pipe_q <= (wd_pipe_q << 1) | TCwl'(is_wr);
      rd_pipe_q <= (rd_pipe_q << 1) | TCl'(is_rd);
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Invariants (proven like every assertion above; they make the rules 1-inductive, so ABC's pdr
  // proves them for all depths): the controller's state read through hierarchical taps (wires
  // named `u_dut.<register>` with the hierconn attribute, which Yosys's flatten connects to the
  // register of that name; scripts/formal.py fails a check whose tap finds no register), and
  // each of its wait counters at least the wait the checker's cycles-since counter still owes.
  // The taps are written for this configuration's sizes (4 banks, 2 groups, nCWL 2, nCL 3).
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned CntW = 10;  // the controller's counters
  if (Banks != 4 || Groups != 2 || TCwl != 2 || TCl != 3) begin : gen_bad_taps
    $error("hbm_pc_formal: the invariants' taps are written for 4 banks, 2 groups, nCWL 2, nCL 3");
  end
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_act_q[0] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_act_q[1] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_act_q[2] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_act_q[3] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_rd_q[0] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_rd_q[1] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_rd_q[2] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_rd_q[3] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_wr_q[0] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_wr_q[1] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_wr_q[2] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_wr_q[3] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_pre_q[0] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_pre_q[1] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_pre_q[2] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_pre_q[3] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_faw_q[0] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_faw_q[1] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_faw_q[2] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_faw_q[3] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_act_bg_q[0] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_act_bg_q[1] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_col_bg_q[0] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_col_bg_q[1] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_rdw_bg_q[0] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_rdw_bg_q[1] ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_act_any_q ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_col_any_q ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_rdw_any_q ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_wrr_any_q ;
  (* hierconn *) logic [CntW-1:0] \u_dut.u_banks.c_ref_q ;
  (* hierconn *) logic [Banks-1:0] \u_dut.u_banks.open_q ;
  (* hierconn *) logic [1-1:0] \u_dut.wd_v_q[0] ;
  (* hierconn *) logic [1-1:0] \u_dut.wd_v_q[1] ;
  (* hierconn *) logic [1-1:0] \u_dut.rd_v_q[0] ;
  (* hierconn *) logic [1-1:0] \u_dut.rd_v_q[1] ;
  (* hierconn *) logic [1-1:0] \u_dut.rd_v_q[2] ;
  logic [CntW-1:0] t_act[4], t_rd[4], t_wr[4], t_pre[4], t_faw[4];
  logic [CntW-1:0] t_act_bg[2], t_col_bg[2], t_rdw_bg[2];
  assign t_act[0] = \u_dut.u_banks.c_act_q[0] ;
  assign t_act[1] = \u_dut.u_banks.c_act_q[1] ;
  assign t_act[2] = \u_dut.u_banks.c_act_q[2] ;
  assign t_act[3] = \u_dut.u_banks.c_act_q[3] ;
  assign t_rd[0] = \u_dut.u_banks.c_rd_q[0] ;
  assign t_rd[1] = \u_dut.u_banks.c_rd_q[1] ;
  assign t_rd[2] = \u_dut.u_banks.c_rd_q[2] ;
  assign t_rd[3] = \u_dut.u_banks.c_rd_q[3] ;
  assign t_wr[0] = \u_dut.u_banks.c_wr_q[0] ;
  assign t_wr[1] = \u_dut.u_banks.c_wr_q[1] ;
  assign t_wr[2] = \u_dut.u_banks.c_wr_q[2] ;
  assign t_wr[3] = \u_dut.u_banks.c_wr_q[3] ;
  assign t_pre[0] = \u_dut.u_banks.c_pre_q[0] ;
  assign t_pre[1] = \u_dut.u_banks.c_pre_q[1] ;
  assign t_pre[2] = \u_dut.u_banks.c_pre_q[2] ;
  assign t_pre[3] = \u_dut.u_banks.c_pre_q[3] ;
  assign t_faw[0] = \u_dut.u_banks.c_faw_q[0] ;
  assign t_faw[1] = \u_dut.u_banks.c_faw_q[1] ;
  assign t_faw[2] = \u_dut.u_banks.c_faw_q[2] ;
  assign t_faw[3] = \u_dut.u_banks.c_faw_q[3] ;
  assign t_act_bg[0] = \u_dut.u_banks.c_act_bg_q[0] ;
  assign t_act_bg[1] = \u_dut.u_banks.c_act_bg_q[1] ;
  assign t_col_bg[0] = \u_dut.u_banks.c_col_bg_q[0] ;
  assign t_col_bg[1] = \u_dut.u_banks.c_col_bg_q[1] ;
  assign t_rdw_bg[0] = \u_dut.u_banks.c_rdw_bg_q[0] ;
  assign t_rdw_bg[1] = \u_dut.u_banks.c_rdw_bg_q[1] ;

  // The wait counter c still owes at least t - s cycles when the event was s < t cycles ago.
  function automatic logic owes(logic [CntW-1:0] c, logic [SW-1:0] s, int unsigned t);
    owes = !lt(s, t) || 32'(c) + 32'(s) >= t;
  endfunction

  // Each invariant's violation, over every bank, group or window slot (Yosys 0.23 takes no
  // labelled assertion inside a loop).
  logic n_apend_closed, n_apend_act, n_act_rc, n_act_rp, n_act_rfcsb, n_act_rfc, n_act_rrefd;
  logic n_pre_ras, n_pre_rtp, n_pre_wr, n_rd_rcd, n_wr_rcd, n_act_rrdl, n_act_rrds, n_ref_rrefd;
  logic n_col_ccdl, n_col_ccds, n_rd_wtrl, n_rd_wtrs, n_faw, n_faw_order;
  always_comb begin
    n_apend_closed = 1'b0; n_apend_act = 1'b0; n_act_rc = 1'b0; n_act_rp = 1'b0;
    n_act_rfcsb = 1'b0; n_act_rfc = 1'b0; n_act_rrefd = 1'b0; n_pre_ras = 1'b0; n_pre_rtp = 1'b0;
    n_pre_wr = 1'b0; n_rd_rcd = 1'b0; n_wr_rcd = 1'b0; n_act_rrdl = 1'b0; n_act_rrds = 1'b0;
    n_ref_rrefd = 1'b0; n_col_ccdl = 1'b0; n_col_ccds = 1'b0; n_rd_wtrl = 1'b0; n_rd_wtrs = 1'b0;
    n_faw = 1'b0; n_faw_order = 1'b0;
    for (int unsigned k = 0; k < Banks; k++) begin
      n_apend_closed |= apend_q[k] && open_q[k];
      // After an auto-precharge: its start (aleft) and then nRP.
      n_apend_act    |= apend_q[k] && 32'(t_act[k]) < 32'(aleft_q[k]) + TRp;
      n_act_rc       |= !owes(t_act[k], s_act_q[k], TRc);
      n_act_rp       |= !owes(t_act[k], s_pre_q[k], TRp);
      n_act_rfcsb    |= !owes(t_act[k], s_refpb_q[k], TRfcSb);
      n_act_rfc      |= !owes(t_act[k], s_refab_q, TRfc);
      n_pre_ras      |= !owes(t_pre[k], s_act_q[k], TRas);
      n_pre_rtp      |= !owes(t_pre[k], s_rd_q[k], TRtp);
      n_pre_wr       |= !owes(t_pre[k], s_wr_q[k], WrEnd + TWr);
      n_rd_rcd       |= !owes(t_rd[k], s_act_q[k], TRcdRd);
      n_wr_rcd       |= !owes(t_wr[k], s_act_q[k], TRcdWr);
      n_act_rrdl     |= !owes(t_act_bg[k >> BaBits], s_act_q[k], TRrdL);
      n_act_rrds     |= !owes(\u_dut.u_banks.c_act_any_q , s_act_q[k], TRrdS);
      n_ref_rrefd    |= !owes(\u_dut.u_banks.c_ref_q , s_refpb_q[k], TRrefd);
      for (int unsigned b = 0; b < Banks; b++) begin  // a REFpb of k, an ACT of b
        n_act_rrefd  |= !owes(t_act[b], s_refpb_q[k], TRrefd);
      end
    end
    for (int unsigned g = 0; g < Groups; g++) begin
      n_col_ccdl |= !owes(t_col_bg[g], s_col_g_q[g], TCcdL);
      n_col_ccds |= !owes(\u_dut.u_banks.c_col_any_q , s_col_g_q[g], TCcdS);
      n_rd_wtrl  |= !owes(t_rdw_bg[g], s_wr_g_q[g], WrEnd + TWtrL);
      n_rd_wtrs  |= !owes(\u_dut.u_banks.c_rdw_any_q , s_wr_g_q[g], WrEnd + TWtrS);
    end
    // nFAW: the j+1 newest ACTs (j < 4) of the last nFAW cycles each hold a window counter.
    for (int unsigned j = 0; j < 4; j++) begin
      int unsigned held;
      held = 0;
      for (int unsigned k = 0; k < 4; k++) held += 32'(32'(t_faw[k]) + 32'(s_faw_q[j]) >= TFaw);
      n_faw |= lt(s_faw_q[j], TFaw) && held < j + 1;
      if (j < 3) n_faw_order |= s_faw_q[j] > s_faw_q[j + 1];
    end
  end

  always_comb begin
    if (rst_ni) begin
      i_open: assert (open_q == \u_dut.u_banks.open_q );
      i_write_pipe: assert (wd_pipe_q == {\u_dut.wd_v_q[1] , \u_dut.wd_v_q[0] });
      i_read_pipe: assert (rd_pipe_q == {\u_dut.rd_v_q[2] , \u_dut.rd_v_q[1] , \u_dut.rd_v_q[0] });
      i_ref_rfc: assert (owes(\u_dut.u_banks.c_ref_q , s_refab_q, TRfc));
      i_rtw: assert (owes(\u_dut.u_banks.c_wrr_any_q , s_rd_any_q, TRtw));
      i_apend_closed: assert (!n_apend_closed);
      i_apend_act: assert (!n_apend_act);
      i_act_rc: assert (!n_act_rc);
      i_act_rp: assert (!n_act_rp);
      i_act_rfcsb: assert (!n_act_rfcsb);
      i_act_rfc: assert (!n_act_rfc);
      i_act_rrefd: assert (!n_act_rrefd);
      i_pre_ras: assert (!n_pre_ras);
      i_pre_rtp: assert (!n_pre_rtp);
      i_pre_wr: assert (!n_pre_wr);
      i_rd_rcd: assert (!n_rd_rcd);
      i_wr_rcd: assert (!n_wr_rcd);
      i_act_rrdl: assert (!n_act_rrdl);
      i_act_rrds: assert (!n_act_rrds);
      i_ref_rrefd: assert (!n_ref_rrefd);
      i_col_ccdl: assert (!n_col_ccdl);
      i_col_ccds: assert (!n_col_ccds);
      i_rd_wtrl: assert (!n_rd_wtrl);
      i_rd_wtrs: assert (!n_rd_wtrs);
      i_faw: assert (!n_faw);
      i_faw_order: assert (!n_faw_order);
    end
  end
endmodule
