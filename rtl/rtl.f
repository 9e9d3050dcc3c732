// SPDX-License-Identifier: Apache-2.0
// The RTL file list: lint, simulation builds and synthesis all read this list (paths relative
// to the repository root). Include directories, then packages first.
+incdir+rtl/include
rtl/tpu_pkg.sv
rtl/hbm/tpu_hbm_pkg.sv
rtl/accel/tpu_isa_pkg.sv
rtl/common/tpu_fifo.sv
rtl/numerics/tpu_normalize.sv
rtl/numerics/tpu_pipe_reg.sv
rtl/numerics/tpu_fp_unpack.sv
rtl/numerics/tpu_mac.sv
rtl/numerics/tpu_fp32_to_bf16.sv
rtl/array/tpu_delay.sv
rtl/array/tpu_pe.sv
rtl/array/tpu_systolic_array.sv
rtl/array/tpu_acc_mem.sv
rtl/array/tpu_accumulators.sv
rtl/array/tpu_mxu_ctrl.sv
rtl/array/tpu_mxu.sv
rtl/hbm/tpu_hbm_pc_ctrl.sv
rtl/hbm/tpu_hbm_axi_port.sv
rtl/hbm/tpu_hbm_channel.sv
rtl/hbm/tpu_hbm_subsys.sv
rtl/hbm/tpu_hbm_splitter.sv
rtl/hbm/tpu_hbm_interleave.sv
rtl/hbm/tpu_hbm_single.sv
rtl/accel/tpu_accel_buf.sv
rtl/accel/tpu_accel_burst.sv
rtl/accel/tpu_accel_stream.sv
rtl/accel/tpu_accel_decode.sv
rtl/accel/tpu_accel_load.sv
rtl/accel/tpu_accel_compute.sv
rtl/accel/tpu_accel_store.sv
rtl/accel/tpu_accel_cmd.sv
rtl/accel/tpu_accel_regs.sv
rtl/accel/tpu_accel.sv
