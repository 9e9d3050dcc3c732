// SPDX-License-Identifier: Apache-2.0
// Refresh of one HBM2 pseudo-channel, for its controller (tpu_hbm_pc_ctrl): the refresh debt
// grows by one per refresh due (every nREFI all-bank, or 16 per nREFI per-bank) and shrinks by one
// per REFab or REFpb granted. With debt, refresh wants the banks (all of them, or the next bank
// in turn per-bank): when the queues are empty, or per-bank at once, or once the debt reaches
// RefUrgent, when it also stops the column commands to those banks.
module tpu_hbm_refresh #(
  parameter int unsigned BgBits         = 2,     // bank groups = 2^BgBits
  parameter int unsigned BaBits         = 2,     // banks per group = 2^BaBits
  parameter int unsigned PerBankRefresh = 0,     // 0: REFab every nREFI; 1: 16 REFpb per nREFI
  parameter int unsigned RefUrgent      = 2,     // debt at which refresh preempts traffic
  parameter int unsigned TRefi          = 3900,  // nREFI, cycles
  localparam int unsigned BankBits = BgBits + BaBits,
  localparam int unsigned Banks    = 1 << BankBits
) (
  input  logic                              clk_i,
  input  logic                              rst_ni,
  input  logic                              row_fire_i,  // a row command granted ...
  input  logic [tpu_pkg::HbmRowCmdBits-1:0] row_cmd_i,   // ... this one
  input  logic                              idle_i,      // no request queued
  output logic                              want_o,      // refresh wants its bank(s)
  output logic                              urgent_o,    // ... and preempts traffic
  output logic [BankBits-1:0]               bank_o,      // the next bank to refresh (per-bank)
  output logic [Banks-1:0]                  act_block_o, // banks that may not be activated
  output logic [Banks-1:0]                  col_block_o, // banks that take no column command
  output logic [3:0]                        debt_o
);

  if (RefUrgent < 1 || RefUrgent > 6) begin : gen_bad_urgent
    $error("tpu_hbm_refresh: RefUrgent must be 1..6 so the refresh debt stays below 8 (got %0d)",
           RefUrgent);
  end

  // Refresh due: per PC every nREFI (all-bank), or 16 per nREFI (per-bank), exactly: an
  // accumulator adds 1 (or Banks) per cycle and a refresh falls due each time it passes nREFI.
  // (nREFIsb = nREFI / 16 rounded would drift: 16 x 243 = 3888 < 3900.)
  localparam int unsigned RefAdd  = (PerBankRefresh != 0) ? Banks : 1;
  localparam int unsigned RefIntW = $clog2(TRefi + RefAdd + 1);

  logic [RefIntW-1:0]  tick_q, tick_d, acc;
  logic [3:0]          debt_q, debt_d;
  logic [BankBits-1:0] bank_q, bank_d;
  logic                done, tick;

  assign want_o   = (debt_q >= 4'(RefUrgent)) ||
                    (debt_q != '0 && (PerBankRefresh != 0 || idle_i));
  assign urgent_o = debt_q >= 4'(RefUrgent);
  assign bank_o   = bank_q;
  assign debt_o   = debt_q;

  always_comb begin
    act_block_o = '0;
    col_block_o = '0;
    if (want_o) begin
      if (PerBankRefresh != 0) begin
        act_block_o[bank_q] = 1'b1;
        col_block_o[bank_q] = urgent_o;
      end else begin
        act_block_o = '1;
        col_block_o = '1;
      end
    end
  end

  always_comb begin
    done   = row_fire_i && (row_cmd_i == tpu_pkg::HbmRefAb || row_cmd_i == tpu_pkg::HbmRefPb);
    acc    = tick_q + RefIntW'(RefAdd);
    tick   = acc >= RefIntW'(TRefi);
    tick_d = tick ? acc - RefIntW'(TRefi) : acc;
    debt_d = debt_q + (tick ? 4'd1 : 4'd0) - (done ? 4'd1 : 4'd0);
    bank_d = done ? bank_q + 1'b1 : bank_q;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      tick_q <= '0;
      debt_q <= '0;
      bank_q <= '0;
    end else begin
      tick_q <= tick_d;
      debt_q <= debt_d;
      bank_q <= bank_d;
    end
  end

`ifndef SYNTHESIS
  // Refresh debt never reaches the spec's bound.
  a_refresh_debt: assert property (@(posedge clk_i) disable iff (!rst_ni) debt_q < 4'd8)
    else $error("tpu_hbm_refresh: refresh debt %0d", debt_q);
`endif

endmodule
