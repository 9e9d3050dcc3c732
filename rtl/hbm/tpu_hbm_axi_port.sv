// SPDX-License-Identifier: Apache-2.0
// AXI4 slave port of one HBM2 pseudo-channel: splits INCR bursts of 32-byte beats into 64-byte
// block requests for tpu_hbm_pc_ctrl, maps addresses to (bank group, bank, row, block), returns
// read data in request order (so in order per ID) from a return buffer, and answers B once every
// block of the burst sits in the write queue (a read accepted after that sees the write).
//
// Anything the port does not carry gets SLVERR, never a hang: WRAP and FIXED bursts, sizes other
// than 32 bytes (narrow transfers), start addresses not aligned to 32 bytes, bursts crossing a
// 4 KB boundary, and addresses beyond the pseudo-channel's capacity (2^CapBits bytes). A write
// burst whose WLAST does not match its AWLEN is written as counted and answered with SLVERR.
//
// Address map (byte address, from bit 0): 5 bits in the burst, 1 bit burst in the block, then
//   AddrMap 0 (default, "RoCoBaBg"): bank group, bank, block, row: a sequential stream walks the
//       bank groups first, so consecutive blocks run at nCCDS and a block stays in one bank;
//   AddrMap 1 ("RoBaBgCo"): block, bank group, bank, row: a stream stays in one row of one bank
//       (all row hits, but nCCDL-bound).
`include "tpu_axi.svh"
`include "tpu_channels.svh"
`include "tpu_ff.svh"
module tpu_hbm_axi_port #(
  parameter int unsigned AddrBits = 32,
  parameter int unsigned IdBits   = 6,
  parameter int unsigned RowBits  = 16,
  parameter int unsigned BgBits   = 2,
  parameter int unsigned BaBits   = 2,
  parameter int unsigned ColBits  = 5,
  parameter int unsigned AddrMap  = 0,
  parameter int unsigned RetDepth = 32,  // read blocks in flight (return-buffer slots)
  localparam int unsigned TagBits  = $clog2(RetDepth),
  localparam int unsigned BankBits = BgBits + BaBits,
  localparam int unsigned BlkBits  = ColBits - 1,
  localparam int unsigned CapBits  = 5 + ColBits + BankBits + RowBits,
  `TPU_HBM_PORT_WIDTHS(BankBits, RowBits, BlkBits, TagBits)
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  // AXI4 slave port (the controller's pseudo-channel, port-local addresses).
  `TPU_AXI_SLAVE_PORTS(, 1, IdBits, AddrBits),
  // Block requests to the controller (hbm_rd_req, hbm_wr_req: rtl/channels.json).
  output logic                rd_valid_o,
  input  logic                rd_ready_i,
  output logic [HbmRdReqW-1:0] rd_req_o,
  output logic                wr_valid_o,
  input  logic                wr_ready_i,
  output logic [HbmWrReqW-1:0] wr_req_o,
  // Read data from the controller (hbm_rdata, hbm_fwd).
  input  logic                rdata_valid_i,
  input  logic [HbmRdataW-1:0] rdata_i,
  input  logic                fwd_valid_i,
  input  logic [HbmFwdW-1:0]  fwd_i
);

  `TPU_HBM_PORT_TYPEDEFS(BankBits, RowBits, BlkBits, TagBits)

  if (AddrBits < CapBits || AddrBits > 64) begin : gen_bad_addr
    $error("tpu_hbm_axi_port: AddrBits (%0d) must be in %0d..64", AddrBits, CapBits);
  end
  if (AddrMap > 1) begin : gen_bad_map
    $error("tpu_hbm_axi_port: AddrMap must be 0 or 1 (got %0d)", AddrMap);
  end
  if (RetDepth < 2 || (1 << TagBits) != RetDepth) begin : gen_bad_ret
    $error("tpu_hbm_axi_port: RetDepth must be a power of two >= 2 (got %0d)", RetDepth);
  end

  // ----------------------------------------------------------------------------------------------
  // Address decoding. Inside the port, addresses are beat addresses (byte address / 32, below the
  // capacity): bit 0 is the burst in its block, the rest the block address.
  // ----------------------------------------------------------------------------------------------
  localparam int unsigned BeatBits = CapBits - 5;
  localparam int unsigned BaBase   = (AddrMap == 0) ? BgBits : BlkBits + BgBits;
  localparam int unsigned BgBase   = (AddrMap == 0) ? 0 : BlkBits;
  localparam int unsigned BlkBase  = (AddrMap == 0) ? BankBits : 0;

  // Block address -> bank, block in the row, row.
  localparam int unsigned BlockBits = BeatBits - 1;
  // SLVERR cases (see the header).
  function automatic logic bad_burst(logic [AddrBits-1:0] a, logic [7:0] len, logic [2:0] size,
                                     logic [1:0] burst);
    bad_burst = burst != tpu_pkg::AxiBurstIncr || size != 3'd5 || a[4:0] != '0 ||
                (9'(a[11:5]) + 9'(len)) > 9'd127 || (a >> CapBits) != '0;
  endfunction

  // ----------------------------------------------------------------------------------------------
  // Write path
  // ----------------------------------------------------------------------------------------------
  typedef enum logic [1:0] {WIdle, WData, WDrain} w_state_e;
  w_state_e            w_state_q, w_state_d;
  logic [IdBits-1:0]   w_id_q, w_id_d;
  logic [BeatBits-1:0] w_addr_q, w_addr_d;   // beat address of the next beat
  logic [8:0]          w_left_q, w_left_d;   // beats still to come
  logic                w_err_q, w_err_d;
  logic [511:0]        pc_data_q, pc_data_d;  // the block being assembled
  logic [63:0]         pc_strb_q, pc_strb_d;
  logic                pc_full_q, pc_full_d;  // assembled, waiting for the controller
  logic                pc_last_q, pc_last_d;  // ... and it ends the burst
  logic [BlockBits-1:0] pc_addr_q, pc_addr_d;

  // B responses, in burst order.
  localparam int unsigned BDepth = 4;
  logic [IdBits-1:0] bq_id_q  [BDepth];
  logic [1:0]        bq_resp_q[BDepth];
  logic [1:0]        bq_rd_q, bq_rd_d, bq_wr_q, bq_wr_d;
  logic [2:0]        bq_cnt_q, bq_cnt_d;
  logic              b_push;
  logic [1:0]        b_push_resp;

  // Back to back: the next AW is taken in the cycle the last block of a burst goes to the
  // controller, and a W beat in the cycle a full block goes (ready depends on registers only).
  logic pc_going;  // the assembled block goes to the controller this cycle
  assign pc_going   = pc_full_q && wr_ready_i;
  assign aw_ready_o = bq_cnt_q < 3'(BDepth - 1) &&
                      (w_state_q == WIdle || (w_state_q == WData && pc_going && pc_last_q));
  assign w_ready_o  = (w_state_q == WData && (!pc_full_q || (pc_going && !pc_last_q))) ||
                      w_state_q == WDrain;
  assign wr_valid_o = pc_full_q;
  // The bank number: bank group high, bank address low.
  hbm_wr_req_t wr_req;
  assign wr_req_o     = wr_req;
  assign wr_req.bank  = {pc_addr_q[BgBase +: BgBits], pc_addr_q[BaBase +: BaBits]};
  assign wr_req.blk   = pc_addr_q[BlkBase +: BlkBits];
  assign wr_req.row   = pc_addr_q[BankBits + BlkBits +: RowBits];
  assign wr_req.data  = pc_data_q;
  assign wr_req.strb  = pc_strb_q;

  logic w_fire, wr_fire;
  assign w_fire  = w_valid_i && w_ready_o;
  assign wr_fire = wr_valid_o && wr_ready_i;

  always_comb begin
    b_push      = 1'b0;
    b_push_resp = (w_err_q || (w_fire && w_last_i != (w_left_q == 9'd1))) ? tpu_pkg::AxiRespSlvErr
                                                                           : tpu_pkg::AxiRespOkay;
    if (w_state_q == WDrain && w_fire && w_left_q == 9'd1) b_push = 1'b1;
    if (wr_fire && pc_last_q) begin
      b_push      = 1'b1;
      b_push_resp = w_err_q ? tpu_pkg::AxiRespSlvErr : tpu_pkg::AxiRespOkay;
    end
  end

  always_comb begin
    w_state_d = w_state_q;
    w_id_d    = w_id_q;
    w_addr_d  = w_addr_q;
    w_left_d  = w_left_q;
    w_err_d   = w_err_q;
    pc_data_d = pc_data_q;
    pc_strb_d = pc_strb_q;
    pc_full_d = pc_full_q;
    pc_last_d = pc_last_q;
    pc_addr_d = pc_addr_q;
    unique case (w_state_q)
      WIdle: ;
      WData: begin
        if (wr_fire) begin  // first: a beat taken in the same cycle refills the block
          pc_full_d = 1'b0;
          pc_strb_d = '0;
          if (pc_last_q) w_state_d = WIdle;
        end
        if (w_fire) begin
          if (w_addr_q[0]) begin
            pc_data_d[511:256] = w_data_i;
            pc_strb_d[63:32]   = w_strb_i;
          end else begin
            pc_data_d[255:0] = w_data_i;
            pc_strb_d[31:0]  = w_strb_i;
          end
          pc_addr_d = w_addr_q[BeatBits-1:1];
          w_addr_d  = w_addr_q + 1'b1;
          w_left_d  = w_left_q - 9'd1;
          if (w_last_i != (w_left_q == 9'd1)) w_err_d = 1'b1;
          if (w_addr_q[0] || w_left_q == 9'd1) begin
            pc_full_d = 1'b1;
            pc_last_d = w_left_q == 9'd1;
          end
        end
      end
      WDrain: begin
        if (w_fire) begin
          w_left_d = w_left_q - 9'd1;
          if (w_left_q == 9'd1) w_state_d = WIdle;
        end
      end
      // A 3-state enum: the default is unreachable.
      /*verilator coverage_off*/ default: w_state_d = WIdle; /*verilator coverage_on*/
    endcase
    // A new burst (possibly in the cycle the previous one's last block goes).
    if (aw_valid_i && aw_ready_o) begin
      w_id_d    = aw_id_i;
      w_addr_d  = aw_addr_i[5 +: BeatBits];
      w_left_d  = {1'b0, aw_len_i} + 9'd1;
      w_err_d   = bad_burst(aw_addr_i, aw_len_i, aw_size_i, aw_burst_i);
      w_state_d = bad_burst(aw_addr_i, aw_len_i, aw_size_i, aw_burst_i) ? WDrain : WData;
    end
  end
  `TPU_FF(w_state_q, w_state_d, WIdle)
  `TPU_FF(w_id_q, w_id_d, '0)
  `TPU_FF(w_addr_q, w_addr_d, '0)
  `TPU_FF(w_left_q, w_left_d, '0)
  `TPU_FF(w_err_q, w_err_d, 1'b0)
  `TPU_FF(pc_data_q, pc_data_d, '0)
  `TPU_FF(pc_strb_q, pc_strb_d, '0)
  `TPU_FF(pc_full_q, pc_full_d, 1'b0)
  `TPU_FF(pc_last_q, pc_last_d, 1'b0)
  `TPU_FF(pc_addr_q, pc_addr_d, '0)

  always_comb begin
    bq_wr_d  = b_push ? bq_wr_q + 1'b1 : bq_wr_q;
    bq_rd_d  = bq_rd_q;
    if (b_valid_o && b_ready_i) bq_rd_d = bq_rd_q + 1'b1;
    bq_cnt_d = bq_cnt_q + (b_push ? 3'd1 : 3'd0) - ((b_valid_o && b_ready_i) ? 3'd1 : 3'd0);
  end
  `TPU_FF(bq_rd_q, bq_rd_d, '0)
  `TPU_FF(bq_wr_q, bq_wr_d, '0)
  `TPU_FF(bq_cnt_q, bq_cnt_d, '0)
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int unsigned i = 0; i < BDepth; i++) begin
        bq_id_q[i]   <= '0;
        bq_resp_q[i] <= '0;
      end
    end else if (b_push) begin
      bq_id_q[bq_wr_q]   <= w_id_q;
      bq_resp_q[bq_wr_q] <= b_push_resp;
    end
  end

  assign b_valid_o = bq_cnt_q != '0;
  assign b_id_o    = bq_id_q[bq_rd_q];
  assign b_resp_o  = bq_resp_q[bq_rd_q];

  // ----------------------------------------------------------------------------------------------
  // Read path: split into blocks, one return-buffer slot per block, answered in slot order
  // ----------------------------------------------------------------------------------------------
  logic                ar_busy_q, ar_busy_d;
  logic [IdBits-1:0]   ar_id_q, ar_id_d;
  logic [BeatBits-1:0] ar_addr_q, ar_addr_d;
  logic [8:0]          ar_left_q, ar_left_d;
  logic                ar_err_q, ar_err_d;

  logic [IdBits-1:0]   slot_id_q     [RetDepth];
  logic [1:0]          slot_beats_q  [RetDepth];
  logic [1:0]          slot_arrived_q[RetDepth];
  logic                slot_err_q    [RetDepth];
  logic                slot_last_q   [RetDepth];
  logic [511:0]        slot_data_q   [RetDepth];
  logic [TagBits-1:0]  slot_head_q, slot_head_d, slot_tail_q, slot_tail_d;
  logic [TagBits:0]    slot_cnt_q, slot_cnt_d;
  logic [1:0]          r_sent_q, r_sent_d;   // beats of the head slot already sent

  // The next block of the current burst.
  logic [1:0] blk_beats;
  logic       blk_last;
  always_comb begin
    if (ar_err_q) begin
      blk_beats = 2'b01;            // an erroneous burst is answered beat by beat
    end else if (ar_addr_q[0]) begin
      blk_beats = 2'b10;
    end else begin
      blk_beats = (ar_left_q >= 9'd2) ? 2'b11 : 2'b01;
    end
    blk_last = ar_left_q == ((blk_beats == 2'b11) ? 9'd2 : 9'd1);
  end

  logic slot_free, blk_go;
  assign slot_free  = slot_cnt_q != (TagBits + 1)'(RetDepth);
  assign ar_ready_o = !ar_busy_q || (blk_go && blk_last);  // back to back with the last block
  assign rd_valid_o = ar_busy_q && !ar_err_q && slot_free;
  hbm_rd_req_t rd_req;
  assign rd_req_o     = rd_req;
  assign rd_req.bank  = {ar_addr_q[1 + BgBase +: BgBits], ar_addr_q[1 + BaBase +: BaBits]};
  assign rd_req.blk   = ar_addr_q[1 + BlkBase +: BlkBits];
  assign rd_req.row   = ar_addr_q[1 + BankBits + BlkBits +: RowBits];
  assign rd_req.beats = blk_beats;
  assign rd_req.tag   = slot_tail_q;
  assign blk_go     = ar_busy_q && slot_free && (ar_err_q || rd_ready_i);

  // R channel: the head slot once every beat it asked for has arrived.
  logic       head_ready;
  logic       r_beat;      // which half goes out now
  logic       r_slot_done; // this beat is the slot's last
  logic [1:0] head_todo;
  assign head_todo   = slot_beats_q[slot_head_q] & ~r_sent_q;
  assign head_ready  = slot_cnt_q != '0 &&
                       (slot_err_q[slot_head_q] ||
                        (slot_arrived_q[slot_head_q] & slot_beats_q[slot_head_q]) ==
                        slot_beats_q[slot_head_q]);
  assign r_beat      = !head_todo[0];
  assign r_slot_done = head_todo != 2'b11;
  assign r_valid_o   = head_ready;
  assign r_id_o      = slot_id_q[slot_head_q];
  assign r_data_o    = slot_err_q[slot_head_q] ? '0 :
                       (r_beat ? slot_data_q[slot_head_q][511:256]
                               : slot_data_q[slot_head_q][255:0]);
  assign r_resp_o    = slot_err_q[slot_head_q] ? tpu_pkg::AxiRespSlvErr : tpu_pkg::AxiRespOkay;
  assign r_last_o    = slot_last_q[slot_head_q] && r_slot_done;

  logic r_fire, r_free;
  assign r_fire = r_valid_o && r_ready_i;
  assign r_free = r_fire && r_slot_done;

  hbm_rdata_t rdata;  // read data from the controller
  hbm_fwd_t   fwd;    // a block forwarded from its write queue
  assign rdata = rdata_i;
  assign fwd   = fwd_i;

  always_comb begin
    ar_busy_d   = ar_busy_q;
    ar_id_d     = ar_id_q;
    ar_addr_d   = ar_addr_q;
    ar_left_d   = ar_left_q;
    ar_err_d    = ar_err_q;
    slot_tail_d = blk_go ? slot_tail_q + 1'b1 : slot_tail_q;
    slot_head_d = r_free ? slot_head_q + 1'b1 : slot_head_q;
    slot_cnt_d  = slot_cnt_q + (TagBits + 1)'(blk_go) - (TagBits + 1)'(r_free);
    r_sent_d    = r_sent_q;
    if (blk_go) begin
      ar_addr_d = ar_addr_q + BeatBits'((blk_beats == 2'b11) ? 2 : 1);
      ar_left_d = ar_left_q - ((blk_beats == 2'b11) ? 9'd2 : 9'd1);
      if (blk_last) ar_busy_d = 1'b0;
    end
    // A new burst, after the block above (it may be the previous burst's last).
    if (ar_valid_i && ar_ready_o) begin
      ar_busy_d = 1'b1;
      ar_id_d   = ar_id_i;
      ar_addr_d = ar_addr_i[5 +: BeatBits];
      ar_left_d = {1'b0, ar_len_i} + 9'd1;
      ar_err_d  = bad_burst(ar_addr_i, ar_len_i, ar_size_i, ar_burst_i);
    end
    if (r_fire) r_sent_d = r_slot_done ? 2'b00 : (r_sent_q | (r_beat ? 2'b10 : 2'b01));
  end
  `TPU_FF(ar_busy_q, ar_busy_d, 1'b0)
  `TPU_FF(ar_id_q, ar_id_d, '0)
  `TPU_FF(ar_addr_q, ar_addr_d, '0)
  `TPU_FF(ar_left_q, ar_left_d, '0)
  `TPU_FF(ar_err_q, ar_err_d, 1'b0)
  `TPU_FF(slot_head_q, slot_head_d, '0)
  `TPU_FF(slot_tail_q, slot_tail_d, '0)
  `TPU_FF(slot_cnt_q, slot_cnt_d, '0)
  `TPU_FF(r_sent_q, r_sent_d, '0)

  // The return slots: written at allocation, then as their beats arrive (after the allocation:
  // a forwarded block arrives in its allocation cycle).
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int unsigned i = 0; i < RetDepth; i++) begin
        slot_id_q[i] <= '0; slot_beats_q[i] <= '0; slot_arrived_q[i] <= '0; slot_err_q[i] <= 1'b0;
        slot_last_q[i] <= 1'b0;
      end
    end else begin
      if (blk_go) begin
        slot_id_q[slot_tail_q]      <= ar_id_q;
        slot_beats_q[slot_tail_q]   <= blk_beats;
        slot_arrived_q[slot_tail_q] <= 2'b00;
        slot_err_q[slot_tail_q]     <= ar_err_q;
        slot_last_q[slot_tail_q]    <= blk_last;
      end
      if (rdata_valid_i) begin
        slot_arrived_q[rdata.tag][rdata.beat] <= 1'b1;
      end
      if (fwd_valid_i) slot_arrived_q[fwd.tag] <= 2'b11;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rdata_valid_i) begin
      if (rdata.beat) slot_data_q[rdata.tag][511:256] <= rdata.data;
      else            slot_data_q[rdata.tag][255:0]   <= rdata.data;
    end
    if (fwd_valid_i) slot_data_q[fwd.tag] <= fwd.data;
  end

  // ----------------------------------------------------------------------------------------------
  // Assertions
  // ----------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  a_r_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                             r_valid_o && !r_ready_i |=> r_valid_o && $stable(r_data_o) &&
                             $stable(r_id_o) && $stable(r_last_o))
    else $error("tpu_hbm_axi_port: R beat changed while waiting");
  a_b_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                             b_valid_o && !b_ready_i |=> b_valid_o && $stable(b_id_o) &&
                             $stable(b_resp_o))
    else $error("tpu_hbm_axi_port: B changed while waiting");
  a_read_data_has_slot: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                         rdata_valid_i |-> slot_cnt_q != '0)
    else $error("tpu_hbm_axi_port: read data for no slot");
`endif

endmodule
