// SPDX-License-Identifier: Apache-2.0
// The accelerator scoreboard: after a back end (the DUT) and the golden model both ran a
// workload, compares every output tensor (for an MLP every layer's, hidden ones included)
// element by element, bit for bit, and reports the mismatches with tensor names and coordinates;
// and the machine's architectural end state (EndStateDiff).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpu/isa_model.h"
#include "tpu/tb/accel_sim.h"
#include "tpu/tb/workloads.h"

namespace tpu::tb::accel {

struct Mismatch {
  std::string tensor;
  std::string where;   // "row 3, col 5" / "n 0, oh 1, ow 2, cout 3"
  uint64_t index = 0;  // row-major element index
  int elem_bytes = 4;
  uint32_t got = 0, want = 0;
  // "C[row 3, col 5]: got 0x3F800000 (1), want 0x40000000 (2)".
  std::string Format() const;
};

struct TensorCheck {
  std::string name;
  uint64_t elements = 0;
  uint64_t mismatches = 0;
};

struct Report {
  bool pass = true;
  std::vector<TensorCheck> tensors;
  std::vector<Mismatch> first;  // the first mismatches, in tensor then row-major order
  uint64_t Elements() const;
  uint64_t Mismatches() const;
  // "PASS: 4096 of 4096 elements of 1 tensor bit-exact" or a FAIL summary with a line per
  // tensor and per reported mismatch.
  std::string Format() const;
};

// Compares every output tensor of `w` in the DUT with the golden model.
Report Compare(Sim& dut, const isa::Machine& golden, const Workload& w, size_t max_report = 10);
// The machine's architectural end state against the golden model's answer for the same program:
// register STATUS, the error code and pc and, after a successful run, the tokens left in each
// queue and every counter the golden model predicts (instructions in total and per module,
// useful MACs, the array's busy cycles = the rows it issued, the DMA's bytes each way: reads
// exact unless the program has instructions after END, which the fetch may read ahead), and the
// stall classes summing to the cycles. After an error the machine may have run part of the
// program, so only the status, code and pc are compared. Returns one line per difference, empty
// when the states agree. A ModelSim result (no clock) is compared without its cycle counters.
std::string EndStateDiff(const Result& dut, const isa::RunResult& golden);

// The machine's on-chip state (Sim::ReadOnChip after a run) against the golden model's after the
// same programs: every buffer and accumulator element the golden model has defined (a LOAD wrote
// it or a GEMM computed it from defined elements: isa::Machine::ActDefined; the machine's
// memories are not reset, so the others hold what they held), and the array's weights where the
// golden model's last run loaded them (the tile padded with +0, as the array holds it).
// Parts the back end could not read (OnChip::missing) are skipped. Returns one line per
// difference (the first `max_report` elements, then a count per part), empty when they agree.
std::string OnChipDiff(const OnChip& dut, const isa::Machine& golden, size_t max_report = 8);

// The same on tensors already read back (row-major bit patterns, in w.outputs order).
Report CompareData(const Workload& w, const std::vector<std::vector<uint32_t>>& got,
                   const std::vector<std::vector<uint32_t>>& want, size_t max_report = 10);

}  // namespace tpu::tb::accel
