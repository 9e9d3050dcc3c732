// SPDX-License-Identifier: Apache-2.0
// HBM2 subsystem: Channels channels (a full stack is 8 = 16 pseudo-channels), one AXI4 port per
// pseudo-channel, so the user side carries the full peak (Channels x 32 bytes per cycle). Port
// p = 2*channel + pc; each port addresses its own pseudo-channel from 0 (the mapping of a global
// address onto ports is the master's: see tpu_hbm_interleave and the README).
`include "tpu_hbm_timing.svh"

module tpu_hbm_subsys #(
  parameter int unsigned Channels       = 8,
  parameter int unsigned Preset         = 0,
  parameter int unsigned AddrBits       = 32,
  parameter int unsigned IdBits         = 6,
  parameter int unsigned RowBits        = 16,
  parameter int unsigned ColBits        = 5,
  parameter int unsigned AddrMap        = 0,
  parameter int unsigned RdQDepth       = 16,  // per pseudo-channel (32 per channel)
  parameter int unsigned WrQDepth       = 16,
  parameter int unsigned RetDepth       = 64,
  parameter int unsigned PagePolicy      = 2,  // 0 open, 1 close, 2 adaptive
  parameter int unsigned PerBankRefresh = 0,
  parameter int unsigned AgeCap         = 1024,
  parameter int unsigned WrHigh         = 14,
  parameter int unsigned WrLow          = 2,
  parameter int unsigned RefUrgent      = 2,
  `TPU_HBM_TIMING_PARAMS(Preset),
  localparam int unsigned Ports = 2 * Channels
) (
  input  logic clk_i,
  input  logic rst_ni,
  // AXI4 slave ports, lanes flattened (port p in bits [p*W +: W]).
  input  logic [Ports-1:0] aw_valid_i,
  input  logic [Ports*IdBits-1:0] aw_id_i,
  input  logic [Ports*AddrBits-1:0] aw_addr_i,
  input  logic [Ports*8-1:0] aw_len_i,
  input  logic [Ports*3-1:0] aw_size_i,
  input  logic [Ports*2-1:0] aw_burst_i,
  input  logic [Ports-1:0] w_valid_i,
  input  logic [Ports*256-1:0] w_data_i,
  input  logic [Ports*32-1:0] w_strb_i,
  input  logic [Ports-1:0] w_last_i,
  input  logic [Ports-1:0] b_ready_i,
  input  logic [Ports-1:0] ar_valid_i,
  input  logic [Ports*IdBits-1:0] ar_id_i,
  input  logic [Ports*AddrBits-1:0] ar_addr_i,
  input  logic [Ports*8-1:0] ar_len_i,
  input  logic [Ports*3-1:0] ar_size_i,
  input  logic [Ports*2-1:0] ar_burst_i,
  input  logic [Ports-1:0] r_ready_i,
  output logic [Ports-1:0] aw_ready_o,
  output logic [Ports-1:0] w_ready_o,
  output logic [Ports-1:0] b_valid_o,
  output logic [Ports*IdBits-1:0] b_id_o,
  output logic [Ports*2-1:0] b_resp_o,
  output logic [Ports-1:0] ar_ready_o,
  output logic [Ports-1:0] r_valid_o,
  output logic [Ports*IdBits-1:0] r_id_o,
  output logic [Ports*256-1:0] r_data_o,
  output logic [Ports*2-1:0] r_resp_o,
  output logic [Ports-1:0] r_last_o,
  // Memory side, per channel (channel c in bits [c*W +: W]).
  output logic [Channels-1:0]                         row_valid_o,
  output logic [Channels*tpu_pkg::HbmRowCmdBits-1:0]  row_cmd_o,
  output logic [Channels-1:0]                         row_pc_o,
  output logic [Channels*4-1:0]                       row_bank_o,
  output logic [Channels*RowBits-1:0]                 row_row_o,
  output logic [Channels-1:0]                         col_valid_o,
  output logic [Channels*tpu_pkg::HbmColCmdBits-1:0]  col_cmd_o,
  output logic [Channels-1:0]                         col_pc_o,
  output logic [Channels*4-1:0]                       col_bank_o,
  output logic [Channels*ColBits-1:0]                 col_col_o,
  output logic [Ports-1:0]                            wdata_valid_o,
  output logic [Ports*256-1:0]                        wdata_o,
  output logic [Ports*32-1:0]                         wstrb_o,
  input  logic [Ports-1:0]                            rdata_valid_i,
  input  logic [Ports*256-1:0]                        rdata_i,
  // Status per pseudo-channel (see tpu_hbm_channel).
  output logic [Ports*8-1:0]                          rq_count_o,
  output logic [Ports*8-1:0]                          wq_count_o,
  output logic [Ports*4-1:0]                          ref_debt_o,
  output logic [Ports-1:0]                            wr_mode_o
);

  if (Channels < 1 || Channels > 16) begin : gen_bad_channels
    $error("tpu_hbm_subsys: Channels must be 1..16 (got %0d)", Channels);
  end

  for (genvar c = 0; c < Channels; c++) begin : gen_ch
    tpu_hbm_channel #(
      .Preset(Preset), .AddrBits(AddrBits), .IdBits(IdBits), .RowBits(RowBits),
      .ColBits(ColBits), .AddrMap(AddrMap), .RdQDepth(RdQDepth), .WrQDepth(WrQDepth),
      .RetDepth(RetDepth), .PagePolicy(PagePolicy), .PerBankRefresh(PerBankRefresh),
      .AgeCap(AgeCap), .WrHigh(WrHigh), .WrLow(WrLow), .RefUrgent(RefUrgent),
      `TPU_HBM_TIMING_PASS
    ) u_channel (
      .clk_i(clk_i), .rst_ni(rst_ni),
      .aw_valid_i(aw_valid_i[c*2 +: 2]),
      .aw_id_i(aw_id_i[c*2*IdBits +: 2*IdBits]),
      .aw_addr_i(aw_addr_i[c*2*AddrBits +: 2*AddrBits]),
      .aw_len_i(aw_len_i[c*2*8 +: 2*8]),
      .aw_size_i(aw_size_i[c*2*3 +: 2*3]),
      .aw_burst_i(aw_burst_i[c*2*2 +: 2*2]),
      .w_valid_i(w_valid_i[c*2 +: 2]),
      .w_data_i(w_data_i[c*2*256 +: 2*256]),
      .w_strb_i(w_strb_i[c*2*32 +: 2*32]),
      .w_last_i(w_last_i[c*2 +: 2]),
      .b_ready_i(b_ready_i[c*2 +: 2]),
      .ar_valid_i(ar_valid_i[c*2 +: 2]),
      .ar_id_i(ar_id_i[c*2*IdBits +: 2*IdBits]),
      .ar_addr_i(ar_addr_i[c*2*AddrBits +: 2*AddrBits]),
      .ar_len_i(ar_len_i[c*2*8 +: 2*8]),
      .ar_size_i(ar_size_i[c*2*3 +: 2*3]),
      .ar_burst_i(ar_burst_i[c*2*2 +: 2*2]),
      .r_ready_i(r_ready_i[c*2 +: 2]),
      .aw_ready_o(aw_ready_o[c*2 +: 2]),
      .w_ready_o(w_ready_o[c*2 +: 2]),
      .b_valid_o(b_valid_o[c*2 +: 2]),
      .b_id_o(b_id_o[c*2*IdBits +: 2*IdBits]),
      .b_resp_o(b_resp_o[c*2*2 +: 2*2]),
      .ar_ready_o(ar_ready_o[c*2 +: 2]),
      .r_valid_o(r_valid_o[c*2 +: 2]),
      .r_id_o(r_id_o[c*2*IdBits +: 2*IdBits]),
      .r_data_o(r_data_o[c*2*256 +: 2*256]),
      .r_resp_o(r_resp_o[c*2*2 +: 2*2]),
      .r_last_o(r_last_o[c*2 +: 2]),
      .row_valid_o(row_valid_o[c]),
      .row_cmd_o(row_cmd_o[c*tpu_pkg::HbmRowCmdBits +: tpu_pkg::HbmRowCmdBits]),
      .row_pc_o(row_pc_o[c]), .row_bank_o(row_bank_o[c*4 +: 4]),
      .row_row_o(row_row_o[c*RowBits +: RowBits]),
      .col_valid_o(col_valid_o[c]),
      .col_cmd_o(col_cmd_o[c*tpu_pkg::HbmColCmdBits +: tpu_pkg::HbmColCmdBits]),
      .col_pc_o(col_pc_o[c]), .col_bank_o(col_bank_o[c*4 +: 4]),
      .col_col_o(col_col_o[c*ColBits +: ColBits]),
      .wdata_valid_o(wdata_valid_o[c*2 +: 2]), .wdata_o(wdata_o[c*512 +: 512]),
      .wstrb_o(wstrb_o[c*64 +: 64]), .rdata_valid_i(rdata_valid_i[c*2 +: 2]),
      .rdata_i(rdata_i[c*512 +: 512]),
      .rq_count_o(rq_count_o[c*16 +: 16]), .wq_count_o(wq_count_o[c*16 +: 16]),
      .ref_debt_o(ref_debt_o[c*8 +: 8]), .wr_mode_o(wr_mode_o[c*2 +: 2])
    );
  end

endmodule
