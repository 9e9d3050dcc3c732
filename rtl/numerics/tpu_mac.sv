// SPDX-License-Identifier: Apache-2.0
// Fused multiply-add res = a·b + c (bf16 × bf16 + fp32 → fp32, the matrix unit's MAC; or fp32 ×
// fp32 + fp32 with InManBits = 23, the vector unit's fma32), rounded once to nearest-even, exactly
// as docs/numerics.md defines it, in IEEE or FTZ mode (run-time input ftz_i).
//
// Datapath (all widths derived from ExpBits / InManBits / AccManBits):
//   stage 0  unpack, normalise subnormal operands, exact product, special values; the addend's
//            shift (one multi-operand sum of the exponent fields)
//   stage 1  align the addend against the product in a window of SW bits (bits shifted out
//            become a sticky bit, found by masking the addend), add / subtract (both
//            differences in parallel, no negation in series)
//   stage 2  normalise: leading-zero shift, stopped where the result reaches the subnormal grid
//   stage 3  round to nearest-even, pack, overflow, FTZ flush, special-value bypass
// PipeRegs chooses where registers go between the stages (latency = PipeRegs cycles):
//   0: none (combinational)   1: after stage 1   2: after stages 0 and 2   3: after 0, 1 and 2
//
// Window layout (bit 0 = LSB, with the default formats: G = 12, PM = 27, AM = 53, SW = 55; for
// fp32 operands G = 2, PM = 49, AM = 75, SW = 77):
//   [SW-1]        carry of an effective addition
//   [AM:PM+3]     addend significand when it is much larger than the product (shift 0)
//   [PM:G]        the exact product (its MSB may be zero: normalised operands give 1 ≤ p < 4)
//   [G-1:0]       addend bits below the product, then the sticky (jam) bit at 0
// The addend is only ever shifted right. A product more than AM-PM bits below the addend stays
// where it is: below the addend's rounding bits only its non-zero-ness and sign matter, and any
// position there rounds the same. A product below a quarter of the smallest subnormal's ulp is
// always that far below a non-zero addend; alone (zero addend) it rounds to a zero of its sign.
`include "tpu_assert.svh"

module tpu_mac #(
  parameter int unsigned ExpBits    = tpu_pkg::Bf16ExpBits,
  parameter int unsigned InManBits  = tpu_pkg::Bf16ManBits,
  parameter int unsigned AccManBits = tpu_pkg::Fp32ManBits,
  parameter int unsigned PipeRegs   = 0,
  // tpu_pkg::ModeRuntime (ftz_i decides), ModeIeee or ModeFtz (ftz_i ignored).
  parameter int unsigned ModeSel    = tpu_pkg::ModeRuntime
) (
  input  logic                        clk_i,
  input  logic                        rst_ni,
  input  logic                        in_valid_i,
  input  logic                        ftz_i,    // 1: FTZ mode, 0: IEEE mode
  input  logic [ExpBits+InManBits:0]  a_i,
  input  logic [ExpBits+InManBits:0]  b_i,
  input  logic [ExpBits+AccManBits:0] c_i,
  output logic                        out_valid_o,
  output logic [ExpBits+AccManBits:0] res_o
);

  // ---------------------------------------------------------------------------------------------
  // Derived sizes
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned AccW   = 1 + ExpBits + AccManBits;
  localparam int unsigned SigW   = InManBits + 1;      // operand significand, hidden bit included
  localparam int unsigned PW     = 2 * SigW;           // exact product
  localparam int unsigned CW     = AccManBits + 1;     // addend and result significand
  // Window bits below the product: an addend bit and the jam below a narrow product (bf16: the
  // product's 16 bits leave 12 of the addend's 24 below it); 2 below a product wider than the
  // addend (fp32 operands: 48 bits), whose own low bits already lie 23 bits under the result's
  // guard bit, so an addend below it only ever jams (see a_jam_large).
  localparam int unsigned G      = (CW + 4 > PW) ? CW + 4 - PW : 2;
  localparam int unsigned PM     = G + PW - 1;         // product MSB position
  localparam int unsigned AL     = PM + 3;             // addend LSB at shift 0
  localparam int unsigned AM     = AL + CW - 1;        // addend MSB at shift 0
  localparam int unsigned SW     = AM + 2;             // sum width, carry included
  localparam int unsigned ShBits = $clog2(SW + 1);     // shift amounts 0..SW
  localparam int unsigned EW     = ExpBits + 4;        // signed exponent arithmetic
  localparam int unsigned LzBits = $clog2(SigW);       // operand normalisation count
  localparam int unsigned PkW    = EW + AccManBits;    // packed result before overflow check
  localparam int signed   Bias   = 2 ** (ExpBits - 1) - 1;
  localparam int signed   EMin   = 1 - Bias;
  // A product whose MSB weighs less than 2^ProdFloor is below a quarter of the smallest
  // subnormal's ulp (see p_tiny).
  localparam int signed   CWs       = CW;
  localparam int signed   ProdFloor = EMin - CWs - 2;

  localparam logic [AccW-1:0]    QNaN    = {1'b0, {ExpBits{1'b1}}, 1'b1, {(AccManBits-1){1'b0}}};
  localparam logic [ExpBits-1:0] ExpOnes = {ExpBits{1'b1}};

  // Registers per cut: stage 0→1, 1→2, 2→3.
  localparam bit Cut0 = (PipeRegs >= 2);
  localparam bit Cut1 = (PipeRegs == 1) || (PipeRegs == 3);
  localparam bit Cut2 = (PipeRegs >= 2);

  if (InManBits > AccManBits) begin : gen_bad_formats
    $error("tpu_mac: InManBits must be at most AccManBits");
  end
  if (PipeRegs > 3) begin : gen_bad_pipe
    $error("tpu_mac: PipeRegs must be 0..3");
  end
  if (ModeSel > tpu_pkg::ModeFtz) begin : gen_bad_mode
    $error("tpu_mac: ModeSel must be tpu_pkg::ModeRuntime, ModeIeee or ModeFtz");
  end

  // FTZ-only units read subnormal operands as zero, whose products bypass the datapath: their
  // significands need no normalisation.
  localparam bit NormOps = (ModeSel != tpu_pkg::ModeFtz);

  logic ftz;
  if (ModeSel == tpu_pkg::ModeRuntime) begin : gen_mode_runtime
    assign ftz = ftz_i;
  end else begin : gen_mode_fixed
    logic unused_ftz_i;
    assign unused_ftz_i = ftz_i;
    assign ftz = (ModeSel == tpu_pkg::ModeFtz);
  end

  // ---------------------------------------------------------------------------------------------
  // Stage 0: unpack, special values, product, shift amount
  // ---------------------------------------------------------------------------------------------
  logic                a_sign, a_zero, a_inf, a_nan;
  logic                b_sign, b_zero, b_inf, b_nan;
  logic                c_sign, c_zero, c_inf, c_nan;
  logic [SigW-1:0]     a_sig, b_sig;
  logic [CW-1:0]       c_sig;
  logic [ExpBits-1:0]  a_eeff, b_eeff, c_eeff;
  logic [LzBits-1:0]   a_lz, b_lz;
  logic                unused_c_lz;   // the addend is not normalised

  tpu_fp_unpack #(.ExpBits(ExpBits), .ManBits(InManBits), .Normalize(NormOps), .LzBits(LzBits))
  u_unpack_a (
    .x_i(a_i), .ftz_i(ftz), .sign_o(a_sign), .zero_o(a_zero), .inf_o(a_inf), .nan_o(a_nan),
    .sig_o(a_sig), .eeff_o(a_eeff), .lz_o(a_lz)
  );
  tpu_fp_unpack #(.ExpBits(ExpBits), .ManBits(InManBits), .Normalize(NormOps), .LzBits(LzBits))
  u_unpack_b (
    .x_i(b_i), .ftz_i(ftz), .sign_o(b_sign), .zero_o(b_zero), .inf_o(b_inf), .nan_o(b_nan),
    .sig_o(b_sig), .eeff_o(b_eeff), .lz_o(b_lz)
  );
  tpu_fp_unpack #(.ExpBits(ExpBits), .ManBits(AccManBits), .Normalize(1'b0), .LzBits(1))
  u_unpack_c (
    .x_i(c_i), .ftz_i(ftz), .sign_o(c_sign), .zero_o(c_zero), .inf_o(c_inf), .nan_o(c_nan),
    .sig_o(c_sig), .eeff_o(c_eeff), .lz_o(unused_c_lz)
  );

  // Product: normalised operands give 2^(PW-2) ≤ prod < 2^PW; bit PW-1 weighs 2^p_emsb with
  // p_emsb = pexp - 2·Bias + 1. Every exponent below is one multi-operand sum of the fields.
  logic [PW-1:0]        prod;
  logic signed [EW-1:0] pexp, shamt_raw, etop_near, etop_far, s0_etop;
  logic                 p_sign, p_inf, p_zero, p_tiny, far_above, sat;
  logic [ShBits-1:0]    s0_shamt;

  assign p_sign = a_sign ^ b_sign;
  assign p_inf  = a_inf | b_inf;
  assign p_zero = a_zero | b_zero;
  assign prod   = PW'(a_sig) * PW'(b_sig);
  assign pexp   = EW'(a_eeff) + EW'(b_eeff) - EW'(a_lz) - EW'(b_lz);
  // Below a quarter of the smallest subnormal's ulp. With a non-zero c such a product is always
  // "far below" c (shift 0, below c's rounding bits); with a zero c it rounds to a signed zero.
  assign p_tiny = pexp < EW'(ProdFloor + 2 * Bias - 1);

  // Special results bypass the datapath: NaN, infinities, a zero product (exact: c itself, or
  // the signed-zero rule when c is zero too), and a tiny product alone (a zero of its sign).
  logic            s0_nan, s0_special;
  logic [AccW-1:0] s0_special_val;

  assign s0_nan = a_nan | b_nan | c_nan | (a_inf & b_zero) | (b_inf & a_zero) |
                  (p_inf & c_inf & (p_sign ^ c_sign));
  assign s0_special = s0_nan | p_inf | c_inf | p_zero | (c_zero & p_tiny);

  always_comb begin
    if (s0_nan)      s0_special_val = QNaN;
    else if (p_inf)  s0_special_val = {p_sign, ExpOnes, {AccManBits{1'b0}}};
    else if (c_inf)  s0_special_val = c_i;
    else if (p_zero) s0_special_val = c_zero ? {p_sign & c_sign, {(AccW-1){1'b0}}} : c_i;
    else             s0_special_val = {p_sign, {(AccW-1){1'b0}}};   // tiny product, zero c
  end

  // Alignment: the addend's MSB lands at window bit PM + (c_emsb - p_emsb); shift 0 puts it at
  // AM, so shift = p_emsb - c_emsb + AM - PM. A zero addend aligns to the product (and adds
  // nothing). Shifts of 2^ShBits-1 ≥ SW move everything out.
  assign shamt_raw = EW'(a_eeff) + EW'(b_eeff) - EW'(a_lz) - EW'(b_lz) - EW'(c_eeff) +
                     EW'(AM - PM + 1 - Bias);
  assign far_above = !c_zero && (shamt_raw[EW-1] || shamt_raw == '0);
  assign sat       = !shamt_raw[EW-1] && (|shamt_raw[EW-2:ShBits]);
  always_comb begin
    if (far_above || c_zero) s0_shamt = '0;
    else if (sat)            s0_shamt = '1;
    else                     s0_shamt = shamt_raw[ShBits-1:0];
  end

  // Biased exponent of the window's top bit: window bit 0 weighs p_emsb - PM (near), or
  // c_emsb - AM when the addend sits at shift 0 (far).
  assign etop_near = pexp + EW'(SW - PM - Bias);
  assign etop_far  = EW'(c_eeff) + EW'(SW - 1 - AM);
  assign s0_etop   = far_above ? etop_far : etop_near;

  // ---------------------------------------------------------------------------------------------
  // Cut 0
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned R0W = PW + CW + ShBits + 4 + EW + 1 + AccW + 1;
  logic                 s1_valid, s1_c_zero, s1_eff_sub, s1_p_sign, s1_c_sign, s1_special, s1_ftz;
  logic [PW-1:0]        s1_prod;
  logic [CW-1:0]        s1_c_sig;
  logic [ShBits-1:0]    s1_shamt;
  logic signed [EW-1:0] s1_etop;
  logic [AccW-1:0]      s1_special_val;

  tpu_pipe_reg #(.Width(R0W), .Enable(Cut0)) u_cut0 (
    .clk_i, .rst_ni,
    .valid_i(in_valid_i),
    .data_i ({prod, c_sig, s0_shamt, c_zero, p_sign ^ c_sign, p_sign, c_sign,
              s0_etop, s0_special, s0_special_val, ftz}),
    .valid_o(s1_valid),
    .data_o ({s1_prod, s1_c_sig, s1_shamt, s1_c_zero, s1_eff_sub, s1_p_sign,
              s1_c_sign, s1_etop, s1_special, s1_special_val, s1_ftz})
  );

  // ---------------------------------------------------------------------------------------------
  // Stage 1: place both operands in the window; add or subtract; magnitude and sign
  // ---------------------------------------------------------------------------------------------
  logic [SW-1:0]     s1_pw, s1_aw, a_shifted;
  logic              a_sticky;
  logic [SW:0]       diff_pa;
  logic [SW-1:0]     diff_ap, sum, s1_mag;
  logic              s1_sign, s1_zero;

  assign s1_pw       = SW'(s1_prod) << G;
  assign a_shifted   = (SW'(s1_c_sig) << AL) >> s1_shamt;
  // Addend bits that fall below the window jam into bit 0: c_sig[i] leaves the window when
  // i + AL < shift, so the jam is the OR of c_sig under a mask of its lowest shift - AL bits (all
  // of them from a shift of AL + CW on; none up to AL). One mask and one OR tree: no
  // trailing-zero count, and no data-dependent branch in a simulator.
  logic [CW-1:0] below_mask;
  assign below_mask  = (s1_shamt > ShBits'(AL)) ? ~({CW{1'b1}} << (s1_shamt - ShBits'(AL))) : '0;
  assign a_sticky    = |(s1_c_sig & below_mask);
  assign s1_aw       = s1_c_zero ? '0 : (a_shifted | SW'(a_sticky));

  assign sum     = s1_pw + s1_aw;
  assign diff_pa = {1'b0, s1_pw} - {1'b0, s1_aw};
  assign diff_ap = s1_aw - s1_pw;
  assign s1_mag  = !s1_eff_sub ? sum : (diff_pa[SW] ? diff_ap : diff_pa[SW-1:0]);
  assign s1_sign = (s1_eff_sub && diff_pa[SW]) ? s1_c_sign : s1_p_sign;
  // Exact cancellation of non-zero terms gives +0.
  assign s1_zero = s1_eff_sub && (s1_pw == s1_aw);

  // Normalisation must stop where the top bit would weigh 2^EMin (a subnormal result): at a
  // shift of etop-1, i.e. at a stop marker on bit SW-etop (etop ≥ 2 always).
  logic              s1_mark_en;
  logic [ShBits-1:0] s1_mark_pos;
  assign s1_mark_en  = s1_etop < EW'(SW);
  assign s1_mark_pos = ShBits'(EW'(SW) - s1_etop);

  // ---------------------------------------------------------------------------------------------
  // Cut 1
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned R1W = SW + 2 + 1 + ShBits + EW + 1 + AccW + 1;
  logic                 s2_valid, s2_sign, s2_zero, s2_mark_en, s2_special, s2_ftz;
  logic [ShBits-1:0]    s2_mark_pos;
  logic [SW-1:0]        s2_mag;
  logic signed [EW-1:0] s2_etop;
  logic [AccW-1:0]      s2_special_val;

  tpu_pipe_reg #(.Width(R1W), .Enable(Cut1)) u_cut1 (
    .clk_i, .rst_ni,
    .valid_i(s1_valid),
    .data_i ({s1_mag, s1_sign, s1_zero, s1_mark_en, s1_mark_pos, s1_etop, s1_special,
              s1_special_val, s1_ftz}),
    .valid_o(s2_valid),
    .data_o ({s2_mag, s2_sign, s2_zero, s2_mark_en, s2_mark_pos, s2_etop, s2_special,
              s2_special_val, s2_ftz})
  );

  // ---------------------------------------------------------------------------------------------
  // Stage 2: normalise, stopping at the subnormal boundary marker.
  // ---------------------------------------------------------------------------------------------
  logic [SW-1:0]        marker, norm;
  logic [ShBits-1:0]    s2_lz;
  logic [CW-1:0]        s2_man;
  logic                 s2_guard, s2_sticky;

  assign marker = SW'(s2_mark_en) << s2_mark_pos;

  tpu_normalize #(.Width(SW), .CntBits(ShBits)) u_norm (
    .data_i(s2_mag),
    .stop_i(marker),
    .en_i  (1'b1),
    .cnt_o (s2_lz),
    .data_o(norm)
  );

  assign s2_man    = norm[SW-1 -: CW];
  assign s2_guard  = norm[SW-1-CW];
  assign s2_sticky = |norm[SW-2-CW:0];

  // ---------------------------------------------------------------------------------------------
  // Cut 2
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned R2W = CW + 4 + ShBits + EW + 1 + AccW + 1;
  logic                 s3_valid, s3_sign, s3_zero, s3_guard, s3_sticky, s3_special, s3_ftz;
  logic [CW-1:0]        s3_man;
  logic [ShBits-1:0]    s3_lz;
  logic signed [EW-1:0] s3_etop;
  logic [AccW-1:0]      s3_special_val;

  tpu_pipe_reg #(.Width(R2W), .Enable(Cut2)) u_cut2 (
    .clk_i, .rst_ni,
    .valid_i(s2_valid),
    .data_i ({s2_man, s2_sign, s2_zero, s2_guard, s2_sticky, s2_lz, s2_etop, s2_special,
              s2_special_val, s2_ftz}),
    .valid_o(s3_valid),
    .data_o ({s3_man, s3_sign, s3_zero, s3_guard, s3_sticky, s3_lz, s3_etop, s3_special,
              s3_special_val, s3_ftz})
  );

  // ---------------------------------------------------------------------------------------------
  // Stage 3: round to nearest-even and pack. The hidden bit adds one to the exponent field, so
  // a subnormal starts from field 0 and a rounding carry moves into the exponent by itself.
  // ---------------------------------------------------------------------------------------------
  logic [EW-1:0]   efield;
  logic [PkW-1:0]  ebase, packed_val;
  logic            round_up, overflow;
  logic [AccW-1:0] rounded, result;

  assign round_up   = s3_guard & (s3_sticky | s3_man[0]);
  // Biased exponent of the normalised top bit is etop - lz; the field below the hidden bit is one
  // less (≥ 0 whenever the hidden bit is set).
  assign efield     = s3_etop - EW'(s3_lz) - EW'(1);
  assign ebase      = s3_man[CW-1] ? (PkW'(efield) << AccManBits) : '0;
  assign packed_val = ebase + PkW'(s3_man) + PkW'(round_up);
  assign overflow   = packed_val[PkW-1:AccManBits] >= EW'(ExpOnes);

  always_comb begin
    if (s3_special)    rounded = s3_special_val;
    else if (s3_zero)  rounded = '0;
    else if (overflow) rounded = {s3_sign, ExpOnes, {AccManBits{1'b0}}};
    else               rounded = {s3_sign, packed_val[AccW-2:0]};
    // FTZ: a subnormal result (after IEEE rounding) becomes a zero of its sign.
    result = rounded;
    if (s3_ftz && rounded[AccW-2 -: ExpBits] == '0) result[AccW-2:0] = '0;
  end

  assign res_o       = result;
  assign out_valid_o = s3_valid;

`ifndef SYNTHESIS
  // ---------------------------------------------------------------------------------------------
  // Assertions: invariants of the window arithmetic, checked in every simulation (--assert).
  // They are also why some single-bit faults change no result (scripts/mutants.txt). Their
  // messages name no instance, so that every MAC of an array shares one copy of the simulator's
  // code (rtl/include/tpu_assert.svh).
  // ---------------------------------------------------------------------------------------------
  always_comb begin
    if (s2_valid && !s2_special && !s2_zero) begin
      // Two non-zero terms that do not cancel exactly leave a non-zero magnitude.
      a_mag_nonzero: assert (s2_mag != '0)
        else `TPU_FAIL("tpu_mac: zero magnitude without exact cancellation")
      // Bit 0 only ever holds a jam. A jam means a shift > AL: an addend below 2^(AM-AL) taken
      // from a product of at least 2^(G+PW-2), so the magnitude keeps a one at bit G+PW-3 or up.
      a_jam_large: assert (s2_mag[0] == 1'b0 || s2_mag[SW-1:G+PW-3] != '0)
        else `TPU_FAIL($sformatf("tpu_mac: jam bit set with a small magnitude: %h", s2_mag))
      // So normalisation never brings anything into the two lowest bits.
      a_norm_low_clear: assert (norm[1:0] == 2'b00)
        else `TPU_FAIL($sformatf("tpu_mac: normalised bits 1:0 set: %h", norm))
      // The subnormal stop marker never lies below bit 1 (etop >= 2).
      a_marker_above_0: assert (!s2_mark_en || s2_mark_pos != '0)
        else `TPU_FAIL("tpu_mac: stop marker at bit 0")
    end
  end
`endif

endmodule
