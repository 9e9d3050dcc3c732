// SPDX-License-Identifier: Apache-2.0
// Address-interleaving AXI4 front end of the HBM subsystem: one slave port with global addresses
// in front of Ports master ports (one per pseudo-channel, wired 1:1 to tpu_hbm_subsys's ports).
//
// Address map (global byte address, from bit 0): 6 bits of byte in a 64-byte block, PortBits =
// log2(Ports) bits of port (port = 2 * channel + pc), then the port-local block address:
//   port  = global[6 +: PortBits]
//   local = ((global >> (6 + PortBits)) << 6) | global[5:0]
// so a sequential stream visits every port in turn, 64 bytes at a time.
//
// Splitting: a burst (INCR, 32-byte beats, 1..256 beats, inside one 4 KB page) is cut at 64-byte
// boundaries into pieces of 1 or 2 beats; each piece goes as its own burst (the burst's ID, AxLEN
// 0 or 1, AxSIZE 5, INCR) to the port its address maps to, with the port-local address. Each
// direction's splitter takes one burst at a time but issues one piece per cycle and takes the
// next burst in the cycle its last piece goes, so the pieces of consecutive bursts are in flight
// on different ports at once (up to MaxOutstanding pieces per direction). Every master port has
// its own AW and AR register, so a port that is slow to accept does not hold up the others until
// the splitter needs it again.
//
// Merging: a tracking FIFO per direction records, in issue order, which port each piece went to.
// R beats are taken only from the port of the oldest piece (a port answers its own pieces in
// order), so the master gets the beats of every burst in order, bursts in acceptance order (for
// every ID), with the burst's ID and RLAST on its last beat. W beats are steered to the port of
// the oldest piece whose data is still due (a third FIFO, WDepth pieces), each piece with its own
// WLAST. B comes once per burst, after the B of every one of its pieces, SLVERR if any of them
// was not OKAY. A port answers B only once the write is queued where a later read of the port
// sees it, so a read accepted here after a write's B observes that write, as on a single port.
// Responses of the ports are passed through combinationally (R: valid, data, resp; B feeds a
// register), so a beat costs no extra cycle.
//
// Errors: bursts the ports would refuse (WRAP or FIXED, AxSIZE other than 5, a start address not
// aligned to 32 bytes, crossing a 4 KB boundary, beyond Ports x 2^PortAddrBits bytes) are answered
// here without touching any port, in order with the other bursts: every R beat SLVERR with zero
// data; for a write, its W beats are taken and dropped and B is SLVERR. A write burst whose WLAST
// does not match its AWLEN is written as counted (the pieces carry their own WLAST) and answered
// SLVERR. B never comes before the burst's last W beat was taken.
`include "tpu_axi.svh"
`include "tpu_ff.svh"
module tpu_hbm_interleave #(
  parameter int unsigned Ports          = 16,  // master ports (power of two, 1..32)
  parameter int unsigned AddrBits       = 40,  // global (slave-side) byte address width
  parameter int unsigned PortAddrBits   = 30,  // log2 of the bytes behind one master port
  parameter int unsigned MAddrBits      = 32,  // master-side (port-local) address width
  parameter int unsigned IdBits         = 6,
  parameter int unsigned MaxOutstanding = 32,  // pieces in flight per direction (power of two)
  parameter int unsigned WDepth         = 8,   // pieces whose W data is still due (power of two)
  localparam int unsigned PortBits    = $clog2(Ports),
  localparam int unsigned PortIdxBits = (PortBits == 0) ? 1 : PortBits,
  localparam int unsigned OutBits     = $clog2(MaxOutstanding),
  localparam int unsigned WfBits      = $clog2(WDepth)
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  // AXI4 slave port (global addresses).
  `TPU_AXI_SLAVE_PORTS(s_, 1, IdBits, AddrBits),
  // AXI4 master ports, one per pseudo-channel, lanes flattened (port p in bits [p*W +: W]).
  `TPU_AXI_MASTER_PORTS(m_, Ports, IdBits, MAddrBits)
);

  if (Ports < 1 || Ports > 32 || (1 << PortBits) != Ports) begin : gen_bad_ports
    $error("tpu_hbm_interleave: Ports must be a power of two in 1..32 (got %0d)", Ports);
  end
  if (PortAddrBits < 12 || PortAddrBits > MAddrBits) begin : gen_bad_port_addr
    $error("tpu_hbm_interleave: PortAddrBits (%0d) must be in 12..MAddrBits (%0d)", PortAddrBits,
           MAddrBits);
  end
  if (AddrBits < 12 + PortBits || AddrBits > 64) begin : gen_bad_addr
    $error("tpu_hbm_interleave: AddrBits (%0d) must be in %0d..64", AddrBits, 12 + PortBits);
  end
  if (MaxOutstanding < 2 || (1 << OutBits) != MaxOutstanding) begin : gen_bad_out
    $error("tpu_hbm_interleave: MaxOutstanding must be a power of two >= 2 (got %0d)",
           MaxOutstanding);
  end
  if (WDepth < 2 || (1 << WfBits) != WDepth) begin : gen_bad_wdepth
    $error("tpu_hbm_interleave: WDepth must be a power of two >= 2 (got %0d)", WDepth);
  end

  // ----------------------------------------------------------------------------------------------
  // Write splitter: one burst at a time, one piece per cycle into a port's AW register, the W
  // route FIFO (whose data goes where) and the B tracker (whose B to wait for).
  // ----------------------------------------------------------------------------------------------
  logic                   aw_piece, aw_piece_two, aw_piece_last, aw_piece_err;
  logic [PortIdxBits-1:0] aw_piece_port;
  logic [8:0]             aw_piece_left;
  logic [IdBits-1:0]      aw_piece_id;
  logic                   b_track_full, w_route_full;

  tpu_hbm_splitter #(
    .Ports(Ports), .AddrBits(AddrBits), .PortAddrBits(PortAddrBits), .MAddrBits(MAddrBits),
    .IdBits(IdBits)
  ) u_aw_split (
    .clk_i(clk_i), .rst_ni(rst_ni),
    .s_valid_i(s_aw_valid_i), .s_ready_o(s_aw_ready_o), .s_id_i(s_aw_id_i),
    .s_addr_i(s_aw_addr_i), .s_len_i(s_aw_len_i), .s_size_i(s_aw_size_i),
    .s_burst_i(s_aw_burst_i),
    .stall_i(b_track_full || w_route_full),
    .piece_o(aw_piece), .piece_port_o(aw_piece_port), .piece_two_o(aw_piece_two),
    .piece_last_o(aw_piece_last), .piece_err_o(aw_piece_err), .piece_left_o(aw_piece_left),
    .piece_id_o(aw_piece_id),
    .m_valid_o(m_aw_valid_o), .m_ready_i(m_aw_ready_i), .m_id_o(m_aw_id_o),
    .m_addr_o(m_aw_addr_o), .m_len_o(m_aw_len_o), .m_size_o(m_aw_size_o),
    .m_burst_o(m_aw_burst_o)
  );

  // ----------------------------------------------------------------------------------------------
  // W route FIFO and steering: the oldest piece's beats go to its port (or are dropped for a
  // refused burst: one entry of up to 256 beats), each piece ending with WLAST.
  // Entry: {port, beats - 1, drain (a refused burst: take and drop), the burst's last piece}.
  // ----------------------------------------------------------------------------------------------
  localparam int unsigned RouteW = PortIdxBits + 10;

  logic                   w_route_empty, w_route_valid, w_route_drain, w_route_last, w_route_pop;
  logic [PortIdxBits-1:0] w_route_port;
  logic [7:0]             w_route_beats;
  logic [RouteW-1:0]      w_route_head;
  logic [7:0]             w_count_q, w_count_d; // beats of the head piece taken
  logic                   w_err_q, w_err_d;     // a WLAST mismatch earlier in the current burst
  logic                   w_piece_end, w_burst_end, w_mismatch, w_fire;
  logic                   port_w_ready;        // the head piece's port takes a beat

  // Yosys 0.23 sizes a cast inside a conditional inside a port's concatenation one bit too wide
  // (and drops the port field): the entry is built in a signal of its own.
  logic [7:0]             aw_piece_beats;      // beats - 1 (a refused burst: all its beats)
  logic [RouteW-1:0]      w_route_entry;

  assign aw_piece_beats = aw_piece_err ? 8'(aw_piece_left - 9'd1) : {7'd0, aw_piece_two};
  assign w_route_entry  = {aw_piece_port, aw_piece_beats, aw_piece_err, aw_piece_last};

  tpu_fifo #(.Width(RouteW), .Depth(WDepth)) u_w_route (
    .clk_i, .rst_ni, .flush_i(1'b0),
    .push_i(aw_piece), .data_i(w_route_entry),
    .full_o(w_route_full),
    .pop_i(w_route_pop), .data_o(w_route_head), .empty_o(w_route_empty), .count_o()
  );

  always_comb begin
    w_route_valid = !w_route_empty;
    {w_route_port, w_route_beats, w_route_drain, w_route_last} = w_route_head;
    w_piece_end   = w_count_q == w_route_beats;
    w_burst_end   = w_piece_end && w_route_last;
    port_w_ready  = 1'b0;
    for (int unsigned p = 0; p < Ports; p++) begin
      if (w_route_port == PortIdxBits'(p)) port_w_ready = m_w_ready_i[p];
    end
    s_w_ready_o = w_route_valid && (w_route_drain || port_w_ready);
    w_fire      = s_w_valid_i && s_w_ready_o;
    w_route_pop = w_fire && w_piece_end;
    w_mismatch  = s_w_last_i != w_burst_end;
  end

  for (genvar p = 0; p < Ports; p++) begin : gen_w
    assign m_w_valid_o[p]            = s_w_valid_i && w_route_valid && !w_route_drain &&
                                       w_route_port == PortIdxBits'(p);
    assign m_w_data_o[p*256 +: 256]  = s_w_data_i;
    assign m_w_strb_o[p*32 +: 32]    = s_w_strb_i;
    assign m_w_last_o[p]             = w_piece_end;
  end

  assign w_count_d = w_piece_end ? 8'd0 : w_count_q + 8'd1;
  assign w_err_d   = w_burst_end ? 1'b0 : (w_err_q || w_mismatch);
  `TPU_FFL(w_count_q, w_count_d, w_fire, '0)
  `TPU_FFL(w_err_q, w_err_d, w_fire, 1'b0)

  // WLAST errors of bursts whose data is all taken, in burst order (at most one per burst in the
  // B tracker, so MaxOutstanding entries never overflow).
  logic wlast_err_push, wlast_err_pop, wlast_err_empty, wlast_err_valid, wlast_err;

  assign wlast_err_push  = w_fire && w_burst_end;
  assign wlast_err_valid = !wlast_err_empty;

  tpu_fifo #(.Width(1), .Depth(MaxOutstanding)) u_wlast_err (
    .clk_i, .rst_ni, .flush_i(1'b0),
    .push_i(wlast_err_push), .data_i(w_err_q || w_mismatch), .full_o(),
    .pop_i(wlast_err_pop), .data_o(wlast_err), .empty_o(wlast_err_empty), .count_o()
  );

  // ----------------------------------------------------------------------------------------------
  // B tracker and merger: the pieces' B responses in issue order, one B per burst.
  // Entry: {port, ID, the burst's last piece, local (a refused burst: no piece was sent)}.
  // ----------------------------------------------------------------------------------------------
  localparam int unsigned BTrackW = PortIdxBits + IdBits + 2;

  logic                   b_err_q;                     // an error in an earlier piece of the burst
  logic                   b_out_ready;                 // the output register can take a B

  logic                   b_track_empty, b_track_valid, b_track_local, b_track_last, b_track_pop;
  logic                   b_end, b_can_end, port_b_valid;
  logic [PortIdxBits-1:0] b_track_port;
  logic [IdBits-1:0]      b_track_id;
  logic [BTrackW-1:0]     b_track_head;
  logic [1:0]             port_b_resp;

  tpu_fifo #(.Width(BTrackW), .Depth(MaxOutstanding)) u_b_track (
    .clk_i, .rst_ni, .flush_i(1'b0),
    .push_i(aw_piece), .data_i({aw_piece_port, aw_piece_id, aw_piece_last, aw_piece_err}),
    .full_o(b_track_full),
    .pop_i(b_track_pop), .data_o(b_track_head), .empty_o(b_track_empty), .count_o()
  );

  always_comb begin
    b_track_valid = !b_track_empty;
    {b_track_port, b_track_id, b_track_last, b_track_local} = b_track_head;
    port_b_valid  = 1'b0;
    port_b_resp   = '0;
    for (int unsigned p = 0; p < Ports; p++) begin
      if (b_track_port == PortIdxBits'(p)) begin
        port_b_valid = m_b_valid_i[p];
        port_b_resp  = m_b_resp_i[p*2 +: 2];
      end
    end
    // The burst's B goes into the output register once its data is all taken.
    b_can_end     = b_out_ready && wlast_err_valid;
    b_track_pop   = b_track_valid &&
                    (b_track_local ? b_can_end : (port_b_valid && (!b_track_last || b_can_end)));
    b_end         = b_track_pop && b_track_last;
    wlast_err_pop = b_end;
  end

  for (genvar p = 0; p < Ports; p++) begin : gen_b
    assign m_b_ready_o[p] = b_track_valid && !b_track_local && (!b_track_last || b_can_end) &&
                            b_track_port == PortIdxBits'(p);
  end

  // The burst's B: SLVERR if it was refused, any piece's B was not OKAY or its WLAST was wrong.
  tpu_stream_reg #(.Width(IdBits + 2)) u_b_out (
    .clk_i, .rst_ni,
    .in_valid_i(b_end), .in_ready_o(b_out_ready),
    .in_data_i({b_track_id,
                (b_track_local || b_err_q || port_b_resp != tpu_pkg::AxiRespOkay || wlast_err)
                ? tpu_pkg::AxiRespSlvErr : tpu_pkg::AxiRespOkay}),
    .out_valid_o(s_b_valid_o), .out_ready_i(s_b_ready_i), .out_data_o({s_b_id_o, s_b_resp_o})
  );

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      b_err_q <= 1'b0;
    end else if (b_track_pop) begin
      b_err_q <= b_end ? 1'b0 : (b_err_q || port_b_resp != tpu_pkg::AxiRespOkay);
    end
  end

  // ----------------------------------------------------------------------------------------------
  // Read splitter: one burst at a time, one piece per cycle into a port's AR register and the R
  // tracker (a refused burst: one local entry that answers all its beats).
  // ----------------------------------------------------------------------------------------------
  logic                   ar_piece, ar_piece_two, ar_piece_last, ar_piece_err;
  logic [PortIdxBits-1:0] ar_piece_port;
  logic [8:0]             ar_piece_left;
  logic [IdBits-1:0]      ar_piece_id;
  logic                   r_track_full;

  tpu_hbm_splitter #(
    .Ports(Ports), .AddrBits(AddrBits), .PortAddrBits(PortAddrBits), .MAddrBits(MAddrBits),
    .IdBits(IdBits)
  ) u_ar_split (
    .clk_i(clk_i), .rst_ni(rst_ni),
    .s_valid_i(s_ar_valid_i), .s_ready_o(s_ar_ready_o), .s_id_i(s_ar_id_i),
    .s_addr_i(s_ar_addr_i), .s_len_i(s_ar_len_i), .s_size_i(s_ar_size_i),
    .s_burst_i(s_ar_burst_i),
    .stall_i(r_track_full),
    .piece_o(ar_piece), .piece_port_o(ar_piece_port), .piece_two_o(ar_piece_two),
    .piece_last_o(ar_piece_last), .piece_err_o(ar_piece_err), .piece_left_o(ar_piece_left),
    .piece_id_o(ar_piece_id),
    .m_valid_o(m_ar_valid_o), .m_ready_i(m_ar_ready_i), .m_id_o(m_ar_id_o),
    .m_addr_o(m_ar_addr_o), .m_len_o(m_ar_len_o), .m_size_o(m_ar_size_o),
    .m_burst_o(m_ar_burst_o)
  );

  // ----------------------------------------------------------------------------------------------
  // R tracker and merger: beats from the oldest piece's port only.
  // Entry: {port, ID, beats - 1, the burst's last piece, local (a refused burst: answered here)}.
  // ----------------------------------------------------------------------------------------------
  localparam int unsigned RTrackW = PortIdxBits + IdBits + 10;

  logic [7:0]             r_count_q, r_count_d;                 // beats of the head piece sent
  logic                   r_track_empty, r_track_valid, r_track_local, r_track_last, r_track_pop;
  logic                   r_piece_end, r_fire, port_r_valid, port_r_last;
  logic [PortIdxBits-1:0] r_track_port;
  logic [7:0]             r_track_beats;
  logic [RTrackW-1:0]     r_track_head;
  logic [255:0]           port_r_data;
  logic [1:0]             port_r_resp;
  logic [IdBits-1:0]      port_r_id, r_track_id;

  logic [7:0]             ar_piece_beats;              // beats - 1 (see aw_piece_beats)
  logic [RTrackW-1:0]     r_track_entry;

  assign ar_piece_beats = ar_piece_err ? 8'(ar_piece_left - 9'd1) : {7'd0, ar_piece_two};
  assign r_track_entry  = {ar_piece_port, ar_piece_id, ar_piece_beats, ar_piece_last,
                           ar_piece_err};

  tpu_fifo #(.Width(RTrackW), .Depth(MaxOutstanding)) u_r_track (
    .clk_i, .rst_ni, .flush_i(1'b0),
    .push_i(ar_piece), .data_i(r_track_entry),
    .full_o(r_track_full),
    .pop_i(r_track_pop), .data_o(r_track_head), .empty_o(r_track_empty), .count_o()
  );

  always_comb begin
    r_track_valid = !r_track_empty;
    {r_track_port, r_track_id, r_track_beats, r_track_last, r_track_local} = r_track_head;
    port_r_valid  = 1'b0;
    port_r_data   = '0;
    port_r_resp   = '0;
    port_r_id     = '0;
    port_r_last   = 1'b0;
    for (int unsigned p = 0; p < Ports; p++) begin
      if (r_track_port == PortIdxBits'(p)) begin
        port_r_valid = m_r_valid_i[p];
        port_r_data  = m_r_data_i[p*256 +: 256];
        port_r_resp  = m_r_resp_i[p*2 +: 2];
        port_r_id    = m_r_id_i[p*IdBits +: IdBits];
        port_r_last  = m_r_last_i[p];
      end
    end
    r_piece_end = r_count_q == r_track_beats;
    s_r_valid_o = r_track_valid && (r_track_local || port_r_valid);
    s_r_id_o    = r_track_id;
    s_r_data_o  = r_track_local ? '0 : port_r_data;
    s_r_resp_o  = r_track_local ? tpu_pkg::AxiRespSlvErr : port_r_resp;
    s_r_last_o  = r_track_last && r_piece_end;
    r_fire      = s_r_valid_o && s_r_ready_i;
    r_track_pop = r_fire && r_piece_end;
  end

  for (genvar p = 0; p < Ports; p++) begin : gen_r
    assign m_r_ready_o[p] = r_track_valid && !r_track_local && s_r_ready_i &&
                            r_track_port == PortIdxBits'(p);
  end

  assign r_count_d = r_piece_end ? 8'd0 : r_count_q + 8'd1;
  `TPU_FFL(r_count_q, r_count_d, r_fire, '0)

  // The ports' B IDs are not needed (the tracker knows the burst); the assertions check them.
  logic unused_b_id;
  assign unused_b_id = ^m_b_id_i;

  // ----------------------------------------------------------------------------------------------
  // Assertions
  // ----------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // Slave side: what this module drives holds while it waits; what the master drives likewise.
  a_r_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                   s_r_valid_o && !s_r_ready_i |=> s_r_valid_o && $stable(s_r_data_o) &&
                   $stable(s_r_id_o) && $stable(s_r_resp_o) && $stable(s_r_last_o))
    else $error("tpu_hbm_interleave: R beat changed while waiting");
  a_b_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                   s_b_valid_o && !s_b_ready_i |=> s_b_valid_o && $stable(s_b_id_o) &&
                   $stable(s_b_resp_o))
    else $error("tpu_hbm_interleave: B changed while waiting");
  a_w_in_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                   s_w_valid_i && !s_w_ready_o |=> s_w_valid_i && $stable(s_w_data_i) &&
                   $stable(s_w_strb_i) && $stable(s_w_last_i))
    else $error("tpu_hbm_interleave: the master changed W while waiting");

  // Master side, per port: requests hold while they wait; answers belong to the tracked piece.
  for (genvar p = 0; p < Ports; p++) begin : gen_assert
    a_w_out_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                     m_w_valid_o[p] && !m_w_ready_i[p] |=> m_w_valid_o[p] &&
                     $stable(m_w_data_o[p*256 +: 256]) && $stable(m_w_strb_o[p*32 +: 32]) &&
                     $stable(m_w_last_o[p]))
      else $error("tpu_hbm_interleave: W of port %0d changed while waiting", p);
    a_b_is_tracked: assert property (@(posedge clk_i) disable iff (!rst_ni)
                     m_b_valid_i[p] && m_b_ready_o[p] |->
                     m_b_id_i[p*IdBits +: IdBits] == b_track_id)
      else $error("tpu_hbm_interleave: B of port %0d is not the tracked piece's", p);
  end
  a_r_is_tracked: assert property (@(posedge clk_i) disable iff (!rst_ni)
                   r_fire && !r_track_local |-> port_r_last == r_piece_end &&
                                    port_r_id == r_track_id)
    else $error("tpu_hbm_interleave: a port's R beat does not match the tracked piece");
  a_b_after_last_w: assert property (@(posedge clk_i) disable iff (!rst_ni)
                   b_track_valid && !b_track_local && b_track_last && port_b_valid |->
                   wlast_err_valid)
    else $error("tpu_hbm_interleave: a write's last B came before its last W beat");
`endif

endmodule
