// SPDX-License-Identifier: Apache-2.0
// The accelerator as a SystemC system: the Verilated tpu_accel (`verilator --sc`), clocked by an
// sc_clock, with the HBM2 device model on its memory side as a SystemC module
// (tpu::tb::hbm::HbmChannelSc), and an AXI4-Lite host thread that runs a host program: it loads the
// program and tensors into HBM (backdoor into the device model, as AccelSim::WriteHbm does),
// writes the registers, starts the accelerator, waits for irq_o, reads the status and the
// performance counters, and checks the results.
//
//   sc_clock ──┬──────────────────────────┬───────────────────────┐
//              ▼                          ▼                       ▼
//   host (SC_THREAD) ──AXI4-Lite──► tpu_accel (--sc) ──cmd/data──► HbmChannelSc (device model)
//                   ──backdoor────────────────────────────────────►
//
// The SystemC build is one configuration (ModelConfig(): a 4x4 array, 64-row buffers, 4-deep
// queues, one HBM2 channel, 2.0 Gb/s, per-bank refresh; rtl/builds.json, accel_sc_4x4).
// The memory-side buses of tpu_accel are flat vectors over the two pseudo-channels
// (PC p in bits [p*256 +: 256] of wdata/rdata, [p*32 +: 32] of wstrb, bit p of the valids; the
// 512-bit ones are sc_bv, see scripts/verilate.sh --sc); small SC_METHODs split them into
// HbmChannelSc's per-PC ports and merge its read data back (one delta cycle each way, well inside
// the clock period). The command buses connect directly.
//
// Use: construct one AccelSc with the host program, call Simulate(); the host program runs in the
// host thread once reset is over and may call every method below (Run, WriteReg, ReadReg and
// WaitCycles consume simulated time, so only the host thread may call them). Simulate() returns
// when the host program did, rethrows what it threw, and throws std::runtime_error on a timeout
// (naming the cycle and what the host was waiting for) or an RTL assertion failure. AccelSc is an
// accel::Sim, so the front-end helpers (workloads.h: Load, Run, ReadTensor; accel_scoreboard.h:
// Compare) work on it from the host program.
//
// SystemC 2.3 allows one elaboration and simulation per process: one AccelSc per process, one
// Simulate() (ctest runs every GoogleTest test in its own process). The Verilated model is
// private to the implementation (built with VM_SC=1): this header does not include verilated.h,
// so code compiled against verilated_rt (VM_SC=0) may include it.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <systemc>

#include "tpu/hbm/hbm_device.h"
#include "tpu/tb/accel_sim.h"

namespace tpu::tb::accel {

class AccelSc : public sc_core::sc_module, public Sim {
 public:
  using HostProgram = std::function<void(AccelSc& sys)>;

  struct Options {
    sc_core::sc_time period = sc_core::sc_time(1, sc_core::SC_NS);  // clock period
    int reset_cycles = 4;                                           // rising edges with rst_ni low
    uint64_t max_cycles = 50'000'000;  // Simulate()'s watchdog, in clock cycles
  };

  // The configuration the SystemC model was built with.
  static Config ModelConfig();

  // Throws std::invalid_argument if `cfg` does not match ModelConfig() (the Verilog parameters;
  // the numerics mode may differ: it is a register).
  AccelSc(sc_core::sc_module_name name, const Config& cfg, HostProgram host);
  AccelSc(sc_core::sc_module_name name, const Config& cfg, HostProgram host, const Options& opt);
  ~AccelSc() override;

  // Runs the simulation until the host program returns (see above).
  void Simulate();

  // --- Sim: backdoor HBM access (any time, no simulated time) and a run (host thread only).
  const Config& config() const override { return cfg_; }
  void WriteHbm(uint64_t addr, const void* data, uint64_t n) override;
  void ReadHbm(uint64_t addr, void* data, uint64_t n) override;
  // Programs the registers, starts, waits for irq_o, lets the HBM queues drain and reads the
  // error code, pc and counters (as AccelSim::Run). opt.max_cycles bounds the wait for irq_o.
  Result Run(uint64_t prog_addr, uint32_t count, const RunOptions& opt) override;

  // --- AXI4-Lite host accesses (host thread only), a few cycles each.
  void WriteReg(uint32_t addr, uint32_t value);
  uint32_t ReadReg(uint32_t addr);
  uint64_t Counter(int i);  // performance counter i (accel_harness.h: reg::Counter), both words
  void WaitCycles(uint64_t n);

  // Clock cycles since reset (rising edges with rst_ni high), and the device model's view.
  uint64_t cycle() const;
  const tpu::hbm::Channel& device() const;
  size_t ViolationCount() const;
  std::string Violations(size_t max_lines = 20) const;
  bool host_done() const { return host_done_; }

  static constexpr const char* kMsgType = "tpu/accel/AccelSc";

 private:
  struct Impl;  // the Verilated model, the device model, the signals and the pin adapters

  void HostThread();
  void CheckAssertions();  // SC_METHOD at the falling edge
  // Waits for the next rising edge; the inputs written before it are sampled there, and the
  // outputs read right after it hold the values from before it. Checks the run watchdog.
  void Edge(const char* waiting_for);
  void CheckRange(uint64_t addr, uint64_t n, const char* what) const;

  Config cfg_;
  HostProgram host_;
  Options opt_;
  std::unique_ptr<Impl> impl_;
  bool host_done_ = false;
  std::exception_ptr host_error_;
  std::string assert_error_;                 // set by CheckAssertions
  const char* waiting_for_ = "elaboration";  // what the host thread waits for (watchdog message)
};

}  // namespace tpu::tb::accel
