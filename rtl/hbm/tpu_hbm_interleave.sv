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
  // FIFO (whose data goes where) and the B tracker (whose B to wait for).
  // ----------------------------------------------------------------------------------------------
  logic                   ws_go, ws_two, ws_last, ws_err;
  logic [PortIdxBits-1:0] ws_port;
  logic [8:0]             ws_left;
  logic [IdBits-1:0]      ws_id;
  logic                   bt_full, wf_full;

  tpu_hbm_splitter #(
    .Ports(Ports), .AddrBits(AddrBits), .PortAddrBits(PortAddrBits), .MAddrBits(MAddrBits),
    .IdBits(IdBits)
  ) u_aw_split (
    .clk_i(clk_i), .rst_ni(rst_ni),
    .s_valid_i(s_aw_valid_i), .s_ready_o(s_aw_ready_o), .s_id_i(s_aw_id_i),
    .s_addr_i(s_aw_addr_i), .s_len_i(s_aw_len_i), .s_size_i(s_aw_size_i),
    .s_burst_i(s_aw_burst_i),
    .stall_i(bt_full || wf_full),
    .piece_o(ws_go), .piece_port_o(ws_port), .piece_two_o(ws_two), .piece_last_o(ws_last),
    .piece_err_o(ws_err), .piece_left_o(ws_left), .piece_id_o(ws_id),
    .m_valid_o(m_aw_valid_o), .m_ready_i(m_aw_ready_i), .m_id_o(m_aw_id_o),
    .m_addr_o(m_aw_addr_o), .m_len_o(m_aw_len_o), .m_size_o(m_aw_size_o),
    .m_burst_o(m_aw_burst_o)
  );

  // ----------------------------------------------------------------------------------------------
  // W FIFO and steering: the oldest piece's beats go to its port (or are dropped for a refused
  // burst: one entry of up to 256 beats), each piece ending with WLAST.
  // ----------------------------------------------------------------------------------------------
  logic [PortIdxBits-1:0] wf_port_q [WDepth];
  logic [7:0]             wf_beats_q[WDepth];  // beats - 1
  logic                   wf_drain_q[WDepth];  // a refused burst: take and drop
  logic                   wf_last_q [WDepth];  // the burst's last piece
  logic [WfBits-1:0]      wf_head_q, wf_tail_q;
  logic [WfBits:0]        wf_cnt_q;
  logic [7:0]             w_cnt_q;             // beats of the head piece taken
  logic                   w_err_q;             // a WLAST mismatch earlier in the current burst

  logic                   wf_valid, wf_drain, w_piece_end, w_burst_end, w_mismatch, w_fire, wf_pop;
  logic [PortIdxBits-1:0] wf_port;
  logic                   wp_ready;            // the head piece's port takes a beat

  assign wf_full = wf_cnt_q == (WfBits + 1)'(WDepth);

  always_comb begin
    wf_valid    = wf_cnt_q != '0;
    wf_port     = wf_port_q[wf_head_q];
    wf_drain    = wf_drain_q[wf_head_q];
    w_piece_end = w_cnt_q == wf_beats_q[wf_head_q];
    w_burst_end = w_piece_end && wf_last_q[wf_head_q];
    wp_ready    = 1'b0;
    for (int unsigned p = 0; p < Ports; p++) begin
      if (wf_port == PortIdxBits'(p)) wp_ready = m_w_ready_i[p];
    end
    s_w_ready_o = wf_valid && (wf_drain || wp_ready);
    w_fire      = s_w_valid_i && s_w_ready_o;
    wf_pop      = w_fire && w_piece_end;
    w_mismatch  = s_w_last_i != w_burst_end;
  end

  for (genvar p = 0; p < Ports; p++) begin : gen_w
    assign m_w_valid_o[p]            = s_w_valid_i && wf_valid && !wf_drain &&
                                       wf_port == PortIdxBits'(p);
    assign m_w_data_o[p*256 +: 256]  = s_w_data_i;
    assign m_w_strb_o[p*32 +: 32]    = s_w_strb_i;
    assign m_w_last_o[p]             = w_piece_end;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wf_head_q <= '0;
      wf_tail_q <= '0;
      wf_cnt_q  <= '0;
      w_cnt_q   <= '0;
      w_err_q   <= 1'b0;
    end else begin
      if (ws_go) wf_tail_q <= wf_tail_q + 1'b1;
      if (wf_pop) wf_head_q <= wf_head_q + 1'b1;
      wf_cnt_q <= wf_cnt_q + (WfBits + 1)'(ws_go) - (WfBits + 1)'(wf_pop);
      if (w_fire) begin
        w_cnt_q <= w_piece_end ? 8'd0 : w_cnt_q + 8'd1;
        w_err_q <= w_burst_end ? 1'b0 : (w_err_q || w_mismatch);
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (ws_go) begin
      wf_port_q[wf_tail_q]  <= ws_port;
      wf_beats_q[wf_tail_q] <= ws_err ? 8'(ws_left - 9'd1) : {7'd0, ws_two};
      wf_drain_q[wf_tail_q] <= ws_err;
      wf_last_q[wf_tail_q]  <= ws_last;
    end
  end

  // WLAST errors of bursts whose data is all taken, in burst order (at most one per burst in the
  // B tracker, so MaxOutstanding entries never overflow).
  logic                 we_q[MaxOutstanding];
  logic [OutBits-1:0]   we_head_q, we_tail_q;
  logic [OutBits:0]     we_cnt_q;
  logic                 we_push, we_pop, we_valid;

  assign we_push  = w_fire && w_burst_end;
  assign we_valid = we_cnt_q != '0;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      we_head_q <= '0;
      we_tail_q <= '0;
      we_cnt_q  <= '0;
    end else begin
      if (we_push) we_tail_q <= we_tail_q + 1'b1;
      if (we_pop) we_head_q <= we_head_q + 1'b1;
      we_cnt_q <= we_cnt_q + (OutBits + 1)'(we_push) - (OutBits + 1)'(we_pop);
    end
  end

  always_ff @(posedge clk_i) begin
    if (we_push) we_q[we_tail_q] <= w_err_q || w_mismatch;
  end

  // ----------------------------------------------------------------------------------------------
  // B tracker and merger: the pieces' B responses in issue order, one B per burst.
  // ----------------------------------------------------------------------------------------------
  logic [PortIdxBits-1:0] bt_port_q [MaxOutstanding];
  logic [IdBits-1:0]      bt_id_q   [MaxOutstanding];
  logic                   bt_last_q [MaxOutstanding];  // the burst's last piece
  logic                   bt_local_q[MaxOutstanding];  // a refused burst (no piece was sent)
  logic [OutBits-1:0]     bt_head_q, bt_tail_q;
  logic [OutBits:0]       bt_cnt_q;
  logic                   b_err_q;                     // an error in an earlier piece of the burst
  logic                   sb_valid_q;
  logic [IdBits-1:0]      sb_id_q;
  logic [1:0]             sb_resp_q;

  logic                   bt_valid, bt_local, bt_last, bt_pop, b_end, b_can_end, pb_valid;
  logic [PortIdxBits-1:0] bt_port;
  logic [IdBits-1:0]      bt_id;
  logic [1:0]             pb_resp;

  assign bt_full = bt_cnt_q == (OutBits + 1)'(MaxOutstanding);

  always_comb begin
    bt_valid = bt_cnt_q != '0;
    bt_port  = bt_port_q[bt_head_q];
    bt_local = bt_local_q[bt_head_q];
    bt_last  = bt_last_q[bt_head_q];
    bt_id    = bt_id_q[bt_head_q];
    pb_valid = 1'b0;
    pb_resp  = '0;
    for (int unsigned p = 0; p < Ports; p++) begin
      if (bt_port == PortIdxBits'(p)) begin
        pb_valid = m_b_valid_i[p];
        pb_resp  = m_b_resp_i[p*2 +: 2];
      end
    end
    // The burst's B goes into the output register once its data is all taken.
    b_can_end = (!sb_valid_q || s_b_ready_i) && we_valid;
    bt_pop    = bt_valid && (bt_local ? b_can_end : (pb_valid && (!bt_last || b_can_end)));
    b_end     = bt_pop && bt_last;
    we_pop    = b_end;
  end

  for (genvar p = 0; p < Ports; p++) begin : gen_b
    assign m_b_ready_o[p] = bt_valid && !bt_local && (!bt_last || b_can_end) &&
                            bt_port == PortIdxBits'(p);
  end

  assign s_b_valid_o = sb_valid_q;
  assign s_b_id_o    = sb_id_q;
  assign s_b_resp_o  = sb_resp_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      bt_head_q  <= '0;
      bt_tail_q  <= '0;
      bt_cnt_q   <= '0;
      b_err_q    <= 1'b0;
      sb_valid_q <= 1'b0;
      sb_id_q    <= '0;
      sb_resp_q  <= '0;
    end else begin
      if (ws_go) bt_tail_q <= bt_tail_q + 1'b1;
      if (bt_pop) bt_head_q <= bt_head_q + 1'b1;
      bt_cnt_q <= bt_cnt_q + (OutBits + 1)'(ws_go) - (OutBits + 1)'(bt_pop);
      if (s_b_ready_i) sb_valid_q <= 1'b0;
      if (bt_pop) begin
        b_err_q <= b_end ? 1'b0 : (b_err_q || pb_resp != tpu_pkg::AxiRespOkay);
      end
      if (b_end) begin
        sb_valid_q <= 1'b1;
        sb_id_q    <= bt_id;
        sb_resp_q  <= (bt_local || b_err_q || pb_resp != tpu_pkg::AxiRespOkay || we_q[we_head_q])
                     ? tpu_pkg::AxiRespSlvErr : tpu_pkg::AxiRespOkay;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (ws_go) begin
      bt_port_q[bt_tail_q]  <= ws_port;
      bt_id_q[bt_tail_q]    <= ws_id;
      bt_last_q[bt_tail_q]  <= ws_last;
      bt_local_q[bt_tail_q] <= ws_err;
    end
  end

  // ----------------------------------------------------------------------------------------------
  // Read splitter: one burst at a time, one piece per cycle into a port's AR register and the R
  // tracker (a refused burst: one local entry that answers all its beats).
  // ----------------------------------------------------------------------------------------------
  logic                   rs_go, rs_two, rs_last, rs_err;
  logic [PortIdxBits-1:0] rs_port;
  logic [8:0]             rs_left;
  logic [IdBits-1:0]      rs_id;
  logic                   rt_full;

  tpu_hbm_splitter #(
    .Ports(Ports), .AddrBits(AddrBits), .PortAddrBits(PortAddrBits), .MAddrBits(MAddrBits),
    .IdBits(IdBits)
  ) u_ar_split (
    .clk_i(clk_i), .rst_ni(rst_ni),
    .s_valid_i(s_ar_valid_i), .s_ready_o(s_ar_ready_o), .s_id_i(s_ar_id_i),
    .s_addr_i(s_ar_addr_i), .s_len_i(s_ar_len_i), .s_size_i(s_ar_size_i),
    .s_burst_i(s_ar_burst_i),
    .stall_i(rt_full),
    .piece_o(rs_go), .piece_port_o(rs_port), .piece_two_o(rs_two), .piece_last_o(rs_last),
    .piece_err_o(rs_err), .piece_left_o(rs_left), .piece_id_o(rs_id),
    .m_valid_o(m_ar_valid_o), .m_ready_i(m_ar_ready_i), .m_id_o(m_ar_id_o),
    .m_addr_o(m_ar_addr_o), .m_len_o(m_ar_len_o), .m_size_o(m_ar_size_o),
    .m_burst_o(m_ar_burst_o)
  );

  // ----------------------------------------------------------------------------------------------
  // R tracker and merger: beats from the oldest piece's port only.
  // ----------------------------------------------------------------------------------------------
  logic [PortIdxBits-1:0] rt_port_q [MaxOutstanding];
  logic [IdBits-1:0]      rt_id_q   [MaxOutstanding];
  logic [7:0]             rt_beats_q[MaxOutstanding];  // beats - 1
  logic                   rt_last_q [MaxOutstanding];  // the burst's last piece
  logic                   rt_local_q[MaxOutstanding];  // a refused burst: answered here
  logic [OutBits-1:0]     rt_head_q, rt_tail_q;
  logic [OutBits:0]       rt_cnt_q;
  logic [7:0]             r_cnt_q;                     // beats of the head piece sent

  logic                   rt_valid, rt_local, r_piece_end, r_fire, rt_pop, pr_valid, pr_last;
  logic [PortIdxBits-1:0] rt_port;
  logic [255:0]           pr_data;
  logic [1:0]             pr_resp;
  logic [IdBits-1:0]      pr_id, rt_id;

  assign rt_full = rt_cnt_q == (OutBits + 1)'(MaxOutstanding);

  always_comb begin
    rt_valid = rt_cnt_q != '0;
    rt_port  = rt_port_q[rt_head_q];
    rt_local = rt_local_q[rt_head_q];
    pr_valid = 1'b0;
    pr_data  = '0;
    pr_resp  = '0;
    pr_id    = '0;
    pr_last  = 1'b0;
    for (int unsigned p = 0; p < Ports; p++) begin
      if (rt_port == PortIdxBits'(p)) begin
        pr_valid = m_r_valid_i[p];
        pr_data  = m_r_data_i[p*256 +: 256];
        pr_resp  = m_r_resp_i[p*2 +: 2];
        pr_id    = m_r_id_i[p*IdBits +: IdBits];
        pr_last  = m_r_last_i[p];
      end
    end
    r_piece_end = r_cnt_q == rt_beats_q[rt_head_q];
    s_r_valid_o = rt_valid && (rt_local || pr_valid);
    rt_id       = rt_id_q[rt_head_q];
    s_r_id_o    = rt_id;
    s_r_data_o  = rt_local ? '0 : pr_data;
    s_r_resp_o  = rt_local ? tpu_pkg::AxiRespSlvErr : pr_resp;
    s_r_last_o  = rt_last_q[rt_head_q] && r_piece_end;
    r_fire      = s_r_valid_o && s_r_ready_i;
    rt_pop      = r_fire && r_piece_end;
  end

  for (genvar p = 0; p < Ports; p++) begin : gen_r
    assign m_r_ready_o[p] = rt_valid && !rt_local && s_r_ready_i && rt_port == PortIdxBits'(p);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rt_head_q <= '0;
      rt_tail_q <= '0;
      rt_cnt_q  <= '0;
      r_cnt_q   <= '0;
    end else begin
      if (rs_go) rt_tail_q <= rt_tail_q + 1'b1;
      if (rt_pop) rt_head_q <= rt_head_q + 1'b1;
      rt_cnt_q <= rt_cnt_q + (OutBits + 1)'(rs_go) - (OutBits + 1)'(rt_pop);
      if (r_fire) r_cnt_q <= r_piece_end ? 8'd0 : r_cnt_q + 8'd1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rs_go) begin
      rt_port_q[rt_tail_q]  <= rs_port;
      rt_id_q[rt_tail_q]    <= rs_id;
      rt_beats_q[rt_tail_q] <= rs_err ? 8'(rs_left - 9'd1) : {7'd0, rs_two};
      rt_last_q[rt_tail_q]  <= rs_last;
      rt_local_q[rt_tail_q] <= rs_err;
    end
  end

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
                     m_b_id_i[p*IdBits +: IdBits] == bt_id)
      else $error("tpu_hbm_interleave: B of port %0d is not the tracked piece's", p);
  end
  a_r_is_tracked: assert property (@(posedge clk_i) disable iff (!rst_ni)
                   r_fire && !rt_local |-> pr_last == r_piece_end && pr_id == rt_id)
    else $error("tpu_hbm_interleave: a port's R beat does not match the tracked piece");
  a_wlast_fifo_no_overflow: assert property (@(posedge clk_i) disable iff (!rst_ni)
                   we_push |-> we_cnt_q != (OutBits + 1)'(MaxOutstanding))
    else $error("tpu_hbm_interleave: WLAST-error FIFO overflow");
  a_b_after_last_w: assert property (@(posedge clk_i) disable iff (!rst_ni)
                   bt_valid && !bt_local && bt_last && pb_valid |-> we_valid)
    else $error("tpu_hbm_interleave: a write's last B came before its last W beat");
`endif

endmodule
