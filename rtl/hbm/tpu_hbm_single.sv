// SPDX-License-Identifier: Apache-2.0
// HBM2 subsystem behind one AXI4 port: tpu_hbm_interleave (global addresses, 64-byte blocks
// spread over the 2*Channels pseudo-channels) in front of tpu_hbm_subsys. The memory side and the
// status outputs are tpu_hbm_subsys's, unchanged.
//
// One port carries 32 bytes per cycle, a channel's peak: with Channels = 1 a sequential stream can
// keep both pseudo-channels busy; with more channels the single port is the limit (masters that
// need the stack's full bandwidth use tpu_hbm_subsys's ports directly).
module tpu_hbm_single #(
  parameter int unsigned Channels       = 8,
  parameter int unsigned Preset         = 0,
  parameter int unsigned AddrBits       = 40,  // global byte address width of the AXI port
  parameter int unsigned IdBits         = 6,
  parameter int unsigned RowBits        = 16,
  parameter int unsigned ColBits        = 5,
  parameter int unsigned AddrMap        = 0,
  parameter int unsigned RdQDepth       = 16,  // per pseudo-channel (as tpu_hbm_subsys)
  parameter int unsigned WrQDepth       = 16,
  parameter int unsigned RetDepth       = 64,
  parameter int unsigned PagePolicy     = 2,   // 0 open, 1 close, 2 adaptive
  parameter int unsigned PerBankRefresh = 0,
  parameter int unsigned AgeCap         = 1024,
  parameter int unsigned WrHigh         = 14,
  parameter int unsigned WrLow          = 2,
  parameter int unsigned RefUrgent      = 2,
  parameter int unsigned MaxOutstanding = 32,  // pieces in flight per direction (interleaver)
  parameter int unsigned WDepth         = 8,
  localparam int unsigned Ports        = 2 * Channels,
  localparam int unsigned PortAddrBits = 5 + ColBits + 4 + RowBits,  // bytes behind one port
  localparam int unsigned MAddrBits    = (PortAddrBits > 32) ? PortAddrBits : 32
) (
  input  logic                                        clk_i,
  input  logic                                        rst_ni,
  // AXI4 slave port (global addresses).
  input  logic                                        aw_valid_i,
  output logic                                        aw_ready_o,
  input  logic [IdBits-1:0]                           aw_id_i,
  input  logic [AddrBits-1:0]                         aw_addr_i,
  input  logic [7:0]                                  aw_len_i,
  input  logic [2:0]                                  aw_size_i,
  input  logic [1:0]                                  aw_burst_i,
  input  logic                                        w_valid_i,
  output logic                                        w_ready_o,
  input  logic [255:0]                                w_data_i,
  input  logic [31:0]                                 w_strb_i,
  input  logic                                        w_last_i,
  output logic                                        b_valid_o,
  input  logic                                        b_ready_i,
  output logic [IdBits-1:0]                           b_id_o,
  output logic [1:0]                                  b_resp_o,
  input  logic                                        ar_valid_i,
  output logic                                        ar_ready_o,
  input  logic [IdBits-1:0]                           ar_id_i,
  input  logic [AddrBits-1:0]                         ar_addr_i,
  input  logic [7:0]                                  ar_len_i,
  input  logic [2:0]                                  ar_size_i,
  input  logic [1:0]                                  ar_burst_i,
  output logic                                        r_valid_o,
  input  logic                                        r_ready_i,
  output logic [IdBits-1:0]                           r_id_o,
  output logic [255:0]                                r_data_o,
  output logic [1:0]                                  r_resp_o,
  output logic                                        r_last_o,
  // Memory side, per channel (channel c in bits [c*W +: W]); see tpu_hbm_subsys.
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

  // ----------------------------------------------------------------------------------------------
  // The per-port AXI4 buses between the interleaver and the subsystem
  // ----------------------------------------------------------------------------------------------
  logic [Ports-1:0]           aw_valid, aw_ready, w_valid, w_ready, w_last, b_valid, b_ready;
  logic [Ports-1:0]           ar_valid, ar_ready, r_valid, r_ready, r_last;
  logic [Ports*IdBits-1:0]    aw_id, b_id, ar_id, r_id;
  logic [Ports*MAddrBits-1:0] aw_addr, ar_addr;
  logic [Ports*8-1:0]         aw_len, ar_len;
  logic [Ports*3-1:0]         aw_size, ar_size;
  logic [Ports*2-1:0]         aw_burst, ar_burst, b_resp, r_resp;
  logic [Ports*256-1:0]       w_data, r_data;
  logic [Ports*32-1:0]        w_strb;

  tpu_hbm_interleave #(
    .Ports(Ports), .AddrBits(AddrBits), .PortAddrBits(PortAddrBits), .MAddrBits(MAddrBits),
    .IdBits(IdBits), .MaxOutstanding(MaxOutstanding), .WDepth(WDepth)
  ) u_interleave (
    .clk_i(clk_i), .rst_ni(rst_ni),
    .s_aw_valid_i(aw_valid_i), .s_aw_ready_o(aw_ready_o), .s_aw_id_i(aw_id_i),
    .s_aw_addr_i(aw_addr_i), .s_aw_len_i(aw_len_i), .s_aw_size_i(aw_size_i),
    .s_aw_burst_i(aw_burst_i),
    .s_w_valid_i(w_valid_i), .s_w_ready_o(w_ready_o), .s_w_data_i(w_data_i),
    .s_w_strb_i(w_strb_i), .s_w_last_i(w_last_i),
    .s_b_valid_o(b_valid_o), .s_b_ready_i(b_ready_i), .s_b_id_o(b_id_o), .s_b_resp_o(b_resp_o),
    .s_ar_valid_i(ar_valid_i), .s_ar_ready_o(ar_ready_o), .s_ar_id_i(ar_id_i),
    .s_ar_addr_i(ar_addr_i), .s_ar_len_i(ar_len_i), .s_ar_size_i(ar_size_i),
    .s_ar_burst_i(ar_burst_i),
    .s_r_valid_o(r_valid_o), .s_r_ready_i(r_ready_i), .s_r_id_o(r_id_o), .s_r_data_o(r_data_o),
    .s_r_resp_o(r_resp_o), .s_r_last_o(r_last_o),
    .m_aw_valid_o(aw_valid), .m_aw_ready_i(aw_ready), .m_aw_id_o(aw_id), .m_aw_addr_o(aw_addr),
    .m_aw_len_o(aw_len), .m_aw_size_o(aw_size), .m_aw_burst_o(aw_burst),
    .m_w_valid_o(w_valid), .m_w_ready_i(w_ready), .m_w_data_o(w_data), .m_w_strb_o(w_strb),
    .m_w_last_o(w_last),
    .m_b_valid_i(b_valid), .m_b_ready_o(b_ready), .m_b_id_i(b_id), .m_b_resp_i(b_resp),
    .m_ar_valid_o(ar_valid), .m_ar_ready_i(ar_ready), .m_ar_id_o(ar_id), .m_ar_addr_o(ar_addr),
    .m_ar_len_o(ar_len), .m_ar_size_o(ar_size), .m_ar_burst_o(ar_burst),
    .m_r_valid_i(r_valid), .m_r_ready_o(r_ready), .m_r_id_i(r_id), .m_r_data_i(r_data),
    .m_r_resp_i(r_resp), .m_r_last_i(r_last)
  );

  // ----------------------------------------------------------------------------------------------
  // The subsystem
  // ----------------------------------------------------------------------------------------------
  tpu_hbm_subsys #(
    .Channels(Channels), .Preset(Preset), .AddrBits(MAddrBits), .IdBits(IdBits),
    .RowBits(RowBits), .ColBits(ColBits), .AddrMap(AddrMap), .RdQDepth(RdQDepth),
    .WrQDepth(WrQDepth), .RetDepth(RetDepth), .PagePolicy(PagePolicy),
    .PerBankRefresh(PerBankRefresh), .AgeCap(AgeCap), .WrHigh(WrHigh), .WrLow(WrLow),
    .RefUrgent(RefUrgent)
  ) u_subsys (
    .clk_i(clk_i), .rst_ni(rst_ni),
    .aw_valid_i(aw_valid), .aw_id_i(aw_id), .aw_addr_i(aw_addr), .aw_len_i(aw_len),
    .aw_size_i(aw_size), .aw_burst_i(aw_burst),
    .w_valid_i(w_valid), .w_data_i(w_data), .w_strb_i(w_strb), .w_last_i(w_last),
    .b_ready_i(b_ready),
    .ar_valid_i(ar_valid), .ar_id_i(ar_id), .ar_addr_i(ar_addr), .ar_len_i(ar_len),
    .ar_size_i(ar_size), .ar_burst_i(ar_burst),
    .r_ready_i(r_ready),
    .aw_ready_o(aw_ready), .w_ready_o(w_ready),
    .b_valid_o(b_valid), .b_id_o(b_id), .b_resp_o(b_resp),
    .ar_ready_o(ar_ready),
    .r_valid_o(r_valid), .r_id_o(r_id), .r_data_o(r_data), .r_resp_o(r_resp), .r_last_o(r_last),
    .row_valid_o(row_valid_o), .row_cmd_o(row_cmd_o), .row_pc_o(row_pc_o),
    .row_bank_o(row_bank_o), .row_row_o(row_row_o),
    .col_valid_o(col_valid_o), .col_cmd_o(col_cmd_o), .col_pc_o(col_pc_o),
    .col_bank_o(col_bank_o), .col_col_o(col_col_o),
    .wdata_valid_o(wdata_valid_o), .wdata_o(wdata_o), .wstrb_o(wstrb_o),
    .rdata_valid_i(rdata_valid_i), .rdata_i(rdata_i),
    .rq_count_o(rq_count_o), .wq_count_o(wq_count_o), .ref_debt_o(ref_debt_o),
    .wr_mode_o(wr_mode_o)
  );

endmodule
