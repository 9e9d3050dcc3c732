// SPDX-License-Identifier: Apache-2.0
// The accumulators at the south edge of the array: one fp32 memory per column, AccDepth rows.
//
// The controller gives column 0's partial-sum read (in the cycle a row is issued) and column 0's
// result write (R·P + 1 cycles later); both move east one column per cycle, in step with the
// array's column skew. A read in overwrite mode yields +0 instead of the stored value. Writes
// are masked for columns at or beyond the operation's nv. Two more ports serve the accelerator:
//   load   writes a row of Cols values (a preloaded C0 or bias), accepted in a cycle in which no
//          column's result is on its way to the load's bank
//   store  reads a row of Cols values, returned one cycle later (it sees every result written
//          before the read; the caller waits for the operation's done pulse)
// Each column's memory is two banks (tpu_pkg::acc_bank_rows: the lower half of the rows and the
// rest), each with one write port and the two read ports: a load into one bank is written in the
// same cycle as the array's results in the other, so the accelerator preloads one half of the
// accumulators while the array works in the other (tpu_accel_compute).
module tpu_accumulators #(
  parameter int unsigned Cols     = 16,
  parameter int unsigned AccDepth = 4096,
  parameter int unsigned AccW     = 32,
  localparam int unsigned AddrW   = (AccDepth > 1) ? $clog2(AccDepth) : 1,
  localparam int unsigned NvW     = $clog2(Cols + 1)
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  // Column 0's partial-sum read and result write, from the controller
  input  logic                 rd_valid_i,
  input  logic [AddrW-1:0]     rd_addr_i,
  input  logic                 rd_acc_i,      // 1: accumulate (stored value), 0: overwrite (+0)
  input  logic                 wr_valid_i,
  input  logic [AddrW-1:0]     wr_addr_i,
  input  logic [NvW-1:0]       wr_nv_i,
  input  logic                 wr_last_i,     // last row of a tile operation
  // The array: partial sums into the top, results from the bottom (both skewed by column)
  output logic [Cols-1:0]      top_valid_o,
  output logic [Cols*AccW-1:0] top_o,
  input  logic [Cols-1:0]      bot_valid_i,
  input  logic [Cols*AccW-1:0] bot_i,
  // Load port
  input  logic                 ld_valid_i,
  output logic                 ld_ready_o,
  input  logic [AddrW-1:0]     ld_addr_i,
  input  logic [Cols*AccW-1:0] ld_data_i,
  // Store port
  input  logic                 st_valid_i,
  input  logic [AddrW-1:0]     st_addr_i,
  output logic                 st_valid_o,
  output logic [Cols*AccW-1:0] st_data_o,
  // Status
  output logic                 done_o,        // a tile operation's last row has been written
  output logic                 busy_o         // writes still moving east
);

  // Per-column copies of the read and write controls: index c is column c's.
  logic [Cols-1:0]       rd_v, rd_acc, wr_v, wr_last;
  logic [Cols*AddrW-1:0] rd_a, wr_a;
  logic [Cols*NvW-1:0]   wr_nv;
  logic [Cols-1:0]       top_v_q, top_acc_q, wr_en;
  logic                  st_valid_q;

  assign rd_v[0]           = rd_valid_i;
  assign rd_acc[0]         = rd_acc_i;
  assign rd_a[0 +: AddrW]  = rd_addr_i;
  assign wr_v[0]           = wr_valid_i;
  assign wr_last[0]        = wr_last_i;
  assign wr_a[0 +: AddrW]  = wr_addr_i;
  assign wr_nv[0 +: NvW]   = wr_nv_i;

  for (genvar c = 1; c < Cols; c++) begin : gen_east
    tpu_pipe_reg #(.Width(1 + AddrW), .Enable(1'b1)) u_rd (
      .clk_i  (clk_i),
      .rst_ni (rst_ni),
      .valid_i(rd_v[c-1]),
      .data_i ({rd_acc[c-1], rd_a[(c-1)*AddrW +: AddrW]}),
      .valid_o(rd_v[c]),
      .data_o ({rd_acc[c], rd_a[c*AddrW +: AddrW]})
    );
    tpu_pipe_reg #(.Width(1 + AddrW + NvW), .Enable(1'b1)) u_wr (
      .clk_i  (clk_i),
      .rst_ni (rst_ni),
      .valid_i(wr_v[c-1]),
      .data_i ({wr_last[c-1], wr_a[(c-1)*AddrW +: AddrW], wr_nv[(c-1)*NvW +: NvW]}),
      .valid_o(wr_v[c]),
      .data_o ({wr_last[c], wr_a[c*AddrW +: AddrW], wr_nv[c*NvW +: NvW]})
    );
  end

  // The banks: bank 0 holds rows 0 .. Bank0Rows - 1, bank 1 the rest (none at AccDepth 1).
  localparam int unsigned Banks     = (AccDepth >= 2) ? 2 : 1;
  localparam int unsigned Bank0Rows = tpu_pkg::acc_bank_rows(AccDepth);
  function automatic logic bank_of(input logic [AddrW-1:0] a);
    bank_of = Banks == 2 && 32'(a) >= Bank0Rows;
  endfunction

  // The load waits while a column's result is on its way to the load's bank.
  logic ld_bank, ld_take;
  assign ld_bank = bank_of(ld_addr_i);
  always_comb begin
    ld_ready_o = 1'b1;
    for (int unsigned c = 0; c < Cols; c++) begin
      if (wr_v[c] && bank_of(wr_a[c*AddrW +: AddrW]) == ld_bank) ld_ready_o = 1'b0;
    end
  end
  assign ld_take = ld_valid_i && ld_ready_o;

  // The store port's bank, for the read data a cycle later.
  logic st_bank_q;
  always_ff @(posedge clk_i) begin
    if (st_valid_i) st_bank_q <= bank_of(st_addr_i);
  end

  for (genvar c = 0; c < Cols; c++) begin : gen_col
    logic [Banks*AccW-1:0] rdata0, rdata1;  // each bank's read data (psum read, store read)
    logic             we;  // this column's write: the array's result, else the load
    logic [AddrW-1:0] wa;
    logic [AccW-1:0]  wd;
    logic             rd_bank, rd_bank_q;

    assign wr_en[c] = wr_v[c] && (32'(wr_nv[c*NvW +: NvW]) > c);
    assign rd_bank  = bank_of(rd_a[c*AddrW +: AddrW]);
    assign we = wr_en[c] || ld_take;
    assign wa = wr_en[c] ? wr_a[c*AddrW +: AddrW] : ld_addr_i;
    assign wd = wr_en[c] ? bot_i[c*AccW +: AccW] : ld_data_i[c*AccW +: AccW];

    for (genvar k = 0; k < Banks; k++) begin : gen_bank
      localparam int unsigned Base  = (k == 0) ? 0 : Bank0Rows;
      localparam int unsigned Depth = (k == 0) ? Bank0Rows : AccDepth - Bank0Rows;
      localparam int unsigned BAW   = (Depth > 1) ? $clog2(Depth) : 1;
      logic            here, beside, bwe;
      logic [BAW-1:0]  bwa;
      logic [AccW-1:0] bwd;
      // The column's write in its bank, and the load beside a result in the other bank.
      assign here   = we && bank_of(wa) == 1'(k);
      assign beside = ld_take && wr_en[c] && ld_bank == 1'(k);
      assign bwe    = here || beside;
      assign bwa    = BAW'(here ? wa - AddrW'(Base) : ld_addr_i - AddrW'(Base));
      assign bwd    = here ? wd : ld_data_i[c*AccW +: AccW];

      tpu_acc_mem #(.Width(AccW), .Depth(Depth)) u_mem (
        .clk_i     (clk_i),
        .wr_en_i   (bwe),
        .wr_addr_i (bwa),
        .wr_data_i (bwd),
        .rd0_en_i  (rd_v[c] && rd_acc[c] && rd_bank == 1'(k)),
        .rd0_addr_i(BAW'(rd_a[c*AddrW +: AddrW] - AddrW'(Base))),
        .rd0_data_o(rdata0[k*AccW +: AccW]),
        .rd1_en_i  (st_valid_i && bank_of(st_addr_i) == 1'(k)),
        .rd1_addr_i(BAW'(st_addr_i - AddrW'(Base))),
        .rd1_data_o(rdata1[k*AccW +: AccW])
      );
    end

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) top_v_q[c] <= 1'b0;
      else         top_v_q[c] <= rd_v[c];
    end
    always_ff @(posedge clk_i) begin
      if (rd_v[c]) begin
        top_acc_q[c] <= rd_acc[c];
        rd_bank_q    <= rd_bank;
      end
    end
    if (Banks == 2) begin : gen_two
      logic [AccW-1:0] rdata;
      assign rdata = rd_bank_q ? rdata0[AccW +: AccW] : rdata0[0 +: AccW];
      assign top_o[c*AccW +: AccW] = top_acc_q[c] ? rdata : '0;
      assign st_data_o[c*AccW +: AccW] = st_bank_q ? rdata1[AccW +: AccW] : rdata1[0 +: AccW];
    end else begin : gen_one
      assign top_o[c*AccW +: AccW]     = top_acc_q[c] ? rdata0 : '0;
      assign st_data_o[c*AccW +: AccW] = rdata1;
      logic unused;
      assign unused = rd_bank_q ^ st_bank_q;
    end
  end

  assign top_valid_o = top_v_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) st_valid_q <= 1'b0;
    else         st_valid_q <= st_valid_i;
  end
  assign st_valid_o = st_valid_q;

  // Done one cycle after the last column's write, when a store read can already see it.
  logic done_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) done_q <= 1'b0;
    else         done_q <= wr_v[Cols-1] && wr_last[Cols-1];
  end
  assign done_o = done_q;
  assign busy_o = (wr_v >> 1) != '0;

`ifndef SYNTHESIS
  // Every result leaving the array meets its write slot (and nothing else arrives); a load beat
  // that waits for ready holds still (conventions rule 2).
  a_result_meets_slot: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                        bot_valid_i == wr_v)
    else $error("tpu_accumulators: results %b arrive but write slots are %b", bot_valid_i, wr_v);
  // The load never meets a result in its bank (ld_ready_o), in any column.
  for (genvar c = 0; c < Cols; c++) begin : gen_chk
    a_one_write_per_bank: assert property (@(posedge clk_i) disable iff (!rst_ni)
        !(ld_take && wr_en[c] && bank_of(wr_a[c*AddrW +: AddrW]) == ld_bank))
      else $error("tpu_accumulators: column %0d writes a result and the load in bank %0d", c,
                  ld_bank);
  end
  a_load_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                ld_valid_i && !ld_ready_o
                                |=> ld_valid_i && $stable(ld_addr_i) && $stable(ld_data_i))
    else $error("tpu_accumulators: load beat dropped or changed while waiting for ready");
`endif

endmodule
