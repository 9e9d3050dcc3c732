// SPDX-License-Identifier: Apache-2.0
// The banks of one HBM2 pseudo-channel as its controller (tpu_hbm_pc_ctrl) keeps them: which row
// each bank has open, and a wait counter for every timing rule of docs/hbm.md. Each counter holds
// the cycles still to wait before a command of its kind; it counts down to 0 and a granted command
// raises it to the wait that command imposes. From them, per bank, whether an ACT, RD, WR or PRE
// may issue in this cycle, and whether a PREA or a refresh may.
`include "tpu_hbm_timing.svh"

module tpu_hbm_bank_timers #(
  parameter int unsigned RowBits = 16,
  parameter int unsigned BgBits  = 2,   // bank groups = 2^BgBits
  parameter int unsigned BaBits  = 2,   // banks per group = 2^BaBits
  parameter int unsigned CntW    = 10,  // counter width (the controller checks the timing fits)
  parameter int unsigned Preset  = tpu_hbm_pkg::Preset2000,
  `TPU_HBM_TIMING_PARAMS(Preset),
  localparam int unsigned BankBits = BgBits + BaBits,
  localparam int unsigned Banks    = 1 << BankBits
) (
  input  logic                              clk_i,
  input  logic                              rst_ni,
  // The commands granted in this cycle.
  input  logic                              row_fire_i,
  input  logic [tpu_pkg::HbmRowCmdBits-1:0] row_cmd_i,
  input  logic [BankBits-1:0]               row_bank_i,
  input  logic [RowBits-1:0]                row_row_i,
  input  logic                              col_fire_i,
  input  logic                              col_write_i,  // WR or WRA (else RD or RDA)
  input  logic                              col_auto_i,   // with auto-precharge
  input  logic [BankBits-1:0]               col_bank_i,
  // Banks that refresh claims: no ACT (act_block_i), no column command (col_block_i).
  input  logic [Banks-1:0]                  act_block_i,
  input  logic [Banks-1:0]                  col_block_i,
  input  logic [BankBits-1:0]               ref_bank_i,   // the bank a REFpb would go to
  // The banks' state and what may issue now.
  output logic [Banks-1:0]                  open_o,
  output logic [Banks*RowBits-1:0]          open_row_o,  // bank b's row at [b*RowBits +: RowBits]
  output logic [Banks-1:0]                  act_ok_o,
  output logic [Banks-1:0]                  rd_ok_o,
  output logic [Banks-1:0]                  wr_ok_o,
  output logic [Banks-1:0]                  pre_ok_o,     // open, and nRAS/nRTP/nWR have passed
  output logic                              pre_all_ok_o, // PREA may close every open bank
  output logic                              ref_ab_ok_o,  // REFab may issue (all banks closed)
  output logic                              ref_pb_ok_o   // REFpb to ref_bank_i may issue
);

  localparam int unsigned Groups = 1 << BgBits;
  localparam int unsigned TRtw   = TCl + TBl + 2 - TCwl;

  logic [CntW-1:0] unused;  // the refresh interval is the refresh's (tpu_hbm_refresh)
  assign unused = CntW'(TRefi + TRefiSb);

  function automatic logic [CntW-1:0] cmax(logic [CntW-1:0] a, logic [CntW-1:0] b);
    cmax = (a > b) ? a : b;
  endfunction

  function automatic logic [CntW-1:0] dec(logic [CntW-1:0] c);
    dec = (c == '0) ? c : c - 1'b1;
  endfunction

  // The wait before an ACT after an auto-precharge: the precharge starts once `after` cycles and
  // the bank's pending precharge wait (nRAS) have passed, then nRP.
  function automatic logic [CntW-1:0] auto_pre_act(logic [CntW-1:0] pre_wait, int unsigned after);
    auto_pre_act = CntW'(((32'(pre_wait) > after) ? 32'(pre_wait) : after) + TRp - 1);
  endfunction

  logic [Banks-1:0]  open_q, open_d;
  logic [RowBits-1:0] open_row_q[Banks];
  logic [CntW-1:0]   c_act_q[Banks], c_rd_q[Banks], c_wr_q[Banks], c_pre_q[Banks];
  logic [CntW-1:0]   c_act_bg_q[Groups], c_col_bg_q[Groups], c_rdw_bg_q[Groups];
  logic [CntW-1:0]   c_act_any_q, c_col_any_q, c_rdw_any_q, c_wrr_any_q, c_ref_q;
  logic [CntW-1:0]   c_faw_q[4];
  logic [CntW-1:0]   c_act_d[Banks], c_rd_d[Banks], c_wr_d[Banks], c_pre_d[Banks];
  logic [CntW-1:0]   c_act_bg_d[Groups], c_col_bg_d[Groups], c_rdw_bg_d[Groups];
  logic [CntW-1:0]   c_faw_d[4];
  logic [CntW-1:0]   c_act_any_d, c_col_any_d, c_rdw_any_d, c_wrr_any_d, c_ref_d;
  logic [BgBits-1:0] row_group, col_group;
  logic              faw_loaded;

  // ----------------------------------------------------------------------------------------------
  // Readiness
  // ----------------------------------------------------------------------------------------------
  logic faw_ok;
  always_comb begin
    faw_ok = 1'b0;
    for (int unsigned k = 0; k < 4; k++) if (c_faw_q[k] == '0) faw_ok = 1'b1;
  end

  always_comb begin
    for (int unsigned b = 0; b < Banks; b++) begin
      logic [BgBits-1:0] g;
      g = BgBits'(b >> BaBits);
      act_ok_o[b] = !open_q[b] && c_act_q[b] == '0 && c_act_bg_q[g] == '0 &&
                    c_act_any_q == '0 && faw_ok && !act_block_i[b];
      rd_ok_o[b]  = open_q[b] && c_rd_q[b] == '0 && c_col_bg_q[g] == '0 && c_col_any_q == '0 &&
                    c_rdw_bg_q[g] == '0 && c_rdw_any_q == '0 && !col_block_i[b];
      wr_ok_o[b]  = open_q[b] && c_wr_q[b] == '0 && c_col_bg_q[g] == '0 && c_col_any_q == '0 &&
                    c_wrr_any_q == '0 && !col_block_i[b];
      pre_ok_o[b] = open_q[b] && c_pre_q[b] == '0;
    end
  end

  logic act_idle;  // no bank waits to be activated
  always_comb begin
    pre_all_ok_o = 1'b1;
    act_idle     = 1'b1;
    for (int unsigned b = 0; b < Banks; b++) begin
      if (open_q[b] && c_pre_q[b] != '0) pre_all_ok_o = 1'b0;
      if (c_act_q[b] != '0) act_idle = 1'b0;
    end
  end

  assign ref_ab_ok_o = act_idle && c_ref_q == '0;
  assign ref_pb_ok_o = c_act_q[ref_bank_i] == '0 && c_act_any_q == '0 && c_ref_q == '0;
  assign open_o     = open_q;
  for (genvar b = 0; b < Banks; b++) begin : gen_open_row
    assign open_row_o[b*RowBits +: RowBits] = open_row_q[b];
  end

  // ----------------------------------------------------------------------------------------------
  // The counters' next values
  // ----------------------------------------------------------------------------------------------
  always_comb begin
    row_group = row_bank_i[BankBits-1:BaBits];
    col_group = col_bank_i[BankBits-1:BaBits];
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

    if (row_fire_i) begin
      unique case (row_cmd_i)
        tpu_pkg::HbmAct: begin
          open_d[row_bank_i]    = 1'b1;
          c_act_d[row_bank_i]   = cmax(c_act_d[row_bank_i], CntW'(TRc - 1));
          c_rd_d[row_bank_i]    = cmax(c_rd_d[row_bank_i], CntW'(TRcdRd - 1));
          c_wr_d[row_bank_i]    = cmax(c_wr_d[row_bank_i], CntW'(TRcdWr - 1));
          c_pre_d[row_bank_i]   = cmax(c_pre_d[row_bank_i], CntW'(TRas - 1));
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
          open_d[row_bank_i]  = 1'b0;
          c_act_d[row_bank_i] = cmax(c_act_d[row_bank_i], CntW'(TRp - 1));
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
                              CntW'((BankBits'(b) == row_bank_i) ? TRfcSb - 1 : TRrefd - 1));
          end
          c_ref_d = cmax(c_ref_d, CntW'(TRrefd - 1));
        end
        /*verilator coverage_off*/ default: ; /*verilator coverage_on*/  // row commands are 0..4
      endcase
    end

    if (col_fire_i) begin
      c_col_any_d           = cmax(c_col_any_d, CntW'(TCcdS - 1));
      c_col_bg_d[col_group] = cmax(c_col_bg_d[col_group], CntW'(TCcdL - 1));
      if (!col_write_i) begin
        c_pre_d[col_bank_i] = cmax(c_pre_d[col_bank_i], CntW'(TRtp - 1));
        c_wrr_any_d         = cmax(c_wrr_any_d, CntW'(TRtw - 1));
        if (col_auto_i) begin
          open_d[col_bank_i]  = 1'b0;
          c_act_d[col_bank_i] = cmax(c_act_d[col_bank_i], auto_pre_act(c_pre_q[col_bank_i], TRtp));
        end
      end else begin
        c_pre_d[col_bank_i]   = cmax(c_pre_d[col_bank_i], CntW'(TCwl + TBl + TWr - 1));
        c_rdw_any_d           = cmax(c_rdw_any_d, CntW'(TCwl + TBl + TWtrS - 1));
        c_rdw_bg_d[col_group] = cmax(c_rdw_bg_d[col_group], CntW'(TCwl + TBl + TWtrL - 1));
        if (col_auto_i) begin
          open_d[col_bank_i]  = 1'b0;
          c_act_d[col_bank_i] = cmax(c_act_d[col_bank_i],
                                     auto_pre_act(c_pre_q[col_bank_i], TCwl + TBl + TWr));
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
      if (row_fire_i && row_cmd_i == tpu_pkg::HbmAct) open_row_q[row_bank_i] <= row_row_i;
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

endmodule
