// SPDX-License-Identifier: Apache-2.0
// Normalising shifter with leading-zero count, by successive halving: in step i the top 2^i
// bits are tested and, if all zero, shifted out of the count's working copy; the data then moves
// by the count in one shift. Each step is an OR tree and a mux, so the whole is about
// log2(Width)²/2 + log2(Width) logic levels, and every step stays within a machine word in
// simulation.
//
// stop_i marks extra "ones" that end the count without being part of the data: a one at bit p
// limits the shift to Width-1-p (used to stop normalisation at the subnormal boundary).
// An all-zero input (and stop_i) gives cnt_o = 2^CntBits - 1 and data_o = 0.
// en_i = 0 passes the data through (cnt_o = 0): a caller that knows its input is already
// normalised (an operand's hidden bit is set) says so, and a simulator skips the count (a branch
// on a value that is almost always the same costs next to nothing; docs/mac.md).
module tpu_normalize #(
  parameter int unsigned Width   = 32,
  parameter int unsigned CntBits = $clog2(Width)
) (
  input  logic [Width-1:0]   data_i,
  input  logic [Width-1:0]   stop_i,
  input  logic               en_i,
  output logic [CntBits-1:0] cnt_o,
  output logic [Width-1:0]   data_o
);

  if ((1 << CntBits) < Width) begin : gen_bad_width
    $error("tpu_normalize: CntBits too small for Width");
  end

  logic [Width-1:0] x;
  logic             z;

  // Branch-free within the count: each step shifts by z << i (z: the step's zero test), so a
  // simulator runs the same straight-line code for every value, with no data-dependent branch to
  // mispredict (an if, or a select, around the shifts runs 25% slower in the 16x16 array). In
  // gates it is the same two-way mux per bit. The data moves once, by the count (the same
  // shifter, driven by the count's bits; 2% faster in the 16x16 array than moving it in each
  // step).
  always_comb begin
    x     = data_i | stop_i;   // decides the shifts
    z     = 1'b0;
    cnt_o = '0;
    if (en_i) begin
      for (int i = CntBits - 1; i >= 0; i--) begin
        if ((1 << i) < Width) begin
          // Top 2^i bits all zero?
          z        = (x & ~({Width{1'b1}} >> (1 << i))) == '0;
          cnt_o[i] = z;
          x        = x << (CntBits'(z) << i);
        /*verilator coverage_off*/ end else begin  // waiver: no instance has CntBits > clog2(Width)
          // A step wider than the data only fires on an all-zero input.
          cnt_o[i] = x == '0;
        end /*verilator coverage_on*/
      end
    end
    data_o = data_i << cnt_o;
  end

endmodule
