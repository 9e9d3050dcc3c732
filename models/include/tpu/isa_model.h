// SPDX-License-Identifier: Apache-2.0
// The instruction-level golden model of the accelerator (docs/isa.md): a sparse HBM image, the
// activation and weight buffers, the accumulators and the array's loaded weights, and Run(),
// which executes a program from HBM bit-exactly with the numerics contract's MAC.
//
// Run() works in three passes, so that its answer does not depend on any schedule:
//  1. Fetch, decode and check every instruction in program order up to the first END. The first
//     failing instruction (the lowest program index) stops the run with its code and pc;
//     ERR_NO_END reports pc = count (the first index past the program).
//  2. The token protocol, as the command processor and the decoupled modules would run it: the
//     dispatcher walks the program (pc 1 .. END) and puts each instruction into its module's
//     queue (END into all three) only while that queue holds fewer than QueueDepth instructions
//     dispatched but not started; the load, compute and store modules start their oldest
//     dispatched instruction when all its pops succeed, and the four token queues carry tokens
//     between them. Every queue has one producer and one consumer (a bounded Kahn network), so
//     whether every module reaches END is schedule-independent; if not, ERR_DEADLOCK at the
//     lowest pc of the dispatched instructions blocked on a pop (the message also names a full
//     queue the dispatcher is stuck on, if any). ERR_TOKEN_OVERFLOW is reported when some
//     schedule the tokens allow (ignoring the dispatcher's limit) would put more than 255 tokens
//     in a queue: for the p-th push into a queue, the pops of that queue that must precede it
//     (its causal past, tracked with vector clocks) are fewer than p - 255. The pc is the lowest
//     such push among the instructions that start; an overflow takes precedence over a deadlock.
//  3. Only if both passes found nothing: the effects, in program order.
// After an error the program has had no effect on the model's state (the hardware may have run
// part of it; only the code and pc are comparable).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tpu/isa.h"

namespace tpu::isa {

struct Counters {
  uint64_t instructions = 0;             // fetched up to and including END
  uint64_t program_length = 0;           // what the host gave (instructions after END: junk)
  std::array<uint64_t, 3> per_module{};  // LOAD/GEMM/STORE executed by load, compute, store
  uint64_t macs = 0;                     // useful MACs: sum of rows * kv * nv over GEMMs
  uint64_t rows = 0;                     // rows the array issues: sum of rows over GEMMs
  uint64_t hbm_bytes_read = 0;           // by LOADs (elements actually transferred)
  uint64_t hbm_bytes_written = 0;        // by STOREs
  uint64_t program_bytes = 0;            // instruction fetch: 32 per fetched instruction
  // What the DMA port moves: whole 32-byte beats per row (rows start 32-byte aligned), an
  // accumulator LOAD of stride 0 reading its row once; the reads include the program fetch.
  uint64_t dma_read_bytes = 0;
  uint64_t dma_write_bytes = 0;
  // Tokens left in each queue at the end (pushes - pops; register TOKENS): load->compute,
  // compute->load, compute->store, store->compute. The same for every schedule.
  std::array<uint32_t, 4> tokens{};
};

struct RunResult {
  ErrorCode code = ErrorCode::kOk;
  uint32_t pc = 0;      // offending instruction's index; the END's index on success
  std::string message;  // names the field, value and limit; empty on success
  Counters counters;    // zero after an error
  // Bytes the LOADs read that no WriteHbm and no STORE had written (the model reads them as 0;
  // a device model holds a pseudo-random background there, so what a program computes from
  // them cannot be compared), the first such address and the pc of the LOAD that read it. Zero
  // after an error.
  uint64_t unwritten_bytes_read = 0;
  uint64_t first_unwritten = 0;
  uint32_t first_unwritten_pc = 0;
  bool ok() const { return code == ErrorCode::kOk; }
};

class Machine {
 public:
  // Throws std::invalid_argument when a dimension (QueueDepth included) is < 1 or too large for a
  // 16-bit field.
  explicit Machine(const MachineConfig& cfg);

  const MachineConfig& config() const { return cfg_; }

  // Host access to the HBM image. Pages are allocated on write; bytes never written read as 0
  // (the LOADs of a Run count them: RunResult::unwritten_bytes_read).
  // Throws std::out_of_range for a range reaching HbmBytes.
  void WriteHbm(uint64_t addr, const void* data, uint64_t n);
  void ReadHbm(uint64_t addr, void* data, uint64_t n) const;
  std::vector<uint8_t> ReadHbm(uint64_t addr, uint64_t n) const;
  // Encodes and writes a program (32 bytes per instruction) at addr.
  void WriteProgram(uint64_t addr, const std::vector<Instr>& prog);
  size_t HbmPages() const { return pages_.size(); }

  RunResult Run(uint64_t prog_addr, uint32_t count);

  // Views of the state (tests).
  uint16_t Act(int row, int col) const { return act_[size_t(row) * cfg_.r + col]; }
  uint16_t Wgt(int row, int col) const { return wgt_[size_t(row) * cfg_.c + col]; }
  uint32_t Acc(int row, int col) const { return acc_[size_t(row) * cfg_.c + col]; }
  uint32_t Vmem(int row, int col) const { return vmem_[size_t(row) * cfg_.c + col]; }
  // The array's loaded weights: the tile the last weight-loading GEMM of the last Run loaded,
  // padded with +0 beyond its kv rows and nv columns, as the array holds it; whether that Run
  // loaded any.
  uint16_t W(int k, int n) const { return w_[size_t(k) * cfg_.c + n]; }
  bool WeightsLoaded() const { return w_loaded_; }
  // Whether an element holds a value the machine must hold too: a LOAD of any Run wrote it, or a
  // GEMM computed it from defined elements only (weights count from their load in this Run). The
  // machine's memories are not reset, so the others hold whatever they held before: a GEMM that
  // reads such an element computes from the machine's old contents there and from zeros here.
  bool ActDefined(int row, int col) const { return act_def_[size_t(row) * cfg_.r + col] != 0; }
  bool WgtDefined(int row, int col) const { return wgt_def_[size_t(row) * cfg_.c + col] != 0; }
  bool AccDefined(int row, int col) const { return acc_def_[size_t(row) * cfg_.c + col] != 0; }
  bool VmemDefined(int row, int col) const { return vmem_def_[size_t(row) * cfg_.c + col] != 0; }
  bool WDefined(int k, int n) const { return w_def_[size_t(k) * cfg_.c + n] != 0; }

 private:
  static constexpr uint64_t kPageBytes = 4096;
  struct Page {
    std::array<uint8_t, kPageBytes> data{};
    std::array<uint64_t, kPageBytes / 64> written{};  // a bit per byte
  };

  void CheckRange(uint64_t addr, uint64_t n, const char* what) const;
  // ReadHbm for a LOAD: counts the bytes never written in r->unwritten_bytes_read (the first
  // one's address in r->first_unwritten).
  void LoadHbm(uint64_t addr, void* data, uint64_t n, RunResult* r) const;
  void Execute(const Instr& in, RunResult* r);
  void ExecuteVop(const Vop& v);

  MachineConfig cfg_;
  std::unordered_map<uint64_t, std::unique_ptr<Page>> pages_;
  std::vector<uint16_t> act_;   // ActDepth x R
  std::vector<uint16_t> wgt_;   // WgtDepth x C
  std::vector<uint32_t> acc_;   // AccDepth x C
  std::vector<uint32_t> vmem_;  // VmemDepth x C (the vector unit's memory)
  std::vector<uint16_t> w_;     // the array's weights, R x C
  bool w_loaded_ = false;       // a GEMM of the last Run loaded w_
  std::vector<uint32_t> held_;  // C: the row of the last LOAD with hold (+0 when a run starts)
  // 1: the element is defined (ActDefined, ...), laid out as act_, wgt_, acc_ and w_.
  std::vector<uint8_t> act_def_, wgt_def_, acc_def_, w_def_, vmem_def_;
};

// The vector unit's operation `op` on one lane: A, B (a row's lane or the scalar) and D, the
// destination's old value, as the numerics contract defines it (tpu/vpu.h). Throws
// std::invalid_argument for an op outside VectorOp.
uint32_t ApplyVectorOp(VectorOp op, uint32_t a, uint32_t b, uint32_t d, num::Mode mode);
// The VectorOp named `name` (kVectorOps), or std::invalid_argument.
VectorOp VectorOpByName(const std::string& name);

}  // namespace tpu::isa
