// SPDX-License-Identifier: Apache-2.0
// One request queue of tpu_hbm_pc_ctrl (instantiated for reads and for writes): a collapsing
// queue, index 0 the oldest. Each entry holds a 64-byte block's bank, row and block, the beats
// it still needs (bit 0 the lower 32 bytes), a payload (a read's tag, a write's data slot),
// whether it waits for a queued write (dep, on write slot dslot) and its age in cycles
// (saturating at AgeMax).
//
// Every cycle, in this order: a column command for entry col_idx_i clears its beat; the entry
// rm_idx_i leaves (its last beat issued) and the younger ones move up; dependants of the write
// slot release_slot_i are released; ages grow; a pushed request is appended after the entries
// that stay. The controller reads every entry but its dslot: entries_o, an hbm_q_entry
// (rtl/channels.json) per entry, entry i in bits [i*W +: W].
`include "tpu_channels.svh"

module tpu_hbm_req_queue #(
  parameter int unsigned Depth    = 16,
  parameter int unsigned BankBits = 4,
  parameter int unsigned RowBits  = 14,
  parameter int unsigned BlkBits  = 5,
  parameter int unsigned PayBits  = 6,
  parameter int unsigned SlotBits = 5,
  parameter int unsigned AgeBits  = 10,
  parameter int unsigned AgeMax   = 1000,
  localparam int unsigned IdxBits = $clog2(Depth),
  localparam int unsigned CntBits = $clog2(Depth + 1),
  localparam int unsigned EntryW  = `TPU_HBM_Q_ENTRY_W(BankBits, RowBits, BlkBits, PayBits, AgeBits)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  // Append a request (the controller pushes only when count_o < Depth or an entry leaves).
  input  logic                      push_i,
  input  logic [BankBits-1:0]       push_bank_i,
  input  logic [RowBits-1:0]        push_row_i,
  input  logic [BlkBits-1:0]        push_blk_i,
  input  logic [1:0]                push_need_i,
  input  logic [PayBits-1:0]        push_pay_i,
  input  logic                      push_dep_i,
  input  logic [SlotBits-1:0]       push_dslot_i,
  // A column command for one of this queue's entries, its beat (0: lower, 1: upper).
  input  logic                      col_i,
  input  logic [IdxBits-1:0]        col_idx_i,
  input  logic                      col_beat_i,
  // An entry leaves.
  input  logic                      rm_i,
  input  logic [IdxBits-1:0]        rm_idx_i,
  // The write in this slot issued its last beat: entries waiting for it are released.
  input  logic                      release_i,
  input  logic [SlotBits-1:0]       release_slot_i,
  // The entries.
  output logic [CntBits-1:0]        count_o,
  output logic [Depth*EntryW-1:0]   entries_o
);

  typedef `TPU_HBM_Q_ENTRY_T(BankBits, RowBits, BlkBits, PayBits, AgeBits) hbm_q_entry_t;

  if (Depth < 2) begin : gen_bad_depth
    $error("tpu_hbm_req_queue: Depth must be >= 2 (got %0d)", Depth);
  end

  logic                v_q    [Depth];
  logic [BankBits-1:0] bank_q [Depth];
  logic [RowBits-1:0]  row_q  [Depth];
  logic [BlkBits-1:0]  blk_q  [Depth];
  logic [1:0]          need_q [Depth];
  logic [PayBits-1:0]  pay_q  [Depth];
  logic                dep_q  [Depth];
  logic [SlotBits-1:0] dslot_q[Depth];
  logic [AgeBits-1:0]  age_q  [Depth];
  logic [CntBits-1:0]  cnt_q;

  logic                v_d    [Depth];
  logic [BankBits-1:0] bank_d [Depth];
  logic [RowBits-1:0]  row_d  [Depth];
  logic [BlkBits-1:0]  blk_d  [Depth];
  logic [1:0]          need_d [Depth];
  logic [PayBits-1:0]  pay_d  [Depth];
  logic                dep_d  [Depth];
  logic [SlotBits-1:0] dslot_d[Depth];
  logic [AgeBits-1:0]  age_d  [Depth];
  logic [CntBits-1:0]  cnt_d, kept;  // entries after this cycle; entries that stay

  always_comb begin
    for (int unsigned i = 0; i < Depth; i++) begin
      int unsigned s;  // the entry that moves into place i
      s = (rm_i && i >= 32'(rm_idx_i)) ? i + 1 : i;
      v_d[i]     = 1'b0;
      bank_d[i]  = bank_q[i];
      row_d[i]   = row_q[i];
      blk_d[i]   = blk_q[i];
      pay_d[i]   = pay_q[i];
      dslot_d[i] = dslot_q[i];
      need_d[i]  = need_q[i];
      dep_d[i]   = dep_q[i];
      age_d[i]   = age_q[i];
      if (s < Depth) begin
        v_d[i]     = v_q[s];
        bank_d[i]  = bank_q[s];
        row_d[i]   = row_q[s];
        blk_d[i]   = blk_q[s];
        pay_d[i]   = pay_q[s];
        dslot_d[i] = dslot_q[s];
        need_d[i]  = (col_i && s == 32'(col_idx_i)) ?
                     (need_q[s] & ~(col_beat_i ? 2'b10 : 2'b01)) : need_q[s];
        dep_d[i]   = dep_q[s] && !(release_i && dslot_q[s] == release_slot_i);
        age_d[i]   = (age_q[s] == AgeBits'(AgeMax)) ? age_q[s] : age_q[s] + 1'b1;
      end
    end
    kept = cnt_q - CntBits'(rm_i);
    if (push_i) begin
      v_d[IdxBits'(kept)]     = 1'b1;
      bank_d[IdxBits'(kept)]  = push_bank_i;
      row_d[IdxBits'(kept)]   = push_row_i;
      blk_d[IdxBits'(kept)]   = push_blk_i;
      need_d[IdxBits'(kept)]  = push_need_i;
      pay_d[IdxBits'(kept)]   = push_pay_i;
      dep_d[IdxBits'(kept)]   = push_dep_i;
      dslot_d[IdxBits'(kept)] = push_dslot_i;
      age_d[IdxBits'(kept)]   = '0;
    end
    cnt_d = kept + CntBits'(push_i);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cnt_q <= '0;
      for (int unsigned i = 0; i < Depth; i++) begin
        v_q[i]     <= 1'b0;
        bank_q[i]  <= '0;
        row_q[i]   <= '0;
        blk_q[i]   <= '0;
        need_q[i]  <= '0;
        pay_q[i]   <= '0;
        dep_q[i]   <= 1'b0;
        dslot_q[i] <= '0;
        age_q[i]   <= '0;
      end
    end else begin
      cnt_q <= cnt_d;
      for (int unsigned i = 0; i < Depth; i++) begin
        v_q[i]     <= v_d[i];
        bank_q[i]  <= bank_d[i];
        row_q[i]   <= row_d[i];
        blk_q[i]   <= blk_d[i];
        need_q[i]  <= need_d[i];
        pay_q[i]   <= pay_d[i];
        dep_q[i]   <= dep_d[i];
        dslot_q[i] <= dslot_d[i];
        age_q[i]   <= age_d[i];
      end
    end
  end

  assign count_o = cnt_q;
  // (One struct variable reused per entry: Yosys 0.23 cannot size a struct declared inside a
  // generate loop.)
  hbm_q_entry_t e;
  always_comb begin
    for (int unsigned i = 0; i < Depth; i++) begin
      e.valid = v_q[i];
      e.dep   = dep_q[i];
      e.need  = need_q[i];
      e.bank  = bank_q[i];
      e.row   = row_q[i];
      e.blk   = blk_q[i];
      e.pay   = pay_q[i];
      e.age   = age_q[i];
      entries_o[i*EntryW +: EntryW] = e;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  logic [Depth-1:0] v_all;  // v_q as a vector (Verilator 5.006 cannot index v_q in a property)
  for (genvar i = 0; i < Depth; i++) begin : gen_v_all
    assign v_all[i] = v_q[i];
  end
  a_no_overflow: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                  push_i |-> 32'(cnt_q) - 32'(rm_i) < Depth)
    else $error("tpu_hbm_req_queue: push into a full queue (%0d entries)", cnt_q);
  a_rm_valid: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               rm_i |-> 32'(rm_idx_i) < 32'(cnt_q) && v_all[rm_idx_i])
    else $error("tpu_hbm_req_queue: entry %0d leaves but only %0d are queued", rm_idx_i, cnt_q);
  logic [1:0] col_need;  // the beats the column command's entry needs
  assign col_need = need_q[col_idx_i];
  a_col_valid: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                col_i |-> v_all[col_idx_i] && col_need[col_beat_i])
    else $error("tpu_hbm_req_queue: a column command for entry %0d beat %0d it does not need",
                col_idx_i, col_beat_i);
`endif

endmodule
