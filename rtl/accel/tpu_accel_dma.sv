// SPDX-License-Identifier: Apache-2.0
// The accelerator's DMA over the whole HBM stack: read clients (program fetch, LOAD, accumulator
// LOAD) and one write client (STORE) on one side, every pseudo-channel's AXI4 port of
// tpu_hbm_subsys on the other (Ports = 2 x channels), moving up to Lanes 32-byte beats a cycle
// each way, so a sequential stream runs at the stack's bandwidth (Lanes = channels: N x 32 B).
//
// Address map (docs/hbm.md#map, as tpu_hbm_interleave): 64-byte blocks in turn over the ports,
//   port = global[6 +: log2(Ports)],  local = ((global >> (6 + log2(Ports))) << 6) | global[5:0].
//
// Requests are bursts of 1..16 beats, 32-byte aligned, inside one 4 KB page (tpu_accel_burst
// makes them). A read client's burst is taken by a round-robin arbiter (an unserved request
// keeps its grant) into two queues: tpu_accel_dma_issue's, whose head it cuts into
// 64-byte pieces for the ports' AR registers (up to Ports pieces a cycle), and the tracking queue
// (TrackDepth bursts in flight). Each port's R beats go into its own beat queue (BeatDepth
// beats; a full queue holds the port's R). The head of the tracking queue is answered from the
// queues of its pieces' ports: lane i carries the burst's beat k + i, the delivered prefix is the
// beats already there (1..Lanes, never past the burst's end), and the client takes any prefix
// of it (r_take_i), so answers come in request order for every client, beats in order, and a
// port's queue only ever holds the head's pieces before later ones (a port answers in order).
// Writes go the same way: the AW burst is cut into pieces for the ports' AW registers; the
// client's W beats (1..Lanes a cycle, never past its burst's end) go into the beat queues of
// their pieces' ports, each piece's last beat with WLAST, all of a cycle's beats or none; and
// B comes once per burst, when every piece's B is back, with the error if any piece had one.
// Every response carries the port's SLVERR through (r_err_o per beat, b_err_o per burst).
`include "tpu_axi.svh"
`include "tpu_channels.svh"
`include "tpu_ff.svh"
module tpu_accel_dma #(
  parameter int unsigned Ports      = 2,
  parameter int unsigned Lanes      = 1,    // beats a cycle each way, 1..Ports/2
  parameter int unsigned Clients    = 3,    // read clients
  parameter int unsigned AddrW      = 31,   // global byte address
  parameter int unsigned MAddrBits  = 32,   // port-local byte address
  parameter int unsigned IdBits     = 6,
  parameter int unsigned TrackDepth = 64,   // bursts in flight per direction (power of two)
  parameter int unsigned BeatDepth  = 16,   // beats buffered per port and direction (power of two)
  parameter int unsigned PieceDepth = 16,   // pieces queued per port and direction
  localparam int unsigned PortBits  = $clog2(Ports),
  localparam int unsigned CntW      = $clog2(Lanes + 1),
  localparam int unsigned CliW      = (Clients > 1) ? $clog2(Clients) : 1,
  `TPU_DMA_WIDTHS(AddrW, CntW, Lanes)
) (
  input  logic                        clk_i,
  input  logic                        rst_ni,
  // Read clients (dma_burst, dma_rd_beats: rtl/channels.json)
  input  logic [Clients-1:0]          ar_valid_i,
  output logic [Clients-1:0]          ar_ready_o,
  input  logic [Clients*DmaBurstW-1:0] ar_i,
  output logic [Clients-1:0]          r_valid_o,   // the oldest burst is this client's ...
  output logic [DmaRdBeatsW-1:0]      r_o,         // ... and these of its beats are here
  input  logic [Clients*CntW-1:0]     r_take_i,    // the client takes this many (<= r_o.count)
  // Write client (dma_burst, dma_wr_beats)
  input  logic                        aw_valid_i,
  output logic                        aw_ready_o,
  input  logic [DmaBurstW-1:0]        aw_i,
  input  logic                        w_valid_i,
  output logic                        w_ready_o,
  input  logic [DmaWrBeatsW-1:0]      w_i,
  output logic                        b_valid_o,   // a burst's response (always taken)
  output logic                        b_err_o,
  // Ports of tpu_hbm_subsys
  `TPU_AXI_MASTER_PORTS(m_, Ports, IdBits, MAddrBits)
);

  `TPU_DMA_TYPEDEFS(AddrW, CntW, Lanes)

  if (Lanes < 1 || 2 * Lanes > Ports) begin : gen_bad_lanes
    $error("tpu_accel_dma: Lanes must be in 1..Ports/2 (got %0d for %0d ports)", Lanes, Ports);
  end
  if (BeatDepth < 4 || (1 << $clog2(BeatDepth)) != BeatDepth) begin : gen_bad_depth
    $error("tpu_accel_dma: BeatDepth must be a power of two >= 4 (got %0d)", BeatDepth);
  end

  localparam int unsigned BPtrW = $clog2(BeatDepth);
  localparam int unsigned BCntW = $clog2(BeatDepth + 1);

  // Port of block-relative piece j of a burst whose first block is on port p0 (j mod Ports).
  function automatic logic [PortBits-1:0] port_of(input logic [PortBits-1:0] p0,
                                                  input logic [PortBits-1:0] j);
    port_of = p0 + j;
  endfunction

  // =============================================================================================
  // Reads
  // =============================================================================================
  logic [CliW-1:0]  gnt;
  logic             arb_valid, ar_take, rd_room;
  logic             riss_full, rtrk_full, rtrk_empty, rtrk_pop;
  logic [AddrW-1:0] g_addr;
  logic [3:0]       g_len;
  dma_burst_t       g_ar;

  tpu_rr_arbiter #(.N(Clients), .Sticky(1'b1)) u_arb (
    .clk_i, .rst_ni, .req_i(ar_valid_i), .take_i(ar_take), .idx_o(gnt), .valid_o(arb_valid)
  );
  assign g_ar    = ar_i[DmaBurstW*gnt +: DmaBurstW];
  assign g_addr  = g_ar.addr;
  assign g_len   = g_ar.len[3:0];
  assign rd_room = !riss_full && !rtrk_full;
  assign ar_take = arb_valid && rd_room;
  for (genvar c = 0; c < Clients; c++) begin : gen_ar_ready
    assign ar_ready_o[c] = rd_room && gnt == CliW'(c) && ar_valid_i[c];
  end

  tpu_accel_dma_issue #(
    .Ports(Ports), .AddrW(AddrW), .MAddrBits(MAddrBits), .Depth(PieceDepth)
  ) u_ar_issue (
    .clk_i, .rst_ni, .push_i(ar_take), .addr_i(g_addr), .len_i(g_len), .full_o(riss_full),
    .m_valid_o(m_ar_valid_o), .m_ready_i(m_ar_ready_i),
    .m_addr_o(m_ar_addr_o), .m_len_o(m_ar_len_o)
  );
  assign m_ar_id_o    = '0;
  assign m_ar_size_o  = {Ports{3'd5}};
  assign m_ar_burst_o = {Ports{tpu_pkg::AxiBurstIncr}};

  // Tracking queue: {client, port of the first block, beat offset in it, beats - 1}.
  logic [CliW-1:0]     t_cli;
  logic [PortBits-1:0] t_p0;
  logic                t_off;
  logic [3:0]          t_len;
  tpu_fifo #(.Width(CliW + PortBits + 5), .Depth(TrackDepth)) u_rtrk (
    .clk_i, .rst_ni, .flush_i(1'b0),
    .push_i(ar_take), .data_i({gnt, g_addr[6 +: PortBits], g_addr[5], g_len}),
    .full_o(rtrk_full),
    .pop_i(rtrk_pop), .data_o({t_cli, t_p0, t_off, t_len}), .empty_o(rtrk_empty), .count_o()
  );

  // The ports' R beat queues: one push, up to two pops a cycle; the two oldest beats visible.
  logic [Ports-1:0]       rq_has1, rq_has2;
  logic [Ports*257-1:0]   rq_peek0, rq_peek1;   // {err, data}
  logic [Ports*2-1:0]     rq_pop;               // beats taken from each port (0..2)
  for (genvar q = 0; q < Ports; q++) begin : gen_rq
    logic [256:0]     mem_q [BeatDepth];
    logic [BPtrW-1:0] wp_q, wp_d, rp_q, rp_d;
    logic [BCntW-1:0] cnt_q, cnt_d;
    logic             push;
    assign m_r_ready_o[q] = cnt_q != BCntW'(BeatDepth);
    assign push           = m_r_valid_i[q] && m_r_ready_o[q];
    assign rq_has1[q]     = cnt_q >= BCntW'(1);
    assign rq_has2[q]     = cnt_q >= BCntW'(2);
    assign rq_peek0[q*257 +: 257] = mem_q[rp_q];
    assign rq_peek1[q*257 +: 257] = mem_q[rp_q + BPtrW'(1)];
    always_ff @(posedge clk_i) begin
      if (push) mem_q[wp_q] <= {m_r_resp_i[2*q +: 2] == tpu_pkg::AxiRespSlvErr,
                                m_r_data_i[256*q +: 256]};
    end
    assign wp_d  = push ? wp_q + BPtrW'(1) : wp_q;
    assign rp_d  = rp_q + BPtrW'(rq_pop[2*q +: 2]);
    assign cnt_d = cnt_q + BCntW'(push) - BCntW'(rq_pop[2*q +: 2]);
    `TPU_FF(wp_q, wp_d, '0)
    `TPU_FF(rp_q, rp_d, '0)
    `TPU_FF(cnt_q, cnt_d, '0)
  end

  // The head burst's beats k_q .. : lane i is beat g = k_q + i + off of the burst's first block,
  // piece g/2 on port p0 + g/2; it is the second beat taken from that port when the beat before
  // it (lane i - 1) is the piece's first.
  logic [4:0]           k_q, k_d;
  logic [CntW-1:0]      n_avail, take;
  logic [Lanes*PortBits-1:0] l_port;
  logic [Lanes-1:0]     l_pos;
  logic                r_ok;
  logic [Lanes*256-1:0] r_data;
  logic [Lanes-1:0]    r_err;
  logic [5:0]          r_g;
  logic [PortBits-1:0] r_q;
  always_comb begin
    r_ok    = !rtrk_empty;
    n_avail = '0;
    for (int unsigned i = 0; i < Lanes; i++) begin
      r_g = 6'(k_q) + 6'(i) + 6'(t_off);
      r_q = port_of(t_p0, PortBits'(r_g[5:1]));
      l_port[i*PortBits +: PortBits] = r_q;
      l_pos[i] = i > 0 && r_g[0];
      r_ok = r_ok && (5'(k_q) + 5'(i) <= 5'(t_len)) && (l_pos[i] ? rq_has2[r_q] : rq_has1[r_q]);
      if (r_ok) n_avail = n_avail + CntW'(1);
      r_data[256*i +: 256] = l_pos[i] ? rq_peek1[257*r_q +: 256] : rq_peek0[257*r_q +: 256];
      r_err[i]             = l_pos[i] ? rq_peek1[257*r_q + 256] : rq_peek0[257*r_q + 256];
    end
  end
  dma_rd_beats_t r;
  assign r.count = n_avail;
  assign r.data  = r_data;
  assign r.err   = r_err;
  assign r_o     = r;
  for (genvar c = 0; c < Clients; c++) begin : gen_r_valid
    assign r_valid_o[c] = t_cli == CliW'(c) && n_avail != '0;
  end
  assign take     = r_take_i[CntW*t_cli +: CntW];
  assign rtrk_pop = take != '0 && 5'(k_q) + 5'(take) == 5'(t_len) + 5'd1;

  always_comb begin
    rq_pop = '0;
    for (int unsigned i = 0; i < Lanes; i++) begin
      if (CntW'(i) < take) begin
        rq_pop[2*l_port[i*PortBits +: PortBits] +: 2] =
            rq_pop[2*l_port[i*PortBits +: PortBits] +: 2] + 2'd1;
      end
    end
  end

  assign k_d = rtrk_pop ? '0 : k_q + 5'(take);
  `TPU_FF(k_q, k_d, '0)

  // =============================================================================================
  // Writes
  // =============================================================================================
  logic             wiss_full, wrt_full, wrt_empty, btrk_full, btrk_empty;
  logic             aw_take;
  logic [4:0]       aw_np;
  dma_burst_t       aw;
  dma_wr_beats_t    w;
  assign aw = aw_i;
  assign w  = w_i;

  assign aw_ready_o = !wiss_full && !wrt_full && !btrk_full;
  assign aw_take    = aw_valid_i && aw_ready_o;
  assign aw_np      = (5'(aw.addr[5]) + 5'(aw.len[3:0]) + 5'd2) >> 1;

  tpu_accel_dma_issue #(
    .Ports(Ports), .AddrW(AddrW), .MAddrBits(MAddrBits), .Depth(PieceDepth)
  ) u_aw_issue (
    .clk_i, .rst_ni, .push_i(aw_take), .addr_i(aw.addr), .len_i(aw.len[3:0]),
    .full_o(wiss_full), .m_valid_o(m_aw_valid_o), .m_ready_i(m_aw_ready_i),
    .m_addr_o(m_aw_addr_o), .m_len_o(m_aw_len_o)
  );
  assign m_aw_id_o    = '0;
  assign m_aw_size_o  = {Ports{3'd5}};
  assign m_aw_burst_o = {Ports{tpu_pkg::AxiBurstIncr}};

  // W route queue: {port of the first block, beat offset, beats - 1} of the bursts whose data is
  // still due.
  logic [PortBits-1:0] w_p0;
  logic                w_off, w_fire, w_end;
  logic [3:0]          w_len;
  logic [4:0]          wk_q, wk_d;
  tpu_fifo #(.Width(PortBits + 5), .Depth(8)) u_wrt (
    .clk_i, .rst_ni, .flush_i(1'b0),
    .push_i(aw_take), .data_i({aw.addr[6 +: PortBits], aw.addr[5], aw.len[3:0]}),
    .full_o(wrt_full),
    .pop_i(w_fire && w_end), .data_o({w_p0, w_off, w_len}), .empty_o(wrt_empty), .count_o()
  );

  // Lane i of the offer is beat g = wk_q + i + off: port p0 + g/2, its piece's last beat when g
  // is odd or it ends the burst. Each port gets its lanes (at most two, adjacent) in order.
  logic [Ports-1:0]       wq_room, wq_push1, wq_push2;
  logic [Ports*289-1:0]   wq_in1, wq_in2;       // {last, strb, data}
  logic [BCntW-1:0]       wq_cnt [Ports];
  logic [5:0]          w_g;
  logic [PortBits-1:0] w_q;
  logic [288:0]        w_beat;
  always_comb begin
    wq_push1 = '0;
    wq_push2 = '0;
    wq_in1   = '0;
    wq_in2   = '0;
    for (int unsigned i = 0; i < Lanes; i++) begin
      w_g    = 6'(wk_q) + 6'(i) + 6'(w_off);
      w_q    = port_of(w_p0, PortBits'(w_g[5:1]));
      w_beat = {w_g[0] || (5'(wk_q) + 5'(i) == 5'(w_len)), w.strb[32*i +: 32],
                w.data[256*i +: 256]};
      if (CntW'(i) < w.count) begin
        if (!wq_push1[w_q]) begin
          wq_push1[w_q]          = 1'b1;
          wq_in1[289*w_q +: 289] = w_beat;
        end else begin
          wq_push2[w_q]          = 1'b1;
          wq_in2[289*w_q +: 289] = w_beat;
        end
      end
    end
    for (int unsigned p = 0; p < Ports; p++) begin
      wq_room[p] = 32'(wq_cnt[p]) + 32'(wq_push1[p]) + 32'(wq_push2[p]) <= BeatDepth;
    end
  end
  assign w_ready_o = !wrt_empty && &wq_room;
  assign w_fire    = w_valid_i && w_ready_o;
  assign w_end     = 5'(wk_q) + 5'(w.count) == 5'(w_len) + 5'd1;

  assign wk_d = w_end ? 5'd0 : wk_q + 5'(w.count);
  `TPU_FFL(wk_q, wk_d, w_fire, '0)

  for (genvar q = 0; q < Ports; q++) begin : gen_wq
    logic [288:0]     mem_q [BeatDepth];
    logic [BPtrW-1:0] wp_q, wp_d, rp_q, rp_d;
    logic [BCntW-1:0] cnt_q, cnt_d;
    logic             push1, push2, pop;
    assign push1      = w_fire && wq_push1[q];
    assign push2      = w_fire && wq_push2[q];
    assign pop        = m_w_valid_o[q] && m_w_ready_i[q];
    assign wq_cnt[q]  = cnt_q;
    assign m_w_valid_o[q]          = cnt_q != '0;
    assign m_w_data_o[256*q +: 256] = mem_q[rp_q][255:0];
    assign m_w_strb_o[32*q +: 32]   = mem_q[rp_q][287:256];
    assign m_w_last_o[q]            = mem_q[rp_q][288];
    always_ff @(posedge clk_i) begin
      if (push1) mem_q[wp_q]               <= wq_in1[289*q +: 289];
      if (push2) mem_q[wp_q + BPtrW'(1)]   <= wq_in2[289*q +: 289];
    end
    assign wp_d  = wp_q + BPtrW'(push1) + BPtrW'(push2);
    assign rp_d  = pop ? rp_q + BPtrW'(1) : rp_q;
    assign cnt_d = cnt_q + BCntW'(push1) + BCntW'(push2) - BCntW'(pop);
    `TPU_FF(wp_q, wp_d, '0)
    `TPU_FF(rp_q, rp_d, '0)
    `TPU_FF(cnt_q, cnt_d, '0)
  end

  // B: each port's responses (their error bit) queue; the head burst's pieces take one each from
  // their ports, up to Ports pieces a cycle, in order.
  logic [Ports-1:0]    bq_empty, bq_pop, bq_err;
  logic [PortBits-1:0] b_p0;
  logic [4:0]          b_np, bj_q, bj_d, bm;
  logic                b_done, berr_q, berr_d, b_err_now;
  for (genvar q = 0; q < Ports; q++) begin : gen_bq
    logic full;
    tpu_fifo #(.Width(1), .Depth(BeatDepth)) u_bq (
      .clk_i, .rst_ni, .flush_i(1'b0),
      .push_i(m_b_valid_i[q] && !full), .data_i(m_b_resp_i[2*q +: 2] == tpu_pkg::AxiRespSlvErr),
      .full_o(full), .pop_i(bq_pop[q]), .data_o(bq_err[q]), .empty_o(bq_empty[q]), .count_o()
    );
    assign m_b_ready_o[q] = !full;
  end

  tpu_fifo #(.Width(PortBits + 5), .Depth(TrackDepth)) u_btrk (
    .clk_i, .rst_ni, .flush_i(1'b0),
    .push_i(aw_take), .data_i({aw.addr[6 +: PortBits], aw_np}), .full_o(btrk_full),
    .pop_i(b_done), .data_o({b_p0, b_np}), .empty_o(btrk_empty), .count_o()
  );

  logic                b_ok;
  logic [4:0]          b_j;
  logic [PortBits-1:0] b_q;
  always_comb begin
    b_ok      = !btrk_empty;
    bm        = '0;
    bq_pop    = '0;
    b_err_now = 1'b0;
    for (int unsigned i = 0; i < Ports; i++) begin
      b_j  = bj_q + 5'(i);
      b_q  = port_of(b_p0, PortBits'(b_j));
      b_ok = b_ok && b_j < b_np && !bq_empty[b_q];
      if (b_ok) begin
        bq_pop[b_q] = 1'b1;
        b_err_now   = b_err_now || bq_err[b_q];
        bm        = bm + 5'd1;
      end
    end
  end
  assign b_done    = !btrk_empty && bj_q + bm == b_np;
  assign b_valid_o = b_done;
  assign b_err_o   = berr_q || b_err_now;

  assign bj_d   = b_done ? '0 : bj_q + bm;
  assign berr_d = !b_done && (berr_q || b_err_now);
  `TPU_FF(bj_q, bj_d, '0)
  `TPU_FF(berr_q, berr_d, 1'b0)

  logic unused;
  assign unused = ^{m_r_id_i, m_r_last_i, m_b_id_i, aw.len[7:4], ar_i};

`ifndef SYNTHESIS
  a_take: assert property (@(posedge clk_i) disable iff (!rst_ni) take <= n_avail)
    else $error("tpu_accel_dma: a client took %0d beats of %0d", take, n_avail);
  a_w_count: assert property (@(posedge clk_i) disable iff (!rst_ni)
                              w_valid_i |-> w.count != '0 && 32'(w.count) <= Lanes &&
                                            (wrt_empty ||
                                             5'(wk_q) + 5'(w.count) <= 5'(w_len) + 5'd1))
    else $error("tpu_accel_dma: %0d W beats offered past the burst's end", w.count);
  // AXI on every port: AR, AW and W hold, with their payloads, until their handshake (the IDs,
  // sizes and burst types are constants).
  for (genvar q = 0; q < Ports; q++) begin : gen_axi_assert
    a_m_ar_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                  m_ar_valid_o[q] && !m_ar_ready_i[q]
                                  |=> m_ar_valid_o[q] &&
                                      $stable(m_ar_addr_o[MAddrBits*q +: MAddrBits]) &&
                                      $stable(m_ar_len_o[8*q +: 8]))
      else $error("tpu_accel_dma: port %0d changed AR while waiting", q);
    a_m_aw_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                  m_aw_valid_o[q] && !m_aw_ready_i[q]
                                  |=> m_aw_valid_o[q] &&
                                      $stable(m_aw_addr_o[MAddrBits*q +: MAddrBits]) &&
                                      $stable(m_aw_len_o[8*q +: 8]))
      else $error("tpu_accel_dma: port %0d changed AW while waiting", q);
    a_m_w_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                 m_w_valid_o[q] && !m_w_ready_i[q]
                                 |=> m_w_valid_o[q] && $stable(m_w_data_o[256*q +: 256]) &&
                                     $stable(m_w_strb_o[32*q +: 32]) && $stable(m_w_last_o[q]))
      else $error("tpu_accel_dma: port %0d changed W while waiting", q);
  end
`endif

endmodule
