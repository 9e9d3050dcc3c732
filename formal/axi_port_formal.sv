// SPDX-License-Identifier: Apache-2.0
// Formal only (make formal, docs/formal.md): the AXI4 slave port of an HBM pseudo-channel
// (rtl/hbm/tpu_hbm_axi_port.sv) from reset, for any master that keeps the AXI rules (AW, W, AR
// held and stable until taken; B and R ready free; any ID, address, length, size, burst type,
// strobes and WLAST) and any controller behind it that answers only what it was asked (the
// controller's readies free; read data only for a beat a granted block request asked for and
// has not yet had; a forwarded block only in the cycle its request is taken).
//   handshake  B and R held until taken and stable meanwhile (ID, response, data, last)
//   write      one B per AW burst, none without one, in AW order (the port answers in burst
//              order), with the AW's ID, SLVERR exactly for a burst the port cannot carry or
//              whose WLAST is wrong, OKAY otherwise; no W beat taken without an AW
//   read       exactly AxLEN + 1 R beats per AR burst, in AR order (so in order per ID), with the
//              AR's ID, RLAST on the last beat only, SLVERR exactly for the bursts the port
//              cannot carry; no R beat without an AR
//   requests   the block requests to the controller are held and stable until taken
`include "tpu_channels.svh"
module axi_port_formal #(
  parameter int unsigned AddrBits = 13,
  parameter int unsigned IdBits   = 2,
  parameter int unsigned RowBits  = 3,
  parameter int unsigned BgBits   = 1,
  parameter int unsigned BaBits   = 1,
  parameter int unsigned ColBits  = 2,
  parameter int unsigned AddrMap  = 0,
  parameter int unsigned RetDepth = 4,
  parameter int unsigned MaxLen   = 255,   // the master's longest burst (AxLEN), an assumption
  parameter bit          ReadOrder = 1'b1, // check the read bursts' beats, IDs, RLAST and RRESP
  localparam int unsigned TagBits  = $clog2(RetDepth),
  localparam int unsigned BankBits = BgBits + BaBits,
  localparam int unsigned BlkBits  = ColBits - 1,
  localparam int unsigned CapBits  = 5 + ColBits + BankBits + RowBits,
  `TPU_HBM_PORT_WIDTHS(BankBits, RowBits, BlkBits, TagBits)
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  `TPU_AXI_SLAVE_PORTS(, 1, IdBits, AddrBits),
  input  logic                rd_ready_i,
  input  logic                wr_ready_i,
  input  logic                rdata_valid_i,
  input  logic [HbmRdataW-1:0] rdata_i,
  input  logic                fwd_valid_i,
  input  logic [HbmFwdW-1:0]  fwd_i
);
  `TPU_HBM_PORT_TYPEDEFS(BankBits, RowBits, BlkBits, TagBits)
  logic        rd_valid, wr_valid;
  hbm_rd_req_t rd_req;
  hbm_wr_req_t wr_req;
  hbm_rdata_t  rdata;
  hbm_fwd_t    fwd;
  assign rdata = rdata_i;
  assign fwd   = fwd_i;

  tpu_hbm_axi_port #(
    .AddrBits(AddrBits), .IdBits(IdBits), .RowBits(RowBits), .BgBits(BgBits), .BaBits(BaBits),
    .ColBits(ColBits), .AddrMap(AddrMap), .RetDepth(RetDepth)
  ) u_dut (
    .clk_i, .rst_ni,
    `TPU_AXI_SLAVE_PASS(, ),
    .rd_valid_o(rd_valid), .rd_ready_i, .rd_req_o(rd_req),
    .wr_valid_o(wr_valid), .wr_ready_i, .wr_req_o(wr_req),
    .rdata_valid_i, .rdata_i, .fwd_valid_i, .fwd_i
  );

  logic init_q = 1'b1;
  always_ff @(posedge clk_i) init_q <= 1'b0;
  always_comb m_reset: assume (rst_ni == !init_q);

  // ---------------------------------------------------------------------------------------------
  // Handshakes: the master's channels assumed, the port's asserted
  // ---------------------------------------------------------------------------------------------
  tpu_vr_check #(.W(IdBits + AddrBits + 8 + 3 + 2), .Assume(1)) u_aw (
    .clk_i, .rst_ni, .valid_i(aw_valid_i), .ready_i(aw_ready_o),
    .data_i({aw_id_i, aw_addr_i, aw_len_i, aw_size_i, aw_burst_i}));
  tpu_vr_check #(.W(256 + 32 + 1), .Assume(1)) u_w (
    .clk_i, .rst_ni, .valid_i(w_valid_i), .ready_i(w_ready_o),
    .data_i({w_data_i, w_strb_i, w_last_i}));
  tpu_vr_check #(.W(IdBits + AddrBits + 8 + 3 + 2), .Assume(1)) u_ar (
    .clk_i, .rst_ni, .valid_i(ar_valid_i), .ready_i(ar_ready_o),
    .data_i({ar_id_i, ar_addr_i, ar_len_i, ar_size_i, ar_burst_i}));
  tpu_vr_check #(.W(IdBits + 2), .Assume(0)) u_b (
    .clk_i, .rst_ni, .valid_i(b_valid_o), .ready_i(b_ready_i), .data_i({b_id_o, b_resp_o}));
  tpu_vr_check #(.W(IdBits + 256 + 2 + 1), .Assume(0)) u_r (
    .clk_i, .rst_ni, .valid_i(r_valid_o), .ready_i(r_ready_i),
    .data_i({r_id_o, r_data_o, r_resp_o, r_last_o}));
  tpu_vr_check #(.W(HbmRdReqW), .Assume(0)) u_rdreq (
    .clk_i, .rst_ni, .valid_i(rd_valid), .ready_i(rd_ready_i), .data_i(rd_req));
  tpu_vr_check #(.W(HbmWrReqW), .Assume(0)) u_wrreq (
    .clk_i, .rst_ni, .valid_i(wr_valid), .ready_i(wr_ready_i), .data_i(wr_req));

  // ---------------------------------------------------------------------------------------------
  // The controller: read data only for beats asked for and not yet returned
  // ---------------------------------------------------------------------------------------------
  logic rd_fire;
  assign rd_fire = rd_valid && rd_ready_i;
  logic [1:0] pend_q[RetDepth];  // beats of each tag the controller still owes
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      for (int unsigned t = 0; t < RetDepth; t++) pend_q[t] <= 2'b00;
    end else begin
      if (rdata_valid_i) pend_q[rdata.tag][rdata.beat] <= 1'b0;
      if (rd_fire && !fwd_valid_i) pend_q[rd_req.tag] <= rd_req.beats;
    end
  end
  always_comb begin
    if (rst_ni) begin
      if (rdata_valid_i) m_rdata_asked: assume (pend_q[rdata.tag][rdata.beat]);
      m_len: assume (32'(aw_len_i) <= MaxLen && 32'(ar_len_i) <= MaxLen);
      if (fwd_valid_i) m_fwd_at_take: assume (rd_fire && fwd.tag == rd_req.tag);
      // A block request asks for the lower beat, the upper, or both, never none.
      if (rd_valid) a_rd_beats: assert (rd_req.beats != 2'b00);
      if (rd_fire) a_tag_free: assert (pend_q[rd_req.tag] == 2'b00);
    end
  end

  // ---------------------------------------------------------------------------------------------
  // The bursts the port must answer, in order: what the AXI rules and the header promise
  // ---------------------------------------------------------------------------------------------
  function automatic logic unsupported(logic [AddrBits-1:0] a, logic [7:0] len, logic [2:0] size,
                                       logic [1:0] burst);
    logic [13:0] end_byte;  // one past the last byte, counted from the start's 4 KB page
    end_byte = 14'(a[11:0]) + 14'((32'(len) + 1) * 32);
    unsupported = burst != 2'b01 || size != 3'd5 || a[4:0] != 5'd0 || end_byte > 14'd4096 ||
                  (AddrBits > CapBits && (a >> CapBits) != '0);
  endfunction

  localparam int unsigned QD = 8;  // outstanding bursts tracked (more fails a_*_bounded)
  localparam int unsigned QB = $clog2(QD);

  // Writes: AW order; W beats count against the oldest burst whose beats are not all in.
  logic aw_fire, w_fire, b_fire, ar_fire, r_fire;
  assign aw_fire = aw_valid_i && aw_ready_o;
  assign w_fire  = w_valid_i && w_ready_o;
  assign b_fire  = b_valid_o && b_ready_i;
  assign ar_fire = ar_valid_i && ar_ready_o;
  assign r_fire  = r_valid_o && r_ready_i;

  logic [IdBits-1:0] wq_id_q  [QD];
  logic [8:0]        wq_beats_q[QD];
  logic              wq_err_q [QD];
  logic [QB-1:0]     wq_head_q, wq_wptr_q, wq_tail_q;  // oldest unanswered, W burst, next free
  logic [QB:0]       wq_cnt_q, wq_wcnt_q;              // unanswered, W beats still owed (bursts)
  logic [8:0]        w_seen_q;                          // beats of the W burst so far
  logic              w_bad_last;
  assign w_bad_last = w_last_i != (w_seen_q + 9'd1 == wq_beats_q[wq_wptr_q]);
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      wq_head_q <= '0; wq_wptr_q <= '0; wq_tail_q <= '0; wq_cnt_q <= '0; wq_wcnt_q <= '0;
      w_seen_q <= '0;
    end else begin
      if (aw_fire) begin
        wq_id_q[wq_tail_q]    <= aw_id_i;
        wq_beats_q[wq_tail_q] <= 9'(aw_len_i) + 9'd1;
        wq_err_q[wq_tail_q]   <= unsupported(aw_addr_i, aw_len_i, aw_size_i, aw_burst_i);
        wq_tail_q             <= wq_tail_q + 1'b1;
      end
      if (w_fire) begin
        if (w_bad_last) wq_err_q[wq_wptr_q] <= 1'b1;
        if (w_seen_q + 9'd1 == wq_beats_q[wq_wptr_q]) begin
          w_seen_q  <= '0;
          wq_wptr_q <= wq_wptr_q + 1'b1;
        end else begin
          w_seen_q <= w_seen_q + 9'd1;
        end
      end
      if (b_fire) wq_head_q <= wq_head_q + 1'b1;
      wq_cnt_q  <= wq_cnt_q + (QB + 1)'(aw_fire) - (QB + 1)'(b_fire);
      wq_wcnt_q <= wq_wcnt_q + (QB + 1)'(aw_fire) -
                   (QB + 1)'(w_fire && w_seen_q + 9'd1 == wq_beats_q[wq_wptr_q]);
    end
  end

  // Reads: AR order, beat by beat.
  logic [IdBits-1:0] rq_id_q  [QD];
  logic [8:0]        rq_beats_q[QD];
  logic              rq_err_q [QD];
  logic [QB-1:0]     rq_head_q, rq_tail_q;
  logic [QB:0]       rq_cnt_q;
  logic [8:0]        r_seen_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rq_head_q <= '0; rq_tail_q <= '0; rq_cnt_q <= '0; r_seen_q <= '0;
    end else begin
      if (ar_fire) begin
        rq_id_q[rq_tail_q]    <= ar_id_i;
        rq_beats_q[rq_tail_q] <= 9'(ar_len_i) + 9'd1;
        rq_err_q[rq_tail_q]   <= unsupported(ar_addr_i, ar_len_i, ar_size_i, ar_burst_i);
        rq_tail_q             <= rq_tail_q + 1'b1;
      end
      if (r_fire) begin
        if (r_last_o) begin
          r_seen_q  <= '0;
          rq_head_q <= rq_head_q + 1'b1;
        end else begin
          r_seen_q <= r_seen_q + 9'd1;
        end
      end
      rq_cnt_q <= rq_cnt_q + (QB + 1)'(ar_fire) - (QB + 1)'(r_fire && r_last_o);
    end
  end

  always_comb begin
    if (rst_ni) begin
      a_w_bounded: assert (wq_cnt_q < (QB + 1)'(QD));
      if (ReadOrder) a_r_bounded: assert (rq_cnt_q < (QB + 1)'(QD));
      // Write responses.
      if (b_valid_o) begin
        a_b_has_burst: assert (wq_cnt_q != '0 && wq_cnt_q != wq_wcnt_q);  // its W beats are in
        a_b_id: assert (b_id_o == wq_id_q[wq_head_q]);
        a_b_resp: assert (b_resp_o == (wq_err_q[wq_head_q] ? tpu_pkg::AxiRespSlvErr
                                                            : tpu_pkg::AxiRespOkay));
      end
      if (w_fire) a_w_has_burst: assert (wq_wcnt_q != '0);
      // Read data.
      if (ReadOrder && r_valid_o) begin
        a_r_has_burst: assert (rq_cnt_q != '0);
        a_r_id: assert (r_id_o == rq_id_q[rq_head_q]);
        a_r_last: assert (r_last_o == (r_seen_q + 9'd1 == rq_beats_q[rq_head_q]));
        a_r_resp: assert (r_resp_o == (rq_err_q[rq_head_q] ? tpu_pkg::AxiRespSlvErr
                                                            : tpu_pkg::AxiRespOkay));
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Invariants (proven like every assertion above; with them the properties are inductive and
  // ABC's pdr proves them for all depths): the bookkeeping above against the port's registers,
  // read through hierarchical taps (wires named `u_dut.<register>` with the hierconn attribute,
  // which Yosys's flatten connects to that register; scripts/formal.py fails a check whose tap
  // finds none, except the tap_optional ones: return slots 2 and 3, absent when RetDepth = 2).
  // ---------------------------------------------------------------------------------------------
  if (RetDepth > 4) begin : gen_bad_taps
    $error("axi_port_formal: the invariants' taps are written for at most 4 return slots");
  end
  (* hierconn *) logic [2-1:0] \u_dut.w_state_q ;
  (* hierconn *) logic [IdBits-1:0] \u_dut.w_id_q ;
  (* hierconn *) logic [9-1:0] \u_dut.w_left_q ;
  (* hierconn *) logic [1-1:0] \u_dut.w_err_q ;
  (* hierconn *) logic [1-1:0] \u_dut.pc_full_q ;
  (* hierconn *) logic [1-1:0] \u_dut.pc_last_q ;
  (* hierconn *) logic [IdBits-1:0] \u_dut.bq_id_q[0] ;
  (* hierconn *) logic [IdBits-1:0] \u_dut.bq_id_q[1] ;
  (* hierconn *) logic [IdBits-1:0] \u_dut.bq_id_q[2] ;
  (* hierconn *) logic [IdBits-1:0] \u_dut.bq_id_q[3] ;
  (* hierconn *) logic [2-1:0] \u_dut.bq_resp_q[0] ;
  (* hierconn *) logic [2-1:0] \u_dut.bq_resp_q[1] ;
  (* hierconn *) logic [2-1:0] \u_dut.bq_resp_q[2] ;
  (* hierconn *) logic [2-1:0] \u_dut.bq_resp_q[3] ;
  (* hierconn *) logic [2-1:0] \u_dut.bq_rd_q ;
  (* hierconn *) logic [2-1:0] \u_dut.bq_wr_q ;
  (* hierconn *) logic [3-1:0] \u_dut.bq_cnt_q ;
  (* hierconn *) logic [1-1:0] \u_dut.ar_busy_q ;
  (* hierconn *) logic [IdBits-1:0] \u_dut.ar_id_q ;
  (* hierconn *) logic [9-1:0] \u_dut.ar_left_q ;
  (* hierconn *) logic [1-1:0] \u_dut.ar_err_q ;
  (* hierconn *) logic [IdBits-1:0] \u_dut.slot_id_q[0] ;
  (* hierconn *) logic [IdBits-1:0] \u_dut.slot_id_q[1] ;
  (* hierconn, tap_optional *) logic [IdBits-1:0] \u_dut.slot_id_q[2] ;
  (* hierconn, tap_optional *) logic [IdBits-1:0] \u_dut.slot_id_q[3] ;
  (* hierconn *) logic [2-1:0] \u_dut.slot_beats_q[0] ;
  (* hierconn *) logic [2-1:0] \u_dut.slot_beats_q[1] ;
  (* hierconn, tap_optional *) logic [2-1:0] \u_dut.slot_beats_q[2] ;
  (* hierconn, tap_optional *) logic [2-1:0] \u_dut.slot_beats_q[3] ;
  (* hierconn *) logic [2-1:0] \u_dut.slot_arrived_q[0] ;
  (* hierconn *) logic [2-1:0] \u_dut.slot_arrived_q[1] ;
  (* hierconn, tap_optional *) logic [2-1:0] \u_dut.slot_arrived_q[2] ;
  (* hierconn, tap_optional *) logic [2-1:0] \u_dut.slot_arrived_q[3] ;
  (* hierconn *) logic [1-1:0] \u_dut.slot_err_q[0] ;
  (* hierconn *) logic [1-1:0] \u_dut.slot_err_q[1] ;
  (* hierconn, tap_optional *) logic [1-1:0] \u_dut.slot_err_q[2] ;
  (* hierconn, tap_optional *) logic [1-1:0] \u_dut.slot_err_q[3] ;
  (* hierconn *) logic [1-1:0] \u_dut.slot_last_q[0] ;
  (* hierconn *) logic [1-1:0] \u_dut.slot_last_q[1] ;
  (* hierconn, tap_optional *) logic [1-1:0] \u_dut.slot_last_q[2] ;
  (* hierconn, tap_optional *) logic [1-1:0] \u_dut.slot_last_q[3] ;
  (* hierconn *) logic [TagBits-1:0] \u_dut.slot_head_q ;
  (* hierconn *) logic [TagBits-1:0] \u_dut.slot_tail_q ;
  (* hierconn *) logic [TagBits+1-1:0] \u_dut.slot_cnt_q ;
  (* hierconn *) logic [2-1:0] \u_dut.r_sent_q ;
  logic [IdBits-1:0] t_bq_id[4], t_slot_id[4];
  logic [1:0]        t_bq_resp[4], t_slot_beats[4], t_slot_arrived[4];
  logic              t_slot_err[4], t_slot_last[4];
  assign t_bq_id[0] = \u_dut.bq_id_q[0] ; assign t_bq_id[1] = \u_dut.bq_id_q[1] ; assign t_bq_id[2] = \u_dut.bq_id_q[2] ; assign t_bq_id[3] = \u_dut.bq_id_q[3] ;
  assign t_bq_resp[0] = \u_dut.bq_resp_q[0] ; assign t_bq_resp[1] = \u_dut.bq_resp_q[1] ; assign t_bq_resp[2] = \u_dut.bq_resp_q[2] ; assign t_bq_resp[3] = \u_dut.bq_resp_q[3] ;
  assign t_slot_id[0] = \u_dut.slot_id_q[0] ;
  assign t_slot_id[1] = \u_dut.slot_id_q[1] ;
  assign t_slot_id[2] = \u_dut.slot_id_q[2] ;
  assign t_slot_id[3] = \u_dut.slot_id_q[3] ;
  assign t_slot_beats[0] = \u_dut.slot_beats_q[0] ;
  assign t_slot_beats[1] = \u_dut.slot_beats_q[1] ;
  assign t_slot_beats[2] = \u_dut.slot_beats_q[2] ;
  assign t_slot_beats[3] = \u_dut.slot_beats_q[3] ;
  assign t_slot_arrived[0] = \u_dut.slot_arrived_q[0] ;
  assign t_slot_arrived[1] = \u_dut.slot_arrived_q[1] ;
  assign t_slot_arrived[2] = \u_dut.slot_arrived_q[2] ;
  assign t_slot_arrived[3] = \u_dut.slot_arrived_q[3] ;
  assign t_slot_err[0] = \u_dut.slot_err_q[0] ;
  assign t_slot_err[1] = \u_dut.slot_err_q[1] ;
  assign t_slot_err[2] = \u_dut.slot_err_q[2] ;
  assign t_slot_err[3] = \u_dut.slot_err_q[3] ;
  assign t_slot_last[0] = \u_dut.slot_last_q[0] ;
  assign t_slot_last[1] = \u_dut.slot_last_q[1] ;
  assign t_slot_last[2] = \u_dut.slot_last_q[2] ;
  assign t_slot_last[3] = \u_dut.slot_last_q[3] ;

  localparam logic [1:0] WIdle = 2'd0, WData = 2'd1, WDrain = 2'd2;  // the port's w_state_e
  function automatic logic [1:0] resp(logic err);
    resp = err ? tpu_pkg::AxiRespSlvErr : tpu_pkg::AxiRespOkay;
  endfunction

  // Writes: the bursts the harness holds are the port's B queue (oldest first) and then, while
  // the port is in a burst, that burst (whose W beats are due until its last has come).
  logic          w_active, w_due;
  logic [QB-1:0] w_cur;  // the burst the port is in
  logic          n_bq;
  assign w_active = \u_dut.w_state_q != WIdle;
  assign w_due    = w_active && \u_dut.w_left_q != 9'd0;
  assign w_cur    = wq_head_q + QB'(\u_dut.bq_cnt_q );
  always_comb begin
    n_bq = 1'b0;
    for (int unsigned i = 0; i < 4; i++) begin
      if (3'(i) < \u_dut.bq_cnt_q ) begin
        n_bq |= t_bq_id[2'(\u_dut.bq_rd_q + 2'(i))] != wq_id_q[QB'(wq_head_q + QB'(i))] ||
                t_bq_resp[2'(\u_dut.bq_rd_q + 2'(i))] != resp(wq_err_q[QB'(wq_head_q + QB'(i))]);
      end
    end
  end

  // Reads: the return slots from the oldest, each a block of one burst (the harness's burst at
  // rq_head plus the slots before it that end a burst), then the burst the port is splitting.
  // Per burst the beats still to send plus those sent (r_seen) make its AxLEN + 1.
  logic [TagBits:0] live_n;
  logic             n_pend, n_slot, n_ord, n_sum;
  logic [QB:0]      lasts;
  always_comb begin
    logic [11:0]        sum[QD];  // no wrap: r_seen, ar_left < 512, 2 beats a slot
    logic [TagBits-1:0] s;
    logic [QB-1:0]      j;
    logic [1:0]         left;  // beats of the slot still to send
    n_pend = 1'b0; n_slot = 1'b0; n_ord = 1'b0; n_sum = 1'b0; lasts = '0;
    s = '0; j = '0; left = '0;
    live_n = \u_dut.slot_cnt_q ;
    for (int unsigned t = 0; t < RetDepth; t++) begin
      logic live;
      live = (TagBits + 1)'(TagBits'(TagBits'(t) - \u_dut.slot_head_q )) < live_n;
      // The controller owes exactly the beats a live, supported slot has not had yet.
      n_pend |= pend_q[t] != ((live && !t_slot_err[t]) ? t_slot_beats[t] & ~t_slot_arrived[t]
                                                        : 2'b00);
      n_slot |= live && (t_slot_beats[t] == 2'b00 || (t_slot_err[t] && t_slot_beats[t] != 2'b01));
    end
    for (int unsigned k = 0; k < QD; k++) sum[k] = '0;
    sum[rq_head_q] = 12'(r_seen_q);
    for (int unsigned p = 0; p < RetDepth; p++) begin
      if ((TagBits + 1)'(p) < live_n) begin
        s    = TagBits'(\u_dut.slot_head_q + TagBits'(p));
        j    = QB'(rq_head_q + QB'(lasts));
        left = t_slot_beats[s] & ~((p == 0) ? \u_dut.r_sent_q : 2'b00);
        n_ord |= t_slot_id[s] != rq_id_q[j] || t_slot_err[s] != rq_err_q[j];
        sum[j] = sum[j] + 12'(left[0]) + 12'(left[1]);
        lasts  = lasts + (QB + 1)'(t_slot_last[s]);
      end
    end
    if (\u_dut.ar_busy_q ) begin
      sum[QB'(rq_tail_q - 1'b1)] = sum[QB'(rq_tail_q - 1'b1)] + 12'(\u_dut.ar_left_q );
    end
    for (int unsigned k = 0; k < QD; k++) begin
      if ((QB + 1)'(k) < rq_cnt_q) begin
        n_sum |= sum[QB'(rq_head_q + QB'(k))] != 12'(rq_beats_q[QB'(rq_head_q + QB'(k))]) ||
                 32'(rq_beats_q[QB'(rq_head_q + QB'(k))]) > MaxLen + 1;
      end
    end
  end

  always_comb begin
    if (rst_ni) begin
      i_w_count: assert (32'(wq_cnt_q) == 32'(\u_dut.bq_cnt_q ) + 32'(w_active) &&
                         32'(wq_wcnt_q) == 32'(w_due));
      i_w_ptrs: assert (QB'(wq_tail_q - wq_head_q) == QB'(wq_cnt_q) &&
                        QB'(wq_tail_q - wq_wptr_q) == QB'(wq_wcnt_q));
      i_b_queue: assert (32'(\u_dut.bq_cnt_q ) + 32'(w_active) <= 4 &&
                         2'(\u_dut.bq_wr_q - \u_dut.bq_rd_q ) == 2'(\u_dut.bq_cnt_q ));
      i_b_entries: assert (!n_bq);
      i_w_burst: assert (!w_active || (\u_dut.w_id_q == wq_id_q[w_cur] &&
                                       \u_dut.w_err_q == wq_err_q[w_cur]));
      i_w_beats: assert (w_due ? wq_wptr_q == w_cur &&
                                 32'(w_seen_q) + 32'(\u_dut.w_left_q ) == 32'(wq_beats_q[w_cur])
                               : w_seen_q == '0);
      i_w_state: assert (\u_dut.w_state_q != 2'd3 &&
                         (\u_dut.w_state_q != WDrain || (\u_dut.w_err_q && w_due)) &&
                         (\u_dut.w_state_q == WData || !\u_dut.pc_full_q ));
      i_w_block: assert (\u_dut.w_state_q != WData ||
                         (\u_dut.pc_full_q && \u_dut.pc_last_q ) == !w_due);
      i_slots: assert (32'(\u_dut.slot_cnt_q ) <= RetDepth &&
                       TagBits'(\u_dut.slot_tail_q - \u_dut.slot_head_q ) ==
                       TagBits'(\u_dut.slot_cnt_q ));
      i_pend: assert (!n_pend);
      i_slot_beats: assert (!n_slot);
      i_r_sent: assert (\u_dut.r_sent_q == 2'b00 ||
                        (\u_dut.r_sent_q == 2'b01 && \u_dut.slot_cnt_q != '0 &&
                         t_slot_beats[\u_dut.slot_head_q ] == 2'b11));
      if (ReadOrder) begin
        i_r_ptrs: assert (QB'(rq_tail_q - rq_head_q) == QB'(rq_cnt_q) && (rq_cnt_q != '0 || r_seen_q == '0));
        i_r_count: assert (rq_cnt_q == lasts + (QB + 1)'(\u_dut.ar_busy_q ));
        i_r_split: assert ((live_n == '0 || t_slot_last[TagBits'(\u_dut.slot_tail_q - 1'b1)] ||
                            \u_dut.ar_busy_q ) &&
                           (!\u_dut.ar_busy_q ||
                            (\u_dut.ar_left_q != '0 &&
                             \u_dut.ar_id_q == rq_id_q[QB'(rq_tail_q - 1'b1)] &&
                             \u_dut.ar_err_q == rq_err_q[QB'(rq_tail_q - 1'b1)])));
        i_r_order: assert (!n_ord);
        i_r_beats: assert (!n_sum);
      end
    end
  end
endmodule
