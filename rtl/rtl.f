// SPDX-License-Identifier: Apache-2.0
// The RTL file list: lint, simulation builds and synthesis all read this list (paths relative
// to the repository root). Packages first.
rtl/tpu_pkg.sv
rtl/numerics/tpu_normalize.sv
rtl/numerics/tpu_pipe_reg.sv
rtl/numerics/tpu_fp_unpack.sv
rtl/numerics/tpu_mac.sv
rtl/numerics/tpu_fp32_to_bf16.sv
