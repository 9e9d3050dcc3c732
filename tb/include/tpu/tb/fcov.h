// SPDX-License-Identifier: Apache-2.0
// Functional coverage collected by the testbench: named groups of bins, declared up front (so a
// bin never hit shows as a hole), counted from what the harnesses drive into and see from the RTL,
// and written at process exit as JSON to $TPU_FCOV_DIR/fcov_<pid>.json when TPU_FCOV_DIR is set
// (scripts/fcov_report.py merges the files; docs/fcov.md lists every group and bin).
//
// Cost: a hit is one increment of a per-thread counter (no lock, no string), so the harnesses hit
// bins on every MAC evaluation and every cycle. Derivations that cost more than counting (the
// rounding case of a MAC, which re-runs the golden model) run only when TPU_FCOV_DIR is set.
// Threads: each thread counts into its own block; a thread's block is folded into the process
// totals when the thread ends, and the writer at exit adds the blocks of threads still running.
// A process that dies (signal, _exit, abort) writes nothing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tpu/numerics.h"

namespace tpu::hbm {
class Channel;
struct Command;
}  // namespace tpu::hbm
namespace tpu::isa {
enum class ErrorCode : uint8_t;
}  // namespace tpu::isa

namespace tpu::tb::fcov {

namespace detail {
// Counters per thread: every group's bins are slots of one flat space of this size.
inline constexpr size_t kMaxSlots = 4096;
// This thread's counters (null until the thread's first hit).
inline thread_local std::atomic<uint64_t>* t_counters = nullptr;
std::atomic<uint64_t>* AttachThread();
[[noreturn]] void BadBin(const std::string& group, size_t bin, size_t size);
inline void Count(size_t slot) {
  std::atomic<uint64_t>* c = t_counters;
  if (c == nullptr) c = AttachThread();
  // Only this thread writes its block: a plain increment, no lock prefix. The writer reads it
  // with relaxed loads (a count at most one behind for a thread still running at exit).
  c[slot].store(c[slot].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}
}  // namespace detail

// A group of bins. Groups live for the whole process (Declare hands out references).
class Group {
 public:
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::vector<std::string>& bins() const { return bins_; }
  size_t size() const { return bins_.size(); }
  // Counts one hit of bin `bin` (an index into bins()); throws std::logic_error when out of range.
  void Hit(size_t bin) const {
    if (bin >= bins_.size()) detail::BadBin(name_, bin, bins_.size());
    detail::Count(base_ + bin);
  }
  // Hits of bin `bin` in this process so far, all threads.
  uint64_t Hits(size_t bin) const;

 private:
  friend class Registry;
  Group(std::string name, std::string description, std::vector<std::string> bins, size_t base)
      : name_(std::move(name)),
        description_(std::move(description)),
        bins_(std::move(bins)),
        base_(base) {}
  std::string name_;
  std::string description_;
  std::vector<std::string> bins_;
  size_t base_;
};

// Declares a group, or returns the one already declared under that name, which must have the
// same bins (else std::logic_error). Thread-safe; for setup, not for the per-hit path.
const Group& Declare(const std::string& name, const std::string& description,
                     const std::vector<std::string>& bins);

// Whether coverage is written (TPU_FCOV_DIR set and not empty), and where.
bool Enabled();
const std::string& OutputDir();
// Writes this process's file now (the exit handler does it otherwise; a second call writes a
// second file with every count so far). Returns its path, "" when not Enabled(). Throws
// std::runtime_error naming the path when it cannot be written.
std::string WriteNow();

// ---------------------------------------------------------------------------------------------
// The catalog: every group of the testbench, declared on first use (docs/fcov.md).

// Operand classes, per operand: sign and IEEE class (NaN without sign).
enum OperandBin : uint8_t {
  kPosZero,
  kNegZero,
  kPosSubnormal,
  kNegSubnormal,
  kPosNormal,
  kNegNormal,
  kPosInf,
  kNegInf,
  kNaN,
  kNumOperandBins
};
inline size_t OperandBin32(uint32_t x) {
  const uint32_t e = (x >> 23) & 0xFFu, f = x & 0x7FFFFFu;
  const size_t neg = x >> 31;
  if (e == 0xFFu) return f != 0 ? size_t{kNaN} : size_t{kPosInf} + neg;
  if (e == 0) return size_t{f != 0 ? kPosSubnormal : kPosZero} + neg;
  return size_t{kPosNormal} + neg;
}
inline size_t OperandBin16(uint16_t x) {
  return OperandBin32(uint32_t{x} << 16);
}

// Channels of the handshake groups: bin 2 * channel is "<channel>.stall" (valid && !ready),
// bin 2 * channel + 1 is "<channel>.xfer" (valid && ready).
enum MxuChannel : uint8_t { kMxuCmd, kMxuW, kMxuA, kMxuLd };
enum AxiChannel : uint8_t { kAxiAr, kAxiR, kAxiAw, kAxiW, kAxiB };
inline void Handshake(const Group& g, size_t channel, bool valid, bool ready) {
  if (valid) g.Hit(2 * channel + (ready ? 1 : 0));
}

// HBM commands in the bank state they find (legal pairs only; see docs/fcov.md).
enum HbmCmdBin : uint8_t {
  kActIdleBankAllIdle,     // ACT to a precharged bank, no bank of the PC open
  kActIdleBankOthersOpen,  // ACT to a precharged bank, other banks of the PC open
  kRdOpen,                 // RD / RDA / WR / WRA to an open bank (at its open row: a row hit)
  kRdaOpen,
  kWrOpen,
  kWraOpen,
  kPreOpen,          // PRE to an open bank
  kPreaOneOpen,      // PREA with exactly one bank of the PC open
  kPreaSeveralOpen,  // PREA with two or more open
  kRefabAllIdle,     // REFab with every bank of the PC precharged
  kRefpbAllIdle,     // REFpb to a precharged bank, no bank of the PC open
  kRefpbOthersOpen,  // REFpb to a precharged bank while other banks of the PC are open
  kNumHbmCmdBins
};
enum HbmRefreshBin : uint8_t { kRefabInTraffic, kRefpbInTraffic, kNumHbmRefreshBins };

// Indices: [operand a, b, c][mode: 0 IEEE, 1 FTZ].
struct Catalog {
  const Group* mac_operand[3][2];    // mac.{a,b,c}.{ieee,ftz}
  const Group* mac_round[2];         // mac.round.{ieee,ftz}
  const Group* fma32_operand[3][2];  // fma32.{a,b,c}.{ieee,ftz}
  const Group* fma32_round[2];       // fma32.round.{ieee,ftz}
  const Group* cvt_round[2];         // cvt.round.{ieee,ftz}
  const Group* cvt_relu;             // cvt.relu
  const Group* mxu_operand[3][2];    // mxu.{a,b,c0}.{ieee,ftz}
  const Group* mxu_ports;            // mxu.handshake
  const Group* hbm_cmd;              // hbm.cmd
  const Group* hbm_refresh;          // hbm.refresh
  const Group* accel_host;           // accel.host
  const Group* accel_instr;          // accel.instr
  const Group* accel_error;          // accel.error
  const Group* accel_error_behind;   // accel.error_behind
};
const Catalog& Groups();
// "hbm.axi.port<p>" (AXI channels of tpu_hbm_subsys port p; ports 0 and 1, the one-channel
// builds', are declared with the catalog, more when a harness with more ports is built).
const Group& HbmPort(int port);
// An AXI4 port's handshake group (bins as HbmPort's, AxiChannel order), declared on first use:
// for a harness of another top with an AXI4 port (e.g. "hbm_single.axi").
const Group& AxiPort(const std::string& name, const std::string& description);

inline size_t ModeIndex(num::Mode mode) {
  return mode == num::Mode::kFtz ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Collectors, called by the harnesses.

// The rounding case of mac(a, b, c) into mac.round (re-runs the golden model).
void MacRounding(uint16_t a, uint16_t b, uint32_t c, num::Mode mode);

// One MAC evaluation driven into the RTL: operand classes, and (when Enabled()) the rounding case.
inline void Mac(uint16_t a, uint16_t b, uint32_t c, num::Mode mode) {
  const Catalog& g = Groups();
  const size_t m = ModeIndex(mode);
  g.mac_operand[0][m]->Hit(OperandBin16(a));
  g.mac_operand[1][m]->Hit(OperandBin16(b));
  g.mac_operand[2][m]->Hit(OperandBin32(c));
  if (Enabled()) MacRounding(a, b, c, mode);
}

// The rounding case of fma32(a, b, c) into fma32.round (re-runs the golden model).
void Fma32Rounding(uint32_t a, uint32_t b, uint32_t c, num::Mode mode);

// One fp32 FMA evaluation driven into the RTL (tpu_mac with fp32 operands): operand classes, and
// (when Enabled()) the rounding case.
inline void Fma32(uint32_t a, uint32_t b, uint32_t c, num::Mode mode) {
  const Catalog& g = Groups();
  const size_t m = ModeIndex(mode);
  g.fma32_operand[0][m]->Hit(OperandBin32(a));
  g.fma32_operand[1][m]->Hit(OperandBin32(b));
  g.fma32_operand[2][m]->Hit(OperandBin32(c));
  if (Enabled()) Fma32Rounding(a, b, c, mode);
}

// One fp32 -> bf16 conversion driven into the converter (with relu when `relu`): the relu input
// class, and (when Enabled()) the rounding case.
void Cvt(uint32_t x, bool relu, num::Mode mode);

// An element fed into the matrix unit: operand 0 (A, activations), 1 (B, weights) or 2 (C0, the
// accumulator preload); `bits` is the fp32 pattern (a bf16 as bf16 << 16).
inline void MxuOperand(int operand, uint32_t bits, num::Mode mode) {
  Groups().mxu_operand[operand][ModeIndex(mode)]->Hit(OperandBin32(bits));
}

// A command about to be issued to `dev` (before Issue applies it). `axi_outstanding`: requests
// accepted on the AXI side and not yet answered, or -1 when the harness does not know.
void HbmCommand(const hbm::Channel& dev, const hbm::Command& c, int64_t axi_outstanding);

// A program the accelerator ran: `prog` holds its first instructions (32 bytes each, as read
// from HBM before the run; fewer than its length when it reaches past HBM), `code` and `pc` what
// the machine reported, `vector_unit` whether it has the vector unit (decodes version 1.4).
// Counts the opcode of every instruction before the reported pc (through the first END when the
// code is OK) and the error code.
void AccelRun(const std::vector<uint8_t>& prog, isa::ErrorCode code, uint32_t pc, bool vector_unit);

}  // namespace tpu::tb::fcov
