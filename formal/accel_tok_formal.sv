// SPDX-License-Identifier: Apache-2.0
// Formal only (make formal, docs/formal.md): the dependency tokens of the accelerator
// (rtl/accel/tpu_accel.sv: the four token queues; tpu_accel_load.sv, tpu_accel_compute.sv,
// tpu_accel_store.sv: who pops and pushes them) from reset, on a small configuration. The check
// cuts the command processor, the register port, the DMA, the HBM subsystem, the matrix unit and
// the buffers (checks.txt `cut:`): their outputs are free in every cycle, so the instruction
// queues hold any instruction words, flush and halt come at any time, memory and matrix-unit
// handshakes (completions, write responses) come at any time. The modules, the instruction
// queues and the token counters are the RTL's.
// The queues, as the ISA names them (rtl/accel/isa.json, flags pop_prev/pop_next/push_prev/
// push_next): 0 load->compute (load push_next, compute pop_prev), 1 compute->load (compute
// push_prev, load pop_next), 2 compute->store (compute push_next, store pop_prev), 3
// store->compute (store push_prev, compute pop_next).
//   balance    each queue's count is its pushes minus its pops since reset or the last flush
//              (kept here in 9 bits), never below zero (no pop without a token) and never above
//              255: a push that finds 255 (and no pop) is refused
//   start      a module pops a queue exactly when it starts an instruction (takes a non-END head)
//              whose pop flag names that queue, and only with a token there (no module runs ahead
//              of its tokens); END pops nothing
//   errors     a push that finds 255 tokens raises the run-time error ERR_TOKEN_OVERFLOW (8) with
//              that instruction's pc (the lowest pc wins: an HBM error of a lower pc may come
//              first), and ERR_TOKEN_OVERFLOW comes from no other cause
// The modules' signals are read through hierarchical taps (wires named `u_dut.<path>` with the
// hierconn attribute, connected by Yosys's flatten; scripts/formal.py fails a missing one).
`include "tpu_hbm_mem.svh"
module accel_tok_formal #(
  parameter int unsigned Rows       = 2,
  parameter int unsigned Cols       = 2,
  parameter int unsigned ActDepth   = 4,
  parameter int unsigned WgtDepth   = 4,
  parameter int unsigned AccDepth   = 4,
  parameter int unsigned QueueDepth = 2,
  parameter int unsigned LoadDepth  = 2
) (
  input logic         clk_i,
  input logic         rst_ni,
  input logic         s_aw_valid_i,
  input logic [11:0]  s_aw_addr_i,
  input logic         s_w_valid_i,
  input logic [31:0]  s_w_data_i,
  input logic         s_b_ready_i,
  input logic         s_ar_valid_i,
  input logic [11:0]  s_ar_addr_i,
  input logic         s_r_ready_i,
  input logic [1:0]   rdata_valid_i,
  input logic [511:0] rdata_i
);
  tpu_accel #(
    .Rows(Rows), .Cols(Cols), .ActDepth(ActDepth), .WgtDepth(WgtDepth), .AccDepth(AccDepth),
    .QueueDepth(QueueDepth), .LoadDepth(LoadDepth), .Channels(1)
  ) u_dut (
    .clk_i, .rst_ni,
    .s_aw_valid_i, .s_aw_ready_o(), .s_aw_addr_i, .s_w_valid_i, .s_w_ready_o(), .s_w_data_i,
    .s_b_valid_o(), .s_b_ready_i, .s_ar_valid_i, .s_ar_ready_o(), .s_ar_addr_i,
    .s_r_valid_o(), .s_r_ready_i, .s_r_data_o(), .irq_o(), .hbm_busy_o(),
    .row_valid_o(), .row_cmd_o(), .row_pc_o(), .row_bank_o(), .row_row_o(),
    .col_valid_o(), .col_cmd_o(), .col_pc_o(), .col_bank_o(), .col_col_o(),
    .wdata_valid_o(), .wdata_o(), .wstrb_o(), .rdata_valid_i, .rdata_i
  );

  logic init_q = 1'b1;
  always_ff @(posedge clk_i) init_q <= 1'b0;
  always_comb m_reset: assume (rst_ni == !init_q);

  // ---------------------------------------------------------------------------------------------
  // Taps: the token counters and the run-time error of tpu_accel, the modules' ports
  // ---------------------------------------------------------------------------------------------
  (* hierconn *) logic [31:0]  \u_dut.tok_cnt_q ;
  (* hierconn *) logic         \u_dut.flush ;
  (* hierconn *) logic         \u_dut.rt_err ;
  (* hierconn *) logic [3:0]   \u_dut.rt_code ;
  (* hierconn *) logic [31:0]  \u_dut.rt_pc ;
  (* hierconn *) logic         \u_dut.u_load.head_pop_o ;
  (* hierconn *) logic [255:0] \u_dut.u_load.head_instr_i ;
  (* hierconn *) logic         \u_dut.u_load.pop_next_o ;
  (* hierconn *) logic         \u_dut.u_load.push_next_o ;
  (* hierconn *) logic [31:0]  \u_dut.u_load.push_pc_o ;
  (* hierconn *) logic         \u_dut.u_compute.head_pop_o ;
  (* hierconn *) logic [255:0] \u_dut.u_compute.head_instr_i ;
  (* hierconn *) logic         \u_dut.u_compute.pop_prev_o ;
  (* hierconn *) logic         \u_dut.u_compute.pop_next_o ;
  (* hierconn *) logic         \u_dut.u_compute.push_prev_o ;
  (* hierconn *) logic         \u_dut.u_compute.push_next_o ;
  (* hierconn *) logic [31:0]  \u_dut.u_compute.push_pc_o ;
  (* hierconn *) logic         \u_dut.u_store.head_pop_o ;
  (* hierconn *) logic [255:0] \u_dut.u_store.head_instr_i ;
  (* hierconn *) logic         \u_dut.u_store.pop_prev_o ;
  (* hierconn *) logic         \u_dut.u_store.push_prev_o ;
  (* hierconn *) logic [31:0]  \u_dut.u_store.push_pc_o ;

  // Per queue (ISA numbering above): its push, pop and the pushing instruction's pc.
  logic [3:0]  push, pop;
  logic [31:0] push_pc[4];
  assign push = {\u_dut.u_store.push_prev_o , \u_dut.u_compute.push_next_o ,
                 \u_dut.u_compute.push_prev_o , \u_dut.u_load.push_next_o };
  assign pop  = {\u_dut.u_compute.pop_next_o , \u_dut.u_store.pop_prev_o ,
                 \u_dut.u_load.pop_next_o , \u_dut.u_compute.pop_prev_o };
  assign push_pc[0] = \u_dut.u_load.push_pc_o ;
  assign push_pc[1] = \u_dut.u_compute.push_pc_o ;
  assign push_pc[2] = \u_dut.u_compute.push_pc_o ;
  assign push_pc[3] = \u_dut.u_store.push_pc_o ;

  // A module starts an instruction: it takes a head that is not END.
  function automatic logic starts(logic take, logic [255:0] instr);
    starts = take && tpu_isa_pkg::instr_opcode(instr) != tpu_isa_pkg::OpEnd;
  endfunction
  logic ld_start, cp_start, st_start;
  assign ld_start = starts(\u_dut.u_load.head_pop_o , \u_dut.u_load.head_instr_i );
  assign cp_start = starts(\u_dut.u_compute.head_pop_o , \u_dut.u_compute.head_instr_i );
  assign st_start = starts(\u_dut.u_store.head_pop_o , \u_dut.u_store.head_instr_i );

  // ---------------------------------------------------------------------------------------------
  // The tokens each queue holds: pushes minus pops since reset or the last flush
  // ---------------------------------------------------------------------------------------------
  logic [8:0] tok_q[4];
  logic [3:0] over;  // a push that finds 255 tokens and no pop: refused, an error
  always_comb begin
    for (int unsigned t = 0; t < 4; t++) over[t] = push[t] && !pop[t] && tok_q[t] == 9'd255;
  end
  always_ff @(posedge clk_i) begin
    for (int unsigned t = 0; t < 4; t++) begin
      if (!rst_ni || \u_dut.flush )  tok_q[t] <= '0;
      else if (!over[t])             tok_q[t] <= tok_q[t] + 9'(push[t]) - 9'(pop[t]);
    end
  end

  logic n_count, n_empty_pop, n_over_err, over_any;
  always_comb begin
    n_count = 1'b0; n_empty_pop = 1'b0; n_over_err = 1'b0; over_any = 1'b0;
    for (int unsigned t = 0; t < 4; t++) begin
      n_count     |= tok_q[t] > 9'd255 || \u_dut.tok_cnt_q [8*t +: 8] != tok_q[t][7:0];
      n_empty_pop |= pop[t] && tok_q[t] == '0;
      n_over_err  |= over[t] && !(\u_dut.rt_err && \u_dut.rt_pc <= push_pc[t] &&
                                  (\u_dut.rt_code == tpu_isa_pkg::ErrTokenOverflow ||
                                   \u_dut.rt_code == tpu_isa_pkg::ErrHbm));
      over_any    |= over[t] && \u_dut.rt_pc == push_pc[t];
    end
  end

  always_comb begin
    if (rst_ni) begin
      a_tok_count: assert (!n_count);
      a_tok_pop_has_token: assert (!n_empty_pop);
      a_tok_overflow_error: assert (!n_over_err);
      a_tok_overflow_cause: assert (!(\u_dut.rt_err &&
                                      \u_dut.rt_code == tpu_isa_pkg::ErrTokenOverflow) ||
                                    over_any);
      a_ld_pop_next: assert (\u_dut.u_load.pop_next_o ==
                             (ld_start && \u_dut.u_load.head_instr_i [tpu_isa_pkg::FlagPopNext]));
      a_cp_pop_prev: assert (\u_dut.u_compute.pop_prev_o ==
                             (cp_start && \u_dut.u_compute.head_instr_i [tpu_isa_pkg::FlagPopPrev]));
      a_cp_pop_next: assert (\u_dut.u_compute.pop_next_o ==
                             (cp_start && \u_dut.u_compute.head_instr_i [tpu_isa_pkg::FlagPopNext]));
      a_st_pop_prev: assert (\u_dut.u_store.pop_prev_o ==
                             (st_start && \u_dut.u_store.head_instr_i [tpu_isa_pkg::FlagPopPrev]));
    end
  end
endmodule
