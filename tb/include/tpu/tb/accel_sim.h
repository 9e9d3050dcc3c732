// SPDX-License-Identifier: Apache-2.0
// The interface between the accelerator's front ends (tpusim, the benches, the tests) and a
// simulation back end: the Verilated accelerator top with the HBM device models
// (tpu/tb/accel_harness.h), or the instruction-level golden model alone (ModelSim below).
//
// A back end owns an HBM image (the device models' storage for the RTL); the front end writes the
// program and tensors into it, runs the program from the control registers, and reads the results.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tpu/isa.h"
#include "tpu/isa_model.h"

namespace tpu::tb::accel {

// A configuration of the accelerator (one Verilated build per configuration).
struct Config {
  std::string name = "16x16_1ch";  // e.g. "16x16_1ch", "4x4_1ch", "16x16_8ch"
  isa::MachineConfig machine;      // R, C, buffer depths, HbmBytes, numerics mode, queue depth
  int channels = 1;                // HBM2 channels behind the accelerator's port
  int preset = 0;                  // HBM timing preset (0 = 2.0 Gb/s)
  bool per_bank_refresh = true;
  // tpu_accel's parameters that only the RTL sees (the golden model does not: FetchDepth,
  // LoadDepth, ...), by Verilog name; one that is absent is at its default (accel::Params()).
  std::map<std::string, int> rtl_params;
  // The DMA's 32-byte beats per cycle each way (tpu_accel's Lanes): min(channels, beats of the
  // widest row, an fp32 accumulator row of C or a bf16 row of R).
  int DmaLanes() const {
    const int beats = std::max((machine.c * 4 + 31) / 32, (machine.r * 2 + 31) / 32);
    return std::min(channels, beats);
  }
  // Peak of the memory path in bytes per cycle: the DMA's lanes.
  double PeakBytesPerCycle() const { return 32.0 * DmaLanes(); }
  // Peak of the HBM channels behind the port (32 B per cycle each).
  double HbmPeakBytesPerCycle() const { return 32.0 * channels; }
  // Peak MACs per cycle.
  double PeakMacsPerCycle() const { return double(machine.r) * machine.c; }
};

// Performance counters read from the accelerator's registers after a run. Every running cycle
// counts in `cycles` and in exactly one of the six stall classes (the TPU paper's table 3):
// busy + weight_stall + input_stall + acc_hazard + store_stall + idle == cycles.
struct Perf {
  uint64_t cycles = 0;
  uint64_t busy = 0;             // the array issued a row
  uint64_t weight_stall = 0;     // waiting for a weight tile (loading into the array, or its LOAD)
  uint64_t input_stall = 0;      // waiting for activations (their LOAD's token, or the beat)
  uint64_t acc_hazard = 0;       // a row waits for an earlier row's accumulator write
  uint64_t store_stall = 0;      // waiting for the store module to free accumulators
  uint64_t idle = 0;             // everything else (draining, program fetch, no work)
  uint64_t macs = 0;             // useful MACs (rows * kv * nv summed over GEMMs)
  uint64_t hbm_read_bytes = 0;   // bytes the DMA read (LOADs and program fetch)
  uint64_t hbm_write_bytes = 0;  // bytes the DMA wrote (STOREs)
  uint64_t instructions = 0;     // fetched and dispatched
  // Instructions the load, compute and store modules took from their queues (END included).
  std::array<uint64_t, 3> module_instructions{};
  uint64_t vector_busy = 0;  // cycles a VOP runs in the vector unit (version 1.4)
};

struct Result {
  isa::ErrorCode code = isa::ErrorCode::kOk;
  uint32_t pc = 0;
  uint32_t status = 0;               // register STATUS after the run (busy, done, error bits)
  std::array<uint32_t, 4> tokens{};  // register TOKENS: each queue's tokens at the end
  Perf perf;
  uint64_t hbm_violations = 0;  // JEDEC timing violations the device models saw
  std::string violations;       // the first ones, one per line
  double wall_seconds = 0;      // host time of the run
  bool ok() const { return code == isa::ErrorCode::kOk && hbm_violations == 0; }
};

// The machine's on-chip state after a run, row-major as isa::Machine's views (Act, Wgt, Acc, W).
// A part the back end cannot read is left empty and named in `missing`.
struct OnChip {
  std::vector<uint16_t> act;  // ActDepth x R
  std::vector<uint16_t> wgt;  // WgtDepth x C
  std::vector<uint32_t> acc;  // AccDepth x C
  std::vector<uint16_t> w;    // R x C: the array's weights in the bank loaded last
  std::string missing;        // "" when every part was read, else what was not and why
};

struct RunOptions {
  uint64_t max_cycles = 2'000'000'000;  // a run that does not finish by then throws (stuck)
  // Called about every `progress_every` cycles with the cycles so far and the instructions
  // retired by the compute module (empty function: no progress).
  std::function<void(uint64_t cycles, uint64_t fetched)> progress;
  uint64_t progress_every = 1'000'000;
  // Called after every clock cycle of the run with the cycles since its start (a clocked back
  // end only; empty: not called). It may read the model's state but must not advance it.
  std::function<void(uint64_t cycles)> on_cycle;
  // Called about every `modules_every` cycles (a clocked back end only; 0 or an empty function:
  // not called) with the cycles so far and the instructions each module (load, compute, store)
  // has taken from its queue, read through the host port while the machine runs (a whole
  // program's cycles per layer, tpu/tb/net_run.h).
  std::function<void(uint64_t cycles, const std::array<uint64_t, 3>& taken)> on_modules;
  uint64_t modules_every = 0;
  std::string trace_file;  // FST waves when non-empty (a back end built with tracing only)
  uint64_t trace_from = 0, trace_to = UINT64_MAX;
};

class Sim {
 public:
  virtual ~Sim() = default;
  virtual const Config& config() const = 0;
  virtual void WriteHbm(uint64_t addr, const void* data, uint64_t n) = 0;
  virtual void ReadHbm(uint64_t addr, void* data, uint64_t n) = 0;
  // Runs the program at prog_addr (count instructions) to completion or error.
  virtual Result Run(uint64_t prog_addr, uint32_t count, const RunOptions& opt) = 0;
  // The buffers, the accumulators and the array's weights as they are now (no simulated time
  // passes). A back end without such state says so in OnChip::missing.
  virtual OnChip ReadOnChip() {
    OnChip s;
    s.missing = "this back end has no on-chip state to read";
    return s;
  }
};

}  // namespace tpu::tb::accel
