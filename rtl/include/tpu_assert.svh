// SPDX-License-Identifier: Apache-2.0
// The failure action of assertions in modules an array instantiates many times (tpu_mac,
// tpu_pe):
//   a_name: assert (cond) else `TPU_FAIL($sformatf("tpu_mac: what went wrong: %h", value))
// It prints the time and the message and stops the simulation exactly as $error does (the
// testbench sees the error), but names no instance: Verilator 5.006 writes the instance path
// of $error and %m into the code as a literal, which gives every instance a copy of its own and
// keeps the simulator from sharing one copy of the module's code between all of them
// (docs/mac.md, "Simulation speed"). Put what locates the failure (a row, a value) in the message.
// For the same reason these modules use immediate assertions only (in an always_comb, or in an
// always_ff for a check at the clock edge): a concurrent assertion's sampled copies are named
// after the instance.
`ifndef TPU_ASSERT_SVH
`define TPU_ASSERT_SVH

`define TPU_FAIL(msg) begin $display("[%0t] %%Error: %s", $time, msg); $stop; end

`endif
