// SPDX-License-Identifier: Apache-2.0
// The vector unit's core (docs/vpu.md): Lanes lanes (tpu_vpu_lane) under one sequencer that runs
// a micro-program (tpu_vpu_ucode_pkg's ROM) on a batch of Slots rows. start_i loads the batch
// (row s, lane l of A, B and C at bits [32*(s*Lanes + l) +: 32]) and the program's number; the
// sequencer then issues micro-op u to slot 0, 1, .., Slots-1 before micro-op u + 1, waits for the
// last FMA to leave the pipeline, and raises done_o for a cycle, with every row's result (each
// slot's r7) on res_o until the next start. A batch takes length * Slots + PipeRegs + 1 cycles
// after the start's cycle.
`include "tpu_assert.svh"

module tpu_vpu #(
  parameter int unsigned Lanes    = 4,
  parameter int unsigned Slots    = 4,
  parameter int unsigned PipeRegs = 3,
  localparam int unsigned SlotBits = (Slots > 1) ? $clog2(Slots) : 1,
  localparam int unsigned W        = Slots * Lanes * 32
) (
  input  logic         clk_i,
  input  logic         rst_ni,
  input  logic         ftz_i,      // held from start_i to done_o
  input  logic         start_i,    // accepted when !busy_o
  input  logic [7:0]   prog_i,     // a program of tpu_vpu_ucode_pkg (Prog*)
  input  logic [W-1:0] a_i,
  input  logic [W-1:0] b_i,
  input  logic [W-1:0] c_i,
  output logic         busy_o,
  output logic         done_o,
  output logic [W-1:0] res_o
);

  localparam int unsigned RomAddrBits = tpu_vpu_ucode_pkg::RomAddrBits;

  typedef enum logic [1:0] {Idle, Issue, Drain} state_e;
  state_e                 state;
  logic [RomAddrBits-1:0] addr;
  logic [RomAddrBits:0]   left;      // micro-ops left to issue, this one included
  logic [SlotBits-1:0]    slot;
  logic [$clog2(PipeRegs + 2)-1:0] drain;
  logic                   load, issue;

  assign load   = start_i && state == Idle;
  assign issue  = state == Issue;
  assign busy_o = state != Idle;

  state_e                 state_d;
  logic [RomAddrBits-1:0] addr_d;
  logic [RomAddrBits:0]   left_d;
  logic [SlotBits-1:0]    slot_d;
  logic [$clog2(PipeRegs + 2)-1:0] drain_d;
  logic                   done_d, last_slot, last_uop, drained;

  assign last_slot = slot == SlotBits'(Slots - 1);
  assign last_uop  = left == (RomAddrBits + 1)'(1);
  assign drained   = drain == ($clog2(PipeRegs + 2))'(PipeRegs);

  always_comb begin
    state_d = state;
    addr_d  = addr;
    left_d  = left;
    slot_d  = slot;
    drain_d = drain;
    done_d  = 1'b0;
    unique case (state)
      Idle: if (start_i) begin
        addr_d  = tpu_vpu_ucode_pkg::prog_start(prog_i);
        left_d  = tpu_vpu_ucode_pkg::prog_length(prog_i);
        slot_d  = '0;
        drain_d = '0;
        state_d = (tpu_vpu_ucode_pkg::prog_length(prog_i) == '0) ? Drain : Issue;
      end
      Issue: begin
        // Micro-op u to every slot in turn, then micro-op u + 1.
        slot_d = last_slot ? '0 : slot + 1'b1;
        if (last_slot) begin
          addr_d = addr + 1'b1;
          left_d = left - 1'b1;
          if (last_uop) state_d = Drain;
        end
      end
      Drain: begin
        // The last FMA's result is written PipeRegs cycles after its issue.
        drain_d = drain + 1'b1;
        if (drained) begin
          state_d = Idle;
          done_d  = 1'b1;
        end
      end
      default: state_d = Idle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state  <= Idle;
      addr   <= '0;
      left   <= '0;
      slot   <= '0;
      drain  <= '0;
      done_o <= 1'b0;
    end else begin
      state  <= state_d;
      addr   <= addr_d;
      left   <= left_d;
      slot   <= slot_d;
      drain  <= drain_d;
      done_o <= done_d;
    end
  end

  logic [63:0] uop;
  assign uop = tpu_vpu_ucode_pkg::ucode_word(addr);

  for (genvar l = 0; l < Lanes; l++) begin : gen_lane
    logic [Slots*32-1:0] la, lb, lc, lres;
    for (genvar s = 0; s < Slots; s++) begin : gen_slot
      assign la[32*s +: 32] = a_i[32*(s*Lanes + l) +: 32];
      assign lb[32*s +: 32] = b_i[32*(s*Lanes + l) +: 32];
      assign lc[32*s +: 32] = c_i[32*(s*Lanes + l) +: 32];
      assign res_o[32*(s*Lanes + l) +: 32] = lres[32*s +: 32];
    end
    tpu_vpu_lane #(.Slots(Slots), .PipeRegs(PipeRegs)) u_lane (
      .clk_i, .rst_ni, .ftz_i,
      .load_i      (load),
      .load_a_i    (la),
      .load_b_i    (lb),
      .load_c_i    (lc),
      .issue_i     (issue),
      .issue_slot_i(slot),
      .uop_i       (uop),
      .res_o       (lres)
    );
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      a_known_prog: assert (!load || prog_i < 8'(tpu_vpu_ucode_pkg::NumProgs))
        else `TPU_FAIL($sformatf("tpu_vpu: start with program %0d (of %0d)", prog_i,
                                 tpu_vpu_ucode_pkg::NumProgs))
    end
  end
`endif

endmodule
