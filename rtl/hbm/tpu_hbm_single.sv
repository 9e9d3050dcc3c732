// SPDX-License-Identifier: Apache-2.0
// HBM2 subsystem behind one AXI4 port: tpu_hbm_interleave (global addresses, 64-byte blocks
// spread over the 2*Channels pseudo-channels) in front of tpu_hbm_subsys. The memory side and the
// status outputs are tpu_hbm_subsys's, unchanged.
//
// One port carries 32 bytes per cycle, a channel's peak: with Channels = 1 a sequential stream can
// keep both pseudo-channels busy; with more channels the single port is the limit (masters that
// need the stack's full bandwidth use tpu_hbm_subsys's ports directly).
`include "tpu_hbm_timing.svh"
`include "tpu_axi.svh"
`include "tpu_hbm_mem.svh"
module tpu_hbm_single #(
  parameter int unsigned Channels       = 8,
  parameter int unsigned Preset         = 0,
  parameter int unsigned AddrBits       = 40,  // global byte address width of the AXI port
  parameter int unsigned IdBits         = 6,
  `TPU_HBM_CONFIG_PARAMS,
  parameter int unsigned MaxOutstanding = 32,  // pieces in flight per direction (interleaver)
  parameter int unsigned WDepth         = 8,
  localparam int unsigned Ports        = 2 * Channels,
  localparam int unsigned PortAddrBits = 5 + ColBits + 4 + RowBits,  // bytes behind one port
  localparam int unsigned MAddrBits    = (PortAddrBits > 32) ? PortAddrBits : 32
) (
  input  logic                                        clk_i,
  input  logic                                        rst_ni,
  // AXI4 slave port (global addresses).
  `TPU_AXI_SLAVE_PORTS(, 1, IdBits, AddrBits),
  // Memory side, per channel (channel c in bits [c*W +: W]); see tpu_hbm_subsys.
  `TPU_HBM_MEM_PORTS(Channels, RowBits, ColBits),
  // Status per pseudo-channel (see tpu_hbm_channel).
  `TPU_HBM_STATUS_PORTS(Channels)
);

  // ----------------------------------------------------------------------------------------------
  // The per-port AXI4 buses between the interleaver and the subsystem
  // ----------------------------------------------------------------------------------------------
  `TPU_AXI_SIGNALS(, Ports, IdBits, MAddrBits)

  tpu_hbm_interleave #(
    .Ports(Ports), .AddrBits(AddrBits), .PortAddrBits(PortAddrBits), .MAddrBits(MAddrBits),
    .IdBits(IdBits), .MaxOutstanding(MaxOutstanding), .WDepth(WDepth)
  ) u_interleave (
    .clk_i(clk_i), .rst_ni(rst_ni),
    `TPU_AXI_SLAVE_PASS(s_, ),
    `TPU_AXI_MASTER_TO(m_, )
  );

  // ----------------------------------------------------------------------------------------------
  // The subsystem
  // ----------------------------------------------------------------------------------------------
  tpu_hbm_subsys #(
    .Channels(Channels), .Preset(Preset), .AddrBits(MAddrBits), .IdBits(IdBits),
    `TPU_HBM_CONFIG_PASS
  ) u_subsys (
    .clk_i(clk_i), .rst_ni(rst_ni),
    `TPU_AXI_SLAVE_TO(, ),
    `TPU_HBM_MEM_PASS,
    `TPU_HBM_STATUS_PASS
  );

endmodule
