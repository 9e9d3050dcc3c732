// SPDX-License-Identifier: Apache-2.0
// Formal only (make formal, docs/formal.md): the matrix unit's controller
// (rtl/array/tpu_mxu_ctrl.sv) from reset, for any command, weight and activation streams that
// keep the valid/ready rules and the broadcast rule of the decoder, and that are never idle for
// long: a_valid_i and w_valid_i low at most MaxGap cycles in a row, acc_busy_i high at most
// MaxGap cycles in a row (these bound the waits the controller cannot help).
//   errors     a command is refused exactly when the module header's rules say so (each error
//              bit) and err_o is the OR of the refused commands' bits (a refused command that
//              started rows would break `order`)
//   order      the rows issued are the accepted commands' rows, in order: each issue reads
//              row addr + i (or src for a broadcast) in the command's mode, and its write comes
//              Lat = Rows * PipeRegs + 1 cycles later to the same row with the command's nv
//   no hang    with work outstanding, a weight row or an activation row moves at least every
//              StallMax cycles; every accepted command issues its last row within Bound cycles
//              of its acceptance; the unit is idle within IdleMax cycles of its last command's
//              last row
//   RTL        the controller's own assertions (tpu_mxu_ctrl.sv, `ifdef FORMAL)
`include "tpu_channels.svh"
module mxu_ctrl_formal #(
  parameter int unsigned Rows     = 2,
  parameter int unsigned Cols     = 2,
  parameter int unsigned PipeRegs = 1,
  parameter int unsigned AccDepth = 4,
  parameter int unsigned InW      = 4,
  parameter int unsigned MaxGap   = 1,
  localparam int unsigned AddrW   = (AccDepth > 1) ? $clog2(AccDepth) : 1,
  localparam int unsigned CntW    = $clog2(AccDepth + 1),
  localparam int unsigned KvW     = $clog2(Rows + 1),
  localparam int unsigned NvW     = $clog2(Cols + 1),
  localparam int unsigned RowW    = (Rows > 1) ? $clog2(Rows) : 1,
  localparam int unsigned Lat     = Rows * PipeRegs + 1,
  // A row waits at most for an activation (MaxGap) and for an earlier row's write (Lat).
  localparam int unsigned RowWait = MaxGap + Lat + 1,
  localparam int unsigned StallMax = RowWait + MaxGap + 2,
  // A command's completion bound (a_complete): at most two commands
  // ahead (the queue), each of at most AccDepth rows, then its weight load (Rows rows, each
  // waiting at most MaxGap for its beat) and its own rows.
  localparam int unsigned Bound   = 3 * AccDepth * RowWait + Rows * (MaxGap + 1) + 4,
  localparam int unsigned IdleMax = Lat + MaxGap + 2,
  localparam int unsigned CmdW    = `TPU_MXU_CMD_W(CntW, KvW, NvW, AddrW)
) (
  input logic                clk_i,
  input logic                rst_ni,
  input logic                cmd_valid_i,
  input logic [CmdW-1:0]     cmd_i,
  input logic                w_valid_i,
  input logic [Cols*InW-1:0] w_data_i,
  input logic                a_valid_i,
  input logic [Rows*InW-1:0] a_data_i,
  input logic                acc_busy_i,
  input logic                perf_clear_i
);
  typedef `TPU_MXU_CMD_T(CntW, KvW, NvW, AddrW) mxu_cmd_t;
  mxu_cmd_t cmd;
  assign cmd = cmd_i;
  logic                cmd_ready, w_ready, a_ready;
  logic                arr_w_valid, arr_w_bank, arr_a_valid, arr_a_tag;
  logic [RowW-1:0]     arr_w_row;
  logic [Cols*InW-1:0] arr_w;
  logic [Rows*InW-1:0] arr_a;
  logic                acc_rd_valid, acc_rd_acc, acc_wr_valid, acc_wr_last, idle;
  logic [AddrW-1:0]    acc_rd_addr, acc_wr_addr;
  logic [NvW-1:0]      acc_wr_nv;
  logic [5:0]          err;
  logic [63:0]         perf_cycles, perf_busy, perf_macs, perf_wstall, perf_starve,
                       perf_hazard, perf_drain;
  logic [2:0]          perf_class;

  tpu_mxu_ctrl #(
    .Rows(Rows), .Cols(Cols), .PipeRegs(PipeRegs), .AccDepth(AccDepth), .InW(InW)
  ) u_dut (
    .clk_i, .rst_ni, .cmd_valid_i, .cmd_ready_o(cmd_ready), .cmd_i,
    .w_valid_i, .w_ready_o(w_ready), .w_data_i, .a_valid_i, .a_ready_o(a_ready), .a_data_i,
    .arr_w_valid_o(arr_w_valid), .arr_w_bank_o(arr_w_bank), .arr_w_row_o(arr_w_row),
    .arr_w_o(arr_w), .arr_a_valid_o(arr_a_valid), .arr_a_tag_o(arr_a_tag), .arr_a_o(arr_a),
    .acc_rd_valid_o(acc_rd_valid), .acc_rd_addr_o(acc_rd_addr), .acc_rd_acc_o(acc_rd_acc),
    .acc_wr_valid_o(acc_wr_valid), .acc_wr_addr_o(acc_wr_addr), .acc_wr_nv_o(acc_wr_nv),
    .acc_wr_last_o(acc_wr_last), .acc_busy_i, .idle_o(idle), .err_o(err), .perf_clear_i,
    .perf_cycles_o(perf_cycles), .perf_busy_o(perf_busy), .perf_macs_o(perf_macs),
    .perf_wstall_o(perf_wstall), .perf_starve_o(perf_starve), .perf_hazard_o(perf_hazard),
    .perf_drain_o(perf_drain), .perf_class_o(perf_class)
  );

  logic init_q = 1'b1;
  always_ff @(posedge clk_i) init_q <= 1'b0;
  always_comb m_reset: assume (rst_ni == !init_q);

  // ---------------------------------------------------------------------------------------------
  // The environment
  // ---------------------------------------------------------------------------------------------
  tpu_vr_check #(.W(CmdW), .Assume(1)) u_cmd (
    .clk_i, .rst_ni, .valid_i(cmd_valid_i), .ready_i(cmd_ready), .data_i(cmd_i));
  tpu_vr_check #(.W(Cols * InW), .Assume(1)) u_w (
    .clk_i, .rst_ni, .valid_i(w_valid_i), .ready_i(w_ready), .data_i(w_data_i));
  tpu_vr_check #(.W(Rows * InW), .Assume(1)) u_a (
    .clk_i, .rst_ni, .valid_i(a_valid_i), .ready_i(a_ready), .data_i(a_data_i));

  logic [3:0] a_gap_q, w_gap_q, busy_run_q;  // consecutive cycles without a beat / with busy
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      a_gap_q <= '0; w_gap_q <= '0; busy_run_q <= '0;
    end else begin
      a_gap_q    <= a_valid_i ? '0 : a_gap_q + 4'd1;
      w_gap_q    <= w_valid_i ? '0 : w_gap_q + 4'd1;
      busy_run_q <= acc_busy_i ? busy_run_q + 4'd1 : '0;
    end
  end
  always_comb begin
    if (rst_ni) begin
      m_a_gap: assume (a_valid_i || 32'(a_gap_q) < MaxGap);
      m_w_gap: assume (w_valid_i || 32'(w_gap_q) < MaxGap);
      m_busy_run: assume (!acc_busy_i || 32'(busy_run_q) < MaxGap);
      // The decoder's broadcast rule: from +0's place, a row outside the command's rows.
      if (cmd_valid_i && cmd.bcast) begin
        m_bcast: assume (!cmd.acc && (32'(cmd.src) < 32'(cmd.addr) ||
                                         32'(cmd.src) >= 32'(cmd.addr) + 32'(cmd.rows)));
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Errors, restated from the module header
  // ---------------------------------------------------------------------------------------------
  logic            have_w_q;
  logic [KvW-1:0]  kv_q;
  logic [NvW-1:0]  nv_q;
  logic [5:0]      exp_err, err_acc_q;
  always_comb begin
    exp_err    = '0;
    exp_err[0] = cmd.rows == '0;
    exp_err[1] = 32'(cmd.addr) + 32'(cmd.rows) > AccDepth;
    exp_err[2] = cmd.kv == '0 || 32'(cmd.kv) > Rows;
    exp_err[3] = cmd.nv == '0 || 32'(cmd.nv) > Cols;
    exp_err[4] = !cmd.load_w && !have_w_q;
    exp_err[5] = !cmd.load_w && have_w_q && (cmd.kv != kv_q || cmd.nv != nv_q);
  end
  logic cmd_fire, take;
  assign cmd_fire = cmd_valid_i && cmd_ready;
  assign take     = cmd_fire && exp_err == '0;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      have_w_q <= 1'b0; kv_q <= '0; nv_q <= '0; err_acc_q <= '0;
    end else begin
      if (cmd_fire) err_acc_q <= err_acc_q | exp_err;
      if (take && cmd.load_w) begin
        have_w_q <= 1'b1; kv_q <= cmd.kv; nv_q <= cmd.nv;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // The accepted commands, oldest first, and the rows issued
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned QD = 4;
  logic [CntW-1:0]  c_rows_q[QD];
  logic [NvW-1:0]   c_nv_q  [QD];
  logic [AddrW-1:0] c_addr_q[QD], c_src_q[QD];
  logic             c_acc_q [QD], c_bcast_q[QD];
  logic [2:0]       c_cnt_q;
  logic [7:0]       c_age_q [QD];  // cycles since the command was accepted (saturating)
  logic [CntW-1:0]  row_q;   // rows of the oldest command issued so far
  logic             done;    // the oldest command's last row issues now
  assign done = a_ready && row_q + 1'b1 == c_rows_q[0];

  logic [2:0] c_cnt_mid;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      c_cnt_q <= '0;
      row_q   <= '0;
    end else begin
      c_cnt_mid = c_cnt_q;
      if (a_ready) row_q <= done ? '0 : row_q + 1'b1;
      for (int unsigned i = 0; i < QD; i++) begin
        c_age_q[i] <= (c_age_q[i] == 8'hff) ? c_age_q[i] : c_age_q[i] + 8'd1;
      end
      if (done) begin
        for (int unsigned i = 0; i + 1 < QD; i++) begin
          c_age_q[i] <= (c_age_q[i+1] == 8'hff) ? c_age_q[i+1] : c_age_q[i+1] + 8'd1;
          c_rows_q[i] <= c_rows_q[i+1]; c_nv_q[i] <= c_nv_q[i+1]; c_addr_q[i] <= c_addr_q[i+1];
          c_src_q[i] <= c_src_q[i+1]; c_acc_q[i] <= c_acc_q[i+1]; c_bcast_q[i] <= c_bcast_q[i+1];
        end
        c_cnt_mid = c_cnt_q - 3'd1;
      end
      if (take && c_cnt_mid < 3'(QD)) begin
        c_rows_q[c_cnt_mid[1:0]]  <= cmd.rows;
        c_nv_q[c_cnt_mid[1:0]]    <= cmd.nv;
        c_addr_q[c_cnt_mid[1:0]]  <= cmd.addr;
        c_src_q[c_cnt_mid[1:0]]   <= cmd.src;
        c_acc_q[c_cnt_mid[1:0]]   <= cmd.acc;
        c_bcast_q[c_cnt_mid[1:0]] <= cmd.bcast;
        c_age_q[c_cnt_mid[1:0]]   <= 8'd1;
      end
      c_cnt_q <= c_cnt_mid + 3'(take);
    end
  end

  // Each issue's write, Lat cycles later.
  logic [Lat:1]     wb_v_q;
  logic [AddrW-1:0] wb_addr_q[Lat + 1];
  logic [NvW-1:0]   wb_nv_q  [Lat + 1];
  logic [AddrW-1:0] issue_addr;
  assign issue_addr = c_addr_q[0] + AddrW'(row_q);
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      wb_v_q <= '0;
    end else begin
      wb_v_q <= {wb_v_q[Lat-1:1], a_ready};
    end
    wb_addr_q[1] <= issue_addr;
    wb_nv_q[1]   <= c_nv_q[0];
    for (int unsigned s = 2; s <= Lat; s++) begin
      wb_addr_q[s] <= wb_addr_q[s-1];
      wb_nv_q[s]   <= wb_nv_q[s-1];
    end
  end

  // No hang: cycles with work outstanding and nothing moving; cycles since the last row.
  logic [7:0] stall_q, quiet_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      stall_q <= '0;
      quiet_q <= '0;
    end else begin
      stall_q <= (c_cnt_q != '0 && !a_ready && !w_ready && !arr_w_valid) ? stall_q + 8'd1 : '0;
      quiet_q <= (c_cnt_q == '0 && !cmd_valid_i && !idle) ? quiet_q + 8'd1 : '0;
    end
  end

  always_comb begin
    if (rst_ni) begin
      // errors
      a_err: assert (err == err_acc_q);
      // order
      a_outstanding: assert (c_cnt_q <= 3'd3);
      if (a_ready) begin
        a_issue_has_cmd: assert (c_cnt_q != '0);
        a_issue_addr: assert (acc_rd_valid && acc_rd_addr == (c_bcast_q[0] ? c_src_q[0]
                                                                            : issue_addr));
        a_issue_mode: assert (acc_rd_acc == (c_acc_q[0] || c_bcast_q[0]));
      end
      a_write_at_lat: assert (acc_wr_valid == wb_v_q[Lat]);
      if (acc_wr_valid) begin
        a_write_row: assert (acc_wr_addr == wb_addr_q[Lat] && acc_wr_nv == wb_nv_q[Lat]);
      end
      // no hang
      a_progress: assert (32'(stall_q) < StallMax);
      a_idle: assert (32'(quiet_q) < IdleMax);
      // The oldest accepted command (the others are younger) issues its last row within Bound
      // cycles of its acceptance.
      a_complete: assert (c_cnt_q == '0 || 32'(c_age_q[0]) < Bound);
    end
  end
endmodule
