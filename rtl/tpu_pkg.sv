// SPDX-License-Identifier: Apache-2.0
// Project-wide types and constants: the number formats, kept as data (conventions rule 6).
package tpu_pkg;

  // bfloat16: operands of the MAC, activations and weights.
  localparam int unsigned Bf16ExpBits = 8;
  localparam int unsigned Bf16ManBits = 7;

  // binary32: accumulators and partial sums.
  localparam int unsigned Fp32ExpBits = 8;
  localparam int unsigned Fp32ManBits = 23;

endpackage
