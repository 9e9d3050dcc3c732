// SPDX-License-Identifier: Apache-2.0
// Registers (docs/conventions.md, rule 3): next state is computed as *_d in always_comb, and a
// register only copies it. These macros write the project's one register shape, as lowRISC's
// prim_flop_macros do; they use the module's clk_i and asynchronous active-low rst_ni.
//   `TPU_FF(cnt_q, cnt_d, '0)      cnt_q <= '0 in reset, cnt_d at every clock edge
//   `TPU_FFL(data_q, data_d, load, '0)   ... only when load is high
// `make lint` (scripts/lint_ff.py) rejects a case or arithmetic inside an always_ff.
`ifndef TPU_FF_SVH
`define TPU_FF_SVH

`define TPU_FF(q, d, rst_val) \
  always_ff @(posedge clk_i or negedge rst_ni) begin \
    if (!rst_ni) q <= (rst_val); \
    else         q <= (d); \
  end

`define TPU_FFL(q, d, load, rst_val) \
  always_ff @(posedge clk_i or negedge rst_ni) begin \
    if (!rst_ni)     q <= (rst_val); \
    else if (load)   q <= (d); \
  end

`endif
