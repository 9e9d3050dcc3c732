// SPDX-License-Identifier: Apache-2.0
// The matrix unit: controller, Rows × Cols weight-stationary systolic array of bf16 MACs, and
// fp32 accumulators at its south edge.
//
//   w_data_i (weights, one tile row per beat)  ──► loader ──┐ column skew, then south
//   a_data_i (one row of A per beat) ──► issuer ───────────┼► row skew, then east ──► PE grid
//   accumulators (psum read, moves east) ──► top of each column ──► ... ──► bottom ──► write
//
// Error codes (err_o, sticky until reset; the offending command is dropped, its data beats are
// not consumed): bit 0 rows = 0; bit 1 addr + rows beyond AccDepth; bit 2 kv not in 1..Rows;
// bit 3 nv not in 1..Cols; bit 4 a command without weights before any weight tile was loaded;
// bit 5 a command reusing the loaded weights with another kv or nv than they were loaded with.
`include "tpu_channels.svh"
module tpu_mxu #(
  parameter int unsigned Rows     = 16,
  parameter int unsigned Cols     = 16,
  parameter int unsigned PipeRegs = 1,      // MAC pipeline depth P (1..3)
  parameter int unsigned AccDepth = 4096,   // accumulator rows per column
  parameter int unsigned ModeSel  = tpu_pkg::ModeRuntime,
  // PEs per tile of the array: structure only, the same logic at any size (tpu_systolic_array)
  parameter int unsigned TileRows = 16,
  parameter int unsigned TileCols = 16,
  localparam int unsigned InW     = 1 + tpu_pkg::Bf16ExpBits + tpu_pkg::Bf16ManBits,
  localparam int unsigned AccW    = 1 + tpu_pkg::Fp32ExpBits + tpu_pkg::Fp32ManBits,
  localparam int unsigned AddrW   = (AccDepth > 1) ? $clog2(AccDepth) : 1,
  localparam int unsigned CntW    = $clog2(AccDepth + 1),
  localparam int unsigned KvW     = $clog2(Rows + 1),
  localparam int unsigned NvW     = $clog2(Cols + 1),
  localparam int unsigned RowW    = (Rows > 1) ? $clog2(Rows) : 1,
  localparam int unsigned CmdW    = `TPU_MXU_CMD_W(CntW, KvW, NvW, AddrW)
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 ftz_i,         // numerics mode: 1 FTZ, 0 IEEE (registered: set it
                                              // a cycle before the first command, keep it)
  // Tile operations
  input  logic                 cmd_valid_i,
  output logic                 cmd_ready_o,
  input  logic [CmdW-1:0]      cmd_i,         // mxu_cmd (rtl/channels.json, tpu_mxu_ctrl)
  // Weight rows and activation rows
  input  logic                 w_valid_i,
  output logic                 w_ready_o,
  input  logic [Cols*InW-1:0]  w_data_i,
  input  logic                 a_valid_i,
  output logic                 a_ready_o,
  input  logic [Rows*InW-1:0]  a_data_i,
  // Accumulator load and store ports
  input  logic                 ld_valid_i,
  output logic                 ld_ready_o,
  input  logic [AddrW-1:0]     ld_addr_i,
  input  logic [Cols*AccW-1:0] ld_data_i,
  input  logic                 st_valid_i,
  input  logic [AddrW-1:0]     st_addr_i,
  output logic                 st_valid_o,
  output logic [Cols*AccW-1:0] st_data_o,
  // Status
  output logic                 done_o,
  output logic                 idle_o,
  output logic [5:0]           err_o,
  // Performance counters (see tpu_mxu_ctrl)
  input  logic                 perf_clear_i,
  output logic [63:0]          perf_cycles_o,
  output logic [63:0]          perf_busy_o,
  output logic [63:0]          perf_macs_o,
  output logic [63:0]          perf_wstall_o,
  output logic [63:0]          perf_starve_o,
  output logic [63:0]          perf_hazard_o,
  output logic [63:0]          perf_drain_o,
  output logic [2:0]           perf_class_o   // see tpu_mxu_ctrl
);

  // The mode goes to the array unregistered: each tile of the array registers it, so the MACs
  // depend on flip-flops only, and a simulator evaluates them once per clock edge rather than
  // again whenever an input of the unit changes.
  logic                 arr_w_valid, arr_w_bank, arr_a_valid, arr_a_tag;
  logic [RowW-1:0]      arr_w_row;
  logic [Cols*InW-1:0]  arr_w;
  logic [Rows*InW-1:0]  arr_a;
  logic                 rd_valid, rd_acc, wr_valid, wr_last, acc_busy;
  logic [AddrW-1:0]     rd_addr, wr_addr;
  logic [NvW-1:0]       wr_nv;
  logic [Cols-1:0]      top_valid, bot_valid;
  logic [Cols*AccW-1:0] top, bot;

  tpu_mxu_ctrl #(
    .Rows    (Rows),
    .Cols    (Cols),
    .PipeRegs(PipeRegs),
    .AccDepth(AccDepth),
    .InW     (InW)
  ) u_ctrl (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .cmd_valid_i   (cmd_valid_i),
    .cmd_ready_o   (cmd_ready_o),
    .cmd_i         (cmd_i),
    .w_valid_i     (w_valid_i),
    .w_ready_o     (w_ready_o),
    .w_data_i      (w_data_i),
    .a_valid_i     (a_valid_i),
    .a_ready_o     (a_ready_o),
    .a_data_i      (a_data_i),
    .arr_w_valid_o (arr_w_valid),
    .arr_w_bank_o  (arr_w_bank),
    .arr_w_row_o   (arr_w_row),
    .arr_w_o       (arr_w),
    .arr_a_valid_o (arr_a_valid),
    .arr_a_tag_o   (arr_a_tag),
    .arr_a_o       (arr_a),
    .acc_rd_valid_o(rd_valid),
    .acc_rd_addr_o (rd_addr),
    .acc_rd_acc_o  (rd_acc),
    .acc_wr_valid_o(wr_valid),
    .acc_wr_addr_o (wr_addr),
    .acc_wr_nv_o   (wr_nv),
    .acc_wr_last_o (wr_last),
    .acc_busy_i    (acc_busy),
    .idle_o        (idle_o),
    .err_o         (err_o),
    .perf_clear_i  (perf_clear_i),
    .perf_cycles_o (perf_cycles_o),
    .perf_busy_o   (perf_busy_o),
    .perf_macs_o   (perf_macs_o),
    .perf_wstall_o (perf_wstall_o),
    .perf_starve_o (perf_starve_o),
    .perf_hazard_o (perf_hazard_o),
    .perf_drain_o  (perf_drain_o),
    .perf_class_o  (perf_class_o)
  );

  tpu_systolic_array #(
    .Rows    (Rows),
    .Cols    (Cols),
    .PipeRegs(PipeRegs),
    .ModeSel (ModeSel),
    .TileRows(TileRows),
    .TileCols(TileCols)
  ) u_array (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .ftz_i       (ftz_i),
    .act_valid_i (arr_a_valid),
    .act_tag_i   (arr_a_tag),
    .act_i       (arr_a),
    .w_valid_i   (arr_w_valid),
    .w_bank_i    (arr_w_bank),
    .w_row_i     (arr_w_row),
    .w_i         (arr_w),
    .psum_valid_i(top_valid),
    .psum_i      (top),
    .psum_valid_o(bot_valid),
    .psum_o      (bot)
  );

  tpu_accumulators #(
    .Cols    (Cols),
    .AccDepth(AccDepth),
    .AccW    (AccW)
  ) u_acc (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .rd_valid_i (rd_valid),
    .rd_addr_i  (rd_addr),
    .rd_acc_i   (rd_acc),
    .wr_valid_i (wr_valid),
    .wr_addr_i  (wr_addr),
    .wr_nv_i    (wr_nv),
    .wr_last_i  (wr_last),
    .top_valid_o(top_valid),
    .top_o      (top),
    .bot_valid_i(bot_valid),
    .bot_i      (bot),
    .ld_valid_i (ld_valid_i),
    .ld_ready_o (ld_ready_o),
    .ld_addr_i  (ld_addr_i),
    .ld_data_i  (ld_data_i),
    .st_valid_i (st_valid_i),
    .st_addr_i  (st_addr_i),
    .st_valid_o (st_valid_o),
    .st_data_o  (st_data_o),
    .done_o     (done_o),
    .busy_o     (acc_busy)
  );

endmodule
