// SPDX-License-Identifier: Apache-2.0
// One direction's burst splitter of tpu_hbm_interleave (instantiated once for AW, once for AR):
// takes one burst at a time on its slave channel and cuts it at 64-byte boundaries into pieces
// of 1 or 2 beats, one piece per cycle, each into the request register of the master port its
// address maps to (the burst's ID, the port-local address, AxLEN 0 or 1, AxSIZE 5, INCR). The
// next burst is taken in the cycle the last piece goes. A burst no port would take (see
// tpu_hbm_interleave) is not split: it issues one "refused" piece that no port sees, for the
// trackers to answer locally.
//
// Each issued piece (piece_o) is described to the trackers by piece_port_o, piece_two_o (two
// beats), piece_last_o (it ends the burst; always set for a refused burst), piece_err_o (refused)
// and piece_left_o (the beats still to split, before this piece), piece_id_o.
`include "tpu_ff.svh"
module tpu_hbm_splitter #(
  parameter int unsigned Ports        = 16,  // master ports (power of two, 1..32)
  parameter int unsigned AddrBits     = 40,  // global (slave-side) byte address width
  parameter int unsigned PortAddrBits = 30,  // log2 of the bytes behind one master port
  parameter int unsigned MAddrBits    = 32,  // master-side (port-local) address width
  parameter int unsigned IdBits       = 6,
  localparam int unsigned PortBits    = $clog2(Ports),
  localparam int unsigned PortIdxBits = (PortBits == 0) ? 1 : PortBits,
  localparam int unsigned BeatBits    = AddrBits - 5
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  // Slave request channel (AW or AR, global addresses).
  input  logic                       s_valid_i,
  output logic                       s_ready_o,
  input  logic [IdBits-1:0]          s_id_i,
  input  logic [AddrBits-1:0]        s_addr_i,
  input  logic [7:0]                 s_len_i,
  input  logic [2:0]                 s_size_i,
  input  logic [1:0]                 s_burst_i,
  // The trackers cannot take another piece.
  input  logic                       stall_i,
  // The piece issued this cycle.
  output logic                       piece_o,
  output logic [PortIdxBits-1:0]     piece_port_o,
  output logic                       piece_two_o,
  output logic                       piece_last_o,
  output logic                       piece_err_o,
  output logic [8:0]                 piece_left_o,
  output logic [IdBits-1:0]          piece_id_o,
  // Master request channels, one per port, lanes flattened (port p in bits [p*W +: W]).
  output logic [Ports-1:0]           m_valid_o,
  input  logic [Ports-1:0]           m_ready_i,
  output logic [Ports*IdBits-1:0]    m_id_o,
  output logic [Ports*MAddrBits-1:0] m_addr_o,
  output logic [Ports*8-1:0]         m_len_o,
  output logic [Ports*3-1:0]         m_size_o,
  output logic [Ports*2-1:0]         m_burst_o
);

  // ----------------------------------------------------------------------------------------------
  // Address helpers. Inside the module, addresses are global beat addresses (byte address / 32).
  // ----------------------------------------------------------------------------------------------
  // Bursts no port would take (see tpu_hbm_interleave).
  function automatic logic bad_burst(logic [AddrBits-1:0] a, logic [7:0] len, logic [2:0] size,
                                     logic [1:0] burst);
    bad_burst = burst != tpu_pkg::AxiBurstIncr || size != 3'd5 || a[4:0] != '0 ||
                (9'(a[11:5]) + 9'(len)) > 9'd127 || (a >> (PortAddrBits + PortBits)) != '0;
  endfunction

  // The port a beat address maps to (beat bit 0 is the half of the 64-byte block).
  function automatic logic [PortIdxBits-1:0] port_of(logic [BeatBits-1:0] b);
    port_of = PortIdxBits'(b >> 1) & PortIdxBits'(Ports - 1);
  endfunction

  // The port-local byte address of a beat address.
  function automatic logic [MAddrBits-1:0] local_of(logic [BeatBits-1:0] b);
    logic [BeatBits-1:0] blk;
    blk      = b >> (1 + PortBits);
    local_of = MAddrBits'({blk, b[0], 5'b00000});
  endfunction

  // ----------------------------------------------------------------------------------------------
  // The burst being split
  // ----------------------------------------------------------------------------------------------
  logic                   busy_q, busy_d;
  logic                   err_q, err_d;
  logic [IdBits-1:0]      id_q, id_d;
  logic [BeatBits-1:0]    addr_q, addr_d;    // beat address of the next piece
  logic [8:0]             left_q, left_d;    // beats still to split
  logic                   two;         // the next piece has two beats
  logic                   last;        // ... and ends the burst
  logic [PortIdxBits-1:0] port;
  logic                   go;          // issue it now
  logic                   port_free;   // the request register of `port` is empty or emptying

  logic [Ports-1:0]       req_ready;   // each port's request register can take a piece

  always_comb begin
    two       = !addr_q[0] && left_q >= 9'd2;
    last      = left_q == (two ? 9'd2 : 9'd1);
    port      = port_of(addr_q);
    port_free = 1'b0;
    for (int unsigned p = 0; p < Ports; p++) begin
      if (port == PortIdxBits'(p)) port_free = req_ready[p];
    end
    go = busy_q && !stall_i && (err_q || port_free);
  end

  assign s_ready_o    = !busy_q || (go && (err_q || last));
  assign piece_o      = go;
  assign piece_port_o = port;
  assign piece_two_o  = two;
  assign piece_last_o = err_q || last;
  assign piece_err_o  = err_q;
  assign piece_left_o = left_q;
  assign piece_id_o   = id_q;

  always_comb begin
    busy_d = busy_q;
    err_d  = err_q;
    id_d   = id_q;
    addr_d = addr_q;
    left_d = left_q;
    if (go) begin
      addr_d = addr_q + BeatBits'(two ? 2 : 1);
      left_d = left_q - (two ? 9'd2 : 9'd1);
      if (err_q || last) busy_d = 1'b0;
    end
    if (s_valid_i && s_ready_o) begin
      busy_d = 1'b1;
      err_d  = bad_burst(s_addr_i, s_len_i, s_size_i, s_burst_i);
      id_d   = s_id_i;
      addr_d = s_addr_i[AddrBits-1:5];
      left_d = {1'b0, s_len_i} + 9'd1;
    end
  end
  `TPU_FF(busy_q, busy_d, 1'b0)
  `TPU_FF(err_q, err_d, 1'b0)
  `TPU_FF(id_q, id_d, '0)
  `TPU_FF(addr_q, addr_d, '0)
  `TPU_FF(left_q, left_d, '0)

  // ----------------------------------------------------------------------------------------------
  // One request register per master port
  // ----------------------------------------------------------------------------------------------
  for (genvar p = 0; p < Ports; p++) begin : gen_port
    logic [IdBits-1:0]    req_id;
    logic [MAddrBits-1:0] req_addr;
    logic                 req_two;

    tpu_stream_reg #(.Width(IdBits + MAddrBits + 1)) u_req (
      .clk_i, .rst_ni,
      .in_valid_i(go && !err_q && port == PortIdxBits'(p)), .in_ready_o(req_ready[p]),
      .in_data_i({id_q, local_of(addr_q), two}),
      .out_valid_o(m_valid_o[p]), .out_ready_i(m_ready_i[p]),
      .out_data_o({req_id, req_addr, req_two})
    );
    assign m_id_o[p*IdBits +: IdBits]         = req_id;
    assign m_addr_o[p*MAddrBits +: MAddrBits] = req_addr;
    assign m_len_o[p*8 +: 8]                  = {7'd0, req_two};
    assign m_size_o[p*3 +: 3]                 = 3'd5;
    assign m_burst_o[p*2 +: 2]                = tpu_pkg::AxiBurstIncr;
  end

  // ----------------------------------------------------------------------------------------------
  // Assertions
  // ----------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  a_slave_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                 s_valid_i && !s_ready_o |=> s_valid_i && $stable(s_id_i) &&
                                 $stable(s_addr_i) && $stable(s_len_i) && $stable(s_size_i) &&
                                 $stable(s_burst_i))
    else $error("tpu_hbm_splitter: the master changed its request while waiting");
  for (genvar p = 0; p < Ports; p++) begin : gen_assert
    a_master_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    m_valid_o[p] && !m_ready_i[p] |=> m_valid_o[p] &&
                                    $stable(m_id_o[p*IdBits +: IdBits]) &&
                                    $stable(m_addr_o[p*MAddrBits +: MAddrBits]) &&
                                    $stable(m_len_o[p*8 +: 8]))
      else $error("tpu_hbm_splitter: the request of port %0d changed while waiting", p);
  end
  a_left_in_range: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    busy_q |-> left_q != '0 && left_q <= 9'd256)
    else $error("tpu_hbm_splitter: %0d beats left of a burst", left_q);
`endif

endmodule
