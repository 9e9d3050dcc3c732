// SPDX-License-Identifier: Apache-2.0
// One HBM2 channel: two pseudo-channels, each an AXI4 port (tpu_hbm_axi_port) in front of its own
// controller (tpu_hbm_pc_ctrl), and the arbiter of the channel's shared command buses: per cycle
// at most one row command and one column command, an ACT holding the row bus for two cycles,
// round-robin between the pseudo-channels.
//
// Timing: Preset is a row of the presets' table (rtl/hbm/hbm_presets.json: 0 the spec's 2.0 Gb/s
// bin, 1 the 2.4 Gb/s bin, 2 the device checker's test preset); each value can also be set on
// its own.
`include "tpu_hbm_timing.svh"

`include "tpu_axi.svh"
`include "tpu_channels.svh"
module tpu_hbm_channel #(
  parameter int unsigned Preset         = 0,
  parameter int unsigned AddrBits       = 32,
  parameter int unsigned IdBits         = 6,
  `TPU_HBM_CONFIG_PARAMS,
  `TPU_HBM_TIMING_PARAMS(Preset),
  localparam int unsigned Pcs      = 2,
  localparam int unsigned BankBits = 4
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  // AXI4 slave ports, one per pseudo-channel, lanes flattened (PC p in bits [p*W +: W]).
  `TPU_AXI_SLAVE_PORTS(, Pcs, IdBits, AddrBits),
  // HBM2 channel: shared row and column command buses ...
  output logic                                row_valid_o,
  output logic [tpu_pkg::HbmRowCmdBits-1:0]   row_cmd_o,
  output logic                                row_pc_o,
  output logic [BankBits-1:0]                 row_bank_o,
  output logic [RowBits-1:0]                  row_row_o,
  output logic                                col_valid_o,
  output logic [tpu_pkg::HbmColCmdBits-1:0]   col_cmd_o,
  output logic                                col_pc_o,
  output logic [BankBits-1:0]                 col_bank_o,
  output logic [ColBits-1:0]                  col_col_o,
  // ... and one data bus per pseudo-channel (a burst as one 32-byte word).
  output logic [Pcs-1:0]             wdata_valid_o,
  output logic [Pcs*256-1:0]         wdata_o,
  output logic [Pcs*32-1:0]          wstrb_o,
  input  logic [Pcs-1:0]             rdata_valid_i,
  input  logic [Pcs*256-1:0]         rdata_i,
  // Status per pseudo-channel: queue occupancy, refresh debt, write-drain mode.
  output logic [Pcs*8-1:0]           rq_count_o,
  output logic [Pcs*8-1:0]           wq_count_o,
  output logic [Pcs*4-1:0]           ref_debt_o,
  output logic [Pcs-1:0]             wr_mode_o
);

  localparam int unsigned TagBits = $clog2(RetDepth);
  localparam int unsigned BlkBits = ColBits - 1;

  if (Preset >= tpu_hbm_pkg::NumPresets) begin : gen_bad_preset
    $error("tpu_hbm_channel: Preset %0d is not a row of rtl/hbm/hbm_presets.json (0 to %0d)",
           Preset, tpu_hbm_pkg::NumPresets - 1);
  end
  if (RdQDepth > 255 || WrQDepth > 255) begin : gen_bad_depth
    $error("tpu_hbm_channel: queue depths above 255 do not fit the status outputs");
  end

  logic [Pcs-1:0]                          row_req, row_gnt, col_req, col_gnt;
  logic [Pcs*tpu_pkg::HbmRowCmdBits-1:0]   row_cmd;
  logic [Pcs*BankBits-1:0]                 row_bank, col_bank;
  logic [Pcs*RowBits-1:0]                  row_row;
  logic [Pcs*tpu_pkg::HbmColCmdBits-1:0]   col_cmd;
  logic [Pcs*ColBits-1:0]                  col_col;

  for (genvar p = 0; p < Pcs; p++) begin : gen_pc
    logic rd_valid, rd_ready, wr_valid, wr_ready, rdata_valid, fwd_valid;
    logic [`TPU_HBM_RD_REQ_W(BankBits, RowBits, BlkBits, TagBits)-1:0] rd_req;
    logic [`TPU_HBM_WR_REQ_W(BankBits, RowBits, BlkBits)-1:0]          wr_req;
    logic [`TPU_HBM_RDATA_W(TagBits)-1:0]                              rdata;
    logic [`TPU_HBM_FWD_W(TagBits)-1:0]                                fwd;
    logic [$clog2(RdQDepth + 1)-1:0] rq_count;
    logic [$clog2(WrQDepth + 1)-1:0] wq_count;

    tpu_hbm_axi_port #(
      .AddrBits(AddrBits), .IdBits(IdBits), .RowBits(RowBits), .BgBits(2), .BaBits(2),
      .ColBits(ColBits), .AddrMap(AddrMap), .RetDepth(RetDepth)
    ) u_port (
      .clk_i(clk_i), .rst_ni(rst_ni),
      `TPU_AXI_SLAVE_LANES(, , p, 1, IdBits, AddrBits),
      .rd_valid_o(rd_valid), .rd_ready_i(rd_ready), .rd_req_o(rd_req),
      .wr_valid_o(wr_valid), .wr_ready_i(wr_ready), .wr_req_o(wr_req),
      .rdata_valid_i(rdata_valid), .rdata_i(rdata), .fwd_valid_i(fwd_valid), .fwd_i(fwd)
    );

    tpu_hbm_pc_ctrl #(
      .RowBits(RowBits), .BgBits(2), .BaBits(2), .ColBits(ColBits), .RdQDepth(RdQDepth),
      .WrQDepth(WrQDepth), .TagBits(TagBits), .PagePolicy(PagePolicy),
      .PerBankRefresh(PerBankRefresh), .AgeCap(AgeCap), .WrHigh(WrHigh), .WrLow(WrLow),
      .RefUrgent(RefUrgent),
      `TPU_HBM_TIMING_PASS
    ) u_ctrl (
      .clk_i(clk_i), .rst_ni(rst_ni),
      .rd_valid_i(rd_valid), .rd_ready_o(rd_ready), .rd_req_i(rd_req),
      .wr_valid_i(wr_valid), .wr_ready_o(wr_ready), .wr_req_i(wr_req),
      .rdata_valid_o(rdata_valid), .rdata_o(rdata), .fwd_valid_o(fwd_valid), .fwd_o(fwd),
      .row_req_o(row_req[p]),
      .row_cmd_o(row_cmd[p*tpu_pkg::HbmRowCmdBits +: tpu_pkg::HbmRowCmdBits]),
      .row_bank_o(row_bank[p*BankBits +: BankBits]), .row_row_o(row_row[p*RowBits +: RowBits]),
      .row_gnt_i(row_gnt[p]),
      .col_req_o(col_req[p]),
      .col_cmd_o(col_cmd[p*tpu_pkg::HbmColCmdBits +: tpu_pkg::HbmColCmdBits]),
      .col_bank_o(col_bank[p*BankBits +: BankBits]), .col_col_o(col_col[p*ColBits +: ColBits]),
      .col_gnt_i(col_gnt[p]),
      .wdata_valid_o(wdata_valid_o[p]), .wdata_o(wdata_o[p*256 +: 256]),
      .wstrb_o(wstrb_o[p*32 +: 32]), .rdata_valid_i(rdata_valid_i[p]),
      .rdata_i(rdata_i[p*256 +: 256]),
      .rq_count_o(rq_count), .wq_count_o(wq_count), .ref_debt_o(ref_debt_o[p*4 +: 4]),
      .wr_mode_o(wr_mode_o[p])
    );
    assign rq_count_o[p*8 +: 8] = 8'(rq_count);
    assign wq_count_o[p*8 +: 8] = 8'(wq_count);
  end

  // ----------------------------------------------------------------------------------------------
  // Command-bus arbiter: round robin per bus; an ACT blocks the row bus in the next cycle
  // ----------------------------------------------------------------------------------------------
  logic row_busy_q;          // the second cycle of an ACT
  logic row_pick, col_pick;  // the pseudo-channel granted
  logic row_any, col_any;    // some pseudo-channel requests

  tpu_rr_arbiter #(.N(2)) u_row_arb (
    .clk_i, .rst_ni, .req_i(row_req), .take_i(row_gnt != '0), .idx_o(row_pick),
    .valid_o(row_any)
  );
  tpu_rr_arbiter #(.N(2)) u_col_arb (
    .clk_i, .rst_ni, .req_i(col_req), .take_i(col_gnt != '0), .idx_o(col_pick),
    .valid_o(col_any)
  );

  always_comb begin
    row_gnt = '0;
    col_gnt = '0;
    if (!row_busy_q && row_any) row_gnt[row_pick] = 1'b1;
    if (col_any) col_gnt[col_pick] = 1'b1;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      row_busy_q <= 1'b0;
    end else begin
      row_busy_q <= row_gnt != '0 && row_cmd_o == tpu_pkg::HbmAct;
    end
  end

  assign row_valid_o = row_gnt != '0;
  assign row_pc_o    = row_pick;
  assign row_cmd_o   = row_cmd[row_pick*tpu_pkg::HbmRowCmdBits +: tpu_pkg::HbmRowCmdBits];
  assign row_bank_o  = row_bank[row_pick*BankBits +: BankBits];
  assign row_row_o   = row_row[row_pick*RowBits +: RowBits];
  assign col_valid_o = col_gnt != '0;
  assign col_pc_o    = col_pick;
  assign col_cmd_o   = col_cmd[col_pick*tpu_pkg::HbmColCmdBits +: tpu_pkg::HbmColCmdBits];
  assign col_bank_o  = col_bank[col_pick*BankBits +: BankBits];
  assign col_col_o   = col_col[col_pick*ColBits +: ColBits];

  // ----------------------------------------------------------------------------------------------
  // Assertions
  // ----------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // The command buses: one command per bus and cycle, only to a pseudo-channel that asked, and
  // nothing on the row bus in an ACT's second cycle.
  a_row_one_grant: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    $onehot0(row_gnt) && (row_gnt & ~row_req) == '0)
    else $error("tpu_hbm_channel: row-bus grants %b for requests %b", row_gnt, row_req);
  a_col_one_grant: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    $onehot0(col_gnt) && (col_gnt & ~col_req) == '0)
    else $error("tpu_hbm_channel: column-bus grants %b for requests %b", col_gnt, col_req);
  a_act_holds_row_bus: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                        row_valid_o && row_cmd_o == tpu_pkg::HbmAct
                                        |=> !row_valid_o)
    else $error("tpu_hbm_channel: a row command in the second cycle of an ACT");
`endif

endmodule
