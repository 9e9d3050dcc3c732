// SPDX-License-Identifier: Apache-2.0
// Matrix-unit controller: executes tile operations on the systolic array.
//
// A tile operation (one command) multiplies `rows` rows of A (one beat of a_data_i each) by a
// Rows × Cols weight tile (kv × nv of it valid) and writes the results to accumulator rows
// addr .. addr+rows-1, starting from +0 (cmd.acc = 0, overwrite), from the stored value
// (cmd.acc = 1, accumulate) or, for every row, from accumulator row cmd.src (cmd.bcast = 1,
// a bias broadcast; the caller keeps src outside the command's rows and cmd.acc at 0). With
// cmd.load_w the command first loads a new weight tile
// (kv beats of w_data_i, rows 0..kv-1); without it, it reuses the weights loaded last, and must
// then have the kv and nv they were loaded with (error bit 5 otherwise).
//
// Two engines work one command apart:
//   loader  takes a command, writes its weight tile into the bank not in use (one row per cycle,
//           kv rows from w_data_i and zero rows after them), then queues the command
//   issuer  issues the queued command's rows to the array, one per cycle, tagged with its bank
// Activations and weight writes reach every PE in issue order (tpu_systolic_array), so a bank may
// be rewritten from the cycle after the last row that reads it has been issued: the loader waits
// only while a queued command still names the bank it wants. A new tile therefore costs no cycle
// when the previous tile has at least Rows rows.
//
// Ragged tiles follow the numerics contract: rows at or beyond kv get the activation −0 and the
// weight +0 (x + (−0)·(+0) = x for every x, −0 included); columns at or beyond nv get weight +0
// and their results are not written.
//
// Read after write through the accumulators: a row in accumulate mode reads its partial sum
// when it is issued; the write of an earlier row to the same address happens R·P + 1 cycles
// after that row's issue. The rows issued in that window are held in the write-back line
// below, and a read that matches one of them waits (an accumulator-hazard stall).
//
// Performance counters: every cycle in which the unit is not idle counts once in perf_cycles_o
// and once in exactly one cause: busy (a row issued), weight stall (no row ready because a
// weight tile is still loading), starved (a row ready but no activation beat), hazard (the row
// waits for an earlier row's write), drain (nothing left to issue, results still in flight).
`include "tpu_channels.svh"
module tpu_mxu_ctrl #(
  parameter int unsigned Rows     = 16,
  parameter int unsigned Cols     = 16,
  parameter int unsigned PipeRegs = 1,
  parameter int unsigned AccDepth = 4096,
  parameter int unsigned InW      = 16,
  localparam int unsigned AddrW   = (AccDepth > 1) ? $clog2(AccDepth) : 1,
  localparam int unsigned CntW    = $clog2(AccDepth + 1),
  localparam int unsigned KvW     = $clog2(Rows + 1),
  localparam int unsigned NvW     = $clog2(Cols + 1),
  localparam int unsigned RowW    = (Rows > 1) ? $clog2(Rows) : 1,
  localparam int unsigned ErrW    = 6,
  localparam int unsigned CmdW    = `TPU_MXU_CMD_W(CntW, KvW, NvW, AddrW)
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  // Commands
  input  logic                cmd_valid_i,
  output logic                cmd_ready_o,
  input  logic [CmdW-1:0]     cmd_i,         // mxu_cmd (rtl/channels.json)
  // Weight rows (element c = column c)
  input  logic                w_valid_i,
  output logic                w_ready_o,
  input  logic [Cols*InW-1:0] w_data_i,
  // Activation rows (element r = array row r)
  input  logic                a_valid_i,
  output logic                a_ready_o,
  input  logic [Rows*InW-1:0] a_data_i,
  // To the array (registered)
  output logic                arr_w_valid_o,
  output logic                arr_w_bank_o,
  output logic [RowW-1:0]     arr_w_row_o,
  output logic [Cols*InW-1:0] arr_w_o,
  output logic                arr_a_valid_o,
  output logic                arr_a_tag_o,
  output logic [Rows*InW-1:0] arr_a_o,
  // To the accumulators: column 0's read (in the issue cycle) and write (R·P + 1 cycles later)
  output logic                acc_rd_valid_o,
  output logic [AddrW-1:0]    acc_rd_addr_o,
  output logic                acc_rd_acc_o,
  output logic                acc_wr_valid_o,
  output logic [AddrW-1:0]    acc_wr_addr_o,
  output logic [NvW-1:0]      acc_wr_nv_o,
  output logic                acc_wr_last_o,
  input  logic                acc_busy_i,    // writes still moving east through the columns
  // Status
  output logic                idle_o,
  output logic [ErrW-1:0]     err_o,         // sticky; see tpu_mxu for the codes
  // Performance counters
  input  logic                perf_clear_i,
  output logic [63:0]         perf_cycles_o,
  output logic [63:0]         perf_busy_o,
  output logic [63:0]         perf_macs_o,
  output logic [63:0]         perf_wstall_o,
  output logic [63:0]         perf_starve_o,
  output logic [63:0]         perf_hazard_o,
  output logic [63:0]         perf_drain_o,
  output logic [2:0]          perf_class_o    // this cycle's cause: 0 idle, 1 busy, 2 weight
                                              // stall, 3 starved, 4 hazard, 5 drain
);

  typedef `TPU_MXU_CMD_T(CntW, KvW, NvW, AddrW) mxu_cmd_t;
  mxu_cmd_t cmd;
  assign cmd = cmd_i;

  if (Rows < 1 || Cols < 1 || AccDepth < 2) begin : gen_bad_params
    $error("tpu_mxu_ctrl: need Rows >= 1, Cols >= 1, AccDepth >= 2");
  end

  // Write-back line length: rows issued this many cycles ago write column 0 now.
  localparam int unsigned Lat = Rows * PipeRegs + 1;

  // A queued operation: {rows, kv, nv, addr, src, bcast, acc, bank}.
  localparam int unsigned OpW = CntW + KvW + NvW + 2 * AddrW + 3;

  // ---------------------------------------------------------------------------------------------
  // Command check and the loader
  // ---------------------------------------------------------------------------------------------
  logic             ld_busy_q, ld_busy_d;
  mxu_cmd_t         ld_cmd_q;                 // the command the loader holds
  logic             ld_bank_q;                // the bank its weights are in
  logic [RowW-1:0]  ld_row_q, ld_row_d;
  logic             cur_bank_q, cur_bank_d;   // bank of the weights loaded last
  logic             have_w_q, have_w_d;       // a weight tile has been loaded since reset
  logic [ErrW-1:0]  err_q, err_d;
  logic [ErrW-1:0]  cmd_err;
  logic             cmd_take;

  // Queue of loaded operations (2 entries: the one issuing and the one loaded behind it)
  logic [1:0]       q_cnt_q, q_cnt_d;
  logic [OpW-1:0]   q0_q, q0_d, q1_q, q1_d;
  logic             q_push, q_pop;
  logic [OpW-1:0]   q_in;

  // Fields of the queue head
  logic [CntW-1:0]  h_rows;
  logic [KvW-1:0]   h_kv;
  logic [NvW-1:0]   h_nv;
  logic [AddrW-1:0] h_addr, h_src;
  logic             h_acc, h_bcast, h_bank;
  assign {h_rows, h_kv, h_nv, h_addr, h_src, h_bcast, h_acc, h_bank} = q0_q;

  // Bank of each queued entry (the lowest bit of an entry)
  logic bank_busy;   // a queued operation still reads the bank the loader wants
  assign bank_busy = ((q_cnt_q != 2'd0) && (q0_q[0] == ld_bank_q))
                  || ((q_cnt_q == 2'd2) && (q1_q[0] == ld_bank_q));

  // Error codes (bit mask): 0 rows = 0, 1 addr + rows beyond the accumulators,
  // 2 kv not in 1..Rows, 3 nv not in 1..Cols, 4 no weights loaded yet, 5 a command reusing the
  // loaded weights with a kv or nv other than theirs (the masking of ragged rows and columns
  // happens when a tile is loaded: a different kv would multiply -0 by real weights).
  logic [KvW-1:0] cur_kv_q;
  logic [NvW-1:0] cur_nv_q;
  // kv > Rows (nv > Cols) is only possible when the field can hold more than Rows (Cols).
  logic kv_big, nv_big;
  if ((2 ** KvW) - 1 > Rows) begin : gen_kv_big
    assign kv_big = 32'(cmd.kv) > Rows;
  end else begin : gen_kv_fits
    assign kv_big = 1'b0;
  end
  if ((2 ** NvW) - 1 > Cols) begin : gen_nv_big
    assign nv_big = 32'(cmd.nv) > Cols;
  end else begin : gen_nv_fits
    assign nv_big = 1'b0;
  end
  always_comb begin
    cmd_err    = '0;
    cmd_err[0] = (cmd.rows == '0);
    // In 32 bits: addr + rows must not wrap (rows may be as wide as AccDepth itself).
    cmd_err[1] = (32'(cmd.addr) + 32'(cmd.rows)) > AccDepth;
    cmd_err[2] = (cmd.kv == '0) || kv_big;
    cmd_err[3] = (cmd.nv == '0) || nv_big;
    cmd_err[4] = !cmd.load_w && !have_w_q;
    cmd_err[5] = !cmd.load_w && have_w_q && ((cmd.kv != cur_kv_q) || (cmd.nv != cur_nv_q));
  end

  logic ld_need_beat, ld_last_row, ld_inject, q_space;
  assign ld_need_beat = 32'(ld_row_q) < 32'(ld_cmd_q.kv);
  assign ld_last_row  = ld_row_q == RowW'(Rows - 1);
  // Space for a push: fewer than 2 queued. (Not "or the head leaves this cycle": that would make
  // the command and weight readies depend on the activation valid. A load never waits for it,
  // since a full queue holds the bank the loader wants; only a reuse command may, for a cycle.)
  assign q_space      = (q_cnt_q != 2'd2);
  assign ld_inject    = ld_busy_q && ld_cmd_q.load_w && !bank_busy
                     && (!ld_need_beat || w_valid_i) && (!ld_last_row || q_space);

  // The loader takes the next command in the cycle it hands its current one to the queue.
  logic ld_done;
  assign ld_done     = ld_busy_q && (ld_cmd_q.load_w ? (ld_inject && ld_last_row) : q_space);
  assign cmd_ready_o = !ld_busy_q || ld_done;
  assign cmd_take    = cmd_valid_i && cmd_ready_o && (cmd_err == '0);
  assign w_ready_o   = ld_inject && ld_need_beat;
  assign q_push      = ld_done;

  always_comb begin
    ld_busy_d  = ld_busy_q;
    ld_row_d   = ld_row_q;
    cur_bank_d = cur_bank_q;
    have_w_d   = have_w_q;
    err_d      = err_q;
    q_in       = {ld_cmd_q.rows, ld_cmd_q.kv, ld_cmd_q.nv, ld_cmd_q.addr, ld_cmd_q.src,
                  ld_cmd_q.bcast, ld_cmd_q.acc, ld_bank_q};
    if (ld_inject) ld_row_d = ld_row_q + 1'b1;
    if (ld_done)   ld_busy_d = 1'b0;
    if (cmd_valid_i && cmd_ready_o) begin
      err_d = err_q | cmd_err;
      if (cmd_take) begin
        ld_busy_d = 1'b1;
        ld_row_d  = '0;
        if (cmd.load_w) begin
          cur_bank_d = !cur_bank_q;
          have_w_d   = 1'b1;
        end
      end
    end
  end

  // Weight row to the array: rows at or beyond kv and columns at or beyond nv are +0.
  logic [Cols*InW-1:0] w_masked;
  always_comb begin
    for (int unsigned c = 0; c < Cols; c++) begin
      w_masked[c*InW +: InW] = (ld_need_beat && (c < 32'(ld_cmd_q.nv))) ? w_data_i[c*InW +: InW]
                                                                      : '0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ld_busy_q  <= 1'b0;
      ld_row_q   <= '0;
      cur_bank_q <= 1'b0;
      have_w_q   <= 1'b0;
      cur_kv_q   <= '0;
      cur_nv_q   <= '0;
      err_q      <= '0;
    end else begin
      ld_busy_q  <= ld_busy_d;
      ld_row_q   <= ld_row_d;
      cur_bank_q <= cur_bank_d;
      have_w_q   <= have_w_d;
      if (cmd_take && cmd.load_w) begin
        cur_kv_q <= cmd.kv;
        cur_nv_q <= cmd.nv;
      end
      err_q      <= err_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (cmd_take) begin
      ld_cmd_q  <= cmd;
      ld_bank_q <= cmd.load_w ? !cur_bank_q : cur_bank_q;
    end
  end

  logic                arr_w_valid_q, arr_w_bank_q;
  logic [RowW-1:0]     arr_w_row_q;
  logic [Cols*InW-1:0] arr_w_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) arr_w_valid_q <= 1'b0;
    else         arr_w_valid_q <= ld_inject;
  end
  always_ff @(posedge clk_i) begin
    if (ld_inject) begin
      arr_w_bank_q <= ld_bank_q;
      arr_w_row_q  <= ld_row_q;
      arr_w_q      <= w_masked;
    end
  end
  assign arr_w_valid_o = arr_w_valid_q;
  assign arr_w_bank_o  = arr_w_bank_q;
  assign arr_w_row_o   = arr_w_row_q;
  assign arr_w_o       = arr_w_q;

  // ---------------------------------------------------------------------------------------------
  // Queue
  // ---------------------------------------------------------------------------------------------
  always_comb begin
    q_cnt_d = q_cnt_q;
    q0_d    = q0_q;
    q1_d    = q1_q;
    if (q_pop) begin
      q0_d    = q1_q;
      q_cnt_d = q_cnt_d - 1'b1;
    end
    if (q_push) begin
      if (q_cnt_d == 2'd0) q0_d = q_in;
      else                 q1_d = q_in;
      q_cnt_d = q_cnt_d + 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) q_cnt_q <= '0;
    else         q_cnt_q <= q_cnt_d;
  end
  always_ff @(posedge clk_i) begin
    q0_q <= q0_d;
    q1_q <= q1_d;
  end

  // ---------------------------------------------------------------------------------------------
  // Issuer and the write-back line
  // ---------------------------------------------------------------------------------------------
  logic [CntW-1:0]  is_row_q, is_row_d;
  logic [AddrW-1:0] rd_addr, wr_addr;
  logic             hazard, issue, is_last;

  // Write-back line: stage s (1..Lat) holds the row issued s cycles ago.
  logic [Lat:1]         wb_valid_q;
  logic [Lat*AddrW-1:0] wb_addr_q;
  logic [Lat*NvW-1:0]   wb_nv_q;
  logic [Lat:1]         wb_last_q;

  // The row's partial sum is read from its own row (accumulate) or from row src (broadcast).
  assign wr_addr = h_addr + AddrW'(is_row_q);
  assign rd_addr = h_bcast ? h_src : wr_addr;
  always_comb begin
    hazard = 1'b0;
    for (int unsigned s = 1; s <= Lat; s++) begin
      if (wb_valid_q[s] && (wb_addr_q[(s-1)*AddrW +: AddrW] == rd_addr)) hazard = 1'b1;
    end
    hazard = hazard && (h_acc || h_bcast);
  end

  assign issue     = (q_cnt_q != 2'd0) && a_valid_i && !hazard;
  assign is_last   = (is_row_q == h_rows - 1'b1);
  assign q_pop     = issue && is_last;
  assign is_row_d  = !issue ? is_row_q : (is_last ? '0 : is_row_q + 1'b1);
  assign a_ready_o = issue;

  // Activation row to the array: rows at or beyond kv are −0.
  logic [Rows*InW-1:0] a_masked;
  always_comb begin
    for (int unsigned r = 0; r < Rows; r++) begin
      a_masked[r*InW +: InW] = (r < 32'(h_kv)) ? a_data_i[r*InW +: InW]
                                               : {1'b1, {(InW-1){1'b0}}};
    end
  end

  logic                arr_a_valid_q, arr_a_tag_q;
  logic [Rows*InW-1:0] arr_a_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      is_row_q      <= '0;
      arr_a_valid_q <= 1'b0;
      wb_valid_q    <= '0;
    end else begin
      is_row_q      <= is_row_d;
      arr_a_valid_q <= issue;
      wb_valid_q    <= {wb_valid_q[Lat-1:1], issue};
    end
  end
  always_ff @(posedge clk_i) begin
    if (issue) begin
      arr_a_tag_q <= h_bank;
      arr_a_q     <= a_masked;
    end
    wb_addr_q <= {wb_addr_q[(Lat-1)*AddrW-1:0], wr_addr};
    wb_nv_q   <= {wb_nv_q[(Lat-1)*NvW-1:0], h_nv};
    wb_last_q <= {wb_last_q[Lat-1:1], is_last};
  end
  assign arr_a_valid_o = arr_a_valid_q;
  assign arr_a_tag_o   = arr_a_tag_q;
  assign arr_a_o       = arr_a_q;

  assign acc_rd_valid_o = issue;
  assign acc_rd_addr_o  = rd_addr;
  assign acc_rd_acc_o   = h_acc || h_bcast;
  assign acc_wr_valid_o = wb_valid_q[Lat];
  assign acc_wr_addr_o  = wb_addr_q[(Lat-1)*AddrW +: AddrW];
  assign acc_wr_nv_o    = wb_nv_q[(Lat-1)*NvW +: NvW];
  assign acc_wr_last_o  = wb_last_q[Lat];

  assign idle_o = !ld_busy_q && (q_cnt_q == 2'd0) && (wb_valid_q == '0) && !acc_busy_i;
  assign err_o  = err_q;

  // ---------------------------------------------------------------------------------------------
  // Performance counters
  // ---------------------------------------------------------------------------------------------
  logic        active;
  logic [63:0] cyc_q, busy_q, macs_q, wstall_q, starve_q, hazard_q, drain_q;
  logic [63:0] cyc_d, busy_d, macs_d, wstall_d, starve_d, hazard_d, drain_d;
  assign active = cmd_valid_i || !idle_o;

  always_comb begin
    cyc_d    = cyc_q;
    busy_d   = busy_q;
    macs_d   = macs_q;
    wstall_d = wstall_q;
    starve_d = starve_q;
    hazard_d = hazard_q;
    drain_d  = drain_q;
    if (perf_clear_i) begin
      cyc_d    = '0;
      busy_d   = '0;
      macs_d   = '0;
      wstall_d = '0;
      starve_d = '0;
      hazard_d = '0;
      drain_d  = '0;
    end else if (active) begin
      cyc_d = cyc_q + 1'b1;
      if (issue) begin
        busy_d = busy_q + 1'b1;
        macs_d = macs_q + 64'(h_kv) * 64'(h_nv);
      end else if (q_cnt_q != 2'd0) begin
        if (!a_valid_i) starve_d = starve_q + 1'b1;
        else            hazard_d = hazard_q + 1'b1;
      end else if (ld_busy_q || cmd_valid_i) begin
        wstall_d = wstall_q + 1'b1;
      end else begin
        drain_d = drain_q + 1'b1;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cyc_q    <= '0;
      busy_q   <= '0;
      macs_q   <= '0;
      wstall_q <= '0;
      starve_q <= '0;
      hazard_q <= '0;
      drain_q  <= '0;
    end else begin
      cyc_q    <= cyc_d;
      busy_q   <= busy_d;
      macs_q   <= macs_d;
      wstall_q <= wstall_d;
      starve_q <= starve_d;
      hazard_q <= hazard_d;
      drain_q  <= drain_d;
    end
  end

  assign perf_cycles_o = cyc_q;
  assign perf_busy_o   = busy_q;
  assign perf_macs_o   = macs_q;
  assign perf_wstall_o = wstall_q;
  assign perf_starve_o = starve_q;
  assign perf_hazard_o = hazard_q;
  assign perf_drain_o  = drain_q;

  always_comb begin
    perf_class_o = tpu_pkg::MxuClassInactive;
    if (active) begin
      if (issue)                         perf_class_o = tpu_pkg::MxuClassBusy;
      else if (q_cnt_q != 2'd0)          perf_class_o = a_valid_i ? tpu_pkg::MxuClassHazard
                                                                  : tpu_pkg::MxuClassStarved;
      else if (ld_busy_q || cmd_valid_i) perf_class_o = tpu_pkg::MxuClassWeightLoad;
      else                               perf_class_o = tpu_pkg::MxuClassDrain;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // Inputs hold while valid waits for ready (conventions rule 2): a driver that drops or changes
  // a beat would silently lose data.
  a_cmd_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               cmd_valid_i && !cmd_ready_o
                               |=> cmd_valid_i && $stable(cmd_i))
    else $error("tpu_mxu_ctrl: command dropped or changed while waiting for ready");
  // A broadcast reads a row outside the command's own (the decoder's rule): else a later row
  // would read an earlier row's result instead of the initial value.
  a_bcast_src: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                cmd_take && cmd.bcast |-> !cmd.acc &&
                                (32'(cmd.src) < 32'(cmd.addr) ||
                                 32'(cmd.src) >= 32'(cmd.addr) + 32'(cmd.rows)))
    else $error("tpu_mxu_ctrl: broadcast from row %0d inside the command's rows", cmd.src);
  a_w_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                             w_valid_i && !w_ready_o |=> w_valid_i && $stable(w_data_i))
    else $error("tpu_mxu_ctrl: weight beat dropped or changed while waiting for ready");
  a_a_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                             a_valid_i && !a_ready_o |=> a_valid_i && $stable(a_data_i))
    else $error("tpu_mxu_ctrl: activation beat dropped or changed while waiting for ready");
  a_queue_count: assert property (@(posedge clk_i) disable iff (!rst_ni) q_cnt_q != 2'd3)
    else $error("tpu_mxu_ctrl: queue count corrupt (%0d)", q_cnt_q);
  a_queue_no_overflow: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                        !(q_push && !q_space))
    else $error("tpu_mxu_ctrl: push into a full queue (count %0d)", q_cnt_q);
`endif
`ifdef FORMAL
  // make formal (formal/mxu_ctrl_formal.sv): the two assertions above on internal state, as
  // immediate assertions Yosys reads; the input rules above are that top's assumptions.
  always_comb begin
    if (rst_ni) begin
      f_queue_count: assert (q_cnt_q != 2'd3);
      f_queue_no_overflow: assert (!(q_push && !q_space));
    end
  end
`endif

endmodule
