// SPDX-License-Identifier: Apache-2.0
// accel::ModelSim: the accel::Sim back end made of the instruction-level golden model alone
// (tpu::isa::Machine). It has no clock: Perf holds the useful MACs, the HBM bytes (program fetch
// included in the reads) and the instruction count; cycles and the stall classes stay 0. For
// testing the front ends and for `tpusim --backend model`.
#pragma once

#include <chrono>
#include <string>

#include "tpu/isa_model.h"
#include "tpu/tb/accel_sim.h"

namespace tpu::tb::accel {

class ModelSim : public Sim {
 public:
  explicit ModelSim(const Config& cfg) : cfg_(cfg), machine_(cfg.machine) {}

  const Config& config() const override { return cfg_; }
  void WriteHbm(uint64_t addr, const void* data, uint64_t n) override {
    machine_.WriteHbm(addr, data, n);
  }
  void ReadHbm(uint64_t addr, void* data, uint64_t n) override { machine_.ReadHbm(addr, data, n); }

  // Runs the program on the golden model; RunOptions (progress, tracing, max_cycles) do not
  // apply to a model without cycles and are ignored.
  Result Run(uint64_t prog_addr, uint32_t count, const RunOptions& /*opt*/) override {
    const auto t0 = std::chrono::steady_clock::now();
    last_ = machine_.Run(prog_addr, count);
    Result r;
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.code = last_.code;
    r.pc = last_.pc;
    const auto& k = last_.counters;
    r.status = isa::reg::kStatusDone | (last_.ok() ? 0u : isa::reg::kStatusError);
    r.tokens = k.tokens;
    r.perf.macs = k.macs;
    r.perf.hbm_read_bytes = k.hbm_bytes_read + k.program_bytes;
    r.perf.hbm_write_bytes = k.hbm_bytes_written;
    r.perf.instructions = k.instructions;
    if (last_.ok()) {
      for (size_t m = 0; m < 3; ++m) r.perf.module_instructions[m] = k.per_module[m] + 1;
    }
    return r;
  }

  // The last run's full answer (with the error message) and the model itself.
  const isa::RunResult& last_run() const { return last_; }
  isa::Machine& machine() { return machine_; }

 private:
  Config cfg_;
  isa::Machine machine_;
  isa::RunResult last_;
};

}  // namespace tpu::tb::accel
