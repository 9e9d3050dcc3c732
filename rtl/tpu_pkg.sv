// SPDX-License-Identifier: Apache-2.0
// Project-wide types and constants: the number formats, kept as data (conventions rule 6).
package tpu_pkg;

  // bfloat16: operands of the MAC, activations and weights.
  localparam int unsigned Bf16ExpBits = 8;
  localparam int unsigned Bf16ManBits = 7;

  // binary32: accumulators and partial sums.
  localparam int unsigned Fp32ExpBits = 8;
  localparam int unsigned Fp32ManBits = 23;

  // Arithmetic mode selection of a numerics unit: decided at run time by its ftz_i input, or
  // fixed at build time (the unit then ignores ftz_i and synthesizes only that mode's logic).
  localparam int unsigned ModeRuntime = 0;
  localparam int unsigned ModeIeee    = 1;
  localparam int unsigned ModeFtz     = 2;

endpackage
