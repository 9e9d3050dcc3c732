// SPDX-License-Identifier: Apache-2.0
// The memory side of the HBM subsystem, written once: per channel the shared row and column
// command buses, per pseudo-channel the data buses (a burst as one 32-byte word) and the
// controllers' status. Channel c's fields at [c*W +: W], pseudo-channel p's at [p*W +: W]
// (p = 2c, 2c+1). The names are the ones the C++ device models' harnesses drive and read.
//   module m (..., `TPU_HBM_MEM_PORTS(Channels, RowBits, ColBits), ...)
//   u_x (..., `TPU_HBM_MEM_PASS, ...)        the instance's memory side on the module's own
`ifndef TPU_HBM_MEM_SVH
`define TPU_HBM_MEM_SVH

`define TPU_HBM_MEM_PORTS(C, RowBits, ColBits) \
  output logic [(C)-1:0]                          row_valid_o, \
  output logic [(C)*tpu_pkg::HbmRowCmdBits-1:0]   row_cmd_o, \
  output logic [(C)-1:0]                          row_pc_o, \
  output logic [(C)*4-1:0]                        row_bank_o, \
  output logic [(C)*(RowBits)-1:0]                row_row_o, \
  output logic [(C)-1:0]                          col_valid_o, \
  output logic [(C)*tpu_pkg::HbmColCmdBits-1:0]   col_cmd_o, \
  output logic [(C)-1:0]                          col_pc_o, \
  output logic [(C)*4-1:0]                        col_bank_o, \
  output logic [(C)*(ColBits)-1:0]                col_col_o, \
  output logic [2*(C)-1:0]                        wdata_valid_o, \
  output logic [2*(C)*256-1:0]                    wdata_o, \
  output logic [2*(C)*32-1:0]                     wstrb_o, \
  input  logic [2*(C)-1:0]                        rdata_valid_i, \
  input  logic [2*(C)*256-1:0]                    rdata_i

`define TPU_HBM_MEM_PASS \
  .row_valid_o(row_valid_o), .row_cmd_o(row_cmd_o), .row_pc_o(row_pc_o), \
  .row_bank_o(row_bank_o), .row_row_o(row_row_o), \
  .col_valid_o(col_valid_o), .col_cmd_o(col_cmd_o), .col_pc_o(col_pc_o), \
  .col_bank_o(col_bank_o), .col_col_o(col_col_o), \
  .wdata_valid_o(wdata_valid_o), .wdata_o(wdata_o), .wstrb_o(wstrb_o), \
  .rdata_valid_i(rdata_valid_i), .rdata_i(rdata_i)

// Status per pseudo-channel: queue occupancy, refresh debt, write-drain mode.
`define TPU_HBM_STATUS_PORTS(C) \
  output logic [2*(C)*8-1:0]                      rq_count_o, \
  output logic [2*(C)*8-1:0]                      wq_count_o, \
  output logic [2*(C)*4-1:0]                      ref_debt_o, \
  output logic [2*(C)-1:0]                        wr_mode_o

`define TPU_HBM_STATUS_PASS \
  .rq_count_o(rq_count_o), .wq_count_o(wq_count_o), .ref_debt_o(ref_debt_o), \
  .wr_mode_o(wr_mode_o)

`endif
