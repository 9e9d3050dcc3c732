// SPDX-License-Identifier: Apache-2.0
// One direction's piece issuer of tpu_accel_dma: a queue of bursts (QDepth) and, for the burst at
// its head (1..16 beats
// of 32 bytes, 32-byte aligned, inside one 4 KB page) is cut at 64-byte boundaries into pieces of
// one or two beats; piece j is block blk0 + j of the global address space, which lives on port
// (blk0 + j) mod Ports at the port-local block (blk0 + j) / Ports (the address map of docs/hbm.md).
// Each piece goes into its port's queue of pieces (AxLEN 0 or 1, Depth deep, the head on the
// port's address channel); up to Ports pieces a cycle, since Ports consecutive blocks are on Ports
// distinct ports, and in order: a piece goes only with every piece before it. So each port sees
// its pieces in global order, which is what the response side of tpu_accel_dma relies on. The
// queues let the other ports run ahead while one is slow (a refresh), up to Depth pieces.
`include "tpu_ff.svh"
module tpu_accel_dma_issue #(
  parameter int unsigned Ports     = 2,
  parameter int unsigned AddrW     = 31,  // global byte address
  parameter int unsigned MAddrBits = 32,  // port-local byte address
  parameter int unsigned Depth     = 16,  // pieces queued per port
  parameter int unsigned QDepth    = 4,   // bursts queued
  localparam int unsigned PortBits = $clog2(Ports)
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  input  logic                       push_i,    // queue a burst (only while !full_o)
  input  logic [AddrW-1:0]           addr_i,
  input  logic [3:0]                 len_i,     // beats - 1
  output logic                       full_o,
  output logic [Ports-1:0]           m_valid_o,
  input  logic [Ports-1:0]           m_ready_i,
  output logic [Ports*MAddrBits-1:0] m_addr_o,
  output logic [Ports*8-1:0]         m_len_o
);

  if (Ports < 2 || Ports > 32 || (1 << PortBits) != Ports) begin : gen_bad_ports
    $error("tpu_accel_dma_issue: Ports must be a power of two in 2..32 (got %0d)", Ports);
  end

  localparam int unsigned BlkW = AddrW - 6;

  // The burst queue; its head is cut into pieces.
  logic             h_valid, h_empty, h_done;
  logic [AddrW-1:0] h_addr;
  logic [3:0]       h_len;
  tpu_fifo #(.Width(AddrW + 4), .Depth(QDepth)) u_bursts (
    .clk_i, .rst_ni, .flush_i(1'b0),
    .push_i, .data_i({addr_i, len_i}), .full_o,
    .pop_i(h_done), .data_o({h_addr, h_len}), .empty_o(h_empty), .count_o()
  );
  assign h_valid = !h_empty;

  logic [3:0]          j_q, j_d; // pieces of the head burst already gone
  logic [BlkW-1:0]     blk0;
  logic                off, odd_end;
  logic [4:0]          np;       // pieces of the burst, 1..9
  logic [Ports-1:0]    full, free, go;
  logic [4:0]          m;        // pieces going this cycle

  assign blk0    = h_addr[AddrW-1:6];
  assign off     = h_addr[5];
  assign np      = (5'(off) + 5'(h_len) + 5'd2) >> 1;
  assign odd_end = off == h_len[0];  // the last piece has one beat: off + beats is odd
  assign free    = ~full;

  // Piece j_q + i goes when it exists, its port's register is free and every piece before it goes.
  logic                ok;
  logic [4:0]          jj;
  logic [PortBits-1:0] qq;
  always_comb begin
    ok = h_valid;
    m  = '0;
    for (int unsigned i = 0; i < Ports; i++) begin
      jj = 5'(j_q) + 5'(i);
      qq = PortBits'(blk0) + PortBits'(jj);
      ok = ok && jj < np && free[qq];
      go[i] = ok;
      if (ok) m = m + 5'd1;
    end
  end
  assign h_done = h_valid && (5'(j_q) + m == np);

  assign j_d = h_done ? '0 : j_q + 4'(m);
  `TPU_FFL(j_q, j_d, h_valid, '0)

  // Port q takes piece j_q + i_q, i_q = (q - blk0 - j_q) mod Ports, when that piece goes.
  for (genvar q = 0; q < Ports; q++) begin : gen_port
    logic [PortBits-1:0] iq;
    logic [4:0]          j;
    logic [BlkW-1:0]     blk;
    logic                first, last1, load, empty, len1;
    assign iq    = PortBits'(q) - PortBits'(blk0) - PortBits'(j_q);
    assign load  = go[iq];
    assign j     = 5'(j_q) + 5'(iq);
    assign blk   = blk0 + BlkW'(j);
    assign first = j == 5'd0 && off;
    assign last1 = j == np - 5'd1 && odd_end;
    tpu_fifo #(.Width(MAddrBits + 1), .Depth(Depth)) u_q (
      .clk_i, .rst_ni, .flush_i(1'b0),
      .push_i(load), .data_i({MAddrBits'({blk >> PortBits, first, 5'd0}), !(first || last1)}),
      .full_o(full[q]),
      .pop_i(m_valid_o[q] && m_ready_i[q]),
      .data_o({m_addr_o[q*MAddrBits +: MAddrBits], len1}), .empty_o(empty), .count_o()
    );
    assign m_valid_o[q]   = !empty;
    assign m_len_o[q*8 +: 8] = {7'd0, len1};
  end

`ifndef SYNTHESIS
  a_aligned: assert property (@(posedge clk_i) disable iff (!rst_ni)
                              h_valid |-> h_addr[4:0] == '0 &&
                                          13'(h_addr[11:0]) + 13'({h_len, 5'd0}) < 13'd4096)
    else $error("tpu_accel_dma_issue: burst at 0x%0h of %0d beats is unaligned or crosses 4 KB",
                h_addr, h_len + 4'd1);
`endif

endmodule
