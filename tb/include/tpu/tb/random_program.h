// SPDX-License-Identifier: Apache-2.0
// Random legal programs at the instruction level (docs/verification.md, "Random programs"): every
// instruction kind and field class the ISA allows, not only what the host library emits, with
// dependency flags on every instruction kind chosen at random, then the pops each instruction
// needs so that every conflicting pair of accesses is ordered by tokens (the program is race-free,
// so the machine's result is the golden model's) and every pop takes a token pushed earlier in
// program order (so it never deadlocks, at any QueueDepth).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpu/isa.h"
#include "tpu/tb/rng.h"

namespace tpu::tb {

struct RandomProgramSpec {
  int instructions = 40;  // body instructions (HEADER and END not counted)
  uint64_t in_addr = 0;   // LOADs read only in [in_addr, in_addr + in_bytes)
  uint64_t in_bytes = 0;
  uint64_t out_addr = 0;  // STOREs write only in [out_addr, out_addr + out_bytes)
  uint64_t out_bytes = 0;
};

struct RandomProgram {
  std::vector<isa::Instr> instrs;  // HEADER .. END
  struct Range {
    uint64_t addr = 0, bytes = 0;
  };
  std::vector<Range> inputs;  // every HBM range a LOAD reads: the caller writes data there
  // The classes the program reached (names of RandomProgramClasses()), for coverage reports.
  std::vector<std::string> classes;
};

// Every class the generator aims at (functional coverage bins: "load.act.beats_several",
// "flags.load.push_next", "gemm.window", ...).
const std::vector<std::string>& RandomProgramClasses();

// Throws std::invalid_argument when the regions are too small for one row of the machine.
RandomProgram MakeRandomProgram(const isa::MachineConfig& cfg, const RandomProgramSpec& spec,
                                Rng& rng);

}  // namespace tpu::tb
