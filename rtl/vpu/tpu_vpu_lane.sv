// SPDX-License-Identifier: Apache-2.0
// One lane of the vector unit (docs/vpu.md, "Micro-programs"): the state of Slots rows (16 fp32
// registers, the 10-bit K and 8 predicates each), one fp32 FMA (tpu_mac with fp32 operands,
// PipeRegs stages) and the micro-ops that move bits, compare and test. Each cycle it executes at
// most one micro-op for one slot; the sequencer (tpu_vpu) issues a micro-op to every slot in turn
// before the next micro-op, so with Slots > PipeRegs an FMA's result is written before its slot's
// next micro-op reads it.
//
// Loading (load_i) writes every slot's r0, r1, r2 from the inputs, read as the contract's
// operands (FTZ: a subnormal as a zero of its sign), and clears the rest of its state.
`include "tpu_assert.svh"

module tpu_vpu_lane #(
  parameter int unsigned Slots    = 4,
  parameter int unsigned PipeRegs = 3,
  localparam int unsigned SlotBits = (Slots > 1) ? $clog2(Slots) : 1
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  ftz_i,
  input  logic                  load_i,
  input  logic [Slots*32-1:0]   load_a_i,   // slot s: bits [32*s +: 32]
  input  logic [Slots*32-1:0]   load_b_i,
  input  logic [Slots*32-1:0]   load_c_i,
  input  logic                  issue_i,
  input  logic [SlotBits-1:0]   issue_slot_i,
  input  logic [63:0]           uop_i,
  output logic [Slots*32-1:0]   res_o       // every slot's r7
);

  // The micro-op encoding (tpu_vpu_ucode_pkg, generated from rtl/vpu/ucode.json).
  localparam int unsigned KBits = tpu_vpu_ucode_pkg::KBits;
  localparam int unsigned NumRegs = tpu_vpu_ucode_pkg::NumRegs;
  localparam int unsigned NumPreds = tpu_vpu_ucode_pkg::NumPreds;
  localparam int unsigned ConstBase = tpu_vpu_ucode_pkg::ConstBase;
  localparam int unsigned OpndBits = tpu_vpu_ucode_pkg::UABits;
  localparam logic [4:0] OpAbs = tpu_vpu_ucode_pkg::OpAbs;
  localparam logic [4:0] OpCsgn = tpu_vpu_ucode_pkg::OpCsgn;
  localparam logic [4:0] OpEq = tpu_vpu_ucode_pkg::OpEq;
  localparam logic [4:0] OpKint = tpu_vpu_ucode_pkg::OpKint;
  localparam logic [4:0] OpFma = tpu_vpu_ucode_pkg::OpFma;
  localparam logic [4:0] OpGe = tpu_vpu_ucode_pkg::OpGe;
  localparam logic [4:0] OpGt = tpu_vpu_ucode_pkg::OpGt;
  localparam logic [4:0] OpKadd = tpu_vpu_ucode_pkg::OpKadd;
  localparam logic [4:0] OpKexp = tpu_vpu_ucode_pkg::OpKexp;
  localparam logic [4:0] OpKfrac = tpu_vpu_ucode_pkg::OpKfrac;
  localparam logic [4:0] OpKhalf = tpu_vpu_ucode_pkg::OpKhalf;
  localparam logic [4:0] OpKneg = tpu_vpu_ucode_pkg::OpKneg;
  localparam logic [4:0] OpMant = tpu_vpu_ucode_pkg::OpMant;
  localparam logic [4:0] OpMax = tpu_vpu_ucode_pkg::OpMax;
  localparam logic [4:0] OpMin = tpu_vpu_ucode_pkg::OpMin;
  localparam logic [4:0] OpMov = tpu_vpu_ucode_pkg::OpMov;
  localparam logic [4:0] OpPand = tpu_vpu_ucode_pkg::OpPand;
  localparam logic [4:0] OpPkgt = tpu_vpu_ucode_pkg::OpPkgt;
  localparam logic [4:0] OpPklt = tpu_vpu_ucode_pkg::OpPklt;
  localparam logic [4:0] OpPkodd = tpu_vpu_ucode_pkg::OpPkodd;
  localparam logic [4:0] OpPmag = tpu_vpu_ucode_pkg::OpPmag;
  localparam logic [4:0] OpPow2 = tpu_vpu_ucode_pkg::OpPow2;
  localparam logic [4:0] OpPsign = tpu_vpu_ucode_pkg::OpPsign;

  localparam logic [31:0] QNaN = 32'h7FC0_0000;
  localparam logic [31:0] One  = 32'h3F80_0000;

  if (Slots <= PipeRegs) begin : gen_bad_slots
    $error("tpu_vpu_lane: Slots must exceed PipeRegs (an FMA's result is read a round later)");
  end

  // ---------------------------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------------------------
  logic [31:0]      regs  [Slots][NumRegs];
  logic [KBits-1:0] kreg  [Slots];
  logic [NumPreds-1:0] preds [Slots];

  for (genvar s = 0; s < Slots; s++) begin : gen_res
    assign res_o[32*s +: 32] = regs[s][7];
  end

  // ---------------------------------------------------------------------------------------------
  // Decode
  // ---------------------------------------------------------------------------------------------
  logic [4:0]          op;
  logic [3:0]          d;
  logic [OpndBits-1:0] sa, sb, sc;
  logic                na, nc, nr, pen, pinv, pbinv;
  logic [2:0]          pidx, pa, pb;
  logic [KBits-1:0]    imm;
  assign op    = uop_i[tpu_vpu_ucode_pkg::UOpLsb +: tpu_vpu_ucode_pkg::UOpBits];
  assign d     = uop_i[tpu_vpu_ucode_pkg::UDLsb +: tpu_vpu_ucode_pkg::UDBits];
  assign sa    = uop_i[tpu_vpu_ucode_pkg::UALsb +: tpu_vpu_ucode_pkg::UABits];
  assign sb    = uop_i[tpu_vpu_ucode_pkg::UBLsb +: tpu_vpu_ucode_pkg::UBBits];
  assign sc    = uop_i[tpu_vpu_ucode_pkg::UCLsb +: tpu_vpu_ucode_pkg::UCBits];
  assign na    = uop_i[tpu_vpu_ucode_pkg::UNaLsb];
  assign nc    = uop_i[tpu_vpu_ucode_pkg::UNcLsb];
  assign nr    = uop_i[tpu_vpu_ucode_pkg::UNrLsb];
  assign pen   = uop_i[tpu_vpu_ucode_pkg::UPenLsb];
  assign pinv  = uop_i[tpu_vpu_ucode_pkg::UPinvLsb];
  assign pidx  = uop_i[tpu_vpu_ucode_pkg::UPidxLsb +: tpu_vpu_ucode_pkg::UPidxBits];
  assign imm   = uop_i[tpu_vpu_ucode_pkg::UImmLsb +: tpu_vpu_ucode_pkg::UImmBits];
  assign pa    = uop_i[tpu_vpu_ucode_pkg::UPaLsb +: tpu_vpu_ucode_pkg::UPaBits];
  assign pb    = uop_i[tpu_vpu_ucode_pkg::UPbLsb +: tpu_vpu_ucode_pkg::UPbBits];
  assign pbinv = uop_i[tpu_vpu_ucode_pkg::UPbinvLsb];

  // The issuing slot's state.
  logic [31:0]         va, vb, vc, a, c;
  logic [KBits-1:0]    k;
  logic [NumPreds-1:0] p;
  always_comb begin
    va = (sa < OpndBits'(ConstBase)) ? regs[issue_slot_i][sa[3:0]]
                                     : tpu_vpu_ucode_pkg::ucode_const(sa);
    vb = (sb < OpndBits'(ConstBase)) ? regs[issue_slot_i][sb[3:0]]
                                     : tpu_vpu_ucode_pkg::ucode_const(sb);
    vc = (sc < OpndBits'(ConstBase)) ? regs[issue_slot_i][sc[3:0]]
                                     : tpu_vpu_ucode_pkg::ucode_const(sc);
    k  = kreg[issue_slot_i];
    p  = preds[issue_slot_i];
  end
  assign a = {va[31] ^ na, va[30:0]};
  assign c = {vc[31] ^ nc, vc[30:0]};

  logic enabled;
  assign enabled = issue_i && (!pen || (p[pidx] != pinv));

  // ---------------------------------------------------------------------------------------------
  // The contract's comparisons on operands already read (docs/numerics.md; vpu::Max and others)
  // ---------------------------------------------------------------------------------------------
  function automatic logic is_nan(input logic [30:0] x);
    is_nan = (x[30:23] == 8'hFF) && (x[22:0] != '0);
  endfunction
  // x below y in IEEE 754-2019's maximum / minimum order (-0 below +0); neither a NaN.
  function automatic logic below(input logic [31:0] x, input logic [31:0] y);
    if (x[31] != y[31]) below = x[31];
    else if (x[31])     below = x > y;
    else                below = x < y;
  endfunction
  function automatic logic same(input logic [31:0] x, input logic [31:0] y);
    same = (x == y) || ((x[30:0] | y[30:0]) == '0);
  endfunction

  logic              any_nan;
  logic [31:0]       alu;
  logic [KBits-1:0]  k_next, k_sum;
  logic [7:0]        pow2_exp;
  assign any_nan  = is_nan(a[30:0]) || is_nan(vb[30:0]);
  assign k_sum    = k + imm;
  assign pow2_exp = 8'(k_sum + KBits'(127));

  // Register results of the micro-ops that are not an FMA.
  always_comb begin
    unique case (op)
      OpMov:   alu = a;
      OpAbs:   alu = {1'b0, a[30:0]};
      OpMant:  alu = {9'h07F, a[22:0]};
      OpCsgn:  alu = {vb[31], a[30:0]};
      OpPow2:  alu = {1'b0, pow2_exp, 23'd0};
      OpMax:   alu = any_nan ? QNaN : (below(a, vb) ? vb : a);
      OpMin:   alu = any_nan ? QNaN : (below(vb, a) ? vb : a);
      OpGt:    alu = (!any_nan && !same(a, vb) && below(vb, a)) ? One : '0;
      OpGe:    alu = (!any_nan && (same(a, vb) || below(vb, a))) ? One : '0;
      OpEq:    alu = (!any_nan && same(a, vb)) ? One : '0;
      OpKint:  alu = 32'h4B40_0000 + 32'($signed(k));
      default: alu = '0;
    endcase
  end

  logic writes_reg, writes_k, writes_p, p_val;
  // The opcodes come in groups (scripts/gen_ucode.py's order): mov .. kint write a register,
  // kfrac .. khalf K, pmag .. pand a predicate.
  assign writes_reg = op >= OpMov && op <= OpKint;
  assign writes_k   = op >= OpKfrac && op <= OpKhalf;
  assign writes_p   = op >= OpPmag && op <= OpPand;

  always_comb begin
    unique case (op)
      // (fraction - 2^22) mod 2^10 is the fraction's low 10 bits: 2^22 is 0 mod 2^10.
      OpKfrac: k_next = a[KBits-1:0];
      OpKexp:  k_next = KBits'(a[30:23]) - KBits'(127);
      OpKadd:  k_next = k_sum;
      OpKneg:  k_next = -k;
      OpKhalf: k_next = KBits'($signed(k) >>> 1);
      default: k_next = k;
    endcase
    unique case (op)
      OpPmag:  p_val = a[30:0] >= vb[30:0];
      OpPsign: p_val = a[31];
      OpPkgt:  p_val = $signed(k) > $signed(imm);
      OpPklt:  p_val = $signed(k) < $signed(imm);
      OpPkodd: p_val = k[0];
      OpPand:  p_val = p[pa] && (p[pb] != pbinv);
      default: p_val = 1'b0;
    endcase
  end

  // ---------------------------------------------------------------------------------------------
  // The FMA: its destination travels beside it.
  // ---------------------------------------------------------------------------------------------
  logic        fma_in, fma_out;
  logic [31:0] fma_res;
  assign fma_in = enabled && (op == OpFma);

  tpu_mac #(.ExpBits(8), .InManBits(23), .AccManBits(23), .PipeRegs(PipeRegs),
            .ModeSel(tpu_pkg::ModeRuntime)) u_fma (
    .clk_i, .rst_ni,
    .in_valid_i (fma_in),
    .ftz_i,
    .a_i        (a),
    .b_i        (vb),
    .c_i        (c),
    .out_valid_o(fma_out),
    .res_o      (fma_res)
  );

  localparam int unsigned TagW = SlotBits + 4 + 1;
  logic [TagW-1:0] tag_in, tag_out;
  logic            tag_valid;
  assign tag_in = {issue_slot_i, d, nr};
  tpu_delay #(.Width(TagW), .Depth(PipeRegs)) u_tag (
    .clk_i, .rst_ni,
    .valid_i(fma_in),
    .data_i (tag_in),
    .valid_o(tag_valid),
    .data_o (tag_out)
  );

  logic [SlotBits-1:0] wb_slot;
  logic [3:0]          wb_reg;
  logic                wb_neg;
  assign {wb_slot, wb_reg, wb_neg} = tag_out;

  // ---------------------------------------------------------------------------------------------
  // State updates
  // ---------------------------------------------------------------------------------------------
  function automatic logic [31:0] operand(input logic [31:0] x, input logic ftz);
    operand = (ftz && x[30:23] == 8'd0) ? {x[31], 31'd0} : x;
  endfunction

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int s = 0; s < Slots; s++) begin
        for (int r = 0; r < NumRegs; r++) regs[s][r] <= '0;
        kreg[s]  <= '0;
        preds[s] <= '0;
      end
    end else if (load_i) begin
      for (int s = 0; s < Slots; s++) begin
        regs[s][0] <= operand(load_a_i[32*s +: 32], ftz_i);
        regs[s][1] <= operand(load_b_i[32*s +: 32], ftz_i);
        regs[s][2] <= operand(load_c_i[32*s +: 32], ftz_i);
        for (int r = 3; r < NumRegs; r++) regs[s][r] <= '0;
        kreg[s]  <= '0;
        preds[s] <= '0;
      end
    end else begin
      if (tag_valid && fma_out) regs[wb_slot][wb_reg] <= {fma_res[31] ^ wb_neg, fma_res[30:0]};
      if (enabled && writes_reg) regs[issue_slot_i][d] <= alu;
      if (enabled && writes_k)   kreg[issue_slot_i] <= k_next;
      if (enabled && writes_p)   preds[issue_slot_i][d[2:0]] <= p_val;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni && !load_i) begin
      // The FMA's result and the tag that names its destination come out together.
      a_tag_aligned: assert (tag_valid == fma_out)
        else `TPU_FAIL("tpu_vpu_lane: FMA result and destination tag out of step")
      // One write per slot and cycle: an FMA writes back while its slot is not issuing.
      a_one_write: assert (!(tag_valid && enabled && writes_reg && wb_slot == issue_slot_i))
        else `TPU_FAIL("tpu_vpu_lane: a slot written by an FMA and a micro-op at once")
      // The ROM holds no opcode without a meaning.
      a_known_op: assert (!issue_i || op <= OpPand)
        else `TPU_FAIL($sformatf("tpu_vpu_lane: micro-op with opcode %0d", op))
    end
  end
`endif

endmodule
