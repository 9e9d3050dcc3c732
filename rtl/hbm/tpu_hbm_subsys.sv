// SPDX-License-Identifier: Apache-2.0
// HBM2 subsystem: Channels channels (a full stack is 8 = 16 pseudo-channels), one AXI4 port per
// pseudo-channel, so the user side carries the full peak (Channels x 32 bytes per cycle). Port
// p = 2*channel + pc; each port addresses its own pseudo-channel from 0 (the mapping of a global
// address onto ports is the master's: see tpu_hbm_interleave and the README).
`include "tpu_hbm_timing.svh"

`include "tpu_axi.svh"
`include "tpu_hbm_mem.svh"
module tpu_hbm_subsys #(
  parameter int unsigned Channels       = 8,
  parameter int unsigned Preset         = 0,
  parameter int unsigned AddrBits       = 32,
  parameter int unsigned IdBits         = 6,
  `TPU_HBM_CONFIG_PARAMS,
  `TPU_HBM_TIMING_PARAMS(Preset),
  localparam int unsigned Ports = 2 * Channels
) (
  input  logic clk_i,
  input  logic rst_ni,
  // AXI4 slave ports, lanes flattened (port p in bits [p*W +: W]).
  `TPU_AXI_SLAVE_PORTS(, Ports, IdBits, AddrBits),
  // Memory side, per channel (channel c in bits [c*W +: W]).
  `TPU_HBM_MEM_PORTS(Channels, RowBits, ColBits),
  // Status per pseudo-channel (see tpu_hbm_channel).
  `TPU_HBM_STATUS_PORTS(Channels)
);

  if (Channels < 1 || Channels > 16) begin : gen_bad_channels
    $error("tpu_hbm_subsys: Channels must be 1..16 (got %0d)", Channels);
  end

  for (genvar c = 0; c < Channels; c++) begin : gen_ch
    tpu_hbm_channel #(
      .Preset(Preset), .AddrBits(AddrBits), .IdBits(IdBits), `TPU_HBM_CONFIG_PASS,
      `TPU_HBM_TIMING_PASS
    ) u_channel (
      .clk_i(clk_i), .rst_ni(rst_ni),
      `TPU_AXI_SLAVE_LANES(, , c * 2, 2, IdBits, AddrBits),
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
