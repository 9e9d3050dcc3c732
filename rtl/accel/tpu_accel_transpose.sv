// SPDX-License-Identifier: Apache-2.0
// The transposer of a transposing LOAD (version 1.3): two Side x Side tiles of bf16 (a ping-pong
// pair: one fills while the other drains), written a row at a time and read a column at a time,
// both at one per cycle.
//
// Element (i, e) (row i, element e) of a tile lives in bank (i + e) mod Side at address i. A row
// i puts its Side elements in Side different banks, all at address i (the row rotated by i); a
// column e takes element i from bank (i + e) mod Side at address i, so bank b is read at address
// (b - e) mod Side, again once per bank (the banks' data rotated back by e). So each bank is a
// plain 1R1W RAM of two tiles' rows (address {set, i}), with no crossbar: two rotators of Side
// elements do all the moving.
module tpu_accel_transpose #(
  parameter int unsigned Side = 16,
  localparam int unsigned IdxW = (Side > 1) ? $clog2(Side) : 1
) (
  input  logic               clk_i,
  // Write row wr_row of tile wr_set: element e when wr_en_i[e] (a row may come in pieces)
  input  logic               we_i,
  input  logic               wr_set_i,
  input  logic [IdxW-1:0]    wr_row_i,
  input  logic [Side-1:0]    wr_en_i,
  input  logic [Side*16-1:0] wr_data_i,
  // Read column rd_col of tile rd_set: element i of rd_data_o (next cycle) is (i, rd_col)
  input  logic               re_i,
  input  logic               rd_set_i,
  input  logic [IdxW-1:0]    rd_col_i,
  output logic [Side*16-1:0] rd_data_o
);

  localparam int unsigned W     = 16 * Side;
  localparam int unsigned Slots = 1 << IdxW;  // rows per tile in a bank (Side rounded up)

  // Rotations by k < Side through a doubled vector: out[b] = in[(b + k) mod Side].
  function automatic logic [W-1:0] rot_down(input logic [W-1:0] v, input logic [IdxW-1:0] k);
    rot_down = W'({v, v} >> (32'(k) * 16));
  endfunction
  function automatic logic [Side-1:0] rot_down_en(input logic [Side-1:0] v,
                                                  input logic [IdxW-1:0] k);
    rot_down_en = Side'({v, v} >> 32'(k));
  endfunction
  // (b - k) mod Side for b, k < Side.
  function automatic logic [IdxW-1:0] sub_mod(input int unsigned b, input logic [IdxW-1:0] k);
    sub_mod = (32'(k) <= b) ? IdxW'(b - 32'(k)) : IdxW'(b + Side - 32'(k));
  endfunction

  // Bank b takes element (b - wr_row) mod Side: the row rotated down by Side - wr_row.
  logic [IdxW-1:0] up;
  assign up = (wr_row_i == '0) ? '0 : IdxW'(Side - 32'(wr_row_i));
  logic [W-1:0]    bank_wd;
  logic [Side-1:0] bank_we;
  assign bank_wd = rot_down(wr_data_i, up);
  assign bank_we = rot_down_en(wr_en_i, up);

  logic [W-1:0]    bank_q;
  logic [IdxW-1:0] col_q;
  for (genvar b = 0; b < Side; b++) begin : gen_bank
    logic [15:0]     mem_q [2*Slots];
    logic [IdxW-1:0] ra;
    assign ra = sub_mod(b, rd_col_i);
    always_ff @(posedge clk_i) begin
      if (we_i && bank_we[b]) mem_q[{wr_set_i, wr_row_i}] <= bank_wd[16*b +: 16];
      if (re_i) bank_q[16*b +: 16] <= mem_q[{rd_set_i, ra}];
    end
  end
  always_ff @(posedge clk_i) begin
    if (re_i) col_q <= rd_col_i;
  end
  // Element i of the column is in bank (i + col) mod Side.
  assign rd_data_o = rot_down(bank_q, col_q);

`ifndef SYNTHESIS
  a_row_in_range: assert property (@(posedge clk_i) !(we_i && 32'(wr_row_i) >= Side))
    else $error("tpu_accel_transpose: row %0d beyond side %0d", wr_row_i, Side);
  a_col_in_range: assert property (@(posedge clk_i) !(re_i && 32'(rd_col_i) >= Side))
    else $error("tpu_accel_transpose: column %0d beyond side %0d", rd_col_i, Side);
`endif

endmodule
